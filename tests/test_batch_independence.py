"""A row's conditionals, draws and scores do not depend on the other rows.

Every density's conditionals of a row are a function of that row, the fitted
density and the seed: a row alone gets what it gets within any batch. The
SVMs therefore score a support vector's row with the draws they trained on,
and scoring the training rows returns the decisions the SVM was trained with.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _helpers import mcar

from missingkernels import MissingKernelSVC, MissingKernelSVR, get_density, get_kernel
from missingkernels.conditionals import SampleConditionals

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

DENSITIES = {
    "categorical": {},
    "factor_analysis": {"n_factors": 1},
    "gaussian_em": {},
    "gaussian_mixture": {"n_components": 2, "random_state": 0},
    "iterative": {"n_draws": 3, "random_state": 0},
    "mice": {"n_draws": 3, "random_state": 0},
}
# Conditional means computed in another batch may round differently (BLAS).
TOL = {"rtol": 1e-9, "atol": 1e-12}


def _rows(name, rng, n=40, d=3):
    if name == "categorical":
        X = rng.integers(0, 3, size=(n, d)).astype(float)
    else:
        X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    return mcar(rng, X, 0.3)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*did not converge.*")
        yield


@pytest.mark.parametrize("name", sorted(DENSITIES))
def test_conditionals_and_draws_of_a_row_do_not_depend_on_the_batch(name, rng):
    X = _rows(name, rng)
    density = get_density(name, **DENSITIES[name]).fit(X[:30])
    T = X[30:]
    batch = density.conditionals(T)
    batch_draws = batch.sample(4, random_state=5).samples
    for i in range(len(T)):
        alone = density.conditionals(T[i : i + 1])
        np.testing.assert_allclose(
            alone.first_moments()[0], batch.first_moments()[i], **TOL
        )
        if isinstance(batch, SampleConditionals):
            np.testing.assert_allclose(alone.samples[:, 0], batch.samples[:, i], **TOL)
        draws = alone.sample(4, random_state=5).samples[:, 0]
        np.testing.assert_allclose(draws, batch_draws[:, i], **TOL)
    # Reversing the batch only reverses the draws.
    reverse = density.conditionals(T[::-1]).sample(4, random_state=5).samples
    np.testing.assert_allclose(reverse[:, ::-1], batch_draws, **TOL)


def test_draws_are_seeded_and_distinct_across_seeds_and_draws(rng):
    X = _rows("gaussian_em", rng)
    c = get_density("gaussian_em").fit(X).conditionals(X)
    a = c.sample(3, random_state=1).samples
    np.testing.assert_array_equal(a, c.sample(3, random_state=1).samples)
    b = c.sample(3, random_state=2).samples
    missing = c.missing
    assert np.all(a[:, missing] != b[:, missing])
    assert np.all(a[0, missing] != a[1, missing])


def test_row_keyed_draws_follow_the_conditional_distribution():
    """Many draws of one row: mean and covariance within 4 standard errors."""
    mean = np.array([1.0, -1.0, 0.5])
    S = np.array([[2.0, 0.8, 0.3], [0.8, 1.0, 0.4], [0.3, 0.4, 1.5]])
    from missingkernels.conditionals import GaussianConditionals

    c = GaussianConditionals.from_moments(np.array([[2.0, np.nan, np.nan]]), mean, S)
    n = 4000
    draws = c.sample(n, random_state=0).samples[:, 0, 1:]
    mu = mean[1:] + S[1:, :1] @ np.linalg.solve(S[:1, :1], [2.0 - mean[0]])
    C = S[1:, 1:] - S[1:, :1] @ np.linalg.solve(S[:1, :1], S[:1, 1:])
    assert np.all(np.abs(draws.mean(0) - mu) < 4 * np.sqrt(np.diag(C) / n))
    se_cov = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C**2) / n)
    assert np.all(np.abs(np.cov(draws, rowvar=False) - C) < 4 * se_cov)


def test_the_draws_fallback_is_batch_independent(rng):
    X = _rows("gaussian_em", rng)
    k = get_kernel("expected_polynomial", degree=3, gamma=0.3, n_draws=20)
    k.fit(X[:30])
    T = X[30:]
    K = k(T, X[:5])
    for i in range(len(T)):
        np.testing.assert_allclose(k(T[i : i + 1], X[:5])[0], K[i], **TOL)


@pytest.mark.parametrize("kernel", ["genrbf", "expected_rbf", "expected_linear"])
@pytest.mark.parametrize("density", ["gaussian_em", "iterative", "mice"])
def test_svc_scores_rows_alone_as_in_a_batch_and_training_rows_as_trained(
    kernel, density, rng
):
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X = mcar(rng, X, 0.3)
    svc = MissingKernelSVC(
        kernel=kernel, density=density, kernel_params=None, C=1.0
    ).set_params(density=get_density(density, **DENSITIES[density]))
    svc.fit(X[:60], y[:60])
    # The kernel sees the standardised training rows.
    Z = (X[:60] - svc.x_center_) / svc.x_scale_
    trained = svc.svm_.decision_function(svc.kernel_(Z))
    np.testing.assert_allclose(svc.decision_function(X[:60]), trained, **TOL)
    np.testing.assert_array_equal(svc.predict(X[:60]), svc.classes_[(trained > 0) * 1])
    T = X[60:]
    scores = svc.decision_function(T)
    alone = np.array([svc.decision_function(T[i : i + 1])[0] for i in range(len(T))])
    np.testing.assert_allclose(alone, scores, **TOL)


def test_svr_predicts_training_rows_as_trained(rng):
    X = rng.normal(size=(60, 3))
    y = X[:, 0] - 2 * X[:, 1]
    X = mcar(rng, X, 0.3)
    svr = MissingKernelSVR(kernel="expected_rbf", density="iterative").fit(X, y)
    Z = (X - svr.x_center_) / svr.x_scale_
    trained = svr.svm_.predict(svr.kernel_(Z)) * svr.y_scale_ + svr.y_center_
    np.testing.assert_allclose(svr.predict(X), trained, **TOL)


def test_every_draws_normals_at_once_are_each_draws_normals():
    """RowStreams.normal_draws (the Gaussian draws, pattern by pattern) makes
    exactly the numbers of normal() called draw by draw."""
    from missingkernels._numerics import RowStreams

    keys = np.arange(1, 40, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    streams = RowStreams(keys, seed=7)
    together = streams.normal_draws(6, 3)
    for m in range(6):
        np.testing.assert_array_equal(together[m], streams.normal(m, 3))
