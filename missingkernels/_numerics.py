"""Small numerical helpers shared across the package (one of each).

- :func:`psd_factor`: a factor ``F`` with ``F F^T = C`` of a PSD matrix.
- :func:`scale_gamma`: the ``gamma="scale"`` rule over observed entries.
- :func:`integer_seeds`: integer seeds derived from a ``random_state``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["integer_seeds", "psd_factor", "scale_gamma"]

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
    var = float(np.nanvar(X))
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def integer_seeds(random_state: Any, size: int) -> np.ndarray:
    """``size`` integer seeds in ``[0, 2**31 - 1)`` drawn from ``random_state``."""
    return check_random_state(random_state).randint(np.iinfo(np.int32).max, size=size)
