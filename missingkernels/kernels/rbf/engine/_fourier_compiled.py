"""Compiled loops of the expected Fourier features of Gaussian conditionals (numba).

For row ``i`` (mean ``mu_i``, covariance ``C_p`` on the missing block ``J_p``
of its pattern ``p``) and frequency ``w_f`` (formulas in
:mod:`missingkernels.kernels.rbf._fourier`)::

    phase_if = (mu_i - center)^T w_f,
    q_pf     = w_f[J_p]^T C_p w_f[J_p],
    out[i, f]     = s_i exp(-q_pf / 2) cos(phase_if),
    out[i, F + f] = s_i exp(-q_pf / 2) sin(phase_if),

with ``s_i`` the row's weight times ``1 / sqrt(F)``; with ``accumulate`` the
values are added to ``out``. One pass per row writes its ``2 F`` features in
the output's dtype (float32 or float64) from float64 registers: no ``n x F``
temporary. Rows come sorted by pattern, so that ``q_p`` is computed once per
run of rows of one pattern (once per row when patterns hold one row each).

Every loop runs over the frequencies, innermost and contiguous (the
frequencies are stored transposed, ``(d, F)``), so that it vectorises; cos,
sin and exp are written here as such loops (a call of ``math.cos`` per lane
does not vectorise without Intel's SVML, and numpy's float64 cos took 0.9 s
for 2 * 10^7 phases on the development machine, the whole budget).

:func:`self_logs` gives genRBF's normaliser of these features, one closed
form per pattern.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numba import njit

from ._numba_setup import FAST


def _split(x: Fraction, bits: int) -> float:
    """The double nearest ``x`` with its last ``53 - bits`` mantissa bits
    cleared: its products by integers below ``2^(53 - bits)`` are exact."""
    m, e = math.frexp(float(x))
    return math.ldexp(float(int(m * (1 << bits))), e - bits)


# pi / 2 to 60 digits, in three parts of 26, 26 and 53 bits (Cody and Waite's
# reduction): ``k * _P1`` and ``k * _P2`` are exact for ``|k| < 2^27``, so
# ``x - k pi/2`` keeps about 78 bits of pi / 2, enough for every phase below
# ``2^26 pi / 2 ~ 10^8`` (beyond it the phase itself, a sum of products, has
# lost every digit of its fraction of the period).
_HALF_PI = Fraction(
    15707963267948966192313216916397514420985846996875529104874722961, 10**64
)
_P1 = _split(_HALF_PI, 26)
_P2 = _split(_HALF_PI - Fraction(_P1), 26)
_P3 = float(_HALF_PI - Fraction(_P1) - Fraction(_P2))
_TWO_OVER_PI = float(1 / _HALF_PI)

# ln 2 in two parts (``k * _LN2_HI`` exact for the exponents of doubles).
_LN2 = Fraction(
    6931471805599453094172321214581765680755001343602552541206800095, 10**64
)
_LN2_HI = _split(_LN2, 32)
_LN2_LO = float(_LN2 - Fraction(_LN2_HI))
_INV_LN2 = float(1 / _LN2)
# ``y + _SHIFT`` puts the integer ``y`` (0 <= y < 2^51) in the low mantissa
# bits of a double.
_SHIFT = 4503599627370496.0  # 2^52
_EXP_FLOOR = -708.0  # exp(x) for x below: 0 (the result is within 3e-308 of it)


# (No fast-math flags for the two functions below: reassociation could fold
# the parts of pi / 2 or ln 2 back into one, which is the point of splitting
# them. Their loops have no reduction and vectorise without the flags.)
@njit(cache=True, nogil=True, error_model="numpy")
def _cos_sin(x: np.ndarray, c: np.ndarray, s: np.ndarray) -> None:
    """``c = cos(x)``, ``s = sin(x)`` elementwise, within a few units in the
    last place for ``|x| < 10^8``: ``x = k pi/2 + r``, ``|r| <= pi/4``,
    Taylor series of sin to ``r^15`` and of cos to ``r^16`` (truncation
    below ``5e-17``), then the quadrant ``k mod 4`` picks and signs them."""
    for f in range(x.shape[0]):
        v = x[f]
        k = np.floor(v * _TWO_OVER_PI + 0.5)
        r = ((v - k * _P1) - k * _P2) - k * _P3
        r2 = r * r
        # sin r = r (1 - r^2/3! + r^4/5! - ...), Horner from r^14 / 15!
        ps = -1.0 / 1307674368000.0
        ps = ps * r2 + 1.0 / 6227020800.0
        ps = ps * r2 - 1.0 / 39916800.0
        ps = ps * r2 + 1.0 / 362880.0
        ps = ps * r2 - 1.0 / 5040.0
        ps = ps * r2 + 1.0 / 120.0
        ps = ps * r2 - 1.0 / 6.0
        sr = r + r * (r2 * ps)
        # cos r = 1 - r^2/2 + r^4 (1/4! - r^2/6! + ...), Horner from r^12 / 16!
        pc = 1.0 / 20922789888000.0
        pc = pc * r2 - 1.0 / 87178291200.0
        pc = pc * r2 + 1.0 / 479001600.0
        pc = pc * r2 - 1.0 / 3628800.0
        pc = pc * r2 + 1.0 / 40320.0
        pc = pc * r2 - 1.0 / 720.0
        pc = pc * r2 + 1.0 / 24.0
        cr = (1.0 - 0.5 * r2) + (r2 * r2) * pc
        q = k - 4.0 * np.floor(0.25 * k)  # 0, 1, 2 or 3
        # (``|`` rather than ``or``: selects, not branches, so that it vectorises)
        odd = (q == 1.0) | (q == 3.0)
        sv = cr if odd else sr
        cv = sr if odd else cr
        s[f] = -sv if q >= 2.0 else sv
        c[f] = -cv if (q == 1.0) | (q == 2.0) else cv


@njit(cache=True, nogil=True, error_model="numpy")
def _exp_neg_half(q: np.ndarray, scale: float, out: np.ndarray) -> None:
    """``out = scale * exp(-max(q, 0) / 2)`` elementwise, within a few units
    in the last place: ``x = k ln 2 + r``, ``|r| <= ln 2 / 2``, Taylor series
    of ``e^r`` to ``r^13`` (truncation below ``5e-18``), ``2^k`` from its
    bits (``k + 1023`` in the low bits of a double, shifted to the exponent);
    0 below ``exp(-708)``. ``q`` is overwritten."""
    bits = out.view(np.int64)
    for f in range(q.shape[0]):
        x = -0.5 * q[f] if q[f] > 0.0 else 0.0
        low = x < _EXP_FLOOR
        x = _EXP_FLOOR if low else x
        k = np.floor(x * _INV_LN2 + 0.5)
        r = (x - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        q[f] = 0.0 if low else p * scale
        out[f] = (k + 1023.0) + _SHIFT
    # (separate loops: the integer view aliases ``out``, which would keep the
    # loop above from vectorising)
    for f in range(q.shape[0]):
        bits[f] = bits[f] << 52
    for f in range(q.shape[0]):
        out[f] *= q[f]


@njit(cache=True, nogil=True, fastmath=FAST)
def _quadratic(
    WT: np.ndarray, cols: np.ndarray, C: np.ndarray, q: np.ndarray, t: np.ndarray
) -> None:
    """``q[f] = w_f[J]^T C w_f[J]`` for every frequency (``J = cols``), by
    the upper triangle: ``sum_a w_a (C_aa w_a / 2 + sum_{b > a} C_ab w_b)``,
    doubled; ``k (k + 1) / 2`` multiply-adds per frequency. ``t``: scratch."""
    q[:] = 0.0
    k = cols.shape[0]
    for a in range(k):
        wa = WT[cols[a]]
        h = 0.5 * C[a, a]
        for f in range(q.shape[0]):
            t[f] = h * wa[f]
        for b in range(a + 1, k):
            wb = WT[cols[b]]
            cab = C[a, b]
            for f in range(q.shape[0]):
                t[f] += cab * wb[f]
        for f in range(q.shape[0]):
            q[f] += wa[f] * t[f]
    for f in range(q.shape[0]):
        q[f] *= 2.0


@njit(cache=True, nogil=True, fastmath=FAST)
def fourier_rows(
    order: np.ndarray,
    lo: int,
    hi: int,
    means: np.ndarray,
    center: np.ndarray,
    WT: np.ndarray,
    pattern_index: np.ndarray,
    cols: np.ndarray,
    col_start: np.ndarray,
    covs: np.ndarray,
    cov_start: np.ndarray,
    weights: np.ndarray,
    accumulate: bool,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """The features (module docstring) of the rows ``order[lo:hi]`` into
    ``out`` (float32 or float64, ``(n, 2 F)``).

    ``WT``: the frequencies transposed, ``(d, F)``; pattern ``p`` has the
    missing features ``cols[col_start[p]:col_start[p + 1]]`` and, row by row,
    the covariance ``covs[cov_start[p]:cov_start[p + 1]]`` (``k * k``
    entries); ``weights``: one per row, or none (empty: 1). Rows of one
    pattern should be consecutive in ``order``. Threads own disjoint rows.
    """
    d, F = WT.shape
    scale = 1.0 / math.sqrt(F)
    phase = np.empty(F)
    cosv = np.empty(F)
    sinv = np.empty(F)
    damp = np.empty(F)
    q = np.empty(F)
    t = np.empty(F)
    last = -1
    for pos in range(lo, hi):
        i = order[pos]
        p = pattern_index[i]
        if p != last:
            c0, c1 = col_start[p], col_start[p + 1]
            k = c1 - c0
            C = covs[cov_start[p] : cov_start[p + 1]].reshape(k, k)
            _quadratic(WT, cols[c0:c1], C, q, t)
            _exp_neg_half(q, scale, damp)
            last = p
        phase[:] = 0.0
        for j in range(d):
            x = means[i, j] - center[j]
            wj = WT[j]
            for f in range(F):
                phase[f] += x * wj[f]
        _cos_sin(phase, cosv, sinv)
        w = weights[i] if weights.shape[0] > 0 else 1.0
        row = out[i]
        if accumulate:
            for f in range(F):
                row[f] += w * damp[f] * cosv[f]
                row[F + f] += w * damp[f] * sinv[f]
        else:
            for f in range(F):
                row[f] = w * damp[f] * cosv[f]
                row[F + f] = w * damp[f] * sinv[f]


@njit(cache=True, nogil=True, fastmath=FAST)
def self_logs(
    cols: np.ndarray,
    col_start: np.ndarray,
    covs: np.ndarray,
    cov_start: np.ndarray,
    G: np.ndarray,
    gamma: float,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """``out[p] = log E k(X, X')`` for independent copies of a row of pattern
    ``p`` (genRBF's normaliser of the features), patterns packed as in
    :func:`fourier_rows`, ``G`` the precision of the metric (the identity
    for the Euclidean one): ``X - X' ~ N(0, 2 C)`` on the missing block, so

        log E k = -log det(I + 4 gamma C G[J, J]) / 2,

    a matrix similar to an SPD one (eigenvalues real, >= 1), its
    determinant from an LU factorisation with partial pivoting (backward
    stable: ``k u`` relative in the matrix)."""
    kmax = 0
    for p in range(out.shape[0]):
        kmax = max(kmax, col_start[p + 1] - col_start[p])
    M = np.empty((kmax, kmax))
    for p in range(out.shape[0]):
        c0 = col_start[p]
        k = col_start[p + 1] - c0
        C = covs[cov_start[p] : cov_start[p + 1]].reshape(k, k)
        for a in range(k):
            for b in range(k):
                s = 0.0
                for e in range(k):
                    s += C[a, e] * G[cols[c0 + e], cols[c0 + b]]
                M[a, b] = 4.0 * gamma * s + (1.0 if a == b else 0.0)
        logdet = 0.0
        for j in range(k):
            piv = j
            for r in range(j + 1, k):
                if abs(M[r, j]) > abs(M[piv, j]):
                    piv = r
            if piv != j:
                for b in range(k):
                    M[j, b], M[piv, b] = M[piv, b], M[j, b]
            logdet += math.log(abs(M[j, j]))
            for r in range(j + 1, k):
                m = M[r, j] / M[j, j]
                for b in range(j + 1, k):
                    M[r, b] -= m * M[j, b]
        out[p] = -0.5 * logdet
