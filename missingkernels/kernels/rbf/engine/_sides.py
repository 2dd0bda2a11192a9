"""The arguments of an RBF Gram in the layout of the compiled loops.

:class:`Metric` (Euclidean or Mahalanobis coordinates), :class:`Packed`
(rows grouped by missing pattern) and :class:`Side` (one argument of a
Gram: rows, per-pattern covariance factors, offsets and weights, as the
:class:`._layouts.SideArrays` the loops take).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import linalg

from ._layouts import SideArrays, SortedRows
from ._threads import LOCK


@dataclass(frozen=True)
class Metric:
    """Coordinates in which the RBF is taken.

    ``precision`` is None for the Euclidean metric, ``S^-1`` for the
    Mahalanobis one. ``center`` is subtracted from every row first (the kernel
    is translation invariant; centring keeps rounding errors relative to the
    spread of the data rather than its offset).
    """

    center: np.ndarray
    precision: np.ndarray | None = None
    whitening: np.ndarray | None = None  # W^T, with W^T W = precision

    @classmethod
    def euclidean(cls, center: np.ndarray) -> Metric:
        return cls(center=np.asarray(center, dtype=np.float64))

    @classmethod
    def mahalanobis_from(cls, center: np.ndarray, covariance: np.ndarray) -> Metric:
        """The metric of ``S^-1``; ValueError unless ``S`` is positive definite.

        The whitening is ``W = L^-1`` with ``S = L L^T`` (Cholesky of ``S``,
        one triangular inverse), and the precision ``W^T W``: the inverse of
        ``S`` is never formed by elimination on ``S^-1``, whose rounding
        error grows with the square of the condition number of ``L``, and the
        precision is positive semi-definite by construction.
        """
        S = np.asarray(covariance, dtype=np.float64)
        try:
            L = np.linalg.cholesky(S) if np.all(np.isfinite(S)) else None
        except np.linalg.LinAlgError:
            L = None
        if L is None or not np.all(np.diagonal(L) > 0.0):
            raise ValueError(
                "metric='mahalanobis' needs a positive definite covariance, but "
                "the density's covariance is singular or not finite. Use "
                "metric='euclidean', drop constant or duplicated features, or "
                "regularise the density (e.g. a ridge)."
            )
        W = linalg.solve_triangular(L, np.eye(len(S)), lower=True)
        if not np.all(np.isfinite(W)):
            raise ValueError(
                "metric='mahalanobis': the density's covariance is too badly "
                "conditioned to invert. Use metric='euclidean' or regularise "
                "the density."
            )
        G = W.T @ W
        G = 0.5 * (G + G.T)
        # Rows y = x W^T.
        return cls(np.asarray(center, dtype=np.float64), G, np.ascontiguousarray(W.T))

    @property
    def mahalanobis(self) -> bool:
        return self.precision is not None

    def coordinates(self, means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(x, x)`` (Euclidean) or the whitened ``(W x, G x)`` (Mahalanobis)."""
        x = np.ascontiguousarray(means - self.center, dtype=np.float64)
        if self.precision is None or self.whitening is None:
            return x, x
        y = x @ self.whitening
        # G x = W^T (W x): from the whitened rows, as every other product
        # with G in the loops' inputs (see Side.build).
        return np.ascontiguousarray(y), np.ascontiguousarray(y @ self.whitening.T)

    def whitened_factors(self, J: np.ndarray, F: np.ndarray) -> np.ndarray:
        """``W[:, J] F`` for a stack of patterns (``J``: (P, k) missing
        features, ``F``: (P, k, k) factors of their covariances): the
        whitened covariances are ``Fw Fw^T``."""
        assert self.whitening is not None
        Wt = self.whitening  # W^T: W[:, J] = Wt[J].T
        return np.swapaxes(Wt[J], 1, 2) @ F

    @functools.cached_property
    def largest_precision(self) -> float:
        """The largest eigenvalue of the precision (1 for the Euclidean metric)."""
        if self.whitening is None:
            return 1.0
        return float(np.linalg.norm(self.whitening, 2) ** 2)

    def G(self) -> np.ndarray:
        if self.precision is None:
            return np.zeros((1, 1))
        return np.ascontiguousarray(self.precision, dtype=np.float64)


@dataclass(frozen=True)
class Packed:
    """Rows grouped by missing pattern, in the layout of the compiled loops.

    Patterns are numbered by their first row, so that with nearly all-distinct
    patterns (MCAR) the pattern order is the row order and the output is
    written sequentially.
    """

    order: np.ndarray  # (n,) int64, rows sorted by pattern
    start: np.ndarray  # (P + 1,) int64: rows of p are order[start[p]:start[p + 1]]
    mask: np.ndarray  # (P, d) bool, missing features of each pattern
    source: np.ndarray  # (P,) int64, index of each pattern in the input patterns

    @classmethod
    def build(cls, patterns: np.ndarray, pattern_index: np.ndarray) -> Packed:
        patterns = np.asarray(patterns, dtype=bool)
        pattern_index = np.asarray(pattern_index, dtype=np.int64).reshape(-1)
        P = len(patterns)
        first = np.full(P, len(pattern_index), dtype=np.int64)
        np.minimum.at(first, pattern_index, np.arange(len(pattern_index)))
        source = np.argsort(first, kind="stable").astype(np.int64)
        relabel = np.empty(P, dtype=np.int64)
        relabel[source] = np.arange(P)
        index = relabel[pattern_index]
        order = np.argsort(index, kind="stable").astype(np.int64)
        counts = np.bincount(index, minlength=P)
        start = np.zeros(P + 1, dtype=np.int64)
        np.cumsum(counts, out=start[1:])
        return cls(order, start, np.ascontiguousarray(patterns[source]), source)

    @classmethod
    def complete(cls, n: int, d: int) -> Packed:
        return cls.build(np.zeros((1, d), bool), np.zeros(n, np.int64))

    @property
    def n_patterns(self) -> int:
        return len(self.mask)

    def rank(self) -> np.ndarray:
        rank = np.empty_like(self.order)
        rank[self.order] = np.arange(len(self.order))
        return rank

    def pattern_of_row(self) -> np.ndarray:
        """(n,) int64, the pattern of each row."""
        pattern = np.empty(len(self.order), np.int64)
        pattern[self.order] = np.repeat(np.arange(self.n_patterns), np.diff(self.start))
        return pattern


def raise_invalid(codes: Sequence[object]) -> None:
    for code in codes:
        if code:
            raise ValueError(
                "A conditional covariance of the density is not positive "
                f"semi-definite (pattern {int(code) - 1}), so the expected RBF "  # type: ignore[call-overload]
                "is undefined. Refit the density (e.g. with a ridge) or check "
                "the covariances it returns."
            )


def _psd_factors(covs: np.ndarray) -> np.ndarray:
    """``F`` with ``F F^T = C`` for a stack of PSD matrices (eigh, clipped);
    ValueError when one is not positive semi-definite."""
    from ...._numerics import psd_factor

    return psd_factor(covs, check=True, what="the expected RBF")


def _factors_of(covs: np.ndarray) -> np.ndarray:
    """``F`` with ``F F^T = C`` for a stack of covariances: Cholesky (any such
    ``F`` serves the loops), or the checked eigh of :func:`_psd_factors` when
    a block is not numerically positive definite."""
    try:
        return np.linalg.cholesky(covs)
    except np.linalg.LinAlgError:
        return _psd_factors(covs)


def sorted_rows(side: Side, pattern: np.ndarray, kmax: int) -> SortedRows:
    """:class:`SortedRows` of a side (``pattern``: of each row; ``kmax`` at
    least the largest number of missing features of either side), kept in
    ``side.memo``."""
    return side.memoized(
        ("sorted_rows", kmax), lambda: _sorted_rows(side, pattern, kmax)
    )


def _sorted_rows(side: Side, pattern: np.ndarray, kmax: int) -> SortedRows:
    counts = side.arrays.n_missing[pattern]
    order = np.argsort(counts, kind="stable").astype(np.int64)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    start = np.searchsorted(counts[order], np.arange(kmax + 2)).astype(np.int64)
    c = np.ascontiguousarray
    return SortedRows(
        order, rank, start, c(side.arrays.x[order].T), c(side.arrays.z[order].T)
    )


@dataclass(frozen=True)
class Side:
    """One argument of a Gram, in the layout of :mod:`._compiled`.

    Build with :meth:`build`; ``arrays`` is what the compiled loops take.
    ``memo`` keeps the per-pattern factors of :func:`._gram.row_factors` by gamma
    (and, Euclidean, the PSD factors of the covariances, computed once by
    :meth:`build`); it is shared with :meth:`with_offsets` (the factors do
    not depend on the offsets), so a self-similarity and the Gram that
    follows factor once.
    """

    arrays: SideArrays
    packed: Packed
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n(self) -> int:
        return int(self.arrays.x.shape[0])

    def memoized(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        """``memo[key]``, computed on first use. Of the entries of one kind
        (``key[0]``: factors at one gamma, ...) the last two are kept, so that
        a search over gamma on a kept side does not pile up factors."""
        with LOCK:
            if key in self.memo:
                return self.memo[key]
        value = compute()
        with LOCK:
            same_kind = [k for k in self.memo if k[0] == key[0]]
            for old in same_kind[: max(0, len(same_kind) - 1)]:
                del self.memo[old]
            self.memo[key] = value
        return value

    @property
    def weight(self) -> np.ndarray:
        return self.arrays.weight

    def with_offsets(self, off: np.ndarray) -> Side:
        """The same rows with other offsets (added inside the exponent)."""
        off = np.ascontiguousarray(off, dtype=np.float64)
        return Side(self.arrays._replace(off=off), self.packed, self.memo)

    @classmethod
    def build(
        cls,
        means: np.ndarray,
        packed: Packed,
        covariances: Sequence[np.ndarray],
        metric: Metric,
        off: np.ndarray | None = None,
        weight: np.ndarray | None = None,
    ) -> Side:
        """Rows ``means`` with per-pattern covariances (in missing-feature order).

        ``covariances`` is indexed like the input patterns of ``packed``.
        """
        covariances = [covariances[int(i)] for i in packed.source]
        n = means.shape[0]
        x, z = metric.coordinates(means)
        mask = packed.mask
        P = packed.n_patterns
        kk = mask.sum(axis=1).astype(np.int64)
        kmax = int(kk.max(initial=0))
        off = np.zeros(n) if off is None else np.ascontiguousarray(off, np.float64)
        weight = (
            np.ones(n) if weight is None else np.ascontiguousarray(weight, np.float64)
        )
        size = max(kmax, 1)
        J_idx = np.zeros((P, size), np.int64)
        for k in np.unique(kk):
            if k:
                pats = np.flatnonzero(kk == k)
                J_idx[pats, :k] = np.nonzero(mask[pats])[1].reshape(len(pats), k)
        if not metric.mahalanobis:
            # Compact blocks, in the order of the missing features.
            cov = np.zeros((P, size, size))
            for p in range(P):
                k = kk[p]
                if k:
                    cov[p, :k, :k] = covariances[p]
            # The PSD factors, once: they reject indefinite covariances here
            # and give _row_factors its factors at every gamma.
            psd = np.zeros((P, size, size))
            for k in np.unique(kk):
                if k:
                    pats = np.flatnonzero(kk == k)
                    psd[pats, :k, :k] = _factors_of(cov[pats, :k, :k])
            F = np.zeros((P, 1, 1))
            A = np.zeros((P, 1, 1))
            GF = np.zeros((P, 1, 1))
            own = np.zeros((n, 1))
        else:
            cov = np.zeros((1, 1, 1))
            # Stored transposed (F^T): the compiled loops run along rows. The
            # fields that only the pattern-pair loop reads come later
            # (pattern_pair_arrays).
            F = np.zeros((P, size, size))
            A = np.zeros((P, size, size))
            GF = np.zeros((P, 1, 1))
            own = np.zeros((n, 1))
            for k in np.unique(kk):
                if k == 0:
                    continue
                pats = np.flatnonzero(kk == k)
                Jk = J_idx[pats, :k]
                Fk = _factors_of(np.stack([covariances[p] for p in pats]))
                F[pats, :k, :k] = np.swapaxes(Fk, 1, 2)
                # F^T G[J, J] F = Fw^T Fw (Fw = W[:, J] F): a Gram of the
                # whitened factor, PSD whatever the conditioning of S (the
                # triple product with G loses the square of its condition).
                for s0 in range(0, len(pats), _CHUNK):
                    sl = slice(s0, s0 + _CHUNK)
                    Fw = metric.whitened_factors(Jk[sl], Fk[sl])
                    A[pats[sl], :k, :k] = np.swapaxes(Fw, 1, 2) @ Fw
        c = np.ascontiguousarray
        arrays = SideArrays(
            x=c(x), z=c(z), order=c(packed.order), start=c(packed.start),
            mask=c(packed.mask), cov=c(cov), missing=c(J_idx), n_missing=c(kk),
            factor_t=c(F), gfactor_t=c(GF), inner=c(A), own=c(own), off=c(off),
            weight=c(weight),
        )  # fmt: skip
        side = cls(arrays, packed)
        if not metric.mahalanobis:
            side.memo[("psd_factors",)] = psd
        return side


def pattern_pair_arrays(side: Side, metric: Metric) -> SideArrays:
    """The side's arrays with the fields that only the Mahalanobis
    pattern-pair loops (pairs and aligned rows) read, ``gfactor_t`` and
    ``own``, computed on first use and kept in ``side.memo``: the row-pair
    loops, for rows of about one pattern each, never need them."""
    if not metric.mahalanobis:
        return side.arrays
    fields = side.memoized(("pattern_fields",), lambda: _pattern_fields(side, metric))
    return side.arrays._replace(gfactor_t=fields[0], own=fields[1])


def _pattern_fields(side: Side, metric: Metric) -> tuple[np.ndarray, np.ndarray]:
    """``F^T G[J, :] = Fw^T W`` and ``F^T z[J] = Fw^T (W x)`` from the
    whitened factor ``Fw = W[:, J] F`` (as ``inner``, see :meth:`Side.build`)."""
    arrays, packed = side.arrays, side.packed
    P, n, d = packed.n_patterns, side.n, arrays.x.shape[1]
    kk = arrays.n_missing
    size = arrays.missing.shape[1]
    assert metric.whitening is not None
    W = metric.whitening.T
    GF = np.zeros((P, size, d))  # (G[:, J] F)^T = F^T G[J, :]
    own = np.zeros((n, size))  # F^T z[J] of each row
    pattern_of_row = packed.pattern_of_row()
    for k in np.unique(kk):
        if k == 0:
            continue
        pats = np.flatnonzero(kk == k)
        Jk = arrays.missing[pats, :k]
        FwT = np.empty((len(pats), k, d))
        for s0 in range(0, len(pats), _CHUNK):
            sl = slice(s0, s0 + _CHUNK)
            Fk = np.swapaxes(arrays.factor_t[pats[sl], :k, :k], 1, 2)
            FwT[sl] = np.swapaxes(metric.whitened_factors(Jk[sl], Fk), 1, 2)
        GF[pats, :k, :] = FwT @ W
        local = np.full(P, -1)
        local[pats] = np.arange(len(pats))
        rows = np.flatnonzero(local[pattern_of_row] >= 0)
        lp = local[pattern_of_row[rows]]
        own[rows, :k] = np.einsum("nsr,nr->ns", FwT[lp], arrays.x[rows])
    return np.ascontiguousarray(GF), np.ascontiguousarray(own)


# Patterns per batch of whitened factors (bounds their temporary memory).
_CHUNK = 256
