"""Helpers shared by several test modules: ``from _helpers import ...``.

Test modules never import each other or ``conftest``: what two of them share
lives here. ``tests/`` is on ``sys.path`` because it holds ``conftest.py``
(pytest's default ``prepend`` import mode).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from missingkernels.conditionals import GaussianConditionals
from missingkernels.densities import BaseDensity

# -- a fixed Gaussian density and random data ------------------------------------


class FixedGaussian(BaseDensity):
    """N(mean, covariance) whatever the training rows (given, not fitted)."""

    representation: ClassVar[str] = "gaussian"

    def __init__(self, mean=None, covariance=None):
        self.mean = mean
        self.covariance = covariance

    def _fit(self, X):
        self.mean_ = np.asarray(self.mean, dtype=float)
        self.covariance_ = np.asarray(self.covariance, dtype=float)

    def _conditionals(self, X):
        return GaussianConditionals.from_moments(X, self.mean_, self.covariance_)


def random_gaussian(rng, d, scale=1.0):
    A = rng.normal(size=(d, d))
    S = (A @ A.T / d + 0.3 * np.eye(d)) * scale**2
    return rng.normal(size=d) * scale, S


def mcar(rng, X, rate):
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    return X


# -- the naive expected RBF reference ------------------------------------------


def naive_expected_rbf(a, A, b, B, gamma, S=None):
    """E exp(-gamma ||X - Y||^2_W) for X ~ N(a, A), Y ~ N(b, B), per the closed form.

    docs/theory.rst, section "Expected RBF"; ``S`` given: the Mahalanobis
    metric (section "Two metrics: Euclidean and Mahalanobis").
    """
    d = len(a)
    if S is not None:
        W = np.linalg.inv(np.linalg.cholesky(S))  # W^T W = S^-1
        a, b, A, B = W @ a, W @ b, W @ A @ W.T, W @ B @ W.T
    delta = a - b
    _, logdet = np.linalg.slogdet(np.eye(d) + 2 * gamma * (A + B))
    quad = delta @ np.linalg.solve(A + B + np.eye(d) / (2 * gamma), delta)
    return np.exp(-0.5 * logdet - 0.5 * quad)


# -- assertions ---------------------------------------------------------------------


def assert_rel(actual, expected, rtol=1e-10):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape
    assert np.all(np.isfinite(actual))
    err = np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300)
    worst = np.unravel_index(np.argmax(err), err.shape)
    assert err.max() <= rtol, (
        f"relative error {err.max():.3g} at {worst}: {actual[worst]!r} vs "
        f"{expected[worst]!r}"
    )


# Unit roundoff of float64: every elementary operation is exact to (1 + u).
UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2


def conditioning_log_error(S, gamma):
    """Bound on ``|log E k - log E k'|`` between two computations of an expected
    RBF from the same covariance ``S`` by different algorithms.

    Each conditional covariance is a Schur complement of ``S``; computed by
    Cholesky factors, it carries a normwise error of about
    ``d u kappa(S) ||S||`` (Higham, *Accuracy and Stability of Numerical
    Algorithms*, 2nd ed., Thm. 10.4 and Sec. 13.3), and two algorithms (low-rank
    and full, or two BLAS kernels) make different such errors. ``log E k`` moves
    by ``gamma`` per unit of covariance (the log-determinant and the quadratic
    form of ``I + 2 gamma (A + B)``, whose inverse has norm at most 1), so the
    two logs, hence the two values relatively, differ by at most this bound.
    """
    S = np.asarray(S, dtype=float)
    return len(S) * UNIT_ROUNDOFF * np.linalg.cond(S) * gamma * np.linalg.norm(S, 2)


def assert_variance_close(V, V_ref, K_ref, rtol, atol=0.0):
    """Variances ``V = E k^2 - (E k)^2`` agree on the scale of their terms.

    A variance is a difference of two nearly equal terms when the kernel barely
    varies, so it inherits their *absolute* error, not a relative one: if each
    term is exact to relative ``rtol / 2``, each variance is within
    ``(rtol / 2) (E k^2 + 2 (E k)^2) <= 1.5 rtol E k^2`` of the truth (Jensen:
    ``(E k)^2 <= E k^2``), and two of them agree to ``3 rtol E k^2``. The second
    moment is read off the reference: ``E k^2 = V_ref + K_ref^2``.
    """
    V, V_ref, K_ref = (np.asarray(a, dtype=float) for a in (V, V_ref, K_ref))
    assert V.shape == V_ref.shape == K_ref.shape
    second = V_ref + K_ref**2
    err = np.abs(V - V_ref)
    allowed = 3.0 * rtol * second + atol
    worst = np.unravel_index(np.argmax(err / allowed), err.shape)
    assert np.all(err <= allowed), (
        f"variance error {err[worst]:.3g} at {worst} exceeds {allowed[worst]:.3g} "
        f"(3 x {rtol:.3g} x E k^2 = {second[worst]:.3g}): {V[worst]!r} vs "
        f"{V_ref[worst]!r}"
    )


def assert_psd(K):
    assert np.allclose(K, K.T, rtol=0, atol=1e-14 * max(1.0, np.abs(K).max()))
    smallest = np.linalg.eigvalsh(0.5 * (K + K.T)).min()
    assert smallest >= -1e-10 * len(K), f"smallest eigenvalue {smallest:.3g}"


# -- shared real datasets -------------------------------------------------------


def load_shared_csv(data_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load ``<name>.csv`` of the shared data: numeric features (NaN) and target."""
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(data_dir / f"{name}.csv")
    y = frame.pop("target").to_numpy()
    return frame.to_numpy(dtype=np.float64), y
