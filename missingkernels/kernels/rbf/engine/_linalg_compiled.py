"""Compiled linear-algebra helpers of the expected RBF loops (numba).

Small in-place factorisations shared by the loops of :mod:`._pairs_compiled`,
:mod:`._rows_compiled` and :mod:`._tiles_compiled` (the formulas are in
:mod:`._pairs_compiled`), and the per-pattern and per-row factors they take
(:func:`mahalanobis_factors`, :func:`schur_row_factors`). ``BIG`` is the
rescaling threshold of running products of Cholesky pivots (the fast-math
flags are in :mod:`._numba_setup`).

numba's disk cache of a loop is keyed on the source file of the loop only,
not on the helpers it inlines from here: after editing this module, touch
the loop modules (or delete their ``__pycache__/*.nbi`` and ``*.nbc``), or
they keep running the old helpers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from ._numba_setup import FAST

if TYPE_CHECKING:
    from ._layouts import SideArrays

# Rescale the running product of Cholesky pivots before it can overflow.
BIG = 1e150


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def cholesky(M: np.ndarray, inv: np.ndarray, k: int) -> bool:  # pragma: no cover
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


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def chol_logdet(L: np.ndarray, k: int) -> float:  # pragma: no cover - compiled
    """``log det(L L^T)`` from the diagonal of ``L``.

    Few ``log`` calls: the pivots are multiplied, rescaling before the
    product overflows or underflows.
    """
    prod = 1.0
    total = 0.0
    for j in range(k):
        prod *= L[j, j]
        if prod > BIG or prod < 1.0 / BIG:
            total += math.log(prod)
            prod = 1.0
    return 2.0 * (total + math.log(prod))


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def forward(
    L: np.ndarray, inv: np.ndarray, b: np.ndarray, off: int, k: int
) -> None:  # pragma: no cover - compiled
    """In place ``b[off:off+k] <- L[:k, :k]^-1 b[off:off+k]``."""
    for i in range(k):
        s = b[off + i]
        for t in range(i):
            s -= L[i, t] * b[off + t]
        b[off + i] = s * inv[i]


# -- Euclidean: union of the patterns -----------------------------------------


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
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


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def union_factor(
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
    if not cholesky(LK, invK, k):
        return k, math.nan
    return k, chol_logdet(LK, k)


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def union_transform(
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
    forward(LK, invK, buf, 0, k)


# -- Mahalanobis: Schur complement of the per-pattern blocks ------------------


@njit(cache=True, nogil=True, fastmath=FAST)
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
        if not cholesky(L, inv, k):
            return ld, WT, VT, ownW, 1 + p
        ld[p] = chol_logdet(L, k)
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
            forward(L, inv, ownW[r], 0, k)
    return ld, WT, VT, ownW, 0


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def schur_factor(
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
    if not cholesky(LN, invN, kq):
        return math.nan
    return ldKa[p] + chol_logdet(LN, kq)


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def schur_transform(
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
    forward(LN, invN, buf, kp, kq)


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def project(
    z: np.ndarray, M: np.ndarray, J: np.ndarray, k: int, buf: np.ndarray, off: int
) -> None:  # pragma: no cover - compiled
    """``buf[off:off+k] = M[:k, :k] z[J[:k]]`` (``M`` is ``F^T`` or ``W^T``)."""
    for s in range(k):
        m = M[s]
        acc = 0.0
        for r in range(k):
            acc += m[r] * z[J[r]]
        buf[off + s] = acc


@njit(cache=True, nogil=True, fastmath=FAST)
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
    :class:`._layouts.RowFactors`), written into the arrays passed.

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
        if not cholesky(L, inv, k):
            return 1 + p, ratio
        logdet[p] = chol_logdet(L, k)
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
        if not cholesky(LC, inv, k):
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
