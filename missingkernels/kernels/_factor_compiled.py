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
``j`` (matrix products over tiles of rows, :mod:`._factor`); this module
finishes each pair: assembles ``K``, factors it and solves, vectorised
over the pairs of a row with a tile of columns. The bracket is clipped at
0 against rounding. Every function releases the GIL.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# As in the other compiled loops: reassociation and contraction only (no
# flag assumes finite values, so the checks keep their meaning).
_FAST = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def finish_tile(
    i0,  # first row of the tile (of side a)
    j0,  # first column of the tile (of side b)
    nb,  # columns of the tile
    O1,  # (r, 1 + q + s, B): quad part, b_i part, sum_k c_k m_jk U_ik U_ik^T
    O2,  # (r, 1 + q, B): quad part, b_i part
    O3,  # (r, 1 + q, B): quad part, b_i part
    O4,  # (r, 2 + s, B): quad part, log det Delta part, sum_k c_k m_ik U_jk U_jk^T
    O5,  # (r, q, B): b_j part
    O6,  # (r, q, q, B): sum_k inv2_k U_ik U_jk^T
    K0a,  # (na, q, q) I + U_i^T (1 + t)^-1 U_i, of every row of a
    cqa,  # (na,) the parts of the sums that depend on row i only
    lda,  # (na,)
    cba,  # (na, q)
    offa,  # (na,)
    K0b,  # (nb_all, q, q) the same for the rows of b
    cqb,  # (nb_all,)
    ldb,  # (nb_all,)
    cbb,  # (nb_all, q)
    offb,  # (nb_all,)
    gamma,
    symmetric,
    out,  # (na, nb_all)
):  # pragma: no cover - compiled
    """``out[i, j] = log E k + offa[i] + offb[j]`` for the tile's pairs
    (``j <= i`` when ``symmetric``), from the tile's matrix products.
    Returns 0, or ``1 + i`` for a row whose ``K`` is not positive definite
    (non-finite inputs)."""
    r = O1.shape[0]
    q = O6.shape[1]
    m = 2 * q
    B = nb
    # K in packed lower-triangular storage, entry (a, b <= a) at a(a+1)/2 + b.
    M = np.empty((m * (m + 1) // 2, B))
    z = np.empty((m, B))
    quad = np.empty(B)
    ld = np.empty(B)
    prod = np.empty(B)
    minp = np.empty(B)
    rinv = np.empty(B)
    for ii in range(r):
        i = i0 + ii
        if symmetric and j0 > i:
            break
        for ln in range(B):
            quad[ln] = (
                O1[ii, 0, ln] + O2[ii, 0, ln] + O3[ii, 0, ln] + O4[ii, 0, ln]
                + cqa[i] + cqb[j0 + ln]
            )  # fmt: skip
            ld[ln] = O4[ii, 1, ln] + lda[i] + ldb[j0 + ln]
        s = 0
        for a in range(q):
            ra = a * (a + 1) // 2
            rq = (q + a) * (q + a + 1) // 2
            for b in range(a + 1):
                ka = K0a[i, a, b]
                for ln in range(B):
                    M[ra + b, ln] = ka + O1[ii, 1 + q + s, ln]
                    M[rq + q + b, ln] = K0b[j0 + ln, a, b] + O4[ii, 2 + s, ln]
                s += 1
            for b in range(q):
                for ln in range(B):
                    M[rq + b, ln] = O6[ii, b, a, ln]
            ca = cba[i, a]
            for ln in range(B):
                z[a, ln] = (
                    O1[ii, 1 + a, ln] + O2[ii, 1 + a, ln] + O3[ii, 1 + a, ln] + ca
                )
                z[q + a, ln] = O5[ii, a, ln] - cbb[j0 + ln, a]
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
                rinv[ln] = 1.0 / p
            for row in range(col + 1, m):
                rr = row * (row + 1) // 2
                for t in range(col):
                    for ln in range(B):
                        M[rr + col, ln] -= M[rr + t, ln] * M[rc + t, ln]
                for ln in range(B):
                    M[rr + col, ln] *= rinv[ln]
        # |L^-1 b|^2 by forward substitution, taken off the quadratic form.
        for row in range(m):
            rr = row * (row + 1) // 2
            for t in range(row):
                for ln in range(B):
                    z[row, ln] -= M[rr + t, ln] * z[t, ln]
            for ln in range(B):
                v = z[row, ln] / M[rr + row, ln]
                z[row, ln] = v
                quad[ln] -= v * v
        for ln in range(B):
            j = j0 + ln
            if symmetric and j > i:
                break
            if not minp[ln] > 0.0:
                return 1 + i
            logdet = 2.0 * math.log(prod[ln])
            if not math.isfinite(logdet):
                logdet = 0.0
                for row in range(m):
                    logdet += 2.0 * math.log(M[row * (row + 1) // 2 + row, ln])
            out[i, j] = (
                -0.5 * (ld[ln] + logdet)
                - gamma * max(quad[ln], 0.0)
                + offa[i]
                + offb[j]
            )
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
