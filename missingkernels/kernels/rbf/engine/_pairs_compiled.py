"""Compiled pattern-pair loops of the expected RBF kernel (numba).

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
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from ._linalg_compiled import (
    mahalanobis_factors,
    project,
    schur_factor,
    schur_transform,
    union_factor,
    union_transform,
)
from ._numba_setup import FAST

if TYPE_CHECKING:
    from ._layouts import MahalanobisFactors, SideArrays

# -- pair loops -----------------------------------------------------------------


# Patterns with at least this many rows keep the factors of all their pattern
# pairs and finish one output row at a time (cache-friendly writes); smaller
# ones use each factor right away (no traffic through stored factors).
_STORE_FACTORS_MIN_ROWS = 8
# Rows of a pattern finished together against the columns of another.
_BLOCK = 4


@njit(cache=True, nogil=True, fastmath=FAST)
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
                logdet = schur_factor(
                    p, q, sa, sb, VTa, ldKa, gamma, Ys[h], LKs[h], invKs[h], gathered
                )
                k = kp + sb.n_missing[q]
            else:
                k, logdet = union_factor(
                    p, q, sa, sb, gamma, Us[h], posU[h], LKs[h], invKs[h]
                )
            if math.isnan(logdet):
                return 1 + p
            ks[h] = k
            half_logdet[h] = 0.5 * logdet
            for c in range(start_b[q], start_b[q + 1]):
                rb = order_b[c]
                if mahal:
                    project(zb[rb], WTa[p], sa.missing[p], kp, row, 0)
                    own = sb.own[rb]
                    for s in range(k - kp):
                        row[kp + s] = own[s]
                    schur_transform(kp, k - kp, Ys[h], LKs[h], invKs[h], row)
                else:
                    union_transform(xb[rb], Us[h], k, LKs[h], invKs[h], row)
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
                        project(za[ra], sb.factor_t[q], sb.missing[q], k - kp, row, kp)
                        schur_transform(kp, k - kp, Ys[0], LKs[0], invKs[0], row)
                    else:
                        union_transform(xa[ra], Us[0], k, LKs[0], invKs[0], row)
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


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
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
            project(sa.z[ra], sb.factor_t[q], sb.missing[q], k - kp, row, kp)
            schur_transform(kp, k - kp, Yt, LK, invK, row)
        else:
            union_transform(xa[ra], U, k, LK, invK, row)
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


@njit(cache=True, nogil=True, fastmath=FAST)
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
            logdet = schur_factor(p, p, sa, sb, VTa, ldKa, gamma, Y, LK, invK, gathered)
            k = 2 * kp
        else:
            kp = 0
            k, logdet = union_factor(p, p, sa, sb, gamma, U, posU, LK, invK)
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
                project(diff, WTa[p], sa.missing[p], kp, buf, 0)
                project(diff, sb.factor_t[p], sb.missing[p], kp, buf, kp)
                schur_transform(kp, kp, Y, LK, invK, buf)
                for s in range(k):
                    total -= 2.0 * gamma * buf[s] * buf[s]
                if total < 0.0:
                    total = 0.0
            else:
                union_transform(diff, U, k, LK, invK, buf)
                for s in range(k):
                    total += buf[s] * buf[s]
            out[r] = -0.5 * logdet - gamma * total
    return 0
