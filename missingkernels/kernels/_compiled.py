"""Compiled inner loops of the expected RBF kernel (numba).

The expected RBF between ``X ~ N(a, A)`` and ``Y ~ N(b, B)`` (see
``docs/theory.rst``, "Fast exact computation by pattern pairs") depends on
the pair of missing patterns only through their covariance blocks. The
loops below factor small matrices once per pattern pair, transform the rows
of both patterns, then finish every row pair with O(d) work: there is no
d x d factorisation per pair of rows.

Euclidean metric (the union of the two patterns, ``U = J_a | J_b``)::

    log E = -1/2 logdet(I + 2 gamma C_U)
            - gamma (||delta_V||^2 + ||L^-1 delta_U||^2),   L L^T = I + 2 gamma C_U

with ``C_U = (A + B)[U, U]`` and ``V`` the coordinates observed in both rows.
Both squared norms come from differences of transformed rows, never as a
difference of two large terms, so the exponent keeps its relative precision
at any ``gamma``.

Mahalanobis metric (``G = S^-1``, whitening ``W^T W = G``). With per-pattern
factors ``C_p = F_p F_p^T``, the whitened covariances are ``Fw_p Fw_p^T``,
``Fw_p = W E_p F_p`` (``E_p`` embeds the missing features of ``p``).
With ``Fw = [Fw_p, Fw_q]`` (Woodbury)::

    log E = -1/2 logdet(I + 2 gamma Fw^T Fw)
            - gamma (||W delta||^2 - 2 gamma beta^T (I + 2 gamma Fw^T Fw)^-1 beta)

``beta = Fw^T W delta = [F_p^T (G delta)[J_p]; F_q^T (G delta)[J_q]]``.
The matrix ``I + 2 gamma Fw^T Fw`` has the per-pattern diagonal blocks
``K_p = I + 2 gamma F_p^T G[J_p, J_p] F_p`` (factored once per pattern) and the
cross block ``2 gamma F_p^T G[J_p, J_q] F_q``: per pattern pair only the Schur
complement of ``K_p`` (size ``|J_q|``) is factored. The bracket equals
``(W delta)^T (I + 2 gamma Fw Fw^T)^-1 (W delta) >= 0``; it is clipped at 0
against rounding.

All functions release the GIL: the caller runs them on several threads over
disjoint sets of output rows.

A side (rows of one argument of the Gram) is a :class:`._rbf.SideArrays`
named tuple (its fields are documented there); the per-pattern Mahalanobis
factors are a :class:`._rbf.MahalanobisFactors`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

if TYPE_CHECKING:
    from ._rbf import MahalanobisFactors, RowFactors, SideArrays, SortedRows

# Rescale the running product of Cholesky pivots before it can overflow.
_BIG = 1e150

# Let LLVM reassociate sums (vectorised dot products in the small
# factorisations) and fuse multiply-adds; no flag assumes finite values, so
# the positive-definiteness and clipping tests keep their meaning.
_FAST = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _cholesky(M: np.ndarray, inv: np.ndarray, k: int) -> bool:  # pragma: no cover
    """In-place lower Cholesky of ``M[:k, :k]`` (reads the lower triangle).

    ``inv[j]`` receives ``1 / L[j, j]``. Returns False if not positive definite.
    """
    for j in range(k):
        s = M[j, j]
        for t in range(j):
            s -= M[j, t] * M[j, t]
        if not s > 0.0:
            return False
        r = math.sqrt(s)
        M[j, j] = r
        ir = 1.0 / r
        inv[j] = ir
        for i in range(j + 1, k):
            s = M[i, j]
            for t in range(j):
                s -= M[i, t] * M[j, t]
            M[i, j] = s * ir
    return True


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _logdet(L: np.ndarray, k: int) -> float:  # pragma: no cover - compiled
    """``log det(L L^T)`` from the diagonal of ``L``.

    Few ``log`` calls: the pivots are multiplied, rescaling before the
    product overflows or underflows.
    """
    prod = 1.0
    total = 0.0
    for j in range(k):
        prod *= L[j, j]
        if prod > _BIG or prod < 1.0 / _BIG:
            total += math.log(prod)
            prod = 1.0
    return 2.0 * (total + math.log(prod))


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _forward(
    L: np.ndarray, inv: np.ndarray, b: np.ndarray, off: int, k: int
) -> None:  # pragma: no cover - compiled
    """In place ``b[off:off+k] <- L[:k, :k]^-1 b[off:off+k]``."""
    for i in range(k):
        s = b[off + i]
        for t in range(i):
            s -= L[i, t] * b[off + t]
        b[off + i] = s * inv[i]


# -- Euclidean: union of the patterns -----------------------------------------


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _scatter(
    LK: np.ndarray, posU: np.ndarray, side: SideArrays, p: int, scale: float
) -> None:  # pragma: no cover - compiled
    """Add ``scale`` times the compact covariance of pattern ``p`` of ``side``
    to the lower triangle of ``LK``, at the positions ``posU`` of its features
    (sorted in both, so lower maps to lower)."""
    C = side.cov[p]
    J = side.missing[p]
    kc = side.n_missing[p]
    for a in range(kc):
        ua = posU[J[a]]
        for b in range(a + 1):
            LK[ua, posU[J[b]]] += scale * C[a, b]


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _union_factor(
    p: int,
    q: int,
    sa: SideArrays,
    sb: SideArrays,
    gamma: float,
    U: np.ndarray,
    posU: np.ndarray,
    LK: np.ndarray,
    invK: np.ndarray,
) -> tuple[int, float]:  # pragma: no cover - compiled
    """``U``, then the Cholesky factor of ``I + 2 gamma C_U``; ``(k, logdet)``.

    ``U[:k]`` lists the union of the missing features, ``U[k:]`` the others;
    ``posU[t]`` is the position of feature ``t`` in ``U[:k]``, or -1.
    """
    mask_a = sa.mask
    mask_b = sb.mask
    d = mask_a.shape[1]
    k = 0
    for t in range(d):
        if mask_a[p, t] or mask_b[q, t]:
            posU[t] = k
            U[k] = t
            k += 1
        else:
            posU[t] = -1
    # The features observed in both rows follow in U[k:].
    j = k
    for t in range(d):
        if posU[t] < 0:
            U[j] = t
            j += 1
    g2 = 2.0 * gamma
    for s in range(k):
        for t in range(s + 1):
            LK[s, t] = 0.0
    _scatter(LK, posU, sa, p, g2)
    _scatter(LK, posU, sb, q, g2)
    for s in range(k):
        LK[s, s] += 1.0
    if not _cholesky(LK, invK, k):
        return k, math.nan
    return k, _logdet(LK, k)


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _union_transform(
    src: np.ndarray,
    U: np.ndarray,
    k: int,
    LK: np.ndarray,
    invK: np.ndarray,
    buf: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``buf[:k] = L^-1 x[U]`` for the row ``src``."""
    for s in range(k):
        buf[s] = src[U[s]]
    _forward(LK, invK, buf, 0, k)


# -- Mahalanobis: Schur complement of the per-pattern blocks ------------------


@njit(cache=True, nogil=True, fastmath=_FAST)
def mahalanobis_factors(
    side: SideArrays, gamma: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:  # pragma: no cover
    """Per-pattern factors of the first block, for the Schur complements.

    With ``K_p = I + 2 gamma F_p^T G[J_p, J_p] F_p = L_p L_p^T``, returns
    ``(logdet K_p, W^T, V^T, own_W, code)`` where ``W_p^T = L_p^-1 F_p^T``
    (projects ``z[J_p]`` straight into the whitened first block),
    ``V_p^T = L_p^-1 (G F_p)^T`` (gives ``Y`` without a triangular solve per
    pair) and ``own_W[i] = L_p^-1 F_p^T z_i[J_p]`` for each row. ``code`` is
    ``1 + p`` if ``K_p`` is not positive definite, else 0.
    """
    A = side.inner
    kk = side.n_missing
    FT = side.factor_t
    GFT = side.gfactor_t
    own = side.own
    order = side.order
    start = side.start
    P = A.shape[0]
    kmax = A.shape[1]
    d = GFT.shape[2]
    L = np.zeros((kmax, kmax))
    inv = np.ones(kmax)
    ld = np.zeros(P)
    WT = np.zeros((P, kmax, kmax))
    VT = np.zeros((P, kmax, d))
    ownW = np.zeros((own.shape[0], kmax))
    for p in range(P):
        k = kk[p]
        for s in range(k):
            for t in range(s + 1):
                L[s, t] = 2.0 * gamma * A[p, s, t]
            L[s, s] += 1.0
        if not _cholesky(L, inv, k):
            return ld, WT, VT, ownW, 1 + p
        ld[p] = _logdet(L, k)
        # Forward substitution by rows: row i of L^-1 M from rows t < i.
        for i in range(k):
            wi = WT[p, i]
            vi = VT[p, i]
            for c in range(k):
                wi[c] = FT[p, i, c]
            for c in range(d):
                vi[c] = GFT[p, i, c]
            for t in range(i):
                f = L[i, t]
                wt = WT[p, t]
                vt = VT[p, t]
                for c in range(k):
                    wi[c] -= f * wt[c]
                for c in range(d):
                    vi[c] -= f * vt[c]
            for c in range(k):
                wi[c] *= inv[i]
            for c in range(d):
                vi[c] *= inv[i]
        for ii in range(start[p], start[p + 1]):
            r = order[ii]
            for s in range(k):
                ownW[r, s] = own[r, s]
            _forward(L, inv, ownW[r], 0, k)
    return ld, WT, VT, ownW, 0


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _schur_factor(
    p: int,
    q: int,
    sa: SideArrays,
    sb: SideArrays,
    VTa: np.ndarray,
    ldKa: np.ndarray,
    gamma: float,
    Yt: np.ndarray,
    LN: np.ndarray,
    invN: np.ndarray,
    gathered: np.ndarray,
) -> float:  # pragma: no cover - compiled
    """``Y = L_p^-1 (2 gamma X)`` (stored transposed in ``Yt``) and the
    factor of ``N = K_q - Y^T Y``, ``X = F_p^T G[J_p, J_q] F_q``.

    ``Y^T = 2 gamma F_q^T V_p[J_q]``: no triangular solve per pair. Returns
    the logdet of the whole ``(k_p + k_q)`` matrix, NaN if it is not
    positive definite.
    """
    kp = sa.n_missing[p]
    kq = sb.n_missing[q]
    Jq = sb.missing[q]
    FTq = sb.factor_t[q]
    Aq = sb.inner[q]
    VTp = VTa[p]
    g2 = 2.0 * gamma
    for s in range(kp):
        v = VTp[s]
        gs = gathered[s]
        for r in range(kq):
            gs[r] = v[Jq[r]]
    for t in range(kq):
        f = FTq[t]
        y = Yt[t]
        for s in range(kp):
            gs = gathered[s]
            acc = 0.0
            for r in range(kq):
                acc += f[r] * gs[r]
            y[s] = g2 * acc
    for s in range(kq):
        a = Yt[s]
        for t in range(s + 1):
            b = Yt[t]
            v = g2 * Aq[s, t]
            for r in range(kp):
                v -= a[r] * b[r]
            LN[s, t] = v
        LN[s, s] += 1.0
    if not _cholesky(LN, invN, kq):
        return math.nan
    return ldKa[p] + _logdet(LN, kq)


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _schur_transform(
    kp: int,
    kq: int,
    Yt: np.ndarray,
    LN: np.ndarray,
    invN: np.ndarray,
    buf: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Second block of ``L^-1 beta``: ``buf[kp:kp+kq] <- L_N^-1 (b2 - Y^T y1)``.

    ``buf[:kp]`` already holds the transformed first block ``y1``.
    """
    for s in range(kq):
        y = Yt[s]
        v = buf[kp + s]
        for r in range(kp):
            v -= y[r] * buf[r]
        buf[kp + s] = v
    _forward(LN, invN, buf, kp, kq)


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _project(
    z: np.ndarray, M: np.ndarray, J: np.ndarray, k: int, buf: np.ndarray, off: int
) -> None:  # pragma: no cover - compiled
    """``buf[off:off+k] = M[:k, :k] z[J[:k]]`` (``M`` is ``F^T`` or ``W^T``)."""
    for s in range(k):
        m = M[s]
        acc = 0.0
        for r in range(k):
            acc += m[r] * z[J[r]]
        buf[off + s] = acc


# -- pair loops -----------------------------------------------------------------


# Patterns with at least this many rows keep the factors of all their pattern
# pairs and finish one output row at a time (cache-friendly writes); smaller
# ones use each factor right away (no traffic through stored factors).
_STORE_FACTORS_MIN_ROWS = 8
# Rows of a pattern finished together against the columns of another.
_BLOCK = 4


@njit(cache=True, nogil=True, fastmath=_FAST)
def rbf_pairs(
    p_list: np.ndarray,
    sa: SideArrays,
    sb: SideArrays,
    factors_a: MahalanobisFactors,
    gamma: float,
    mahal: bool,
    symmetric: bool,
    accumulate: bool,
    out: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Expected RBF between the rows of the patterns ``p_list`` of a and all of b.

    Writes ``log E + off_a[i] + off_b[j]`` to ``out[i, j]``, or with
    ``accumulate`` adds ``wa[i] * wb[j] * exp(...)`` to it. ``factors_a`` is
    the output of :func:`mahalanobis_factors` for a (without the code) with
    the Mahalanobis metric, unused otherwise.

    With ``symmetric`` (a and b are the same side) each unordered pair is
    computed once, only for pattern pairs ``p <= q``, and written only where
    the rank of the row in the pattern order is the smaller;
    :func:`mirror_by_rank` fills the rest. A row paired with itself is two
    independent copies.

    Every pattern pair ``(p, q)`` is factored once and the rows of b are
    transformed once per pattern of a (stored in pattern order, so the
    innermost loops run over contiguous memory); each row of ``p`` then costs
    one small triangular solve per pattern ``q`` and O(d) per pair.

    Returns 0, or ``1 + p`` if a matrix of pattern ``p`` is not positive
    definite (an invalid covariance).
    """
    xa = sa.x
    za = sa.z
    order_a = sa.order
    start_a = sa.start
    wa = sa.weight
    off_a = sa.off
    xb = sb.x
    zb = sb.z
    order_b = sb.order
    start_b = sb.start
    off_b = sb.off
    wb = sb.weight
    d = xa.shape[1]
    nb = xb.shape[0]
    n_pb = start_b.size - 1
    kmax_a = sa.factor_t.shape[1]
    kmax_b = sb.factor_t.shape[1]
    ldKa = factors_a.logdet
    WTa = factors_a.w_t
    VTa = factors_a.v_t
    ownWa = factors_a.own_w
    store = False
    for p in p_list:
        if start_a[p + 1] - start_a[p] >= _STORE_FACTORS_MIN_ROWS:
            store = True
    # Rows of b in pattern order, transposed: column c is row order_b[c].
    XT = np.empty((d, nb) if store else (1, 1))
    if store:
        for c in range(nb):
            r = order_b[c]
            for t in range(d):
                XT[t, c] = xb[r, t]
    n_store = n_pb if store else 1
    width = kmax_a + kmax_b if mahal else d
    YT = np.empty((max(width, 1), nb)) if store else np.empty((1, 1))
    YS = np.empty((nb, max(width, 1)))
    Us = np.empty((n_store, d), dtype=np.int64)
    posU = np.empty((n_store, d), dtype=np.int64)
    ks = np.empty(n_store, dtype=np.int64)
    half_logdet = np.empty(n_store)
    # Euclidean: Cholesky of I + 2 gamma C_U; Mahalanobis: Y and L_N.
    kf = kmax_b if mahal else d
    LKs = np.empty((n_store, max(kf, 1), max(kf, 1)))
    invKs = np.empty((n_store, max(kf, 1)))
    Ys = np.empty((n_store if mahal else 1, max(kmax_b, 1), max(kmax_a, 1)))
    gathered = np.empty((max(kmax_a, 1), max(kmax_b, 1)))
    row = np.empty(max(width, 1))
    rows = np.empty((_BLOCK, max(width, 1)))
    accs = np.empty((_BLOCK, nb))
    for p in p_list:
        q0 = p if symmetric else 0
        kp = sa.n_missing[p]
        few = start_a[p + 1] - start_a[p] < _STORE_FACTORS_MIN_ROWS
        # Few rows: factor (p, q) and use it at once (slot 0). Many rows: factor
        # every (p, q) first (slot q), then finish one output row at a time.
        for q in range(q0, n_pb):
            h = 0 if few else q
            if mahal:
                logdet = _schur_factor(
                    p, q, sa, sb, VTa, ldKa, gamma, Ys[h], LKs[h], invKs[h], gathered
                )
                k = kp + sb.n_missing[q]
            else:
                k, logdet = _union_factor(
                    p, q, sa, sb, gamma, Us[h], posU[h], LKs[h], invKs[h]
                )
            if math.isnan(logdet):
                return 1 + p
            ks[h] = k
            half_logdet[h] = 0.5 * logdet
            for c in range(start_b[q], start_b[q + 1]):
                rb = order_b[c]
                if mahal:
                    _project(zb[rb], WTa[p], sa.missing[p], kp, row, 0)
                    own = sb.own[rb]
                    for s in range(k - kp):
                        row[kp + s] = own[s]
                    _schur_transform(kp, k - kp, Ys[h], LKs[h], invKs[h], row)
                else:
                    _union_transform(xb[rb], Us[h], k, LKs[h], invKs[h], row)
                if few:
                    for s in range(k):
                        YS[c, s] = row[s]
                else:
                    for s in range(k):
                        YT[s, c] = row[s]
            if few:
                # Scalar loops: with MCAR a pattern holds one or two rows.
                for ii in range(start_a[p], start_a[p + 1]):
                    c0 = ii if symmetric and q == p else start_b[q]
                    c1 = start_b[q + 1]
                    if c0 >= c1:
                        continue
                    ra = order_a[ii]
                    if mahal:
                        for s in range(kp):
                            row[s] = ownWa[ra, s]
                        _project(za[ra], sb.factor_t[q], sb.missing[q], k - kp, row, kp)
                        _schur_transform(kp, k - kp, Ys[0], LKs[0], invKs[0], row)
                    else:
                        _union_transform(xa[ra], Us[0], k, LKs[0], invKs[0], row)
                    base = off_a[ra] - half_logdet[0]
                    for c in range(c0, c1):
                        rb = order_b[c]
                        total = 0.0
                        if mahal:
                            for t in range(d):
                                diff = xa[ra, t] - xb[rb, t]
                                total += diff * diff
                            sub = 0.0
                            for s in range(k):
                                diff = row[s] - YS[c, s]
                                sub += diff * diff
                            total -= 2.0 * gamma * sub
                            if total < 0.0:
                                total = 0.0
                        else:
                            for j in range(k, d):
                                t = Us[0, j]
                                diff = xa[ra, t] - xb[rb, t]
                                total += diff * diff
                            for s in range(k):
                                diff = row[s] - YS[c, s]
                                total += diff * diff
                        val = base - gamma * total + off_b[rb]
                        if accumulate:
                            out[ra, rb] += wa[ra] * wb[rb] * math.exp(val)
                        else:
                            out[ra, rb] = val
        if not few:
            for ii0 in range(start_a[p], start_a[p + 1], _BLOCK):
                nr = min(_BLOCK, start_a[p + 1] - ii0)
                for q in range(q0, n_pb):
                    _finish_block(
                        ii0, nr, p, q, sa, sb, symmetric, mahal, gamma, kp,
                        ks[q], half_logdet[q], Us[q], posU[q], ownWa, Ys[q],
                        LKs[q], invKs[q], XT, YT, rows, accs, accumulate, out,
                    )  # fmt: skip
    return 0


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _finish_block(
    ii0: int,
    nr: int,
    p: int,
    q: int,
    sa: SideArrays,
    sb: SideArrays,
    symmetric: bool,
    mahal: bool,
    gamma: float,
    kp: int,
    k: int,
    half_logdet: float,
    U: np.ndarray,
    posU: np.ndarray,
    ownWa: np.ndarray,
    Yt: np.ndarray,
    LK: np.ndarray,
    invK: np.ndarray,
    XT: np.ndarray,
    YT: np.ndarray,
    rows: np.ndarray,
    accs: np.ndarray,
    accumulate: bool,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Rows ``ii0:ii0+nr`` (pattern order, ``nr <= 4``) of ``p`` against ``q``.

    Four rows share each pass over the transposed columns of b (fewer loads
    and loop overheads); a shorter block repeats its last row.
    """
    start_b = sb.start
    c0 = ii0 if symmetric and q == p else start_b[q]
    c1 = start_b[q + 1]
    if c0 >= c1:
        return
    order_a = sa.order
    xa = sa.x
    r0 = order_a[ii0]
    r1 = order_a[ii0 + min(1, nr - 1)]
    r2 = order_a[ii0 + min(2, nr - 1)]
    r3 = order_a[ii0 + min(3, nr - 1)]
    for m in range(_BLOCK):
        ra = order_a[ii0 + min(m, nr - 1)]
        row = rows[m]
        if mahal:
            for s in range(kp):
                row[s] = ownWa[ra, s]
            _project(sa.z[ra], sb.factor_t[q], sb.missing[q], k - kp, row, kp)
            _schur_transform(kp, k - kp, Yt, LK, invK, row)
        else:
            _union_transform(xa[ra], U, k, LK, invK, row)
    n = c1 - c0
    a0 = accs[0, :n]
    a1 = accs[1, :n]
    a2 = accs[2, :n]
    a3 = accs[3, :n]
    a0[:] = 0.0
    a1[:] = 0.0
    a2[:] = 0.0
    a3[:] = 0.0
    d = xa.shape[1]
    for t in range(d):
        if not mahal and posU[t] >= 0:
            continue
        col = XT[t, c0:c1]
        x0 = xa[r0, t]
        x1 = xa[r1, t]
        x2 = xa[r2, t]
        x3 = xa[r3, t]
        for c in range(n):
            v = col[c]
            e0 = x0 - v
            e1 = x1 - v
            e2 = x2 - v
            e3 = x3 - v
            a0[c] += e0 * e0
            a1[c] += e1 * e1
            a2[c] += e2 * e2
            a3[c] += e3 * e3
    # Mahalanobis subtracts 2 gamma ||u_i - u_j||^2; Euclidean adds it.
    sign = -2.0 * gamma if mahal else 1.0
    for s in range(k):
        col = YT[s, c0:c1]
        y0 = rows[0, s]
        y1 = rows[1, s]
        y2 = rows[2, s]
        y3 = rows[3, s]
        for c in range(n):
            v = col[c]
            e0 = y0 - v
            e1 = y1 - v
            e2 = y2 - v
            e3 = y3 - v
            a0[c] += sign * (e0 * e0)
            a1[c] += sign * (e1 * e1)
            a2[c] += sign * (e2 * e2)
            a3[c] += sign * (e3 * e3)
    rows_b = sb.order
    off_a = sa.off
    off_b = sb.off
    wa = sa.weight
    wb = sb.weight
    for m in range(nr):
        ra = order_a[ii0 + m]
        a = accs[m]
        out_row = out[ra]
        base = off_a[ra] - half_logdet
        # In the diagonal block a row starts at itself (the pair below is
        # its mirror image).
        start = ii0 + m if symmetric and q == p else c0
        for c in range(start, c1):
            total = a[c - c0]
            if total < 0.0:  # rounding (Mahalanobis only)
                total = 0.0
            rb = rows_b[c]
            val = base - gamma * total + off_b[rb]
            if accumulate:
                out_row[rb] += wa[ra] * wb[rb] * math.exp(val)
            else:
                out_row[rb] = val


@njit(cache=True, nogil=True)
def mirror_by_rank(
    out: np.ndarray, rank: np.ndarray, blocks: np.ndarray, size: int
) -> None:  # pragma: no cover - compiled
    """Complete the symmetric matrix written by :func:`rbf_pairs`.

    ``out[i, j]`` holds the pair iff ``rank[i] <= rank[j]``. Visits the tile
    pairs ``(bi, bj)``, ``bi <= bj``, of the row blocks ``blocks`` (block
    indices of ``size`` rows), so threads given disjoint blocks never touch
    the same entries.
    """
    n = out.shape[0]
    for b in blocks:
        bi = b * size
        ei = min(bi + size, n)
        for bj in range(bi, n, size):
            ej = min(bj + size, n)
            for i in range(bi, ei):
                for j in range(max(bj, i + 1), ej):
                    if rank[i] <= rank[j]:
                        out[j, i] = out[i, j]
                    else:
                        out[i, j] = out[j, i]


@njit(cache=True, nogil=True, fastmath=_FAST)
def rbf_aligned(
    sa: SideArrays, sb: SideArrays, gamma: float, mahal: bool, out: np.ndarray
) -> int:  # pragma: no cover - compiled
    """``log E k(a_i, b_i)`` for aligned rows grouped by the same patterns.

    Used for self-similarities of independent copies (genRBF normalisers,
    mixture diagonals). Returns 0, or ``1 + p`` on an invalid covariance.
    """
    xa = sa.x
    za = sa.z
    xb = sb.x
    zb = sb.z
    order = sa.order
    start = sa.start
    d = xa.shape[1]
    n_p = start.size - 1
    kmax = sa.factor_t.shape[1]
    if mahal:
        ldKa, WTa, VTa, _, code = mahalanobis_factors(sa, gamma)
        if code:
            return code
    else:
        ldKa = np.zeros(1)
        WTa = np.zeros((1, 1, 1))
        VTa = np.zeros((1, 1, 1))
    U = np.empty(d, dtype=np.int64)
    posU = np.empty(d, dtype=np.int64)
    kf = kmax if mahal else d
    LK = np.empty((max(kf, 1), max(kf, 1)))
    invK = np.empty(max(kf, 1))
    Y = np.empty((max(kmax, 1), max(kmax, 1)))
    gathered = np.empty((max(kmax, 1), max(kmax, 1)))
    diff = np.empty(d)
    buf = np.empty(max(2 * kmax, d, 1))
    for p in range(n_p):
        if mahal:
            kp = sa.n_missing[p]
            logdet = _schur_factor(
                p, p, sa, sb, VTa, ldKa, gamma, Y, LK, invK, gathered
            )
            k = 2 * kp
        else:
            kp = 0
            k, logdet = _union_factor(p, p, sa, sb, gamma, U, posU, LK, invK)
        if math.isnan(logdet):
            return 1 + p
        for ii in range(start[p], start[p + 1]):
            r = order[ii]
            total = 0.0
            for t in range(d):
                dx = xa[r, t] - xb[r, t]
                diff[t] = dx
                if mahal or posU[t] < 0:
                    total += dx * dx
            if mahal:
                for t in range(d):
                    diff[t] = za[r, t] - zb[r, t]
                _project(diff, WTa[p], sa.missing[p], kp, buf, 0)
                _project(diff, sb.factor_t[p], sb.missing[p], kp, buf, kp)
                _schur_transform(kp, kp, Y, LK, invK, buf)
                for s in range(k):
                    total -= 2.0 * gamma * buf[s] * buf[s]
                if total < 0.0:
                    total = 0.0
            else:
                _union_transform(diff, U, k, LK, invK, buf)
                for s in range(k):
                    total += buf[s] * buf[s]
            out[r] = -0.5 * logdet - gamma * total
    return 0


@njit(cache=True, nogil=True, fastmath=_FAST)
def schur_row_factors(
    factor_t: np.ndarray,
    inner: np.ndarray,
    missing: np.ndarray,
    n_missing: np.ndarray,
    lam: np.ndarray,
    gamma: float,
    cstart: np.ndarray,
    logdet: np.ndarray,
    gmat: np.ndarray,
    groot: np.ndarray,
    cinv: np.ndarray,
    logdet_c: np.ndarray,
) -> tuple[int, float]:  # pragma: no cover - compiled
    """The per-pattern factors of the Schur row loop (fields of
    :class:`._rbf.RowFactors`), written into the arrays passed.

    ``factor_t``: ``F_p^T`` with ``F_p F_p^T = C_p``; ``inner``:
    ``F_p^T Lam[J_p, J_p] F_p``. With ``K_p = I + 2 gamma inner = L L^T`` and
    ``W = L^-1 F_p^T``: ``logdet = log det K_p``, ``gmat = 2 gamma W^T W``,
    ``groot`` the triangular factor of the QR decomposition of
    ``sqrt(2 gamma) W`` (``R^T R = G_p`` without squaring the condition
    number). For every ``C_p`` that is positive definite: ``cinv`` (packed
    lower triangles of ``(2 gamma C_p)^-1 + Lam[J_p, J_p]``) and ``logdet_c =
    log det(2 gamma C_p)``. Returns ``(code, ratio)``, ``code`` = ``1 + p``
    if ``K_p`` is not positive definite, else 0, and ``ratio`` the smallest
    squared Cholesky pivot of a ``C_p`` relative to its largest variance
    (about the reciprocal of its condition number; 0 if one is singular).
    """
    P = factor_t.shape[0]
    kmax = max(factor_t.shape[1], 1)
    g2 = 2.0 * gamma
    sg = math.sqrt(g2)
    L = np.zeros((kmax, kmax))
    inv = np.ones(kmax)
    W = np.zeros((kmax, kmax))
    A = np.zeros((kmax, kmax))
    v = np.zeros(kmax)
    LC = np.zeros((kmax, kmax))
    LCi = np.zeros((kmax, kmax))
    ratio = 1.0
    for p in range(P):
        k = n_missing[p]
        if k == 0:
            continue
        FT = factor_t[p]
        for s in range(k):
            for t in range(s + 1):
                L[s, t] = g2 * inner[p, s, t]
            L[s, s] += 1.0
        if not _cholesky(L, inv, k):
            return 1 + p, ratio
        logdet[p] = _logdet(L, k)
        # W = L^-1 F^T by rows; A = sqrt(2 gamma) W.
        for i in range(k):
            for c in range(k):
                acc = FT[i, c]
                for t in range(i):
                    acc -= L[i, t] * W[t, c]
                W[i, c] = acc * inv[i]
        for a in range(k):
            for b in range(a + 1):
                acc = 0.0
                for i in range(k):
                    acc += W[i, a] * W[i, b]
                gmat[p, a, b] = g2 * acc
                gmat[p, b, a] = g2 * acc
        for i in range(k):
            for c in range(k):
                A[i, c] = sg * W[i, c]
        # Householder QR of A, R in the upper triangle of A.
        for j in range(k):
            norm = 0.0
            for i in range(j, k):
                norm += A[i, j] * A[i, j]
            norm = math.sqrt(norm)
            if norm > 0.0:
                alpha = -norm if A[j, j] >= 0.0 else norm
                vn = 0.0
                for i in range(j, k):
                    v[i] = A[i, j]
                v[j] -= alpha
                for i in range(j, k):
                    vn += v[i] * v[i]
                if vn > 0.0:
                    for c in range(j, k):
                        acc = 0.0
                        for i in range(j, k):
                            acc += v[i] * A[i, c]
                        f = 2.0 * acc / vn
                        for i in range(j, k):
                            A[i, c] -= f * v[i]
            for c in range(k):
                groot[p, j, c] = A[j, c] if c >= j else 0.0
        if not ratio > 0.0:
            continue
        # (2 gamma C)^-1 from the Cholesky factor of C = F F^T; the smallest
        # pivot next to the largest variance measures its conditioning.
        scale = 0.0
        for a in range(k):
            for b in range(a + 1):
                acc = 0.0
                for i in range(k):
                    acc += FT[i, a] * FT[i, b]
                LC[a, b] = acc
            scale = max(scale, LC[a, a])
        if not _cholesky(LC, inv, k):
            ratio = 0.0
            continue
        ld = 0.0
        for a in range(k):
            piv = LC[a, a] * LC[a, a]
            ratio = min(ratio, piv / scale)
            ld += math.log(g2 * piv)
        logdet_c[p] = ld
        # LCi = LC^-1 (lower), then (LCi^T LCi) / (2 gamma) + Lam[J, J].
        for c in range(k):
            for i in range(k):
                acc = 1.0 if i == c else 0.0
                for t in range(c, i):
                    acc -= LC[i, t] * LCi[t, c]
                LCi[i, c] = acc * inv[i] if i >= c else 0.0
        o = cstart[p]
        for a in range(k):
            fa = missing[p, a]
            for b in range(a + 1):
                acc = 0.0
                for i in range(a, k):
                    acc += LCi[i, a] * LCi[i, b]
                cinv[o + b] = acc / g2 + lam[fa, missing[p, b]]
            o += a + 1
    return 0, ratio


# -- Mahalanobis row pairs: Woodbury on the smaller missing set ----------------
#
# With nearly one row per pattern (MCAR in high dimensions) no factor is shared
# between row pairs. In the original coordinates (``Lam = S^-1`` the precision
# of the metric, ``delta`` the difference of the filled means) the pair needs
# ``log det(I + 2 gamma W (A_i + A_j) W^T)`` and
# ``delta^T (Lam^-1 + 2 gamma (A_i + A_j))^-1 delta`` (docs/theory.rst, "Row
# pairs in the Mahalanobis metric"). The row with more missing features
# ("big", pattern p) brings ``Sigma_p = Lam^-1 + 2 gamma A_p``, whose inverse
# is ``Lam - Lam[:, J_p] G_p Lam[J_p, :]`` with
# ``G_p = (C_p^-1 / (2 gamma) + Lam[J_p, J_p])^-1`` (per pattern); the other
# ("small", pattern q, ``m = |J_q|``) is added by Woodbury with the ``m x m``
# matrix
#
#   N = (2 gamma C_q)^-1 + Lam[J_q, J_q] - K_p[J_q, J_q],
#   K_p = Lam[:, J_p] G_p Lam[J_p, :]  (d x d, once per big row's pattern),
#
# gathered, not multiplied, per pair (SPD: one L D L^T). With
# ``u = (Lam delta)[J_p]``, ``w = G_p u`` and
# ``v = (Lam delta)[J_q] - Lam[J_q, J_p] w``::
#
#   logdet = log det(I + 2 gamma C_p Lam[J_p, J_p]) + log det(2 gamma C_q)
#            + log det N,
#   quad   = ||W delta||^2 - u^T w - v^T N^-1 v,
#
# the quadratic clipped at 0 against rounding. Each unordered pair is computed
# once, by the loop over the rows of its big side (ties: the row of a, or in a
# symmetric Gram the row with the larger index).


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _lane_sums(
    A: np.ndarray,
    ia: int,
    F: np.ndarray,
    o: int,
    U: np.ndarray,
    ou: int,
    r0: int,
    r1: int,
    lo: int | np.uint64,
    hi: int | np.uint64,
) -> None:  # pragma: no cover - compiled
    """``A[ia, ln] += sum over r in [r0, r1) of F[o + r, ln] U[ou + r, ln]``
    for the lanes ``lo <= ln < hi``, four terms per pass over the lanes
    (``r1 - r0`` a multiple of 4; the factors zero-padded)."""
    for r in range(r0, r1, 4):
        f = o + r
        u = ou + r
        for ln in range(lo, hi):
            A[ia, ln] += (F[f, ln] * U[u, ln] + F[f + 1, ln] * U[u + 1, ln]) + (
                F[f + 2, ln] * U[u + 2, ln] + F[f + 3, ln] * U[u + 3, ln]
            )


# ln 2 in two parts (the high part with trailing zero bits: e * _LN2_HI is
# exact for the exponents of doubles).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_MANTISSA = 0x000FFFFFFFFFFFFF
_SQRT2_MANTISSA = 0x6A09E667F3BCD  # mantissa bits of sqrt(2)
_ONE_BITS = 0x3FF0000000000000
_HALF_BITS = 0x3FE0000000000000


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _lane_logs(
    x: np.ndarray,
    out: np.ndarray,
    bits: np.ndarray,
    lo: int | np.uint64,
    hi: int | np.uint64,
) -> None:  # pragma: no cover - compiled
    """``out[ln] = log(x[ln])`` for positive normal ``x``, lanes ``lo <= ln <
    hi``, in loops that vectorise (a call of ``math.log`` per lane does not):
    ``x = 2^e m`` with ``m`` in ``[1/sqrt 2, sqrt 2)`` from the bits, then
    ``log m = 2 atanh(t)``, ``t = (m - 1) / (m + 1)``, ``|t| <= 0.172``, by its
    series to ``t^23`` (truncation below 1e-17). ``bits``: int64 scratch."""
    xi = x.view(np.int64)
    for ln in range(lo, hi):
        b = xi[ln]
        mant = b & _MANTISSA
        up = mant > _SQRT2_MANTISSA
        bits[ln] = mant | (_HALF_BITS if up else _ONE_BITS)
        out[ln] = float(((b >> 52) & 0x7FF) - 1023 + (1 if up else 0))
    m = bits.view(np.float64)
    for ln in range(lo, hi):
        t = (m[ln] - 1.0) / (m[ln] + 1.0)
        t2 = t * t
        p = 1.0 / 23.0
        for c in range(21, 1, -2):
            p = p * t2 + 1.0 / c
        e = out[ln]
        out[ln] = e * _LN2_HI + (2.0 * t + (2.0 * t * t2 * p + e * _LN2_LO))


# Big rows of one tile: the vector lanes of the pair computations. The lanes
# share their partner, so that the partner's features index the big rows'
# factors at the same place in every lane: contiguous loads, not gathers.
# Fewer lanes in high dimensions (see _rbf._lanes): a tile keeps d (d + 1) / 2
# entries of K_p per lane.
_LANES = 64


# (error_model="numpy": no zero-division branch, so that the loops over the
# lanes vectorise; pivots <= 0 are caught by their count.)
@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def rbf_rows(
    tiles_a: np.ndarray,
    tiles_b: np.ndarray,
    sa: SideArrays,
    sb: SideArrays,
    ka: SortedRows,
    kb: SortedRows,
    fa: RowFactors,
    fb: RowFactors,
    lam: np.ndarray,
    gamma: float,
    symmetric: bool,
    accumulate: bool,
    diagonal: bool,
    lanes: int,
    out: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Expected RBF of the row pairs whose big row lies in one of the tiles
    ``tiles_a`` (big rows of a) or ``tiles_b`` (big rows of b); see the
    comment above. A tile is given by its first position in the sorted order
    (``ka``, ``kb``: each side's rows sorted by their number of missing
    features, :class:`._rbf.SortedRows`) and holds ``lanes`` rows; ``lam``:
    the precision of the metric with a row of zeros appended (``d + 1``
    rows). Outputs as :func:`rbf_pairs`: ``out[i, j]`` for row i of a and
    row j of b, both ``out[i, j]`` and ``out[j, i]`` with ``symmetric`` (a
    is b; ``tiles_b`` unused), ``out[i, 0]`` with ``diagonal`` (row i of a
    with row i of b, aligned rows of the same patterns, each lane with its
    own partner: the same code as the pairs, so that a duplicated row's
    genRBF normalisation cancels exactly). Threads own disjoint sets of
    tiles, so every output entry is written by one thread. Returns 0, or
    ``1 + q`` if ``N`` is not positive definite for a pattern ``q``.

    The partners of a tile are the leading rows of the other side in the
    sorted order (fewer missing features; ties as in the comment above); for
    each partner the rows of the tile that pair with it are a trailing run
    of lanes. Per partner every term is computed for all lanes at once, lane
    innermost (the leading lanes' results, pairs computed from their other
    row, are dropped): the big rows' factors are stored lane by lane
    (``K_p``, ``Lam[:, J_p] G_p``, the root of ``G_p``), so that the
    partner's ``m x m`` block of ``N`` and its ``v`` are contiguous loads,
    and ``N = L D L^T`` is factored for all lanes in lockstep. Sums over the
    big row's missing features run four terms at a time over zero-padded
    factors: one pass over the lanes does four multiply-adds.
    """
    d = sa.x.shape[1]
    kmax = max(sa.missing.shape[1], sb.missing.shape[1], 1)
    k4 = (kmax + 3) // 4 * 4
    LT = lanes
    # The tile's big rows, lane by lane; ``ks`` (the tile's largest number
    # of missing features, rounded up to 4) strides the per-feature blocks.
    XT = np.empty((d, LT))
    ZT = np.empty((d, LT))
    IDX = np.zeros((k4, LT), dtype=np.uint64)
    IDXL = np.zeros((k4, LT), dtype=np.uint64)  # padding: the zero row d of lam
    ZJ = np.zeros((k4, LT))
    M1T = np.zeros((d * k4, LT))  # (Lam[:, J_p] G_p)[f, r] at f * ks + r
    LJT = np.zeros((d * k4, LT))  # Lam[J_p[r], f] at f * ks + r
    GT = np.zeros((k4 * k4, LT))  # G_p[r, s] at r * ks + s
    RT = np.zeros((k4 * k4, LT))  # root of G_p, (s, r) at s * ks + r
    KT = np.zeros((d * (d + 1) // 2, LT))  # K_p[f, g <= f] at f (f + 1) / 2 + g
    LD = np.empty(LT)
    OFF = np.empty(LT)
    WGT = np.empty(LT)
    ROW = np.empty(LT, dtype=np.int64)
    PAT = np.empty(LT, dtype=np.int64)
    KP = np.empty(LT, dtype=np.int64)
    LIM = np.empty(LT, dtype=np.int64)
    # Per partner.
    WD = np.empty(LT)
    S1 = np.empty(LT)
    S2 = np.empty(LT)
    ACC = np.empty((1, LT))
    IP = np.empty(LT)
    LR = np.empty(LT)
    LDN = np.empty(LT)
    PROD = np.empty(LT)
    LOGP = np.empty(LT)
    BITS = np.empty(LT, dtype=np.int64)
    BAD = np.empty(LT, dtype=np.int64)
    VAL = np.empty(LT)
    UD = np.empty((k4, LT))
    VB = np.empty((kmax, LT))
    NB = np.empty((kmax * (kmax + 1) // 2, LT))  # N[a, b <= a] at a (a + 1) / 2 + b
    Ja_u = sa.missing.astype(np.uint64)
    Jb_u0 = sb.missing.astype(np.uint64)
    n_pass = 1 if symmetric or diagonal else 2
    for pss in range(n_pass):
        if pss == 0:
            big, small, fbig, fsmall, tiles, sbig, srt = sa, sb, fa, fb, tiles_a, ka, kb
            Jb_u, Js_u = Ja_u, Jb_u0
        else:
            big, small, fbig, fsmall, tiles, sbig, srt = sb, sa, fb, fa, tiles_b, kb, ka
            Jb_u, Js_u = Jb_u0, Ja_u
        perm = srt.order
        kst = srt.start
        xb = big.x
        zb = big.z
        xs = small.x
        zs = small.z
        pat_b = fbig.pattern
        pat_s = fsmall.pattern
        kk_b = big.n_missing
        kk_s = small.n_missing
        Gm = fbig.gmat
        Rg = fbig.root
        ld_b = fbig.logdet
        Cq = fsmall.cinv
        cst = fsmall.cstart
        lc_s = fsmall.logdet_c
        off_b = big.off
        off_s = small.off
        w_b = big.weight
        w_s = small.weight
        n_big = xb.shape[0]
        for t0 in tiles:
            nl = min(LT, n_big - t0)
            kpmax = 0
            for ln in range(nl):
                kpmax = max(kpmax, kk_b[pat_b[sbig.order[t0 + ln]]])
            ks = (kpmax + 3) // 4 * 4
            for ln in range(nl):
                i = sbig.order[t0 + ln]
                p = pat_b[i]
                kp = kk_b[p]
                ROW[ln] = i
                LD[ln] = ld_b[p]
                OFF[ln] = off_b[i]
                WGT[ln] = w_b[i]
                if diagonal:
                    LIM[ln] = 0
                elif symmetric:
                    LIM[ln] = t0 + ln + 1
                elif pss == 0:
                    LIM[ln] = kst[kp + 1]
                else:
                    LIM[ln] = kst[kp]
                PAT[ln] = p
                KP[ln] = kp
                for r in range(ks):
                    on = r < kp
                    f = Jb_u[p, r] if on else np.uint64(0)
                    IDX[r, ln] = f
                    IDXL[r, ln] = f if on else np.uint64(d)
            # The rows' blocks, lane by lane: gathers along the lanes
            # (contiguous stores), zeros past a lane's own k_p.
            for c in range(d):
                for ln in range(nl):
                    XT[c, ln] = xb[ROW[ln], c]
                    ZT[c, ln] = zb[ROW[ln], c]
            for r in range(ks):
                for ln in range(nl):
                    ZJ[r, ln] = zb[ROW[ln], IDX[r, ln]] if r < KP[ln] else 0.0
                for c in range(d):
                    for ln in range(nl):
                        LJT[c * ks + r, ln] = lam[IDXL[r, ln], c]
                for s_ in range(ks):
                    for ln in range(nl):
                        kl = KP[ln]
                        GT[r * ks + s_, ln] = (
                            Gm[PAT[ln], r, s_] if r < kl and s_ < kl else 0.0
                        )
                        RT[s_ * ks + r, ln] = (
                            Rg[PAT[ln], s_, r] if r < kl and s_ <= r else 0.0
                        )
            # M1 = Lam[:, J_p] G_p and K_p = M1 Lam[J_p, :] (G_p symmetric),
            # all lanes at once.
            for c in range(d):
                for r in range(ks):
                    o = c * ks + r
                    for ln in range(nl):
                        M1T[o, ln] = 0.0
                    _lane_sums(M1T, o, LJT, c * ks, GT, r * ks, 0, ks, 0, nl)
            for c in range(d):
                tc = c * (c + 1) // 2
                for c2 in range(c + 1):
                    for ln in range(nl):
                        KT[tc + c2, ln] = 0.0
                    _lane_sums(KT, tc + c2, M1T, c * ks, LJT, c2 * ks, 0, ks, 0, nl)
            # The partners: with ``diagonal`` each lane's aligned row, for
            # that lane alone; else the leading rows of the other side, for
            # the lanes [l0, nl) (the others computed too, then dropped).
            # Unsigned lane bounds: indices skip the wraparound check.
            n_part = nl if diagonal else LIM[nl - 1]
            l0 = 0
            for idx in range(n_part):
                if diagonal:
                    s = srt.rank[ROW[idx]]
                    lo = np.uint64(idx)
                    hi = np.uint64(idx + 1)
                else:
                    s = idx
                    while LIM[l0] <= s:
                        l0 += 1
                    lo = np.uint64(0)
                    hi = np.uint64(nl)
                j = perm[s]
                q = pat_s[j]
                m = kk_s[q]
                # ||W delta||^2.
                for ln in range(lo, hi):
                    WD[ln] = 0.0
                c = 0
                while c + 4 <= d:
                    x0 = xs[j, c]
                    x1 = xs[j, c + 1]
                    x2 = xs[j, c + 2]
                    x3 = xs[j, c + 3]
                    for ln in range(lo, hi):
                        e0 = XT[c, ln] - x0
                        e1 = XT[c + 1, ln] - x1
                        e2 = XT[c + 2, ln] - x2
                        e3 = XT[c + 3, ln] - x3
                        WD[ln] += (e0 * e0 + e1 * e1) + (e2 * e2 + e3 * e3)
                    c += 4
                while c < d:
                    x0 = xs[j, c]
                    for ln in range(lo, hi):
                        e0 = XT[c, ln] - x0
                        WD[ln] += e0 * e0
                    c += 1
                # u = (Lam delta)[J_p] and u^T G_p u = ||R_p u||^2.
                zj = zs[j]
                for r in range(ks):
                    for ln in range(lo, hi):
                        UD[r, ln] = ZJ[r, ln] - zj[IDX[r, ln]]
                for ln in range(lo, hi):
                    S1[ln] = 0.0
                for s_ in range(kpmax):  # (rows past every lane's k_p: zero)
                    for ln in range(lo, hi):
                        ACC[0, ln] = 0.0
                    _lane_sums(ACC, 0, RT, s_ * ks, UD, 0, s_ // 4 * 4, ks, lo, hi)
                    for ln in range(lo, hi):
                        S1[ln] += ACC[0, ln] * ACC[0, ln]
                # v = (Lam delta)[J_q] - (Lam[:, J_p] G_p)[J_q] u and N.
                o = cst[q]
                for a in range(m):
                    f = Js_u[q, a]
                    v0 = zj[f]
                    for ln in range(lo, hi):
                        ACC[0, ln] = 0.0
                    _lane_sums(ACC, 0, M1T, f * ks, UD, 0, 0, ks, lo, hi)
                    for ln in range(lo, hi):
                        VB[a, ln] = (ZT[f, ln] - v0) - ACC[0, ln]
                    ta = a * (a + 1) // 2
                    tf = f * (f + 1) // 2
                    for b in range(a + 1):
                        cv = Cq[o + b]
                        g = Js_u[q, b]
                        for ln in range(lo, hi):
                            NB[ta + b, ln] = cv - KT[tf + g, ln]
                    o += a + 1
                # N = L D L^T by right-looking elimination, the lanes in
                # lockstep, v eliminated alongside: s2 = v^T N^-1 v. The
                # product of the pivots is rescaled (through its log) before
                # it can overflow or underflow; pivots <= 0 (or NaN) counted.
                for ln in range(lo, hi):
                    S2[ln] = 0.0
                    LDN[ln] = 0.0
                    PROD[ln] = 1.0
                    BAD[ln] = 0
                for c in range(m):
                    dc = c * (c + 1) // 2 + c
                    n_out = 0
                    for ln in range(lo, hi):
                        piv = NB[dc, ln]
                        ip = 1.0 / piv
                        IP[ln] = ip
                        BAD[ln] += 0 if piv > 0.0 else 1
                        pr = PROD[ln] * piv
                        PROD[ln] = pr
                        # (| not or: no branch, so that the loop vectorises)
                        n_out += (pr > _BIG) | (pr < 1.0 / _BIG)
                        vc = VB[c, ln]
                        S2[ln] += vc * vc * ip
                    if n_out:
                        for ln in range(lo, hi):
                            pr = PROD[ln]
                            if pr > _BIG or pr < 1.0 / _BIG:
                                LDN[ln] += math.log(pr)
                                PROD[ln] = 1.0
                    for r in range(c + 1, m):
                        tr = r * (r + 1) // 2
                        for ln in range(lo, hi):
                            lr = NB[tr + c, ln] * IP[ln]
                            LR[ln] = lr
                            VB[r, ln] -= lr * VB[c, ln]
                        c2 = c + 1
                        while c2 + 2 <= r + 1:
                            t1 = c2 * (c2 + 1) // 2 + c
                            t2 = t1 + c2 + 1
                            for ln in range(lo, hi):
                                lr = LR[ln]
                                NB[tr + c2, ln] -= lr * NB[t1, ln]
                                NB[tr + c2 + 1, ln] -= lr * NB[t2, ln]
                            c2 += 2
                        if c2 <= r:
                            t1 = c2 * (c2 + 1) // 2 + c
                            for ln in range(lo, hi):
                                NB[tr + c2, ln] -= LR[ln] * NB[t1, ln]
                base_v = lc_s[q]
                offj = off_s[j]
                _lane_logs(PROD, LOGP, BITS, lo, hi)
                for ln in range(lo, hi):
                    quad = WD[ln] - S1[ln] - S2[ln]
                    quad = quad if quad > 0.0 else 0.0
                    ldn = LDN[ln] + LOGP[ln]
                    VAL[ln] = (
                        OFF[ln] + offj - 0.5 * (LD[ln] + base_v + ldn) - gamma * quad
                    )
                for ln in range(lo if diagonal else np.uint64(l0), hi):
                    if BAD[ln]:
                        return 1 + q
                    i = ROW[ln]
                    val = VAL[ln]
                    if diagonal:
                        out[i, 0] = val
                        continue
                    ia = i if pss == 0 else j
                    jb = j if pss == 0 else i
                    if accumulate:
                        out[ia, jb] += WGT[ln] * w_s[j] * math.exp(val)
                    else:
                        out[ia, jb] = val
                        if symmetric:
                            out[jb, ia] = val
    return 0


# -- Euclidean row pairs: reduction to the shared missing features ---------------
#
# In the Euclidean metric ``P_i = I + 2 gamma C_i`` is the identity outside
# ``J_i``, and with ``D_i = I - P_i^-1`` (per pattern) the pair matrix
# ``M = P_i + P_j - I`` factors as ``M = P_i (I - D_i D_j) P_j`` (embedded
# d x d). ``D_i D_j`` couples the two rows only through the shared missing
# features ``H = J_i & J_j`` (``h`` of them), so (docs/theory.rst, "Work in the
# shared missing features")::
#
#   logdet M = logdet P_i + logdet P_j + logdet Z,
#   Z = I_h - D_j[H, H] D_i[H, H] = (P_i^-1)[H, H] + (P_j^-1)[H, H] D_i[H, H],
#
# the second form a sum without cancellation when ``gamma C`` is large. The
# quadratic term is the row-pair Woodbury form with ``N^-1`` expanded once
# more on ``H``::
#
#   delta^T M^-1 delta = (||delta||^2 - b_ij) - (b_ji - 2 s.t + s^T D_j s + c)
#
# with ``b_ij = delta_Ji^T D_i delta_Ji = ||R_i delta_Ji||^2`` (``R_i^T R_i =
# D_i``), ``s = (D_i delta_Ji)[H]``, ``t = (D_j delta_Jj)[H]``, ``e = t -
# D_j[H, H] s`` and ``c = e^T D_i[H, H] Z^-1 e``; the result is clipped at 0
# against rounding. ``||delta||^2``, ``b_ij`` and ``b_ji`` are the O(k^2) part:
# they are computed for a tile of rows against a block of partners with the
# partner index innermost (contiguous, vectorised), the O(h k + h^3) rest per
# pair.

# Rows of a tile and partners of a block.
_TILE = 64


@njit(cache=True, nogil=True, fastmath=_FAST)
def rbf_tiles(
    tiles: np.ndarray,
    sa: SideArrays,
    sb: SideArrays,
    xaT: np.ndarray,
    xbT: np.ndarray,
    fa: RowFactors,
    fb: RowFactors,
    gamma: float,
    symmetric: bool,
    accumulate: bool,
    diagonal: bool,
    out: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """Euclidean expected RBF of the rows of a in the tiles ``tiles`` (tile
    ``t`` holds rows ``[t * _TILE, (t + 1) * _TILE)``) against all rows of b;
    outputs and flags as :func:`rbf_rows`. ``xaT``, ``xbT``: the rows
    transposed (``d x n``). Returns 0, or ``1 + p`` if a matrix of pattern
    ``p`` of a is singular.
    """
    na = sa.x.shape[0]
    nb = sb.x.shape[0]
    xa = sa.x
    xb = sb.x
    kk_a = sa.n_missing
    kk_b = sb.n_missing
    J_a = sa.missing
    J_b = sb.missing
    pat_a = fa.pattern
    pat_b = fb.pattern
    R_a = fa.root
    R_b = fb.root
    D_a = fa.dmat
    D_b = fb.dmat
    Pi_a = fa.pinv
    Pi_b = fb.pinv
    ld_a = fa.logdet
    ld_b = fb.logdet
    pos_b = fb.position
    off_a = sa.off
    off_b = sb.off
    w_a = sa.weight
    w_b = sb.weight
    kmax = max(J_a.shape[1], J_b.shape[1])
    T = _TILE
    d = xa.shape[1]
    Dl = np.empty((kmax, T))
    accv = np.empty(T)
    XA = np.empty((d, T))
    XB = np.empty((d, T))
    BA = np.empty((T, T))
    BB = np.empty((T, T))
    ND = np.empty((T, T))
    VAL = np.empty((T, T))
    # Unsigned: indices loaded from them skip the wraparound check.
    HI = np.empty((T, kmax), dtype=np.uint64)
    HJ = np.empty((T, kmax), dtype=np.uint64)
    HC = np.empty(T, dtype=np.int64)
    LISTS = np.empty((kmax + 1, T), dtype=np.int64)
    NH = np.empty(kmax + 1, dtype=np.int64)
    gi = np.empty(kmax)
    gj = np.empty(kmax)
    sv = np.empty(kmax)
    tv = np.empty(kmax)
    uv = np.empty(kmax)
    Z = np.empty((kmax, kmax))
    Di = np.empty((kmax, kmax))
    Dj = np.empty((kmax, kmax))
    Xi = np.empty((kmax, kmax))
    Yj = np.empty((kmax, kmax))
    LDZ = np.empty(T)
    EXTRA = np.empty(T)
    for tile in tiles:
        i0 = tile * T
        i1 = min(i0 + T, na)
        ti = i1 - i0
        j_end = i1 if symmetric else nb
        n_blocks = 1 if diagonal else (j_end + T - 1) // T
        # The tile's rows, transposed (partners of the block's rows); a
        # buffer indexed by loop counters only: a computed index would be
        # checked for wraparound and turn the vector loads into gathers.
        if not diagonal:
            for f in range(d):
                for t in range(ti):
                    XA[f, t] = xaT[f, i0 + t]
        for blk in range(n_blocks):
            # With ``diagonal`` the block is the tile itself (aligned rows).
            j0 = i0 if diagonal else blk * T
            j1 = i1 if diagonal else min(j0 + T, j_end)
            tj = j1 - j0
            if not diagonal:
                for f in range(d):
                    for t in range(tj):
                        XB[f, t] = xbT[f, j0 + t]
            # Sweeps: ||delta||^2 and b_ij of each row of the tile against
            # the block (partners innermost), b_ji of each row of the block
            # against the tile. With ``diagonal`` one partner, in column 0.
            w = 1 if diagonal else tj
            for il in range(ti):
                i = i0 + il
                p = pat_a[i]
                k = kk_a[p]
                if diagonal:
                    for f in range(d):
                        XB[f, 0] = xb[i, f]
                for t in range(w):
                    ND[il, t] = 0.0
                    BA[il, t] = 0.0
                for f in range(d):
                    v = xa[i, f]
                    for t in range(w):
                        df = v - XB[f, t]
                        ND[il, t] += df * df
                for r in range(k):
                    f = J_a[p, r]
                    v = xa[i, f]
                    for t in range(w):
                        Dl[r, t] = v - XB[f, t]
                for s_ in range(k):
                    for t in range(w):
                        accv[t] = 0.0
                    for r in range(s_, k):
                        coef = R_a[p, s_, r]
                        for t in range(w):
                            accv[t] += coef * Dl[r, t]
                    for t in range(w):
                        BA[il, t] += accv[t] * accv[t]
            wt = 1 if diagonal else ti
            for jl in range(tj):
                j = j0 + jl
                q = pat_b[j]
                k = kk_b[q]
                if diagonal:
                    for f in range(d):
                        XA[f, 0] = xa[j, f]
                for t in range(wt):
                    BB[jl, t] = 0.0
                for r in range(k):
                    f = J_b[q, r]
                    v = xb[j, f]
                    for t in range(wt):
                        Dl[r, t] = v - XA[f, t]
                for s_ in range(k):
                    for t in range(wt):
                        accv[t] = 0.0
                    for r in range(s_, k):
                        coef = R_b[q, s_, r]
                        for t in range(wt):
                            accv[t] += coef * Dl[r, t]
                    for t in range(wt):
                        BB[jl, t] += accv[t] * accv[t]
            # The O(hk + h^3) rest, pair by pair; see the comment above
            # :func:`rbf_tiles`.
            for il in range(ti):
                i = i0 + il
                p = pat_a[i]
                if diagonal:
                    jlo = il
                    jn = 1
                else:
                    jlo = 0
                    jn = min(tj, i - j0 + 1) if symmetric else tj
                jb = j0 + jlo
                kp = kk_a[p]
                for hh in range(kp + 1):
                    NH[hh] = 0
                # H of each pair, positions in J_i (HI) and J_j (HJ).
                # Branch-free; the pairs are then sorted by h so that the
                # branches and loop lengths repeat from one pair to the next.
                for c in range(jn):
                    q = pat_b[jb + c]
                    h = 0
                    for r in range(kp):
                        pq = pos_b[q, J_a[p, r]]
                        HI[c, h] = np.uint64(r)
                        HJ[c, h] = np.uint64(max(pq, 0))
                        h += 1 if pq >= 0 else 0
                    HC[c] = h
                    LDZ[c] = 0.0
                    EXTRA[c] = 0.0
                    LISTS[h, NH[h]] = c
                    NH[h] += 1
                for r in range(kp):
                    gi[r] = xa[i, J_a[p, r]]
                # h = 1: scalars.
                for idx in range(NH[1] if kp >= 1 else 0):
                    c = LISTS[1, idx]
                    j = jb + c
                    q = pat_b[j]
                    m = kk_b[q]
                    a1 = HI[c, 0]
                    b1 = HJ[c, 0]
                    s0 = 0.0
                    for r in range(kp):
                        s0 += D_a[p, a1, r] * (gi[r] - xb[j, J_a[p, r]])
                    t0 = 0.0
                    for r in range(m):
                        f = J_b[q, r]
                        t0 += D_b[q, b1, r] * (xa[i, f] - xb[j, f])
                    di = D_a[p, a1, a1]
                    u0 = D_b[q, b1, b1] * s0
                    e0 = t0 - u0
                    z = Pi_a[p, a1, a1] + Pi_b[q, b1, b1] * di
                    if not z > 0.0:
                        return 1 + p
                    LDZ[c] = math.log(z)
                    EXTRA[c] = s0 * (u0 - 2.0 * t0) + di * e0 * (e0 / z)
                # h = 2: closed form of the 2 x 2 system.
                for idx in range(NH[2] if kp >= 2 else 0):
                    c = LISTS[2, idx]
                    j = jb + c
                    q = pat_b[j]
                    m = kk_b[q]
                    a1 = HI[c, 0]
                    a2 = HI[c, 1]
                    b1 = HJ[c, 0]
                    b2 = HJ[c, 1]
                    s0 = 0.0
                    s1 = 0.0
                    for r in range(kp):
                        g = gi[r] - xb[j, J_a[p, r]]
                        s0 += D_a[p, a1, r] * g
                        s1 += D_a[p, a2, r] * g
                    t0 = 0.0
                    t1 = 0.0
                    for r in range(m):
                        f = J_b[q, r]
                        g = xa[i, f] - xb[j, f]
                        t0 += D_b[q, b1, r] * g
                        t1 += D_b[q, b2, r] * g
                    d00 = D_a[p, a1, a1]
                    d01 = D_a[p, a1, a2]
                    d10 = D_a[p, a2, a1]
                    d11 = D_a[p, a2, a2]
                    u0 = D_b[q, b1, b1] * s0 + D_b[q, b1, b2] * s1
                    u1 = D_b[q, b2, b1] * s0 + D_b[q, b2, b2] * s1
                    e0 = t0 - u0
                    e1 = t1 - u1
                    y00 = Pi_b[q, b1, b1]
                    y01 = Pi_b[q, b1, b2]
                    y10 = Pi_b[q, b2, b1]
                    y11 = Pi_b[q, b2, b2]
                    z00 = Pi_a[p, a1, a1] + y00 * d00 + y01 * d10
                    z01 = Pi_a[p, a1, a2] + y00 * d01 + y01 * d11
                    z10 = Pi_a[p, a2, a1] + y10 * d00 + y11 * d10
                    z11 = Pi_a[p, a2, a2] + y10 * d01 + y11 * d11
                    det = z00 * z11 - z01 * z10
                    if not det > 0.0:
                        return 1 + p
                    w0 = (z11 * e0 - z01 * e1) / det
                    w1 = (z00 * e1 - z10 * e0) / det
                    LDZ[c] = math.log(det)
                    EXTRA[c] = (
                        s0 * (u0 - 2.0 * t0)
                        + s1 * (u1 - 2.0 * t1)
                        + (d00 * e0 + d01 * e1) * w0
                        + (d10 * e0 + d11 * e1) * w1
                    )
                # h = 3: cofactors of the 3 x 3 system.
                for idx in range(NH[3] if kp >= 3 else 0):
                    c = LISTS[3, idx]
                    j = jb + c
                    q = pat_b[j]
                    m = kk_b[q]
                    a0 = HI[c, 0]
                    b0 = HJ[c, 0]
                    a1 = HI[c, 1]
                    b1 = HJ[c, 1]
                    a2 = HI[c, 2]
                    b2 = HJ[c, 2]
                    s0 = 0.0
                    s1 = 0.0
                    s2 = 0.0
                    for r in range(kp):
                        g = gi[r] - xb[j, J_a[p, r]]
                        s0 += D_a[p, a0, r] * g
                        s1 += D_a[p, a1, r] * g
                        s2 += D_a[p, a2, r] * g
                    t0 = 0.0
                    t1 = 0.0
                    t2 = 0.0
                    for r in range(m):
                        f = J_b[q, r]
                        g = xa[i, f] - xb[j, f]
                        t0 += D_b[q, b0, r] * g
                        t1 += D_b[q, b1, r] * g
                        t2 += D_b[q, b2, r] * g
                    d00 = D_a[p, a0, a0]
                    d01 = D_a[p, a0, a1]
                    d02 = D_a[p, a0, a2]
                    d10 = D_a[p, a1, a0]
                    d11 = D_a[p, a1, a1]
                    d12 = D_a[p, a1, a2]
                    d20 = D_a[p, a2, a0]
                    d21 = D_a[p, a2, a1]
                    d22 = D_a[p, a2, a2]
                    u0 = D_b[q, b0, b0] * s0 + D_b[q, b0, b1] * s1 + D_b[q, b0, b2] * s2
                    u1 = D_b[q, b1, b0] * s0 + D_b[q, b1, b1] * s1 + D_b[q, b1, b2] * s2
                    u2 = D_b[q, b2, b0] * s0 + D_b[q, b2, b1] * s1 + D_b[q, b2, b2] * s2
                    e0 = t0 - u0
                    e1 = t1 - u1
                    e2 = t2 - u2
                    y00 = Pi_b[q, b0, b0]
                    y01 = Pi_b[q, b0, b1]
                    y02 = Pi_b[q, b0, b2]
                    y10 = Pi_b[q, b1, b0]
                    y11 = Pi_b[q, b1, b1]
                    y12 = Pi_b[q, b1, b2]
                    y20 = Pi_b[q, b2, b0]
                    y21 = Pi_b[q, b2, b1]
                    y22 = Pi_b[q, b2, b2]
                    z00 = Pi_a[p, a0, a0] + y00 * d00 + y01 * d10 + y02 * d20
                    z01 = Pi_a[p, a0, a1] + y00 * d01 + y01 * d11 + y02 * d21
                    z02 = Pi_a[p, a0, a2] + y00 * d02 + y01 * d12 + y02 * d22
                    z10 = Pi_a[p, a1, a0] + y10 * d00 + y11 * d10 + y12 * d20
                    z11 = Pi_a[p, a1, a1] + y10 * d01 + y11 * d11 + y12 * d21
                    z12 = Pi_a[p, a1, a2] + y10 * d02 + y11 * d12 + y12 * d22
                    z20 = Pi_a[p, a2, a0] + y20 * d00 + y21 * d10 + y22 * d20
                    z21 = Pi_a[p, a2, a1] + y20 * d01 + y21 * d11 + y22 * d21
                    z22 = Pi_a[p, a2, a2] + y20 * d02 + y21 * d12 + y22 * d22
                    c00 = z11 * z22 - z12 * z21
                    c01 = z12 * z20 - z10 * z22
                    c02 = z10 * z21 - z11 * z20
                    c10 = z02 * z21 - z01 * z22
                    c11 = z00 * z22 - z02 * z20
                    c12 = z01 * z20 - z00 * z21
                    c20 = z01 * z12 - z02 * z11
                    c21 = z02 * z10 - z00 * z12
                    c22 = z00 * z11 - z01 * z10
                    det = z00 * c00 + z01 * c01 + z02 * c02
                    if not det > 0.0:
                        return 1 + p
                    w0 = (c00 * e0 + c10 * e1 + c20 * e2) / det
                    w1 = (c01 * e0 + c11 * e1 + c21 * e2) / det
                    w2 = (c02 * e0 + c12 * e1 + c22 * e2) / det
                    LDZ[c] = math.log(det)
                    EXTRA[c] = (
                        s0 * (u0 - 2.0 * t0)
                        + s1 * (u1 - 2.0 * t1)
                        + s2 * (u2 - 2.0 * t2)
                        + (d00 * e0 + d01 * e1 + d02 * e2) * w0
                        + (d10 * e0 + d11 * e1 + d12 * e2) * w1
                        + (d20 * e0 + d21 * e1 + d22 * e2) * w2
                    )
                # h > 3: gathered blocks and LU with partial pivoting.
                # (bucket 0, unused, receives the pairs of h > 3 by h)
                n3 = 0
                for hh in range(4, kp + 1):
                    for idx in range(NH[hh]):
                        LISTS[0, n3] = LISTS[hh, idx]
                        n3 += 1
                for idx in range(n3):
                    c = LISTS[0, idx]
                    j = jb + c
                    q = pat_b[j]
                    h = HC[c]
                    m = kk_b[q]
                    for r in range(kp):
                        sv[r] = gi[r] - xb[j, J_a[p, r]]
                    for r in range(m):
                        f = J_b[q, r]
                        gj[r] = xa[i, f] - xb[j, f]
                    # s = (D_i delta_Ji)[H], t = (D_j delta_Jj)[H].
                    for e in range(h):
                        acc = 0.0
                        for r in range(kp):
                            acc += D_a[p, HI[c, e], r] * sv[r]
                        uv[e] = acc
                        acc = 0.0
                        for r in range(m):
                            acc += D_b[q, HJ[c, e], r] * gj[r]
                        tv[e] = acc
                    for e in range(h):
                        sv[e] = uv[e]
                    # The H x H blocks, gathered once.
                    for e1 in range(h):
                        a1 = HI[c, e1]
                        b1 = HJ[c, e1]
                        for e2 in range(h):
                            a2 = HI[c, e2]
                            b2 = HJ[c, e2]
                            Di[e1, e2] = D_a[p, a1, a2]
                            Dj[e1, e2] = D_b[q, b1, b2]
                            Xi[e1, e2] = Pi_a[p, a1, a2]
                            Yj[e1, e2] = Pi_b[q, b1, b2]
                    # u = D_j[H, H] s; e = t - u (in tv); quad = -2 s.t + s.u.
                    quad = 0.0
                    for e in range(h):
                        acc = 0.0
                        for e2 in range(h):
                            acc += Dj[e, e2] * sv[e2]
                        quad += sv[e] * (acc - 2.0 * tv[e])
                        tv[e] -= acc
                    # Z = P_i^-1[H, H] + P_j^-1[H, H] D_i[H, H].
                    for e1 in range(h):
                        for e2 in range(h):
                            acc = Xi[e1, e2]
                            for e3 in range(h):
                                acc += Yj[e1, e3] * Di[e3, e2]
                            Z[e1, e2] = acc
                    # LU with partial pivoting; |det Z| from the pivots
                    # (products rescaled before they underflow).
                    for e in range(h):
                        uv[e] = tv[e]
                    prod = 1.0
                    total = 0.0
                    for col in range(h):
                        piv = col
                        best = abs(Z[col, col])
                        for r in range(col + 1, h):
                            v = abs(Z[r, col])
                            if v > best:
                                best = v
                                piv = r
                        if not best > 0.0:
                            return 1 + p
                        if piv != col:
                            for c2 in range(h):
                                tmp = Z[col, c2]
                                Z[col, c2] = Z[piv, c2]
                                Z[piv, c2] = tmp
                            tmp = uv[col]
                            uv[col] = uv[piv]
                            uv[piv] = tmp
                        prod *= best
                        if prod < 1.0 / _BIG:
                            total += math.log(prod)
                            prod = 1.0
                        inv = 1.0 / Z[col, col]
                        for r in range(col + 1, h):
                            fac = Z[r, col] * inv
                            Z[r, col] = fac
                            for c2 in range(col + 1, h):
                                Z[r, c2] -= fac * Z[col, c2]
                            uv[r] -= fac * uv[col]
                    # y = Z^-1 e (back substitution, in uv).
                    for r in range(h - 1, -1, -1):
                        acc = uv[r]
                        for c2 in range(r + 1, h):
                            acc -= Z[r, c2] * uv[c2]
                        uv[r] = acc / Z[r, r]
                    # c = (D_i[H, H] e) . y.
                    for e1 in range(h):
                        acc = 0.0
                        for e2 in range(h):
                            acc += Di[e1, e2] * tv[e2]
                        quad += acc * uv[e1]
                    LDZ[c] = total + math.log(prod)
                    EXTRA[c] = quad
                for c in range(jn):
                    jl = jlo + c
                    j = j0 + jl
                    # Column of the pair in the sweeps (0 with ``diagonal``).
                    cj = 0 if diagonal else jl
                    ci = 0 if diagonal else il
                    quad = (ND[il, cj] - BA[il, cj]) - (BB[jl, ci] + EXTRA[c])
                    if not quad > 0.0:
                        quad = 0.0
                    logdet = ld_a[p] + ld_b[pat_b[j]] + LDZ[c]
                    val = off_a[i] + off_b[j] - 0.5 * logdet - gamma * quad
                    if diagonal:
                        out[i, 0] = val
                    elif accumulate:
                        out[i, j] += w_a[i] * w_b[j] * math.exp(val)
                    else:
                        VAL[il, jl] = val
            if diagonal or accumulate:
                continue
            for il in range(ti):
                i = i0 + il
                row = out[i]
                vr = VAL[il]
                jmax = min(tj, i - j0 + 1) if symmetric else tj
                for jl in range(jmax):
                    row[j0 + jl] = vr[jl]
            if symmetric:
                # The mirrored entries, row by row of the block.
                for jl in range(tj):
                    j = j0 + jl
                    row = out[j]
                    for il in range(max(0, j - i0 + 1), ti):
                        row[i0 + il] = VAL[il, jl]
    return 0
