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

from types import SimpleNamespace
from typing import Any

import numpy as np
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

from .._validation import (
    MIN_OBSERVED,
    warn_dropped_features,
)
from ._imputation import DensityDrawImputer, DropSparseFeatures, MixedTableImputer

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

    It fits and predicts on one OpenMP thread: on the comparisons' small
    tables threads gain nothing, and on a machine whose cores are busy with
    other work their barriers make the fits 20 to 100 times slower
    (``compare hepatitis --quick --methods hgb``: 0.9 s on one thread, 20-89
    s on two with the machine loaded).
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
        with _one_openmp_thread():
            return super().fit(X, y, sample_weight=sample_weight)  # type: ignore[misc]

    def predict(self, X: Any) -> Any:
        with _one_openmp_thread():
            return super().predict(X)  # type: ignore[misc]


def _one_openmp_thread() -> Any:
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="openmp")


class _HGBClassifier(_ConstantSparseFeatures, HistGradientBoostingClassifier):
    __doc__ = HistGradientBoostingClassifier.__doc__

    def predict_proba(self, X: Any) -> Any:
        with _one_openmp_thread():
            return super().predict_proba(X)

    def decision_function(self, X: Any) -> Any:
        with _one_openmp_thread():
            return super().decision_function(X)


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


def iterative_mean_svm(
    task: str = "classification",
    random_state: Any = None,
    nominal_features: Any = None,
    **params: Any,
) -> Pipeline:
    """IterativeImputer at scikit-learn's defaults (conditional means), then an RBF SVM.

    What a scikit-learn user gets from ``IterativeImputer()``: chained
    Bayesian-ridge regressions whose predictions (posterior means, no draw,
    ``sample_posterior=False``) fill the missing entries, 10 rounds at most.
    The baseline ``"iterative"`` differs only in filling with one posterior
    draw, as MICE does and as the genRBF paper ran it.

    Parameters
    ----------
    task : {"classification", "regression"}
    random_state : int or None
        Seed of the imputer (it orders the features only when asked to; the
        defaults do not draw).
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

    References
    ----------
    .. [1] S. van Buuren and K. Groothuis-Oudshoorn, "mice: Multivariate
       Imputation by Chained Equations in R", Journal of Statistical Software
       45(3), 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels import get_baseline
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.9], [np.nan, 4.1]] * 5)
    >>> y = np.array([0, 0, 1, 1] * 5)
    >>> get_baseline("iterative_mean").fit(X, y).predict(X[:4]).tolist()
    [0, 0, 1, 1]
    """
    imputer = IterativeImputer(random_state=random_state)
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
        "iterative_mean": iterative_mean_svm,
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
