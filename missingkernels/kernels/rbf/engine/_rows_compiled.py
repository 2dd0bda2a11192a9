"""Compiled Mahalanobis row-pair loop of the expected RBF kernel (numba).

Woodbury on the smaller missing set of each pair of rows, in vector lanes
(formulas below; the pattern-pair forms they refine are in
:mod:`._pairs_compiled`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from ._linalg_compiled import BIG
from ._numba_setup import FAST

if TYPE_CHECKING:
    from ._layouts import RowFactors, SideArrays, SortedRows

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


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
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


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
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
# Fewer lanes in high dimensions (see _gram._lanes): a tile keeps d (d + 1) / 2
# entries of K_p per lane.
LANES = 64


# (error_model="numpy": no zero-division branch, so that the loops over the
# lanes vectorise; pivots <= 0 are caught by their count.)
@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
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
    features, :class:`._layouts.SortedRows`) and holds ``lanes`` rows; ``lam``:
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
                        n_out += (pr > BIG) | (pr < 1.0 / BIG)
                        vc = VB[c, ln]
                        S2[ln] += vc * vc * ip
                    if n_out:
                        for ln in range(lo, hi):
                            pr = PROD[ln]
                            if pr > BIG or pr < 1.0 / BIG:
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
