"""Compiled row-pair loop of the expected RBF over factor conditionals (numba).

For rows ``i``, ``j`` with missing sets ``J_i``, ``J_j`` under a factor
density (``docs/theory.rst``, "Factor-analytic density"), with
``psi~ = 2 gamma Psi`` and ``U_i = sqrt(2 gamma) W_{J_i} R_i``
(``R_i R_i^T`` the posterior covariance of the factors),
``A = I + 2 gamma (C_i + C_j) = Delta + [U_i, U_j] [U_i, U_j]^T`` with
``Delta_k = 1 + psi~_k ([k in J_i] + [k in J_j])``. By the matrix
determinant lemma and Woodbury, with ``K = I_2q + [U_i, U_j]^T Delta^-1
[U_i, U_j]`` and ``b = [U_i, U_j]^T Delta^-1 delta``::

    log E = -1/2 (log det Delta + log det K)
            - gamma (delta^T Delta^-1 delta - |L^-1 b|^2),   L L^T = K.

``K``'s diagonal blocks are per-row sums over ``J_i`` (``Delta_k = 1 +
psi~_k`` there) corrected over ``J_i & J_j``; the cross block lives on
``J_i & J_j`` only. The loop runs one row ``i`` against ``_L`` rows ``j``
at a time (the lanes of a vector register): the lane rows' factors are
stored feature-major, zero where observed, so the masks of ``J_j`` need no
branch. The bracket is clipped at 0 against rounding. Every function
releases the GIL: the caller runs them on threads over disjoint rows.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# Rows j per vector of the loop.
_L = 8
# As in the other compiled loops: reassociation and contraction only (no
# flag assumes finite values, so the checks keep their meaning).
_FAST = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, nogil=True, fastmath=_FAST)
def factor_rbf_rows(
    rows,  # (r,) int64 rows i of side a given to this call
    xa,  # (na, d) centred filled means
    Jidx,  # (na, kmax) int64 missing features of each row
    nJ,  # (na,) int64
    Oidx,  # (na, d) int64 observed features of each row
    nO,  # (na,) int64
    Ua,  # (na, kmax, q) U_i on its missing features
    K0a,  # (na, q, q) I + U_i^T (1 + psi~)^-1 U_i
    ld0a,  # (na,) sum_{J_i} log(1 + psi~)
    offa,  # (na,)
    xg,  # (G, d, L) side b by lane groups
    mg,  # (G, d, L) 1.0 where missing
    Ug,  # (G, d, q, L) U_j, zero where observed
    K0g,  # (G, q, q, L)
    ld0g,  # (G, L)
    offg,  # (G, L)
    nb,  # rows of side b
    inv1,  # (d,) 1 / (1 + psi~)
    inv2,  # (d,) 1 / (1 + 2 psi~)
    cc,  # (d,) inv2 - inv1
    a1,  # (d,) inv1 - 1
    ldc,  # (d,) log(1 + 2 psi~) - 2 log(1 + psi~)
    gamma,
    symmetric,
    out,  # (na, nb) log E k (+ offsets); symmetric: lower triangle only
):  # pragma: no cover - compiled
    """``out[i, j] = log E k(X_i, Y_j) + offa[i] + offb[j]`` for ``i`` in
    ``rows`` and every ``j`` (``j <= i`` when ``symmetric``). Returns 0, or
    ``1 + i`` for a row whose matrix ``K`` is not positive definite."""
    q = Ua.shape[2]
    m = 2 * q
    G = xg.shape[0]
    L = _L
    K11 = np.empty((q, q, L))
    K22 = np.empty((q, q, L))
    K12 = np.empty((q, q, L))
    bv = np.empty((m, L))
    M = np.empty((m, m, L))
    quad = np.empty(L)
    ld = np.empty(L)
    td = np.empty(L)
    tm = np.empty(L)
    prod = np.empty(L)
    minp = np.empty(L)
    rinv = np.empty(L)
    val = np.empty(L)
    for i in rows:
        g_end = G
        if symmetric:
            g_end = i // L + 1
        ni = nJ[i]
        no = nO[i]
        for g in range(g_end):
            for ln in range(L):
                quad[ln] = 0.0
                ld[ln] = ld0a[i] + ld0g[g, ln]
            for a in range(q):
                for b in range(q):
                    kab = K0a[i, a, b]
                    for ln in range(L):
                        K11[a, b, ln] = kab
                        K22[a, b, ln] = K0g[g, a, b, ln]
                        K12[a, b, ln] = 0.0
                for ln in range(L):
                    bv[a, ln] = 0.0
                    bv[q + a, ln] = 0.0
            # Features missing in row i (J_i; J_i & J_j where mg = 1).
            for t in range(ni):
                k = Jidx[i, t]
                xi = xa[i, k]
                c = cc[k]
                i1 = inv1[k]
                i2 = inv2[k]
                lc = ldc[k]
                for ln in range(L):
                    mj = mg[g, k, ln]
                    dl = xi - xg[g, k, ln]
                    dinv = dl * (i1 + c * mj)
                    quad[ln] += dl * dinv
                    ld[ln] += lc * mj
                    td[ln] = dinv
                    tm[ln] = c * mj
                for a in range(q):
                    ua = Ua[i, t, a]
                    s12 = ua * i2
                    for ln in range(L):
                        bv[a, ln] += ua * td[ln]
                        bv[q + a, ln] += Ug[g, k, a, ln] * td[ln]
                    for b in range(q):
                        for ln in range(L):
                            K12[a, b, ln] += s12 * Ug[g, k, b, ln]
                    for b in range(a + 1):
                        s11 = ua * Ua[i, t, b]
                        for ln in range(L):
                            K11[a, b, ln] += s11 * tm[ln]
                            K22[a, b, ln] += c * Ug[g, k, a, ln] * Ug[g, k, b, ln]
            # Features observed in row i (missing in j where mg = 1).
            for t in range(no):
                k = Oidx[i, t]
                xi = xa[i, k]
                a1k = a1[k]
                for ln in range(L):
                    dl = xi - xg[g, k, ln]
                    dinv = dl * (1.0 + a1k * mg[g, k, ln])
                    quad[ln] += dl * dinv
                    td[ln] = dinv
                for a in range(q):
                    for ln in range(L):
                        bv[q + a, ln] += Ug[g, k, a, ln] * td[ln]
            # K (lower triangle) and its Cholesky factor, lane by lane.
            for a in range(q):
                for b in range(a + 1):
                    for ln in range(L):
                        M[a, b, ln] = K11[a, b, ln]
                        M[q + a, q + b, ln] = K22[a, b, ln]
                for b in range(q):
                    for ln in range(L):
                        M[q + a, b, ln] = K12[b, a, ln]
            for ln in range(L):
                prod[ln] = 1.0
                minp[ln] = 1.0
            for col in range(m):
                for t in range(col):
                    for ln in range(L):
                        M[col, col, ln] -= M[col, t, ln] * M[col, t, ln]
                for ln in range(L):
                    p = M[col, col, ln]
                    minp[ln] = min(minp[ln], p)
                    p = math.sqrt(max(p, 1e-300))
                    M[col, col, ln] = p
                    prod[ln] *= p
                    rinv[ln] = 1.0 / p
                for r in range(col + 1, m):
                    for t in range(col):
                        for ln in range(L):
                            M[r, col, ln] -= M[r, t, ln] * M[col, t, ln]
                    for ln in range(L):
                        M[r, col, ln] *= rinv[ln]
            # |L^-1 b|^2 by forward substitution.
            for r in range(m):
                for t in range(r):
                    for ln in range(L):
                        bv[r, ln] -= M[r, t, ln] * bv[t, ln]
                for ln in range(L):
                    bv[r, ln] /= M[r, r, ln]
                    quad[ln] -= bv[r, ln] * bv[r, ln]
            for ln in range(L):
                logdet = 2.0 * math.log(prod[ln])
                if not math.isfinite(logdet):
                    logdet = 0.0
                    for r in range(m):
                        logdet += 2.0 * math.log(M[r, r, ln])
                val[ln] = (
                    -0.5 * (ld[ln] + logdet)
                    - gamma * max(quad[ln], 0.0)
                    + offa[i]
                    + offg[g, ln]
                )
            for ln in range(L):
                j = g * L + ln
                if j >= nb or (symmetric and j > i):
                    break
                if not minp[ln] > 0.0:
                    return 1 + i
                out[i, j] = val[ln]
    return 0


@njit(cache=True, nogil=True)
def mirror_lower(out, rows):  # pragma: no cover - compiled
    """Copy the lower triangle into the upper one for the column blocks
    starting at ``rows`` (64 columns each)."""
    n = out.shape[0]
    for s in rows:
        e = min(s + 64, n)
        for i in range(s, n):
            for j in range(s, min(e, i)):
                out[j, i] = out[i, j]
