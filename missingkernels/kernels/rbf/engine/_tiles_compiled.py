"""Compiled Euclidean row-pair loop of the expected RBF kernel (numba).

Tiles of rows against blocks of partners, reduced to the shared missing
features of each pair (formulas below; the pattern-pair forms they refine are in
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
    from ._layouts import RowFactors, SideArrays

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
TILE = 64


@njit(cache=True, nogil=True, fastmath=FAST)
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
    ``t`` holds rows ``[t * TILE, (t + 1) * TILE)``) against all rows of b;
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
    T = TILE
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
                        if prod < 1.0 / BIG:
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
