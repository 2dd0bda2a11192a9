"""Representations of per-row conditional distributions of missing entries.

Every representation stores the rows it describes and a boolean ``missing``
mask (True where the entry was missing). Observed entries are never changed.
Covariances are stored once per distinct missing pattern, never one d x d
matrix per row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._gaussian_conditioning import condition_gaussian
from .._missing_patterns import group_patterns, pattern_groups
from .._numerics import psd_factor
from ._base import BaseConditionals, Variates, check_n_draws

__all__ = [
    "CategoricalConditionals",
    "GaussianConditionals",
    "MixtureConditionals",
    "SampleConditionals",
    "group_patterns",
]


def _check_rows(means: np.ndarray, missing: np.ndarray, what: str) -> None:
    if means.ndim != 2 or missing.shape != means.shape[-2:]:
        raise ValueError(
            f"{what}: means and missing must describe the same rows; got "
            f"means of shape {means.shape} and missing of shape {missing.shape}."
        )


def _embedded(patterns: np.ndarray, covariances: Any, lead: tuple = ()) -> np.ndarray:
    """``(*lead, P, d, d)``: each pattern's covariance placed in its J x J block."""
    P, d = patterns.shape
    out = np.zeros((*lead, P, d, d))
    for p, cov in enumerate(covariances):
        J = np.flatnonzero(patterns[p])
        if J.size:
            out[..., p, J[:, None], J[None, :]] = cov
    return out


class PatternFactors:
    """The rows of each missing pattern and, per (pattern, component), a
    factor of its conditional covariance: computed once for all the draws
    of a :meth:`~BaseConditionals.sample` call, not once per draw."""

    def __init__(
        self, patterns: np.ndarray, pattern_index: np.ndarray, covariances: Any
    ) -> None:
        order = np.argsort(pattern_index, kind="stable")
        bounds = np.searchsorted(pattern_index[order], np.arange(len(patterns) + 1))
        self.rows = [order[bounds[p] : bounds[p + 1]] for p in range(len(patterns))]
        self.cols = [np.flatnonzero(pattern) for pattern in patterns]
        self.covariances = covariances
        self._roots: dict[tuple[int, int], np.ndarray] = {}

    def root(self, p: int, k: int) -> np.ndarray:
        """``F`` with ``F F^T`` the covariance of pattern ``p``, component ``k``."""
        key = (p, int(k))
        if key not in self._roots:
            self._roots[key] = psd_factor(self.covariances[p][k])
        return self._roots[key]


def _fill_gaussian(
    out: np.ndarray,
    means: np.ndarray,
    factors: PatternFactors,
    component: np.ndarray,
    variates: Variates,
    draw: int,
) -> None:
    """Draw the missing block of each row from ``N(means[k], C_pk)`` in place.

    ``component[i]`` picks the component of row ``i`` (``covariances[p][k]``
    of ``factors``); one factor per (pattern, component), shared by the rows
    of the pattern and by every draw.
    """
    for p, cols in enumerate(factors.cols):
        rows = factors.rows[p]
        if cols.size == 0 or rows.size == 0:
            continue
        for k in np.unique(component[rows]):
            sel = rows[component[rows] == k]
            z = variates.normal(sel, draw, cols.size)
            block = np.ix_(sel, cols)
            out[block] = means[k][block] + z @ factors.root(p, k).T


@dataclass(frozen=True, eq=False)
class GaussianConditionals(BaseConditionals):
    """Gaussian conditionals: filled means and one covariance per pattern.

    Row ``i`` is distributed as ``N(means[i], A_i)`` where ``A_i`` holds
    ``covariances[pattern_index[i]]`` on the missing coordinates of the row
    and zeros elsewhere.

    Parameters
    ----------
    means : ndarray of shape (n_samples, n_features)
        Observed entries as given, missing entries replaced by their
        conditional mean.
    missing : ndarray of shape (n_samples, n_features), dtype bool
        True where the entry was missing.
    patterns : ndarray of shape (n_patterns, n_features), dtype bool
        Distinct missing patterns.
    pattern_index : ndarray of shape (n_samples,)
        Pattern of each row.
    covariances : tuple of ndarray
        ``covariances[p]`` has shape ``(k, k)`` with ``k = patterns[p].sum()``,
        in the order of ``np.flatnonzero(patterns[p])``.
    covariance : ndarray of shape (n_features, n_features) or None
        The joint covariance of the fitted Gaussian (used by the Mahalanobis
        metric of the RBF kernels), when known.
    """

    domain: ClassVar[str | None] = "numeric"

    means: np.ndarray
    missing: np.ndarray
    patterns: np.ndarray
    pattern_index: np.ndarray
    covariances: tuple[np.ndarray, ...]
    covariance: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        _check_rows(self.means, self.missing, "GaussianConditionals")
        if len(self.covariances) != len(self.patterns):
            raise ValueError(
                "GaussianConditionals: one covariance per pattern is needed; got "
                f"{len(self.covariances)} covariances for {len(self.patterns)} "
                "patterns."
            )
        for p, cov in zip(self.patterns, self.covariances, strict=True):
            k = int(p.sum())
            if cov.shape != (k, k):
                raise ValueError(
                    "GaussianConditionals: a pattern with "
                    f"{k} missing features needs a ({k}, {k}) covariance, got "
                    f"{cov.shape}."
                )

    @property
    def n_samples(self) -> int:
        return int(self.means.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.means.shape[1])

    def first_moments(self) -> np.ndarray:
        """``E[X_i]``: the filled means."""
        return self.means

    def embedded_covariances(self) -> np.ndarray:
        """``(n_patterns, d, d)``: each pattern's covariance in its J x J block."""
        return _embedded(self.patterns, self.covariances)

    def second_moments(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """``E[X_i X_i^T] = mu_i mu_i^T + A_i``."""
        rows = slice(None) if rows is None else rows
        mu = self.means[rows]
        covs = self.embedded_covariances()
        return covs[self.pattern_index[rows]] + np.einsum("ni,nj->nij", mu, mu)

    def joint_covariance(self, density: Any = None) -> np.ndarray:
        """``covariance``, else the density's ``covariance_``, else the
        implied covariance (see :meth:`BaseConditionals.joint_covariance`)."""
        if self.covariance is not None:
            return self.covariance
        S = getattr(density, "covariance_", None)
        return self.implied_covariance() if S is None else S

    def implied_covariance(self) -> np.ndarray:
        """The implied covariance (see :meth:`BaseConditionals.implied_covariance`),
        by pattern: ``(sum_i (mu_i - m)(mu_i - m)^T + sum_p n_p C_p) / n``."""
        n = self.n_samples
        centred = self.means - self.means.mean(axis=0)
        counts = np.bincount(self.pattern_index, minlength=len(self.patterns))
        covs = self.embedded_covariances()
        return (centred.T @ centred + np.tensordot(counts.astype(float), covs, 1)) / n

    def sample(
        self, n_draws: int, random_state: Any = None, *, by_row: bool = True
    ) -> SampleConditionals:
        """Draw completions: per pattern, ``mu_J + F z`` with ``F F^T = C_J``.

        See :meth:`BaseConditionals.sample`.
        """
        n_draws = check_n_draws(n_draws)
        variates = Variates(random_state, by_row, self.means, self.missing)
        out = np.repeat(self.means[None], n_draws, axis=0)
        factors = PatternFactors(
            self.patterns, self.pattern_index, [c[None] for c in self.covariances]
        )
        if variates.streams is None:
            # One generator consumed draw by draw, as the imputers do.
            comp = np.zeros(self.n_samples, dtype=int)
            for m in range(n_draws):
                _fill_gaussian(out[m], self.means[None], factors, comp, variates, m)
            return SampleConditionals(samples=out, missing=self.missing)
        # Row-keyed numbers do not depend on the order they are made in:
        # pattern by pattern, every draw's numbers at once.
        for p, cols in enumerate(factors.cols):
            rows = factors.rows[p]
            if cols.size == 0 or rows.size == 0:
                continue
            block = np.ix_(rows, cols)
            mean = self.means[block]
            root_t = factors.root(p, 0).T
            z = variates.normal_draws(rows, n_draws, cols.size)
            for m in range(n_draws):
                out[m][block] = mean + z[m] @ root_t
        return SampleConditionals(samples=out, missing=self.missing)

    def component(self, k: int = 0) -> GaussianConditionals:
        """The Gaussian itself (a one-component mixture), for generic code."""
        if k != 0:
            raise IndexError("GaussianConditionals has one component.")
        return self

    def row_covariance(self, i: int) -> np.ndarray:
        """Return the full ``(d, d)`` covariance ``A_i`` of row ``i``.

        Meant for tests and small examples; kernels work per pattern.
        """
        p = self.pattern_index[i]
        idx = np.flatnonzero(self.patterns[p])
        out = np.zeros((self.n_features, self.n_features))
        out[np.ix_(idx, idx)] = self.covariances[p]
        return out

    def take(self, rows: np.ndarray) -> GaussianConditionals:
        """Return the conditionals of a subset of rows (patterns are re-grouped)."""
        rows = np.asarray(rows)
        patterns, index = group_patterns(self.missing[rows])
        old = self.pattern_index[rows]
        covs = []
        for p in range(len(patterns)):
            first = np.flatnonzero(index == p)[0]
            covs.append(self.covariances[old[first]])
        return GaussianConditionals(
            means=self.means[rows],
            missing=self.missing[rows],
            patterns=patterns,
            pattern_index=index,
            covariances=tuple(covs),
            covariance=self.covariance,
        )

    @classmethod
    def from_moments(
        cls, X: np.ndarray, mean: np.ndarray, covariance: np.ndarray
    ) -> GaussianConditionals:
        """Condition ``N(mean, covariance)`` on the observed entries of each row.

        The Schur complement per missing pattern,
        ``mu_J = m_J + S_JO S_OO^-1 (x_O - m_O)`` and
        ``C_J = S_JJ - S_JO S_OO^-1 S_OJ``, batched over the patterns with
        the same number of missing features through the precision of the
        correlation matrix (Schur complements pattern by pattern when the
        covariance is singular).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Rows with NaN where missing.
        mean : ndarray of shape (n_features,)
        covariance : ndarray of shape (n_features, n_features)
            Symmetric positive definite on every observed block.

        Returns
        -------
        conditionals : GaussianConditionals

        Examples
        --------
        >>> import numpy as np
        >>> from missingkernels.conditionals import GaussianConditionals
        >>> S = np.array([[1.0, 0.5], [0.5, 1.0]])
        >>> c = GaussianConditionals.from_moments(
        ...     np.array([[2.0, np.nan]]), np.zeros(2), S)
        >>> c.means.tolist(), c.covariances[0].round(12).tolist()
        ([[2.0, 1.0]], [[0.75]])
        """
        X = np.asarray(X, dtype=np.float64)
        mean = np.asarray(mean, dtype=np.float64)
        covariance = np.asarray(covariance, dtype=np.float64)
        d = X.shape[1]
        if mean.shape != (d,) or covariance.shape != (d, d):
            raise ValueError(
                f"mean and covariance must have shapes ({d},) and ({d}, {d}) for "
                f"X with {d} features; got {mean.shape} and {covariance.shape}."
            )
        groups = pattern_groups(np.isnan(X))
        conditioned = condition_gaussian(X, groups, mean, covariance)
        assert conditioned.means is not None
        return cls(
            means=conditioned.means,
            missing=groups.missing,
            patterns=groups.patterns,
            pattern_index=groups.pattern_index,
            covariances=tuple(groups.per_pattern(conditioned.blocks)),
            covariance=covariance,
        )


@dataclass(frozen=True, eq=False)
class MixtureConditionals(BaseConditionals):
    """Gaussian-mixture conditionals with row-specific component weights.

    Row ``i`` is distributed as ``sum_k weights[i, k] N(means[k, i], A_ik)``,
    ``A_ik`` holding ``covariances[pattern_index[i]][k]`` on the missing
    coordinates.

    Parameters
    ----------
    weights : ndarray of shape (n_samples, n_components)
        Posterior component probabilities given the observed entries.
    means : ndarray of shape (n_components, n_samples, n_features)
        Per-component filled means.
    missing, patterns, pattern_index
        As in :class:`GaussianConditionals`.
    covariances : tuple of ndarray
        ``covariances[p]`` has shape ``(n_components, k, k)``.
    component_covariances : ndarray of shape (n_components, d, d) or None
        The joint covariance of each component, when known.
    """

    domain: ClassVar[str | None] = "numeric"

    weights: np.ndarray
    means: np.ndarray
    missing: np.ndarray
    patterns: np.ndarray
    pattern_index: np.ndarray
    covariances: tuple[np.ndarray, ...]
    component_covariances: np.ndarray | None = field(default=None)

    def __post_init__(self) -> None:
        if self.means.ndim != 3:
            raise ValueError(
                "MixtureConditionals: means must have shape "
                f"(n_components, n_samples, n_features), got {self.means.shape}."
            )
        _check_rows(self.means[0], self.missing, "MixtureConditionals")
        if self.weights.shape != (self.means.shape[1], self.means.shape[0]):
            raise ValueError(
                "MixtureConditionals: weights must have shape (n_samples, "
                f"n_components) = {(self.means.shape[1], self.means.shape[0])}, "
                f"got {self.weights.shape}."
            )

    @property
    def n_samples(self) -> int:
        return int(self.means.shape[1])

    @property
    def n_features(self) -> int:
        return int(self.means.shape[2])

    @property
    def n_components(self) -> int:
        """The number of mixture components."""
        return int(self.means.shape[0])

    def first_moments(self) -> np.ndarray:
        """``E[X_i] = sum_k w_ik mu_ik``."""
        return np.einsum("nk,knd->nd", self.weights, self.means)

    def embedded_covariances(self) -> np.ndarray:
        """``(n_components, n_patterns, d, d)``: covariances in their J x J blocks."""
        return _embedded(self.patterns, self.covariances, (self.n_components,))

    def second_moments(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """``E[X_i X_i^T] = sum_k w_ik (mu_ik mu_ik^T + A_ik)``."""
        rows = slice(None) if rows is None else rows
        covs = self.embedded_covariances()
        index = self.pattern_index[rows]
        total = np.zeros((len(index), self.n_features, self.n_features))
        for k in range(self.n_components):
            mu = self.means[k, rows]
            M = covs[k][index] + np.einsum("ni,nj->nij", mu, mu)
            total += self.weights[rows, k][:, None, None] * M
        return total

    def implied_covariance(self) -> np.ndarray:
        """The implied covariance (see :meth:`BaseConditionals.implied_covariance`),
        by pattern and component."""
        n, d = self.n_samples, self.n_features
        mean = self.first_moments().mean(axis=0)
        covs = self.embedded_covariances()
        second = np.zeros((d, d))
        for k in range(self.n_components):
            wk = self.weights[:, k]
            centred = self.means[k] - mean
            second += (centred * wk[:, None]).T @ centred
            per_pattern = np.bincount(
                self.pattern_index, weights=wk, minlength=len(covs[k])
            )
            second += np.tensordot(per_pattern, covs[k], axes=1)
        return second / n

    def sample(
        self, n_draws: int, random_state: Any = None, *, by_row: bool = True
    ) -> SampleConditionals:
        """Draw a component by the row's weights, then its Gaussian.

        See :meth:`BaseConditionals.sample`.
        """
        n_draws = check_n_draws(n_draws)
        # Observed entries of a component's means are the row's, exactly.
        variates = Variates(random_state, by_row, self.means[0], self.missing)
        n = self.n_samples
        every = np.arange(n)
        out = np.repeat(self.first_moments()[None], n_draws, axis=0)
        cum = np.cumsum(self.weights, axis=1)
        factors = PatternFactors(self.patterns, self.pattern_index, self.covariances)
        for m in range(n_draws):
            u = variates.uniform(every, m, 1) * cum[:, -1:]
            comp = np.minimum((u > cum).sum(axis=1), self.n_components - 1)
            out[m] = self.means[comp, np.arange(n)]
            _fill_gaussian(out[m], self.means, factors, comp, variates, m)
        return SampleConditionals(samples=out, missing=self.missing)

    def component(self, k: int) -> GaussianConditionals:
        """Component ``k`` as Gaussian conditionals (the row weights set aside)."""
        cov = None
        if self.component_covariances is not None:
            cov = self.component_covariances[k]
        return GaussianConditionals(
            means=self.means[k],
            missing=self.missing,
            patterns=self.patterns,
            pattern_index=self.pattern_index,
            covariances=tuple(np.asarray(c)[k] for c in self.covariances),
            covariance=cov,
        )


@dataclass(frozen=True, eq=False)
class SampleConditionals(BaseConditionals):
    """Conditionals represented by draws (multiple imputation).

    Parameters
    ----------
    samples : ndarray of shape (n_draws, n_samples, n_features)
        Completed rows; observed entries are identical in every draw.
    missing : ndarray of shape (n_samples, n_features), dtype bool
        True where the entry was missing.
    """

    domain: ClassVar[str | None] = None

    samples: np.ndarray
    missing: np.ndarray

    def __post_init__(self) -> None:
        if self.samples.ndim != 3:
            raise ValueError(
                "SampleConditionals: samples must have shape (n_draws, n_samples, "
                f"n_features), got {self.samples.shape}."
            )
        _check_rows(self.samples[0], self.missing, "SampleConditionals")
        if not np.all(np.isfinite(self.samples)):
            raise ValueError(
                "SampleConditionals: every draw must be finite; the imputer "
                "left NaN or inf in its draws."
            )

    @property
    def n_samples(self) -> int:
        return int(self.samples.shape[1])

    @property
    def n_features(self) -> int:
        return int(self.samples.shape[2])

    @property
    def n_draws(self) -> int:
        """The number of draws per row."""
        return int(self.samples.shape[0])

    def feature_values(self, v: int) -> np.ndarray:
        """The sorted values feature ``v`` takes in any draw."""
        return np.unique(self.samples[:, :, v])

    def pmf(self, v: int, categories: np.ndarray) -> np.ndarray:
        """``(n_samples, n_categories)``: per row, the frequency of each of
        ``categories`` (sorted, covering every value) among its draws of
        feature ``v``."""
        cats = np.asarray(categories, dtype=np.float64)
        n = self.n_samples
        out = np.zeros((n, len(cats)))
        codes = np.searchsorted(cats, self.samples[:, :, v])
        for a in range(self.n_draws):
            np.add.at(out, (np.arange(n), codes[a]), 1.0 / self.n_draws)
        return out

    def first_moments(self) -> np.ndarray:
        """The average over draws."""
        return self.samples.mean(axis=0)

    def second_moments(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """The average over draws of ``x x^T``."""
        rows = slice(None) if rows is None else rows
        draws = self.samples[:, rows]
        return np.einsum("mni,mnj->nij", draws, draws) / self.n_draws

    def implied_covariance(self) -> np.ndarray:
        """The covariance of all draws of all rows (divisor: their number)."""
        d = self.n_features
        mean = self.first_moments().mean(axis=0)
        flat = self.samples.reshape(-1, d) - mean
        return flat.T @ flat / len(flat)

    def sample(
        self, n_draws: int, random_state: Any = None, *, by_row: bool = True
    ) -> SampleConditionals:
        """Resample: each row's completions drawn with replacement from its draws.

        See :meth:`BaseConditionals.sample`.
        """
        n_draws = check_n_draws(n_draws)
        variates = Variates(random_state, by_row, self.samples[0], self.missing)
        n = self.n_samples
        every = np.arange(n)
        out = np.empty((n_draws, n, self.n_features))
        for m in range(n_draws):
            pick = variates.integers(every, m, self.n_draws)
            out[m] = self.samples[pick, np.arange(n)]
        return SampleConditionals(samples=out, missing=self.missing)


@dataclass(frozen=True, eq=False)
class CategoricalConditionals(BaseConditionals):
    """Independent per-feature categorical distributions of missing entries.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_features)
        Observed category codes, NaN where missing.
    missing : ndarray of shape (n_samples, n_features), dtype bool
    categories : tuple of ndarray
        ``categories[v]`` the sorted distinct values of feature ``v``.
    probabilities : tuple of ndarray
        ``probabilities[v][c]`` the probability of ``categories[v][c]``.
    """

    domain: ClassVar[str | None] = "nominal"

    values: np.ndarray
    missing: np.ndarray
    categories: tuple[np.ndarray, ...]
    probabilities: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        _check_rows(self.values, self.missing, "CategoricalConditionals")
        d = self.values.shape[1]
        if len(self.categories) != d or len(self.probabilities) != d:
            raise ValueError(
                f"CategoricalConditionals: need categories and probabilities for "
                f"each of the {d} features."
            )

    @property
    def n_samples(self) -> int:
        return int(self.values.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.values.shape[1])

    def feature_values(self, v: int) -> np.ndarray:
        """The sorted values feature ``v`` can take: the fitted categories and
        any observed value."""
        col = self.values[:, v]
        known = np.asarray(self.categories[v], dtype=np.float64)
        return np.unique(np.concatenate([known, col[~np.isnan(col)]]))

    def pmf(self, v: int, categories: np.ndarray | None = None) -> np.ndarray:
        """``(n_samples, n_categories)``: the distribution of feature ``v`` per row.

        One-hot for an observed value, the fitted PMF for a missing one;
        columns follow ``categories`` (sorted; default ``self.categories[v]``
        with any observed value not in it added).
        """
        col = self.values[:, v]
        miss = np.isnan(col)
        known = np.asarray(self.categories[v], dtype=np.float64)
        if categories is None:
            categories = self.feature_values(v)
        cats = np.asarray(categories, dtype=np.float64)
        out = np.zeros((self.n_samples, len(cats)))
        obs = np.flatnonzero(~miss)
        out[obs, np.searchsorted(cats, col[obs])] = 1.0
        prob = np.zeros(len(cats))
        prob[np.searchsorted(cats, known)] = self.probabilities[v]
        out[miss] = prob
        return out

    def first_moments(self) -> np.ndarray:
        """``E[X_i]`` of the codes: observed codes, ``sum_c c P_v(c)`` if missing."""
        out = np.array(self.values, dtype=np.float64, copy=True)
        for v in range(self.n_features):
            miss = self.missing[:, v]
            if miss.any():
                cats = np.asarray(self.categories[v], dtype=np.float64)
                out[miss, v] = float(cats @ self.probabilities[v])
        return out

    def second_moments(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """Features are independent: ``E x_u x_v = E x_u E x_v`` off the
        diagonal, ``E x_v^2`` on it."""
        rows = slice(None) if rows is None else rows
        m = self.first_moments()[rows]
        out = np.einsum("ni,nj->nij", m, m)
        miss = self.missing[rows]
        for v in range(self.n_features):
            cats = np.asarray(self.categories[v], dtype=np.float64)
            second = float(cats**2 @ self.probabilities[v])
            idx = np.flatnonzero(miss[:, v])
            out[idx, v, v] = second
        return out

    def sample(
        self, n_draws: int, random_state: Any = None, *, by_row: bool = True
    ) -> SampleConditionals:
        """Each missing entry drawn from its feature's PMF, independently.

        See :meth:`BaseConditionals.sample`.
        """
        n_draws = check_n_draws(n_draws)
        variates = Variates(random_state, by_row, self.values, self.missing)
        out = np.repeat(self.values[None].astype(np.float64), n_draws, axis=0)
        rows = np.flatnonzero(self.missing.any(axis=1))
        for m in range(n_draws):
            u = variates.uniform(rows, m, self.n_features)
            for v in range(self.n_features):
                miss = self.missing[rows, v]
                if not miss.any():
                    continue
                cats = np.asarray(self.categories[v], dtype=np.float64)
                cdf = np.cumsum(np.asarray(self.probabilities[v], dtype=np.float64))
                pick = np.searchsorted(cdf, u[miss, v] * cdf[-1], side="right")
                out[m, rows[miss], v] = cats[np.minimum(pick, len(cats) - 1)]
        return SampleConditionals(samples=out, missing=self.missing)
