"""Gaussian conditionals of a factor-analytic density: diagonal plus low rank.

Under ``x = mu + W z + e``, ``z ~ N(0, I_q)``, ``e ~ N(0, Psi)`` (``Psi``
diagonal), the factors given the observed block ``O`` of a row are
``N(m, S)`` with ``S = (I + W_O^T Psi_O^-1 W_O)^-1`` (``q x q``, one per
missing pattern) and ``m = S W_O^T Psi_O^-1 (x_O - mu_O)``; the missing
block ``J`` is ``N(mu_J + W_J m, Psi_J + W_J S W_J^T)``: diagonal plus rank
``q`` (``docs/theory.rst``, "Factor-analytic density").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .._missing_patterns import group_patterns
from ._base import Variates, check_n_draws
from ._representations import GaussianConditionals, SampleConditionals

__all__ = ["FactorConditionals", "factor_posterior"]


def factor_posterior(
    observed: np.ndarray, loadings: np.ndarray, noise: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The factors' posterior precision and covariance root per mask.

    Parameters
    ----------
    observed : ndarray of shape (m, d), dtype bool
        Observed features of each row (or pattern).
    loadings : ndarray of shape (d, q)
    noise : ndarray of shape (d,), positive

    Returns
    -------
    chol : ndarray of shape (m, q, q)
        Lower Cholesky factors ``R`` of ``I + W_O^T Psi_O^-1 W_O``.
    root : ndarray of shape (m, q, q)
        ``R^-T`` (upper triangular), so that ``root root^T = S``, the
        posterior covariance of the factors.
    """
    observed = np.asarray(observed, dtype=np.float64)
    d, q = loadings.shape
    scaled = loadings / noise[:, None]
    outer = (loadings[:, :, None] * scaled[:, None, :]).reshape(d, q * q)
    precision = (observed @ outer).reshape(-1, q, q)
    precision += np.eye(q)
    precision = 0.5 * (precision + np.swapaxes(precision, 1, 2))
    chol = np.linalg.cholesky(precision)
    inv = np.linalg.inv(chol)
    return chol, np.ascontiguousarray(np.swapaxes(inv, 1, 2))


class _LowRankBlocks(Sequence[np.ndarray]):
    """``Psi_J + W_J S_p W_J^T`` per pattern, computed when read (nothing
    ``P x k x k`` is kept: the factor cells never read them)."""

    def __init__(
        self,
        patterns: np.ndarray,
        loadings: np.ndarray,
        noise: np.ndarray,
        roots: np.ndarray,
    ) -> None:
        self._patterns = patterns
        self._loadings = loadings
        self._noise = noise
        self._roots = roots

    def __len__(self) -> int:
        return len(self._patterns)

    def _block(self, p: int) -> np.ndarray:
        J = np.flatnonzero(self._patterns[p])
        A = self._loadings[J] @ self._roots[p]
        C = A @ A.T
        C[np.diag_indices_from(C)] += self._noise[J]
        return C

    def __getitem__(self, p: Any) -> Any:
        if isinstance(p, slice):
            return tuple(self._block(i) for i in range(len(self))[p])
        p = int(p)
        if p < 0:
            p += len(self)
        if not 0 <= p < len(self):
            raise IndexError("pattern index out of range")
        return self._block(p)

    def __iter__(self) -> Iterator[np.ndarray]:
        for p in range(len(self)):
            yield self._block(p)


@dataclass(frozen=True, eq=False)
class FactorConditionals(GaussianConditionals):
    """Gaussian conditionals whose covariance blocks are diagonal plus rank q.

    Row ``i`` (missing features ``J``, pattern ``p``) is distributed as
    ``N(means[i], A_i)``, ``A_i`` holding
    ``diag(noise[J]) + loadings[J] S_p loadings[J]^T`` on ``J`` and zeros
    elsewhere, with ``S_p = roots[p] roots[p]^T`` the posterior covariance of
    the factors given the observed entries. A :class:`GaussianConditionals`
    (every cell over Gaussian conditionals applies); ``covariances`` is a
    read-only sequence computing each block when read, and the RBF cells of
    the factor density work from the factors, in ``O(|J| q)`` per row.
    Build with :meth:`from_factors`.

    Parameters
    ----------
    means, missing, patterns, pattern_index
        As in :class:`GaussianConditionals`.
    covariances : sequence of ndarray, optional
        Ignored when given as ``()`` (the default): the blocks are computed
        from the factors.
    covariance : ndarray of shape (n_features, n_features) or None
        ``loadings loadings^T + diag(noise)``.
    loadings : ndarray of shape (n_features, n_factors)
    noise : ndarray of shape (n_features,)
        The diagonal of ``Psi``, positive.
    roots : ndarray of shape (n_patterns, n_factors, n_factors)
        Per pattern, ``R`` with ``R R^T = S_p``.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.conditionals import FactorConditionals
    >>> W = np.array([[1.0], [0.5], [0.2]])
    >>> c = FactorConditionals.from_factors(
    ...     np.array([[1.0, np.nan, np.nan]]), np.zeros(3), W, np.ones(3))
    >>> c.means.round(3).tolist()
    [[1.0, 0.25, 0.1]]
    >>> c.n_factors, c.covariances[0].shape
    (1, (2, 2))
    """

    covariances: tuple[np.ndarray, ...] = field(default=())
    loadings: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    noise: np.ndarray = field(default_factory=lambda: np.zeros(0))
    roots: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0)))

    def __post_init__(self) -> None:
        d = self.means.shape[-1] if self.means.ndim == 2 else -1
        if self.means.ndim != 2 or self.missing.shape != self.means.shape:
            raise ValueError(
                "FactorConditionals: means and missing must describe the same "
                f"rows; got shapes {self.means.shape} and {self.missing.shape}."
            )
        q = self.loadings.shape[1] if self.loadings.ndim == 2 else -1
        if (
            self.loadings.shape != (d, q)
            or q < 1
            or self.noise.shape != (d,)
            or self.roots.shape != (len(self.patterns), q, q)
        ):
            raise ValueError(
                "FactorConditionals: loadings must have shape (n_features, "
                "n_factors) with n_factors >= 1, noise (n_features,) and roots "
                "(n_patterns, n_factors, n_factors); got "
                f"{self.loadings.shape}, {self.noise.shape} and {self.roots.shape} "
                f"for {d} features and {len(self.patterns)} patterns."
            )
        if not np.all(self.noise > 0):
            raise ValueError(
                "FactorConditionals: the noise variances must be positive."
            )
        if len(self.covariances):
            # Explicit blocks (e.g. dataclasses.replace with transformed
            # covariances): they win, and the object behaves as plain
            # Gaussian conditionals (the factors no longer describe it).
            super().__post_init__()
            object.__setattr__(self, "_exact", False)
            return
        blocks = _LowRankBlocks(self.patterns, self.loadings, self.noise, self.roots)
        object.__setattr__(self, "covariances", cast(Any, blocks))
        object.__setattr__(self, "_exact", True)

    @property
    def factored(self) -> bool:
        """Whether the covariance blocks are those of the factors (False
        when explicit blocks were given, e.g. by ``dataclasses.replace``)."""
        return bool(getattr(self, "_exact", False))

    @property
    def n_factors(self) -> int:
        """The number of factors ``q``."""
        return int(self.loadings.shape[1])

    def _row_factors(self, rows: Any) -> np.ndarray:
        """``(n_rows, d, q)``: ``W S^(1/2)`` on the missing features, 0 elsewhere."""
        roots = self.roots[self.pattern_index[rows]]
        A = np.einsum("dk,nkl->ndl", self.loadings, roots)
        A *= self.missing[rows][:, :, None]
        return A

    def second_moments(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """``E[X_i X_i^T] = mu_i mu_i^T + A_i`` (only the rows asked for)."""
        if not self.factored:
            return super().second_moments(rows)
        rows = slice(None) if rows is None else rows
        mu = self.means[rows]
        A = self._row_factors(rows)
        out = np.einsum("ndl,nel->nde", A, A)
        noise = self.missing[rows] * self.noise
        idx = np.arange(self.n_features)
        out[:, idx, idx] += noise
        out += np.einsum("ni,nj->nij", mu, mu)
        return out

    def implied_covariance(self) -> np.ndarray:
        """The implied covariance (see
        :meth:`~missingkernels.conditionals.BaseConditionals.implied_covariance`),
        from the factors: ``O(n d^2 q)``, no ``d x d`` matrix per pattern."""
        if not self.factored:
            return super().implied_covariance()
        n, d = self.n_samples, self.n_features
        centred = self.means - self.means.mean(axis=0)
        total = centred.T @ centred
        total[np.diag_indices(d)] += self.missing.sum(axis=0) * self.noise
        block = max(1, (1 << 22) // max(1, d * self.n_factors))
        for s in range(0, n, block):
            A = self._row_factors(slice(s, s + block))
            flat = np.swapaxes(A, 0, 1).reshape(d, -1)
            total += flat @ flat.T
        return total / n

    def sample(
        self, n_draws: int, random_state: Any = None, *, by_row: bool = True
    ) -> SampleConditionals:
        """Draw completions ``mu_J + W_J R_p z + Psi_J^(1/2) e``.

        ``z`` (``q`` normals) and ``e`` (``|J|`` normals) are the first
        ``q + |J|`` normals of the row's draw: a row keeps its draws in any
        batch (see
        :meth:`~missingkernels.conditionals.BaseConditionals.sample`).
        """
        if not self.factored:
            return super().sample(n_draws, random_state, by_row=by_row)
        n_draws = check_n_draws(n_draws)
        variates = Variates(random_state, by_row, self.means, self.missing)
        out = np.repeat(self.means[None], n_draws, axis=0)
        q = self.n_factors
        sd = np.sqrt(self.noise)
        for p, pattern in enumerate(self.patterns):
            cols = np.flatnonzero(pattern)
            rows = np.flatnonzero(self.pattern_index == p)
            if cols.size == 0 or rows.size == 0:
                continue
            A = self.loadings[cols] @ self.roots[p]  # (k, q)
            for m in range(n_draws):
                z = variates.normal(rows, m, q + cols.size)
                out[m][np.ix_(rows, cols)] += z[:, :q] @ A.T + z[:, q:] * sd[cols]
        return SampleConditionals(samples=out, missing=self.missing)

    def take(self, rows: np.ndarray) -> GaussianConditionals:
        """Return the conditionals of a subset of rows (patterns are re-grouped)."""
        if not self.factored:
            return super().take(rows)  # type: ignore[return-value]
        rows = np.asarray(rows)
        patterns, index = group_patterns(self.missing[rows])
        old = self.pattern_index[rows]
        first = np.zeros(len(patterns), dtype=np.intp)
        for p in range(len(patterns)):
            first[p] = np.flatnonzero(index == p)[0]
        return FactorConditionals(
            means=self.means[rows],
            missing=self.missing[rows],
            patterns=patterns,
            pattern_index=index,
            covariance=self.covariance,
            loadings=self.loadings,
            noise=self.noise,
            roots=self.roots[old[first]],
        )

    @classmethod
    def from_factors(
        cls,
        X: np.ndarray,
        mean: np.ndarray,
        loadings: np.ndarray,
        noise: np.ndarray,
    ) -> FactorConditionals:
        """Condition ``N(mean, W W^T + diag(noise))`` on each row's observed
        entries, through the factors (``O(n d q + P (d q^2 + q^3))`` for ``P``
        patterns).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Rows with NaN where missing.
        mean : ndarray of shape (n_features,)
        loadings : ndarray of shape (n_features, n_factors)
            ``W``.
        noise : ndarray of shape (n_features,)
            The diagonal of ``Psi``, positive.

        Returns
        -------
        conditionals : FactorConditionals

        Examples
        --------
        >>> import numpy as np
        >>> from missingkernels.conditionals import (
        ...     FactorConditionals, GaussianConditionals)
        >>> W, psi = np.array([[1.0], [0.5]]), np.array([0.5, 0.2])
        >>> X = np.array([[2.0, np.nan]])
        >>> c = FactorConditionals.from_factors(X, np.zeros(2), W, psi)
        >>> g = GaussianConditionals.from_moments(
        ...     X, np.zeros(2), W @ W.T + np.diag(psi))
        >>> bool(np.allclose(c.means, g.means)), bool(
        ...     np.allclose(c.covariances[0], g.covariances[0]))
        (True, True)
        """
        X = np.asarray(X, dtype=np.float64)
        mean = np.asarray(mean, dtype=np.float64)
        loadings = np.asarray(loadings, dtype=np.float64)
        noise = np.asarray(noise, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be 2D, got shape {X.shape}.")
        d = X.shape[1]
        if loadings.ndim != 2 or loadings.shape[0] != d or loadings.shape[1] < 1:
            raise ValueError(
                f"loadings must have shape ({d}, n_factors) with n_factors >= 1 "
                f"for X with {d} features; got {loadings.shape}."
            )
        if mean.shape != (d,) or noise.shape != (d,):
            raise ValueError(
                f"mean and noise must have shape ({d},); got {mean.shape} and "
                f"{noise.shape}."
            )
        if not (np.all(np.isfinite(noise)) and np.all(noise > 0)):
            raise ValueError(
                "noise (the diagonal of Psi) must be finite and positive; a "
                "zero noise variance makes the conditionals degenerate."
            )
        missing = np.isnan(X)
        patterns, index = group_patterns(missing)
        _, roots = factor_posterior(~patterns, loadings, noise)
        R = np.where(missing, 0.0, X - mean) / noise
        T = R @ loadings  # W_O^T Psi_O^-1 (x_O - mu_O)
        # m = S T = R_p R_p^T T, R_p = roots[p]
        root_rows = roots[index]
        m = np.einsum("nkl,nk->nl", root_rows, T)
        m = np.einsum("nkl,nl->nk", root_rows, m)
        means = np.where(missing, mean + m @ loadings.T, X)
        return cls(
            means=means,
            missing=missing,
            patterns=patterns,
            pattern_index=index,
            covariance=loadings @ loadings.T + np.diag(noise),
            loadings=loadings,
            noise=noise,
            roots=roots,
        )
