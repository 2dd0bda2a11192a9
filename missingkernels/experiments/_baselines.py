"""Baselines of the method comparisons: impute, then an RBF SVM; and peers.

Every imputation baseline is a scikit-learn :class:`~sklearn.pipeline.Pipeline`
whose last step is :class:`~sklearn.svm.SVC` or :class:`~sklearn.svm.SVR` with
the RBF kernel. The steps before it (imputer, scaler) are fitted on training
rows only, as in any pipeline, so a baseline never sees the rows it is scored
on. The peer "geom" and the SOCP SVM "socp" are estimators that take NaN
themselves, as does "hgb" (histogram gradient boosting, which routes missing
values natively), the model scikit-learn's own error for NaN in an SVM points
users to.

A factory may declare how the comparisons tune it: ``search_grid`` (a dict of
parameter lists searched by the inner CV instead of ``C`` x ``gamma``),
``scale`` (whether the features are standardised first; default True) and
``multiclass`` (``"ovr"`` or ``"skip"`` for a binary-only classifier, see
:class:`~missingkernels.experiments.MethodSpec`).
"""

from __future__ import annotations

from numbers import Integral
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer, KNNImputer, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._numerics import integer_seeds
from .._sklearn_compat import HasMethods, Interval, StrOptions
from .._validation import (
    MIN_OBSERVED,
    drop_sparse_features,
    validate_missing_data,
    warn_dropped_features,
)

_TASKS = ("classification", "regression")


def _svm(task: str) -> Any:
    if task not in _TASKS:
        raise ValueError(
            f"task must be 'classification' or 'regression', got {task!r}."
        )
    return SVC(kernel="rbf") if task == "classification" else SVR(kernel="rbf")


def _classification_only(task: str, method: str) -> None:
    """Refuse a regression task for a classifier (and an unknown task)."""
    if task == "regression":
        raise ValueError(f"{method} is a classifier; it cannot run a regression task.")
    _svm(task)  # the usual error for an unknown task


def _impute_then_svm(
    task: str,
    imputer: Any,
    *,
    scale_first: bool = True,
    nominal_features: Any = None,
    mixed: dict | None = None,
) -> Pipeline:
    if nominal_features is not None and np.asarray(nominal_features).any():
        # A table with nominal columns: one step standardises the numeric
        # columns, one-hot codes the nominal ones and imputes (the fills of
        # ``mixed``, or its ``imputer`` on the joint table), then the SVM.
        prepare = MixedTableImputer(nominal_features, **(mixed or {}))
        return Pipeline([("prepare", prepare), ("svm", _svm(task))])
    # Features (almost) never observed in the training rows are dropped first,
    # as the expected kernels drop them, whatever the imputer would do with
    # them (SimpleImputer(strategy="constant") keeps an empty column, which
    # changes the SVM's gamma="scale"; "mean" drops it but keeps one observed
    # once; KNNImputer drops it, IterativeImputer fills it with 0).
    # Scaling before imputing puts k-NN distances and the models of MICE,
    # missForest and the GMM on standardised features, as in the papers'
    # "after normalization" protocol; StandardScaler ignores NaN when fitting.
    steps: list[tuple[str, Any]]
    if scale_first:
        steps = [("scale", StandardScaler()), ("impute", imputer)]
    else:
        steps = [("impute", imputer), ("scale", StandardScaler())]
    return Pipeline([("drop", DropSparseFeatures()), *steps, ("svm", _svm(task))])


class DropSparseFeatures(TransformerMixin, BaseEstimator):
    """Drop the features observed in fewer than ``min_observed`` training rows.

    The first step of every imputation baseline: such features carry no
    information, and the expected kernels drop them too
    (``dropped_features_``, one ``DroppedFeaturesWarning`` naming them), so
    that every method of a comparison sees the same features. Rows passed to
    ``transform`` lose the same columns. With no feature to drop it passes
    the (validated, float64) rows through unchanged.

    Parameters
    ----------
    min_observed : int, default=2
        Fewest observed training values a feature needs to be kept
        (``missingkernels.MIN_OBSERVED``).

    Attributes
    ----------
    dropped_features_ : ndarray of int
        0-based indices of the dropped features.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.experiments import DropSparseFeatures
    >>> X = np.array([[1.0, np.nan, 0.5], [2.0, np.nan, np.nan], [0.0, np.nan, 1.5]])
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     drop = DropSparseFeatures().fit(X)
    >>> drop.dropped_features_.tolist(), drop.transform(X).shape
    ([1], (3, 2))
    """

    _parameter_constraints: ClassVar[dict] = {
        "min_observed": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, min_observed: int = MIN_OBSERVED) -> None:
        self.min_observed = min_observed

    def fit(self, X: Any, y: Any = None) -> DropSparseFeatures:
        """Find the features observed in fewer than ``min_observed`` rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where missing.
        y : ignored

        Returns
        -------
        self : DropSparseFeatures
        """
        self._validate_params()
        X = validate_missing_data(self, X, reset=True, require_observed_columns=False)
        _, self._kept = drop_sparse_features(self, X, self.min_observed)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Return the rows without the dropped features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_kept : ndarray of shape (n_samples, n_features - len(dropped_features_))
        """
        X = validate_missing_data(self, X, reset=False)
        return X if self._kept is None else np.ascontiguousarray(X[:, self._kept])

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The names of the kept features.

        Parameters
        ----------
        input_features : array-like of str, optional

        Returns
        -------
        names : ndarray of str
        """
        check_is_fitted(self)
        if input_features is not None:
            names = np.asarray(input_features, dtype=object)
            if names.shape != (self.n_features_in_,):
                raise ValueError(
                    f"input_features should have length {self.n_features_in_}, "
                    f"got {names.shape[0] if names.ndim else 1}."
                )
        elif hasattr(self, "feature_names_in_"):
            names = np.asarray(self.feature_names_in_, dtype=object)
        else:
            names = np.array([f"x{j}" for j in range(self.n_features_in_)], object)
        return names if self._kept is None else names[self._kept]

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _nominal_mask(nominal_features: Any, n_features: int) -> np.ndarray:
    """``nominal_features`` (0-based indices or a bool mask) as a bool mask."""
    if nominal_features is None:
        return np.zeros(n_features, dtype=bool)
    values = np.asarray(nominal_features)
    if values.dtype == bool:
        if values.shape != (n_features,):
            raise ValueError(
                f"nominal_features as a mask needs {n_features} entries, got "
                f"{values.shape[0] if values.ndim else 1}."
            )
        return values.copy()
    mask = np.zeros(n_features, dtype=bool)
    if values.size == 0:
        return mask
    if values.dtype.kind not in "iu" or values.min() < 0 or values.max() >= n_features:
        raise ValueError(
            f"nominal_features must be 0-based column indices below {n_features} "
            f"or a bool mask, got {nominal_features!r}."
        )
    mask[values] = True
    return mask


class MixedTableImputer(TransformerMixin, BaseEstimator):
    """One-hot code the nominal columns, standardise the numeric ones, impute.

    The preprocessing of the imputation baselines on a table with nominal
    columns (category codes, NaN where missing), fitted on the training rows:

    1. the features observed in fewer than ``min_observed`` training rows are
       dropped (as :class:`DropSparseFeatures` drops them);
    2. each numeric column is standardised by the mean and standard
       deviation of its observed training values (if ``scale_numeric``);
    3. each nominal column becomes one 0/1 column per category seen in the
       training rows; a missing entry (or a category not seen in training)
       is NaN in all of them;
    4. missing entries are filled: numeric ones by ``numeric_fill``, nominal
       ones by ``nominal_fill``; then ``imputer``, if given, imputes what is
       still missing on the joint table (numeric and one-hot columns);
    5. with ``add_indicator``, a 0/1 column per kept input column with a
       missing training entry is appended (1 where the entry is missing):
       one indicator per column, whatever its number of categories.

    The output has the numeric columns first, then the one-hot columns, then
    the indicators.

    Parameters
    ----------
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (0-based indices, or a mask over the columns);
        None: none.
    numeric_fill : {"mean", "most_frequent", "zero"} or None, default=None
        The fill of a missing numeric entry: the training mean (0 after
        standardising), the most frequent training value, the value 0 in the
        original units; None leaves it missing (for ``imputer``).
    nominal_fill : {"most_frequent", "zero"} or None, default=None
        The fill of a missing nominal entry: the one-hot code of the most
        frequent training category (mode imputation), all-zero one-hot
        columns; None leaves them missing (for ``imputer``).
    imputer : transformer or None, default=None
        Fitted on the joint table after the fills (e.g.
        :class:`~sklearn.impute.KNNImputer`); None: no further imputation.
    add_indicator : bool, default=False
        Append the missingness indicators of step 5.
    scale_numeric : bool, default=True
        Standardise the numeric columns (step 2).
    min_observed : int, default=2
        Fewest observed training values a feature needs to be kept.

    Attributes
    ----------
    dropped_features_ : ndarray of int
        0-based indices of the dropped features.
    is_nominal_ : ndarray of shape (n_features_in_,), dtype bool
    categories_ : list of ndarray
        Per kept nominal column (in order), its training categories: the
        order of its one-hot columns.
    imputer_ : transformer or None
        The fitted ``imputer``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.experiments import MixedTableImputer
    >>> X = np.array([[1.0, 0.0], [3.0, 2.0], [np.nan, 2.0], [2.0, np.nan]])
    >>> enc = MixedTableImputer([1], numeric_fill="mean", nominal_fill="most_frequent")
    >>> enc.fit_transform(X).round(3).tolist()
    [[-1.225, 1.0, 0.0], [1.225, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    """

    _parameter_constraints: ClassVar[dict] = {
        "nominal_features": ["array-like", None],
        "numeric_fill": [StrOptions({"mean", "most_frequent", "zero"}), None],
        "nominal_fill": [StrOptions({"most_frequent", "zero"}), None],
        "imputer": [HasMethods(["fit", "transform"]), None],
        "add_indicator": ["boolean"],
        "scale_numeric": ["boolean"],
        "min_observed": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        nominal_features: Any = None,
        *,
        numeric_fill: str | None = None,
        nominal_fill: str | None = None,
        imputer: Any = None,
        add_indicator: bool = False,
        scale_numeric: bool = True,
        min_observed: int = MIN_OBSERVED,
    ) -> None:
        self.nominal_features = nominal_features
        self.numeric_fill = numeric_fill
        self.nominal_fill = nominal_fill
        self.imputer = imputer
        self.add_indicator = add_indicator
        self.scale_numeric = scale_numeric
        self.min_observed = min_observed

    def fit(self, X: Any, y: Any = None) -> MixedTableImputer:
        """Learn the columns' scales, categories and fills; fit the imputer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where missing; nominal columns hold codes.
        y : ignored

        Returns
        -------
        self : MixedTableImputer
        """
        self._fit(X)
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """Fit on ``X`` and return its transform.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        **fit_params : ignored

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features_out)
        """
        return self._fit(X)

    def _fit(self, X: Any) -> np.ndarray:
        self._validate_params()
        X = self._check(X, reset=True)
        self.is_nominal_ = _nominal_mask(self.nominal_features, X.shape[1])
        X, kept = drop_sparse_features(self, X, self.min_observed)
        self._kept = kept
        nominal = self.is_nominal_ if kept is None else self.is_nominal_[kept]
        self._num = np.flatnonzero(~nominal)
        self._nom = np.flatnonzero(nominal)
        num = X[:, self._num]
        observed = ~np.isnan(num)
        with np.errstate(invalid="ignore", divide="ignore"):
            self._mean = np.nanmean(num, axis=0) if num.shape[1] else np.zeros(0)
            scale = np.nanstd(num, axis=0) if num.shape[1] else np.zeros(0)
        scale[~(scale > 0)] = 1.0
        if not self.scale_numeric:
            self._mean = np.zeros_like(self._mean)
            scale = np.ones_like(scale)
        self._scale = scale
        fills = np.full(num.shape[1], np.nan)
        for j in range(num.shape[1]):
            values = num[observed[:, j], j]
            if self.numeric_fill == "mean":
                fills[j] = values.mean()
            elif self.numeric_fill == "zero":
                fills[j] = 0.0
            elif self.numeric_fill == "most_frequent":
                fills[j] = _most_frequent(values)
        self._num_fill = (fills - self._mean) / self._scale
        self.categories_ = []
        self._modes = []
        for col in self._nom:
            values = X[~np.isnan(X[:, col]), col]
            self.categories_.append(np.unique(values))
            self._modes.append(_most_frequent(values))
        self._indicate = np.flatnonzero(np.isnan(X).any(axis=0))
        table = self._table(X)
        self.imputer_ = None
        if self.imputer is not None:
            self.imputer_ = clone(self.imputer)
            table = np.asarray(self.imputer_.fit_transform(table), dtype=np.float64)
        return self._with_indicators(table, X)

    def transform(self, X: Any) -> np.ndarray:
        """Return the standardised, one-hot coded and imputed rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features_out)
        """
        check_is_fitted(self, "categories_")
        X = self._check(X, reset=False)
        if self._kept is not None:
            X = np.ascontiguousarray(X[:, self._kept])
        table = self._table(X)
        if self.imputer_ is not None:
            table = np.asarray(self.imputer_.transform(table), dtype=np.float64)
        return self._with_indicators(table, X)

    def _check(self, X: Any, reset: bool) -> np.ndarray:
        # Codes are plain numbers here (this is not a table encoder): only
        # the usual checks, NaN allowed.
        return validate_data(
            self,
            X,
            reset=reset,
            dtype=np.float64,
            ensure_all_finite="allow-nan",
            ensure_min_samples=2 if reset else 1,
        )

    def _table(self, X: np.ndarray) -> np.ndarray:
        num = (X[:, self._num] - self._mean) / self._scale
        if self.numeric_fill is not None:
            num = np.where(np.isnan(num), self._num_fill, num)
        blocks = [num]
        for j, cats, mode in zip(self._nom, self.categories_, self._modes, strict=True):
            col = X[:, j]
            hot = (col[:, None] == cats[None, :]).astype(np.float64)
            # Missing, or a category the training rows never had.
            unknown = ~hot.any(axis=1)
            if self.nominal_fill == "most_frequent":
                hot[unknown] = (cats == mode).astype(np.float64)
            elif self.nominal_fill is None:
                hot[unknown] = np.nan
            blocks.append(hot)
        return np.ascontiguousarray(np.hstack(blocks))

    def _with_indicators(self, table: np.ndarray, X: np.ndarray) -> np.ndarray:
        if not self.add_indicator or self._indicate.size == 0:
            return table
        flags = np.isnan(X[:, self._indicate]).astype(np.float64)
        return np.hstack([table, flags])

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _most_frequent(values: np.ndarray) -> float:
    """The most frequent value (the smallest of ties, as SimpleImputer)."""
    if values.size == 0:
        return np.nan
    labels, counts = np.unique(values, return_counts=True)
    return float(labels[int(np.argmax(counts))])


class DensityDrawImputer(TransformerMixin, BaseEstimator):
    """Fill each missing entry with one draw from a fitted density.

    The density (a registry name or an unfitted density object) is fitted on
    the rows passed to ``fit``. ``transform`` asks it for the conditionals of
    the missing entries given the observed ones and draws one completion per
    row: a Gaussian draw for :class:`~missingkernels.conditionals.GaussianConditionals`,
    a component then a Gaussian draw for
    :class:`~missingkernels.conditionals.MixtureConditionals`, and one of the
    stored draws for :class:`~missingkernels.conditionals.SampleConditionals`.

    Parameters
    ----------
    density : str or density estimator, default="gaussian_mixture"
        Registry name (see :func:`missingkernels.list_densities`) or an
        unfitted object with ``fit`` and ``conditionals``.
    density_params : dict, default=None
        Parameters for a density given by name.
    fill : {"draw", "mean"}, default="draw"
        One random draw per row, or the conditional mean (EM imputation for
        a Gaussian density).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws (and of the density when it has a
        ``random_state`` parameter and is given by name).

    Attributes
    ----------
    density_ : object
        The fitted density.
    n_features_in_ : int

    References
    ----------
    .. [1] M. Śmieja, Ł. Struski, J. Tabor, M. Marzec. "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173 (2019),
       sec. 5.1, baseline "gmm".

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.experiments import DensityDrawImputer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3))
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> filled = DensityDrawImputer("gaussian_em", random_state=0).fit_transform(X)
    >>> bool(np.isnan(filled).any())
    False
    """

    _parameter_constraints: ClassVar[dict] = {
        "density": [str, HasMethods(["fit", "conditionals"])],
        "density_params": [dict, None],
        "fill": [StrOptions({"draw", "mean"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        density: Any = "gaussian_mixture",
        density_params: dict | None = None,
        fill: str = "draw",
        random_state: Any = None,
    ) -> None:
        self.density = density
        self.density_params = density_params
        self.fill = fill
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> DensityDrawImputer:
        """Fit the density on the rows of ``X`` (NaN where missing).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : DensityDrawImputer
        """
        self._validate_params()
        X = validate_missing_data(self, X, reset=True)
        from .._registry import new_density  # the registry imports this module

        params = dict(self.density_params or {})
        density = new_density(self.density, **params)
        if (
            isinstance(self.density, str)
            and "random_state" in density.get_params()
            and "random_state" not in params
        ):
            density.set_params(random_state=int(integer_seeds(self.random_state, 1)[0]))
        self.density_ = density.fit(X)
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Return ``X`` with every missing entry replaced by one draw.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_filled : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_missing_data(self, X, reset=False)
        cond = self.density_.conditionals(X)
        if self.fill == "mean":
            return np.asarray(cond.first_moments(), dtype=np.float64)
        # One generator over the batch, as scikit-learn's imputers draw (and
        # the committed baseline results were drawn).
        draw = cond.sample(1, check_random_state(self.random_state), by_row=False)
        return np.asarray(draw.samples[0], dtype=np.float64)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def zero_svm(
    task: str = "classification", nominal_features: Any = None, **params: Any
) -> Pipeline:
    """Zero imputation (in the original units), then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (missing numeric entries 0 in the original
        units, missing nominal entries all-zero one-hot columns), then the SVM.
    **params
        Set on the pipeline (e.g. ``svm__C``).

    Returns
    -------
    pipeline : Pipeline
    """
    pipe = _impute_then_svm(
        task,
        SimpleImputer(strategy="constant", fill_value=0.0),
        scale_first=False,
        nominal_features=nominal_features,
        mixed=dict(numeric_fill="zero", nominal_fill="zero"),
    )
    return pipe.set_params(**params)


def mean_svm(
    task: str = "classification", nominal_features: Any = None, **params: Any
) -> Pipeline:
    """Mean imputation (training means), then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (mean imputation of the numeric columns,
        mode imputation of the nominal ones), then the SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    return _impute_then_svm(
        task,
        SimpleImputer(strategy="mean"),
        nominal_features=nominal_features,
        mixed=dict(numeric_fill="mean", nominal_fill="most_frequent"),
    ).set_params(**params)


def mean_indicator_svm(
    task: str = "classification", nominal_features: Any = None, **params: Any
) -> Pipeline:
    """Mean imputation with missingness indicators, then an RBF SVM.

    The standardised features are mean-imputed (0) and a 0/1 indicator
    column is appended for every feature with a missing entry among the
    training rows (:class:`~sklearn.impute.SimpleImputer` with
    ``add_indicator=True``): the SVM sees where values were missing.

    Parameters
    ----------
    task : {"classification", "regression"}
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (mean / mode imputation and one indicator
        per column with a missing training entry), then the SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    imputer = SimpleImputer(strategy="mean", add_indicator=True)
    return _impute_then_svm(
        task,
        imputer,
        nominal_features=nominal_features,
        mixed=dict(
            numeric_fill="mean", nominal_fill="most_frequent", add_indicator=True
        ),
    ).set_params(**params)


def mode_svm(
    task: str = "classification", nominal_features: Any = None, **params: Any
) -> Pipeline:
    """Mode imputation (most frequent training value), then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (mode imputation of every column), then the
        SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    pipe = _impute_then_svm(
        task,
        SimpleImputer(strategy="most_frequent"),
        scale_first=False,
        nominal_features=nominal_features,
        mixed=dict(numeric_fill="most_frequent", nominal_fill="most_frequent"),
    )
    return pipe.set_params(**params)


def knn_svm(
    task: str = "classification", nominal_features: Any = None, **params: Any
) -> Pipeline:
    """k-NN imputation (k=5, distances over observed features), then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (k-NN imputation on the standardised numeric
        and one-hot columns), then the SVM.
    **params
        Set on the pipeline (e.g. ``impute__n_neighbors``).

    Returns
    -------
    pipeline : Pipeline
    """
    # KNNImputer's nan_euclidean distance uses the coordinates observed in
    # both rows, rescaled to all coordinates: the paper's "subspace of
    # observed features".
    return _impute_then_svm(
        task,
        KNNImputer(n_neighbors=5),
        nominal_features=nominal_features,
        mixed=dict(imputer=KNNImputer(n_neighbors=5)),
    ).set_params(**params)


def knn_indicator_svm(
    task: str = "classification", nominal_features: Any = None, **params: Any
) -> Pipeline:
    """k-NN imputation (k=5) with missingness indicators, then an RBF SVM.

    As :func:`knn_svm`, with a 0/1 indicator column appended for every
    feature with a missing entry among the training rows
    (:class:`~sklearn.impute.KNNImputer` with ``add_indicator=True``).

    Parameters
    ----------
    task : {"classification", "regression"}
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (k-NN imputation on the joint table and one
        indicator per column with a missing training entry), then the SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    imputer = KNNImputer(n_neighbors=5, add_indicator=True)
    return _impute_then_svm(
        task,
        imputer,
        nominal_features=nominal_features,
        mixed=dict(imputer=KNNImputer(n_neighbors=5), add_indicator=True),
    ).set_params(**params)


def hgb(
    task: str = "classification",
    random_state: Any = None,
    nominal_features: Any = None,
    **params: Any,
) -> Any:
    """Histogram gradient boosting with native missing values, no imputation.

    :class:`~sklearn.ensemble.HistGradientBoostingClassifier` (or
    ``...Regressor``): at each split the rows with a missing value go to the
    side that lowers the loss most, learnt from the training rows. The
    comparisons tune ``learning_rate`` and ``max_leaf_nodes``
    (``hgb.search_grid``) instead of ``C`` and ``gamma``, on unstandardised
    features (trees do not depend on the scale).

    Parameters
    ----------
    task : {"classification", "regression"}
    random_state : int or None
        Seed of the booster (its early-stopping split, used above 10,000
        rows).
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns: the booster's ``categorical_features`` (native
        categorical splits; their codes must be integers in
        ``[0, max_bins)``, and a category not seen in training goes where
        missing values go). None or none: every column numeric.
    **params
        Set on the estimator (e.g. ``learning_rate``, ``max_iter``).

    Returns
    -------
    estimator : HistGradientBoostingClassifier or HistGradientBoostingRegressor
    """
    _svm(task)  # the usual error for an unknown task
    cls = _HGBClassifier if task == "classification" else _HGBRegressor
    if nominal_features is not None:
        columns = np.asarray(nominal_features)
        if columns.dtype == bool:
            columns = np.flatnonzero(columns)
        if columns.size:
            params = {"categorical_features": columns.astype(int).tolist(), **params}
    return cls(random_state=random_state, **params)


class _ConstantSparseFeatures:
    """Gradient boosting that sets the features observed in fewer than
    ``MIN_OBSERVED`` training rows to a constant before fitting.

    A constant feature is never split on, so the trees are those of the table
    without it and its values in new rows are ignored: the feature is dropped
    as the expected kernels drop it (``dropped_features_``, one
    ``DroppedFeaturesWarning`` naming it). Histogram gradient boosting itself
    fails on a feature missing in every training row. With none to drop, the
    rows go to scikit-learn unchanged.
    """

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        names = SimpleNamespace()  # names the columns in the warning
        if hasattr(X, "notna"):  # a DataFrame, possibly with categorical columns
            counts = np.asarray(X.notna().sum(axis=0))
            if all(isinstance(c, str) for c in X.columns):
                names._feature_names_hint = np.asarray(X.columns, dtype=object)
        else:
            X = np.asarray(X, dtype=np.float64)
            counts = (~np.isnan(X)).sum(axis=0)
        dropped = np.flatnonzero(counts < MIN_OBSERVED)
        self.dropped_features_ = dropped
        if dropped.size:
            sklearn_name = type(self).__mro__[2].__name__
            warn_dropped_features(
                names, dropped, counts[dropped], X.shape, name=sklearn_name
            )
            if hasattr(X, "iloc"):
                X = X.copy()
                X.iloc[:, dropped] = 0.0
            else:
                X = X.copy()
                X[:, dropped] = 0.0
        return super().fit(X, y, sample_weight=sample_weight)  # type: ignore[misc]


class _HGBClassifier(_ConstantSparseFeatures, HistGradientBoostingClassifier):
    __doc__ = HistGradientBoostingClassifier.__doc__


class _HGBRegressor(_ConstantSparseFeatures, HistGradientBoostingRegressor):
    __doc__ = HistGradientBoostingRegressor.__doc__


# The inner grid of "hgb": scikit-learn's default learning rate and leaf count
# in the middle, a factor of 3 (rate) and about 2 (leaves) either way.
hgb.search_grid = {  # type: ignore[attr-defined]
    "learning_rate": [0.03, 0.1, 0.3],
    "max_leaf_nodes": [15, 31, 63],
}
hgb.scale = False  # type: ignore[attr-defined]


def iterative_svm(
    task: str = "classification",
    random_state: Any = None,
    nominal_features: Any = None,
    **params: Any,
) -> Pipeline:
    """IterativeImputer (chained equations, one posterior draw), then an RBF SVM.

    Called ``"mice"`` before; the density ``"mice"`` is statsmodels' MICE,
    while this baseline imputes with scikit-learn's
    :class:`~sklearn.impute.IterativeImputer`, as the density ``"iterative"``
    does.

    Parameters
    ----------
    task : {"classification", "regression"}
    random_state : int or None
        Seed of the draw.
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (chained equations on the standardised
        numeric and one-hot columns), then the SVM.
    **params
        Set on the pipeline (e.g. ``impute__max_iter``).

    Returns
    -------
    pipeline : Pipeline
    """
    # Bayesian-ridge chained equations with a posterior draw: the Python
    # counterpart of R mice's default "norm"-like draws; like mice::complete
    # (action=1) one completed data set is used.
    imputer = IterativeImputer(
        sample_posterior=True, max_iter=10, random_state=random_state
    )
    return _impute_then_svm(
        task, imputer, nominal_features=nominal_features, mixed=dict(imputer=imputer)
    ).set_params(**params)


def missforest_svm(
    task: str = "classification",
    random_state: Any = None,
    n_estimators: int = 30,
    nominal_features: Any = None,
    **params: Any,
) -> Pipeline:
    """missForest-like iterative imputation with random forests, then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    random_state : int or None
        Seed of the forests.
    n_estimators : int, default=30
        Trees per forest (missForest uses 100; 30 keeps nested CV affordable).
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (the forests impute the standardised numeric
        and one-hot columns), then the SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    # max_features="sqrt" is missForest's default mtry = floor(sqrt(p)).
    forest = RandomForestRegressor(
        n_estimators=n_estimators,
        max_features="sqrt",
        random_state=random_state,
        n_jobs=1,
    )
    imputer = IterativeImputer(
        estimator=forest,
        initial_strategy="mean",
        max_iter=5,
        random_state=random_state,
    )
    return _impute_then_svm(
        task, imputer, nominal_features=nominal_features, mixed=dict(imputer=imputer)
    ).set_params(**params)


def gmm_svm(
    task: str = "classification",
    random_state: Any = None,
    n_components: int = 3,
    nominal_features: Any = None,
    **params: Any,
) -> Pipeline:
    """Draws from a Gaussian mixture fitted to incomplete data, then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    random_state : int or None
        Seed of the mixture fit and of the draws.
    n_components : int, default=3
        Mixture components (3 in the genRBF paper).
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (the mixture is fitted on, and draws, the
        standardised numeric and one-hot columns), then the SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    imputer = DensityDrawImputer(
        "gaussian_mixture",
        density_params={"n_components": n_components},
        random_state=random_state,
    )
    return _impute_then_svm(
        task, imputer, nominal_features=nominal_features, mixed=dict(imputer=imputer)
    ).set_params(**params)


def em_svm(
    task: str = "classification", nominal_features: Any = None, **params: Any
) -> Pipeline:
    """EM imputation (conditional means under a Gaussian fitted by EM), then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (EM imputation on the standardised numeric
        and one-hot columns), then the SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    imputer = DensityDrawImputer("gaussian_em", fill="mean")
    return _impute_then_svm(
        task, imputer, nominal_features=nominal_features, mixed=dict(imputer=imputer)
    ).set_params(**params)


def r_mice_svm(
    task: str = "classification",
    random_state: Any = None,
    nominal_features: Any = None,
    **params: Any,
) -> Pipeline:
    """R mice (one completed data set, via the R plugin), then an RBF SVM.

    Parameters
    ----------
    task : {"classification", "regression"}
    random_state : int or None
        Seed of the draw.
    nominal_features : array-like of int or bool mask, default=None
        The nominal columns (category codes) of the table; None or none: the
        all-numeric pipeline. With nominal columns the pipeline is a
        :class:`MixedTableImputer` (mice imputes the standardised numeric and
        one-hot columns), then the SVM.
    **params
        Set on the pipeline.

    Returns
    -------
    pipeline : Pipeline
    """
    imputer = DensityDrawImputer("r_mice", random_state=random_state)
    return _impute_then_svm(
        task, imputer, nominal_features=nominal_features, mixed=dict(imputer=imputer)
    ).set_params(**params)


def geom_svm(task: str = "classification", **params: Any) -> Any:
    """The geometric-margin SVM of Chechik et al. (peer "geom"), no imputation.

    Parameters
    ----------
    task : {"classification"}
        A regression task is refused: the method is a classifier.
    **params
        Set on :class:`~missingkernels.estimators.GeomSVC` (e.g. ``C``,
        ``gamma``).

    Returns
    -------
    estimator : GeomSVC

    Raises
    ------
    ValueError
        For a regression task.
    """
    from ..estimators import GeomSVC

    _classification_only(task, "geom (Chechik et al.)")
    return GeomSVC(**params)


# Binary-only: one-vs-rest on more classes (k fits of a small QP each).
geom_svm.multiclass = "ovr"  # type: ignore[attr-defined]


def socp_svc(task: str = "classification", **params: Any) -> Any:
    """Expected-kernel SOCP SVM of Anderson & Gupta (kappa 0.9), no imputation.

    Parameters
    ----------
    task : {"classification"}
        A regression task is refused: the method is a classifier.
    **params
        Set on :class:`~missingkernels.estimators.SOCPSVC` (e.g. ``C``,
        ``gamma``, ``density``); ``kappa`` is 0.9 unless given.

    Returns
    -------
    estimator : SOCPSVC

    Raises
    ------
    ValueError
        For a regression task.
    """
    from ..estimators import SOCPSVC

    _classification_only(task, "socp")
    return SOCPSVC(**{"kappa": 0.9, **params})


# Binary-only: one-vs-rest on more classes. Each binary problem is the paper's
# chance-constrained SOCP, well defined on its own; the density (of the
# features only) is fitted once per training set and shared by the k solves.
socp_svc.multiclass = "ovr"  # type: ignore[attr-defined]


def _builtin_baselines() -> dict[str, Any]:
    """Name -> factory of the built-in baselines (read by the registry hook)."""
    baselines: dict[str, Any] = {
        "em": em_svm,
        "geom": geom_svm,
        "gmm": gmm_svm,
        "hgb": hgb,
        "knn": knn_svm,
        "knn_indicator": knn_indicator_svm,
        "mean": mean_svm,
        "mean_indicator": mean_indicator_svm,
        "iterative": iterative_svm,
        "missforest": missforest_svm,
        "mode": mode_svm,
        "socp": socp_svc,
        "zero": zero_svm,
    }
    # R mice only where the R plugin registered its density.
    from .._registry import list_densities

    if "r_mice" in list_densities():
        baselines["r_mice"] = r_mice_svm
    return baselines
