"""Small numerical helpers shared across the package (one of each).

- :func:`psd_factor`: a factor ``F`` with ``F F^T = C`` of a PSD matrix.
- :func:`scale_gamma`: the ``gamma="scale"`` rule over observed entries.
- :func:`integer_seeds`: integer seeds derived from a ``random_state``.
- :class:`RowStreams`: random numbers that are a function of a row's key and
  a seed only (the same whatever other rows share the batch), with
  :func:`row_keys` to key rows by their observed entries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "RowStreams",
    "constant_features",
    "integer_seeds",
    "psd_factor",
    "row_keys",
    "scale_gamma",
]

# Relative tolerance on negative eigenvalues (rounding in Schur complements);
# beyond it a covariance is not PSD.
PSD_RTOL = 1e-8


def psd_factor(cov: np.ndarray, *, check: bool = False, what: str = "") -> np.ndarray:
    """Return ``F`` with ``F F^T = C`` for a (stack of) PSD matrices.

    From the eigen-decomposition of the symmetrised matrix, negative
    eigenvalues (rounding) clipped to zero: valid for singular matrices too.

    Parameters
    ----------
    cov : ndarray of shape (..., k, k)
    check : bool, default=False
        Raise ValueError if an eigenvalue is negative beyond a relative
        ``1e-8`` of the largest one, or not finite.
    what : str, default=""
        What needs the factor (for the error message).

    Returns
    -------
    F : ndarray of shape (..., k, k)
    """
    cov = np.asarray(cov, dtype=np.float64)
    if cov.shape[-1] == 0:
        return cov.copy()
    sym = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    w, V = np.linalg.eigh(sym)
    if check:
        scale = np.maximum(np.abs(w).max(axis=-1, keepdims=True), np.finfo(float).tiny)
        if np.any(w < -PSD_RTOL * scale) or not np.all(np.isfinite(w)):
            raise ValueError(
                "A conditional covariance of the density is not positive "
                f"semi-definite, so {what or 'the expectation'} is undefined. "
                "Refit the density (e.g. with a ridge) or check the covariances "
                "it returns."
            )
    return V * np.sqrt(np.clip(w, 0.0, None))[..., None, :]


def scale_gamma(X: np.ndarray) -> float:
    """``1 / (n_features * v)``, ``v`` the variance of the observed entries.

    scikit-learn's ``gamma="scale"`` computed over observed entries only; 1.0
    when they have no spread.
    """
    return gamma_from_variance(X.shape[1], float(np.nanvar(X)))


def gamma_from_variance(n_features: int, variance: float) -> float:
    """:func:`scale_gamma` from the variance of the observed entries (e.g.
    summed over blocks of rows): ``1 / (n_features * variance)``, 1.0 when
    it is not positive."""
    return 1.0 / (n_features * variance) if variance > 0 else 1.0


def integer_seeds(random_state: Any, size: int) -> np.ndarray:
    """``size`` integer seeds in ``[0, 2**31 - 1)`` drawn from ``random_state``.

    For a plugin whose randomness is another library's (R's ``set.seed``, a
    solver's seed): one int per seed it needs, drawn from the estimator's
    ``random_state`` as scikit-learn resolves it (None: NumPy's global state).

    Parameters
    ----------
    random_state : int, RandomState instance or None
    size : int
        How many seeds, at least 0.

    Returns
    -------
    seeds : ndarray of shape (size,), dtype int

    Examples
    --------
    >>> from missingkernels.utils import integer_seeds
    >>> a, b = integer_seeds(0, 2), integer_seeds(0, 2)
    >>> bool((a == b).all()), a.shape
    (True, (2,))
    """
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 0:
        raise ValueError(f"size must be an int >= 0, got {size!r}.")
    return check_random_state(random_state).randint(np.iinfo(np.int32).max, size=size)


# SplitMix64 (Steele, Lea, Flood 2014): an invertible mixing of 64-bit words.
# numpy's uint64 array arithmetic wraps modulo 2**64, as the mixer needs.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix64(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


def row_keys(values: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """A 64-bit key per row from its observed entries and its missing mask.

    Two rows get the same key when they have the same missing entries and the
    same observed values (missing entries and the sign of zero are ignored).

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_features)
    missing : ndarray of shape (n_samples, n_features), dtype bool

    Returns
    -------
    keys : ndarray of shape (n_samples,), dtype uint64

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.utils import row_keys
    >>> X = np.array([[1.0, np.nan], [1.0, 5.0], [-0.0, np.nan], [0.0, np.nan]])
    >>> keys = row_keys(X, np.isnan(X))
    >>> bool(keys[0] == keys[1]), bool(keys[2] == keys[3])
    (False, True)
    """
    missing = np.asarray(missing, dtype=bool)
    if missing.ndim != 2 or np.shape(values) != missing.shape:
        raise ValueError(
            "values and missing must be 2-d arrays of the same shape (rows x "
            f"features); got shapes {np.shape(values)} and {missing.shape}."
        )
    # + 0.0 turns -0.0 into 0.0: equal values give equal bits.
    observed = np.where(missing, 0.0, np.asarray(values, dtype=np.float64)) + 0.0
    bits = np.ascontiguousarray(observed).view(np.uint64)
    d = observed.shape[1]
    # Array (not scalar) products: numpy warns on scalar wrap-around only.
    offsets = _GOLDEN * np.arange(1, d + 1, dtype=np.uint64)
    h = np.full(observed.shape[0], np.uint64(d), dtype=np.uint64)
    for j in range(d):
        word = bits[:, j] ^ (missing[:, j].astype(np.uint64) * _GOLDEN)
        h = _mix64(h + offsets[j] + _mix64(word))
    return h


class RowStreams:
    """Random numbers indexed by (row key, seed, draw, purpose, column).

    Each number is a function of those indices only, so a row gets the same
    draws whether it is drawn alone or within any batch of rows: batch
    independence by construction. Uniforms are 53-bit, strictly inside
    (0, 1); normals are their inverse normal CDF.

    Parameters
    ----------
    keys : ndarray of shape (n_rows,), dtype uint64
        From :func:`row_keys`.
    seed : int
        At least 0 (e.g. from :func:`integer_seeds`).

    Examples
    --------
    A row's numbers do not depend on the other rows of the batch:

    >>> import numpy as np
    >>> from missingkernels.utils import RowStreams, row_keys
    >>> X = np.array([[1.0, np.nan], [2.0, 3.0], [np.nan, 4.0]])
    >>> keys = row_keys(X, np.isnan(X))
    >>> batch = RowStreams(keys, seed=7).normal(draw=0, size=2)
    >>> alone = RowStreams(keys[2:], seed=7).normal(draw=0, size=2)
    >>> bool(np.array_equal(batch[2:], alone)), batch.shape
    (True, (3, 2))
    """

    def __init__(self, keys: np.ndarray, seed: int) -> None:
        if np.ndim(keys) != 1:
            raise ValueError(
                f"keys must be 1-d (one per row, from row_keys); got shape "
                f"{np.shape(keys)}."
            )
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}.")
        self.keys = _mix64(
            np.asarray(keys, dtype=np.uint64) ^ _mix64(np.array([seed], np.uint64))
        )

    def take(self, rows: np.ndarray) -> RowStreams:
        """The streams of a subset of rows."""
        out = RowStreams.__new__(RowStreams)
        out.keys = self.keys[rows]
        return out

    def uniform(self, draw: int, size: int, purpose: int = 0) -> np.ndarray:
        """``(n_rows, size)`` uniforms on (0, 1) for one draw and purpose."""
        counter = (np.uint64(draw) << np.uint64(34)) + (
            np.uint64(purpose) << np.uint64(26)
        )
        cols = counter + np.arange(1, size + 1, dtype=np.uint64)
        z = _mix64(self.keys[:, None] + _GOLDEN * cols[None, :])
        return ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53

    def normal_draws(self, n_draws: int, size: int, purpose: int = 0) -> np.ndarray:
        """``(n_draws, n_rows, size)``: :meth:`normal` of draws ``0 .. n_draws
        - 1`` at once (the same numbers)."""
        from scipy.special import ndtri

        draws = np.arange(n_draws, dtype=np.uint64)[:, None]
        counter = (draws << np.uint64(34)) + (np.uint64(purpose) << np.uint64(26))
        cols = counter + np.arange(1, size + 1, dtype=np.uint64)[None, :]
        z = _mix64(self.keys[None, :, None] + _GOLDEN * cols[:, None, :])
        u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53
        return np.asarray(ndtri(u))

    def normal(self, draw: int, size: int, purpose: int = 0) -> np.ndarray:
        """``(n_rows, size)`` standard normals for one draw and purpose."""
        from scipy.special import ndtri

        return np.asarray(ndtri(self.uniform(draw, size, purpose)))


def seed_of(random_state: Any) -> int:
    """An integer seed: ``random_state`` itself if an int, else one drawn from it."""
    if isinstance(random_state, int | np.integer) and not isinstance(
        random_state, bool
    ):
        return int(random_state) & 0xFFFFFFFFFFFFFFFF
    return int(integer_seeds(random_state, 1)[0])


def constant_features(X: np.ndarray) -> np.ndarray:
    """Mask of the features whose observed entries all take one value.

    Exact (largest minus smallest observed value is zero), unlike a zero
    standard deviation, which rounding misses for tiny or huge constants.
    Features with no observed entry count as constant.
    """
    missing = np.isnan(X)
    hi = np.where(missing, -np.inf, X).max(axis=0, initial=-np.inf)
    lo = np.where(missing, np.inf, X).min(axis=0, initial=np.inf)
    return ~(hi > lo)
