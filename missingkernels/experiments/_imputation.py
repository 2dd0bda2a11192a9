"""Transformers of the baselines: the steps before the SVM.

:class:`DropSparseFeatures` (drop features observed too rarely to impute),
:class:`MixedTableImputer` (impute a table of numeric and nominal columns)
and :class:`DensityDrawImputer` (impute with draws from, or the mean of, a
fitted density); the baselines (:mod:`._baselines`) chain them with an
RBF SVM.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .._numerics import integer_seeds
from .._sklearn_compat import HasMethods, Interval, StrOptions
from .._validation import (
    MIN_OBSERVED,
    drop_sparse_features,
    validate_missing_data,
)


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


def nominal_mask(nominal_features: Any, n_features: int) -> np.ndarray:
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
        self.is_nominal_ = nominal_mask(self.nominal_features, X.shape[1])
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
