"""The engine's Gram computations: which compiled loop computes a pair of sides.

Expectations of the RBF kernel over the conditional representations.

Every function returns or accumulates ``exp(log E k + off_a[i] + off_b[j])``:
the offsets let the genRBF normalisation (and the variance) be applied inside
the exponent, so nothing underflows to ``0 / 0`` at large ``gamma`` or with
many missing features. The work runs on threads over disjoint output rows
(the compiled loops release the GIL); ``MISSINGKERNELS_NUM_THREADS`` caps
their number.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ....conditionals import (
    GaussianConditionals,
    MixtureConditionals,
    SampleConditionals,
)
from ._layouts import MahalanobisFactors, RowFactors, SideArrays
from ._numba_setup import lazy_loops
from ._sides import (
    Metric,
    Packed,
    Side,
    pattern_pair_arrays,
    raise_invalid,
    sorted_rows,
)
from ._threads import (
    LOCK,
    deal,
    n_threads,
    run,
)


def _loops() -> Any:
    """The compiled loops (:mod:`._compiled`): numba loads on the first Gram,
    not when the package is imported."""
    return lazy_loops(f"{__package__}._compiled", "the RBF kernels' loops")


# The pattern-pair loop shares each factor between all the row pairs of two
# patterns; the row-pair loop factors a smaller matrix per row pair. The
# latter wins unless pattern pairs hold many row pairs on average (measured on
# 2000 MCAR rows, one thread: rows 3x faster at d=14, 10% missing, 29 row
# pairs per pattern pair; patterns 1.5x faster at d=8, 50% missing, 61 pairs).
_ROWS_PER_PATTERN_PAIR = 32


# The Schur row loop (rbf_rows) inverts the conditional covariances and, in
# the Mahalanobis metric, subtracts the big row's share from the metric's
# precision: its relative error grows as eps * (kappa + 10 * 2 gamma c lam *
# sqrt(kappa)) (measured on conditionals of covariances with condition
# numbers up to 1e12: kappa the largest condition number of a conditional
# covariance, c the largest variance, lam the largest eigenvalue of the
# precision; the second term only in the Mahalanobis metric, where lam = 1
# otherwise). Above this bound on that estimate the pattern-pair loop
# (Mahalanobis) or the shared-feature row loop (Euclidean), neither of which
# inverts C, computes the Gram.
_SCHUR_MAX_ERROR = 1e-10


def _use_row_pairs(a: Side, b: Side) -> bool:
    n_pairs = a.n * b.n
    n_pattern_pairs = a.packed.n_patterns * b.packed.n_patterns
    return n_pairs < _ROWS_PER_PATTERN_PAIR * n_pattern_pairs


# The row-pair loops subtract quadratic forms whose relative rounding error
# grows as eps * gamma * C (about 5e-17 gamma C measured); above this bound
# the pattern-pair loop, exact at any gamma, computes the Gram.
_ROW_PAIRS_MAX_GAMMA_C = 1e6


def _covariance_scale(side: Side, metric: Metric) -> float:
    """The largest trace of a conditional covariance of the side (whitened in
    the Mahalanobis metric): a bound on its largest eigenvalue."""
    blocks = side.arrays.inner if metric.mahalanobis else side.arrays.cov
    return float(
        side.memoized(
            ("covariance_scale", metric.mahalanobis),
            lambda: np.trace(blocks, axis1=1, axis2=2).max(initial=0.0),
        )
    )


# In the Euclidean metric the Schur loop (rbf_rows, with the identity as the
# metric's precision) is used as in the Mahalanobis metric: measured on 2000
# MCAR rows (one thread), as fast as the shared-feature loop (rbf_tiles) at 10%
# missing entries (within 15% either way) and faster from 30% (1.4x to 1.6x at
# d = 14 to 64; measured before later gains of the Schur loop); the
# shared-feature loop, which needs no inverse of C, serves covariances too
# badly conditioned to invert.
_EUCLIDEAN_SCHUR = True


def _row_loop(a: Side, b: Side, gamma: float, metric: Metric) -> str | None:
    """The row-pair loop that computes the pairs of a and b: ``"tiles"``
    (Euclidean, shared missing features), ``"schur"`` (Woodbury on the
    smaller missing set), or None for the pattern-pair loop: few rows per
    pattern, ``gamma C`` within the row loops' precision, and invertible
    covariances for the Schur loop (needed in the Mahalanobis metric)."""
    if not _use_row_pairs(a, b):
        return None
    scale = max(_covariance_scale(a, metric), _covariance_scale(b, metric))
    if not gamma * scale <= _ROW_PAIRS_MAX_GAMMA_C:
        return None
    if not metric.mahalanobis and not _EUCLIDEAN_SCHUR:
        return "tiles"
    with LOCK:
        fa = row_factors(a, gamma, metric, schur=True)
        fb = fa if b is a else row_factors(b, gamma, metric, schur=True)
    if _schur_error(a, b, fa, fb, gamma, metric) <= _SCHUR_MAX_ERROR:
        return "schur"
    return None if metric.mahalanobis else "tiles"


def _schur_error(
    a: Side, b: Side, fa: RowFactors, fb: RowFactors, gamma: float, metric: Metric
) -> float:
    """The estimate of the Schur row loop's relative error of
    :data:`_SCHUR_MAX_ERROR` (inf when a conditional covariance is singular)."""
    ratio = min(fa.pivot_ratio, fb.pivot_ratio)
    if not ratio > 0.0:
        return math.inf
    kappa = 1.0 / ratio
    est = kappa
    if metric.mahalanobis:
        c = max(_variance_scale(a), _variance_scale(b))
        est += 10.0 * 2.0 * gamma * c * metric.largest_precision * math.sqrt(kappa)
    return float(np.finfo(np.float64).eps * est)


def _variance_scale(side: Side) -> float:
    """The largest trace of a conditional covariance of a Mahalanobis side
    (``||F||_F^2``, unwhitened)."""
    FT = side.arrays.factor_t
    return float(
        side.memoized(
            ("variance_scale",),
            lambda: np.einsum("pij,pij->p", FT, FT).max(initial=0.0),
        )
    )


def pairs(
    a: Side,
    b: Side,
    gamma: float,
    metric: Metric,
    *,
    symmetric: bool,
    accumulate: bool,
    out: np.ndarray,
) -> None:
    """Fill (or accumulate into) ``out`` with the compiled pattern-pair loop,
    or the row-pair loop when patterns hold about one row each."""
    if a.n == 0 or b.n == 0:
        return
    loop = _row_loop(a, b, gamma, metric)
    if loop is not None:
        _row_pairs(
            a, b, gamma, metric, symmetric and not accumulate, accumulate, out,
            schur=loop == "schur",
        )  # fmt: skip
        return
    P = a.packed.n_patterns
    T = max(1, min(n_threads(), P))
    p_lists = [np.arange(t, P, T, dtype=np.int64) for t in range(T)]

    def task(p_list: np.ndarray, factors: MahalanobisFactors) -> Callable[[], object]:
        return lambda: _loops().rbf_pairs(
            p_list, arrays_a, arrays_b, factors, float(gamma), metric.mahalanobis,
            bool(symmetric), bool(accumulate), out,
        )  # fmt: skip

    with LOCK:
        arrays_a = pattern_pair_arrays(a, metric)
        arrays_b = arrays_a if b is a else pattern_pair_arrays(b, metric)
        factors = _factors(arrays_a, gamma, metric)
        raise_invalid(run([task(pl, factors) for pl in p_lists]))
        if symmetric and not accumulate:
            rank = a.packed.rank()
            size = 64
            n_blocks = -(-a.n // size)
            T = max(1, min(n_threads(), n_blocks))
            blocks = [np.arange(t, n_blocks, T, dtype=np.int64) for t in range(T)]

            def mirror(bl: np.ndarray) -> Callable[[], object]:
                return lambda: _loops().mirror_by_rank(out, rank, bl, size)

            run([mirror(bl) for bl in blocks])


def _row_pairs(
    a: Side,
    b: Side,
    gamma: float,
    metric: Metric,
    symmetric: bool,
    accumulate: bool,
    out: np.ndarray,
    diagonal: bool = False,
    schur: bool = False,
) -> None:
    """The row-pair loops on threads: :func:`._compiled.rbf_tiles`
    (Euclidean, shared missing features) or, with ``schur`` (always in the
    Mahalanobis metric), :func:`._compiled.rbf_rows`."""
    schur = schur or metric.mahalanobis
    with LOCK:
        fa = row_factors(a, gamma, metric, schur=schur)
        # (a is b for self-similarities: one set of factors)
        fb = fa if symmetric or b is a else row_factors(b, gamma, metric, schur=schur)
        if not schur:
            size = _loops().TILE
            n_tiles = -(-a.n // size)
            T = max(1, min(n_threads(), n_tiles))
            tile_lists = deal(np.arange(n_tiles, dtype=np.int64), T, symmetric)
            xaT = np.ascontiguousarray(a.arrays.x.T)
            xbT = xaT if symmetric or b is a else np.ascontiguousarray(b.arrays.x.T)

            def tile_task(tiles: np.ndarray) -> Callable[[], object]:
                return lambda: _loops().rbf_tiles(
                    tiles, a.arrays, b.arrays, xaT, xbT, fa, fb, float(gamma),
                    bool(symmetric), bool(accumulate), bool(diagonal), out,
                )  # fmt: skip

            raise_invalid(run([tile_task(tl) for tl in tile_lists]))
            return
        d = a.arrays.x.shape[1]
        lam = np.zeros((d + 1, d))  # the padding lanes read the zero row
        lam[:d] = metric.G() if metric.mahalanobis else np.eye(d)
        kmax = int(
            max(a.arrays.n_missing.max(initial=0), b.arrays.n_missing.max(initial=0))
        )
        ka = sorted_rows(a, fa.pattern, kmax)
        kb = ka if b is a else sorted_rows(b, fb.pattern, kmax)
        width = _lanes(d)
        starts_a = np.arange(0, a.n, width, dtype=np.int64)
        starts_b = np.arange(0, b.n, width, dtype=np.int64)
        # The work of a tile grows along the sorted order (more partners,
        # larger factorisations): pairs from both ends.
        T = max(1, min(n_threads(), len(starts_a) + len(starts_b)))
        lists_a = deal(starts_a, T, growing=not diagonal)
        lists_b = deal(starts_b, T, growing=not diagonal)

        def task(t: int) -> Callable[[], object]:
            return lambda: _loops().rbf_rows(
                lists_a[t], lists_b[t], a.arrays, b.arrays, ka, kb, fa, fb, lam,
                float(gamma), bool(symmetric), bool(accumulate), bool(diagonal),
                width, out,
            )  # fmt: skip

        raise_invalid(run([task(t) for t in range(T)]))


# Bytes of K_p per tile of the Schur row loop (per thread): fewer lanes
# (down to 8, one vector) when d is large.
_LANE_TILE_BYTES = 4 << 20


def _lanes(d: int) -> int:
    """Lanes (big rows per tile) of the Schur row loop at ``d`` features."""
    per_lane = 8 * d * (d + 1) // 2
    return int(min(_loops().LANES, max(8, _LANE_TILE_BYTES // max(per_lane, 1))))


def row_factors(
    side: Side, gamma: float, metric: Metric, *, schur: bool = False
) -> RowFactors:
    """The per-pattern factors of :class:`RowFactors` for one side (kept in
    ``side.memo``): those of the Schur loop in the Mahalanobis metric or with
    ``schur``, else those of the Euclidean shared-feature loop."""
    schur = schur or metric.mahalanobis
    key = ("row_factors", float(gamma), metric.mahalanobis, schur)
    return side.memoized(key, lambda: _row_factors(side, gamma, metric, schur))


def _row_factors(side: Side, gamma: float, metric: Metric, schur: bool) -> RowFactors:
    arrays, packed = side.arrays, side.packed
    P = packed.n_patterns
    mask = packed.mask
    pattern = packed.pattern_of_row()
    position = np.where(mask, np.cumsum(mask, axis=1) - 1, -1).astype(np.int64)
    kk = arrays.n_missing
    size = arrays.missing.shape[1]
    g2 = 2.0 * float(gamma)
    none = np.zeros((1, 1, 1))
    if schur:
        ldk = np.zeros(P)
        gmat = np.zeros((P, size, size))
        groot = np.zeros((P, size, size))
        cstart = np.zeros(P, np.int64)
        np.cumsum((kk * (kk + 1) // 2)[:-1], out=cstart[1:])
        cinv = np.zeros(int((kk * (kk + 1) // 2).sum()))
        logdet_c = np.zeros(P)
        lam = metric.G() if metric.mahalanobis else np.eye(arrays.x.shape[1])
        if metric.mahalanobis:
            FT, inner = arrays.factor_t, arrays.inner
        else:  # Lam = I: from the PSD factors kept at build
            F = side.memo[("psd_factors",)]
            FT = np.ascontiguousarray(np.swapaxes(F, 1, 2))
            inner = FT @ F
        code, ratio = _loops().schur_row_factors(
            FT, inner, arrays.missing, kk, lam, float(gamma),
            cstart, ldk, gmat, groot, cinv, logdet_c,
        )  # fmt: skip
        raise_invalid([code])
        return RowFactors(
            pattern, position, ldk, gmat, cinv,
            cstart, logdet_c, float(ratio), none, groot, none,
        )  # fmt: skip
    logdet = np.zeros(P)
    dmat = np.zeros((P, size, size))
    root = np.zeros((P, size, size))
    pinv = np.zeros((P, size, size))
    for k in np.unique(kk):
        if k == 0:
            continue
        pats = np.flatnonzero(kk == k)
        eye = np.eye(k)
        C = arrays.cov[pats, :k, :k]
        V = np.sqrt(g2) * side.memo[("psd_factors",)][pats, :k, :k]
        Vt = np.swapaxes(V, 1, 2)
        K = eye + Vt @ V
        try:
            L = np.linalg.cholesky(eye + g2 * C)
        except np.linalg.LinAlgError:
            raise_invalid([1 + int(pats[0])])
        logdet[pats] = 2.0 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
        tri = np.linalg.inv(L)
        Pi = np.swapaxes(tri, 1, 2) @ tri
        pinv[pats, :k, :k] = 0.5 * (Pi + np.swapaxes(Pi, 1, 2))
        # I - P^-1 = V K^-1 V^T = G^T G, G = L_K^-1 V^T (Woodbury): accurate
        # when gamma C is small; R from G = QR is its triangular root.
        G = np.linalg.solve(np.linalg.cholesky(K), Vt)
        D = np.swapaxes(G, 1, 2) @ G
        dmat[pats, :k, :k] = 0.5 * (D + np.swapaxes(D, 1, 2))
        root[pats, :k, :k] = np.linalg.qr(G, mode="r")
    return RowFactors(
        pattern,
        position,
        logdet,
        none,
        np.zeros(1),
        np.zeros(1, np.int64),
        np.zeros(1),
        1.0,
        dmat,
        root,
        pinv,
    )


def _factors(a: SideArrays, gamma: float, metric: Metric) -> MahalanobisFactors:
    """Per-pattern Mahalanobis factors of a side (its :func:`pattern_pair_arrays`),
    shared by the threads."""
    if not metric.mahalanobis:
        return MahalanobisFactors(
            np.zeros(1), np.zeros((1, 1, 1)), np.zeros((1, 1, 1)), np.zeros((1, 1))
        )
    logdet, w_t, v_t, own_w, code = _loops().mahalanobis_factors(a, float(gamma))
    raise_invalid([code])
    return MahalanobisFactors(logdet, w_t, v_t, own_w)


def aligned(a: Side, b: Side, gamma: float, metric: Metric) -> np.ndarray:
    """``log E k(a_i, b_i)`` for aligned rows with the same pattern grouping."""
    out = np.empty(a.n)
    if a.n == 0:
        return out
    loop = _row_loop(a, b, gamma, metric)
    if loop is not None:
        # As the row-pair loop computes the Gram (same rounding).
        column = np.empty((a.n, 1))
        _row_pairs(
            a, b, gamma, metric, False, False, column, diagonal=True,
            schur=loop == "schur",
        )  # fmt: skip
        return column[:, 0].copy()
    code = _loops().rbf_aligned(
        pattern_pair_arrays(a, metric),
        pattern_pair_arrays(b, metric),
        float(gamma),
        metric.mahalanobis,
        out,
    )
    raise_invalid([code])
    return out


# exp(x) is subnormal below _SUBNORMAL and rounds to 0 below _ZERO. numpy's
# vectorised exp falls back to a slow path for a whole vector holding such
# lanes, so they are set aside and handled on their own.
_SUBNORMAL = -708.3
_ZERO = -745.2


def _exp_chunk(c: np.ndarray, upper: float | None = None) -> None:
    if upper is not None:
        np.minimum(c, upper, out=c)
    low = c < _SUBNORMAL
    if not low.any():
        np.exp(c, out=c)
        return
    idx = np.flatnonzero(low)
    vals = c[idx]
    c[idx] = 0.0
    np.exp(c, out=c)
    res = np.zeros(len(vals))
    sub = vals > _ZERO
    if sub.any():
        res[sub] = np.exp(vals[sub])
    c[idx] = res


def exp_inplace(
    K: np.ndarray, block: int = 1 << 20, upper: float | None = None
) -> None:
    """``K <- exp(K)`` in place, by flat chunks on threads (numpy's SIMD exp);
    with ``upper``, ``exp(min(K, upper))`` (clipped chunk by chunk, in cache)."""
    flat = K.reshape(-1)
    chunks = [slice(s, s + block) for s in range(0, flat.size, block)]
    T = max(1, min(n_threads(), len(chunks)))

    def work(t: int) -> Callable[[], object]:
        def run() -> None:
            with np.errstate(under="ignore"):  # exp(-huge) = 0 is the answer
                for sl in chunks[t::T]:
                    _exp_chunk(flat[sl], upper)

        return run

    run([work(t) for t in range(T)])


def symmetrize(K: np.ndarray, block: int = 512) -> None:
    """In place ``K <- (K + K^T) / 2`` by blocks (no second n x n array)."""
    n = K.shape[0]
    for s in range(0, n, block):
        e = min(s + block, n)
        for t in range(s, n, block):
            f = min(t + block, n)
            mean = 0.5 * (K[s:e, t:f] + K[t:f, s:e].T)
            K[s:e, t:f] = mean
            K[t:f, s:e] = mean.T


# -- Gaussian -----------------------------------------------------------------


# The side of each Gaussian conditionals object (without offsets), with its
# memo of factors, for as long as the object lives: a kernel keeps its training
# rows' conditionals, so the training side of every later Gram (predictions,
# a grid search over C) is built and factored once.
_SIDES: weakref.WeakKeyDictionary[Any, tuple[Metric, Side]] = (
    weakref.WeakKeyDictionary()
)


def gaussian_side(
    c: GaussianConditionals, metric: Metric, off: np.ndarray | None = None
) -> Side:
    if off is None:
        with LOCK:
            cached = _SIDES.get(c)
        if cached is not None and cached[0] is metric:
            return cached[1]
    packed = Packed.build(c.patterns, c.pattern_index)
    side = Side.build(c.means, packed, c.covariances, metric, off)
    if off is None:
        with LOCK:
            _SIDES[c] = (metric, side)
    return side


def gaussian_gram(
    a: Side,
    b: Side | None,
    gamma: float,
    metric: Metric,
    *,
    log: bool = False,
    upper: float | None = None,
) -> np.ndarray:
    """``E k`` (or its log) between the rows of two Gaussian sides.

    ``b=None`` is the symmetric Gram of ``a`` (half the pattern pairs); a row
    paired with itself is two independent copies. ``upper``: a bound on the
    log, applied before the exponential (``0`` for a normalised kernel).
    """
    if b is not None and b.packed.n_patterns > a.packed.n_patterns:
        # Loop over the side with more patterns, so that the per-pattern data
        # streamed for every one of them (the other side's) stays in cache.
        K = gaussian_gram(b, a, gamma, metric, log=log, upper=upper)
        return np.ascontiguousarray(K.T)
    symmetric = b is None
    other = a if b is None else b
    out = np.empty((a.n, other.n))
    pairs(a, other, gamma, metric, symmetric=symmetric, accumulate=False, out=out)
    if not log:
        exp_inplace(out, upper=upper)
    elif upper is not None:
        np.minimum(out, upper, out=out)
    return out


def gaussian_self_log(a: Side, gamma: float, metric: Metric) -> np.ndarray:
    """``log E k(X_i, X_i')`` for independent copies of each row (no offsets;
    kept in ``a.memo``)."""
    key = ("self_log", float(gamma), metric.mahalanobis)
    log_n: np.ndarray = a.memoized(key, lambda: aligned(a, a, gamma, metric))
    return log_n.copy()


# -- Gaussian mixtures ------------------------------------------------------------


def mixture_sides(
    c: MixtureConditionals, metric: Metric, off: np.ndarray | None = None
) -> list[Side]:
    """One side per component (shared patterns; weights are the posteriors)."""
    packed = Packed.build(c.patterns, c.pattern_index)
    return [
        Side.build(
            c.means[k],
            packed,
            [cov[k] for cov in c.covariances],
            metric,
            off,
            c.weights[:, k],
        )
        for k in range(c.n_components)
    ]


def accumulated_gram(
    a: list[Side], b: list[Side] | None, gamma: float, metric: Metric
) -> np.ndarray:
    """``sum_kl w_ik w_jl exp(log E_kl + offsets)`` over pairs of sides.

    Mixture components (weights = posteriors) or draws (weights = 1/m).
    ``b=None`` is the Gram of ``a``, symmetrised against rounding.
    """
    other = a if b is None else b
    out = np.zeros((a[0].n, other[0].n))
    for sa in a:
        for sb in other:
            pairs(sa, sb, gamma, metric, symmetric=False, accumulate=True, out=out)
    if b is None:
        symmetrize(out)
    return out


def accumulated_self_log(a: list[Side], gamma: float, metric: Metric) -> np.ndarray:
    """``log sum_kl w_ik w_il E_kl k(X_i, X_i')`` (independent copies)."""
    terms = np.empty((len(a) ** 2, a[0].n))
    with np.errstate(divide="ignore"):
        logw = [np.log(s.weight) for s in a]
    for k, sa in enumerate(a):
        for m, sb in enumerate(a):
            terms[k * len(a) + m] = aligned(sa, sb, gamma, metric) + logw[k] + logw[m]
    return np.asarray(logsumexp(terms, axis=0))


# -- samples (multiple imputation) ----------------------------------------------


def sample_sides(
    c: SampleConditionals, metric: Metric, off: np.ndarray | None = None
) -> list[Side]:
    """One complete-data side per draw, each weighted ``1 / m``."""
    packed = Packed.complete(c.n_samples, c.n_features)
    w = np.full(c.n_samples, 1.0 / c.n_draws)
    empty = [np.zeros((0, 0))]
    return [Side.build(draw, packed, empty, metric, off, w) for draw in c.samples]
