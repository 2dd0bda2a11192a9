"""Support vector regression on expected kernels: rows with NaN go straight in."""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.svm import SVR, LinearSVR

from .._dask_blocks import rowwise_on_dask
from .._sklearn_compat import Interval, _fit_context
from ._missing_cost import MissingCostMixin
from ._scaling import fit_target_standardization
from ._svm_base import _SVM_CONSTRAINTS, _BaseMissingKernelSVM


class MissingKernelSVR(RegressorMixin, MissingCostMixin, _BaseMissingKernelSVM):
    """Epsilon-support vector regression on an expected kernel; X may contain NaN.

    ``fit`` fits the density on the training rows only and an
    :class:`sklearn.svm.SVR` with ``kernel="precomputed"`` on the training Gram
    matrix of the registry kernel (genRBF by default; ``mixed_rbf`` for tables
    with nominal columns); ``predict`` uses the
    kernel between new rows and the training support vectors.

    Parameters
    ----------
    kernel : str, default="auto"
        A registry kernel name (see :func:`missingkernels.list_kernels`).
        ``"auto"``: ``"mixed_rbf"`` (:class:`~missingkernels.kernels
        .MixedRBFKernel`) when the table has nominal columns, else
        ``"genrbf"``.
    density : str, density estimator or None, default=None
        Registry name, unfitted density object (tunable as
        ``density__<param>``), or None for the kernel's default.
    density_params : dict, default=None
        Parameters of the density given by name (or of the kernel's
        default); also settable as ``density__<param>`` (see
        :class:`MissingKernelSVC`).
    nominal_features : "from_dtype", None, array-like or bool mask, default="from_dtype"
        The nominal columns of X (see :class:`MissingKernelSVC`).
    handle_unknown : {"missing", "error"}, default="missing"
        Unseen categories in rows to predict (see :class:`MissingKernelSVC`).
    gamma : float or "scale", default="scale"
        RBF width; ``"scale"`` = 1 / (n_features * variance of observed entries).
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        Scalar product of the RBF kernels.
    kernel_params : dict, default=None
        Other parameters of the kernel.
    standardize : bool, default=True
        Standardise the numeric columns (see :class:`MissingKernelSVC`) and
        the target, as R's e1071 ``svm`` does: the SVR is fitted on
        ``(y - y_center_) / y_scale_`` (training mean and standard
        deviation) and ``predict`` maps back to the units of y. ``epsilon``
        is then a width in standard deviations of y. False: X and y as
        given (``epsilon`` in the units of y).
    C : float, default=1.0
        Regularisation parameter.
    epsilon : float, default=0.1
        Width of the insensitive tube (in standard deviations of y when
        ``standardize=True``).
    tol : float, default=1e-3
        Stopping tolerance.
    max_iter : int, default=-1
        Solver iteration limit, -1 for none.
    shrinking : bool, default=True
        Use libsvm's shrinking heuristic.
    cache_size : float, default=200
        Kernel cache in MB.
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
    svm_ : sklearn.svm.SVR or sklearn.svm.LinearSVR
    route_ : {"exact", "features"}
    features_ : ExpectedKernelFeatures or None
    support_, support_vectors_, dual_coef_, intercept_, n_iter_ : ndarray
        As in :class:`MissingKernelSVC` (the support attributes on the
        ``"exact"`` route only): ``support_vectors_`` are the only training
        rows the model keeps.
    shape_fit_ : tuple of int
        The shape of the training table, ``(n_samples, n_features)``.
        ``X_fit_`` (every training row) is no longer kept: see
        :class:`MissingKernelSVC`, "What a fitted model keeps".
    x_center_, x_scale_ : ndarray of shape (n_features,) or None
        As in :class:`MissingKernelSVC`.
    y_center_, y_scale_ : float or None
        Mean and standard deviation of the training target (None when
        ``standardize=False``); ``dual_coef_`` and ``intercept_`` are in
        units of ``y_scale_``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Notes
    -----
    The numeric features and the target are standardised by default (see
    ``standardize``); a preceding
    :class:`sklearn.preprocessing.StandardScaler` then changes nothing.

    References
    ----------
    .. [1] Ł. Struski, M. Śmieja, B. Zieliński, J. Tabor. "Regression SVM for
       incomplete data" (genRBF in support vector regression).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.estimators import MissingKernelSVR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 3))
    >>> y = X[:, 0] - 2 * X[:, 1]
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> reg = MissingKernelSVR(C=10.0).fit(X, y)
    >>> reg.predict(X[:3]).shape
    (3,)
    """

    _task = "regression"
    y_center_: float | None
    y_scale_: float | None
    _parameter_constraints: ClassVar[dict] = {
        **_SVM_CONSTRAINTS,
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
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
        epsilon: float = 0.1,
        tol: float = 1e-3,
        max_iter: int = -1,
        shrinking: bool = True,
        cache_size: float = 200,
        verbose: bool = False,
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
        self.epsilon = epsilon
        self.tol = tol
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.route = route
        self.n_kernel_features = n_kernel_features
        self.n_components = n_components
        self.random_state = random_state

    def _make_linear(self) -> LinearSVR:
        return LinearSVR(
            C=self.C,
            epsilon=self.epsilon,
            loss="epsilon_insensitive",
            dual=True,
            tol=self.tol,
            max_iter=self.max_iter if self.max_iter > 0 else 10000,
            random_state=self.random_state,
            verbose=int(self.verbose),
        )

    def _make_svm(self) -> SVR:
        return SVR(
            kernel="precomputed",
            C=self.C,
            epsilon=self.epsilon,
            tol=self.tol,
            max_iter=self.max_iter,
            shrinking=self.shrinking,
            cache_size=self.cache_size,
            verbose=bool(self.verbose),
        )

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> MissingKernelSVR:
        """Fit the density, the training Gram matrix and the SVR.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows; NaN marks missing entries.
        y : array-like of shape (n_samples,)
            Numeric target, no NaN or inf.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-row weights of the SVR's loss (row ``i``'s penalty is
            ``C * sample_weight[i]``), passed to the SVR's ``fit``. The
            density of the missing entries and ``gamma="scale"`` are fitted
            on the rows unweighted.

        Returns
        -------
        self : MissingKernelSVR
        """
        return self._fit_svm(X, y, sample_weight)

    def _fit_target(self, y: np.ndarray) -> np.ndarray:
        if not self.standardize:
            self.y_center_ = self.y_scale_ = None
            return y
        self.y_center_, self.y_scale_ = fit_target_standardization(y)
        return (np.asarray(y, dtype=np.float64) - self.y_center_) / self.y_scale_

    @rowwise_on_dask
    def predict(self, X: Any) -> np.ndarray:
        """Predict the target.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing; or a dask Array or DataFrame of
            numeric columns, read block of rows by block of rows.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,), or dask Array
        """
        pred = self._svm_on_new_rows(X, "predict")
        if self.y_center_ is None:
            return pred
        return pred * self.y_scale_ + self.y_center_
