"""Compiled finish of the expected RBF over factor conditionals (numba).

For rows ``i``, ``j`` with missing sets ``J_i``, ``J_j`` under a factor
density (``docs/theory.rst``, "Factor-analytic density"), with
``t = 2 gamma psi`` and ``U_i = sqrt(2 gamma) W_{J_i} R_i``
(``R_i R_i^T`` the posterior covariance of the factors, ``U_i`` zero on
the observed features),
``A = I + 2 gamma (C_i + C_j) = Delta + [U_i, U_j] [U_i, U_j]^T`` with
``Delta_k = 1 + t_k ([k in J_i] + [k in J_j])``. By the matrix
determinant lemma and Woodbury, with ``K = I_2q + [U_i, U_j]^T Delta^-1
[U_i, U_j]`` and ``b = [U_i, U_j]^T Delta^-1 delta``::

    log E = -1/2 (log det Delta + log det K)
            - gamma (delta^T Delta^-1 delta - |L^-1 b|^2),   L L^T = K.

The sums over features behind ``K``, ``b``, ``log det Delta`` and
``delta^T Delta^-1 delta`` are bilinear in per-row features of ``i`` and
``j``: those that involve the entries ``x`` are matrix products over tiles
of rows (:mod:`._cell`); those over ``J_i & J_j`` that do not (the
``q x q`` blocks ``N``, ``N'`` and the log determinant part) are read from
a table of subset sums, one row per group of features, indexed by the AND
of the two rows' mask codes. This module finishes each pair: adds the
table rows, assembles ``K``, factors it and solves, vectorised over the
pairs of a row with a tile of columns (the lanes; one Cholesky helper for
both metrics). The bracket is clipped at 0 against rounding. Every
function releases the GIL.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engine import FAST
from ._layouts import COLS

# Columns per tile (the lanes): a constant, so that every lane loop has a
# known trip count. The right side's per-row arrays are padded to it.
LANES = COLS


@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
def _lanes_factor_solve(M, z, m, B, quad, prod, minp, rinv):  # pragma: no cover
    """Cholesky factors of ``B`` packed ``m x m`` matrices, lane by lane.

    ``M`` (``(m (m + 1) / 2, B)``, lower triangles by rows, one matrix per
    lane) becomes ``L`` in place, ``z`` (``(m, B)``) becomes ``L^-1 z``
    and ``|L^-1 z|^2`` is taken off ``quad``. ``prod`` receives the product
    of the pivots (``det L``), ``minp`` the smallest pivot before its
    square root (not positive: the matrix is not positive definite) and
    ``rinv`` (``(m, B)``) the pivots' reciprocals."""
    for ln in range(B):
        prod[ln] = 1.0
        minp[ln] = 1.0
    for col in range(m):
        rc = col * (col + 1) // 2
        for t in range(col):
            for ln in range(B):
                M[rc + col, ln] -= M[rc + t, ln] * M[rc + t, ln]
        for ln in range(B):
            p = M[rc + col, ln]
            minp[ln] = min(minp[ln], p)
            p = math.sqrt(max(p, 1e-300))
            M[rc + col, ln] = p
            prod[ln] *= p
            rinv[col, ln] = 1.0 / p
        for row in range(col + 1, m):
            rr = row * (row + 1) // 2
            for t in range(col):
                for ln in range(B):
                    M[rr + col, ln] -= M[rr + t, ln] * M[rc + t, ln]
            for ln in range(B):
                M[rr + col, ln] *= rinv[col, ln]
    # |L^-1 z|^2 by forward substitution, taken off the quadratic form.
    for row in range(m):
        rr = row * (row + 1) // 2
        for t in range(row):
            for ln in range(B):
                z[row, ln] -= M[rr + t, ln] * z[t, ln]
        for ln in range(B):
            v = z[row, ln] * rinv[row, ln]
            z[row, ln] = v
            quad[ln] -= v * v


@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
def _lanes_table_sums(
    table, codesa, codesb, i, j0, nw, NN, acc
):  # pragma: no cover - compiled
    """``NN[:, ln]``: the sums over ``J_i & J_(j0 + ln)`` for the first
    ``nw`` lanes, one row of ``table`` (``(G, 2^bits, P)``) per group of
    features, indexed by the AND of the two rows' codes (``G`` a multiple
    of 4; ``acc`` a scratch array of ``P``)."""
    G = table.shape[0]
    P = table.shape[2]
    for ln in range(nw):
        j = j0 + ln
        # Four groups per pass over acc.
        c0 = codesa[i, 0] & codesb[j, 0]
        c1 = codesa[i, 1] & codesb[j, 1]
        c2 = codesa[i, 2] & codesb[j, 2]
        c3 = codesa[i, 3] & codesb[j, 3]
        for s in range(P):
            acc[s] = (table[0, c0, s] + table[1, c1, s]) + (
                table[2, c2, s] + table[3, c3, s]
            )
        for g in range(4, G, 4):
            c0 = codesa[i, g] & codesb[j, g]
            c1 = codesa[i, g + 1] & codesb[j, g + 1]
            c2 = codesa[i, g + 2] & codesb[j, g + 2]
            c3 = codesa[i, g + 3] & codesb[j, g + 3]
            for s in range(P):
                acc[s] += (table[g, c0, s] + table[g + 1, c1, s]) + (
                    table[g + 2, c2, s] + table[g + 3, c3, s]
                )
        for s in range(P):
            NN[s, ln] = acc[s]


@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
def _lanes_write(
    i, j0, B, m, M, ld, quad, prod, minp, gamma, symmetric, offa, offb, out
):  # pragma: no cover - compiled
    """``out[i, j0 + ln] = -1/2 (ld + 2 log det L) - gamma max(quad, 0) +
    offa[i] + offb[j]`` for the lanes factored by :func:`_lanes_factor_solve`
    (``j <= i`` when ``symmetric``). Returns 0, or ``1 + i`` if a lane's
    matrix is not positive definite."""
    for ln in range(B):
        j = j0 + ln
        if symmetric and j > i:
            break
        if not minp[ln] > 0.0:
            return 1 + i
        # One log per pair; the pivots' logs if the product left the range.
        logdet = math.log(prod[ln])
        if not (prod[ln] > 1e-300 and prod[ln] < 1e300):
            logdet = 0.0
            for row in range(m):
                logdet += math.log(M[row * (row + 1) // 2 + row, ln])
        out[i, j] = (
            -0.5 * (ld[ln] + 2.0 * logdet)
            - gamma * max(quad[ln], 0.0)
            + offa[i]
            + offb[j]
        )
    return 0


@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
def finish_tile(
    i0,  # first row of the tile (of side a)
    j0,  # first column of the tile (of side b)
    nb,  # columns of the tile
    G1,  # (r, 2q + 1, B): A2, B3, quad part
    G2,  # (r, q, B): A1 = sum_k m_ik x_ik c_k m_jk w_k
    G3,  # (r, q, B): B1 = sum_k x_ik inv1_k m_jk w_k
    G4,  # (r, B): quad part
    Ha,  # (na, q, q) per-row P + sum_J w w^T / (1 + t), of every row of a
    ldPa,  # (na,) log det P
    pa,  # (na, q)
    cqa,  # (na,)
    lda,  # (na,)
    offa,  # (na,)
    Hb,  # (q, q, nb_all): the same for the rows of b, the row index last
    ldPb,
    pb,
    cqb,
    ldb,
    offb,
    table,  # (G, 2^bits, P): sums over the features of a group, by mask
    codesa,  # (na, G): the missing mask of each row, by groups of bits
    codesb,  # (nb_all, G)
    gamma,
    symmetric,
    out,  # (na, nb_all)
):  # pragma: no cover - compiled
    """``out[i, j] = log E k + offa[i] + offb[j]`` for the tile's pairs
    (``j <= i`` when ``symmetric``), from the tile's matrix products and the
    sums over ``J_i & J_j`` read from ``table`` (``N``, ``N'``, then the log
    determinant part: one row of each group per pair, indexed by the AND
    of the two rows' codes).

    ``K' = [[H_i + N', N], [N, H_j + N']]`` (``N = sum_{J_i & J_j} w w^T /
    (1 + 2t)``, ``N'`` the same with ``1/(1 + 2t) - 1/(1 + t)``) is
    ``diag(R_i, R_j)^-T K diag(R_i, R_j)^-1``, so ``log det K = log det K' -
    log det P_i - log det P_j`` and ``b^T K^-1 b = beta^T K'^-1 beta``.
    Returns 0, or ``1 + i`` for a row whose ``K'`` is not positive definite
    (non-finite inputs)."""
    r = G1.shape[0]
    q = G2.shape[1]
    S = q * (q + 1) // 2
    m = 2 * q
    P = table.shape[2]
    B = LANES
    M = np.empty((m * (m + 1) // 2, B))
    z = np.empty((m, B))
    NN = np.zeros((P, B))
    acc = np.empty(P)
    quad = np.empty(B)
    ld = np.empty(B)
    prod = np.empty(B)
    minp = np.empty(B)
    rinv = np.empty((m, B))
    for ii in range(r):
        i = i0 + ii
        if symmetric and j0 > i:
            continue
        # The tile's columns (up to the diagonal when symmetric); the other
        # lanes compute on padding (or a previous row's sums) and are not read.
        nw = min(nb, i - j0 + 1) if symmetric else nb
        _lanes_table_sums(table, codesa, codesb, i, j0, nw, NN, acc)
        for ln in range(B):
            quad[ln] = G4[ii, ln] + G1[ii, 2 * q, ln] + cqa[i] + cqb[j0 + ln]
            ld[ln] = (
                NN[2 * S, ln] + lda[i] + ldb[j0 + ln] - ldPa[i] - ldPb[j0 + ln]
            )  # fmt: skip
        for a in range(q):
            ra = a * (a + 1) // 2
            rq = (q + a) * (q + a + 1) // 2
            for b in range(a + 1):
                s = ra + b
                ha = Ha[i, a, b]
                for ln in range(B):
                    nn = NN[S + s, ln]
                    M[ra + b, ln] = ha + nn
                    M[rq + q + b, ln] = Hb[a, b, j0 + ln] + nn
            for b in range(q):
                s = a * (a + 1) // 2 + b if b <= a else b * (b + 1) // 2 + a
                for ln in range(B):
                    M[rq + b, ln] = NN[s, ln]
            pia = pa[i, a]
            for ln in range(B):
                a1 = G2[ii, a, ln]
                z[a, ln] = pia + a1 - G1[ii, a, ln]
                z[q + a, ln] = G3[ii, a, ln] + a1 - pb[a, j0 + ln] - G1[ii, q + a, ln]
        _lanes_factor_solve(M, z, m, B, quad, prod, minp, rinv)
        code = _lanes_write(
            i, j0, nw, m, M, ld, quad, prod, minp, gamma, symmetric, offa, offb, out
        )
        if code:
            return code
    return 0


@njit(cache=True, nogil=True)
def mirror_lower(out, starts):  # pragma: no cover - compiled
    """Copy the lower triangle into the upper one, for the blocks of 64
    columns starting at ``starts``."""
    n = out.shape[0]
    for s in starts:
        e = min(s + 64, n)
        for i in range(s, n):
            for j in range(s, min(e, i)):
                out[j, i] = out[i, j]


@njit(cache=True, nogil=True, fastmath=FAST, error_model="numpy")
def finish_tile_mahalanobis(
    i0,  # first row of the tile (of side a)
    j0,  # first column of the tile (of side b)
    nb,  # columns of the tile
    G1,  # (r, 2q + 1, B): T1, T4, quad part
    T2,  # (r, q, B): sum_k x_ik m_jk w_k / psi_k
    T3,  # (r, q, B): sum_k m_ik x_ik m_jk w_k / psi_k
    G4,  # (r, B): quad part
    consts,  # (a, e, u, log(1 + u), log(1 + 2u), 2q log u - log det(I + F))
    C00,  # (q, q) I + F
    Fa,  # (na, q, q) sum_{J_i} w w^T / psi
    Pa,  # (na, q, q) P_i / u
    ldPa,  # (na,)
    r0a,  # (na, q)
    r1a,  # (na, q)
    cqa,  # (na,)
    nJa,  # (na,)
    offa,  # (na,)
    Fb,  # the same for the rows of b
    Pb,
    ldPb,
    r0b,
    r1b,
    cqb,
    nJb,
    offb,
    table,  # (G, 2^bits, P): N (packed) and |J_i & J_j|, by groups
    codesa,  # (na, G)
    codesb,  # (nb_all, G)
    gamma,
    symmetric,
    out,  # (na, nb_all)
):  # pragma: no cover - compiled
    """``out[i, j] = log E k + offa[i] + offb[j]`` in the Mahalanobis metric
    (:mod:`._factor_mahalanobis`): adds the table rows of the pair (``N``
    and ``|J_i & J_j|``), assembles ``K3`` (size 3q) and ``beta``, factors
    and solves, vectorised over the tile's columns. Returns 0, or ``1 + i``
    for a row whose ``K3`` is not positive definite."""
    r = G1.shape[0]
    q = T2.shape[1]
    S = q * (q + 1) // 2
    m = 3 * q
    B = nb
    a_, e_, u, L1, L2, c0 = (
        consts[0],
        consts[1],
        consts[2],
        consts[3],
        consts[4],
        consts[5],
    )
    f1 = 1.0 + a_
    f2 = a_ + e_
    f3 = 1.0 / (1.0 + 2.0 * u)
    P = table.shape[2]
    M = np.empty((m * (m + 1) // 2, B))
    z = np.empty((m, B))
    NN = np.zeros((P, B))
    acc = np.empty(P)
    quad = np.empty(B)
    ld = np.empty(B)
    prod = np.empty(B)
    minp = np.empty(B)
    rinv = np.empty((m, B))
    for ii in range(r):
        i = i0 + ii
        if symmetric and j0 > i:
            continue
        nw = min(nb, i - j0 + 1) if symmetric else nb
        _lanes_table_sums(table, codesa, codesb, i, j0, nw, NN, acc)
        for ln in range(B):
            j = j0 + ln
            quad[ln] = G4[ii, ln] + G1[ii, 2 * q, ln] + cqa[i] + cqb[j]
            ld[ln] = (
                L1 * (nJa[i] + nJb[j]) + (L2 - 2.0 * L1) * NN[S, ln]
                + c0 - ldPa[i] - ldPb[j]
            )  # fmt: skip
        for a in range(q):
            r0 = a * (a + 1) // 2
            r1 = (q + a) * (q + a + 1) // 2
            r2 = (2 * q + a) * (2 * q + a + 1) // 2
            for b in range(q):
                s = a * (a + 1) // 2 + b if b <= a else b * (b + 1) // 2 + a
                fia = Fa[i, a, b]
                for ln in range(B):
                    nn = NN[s, ln]
                    fjb = Fb[j0 + ln, a, b]
                    M[r1 + b, ln] = f1 * fia + f2 * nn
                    M[r2 + b, ln] = f1 * fjb + f2 * nn
                    M[r2 + q + b, ln] = f3 * nn
                if b <= a:
                    c = C00[a, b]
                    pa = Pa[i, a, b]
                    for ln in range(B):
                        nn = NN[s, ln]
                        fjb = Fb[j0 + ln, a, b]
                        M[r0 + b, ln] = c + a_ * (fia + fjb) + e_ * nn
                        M[r1 + q + b, ln] = pa + f1 * fia + f2 * nn
                        M[r2 + 2 * q + b, ln] = Pb[j0 + ln, a, b] + f1 * fjb + f2 * nn
            for ln in range(B):
                j = j0 + ln
                t1 = G1[ii, a, ln]
                t4 = G1[ii, q + a, ln]
                t2 = T2[ii, a, ln]
                t3 = T3[ii, a, ln]
                z[a, ln] = r0a[i, a] - r0b[j, a] + a_ * (t2 - t1) + e_ * (t3 - t4)
                z[q + a, ln] = r1a[i, a] - f1 * t1 + f2 * (t3 - t4)
                z[2 * q + a, ln] = f1 * t2 - r1b[j, a] + f2 * (t3 - t4)
        _lanes_factor_solve(M, z, m, B, quad, prod, minp, rinv)
        code = _lanes_write(
            i, j0, B, m, M, ld, quad, prod, minp, gamma, symmetric, offa, offb, out
        )
        if code:
            return code
    return 0
