"""Support vector classification on expected kernels: rows with NaN go straight in."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.validation import check_is_fitted

from .._dask_blocks import rowwise_on_dask
from .._sklearn_compat import Interval, StrOptions, _fit_context, available_if
from .._validation import check_sample_weight
from ._calibration import calibrated_proba, fit_calibration, ovr_from_ovo
from ._missing_cost import MissingCostMixin
from ._svm_base import _SVM_CONSTRAINTS, _BaseMissingKernelSVM

# Pickles written before MissingKernelSVR moved to its own module name this one.
from ._svr import MissingKernelSVR  # noqa: F401


class MissingKernelSVC(ClassifierMixin, MissingCostMixin, _BaseMissingKernelSVM):
    """C-support vector classifier on an expected kernel; X may contain NaN.

    ``fit`` fits the density on the training rows only, computes the training
    Gram matrix of the registry kernel (genRBF by default; ``mixed_rbf`` for
    tables with nominal columns) and fits
    :class:`sklearn.svm.SVC` with ``kernel="precomputed"``. ``predict`` and
    ``decision_function`` compute the kernel between the new rows and the
    training support vectors, with the density of the training rows. Inside
    ``GridSearchCV`` or ``cross_val_score`` the density therefore never sees
    the rows it is scored on.

    Parameters
    ----------
    kernel : str, default="auto"
        A registry kernel name (see :func:`missingkernels.list_kernels`).
        ``"auto"``: ``"mixed_rbf"`` (:class:`~missingkernels.kernels
        .MixedRBFKernel`) when the table has nominal columns, else
        ``"genrbf"``.
    density : str, density estimator or None, default=None
        The density of the missing entries: a registry name
        (:func:`missingkernels.list_densities`), an unfitted density object
        (cloned; its parameters are tunable as ``density__<param>``), or None
        for the kernel's default (``"gaussian_em"`` for the RBF and linear
        kernels, ``"categorical"`` for Belanche's kernels).
    density_params : dict, default=None
        Parameters of the density given by name (or of the kernel's default
        density), e.g. ``{"n_components": 3}`` for three latent classes of
        ``"latent_class"``. Each is also settable as ``density__<param>``
        (``set_params`` or a ``GridSearchCV`` grid), whether the density is
        a name or an object.
    nominal_features : "from_dtype", None, array-like or bool mask, default="from_dtype"
        The nominal columns of X. ``"from_dtype"``: the string, object,
        boolean and unordered categorical columns of a DataFrame (or object
        array); ordered categoricals are numeric, coded by the rank of their
        level. Otherwise the columns named (names, 0-based indices or a mask),
        whose distinct values are the categories; None: all numeric. Nominal
        columns are modelled as such (no dummy coding): see ``kernel``.
    handle_unknown : {"missing", "error"}, default="missing"
        A category of a nominal column not seen in the training rows, in rows
        to predict: treated as a missing entry (the kernel averages over the
        fitted distribution of the column; an ``UnknownCategoryWarning`` names
        it), or an error; as in the densities and ``compare --handle-unknown``
        (user guide, "Mixed-type tables").
    gamma : float or "scale", default="scale"
        RBF width, ``k(x, y) = exp(-gamma ||x - y||^2)``. ``"scale"`` uses
        ``1 / (n_features * variance of the observed entries)``. Ignored by
        kernels without a width.
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        Scalar product of the RBF kernels: Euclidean (scikit-learn's RBF on
        complete rows) or whitened by the fitted covariance (the genRBF
        authors' experiments). Ignored by other kernels.
    kernel_params : dict, default=None
        Other parameters of the kernel, e.g. ``{"diagonal": "independent"}``
        or ``{"nominal_weight": 0.25}``; each also settable as
        ``kernel_params__<param>`` (or ``kernel__<param>``).
    standardize : bool, default=True
        Standardise the numeric columns on the training rows before the
        kernel: each is centred on the mean of its observed entries and
        divided by their standard deviation (as
        :class:`sklearn.preprocessing.StandardScaler`; R's e1071 ``svm`` and
        kernlab ``ksvm`` do the same by default). Missing entries stay
        missing; nominal columns are not touched; new rows are transformed
        with the training statistics. ``gamma`` is then a width in standard
        deviations (``exp(-gamma * sum_j ((x_j - y_j) / sd_j) ** 2)``), and
        ``kernel_``, its density and ``support_vectors_`` are on the
        standardised scale. Kernels on nominal values only (Belanche's)
        take the columns as given. False: the columns as given (``gamma`` in
        the columns' own units; a ``FeatureScaleWarning`` says when their
        spreads differ by more than a factor 100).
    C : float, default=1.0
        Regularisation parameter of the SVM.
    class_weight : dict or "balanced", default=None
        As in :class:`sklearn.svm.SVC`.
    tol : float, default=1e-3
        Stopping tolerance of the solver.
    max_iter : int, default=-1
        Solver iteration limit, -1 for none.
    shrinking : bool, default=True
        Use libsvm's shrinking heuristic.
    cache_size : float, default=200
        Kernel cache of the solver, in MB.
    verbose : bool, default=False
        Enable verbose output, as :class:`sklearn.svm.SVC`'s: the route taken
        and why (what the training Gram needs against the memory limit), the
        density fitted (iterations, time), the kernel and the SVM (time,
        iterations), and progress bars over the blocks of rows of feature
        maps and predictions (tqdm when it is installed, else a line per
        block); the SVM's own solver output too. Printed to stdout, as
        scikit-learn's. The solver's own output is switched on for the whole
        process in libsvm (liblinear on the ``"features"`` route), so fits
        run at the same time in threads may print it or not.
    decision_function_shape : {"ovo", "ovr"}, default="ovr"
        As in :class:`sklearn.svm.SVC`.
    break_ties : bool, default=False
        As in :class:`sklearn.svm.SVC`.
    probability : bool, default=False
        Also fit a map from decision values to class probabilities, for
        :meth:`predict_proba` and :meth:`predict_log_proba`, as
        :class:`sklearn.svm.SVC` ``(probability=True)`` and R's e1071
        ``svm(probability = TRUE)`` do: the training rows are split into
        ``calibration_folds`` stratified folds (in row order), an SVM trained
        without each fold scores it, and the map is fitted on these held-out
        decision values; ``predict_proba`` applies it to the decision values
        of the classifier fitted on all rows. As libsvm on a precomputed
        kernel, the folds' SVMs share the fitted classifier's kernel
        (density, scaling and ``gamma``, fitted on all rows without their
        labels) and train on blocks of its Gram: ``calibration_folds`` more
        SVM fits, no density refitted, no Gram computed.
        With more than two classes, one one-vs-rest map per class, the
        probabilities normalised to sum to one.
    calibration : {"sigmoid", "isotonic"}, default="sigmoid"
        The map: Platt's sigmoid ``1 / (1 + exp(A f + B))`` (fitted as in
        libsvm) or an isotonic regression (needs more rows).
    calibration_folds : int, default=5
        Folds of the internal cross-validation (each class needs at least as
        many training rows).
    route : {"auto", "exact", "features"}, default="auto"
        ``"exact"``: the SVM on the training Gram matrix. ``"features"``: no
        Gram matrix; :class:`~missingkernels.ExpectedKernelFeatures` (random
        Fourier features for the RBF family, exact maps where they exist)
        and a linear SVM with the same loss and ``C``, in time and memory
        linear in the rows. ``"auto"``: exact while the training Gram fits
        the memory limit (:func:`missingkernels.set_config`), else features
        when they fit it (``n_kernel_features`` of them); if neither does,
        a ValueError says what each needs. ``route_`` is the route taken;
        ``verbose`` says why.
    n_kernel_features : int, default=2000
        Features of the ``"features"`` route (random Fourier features or
        Nystroem landmarks), not to be confused with a density's components
        (``density_params={"n_components": k}``).
    n_components : int, default="deprecated"
        The old name of ``n_kernel_features``: a ``FutureWarning`` when set;
        removed in 0.3.
    random_state : int, RandomState instance or None, default=None
        Frequencies (and landmarks) of the ``"features"`` route.
        Also seeds a density the estimator builds by name (``density`` a
        registry name, or the kernel's default) that has a ``random_state``
        of its own, unless ``density_params`` sets it: its draws or
        initialisation, so that the same model on the same rows gives the
        same kernel. A density object keeps its own.

    Attributes
    ----------
    kernel_ : object
        The fitted registry kernel; ``kernel_.density_`` is the fitted density
        and ``kernel_.get_params()`` its parameters (``kernel_.gamma_`` the
        width used).
    kernel_name_ : str
        The registry name of the kernel used (``kernel="auto"`` resolved).
    density_name_ : str or None
        The registry name of the density used (the class name of a density
        object; None for a kernel without a density). ``density_`` is the
        fitted density.
    dropped_features_ : ndarray of int
        0-based indices of the features observed in fewer than
        ``missingkernels.MIN_OBSERVED`` (2) training rows, which the kernel
        dropped (named in a ``DroppedFeaturesWarning``;
        ``feature_names_in_[dropped_features_]`` names them). New rows'
        values in them are ignored.
    svm_ : sklearn.svm.SVC or sklearn.svm.LinearSVC
        The fitted SVM on the precomputed Gram matrix (or, on the
        ``"features"`` route, the linear SVM on the features).
    route_ : {"exact", "features"}
        The route taken.
    features_ : ExpectedKernelFeatures or None
        The fitted feature map of the ``"features"`` route.
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors among the training rows.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        The training rows that are support vectors (standardised when
        ``standardize=True``; nominal columns as category codes), NaN where
        missing: the only training rows the model keeps (``"exact"`` route).
    dual_coef_, intercept_, n_iter_ : ndarray
        As in :class:`sklearn.svm.SVC`.
    shape_fit_ : tuple of int
        The shape of the training table, ``(n_samples, n_features)``.
        ``X_fit_`` (every training row) is no longer kept: see Notes.
    x_center_, x_scale_ : ndarray of shape (n_features,) or None
        The training mean and standard deviation of each column's observed
        entries (0 and 1 for nominal columns); None when
        ``standardize=False``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    MissingKernelSVR : the regression counterpart.
    MissingKernelTransformer : the kernel as a transformer for any
        ``kernel="precomputed"`` estimator.

    Notes
    -----
    **The numeric features are standardised by default.** The RBF kernels
    use one width ``gamma`` for every feature, so a feature measured in
    thousands would drown the others (as for :class:`sklearn.svm.SVC`).
    With ``standardize=True`` (the default) each numeric column is
    standardised on the observed entries of the training rows, so a raw
    table (numbers on any scales, string or categorical columns) goes in as
    it is; the Gaussian densities are affine equivariant, so the density
    fitted on standardised rows is the raw rows' density standardised.
    Nominal columns are never rescaled. A preceding
    :class:`sklearn.preprocessing.StandardScaler` (which also keeps NaN)
    changes nothing, but it fails on string columns: on a mixed table leave
    the scaling to the estimator, or scale only the numeric columns with a
    :class:`sklearn.compose.ColumnTransformer` whose output is a DataFrame
    (``set_output(transform="pandas")``), so that the nominal columns keep
    their dtype and stay nominal.

    ``probability=True`` gives calibrated class probabilities (see
    ``probability``); :class:`sklearn.calibration.CalibratedClassifierCV`
    around the classifier is the alternative that averages the folds'
    classifiers instead of refitting on all rows.

    **What a fitted model keeps.** Not the training table: a pickled model
    must not give it back. On the ``"exact"`` route, the support vectors
    (``support_vectors_``: ``decision_function`` is
    ``sum_i dual_coef_i K(x, sv_i) + intercept_``, as for
    :class:`sklearn.svm.SVC`), the training Gram's diagonal on them and a
    digest of the standardised training table (the training rows given
    again are recognised and scored exactly as the SVM was trained on
    them); on the ``"features"`` route, no training row (the feature map's
    frequencies and the linear SVM's weights), except Nystroem landmarks
    (``features_.landmarks_``, training rows). Both keep the column means
    and standard deviations (``x_center_``, ``x_scale_``) and the density's
    parameters (a Gaussian's mean and covariance, a mixture's components;
    the imputation models of ``"iterative"``), from which the conditionals
    of any rows are recomputed. Some densities cannot condition a new row
    without training values and keep them: ``"mice"`` keeps, per column,
    the observed training values that its predictive mean matching draws
    from (by column, not as rows); the R plugin's ``"r_mice"`` keeps the
    training table and its imputations (mice runs again on it for each new
    row). ``probability=True`` adds one held-out decision value per training
    row. :class:`MissingKernelTransformer` keeps every training row: its
    output has a column per row.

    References
    ----------
    .. [1] M. Śmieja, Ł. Struski, J. Tabor, M. Marzec. "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173 (2019).
    .. [2] H. S. Anderson, M. R. Gupta. "Expected kernel for missing features
       in support vector machines", IEEE Statistical Signal Processing
       Workshop (2011).
    .. [3] J. Platt. "Probabilistic outputs for support vector machines and
       comparisons to regularized likelihood methods", Advances in Large
       Margin Classifiers (2000); H.-T. Lin, C.-J. Lin, R. C. Weng. "A note on
       Platt's probabilistic outputs for support vector machines", Machine
       Learning 68 (2007).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.estimators import MissingKernelSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3)) * [1.0, 100.0, 0.01]
    >>> y = (X[:, 0] + X[:, 1] / 100 > 0).astype(int)
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> clf = MissingKernelSVC(C=10.0).fit(X, y)  # columns standardised inside
    >>> clf.predict(X[:4]).shape
    (4,)
    >>> clf = MissingKernelSVC(probability=True).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 2)

    A table with numeric and string columns goes in as it is:

    >>> import pandas as pd
    >>> table = pd.DataFrame({"age": [35.0, 52, np.nan, 41, 63, 29] * 5,
    ...                       "income": [3e4, np.nan, 8e4, 5e4, 6e4, 2e4] * 5,
    ...                       "city": ["a", "b", None, "a", "c", "b"] * 5})
    >>> labels = np.array([0, 1, 1, 0, 1, 0] * 5)
    >>> MissingKernelSVC().fit(table, labels).kernel_.__class__.__name__
    'MixedRBFKernel'
    """

    _task = "classification"
    _parameter_constraints: ClassVar[dict] = {
        **_SVM_CONSTRAINTS,
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "probability": ["boolean"],
        "calibration": [StrOptions({"sigmoid", "isotonic"})],
        "calibration_folds": [Interval(Integral, 2, None, closed="left")],
    }

    def __init__(
        self,
        *,
        kernel: str = "auto",
        density: Any = None,
        density_params: dict | None = None,
        nominal_features: Any = "from_dtype",
        handle_unknown: str = "missing",
        gamma: Any = "scale",
        metric: str = "euclidean",
        kernel_params: dict | None = None,
        standardize: bool = True,
        C: float = 1.0,
        class_weight: Any = None,
        tol: float = 1e-3,
        max_iter: int = -1,
        shrinking: bool = True,
        cache_size: float = 200,
        verbose: bool = False,
        decision_function_shape: str = "ovr",
        break_ties: bool = False,
        probability: bool = False,
        calibration: str = "sigmoid",
        calibration_folds: int = 5,
        route: str = "auto",
        n_kernel_features: int = 2000,
        n_components: Any = "deprecated",
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.density = density
        self.density_params = density_params
        self.nominal_features = nominal_features
        self.handle_unknown = handle_unknown
        self.gamma = gamma
        self.metric = metric
        self.kernel_params = kernel_params
        self.standardize = standardize
        self.C = C
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.probability = probability
        self.calibration = calibration
        self.calibration_folds = calibration_folds
        self.route = route
        self.n_kernel_features = n_kernel_features
        self.n_components = n_components
        self.random_state = random_state

    def _calibrates(self) -> bool:
        # probability=True's calibration scores held-out rows in memory.
        return bool(self.probability)

    def _make_linear(self) -> LinearSVC:
        return LinearSVC(
            C=self.C,
            loss="hinge",
            dual=True,
            class_weight=self.class_weight,
            tol=self.tol,
            max_iter=self.max_iter if self.max_iter > 0 else 10000,
            random_state=self.random_state,
            verbose=int(self.verbose),
        )

    def _make_svm(self) -> SVC:
        return SVC(
            kernel="precomputed",
            C=self.C,
            class_weight=self.class_weight,
            tol=self.tol,
            max_iter=self.max_iter,
            shrinking=self.shrinking,
            cache_size=self.cache_size,
            verbose=bool(self.verbose),
            decision_function_shape=self.decision_function_shape,
            break_ties=self.break_ties,
        )

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MissingKernelSVC:
        """Fit the density, the training Gram matrix and the SVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows; NaN marks missing entries (rows may be entirely
            missing; every feature must be observed in some row).
        y : array-like of shape (n_samples,)
            Class labels, at least two classes, no NaN.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights of the SVM's loss (row ``i``'s penalty is
            ``C * sample_weight[i]``), passed to the SVM's ``fit``. The
            density of the missing entries and ``gamma="scale"`` are fitted
            on the rows unweighted.

        Returns
        -------
        self : MissingKernelSVC
        """
        self._fit_svm(X, y, sample_weight)
        self.classes_ = self.svm_.classes_
        if self.route_ == "exact":
            self.n_support_ = self.svm_.n_support_
        if self.probability:
            w = check_sample_weight(self, sample_weight, self.shape_fit_[0])
            labels = np.asarray(y).ravel()
            self._calibration_maps, self._held_out_decision = fit_calibration(
                self, X, labels, w
            )
        return self

    def _ovr_decision(self, X: Any) -> np.ndarray:
        """The decision values, one-vs-rest for more than two classes
        (whatever ``decision_function_shape``): what the calibration reads."""
        decision = self.decision_function(X)
        n_classes = len(self.classes_)
        ovo = self.route_ == "exact" and self.decision_function_shape == "ovo"
        if n_classes > 2 and ovo:
            return ovr_from_ovo(decision, n_classes)
        return decision

    def _check_proba(self) -> bool:
        if not self.probability:
            raise AttributeError(
                "predict_proba is not available when probability=False: set "
                "probability=True before fitting (its calibration fits "
                "calibration_folds more SVMs)."
            )
        return True

    @available_if(_check_proba)
    @rowwise_on_dask
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, calibrated by internal cross-validation.

        Only with ``probability=True``. The decision values of the classifier
        fitted on all training rows go through the calibration map fitted on
        held-out decision values (see ``probability``). As for
        :class:`sklearn.svm.SVC`, ``predict`` follows the decision function
        and may disagree with the most probable class on a few rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing; or a dask Array or DataFrame of
            numeric columns, read block of rows by block of rows.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes), or dask Array
            Columns in the order of ``classes_``; rows sum to one.
        """
        check_is_fitted(self, "_calibration_maps")
        return calibrated_proba(self._calibration_maps, self._ovr_decision(X))

    @available_if(_check_proba)
    @rowwise_on_dask
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba` (only with ``probability=True``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing; or a dask Array or DataFrame of
            numeric columns, read block of rows by block of rows.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes), or dask Array
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @rowwise_on_dask
    def decision_function(self, X: Any) -> np.ndarray:
        """Signed distance to the separating hyperplane in the kernel space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing; or a dask Array or DataFrame of
            numeric columns, read block of rows by block of rows.

        Returns
        -------
        scores : ndarray or dask Array of shape (n_samples,) or (n_samples, n_classes)
        """
        return self._svm_on_new_rows(X, "decision_function")

    @rowwise_on_dask
    def predict(self, X: Any) -> np.ndarray:
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing; or a dask Array or DataFrame of
            numeric columns, read block of rows by block of rows.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), or dask Array
        """
        return self._svm_on_new_rows(X, "predict")
