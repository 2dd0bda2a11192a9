"""The public contract of the registry kernels: parameters, errors, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import FixedGaussian, mcar, random_gaussian
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from missingkernels import get_density, get_kernel, list_kernels
from missingkernels._sklearn_compat import InvalidParameterError
from missingkernels.kernels import (
    BaseExpectedKernel,
    BelancheK1Kernel,
    BelancheK2Kernel,
    ExpectedLinearKernel,
    ExpectedRBFKernel,
    GenRBFKernel,
)

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

NAMES = {
    "genrbf": (GenRBFKernel, "gaussian_em", "independent"),
    "expected_rbf": (ExpectedRBFKernel, "gaussian_em", "same_draw"),
    "expected_linear": (ExpectedLinearKernel, "gaussian_em", "same_draw"),
    "belanche_k1": (BelancheK1Kernel, "categorical", "independent"),
    "belanche_k2": (BelancheK2Kernel, "categorical", "independent"),
}


@pytest.fixture
def X(rng):
    return mcar(rng, rng.normal(size=(30, 4)) @ rng.normal(size=(4, 4)), 0.25)


@pytest.fixture
def B(rng):
    X = (rng.random((30, 4)) < 0.5).astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    return X


def test_registry_names_and_defaults():
    kernels = list_kernels()
    for name, (cls, density, diagonal) in NAMES.items():
        assert name in kernels
        k = get_kernel(name)
        assert type(k) is cls and isinstance(k, BaseExpectedKernel)
        params = k.get_params()
        assert params["density"] == density and params["diagonal"] == diagonal
        if "rbf" in name:
            assert params["gamma"] == "scale" and params["metric"] == "euclidean"
        else:
            assert "gamma" not in params and "metric" not in params
        assert kernels[name].description


def test_parameters_follow_sklearn_conventions(X):
    k = get_kernel("genrbf", gamma=0.5, metric="mahalanobis")
    c = clone(k)
    assert c.get_params() == k.get_params()
    k.fit(X)
    assert not hasattr(c, "density_")
    assert k.density_.mean_.shape == (4,) and k.density_.covariance_.shape == (4, 4)
    assert k.n_features_in_ == 4 and k.gamma_ == 0.5
    k.set_params(gamma=2.0)
    assert k.gamma == 2.0


@pytest.mark.parametrize(
    "name,params",
    [
        ("genrbf", {"gamma": -1.0}),
        ("genrbf", {"gamma": "auto"}),
        ("expected_rbf", {"metric": "cosine"}),
        ("expected_rbf", {"diagonal": "both"}),
        ("expected_linear", {"density": 3}),
    ],
)
def test_invalid_parameters(X, name, params):
    with pytest.raises(InvalidParameterError):
        get_kernel(name, **params).fit(X)


def test_incompatible_density_names_the_compatible_ones(X, B):
    with pytest.raises(ValueError, match="'categorical'") as info:
        get_kernel("genrbf", density="categorical").fit(B)
    message = str(info.value)
    for compatible in ("gaussian_em", "gaussian_mixture", "mice", "iterative"):
        assert repr(compatible) in message
    with pytest.raises(ValueError, match="Compatible densities") as info:
        get_kernel("belanche_k1", density="gaussian_em").fit(X)
    # Regression draws (mice, iterative) are not category codes: not listed.
    assert "'categorical'" in str(info.value)
    assert "'mice'" not in str(info.value) and "'iterative'" not in str(info.value)
    with pytest.raises(ValueError, match="Unknown density"):
        get_kernel("genrbf", density="no_such_density").fit(X)


def test_density_object_is_cloned(X):
    density = get_density("gaussian_em", max_iter=2000)
    k = get_kernel("expected_rbf", density=density).fit(X)
    assert not hasattr(density, "mean_")
    assert k.density_ is not density and k.density_.max_iter == 2000


def test_errors_before_fit_and_on_wrong_shapes(X):
    k = get_kernel("genrbf")
    with pytest.raises(NotFittedError):
        k(X)
    k.fit(X)
    with pytest.raises(ValueError, match="features"):
        k(X[:, :3])
    with pytest.raises(ValueError):
        k(np.where(np.isnan(X), np.inf, X))


def test_empty_and_fully_missing_rows(X):
    k = get_kernel("genrbf", gamma=0.3).fit(X)
    assert k(X[:0], X).shape == (0, 30)
    assert k(X, X[:0]).shape == (30, 0)
    assert k(X[:0]).shape == (0, 0)
    assert k.variance(X[:0], X).shape == (0, 30)
    empty = np.full((2, 4), np.nan)
    K = k(empty, X)
    assert np.all(np.isfinite(K)) and np.all(K > 0)
    # Two fully missing rows are the same distribution: genRBF gives 1.
    assert k(empty)[0, 1] == pytest.approx(1.0, rel=1e-12)


def test_k_of_x_x_is_independent_everywhere(X):
    k = get_kernel("expected_rbf", gamma=0.5).fit(X)
    same, cross = k(X), k(X, X)
    off = ~np.eye(30, dtype=bool)
    assert np.array_equal(np.diag(same), np.ones(30))
    assert np.allclose(same[off], cross[off], rtol=1e-13)
    missing = np.isnan(X).any(axis=1)
    assert np.all(np.diag(cross)[missing] < 1.0)
    assert np.allclose(np.diag(cross)[~missing], 1.0)
    assert np.allclose(k(X, X.copy()), cross, rtol=1e-13)


def test_thread_count_does_not_change_results(X, monkeypatch):
    k = get_kernel("genrbf", gamma=0.5, metric="mahalanobis").fit(X)
    K = k(X)
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "1")
    assert np.array_equal(k(X), K)
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "3")
    assert np.array_equal(k(X), K)
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="MISSINGKERNELS_NUM_THREADS"):
        k(X)


def test_singular_covariance_with_mahalanobis(rng):
    mean = np.zeros(3)
    S = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    X = rng.normal(size=(10, 3))
    with pytest.raises(ValueError, match="positive definite covariance"):
        get_kernel("genrbf", metric="mahalanobis", density=FixedGaussian(mean, S)).fit(
            X
        )


def test_invalid_conditional_covariance_is_an_error(rng):
    mean = np.zeros(2)
    S = np.array([[1.0, 2.0], [2.0, 1.0]])  # indefinite: C_1|0 = 1 - 4 < 0
    # (feature 1 observed twice: not dropped as too sparse)
    X = np.array([[0.0, np.nan], [1.0, 2.0], [0.5, 1.0]])
    k = get_kernel("expected_rbf", gamma=1.0, density=FixedGaussian(mean, S)).fit(X)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        k(X)


def test_results_are_float64_arrays(X, B):
    for name in NAMES:
        data = B if "belanche" in name else X
        K = get_kernel(name).fit(data)(data[:5], data)
        assert isinstance(K, np.ndarray) and K.dtype == np.float64
        assert K.shape == (5, 30)


def test_default_gamma_matches_documented_scale(rng):
    mean, S = random_gaussian(rng, 3, scale=5.0)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=40), 0.2)
    k = get_kernel("genrbf").fit(X)
    observed = X[~np.isnan(X)]
    assert k.gamma_ == pytest.approx(1.0 / (3 * observed.var()))


def test_training_conditionals_are_reused(X, monkeypatch):
    k = get_kernel("genrbf", gamma=0.5).fit(X)
    expected = k(X)
    calls = []
    original = type(k.density_).conditionals

    def counting(self, rows):
        calls.append(len(rows))
        return original(self, rows)

    monkeypatch.setattr(type(k.density_), "conditionals", counting)
    assert np.array_equal(k(X.copy()), expected)  # same rows: cached
    assert calls == []
    other = X[:7].copy()
    other[0, 0] = 123.0
    k(other, X)
    assert calls == [7]  # only the new rows are conditioned
