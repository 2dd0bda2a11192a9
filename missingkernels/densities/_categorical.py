"""Independent per-feature categorical (Bernoulli) distributions."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from .._sklearn_compat import Interval, StrOptions
from .._table_encoding import warn_unseen
from .._validation import describe_features
from ..conditionals import CategoricalConditionals
from ._base import BaseDensity

__all__ = ["CategoricalDensity"]


class CategoricalDensity(BaseDensity):
    """Per-feature value frequencies among observed entries (binary/categorical).

    Feature ``v`` gets the probability mass function ``P_v(c) = (n_vc +
    alpha) / (n_v + alpha K_v)``, where ``n_vc`` counts the training rows in
    which ``v`` is observed and equals ``c``, ``n_v`` the rows in which ``v`` is
    observed and ``K_v`` the number of distinct observed values. The features
    are independent, as in the kernels of Belanche et al. (2014), and a missing
    entry is distributed as ``P_v`` whatever the rest of the row.

    Values must be category codes: integer-valued numbers (e.g. 0/1 for binary
    features, or the output of :class:`sklearn.preprocessing.OrdinalEncoder`).

    Parameters
    ----------
    alpha : float, default=0.0
        Additive (Laplace) smoothing; 0 gives the raw observed frequencies,
        1 the Laplace estimate.
    max_categories : int, default=100
        Largest number of distinct values accepted per feature; more suggests a
        continuous feature, which is rejected.
    handle_unknown : {"error", "missing", "ignore"}, default="error"
        What :meth:`conditionals` does with an observed value not seen during
        fit: ``"error"`` raises; ``"missing"`` makes it a missing entry
        (distributed as ``P_v``, with an
        :class:`~missingkernels.UnknownCategoryWarning`), as
        ``handle_unknown="missing"`` does in the estimators and the mixed
        kernels; ``"ignore"`` keeps it as a value of probability 0 under
        ``P_v`` that matches no training value (the meaning of ``"ignore"`` in
        scikit-learn's ``OneHotEncoder``, whose row for it is all zeros).
        The three words mean the same wherever they are accepted; the
        estimators offer ``"missing"`` and ``"error"`` only.

    Attributes
    ----------
    categories_ : list of ndarray
        ``categories_[v]``: the sorted distinct observed values of feature v.
    counts_ : list of ndarray
        ``counts_[v][c]``: training rows where feature v equals
        ``categories_[v][c]``.
    probabilities_ : list of ndarray
        ``probabilities_[v][c] = P_v(categories_[v][c])``; sums to 1.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] L. A. Belanche, V. Kobayashi and T. Aluja, "Handling missing values
       in kernel methods with application to microbiology data",
       Neurocomputing 141, 110-116, 2014, eqs. (2)-(3).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.densities import CategoricalDensity
    >>> X = np.array([[1, 0], [1, np.nan], [0, 1], [np.nan, 1]])
    >>> density = CategoricalDensity().fit(X)
    >>> [np.round(p, 3).tolist() for p in density.probabilities_]
    [[0.333, 0.667], [0.333, 0.667]]
    >>> int(density.conditionals(X).missing.sum())
    2
    """

    representation: ClassVar[str] = "categorical"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_categories": [Interval(Integral, 2, None, closed="left")],
        "handle_unknown": [StrOptions({"error", "missing", "ignore"})],
    }

    def __init__(
        self,
        alpha: float = 0.0,
        max_categories: int = 100,
        handle_unknown: str = "error",
    ):
        self.alpha = alpha
        self.max_categories = max_categories
        self.handle_unknown = handle_unknown

    def _check_codes(self, X: np.ndarray) -> None:
        observed = ~np.isnan(X)
        not_integer = observed & (X != np.round(X))
        if not_integer.any():
            i, v = np.argwhere(not_integer)[0]
            raise ValueError(
                f"{type(self).__name__} needs discrete features coded as "
                f"integers; {describe_features(self, v)} has the value "
                f"{float(X[i, v])!r} in row {i} (0-based). Encode categories as "
                "integers (e.g. with sklearn.preprocessing.OrdinalEncoder) or use a "
                "density for continuous data such as 'gaussian_em'."
            )

    def _fit(self, X: np.ndarray) -> None:
        self._check_codes(X)
        self.categories_: list[np.ndarray] = []
        self.counts_: list[np.ndarray] = []
        self.probabilities_: list[np.ndarray] = []
        for v in range(X.shape[1]):
            column = X[:, v]
            values, counts = np.unique(column[~np.isnan(column)], return_counts=True)
            if len(values) > self.max_categories:
                raise ValueError(
                    f"{type(self).__name__}: {describe_features(self, v)} has "
                    f"{len(values)} distinct values, more than max_categories="
                    f"{self.max_categories}; it looks continuous. Use a density "
                    "for continuous data such as 'gaussian_em', or raise "
                    "max_categories."
                )
            smoothed = counts + float(self.alpha)
            self.categories_.append(values)
            self.counts_.append(counts)
            self.probabilities_.append(smoothed / smoothed.sum())

    def _conditionals(self, X: np.ndarray) -> CategoricalConditionals:
        self._check_codes(X)
        copied = False
        if self.handle_unknown != "ignore":
            for v, values in enumerate(self.categories_):
                column = X[:, v]
                unseen = ~np.isnan(column) & ~np.isin(column, values)
                if not unseen.any():
                    continue
                if self.handle_unknown == "missing":
                    where = f"{type(self).__name__}: {describe_features(self, v)}"
                    warn_unseen(where, column[unseen].tolist(), values.tolist())
                    if not copied:  # the caller's rows stay as they are
                        X, copied = X.copy(), True
                    X[unseen, v] = np.nan
                    continue
                value = float(column[unseen][0])
                raise ValueError(
                    f"{type(self).__name__}: {describe_features(self, v)} "
                    f"has the value {value!r}, not seen during fit "
                    f"(seen: {values.tolist()}). Refit with it, or set "
                    "handle_unknown='missing' (it is then a missing entry) or "
                    "'ignore' (it is kept with probability 0 and matches no "
                    "training value)."
                )
        return CategoricalConditionals(
            values=X.copy(),
            missing=np.isnan(X),
            categories=tuple(self.categories_),
            probabilities=tuple(self.probabilities_),
        )
