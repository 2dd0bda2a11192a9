"""Compiled row loop of the Gaussian EM's E-step (numba).

With 30% of 20 features missing at random nearly every row has a missing
pattern of its own, so the batched numpy route (one ``inv`` per pattern
stack, fancy-indexed gathers per group) spent its time in gathers and
allocation rather than arithmetic. Here each row costs ``O(d + k^2)`` and
each distinct pattern one ``k x k`` Cholesky factorisation and inverse
(``k`` its number of missing features), in one pass over the rows sorted by
pattern. The formulas are those of
:func:`missingkernels._gaussian_conditioning.condition_gaussian`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# Let LLVM reassociate the short dot products and fuse multiply-adds; no flag
# assumes finite values, so the positive-definiteness test keeps its meaning.
# No "arcp": the standardisation ``(x - center) / scale`` must round as
# numpy's does, so that out-of-core passes see the in-memory rows bit for bit.
FAST = {"reassoc", "contract", "nsz"}
# Rows whose sums are accumulated apart before joining the running totals:
# the rounding error of a sum of n rows grows as about (FLUSH + n / FLUSH) u
# rather than n u.
FLUSH = 256
# The log-determinant is the logarithm of the product of the pivots, taken
# (and the product restarted) before the product can overflow or underflow.
BIG = 1e150


@njit(cache=True, nogil=True, inline="always", fastmath=FAST)
def _inverse_spd(W: np.ndarray, d: np.ndarray, k: int) -> float:  # pragma: no cover
    """In place ``W[:k, :k] <- W^-1`` for a symmetric positive definite ``W``
    (lower triangle read, full inverse written; ``d`` is scratch of length
    ``k``); returns ``log det W``, or NaN when the Cholesky factorisation
    breaks down (not positive definite to working precision).

    Multiplies by reciprocal pivots and takes one logarithm of their product:
    with several missing features per row and nearly one pattern per row,
    these small factorisations are most of the E-step's time.
    """
    # Cholesky, lower: W = C C', d[j] = 1 / C[j, j].
    logdet = 0.0
    product = 1.0
    for j in range(k):
        s = W[j, j]
        for t in range(j):
            s -= W[j, t] * W[j, t]
        if not s > 0.0:
            return math.nan
        product *= s
        if product > BIG or product < 1.0 / BIG:
            logdet += math.log(product)
            product = 1.0
        r = math.sqrt(s)
        ir = 1.0 / r
        W[j, j] = r
        d[j] = ir
        for i in range(j + 1, k):
            s = W[i, j]
            for t in range(j):
                s -= W[i, t] * W[j, t]
            W[i, j] = s * ir
    # C^-1 in place (lower), column by column by forward substitution: column
    # j reads the inverse's entries above row i and C's at and left of it.
    for j in range(k):
        W[j, j] = d[j]
        for i in range(j + 1, k):
            s = 0.0
            for t in range(j, i):
                s -= W[i, t] * W[t, j]
            W[i, j] = s * d[i]
    # W^-1 = C^-T C^-1: entry (i, j <= i) reads rows t >= i only, so rows are
    # overwritten from the top.
    for i in range(k):
        for j in range(i + 1):
            s = 0.0
            for t in range(i, k):
                s += W[t, i] * W[t, j]
            W[i, j] = s
    for i in range(k):
        for j in range(i + 1, k):
            W[i, j] = W[j, i]
    return logdet + math.log(product)


@njit(cache=True, nogil=True, fastmath=FAST)
def e_step_sums(
    X: np.ndarray,
    missing: np.ndarray,
    order: np.ndarray,
    pattern_index: np.ndarray,
    center: np.ndarray,
    scale: np.ndarray,
    mean: np.ndarray,
    sd: np.ndarray,
    precision: np.ndarray,
    fill: bool,
    out: np.ndarray,
    total: np.ndarray,
    scatter: np.ndarray,
    cov_sum: np.ndarray,
) -> int:  # pragma: no cover - compiled
    """The Gaussian E-step's sums over the rows of ``X``, in the order ``order``.

    Row ``i`` is standardised as ``z = (X[i] - center) / scale`` on its
    observed entries (``center = 0``, ``scale = 1`` for rows standardised
    already). With ``r = (z - mean) / sd`` on the observed entries, zero on
    the missing ones, ``L = precision`` (the inverse of the correlation
    matrix of the covariance, whose standard deviations are ``sd``) and
    ``g = L r``, the missing block ``J`` is, in units of ``sd``,
    ``N(-L_JJ^-1 g_J, L_JJ^-1)``, and ``r_O' R_OO^-1 r_O = r' g -
    g_J' L_JJ^-1 g_J``. Rows of one pattern that are consecutive in
    ``order`` share the factorisation of ``L_JJ``. Rows with no observed
    entry are skipped (they carry no information; the EM drops them).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Rows; entries marked ``missing`` are not read.
    missing : ndarray of shape (n, d), dtype bool
    order : ndarray of shape (n,)
        The order of the rows; sorted by pattern, it factorises each distinct
        pattern once.
    pattern_index : ndarray of shape (n,)
        Pattern of each row (equal for equal patterns).
    center, scale : ndarray of shape (d,)
        The standardisation of the rows.
    mean, sd : ndarray of shape (d,)
        The mean and standard deviations of the Gaussian (standardised units).
    precision : ndarray of shape (d, d)
        Inverse of its correlation matrix.
    fill : bool
        Compute the sums of the conditional means, of their scatter and of
        the conditional covariances (else the log-likelihood only).
    out : ndarray of shape (2,)
        Out: the log-likelihood of the observed entries without its
        ``log(2 pi)`` and ``log det R`` terms, ``-1/2 sum_i (log det L_JJ +
        2 sum_O log sd + r_O' R_OO^-1 r_O)``, and the number of rows used.
    total : ndarray of shape (d,)
        Out (added to): the sum of the conditional means.
    scatter : ndarray of shape (d, d)
        Out (added to, lower triangle): the scatter of the conditional means
        about ``mean``.
    cov_sum : ndarray of shape (d, d)
        Out (added to): the conditional covariances ``sd_J sd_J' L_JJ^-1``,
        embedded at ``(J, J)``.

    Returns
    -------
    failed : int
        -1, or the first row whose ``L_JJ`` was not positive definite to
        working precision (the outputs are then incomplete).
    """
    n, d = X.shape
    J = np.empty(d, dtype=np.intp)
    W = np.empty((d, d))
    pivots = np.empty(d)
    r = np.empty(d)
    g = np.empty(d)
    v = np.empty(d)
    c = np.empty(d)
    log_sd = np.log(sd)
    acc_total = np.zeros(d)
    acc_scatter = np.zeros((d, d))
    acc_loglik = 0.0
    loglik = 0.0
    used = 0
    k = 0
    block_logdet = 0.0
    previous = -1
    count = 0
    pending = 0
    for position in range(n):
        i = order[position]
        p = pattern_index[i]
        if p != previous:
            if fill and count:
                for a in range(k):
                    for b in range(k):
                        cov_sum[J[a], J[b]] += count * W[a, b] * sd[J[a]] * sd[J[b]]
            previous = p
            count = 0
            k = 0
            for t in range(d):
                if missing[i, t]:
                    J[k] = t
                    k += 1
            if k == d:
                continue  # no observed entry
            for a in range(k):
                for b in range(a + 1):
                    W[a, b] = precision[J[a], J[b]]
            block_logdet = _inverse_spd(W, pivots, k) if k else 0.0
            if math.isnan(block_logdet):
                return i
        elif k == d:
            continue
        count += 1
        used += 1
        # r and g = L r (r is zero on the missing entries).
        logdet = block_logdet
        for t in range(d):
            g[t] = 0.0
        for t in range(d):
            if missing[i, t]:
                r[t] = 0.0
                continue
            v[t] = (X[i, t] - center[t]) / scale[t]
            c[t] = v[t] - mean[t]
            r[t] = c[t] / sd[t]
            logdet += 2.0 * log_sd[t]
            rt = r[t]
            for u in range(d):
                g[u] += rt * precision[t, u]
        q = 0.0
        for t in range(d):
            q += r[t] * g[t]
        for a in range(k):
            s = 0.0
            for b in range(k):
                s -= W[a, b] * g[J[b]]
            q += g[J[a]] * s
            # The conditional mean, mean + sd * E[r_J], and centred.
            t = J[a]
            v[t] = mean[t] + s * sd[t]
            c[t] = v[t] - mean[t]
        acc_loglik -= 0.5 * (logdet + q)
        if fill:
            for a in range(d):
                acc_total[a] += v[a]
                ca = c[a]
                for b in range(a + 1):
                    acc_scatter[a, b] += ca * c[b]
        pending += 1
        if pending == FLUSH:
            loglik += acc_loglik
            acc_loglik = 0.0
            if fill:
                for a in range(d):
                    total[a] += acc_total[a]
                    acc_total[a] = 0.0
                    for b in range(a + 1):
                        scatter[a, b] += acc_scatter[a, b]
                        acc_scatter[a, b] = 0.0
            pending = 0
    if fill:
        for a in range(k if count else 0):
            for b in range(k):
                cov_sum[J[a], J[b]] += count * W[a, b] * sd[J[a]] * sd[J[b]]
        for a in range(d):
            total[a] += acc_total[a]
            for b in range(a + 1):
                scatter[a, b] += acc_scatter[a, b]
    out[0] = loglik + acc_loglik
    out[1] = used
    return -1
