"""Expected kernel features: exact maps reproduce their kernels; random
Fourier features are unbiased with an error falling like 1/sqrt(D); Nystroem
uses exact entries. References: the kernels' own Gram matrices (themselves
tested against naive per-pair references and Monte Carlo elsewhere)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _helpers import mcar
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from missingkernels import ExpectedKernelFeatures, MissingKernelSVC, get_density
from missingkernels.densities import SingularCovarianceWarning

DENSITIES = {
    "factor_analysis": {"n_factors": 1},
    "gaussian_em": {},
    "gaussian_mixture": {"n_components": 2, "random_state": 0},
    "iterative": {"n_draws": 3, "random_state": 0},
}


def _numeric(seed=0, n=60, d=3, rate=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    X /= X.std(axis=0)
    return mcar(rng, X, rate)


def _codes(seed=0, n=50, d=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, d)).astype(float)
    return mcar(rng, X, 0.3)


def _features(kernel, density, X, **params):
    return ExpectedKernelFeatures(
        kernel=kernel, density=get_density(density, **DENSITIES.get(density, {})),
        **params,
    ).fit(X)  # fmt: skip


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*did not converge.*")
        yield


@pytest.mark.parametrize("density", sorted(DENSITIES))
def test_expected_linear_map_is_exact(density):
    X = _numeric()
    f = _features("expected_linear", density, X[:40])
    assert f.method_ == "exact"
    Z, W = f.transform(X[:40]), f.transform(X[40:])
    K = f.kernel_(X[:40], X[40:])
    np.testing.assert_allclose(Z @ W.T, K, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kernel", ["belanche_k1", "belanche_k2"])
def test_belanche_maps_are_exact(kernel):
    X = _codes()
    if kernel == "belanche_k2":
        X = np.where(np.isnan(X), np.nan, (X > 0).astype(float))
    f = _features(kernel, "categorical", X[:35])
    assert f.method_ == "exact"
    Z, W = f.transform(X[:35]), f.transform(X[35:])
    np.testing.assert_allclose(Z @ W.T, f.kernel_(X[:35], X[35:]), atol=1e-12)
    # Off the diagonal, the training rows too.
    G = f.kernel_(X[:35])
    off = ~np.eye(35, dtype=bool)
    np.testing.assert_allclose((Z @ Z.T)[off], G[off], atol=1e-12)


def test_a_code_unseen_in_training_matches_nothing():
    X = _codes()
    f = ExpectedKernelFeatures(
        kernel="belanche_k1",
        density=get_density("categorical", handle_unknown="ignore"),
    ).fit(X)
    new = np.array([[7.0, 0.0, 1.0, 2.0]])
    z = f.transform(new)
    # Feature 0 contributes nothing: the inner product counts 3 of 4 features.
    other = np.array([[7.0, 0.0, 1.0, 2.0]])
    assert z @ f.transform(other).T == pytest.approx(3 / 4)


CASES = [
    ("expected_rbf", "gaussian_em", "euclidean"),
    ("genrbf", "gaussian_em", "euclidean"),
    ("genrbf", "gaussian_em", "mahalanobis"),
    ("expected_rbf", "gaussian_mixture", "euclidean"),
    ("genrbf", "gaussian_mixture", "mahalanobis"),
    ("genrbf", "iterative", "euclidean"),
]


@pytest.mark.parametrize("kernel,density,metric", CASES)
def test_fourier_features_are_unbiased(kernel, density, metric):
    """Over 300 seeds, each entry's mean is within 4 standard errors."""
    X = _numeric(n=30)
    pairs = (np.array([0, 1, 2, 5, 9, 20]), np.array([3, 4, 7, 11, 25, 29]))
    estimates = []
    f = _features(kernel, density, X, metric=metric, n_components=40)
    assert f.method_ == "fourier"
    # New frequencies per seed on the one fitted density (as refitting with
    # random_state=seed would draw them).
    _, train = f.kernel_._conditionals(X)
    for seed in range(300):
        fmap = f.kernel_.base_kernel_.feature_map(train, 40, seed)
        Z = f._features(fmap, X)
        estimates.append(np.einsum("pk,pk->p", Z[pairs[0]], Z[pairs[1]]))
    estimates = np.array(estimates)
    exact = f.kernel_(X, X.copy())[pairs]
    se = estimates.std(axis=0, ddof=1) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - exact) <= 4 * se + 1e-12)


def test_fourier_error_falls_like_one_over_sqrt_d():
    X = _numeric(n=80)
    rms = {}
    for D in (100, 1600):
        errs = []
        for seed in range(5):
            f = _features("genrbf", "gaussian_em", X, n_components=D, random_state=seed)
            Z = f.transform(X)
            K = f.kernel_(X, X.copy())
            errs.append(np.mean((Z @ Z.T - K) ** 2))
        rms[D] = np.sqrt(np.mean(errs))
    # 16x the features: 4x smaller error (sampling spread allowed).
    assert 2.5 < rms[100] / rms[1600] < 6.5


def test_nystroem_on_every_training_row_is_the_kernel():
    X = _numeric(n=40)
    f = _features(
        "expected_polynomial", "gaussian_em", X, method="nystroem", n_components=40
    )
    assert f.method_ == "nystroem" and len(f.landmarks_) == 40
    Z = f.transform(X)
    K = f.kernel_(X, X.copy())
    np.testing.assert_allclose(Z @ Z.T, K, rtol=1e-7, atol=1e-9 * np.abs(K).max())


def test_auto_uses_nystroem_where_no_map_averages():
    X = _numeric(n=40)
    f = _features("expected_polynomial", "gaussian_em", X, n_components=10)
    assert f.method_ == "nystroem"
    with pytest.raises(ValueError, match=r"method='nystroem' \(any kernel\)\.$"):
        _features("expected_polynomial", "gaussian_em", X, method="expected")


def test_kmeans_landmarks_are_training_rows():
    X = _numeric(n=60)
    f = _features(
        "genrbf", "gaussian_em", X, method="nystroem", landmarks="kmeans",
        n_components=12, random_state=0,
    )  # fmt: skip
    assert len(f.landmarks_) == 12
    for row in f.landmarks_:
        assert any(np.array_equal(row, x, equal_nan=True) for x in X)


def test_float32_output_and_feature_names():
    X = _numeric()
    f = _features("genrbf", "gaussian_em", X, n_components=20, dtype="float32")
    Z = f.transform(X)
    assert Z.dtype == np.float32 and Z.shape == (len(X), 20)
    assert f.get_feature_names_out()[0] == "expectedkernelfeatures0"


def test_features_and_a_linear_model_approach_the_exact_svm():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] * X[:, 1] + 0.5 * X[:, 2] > 0).astype(int)
    X = mcar(rng, X, 0.3)
    train, test = slice(0, 400), slice(400, None)
    exact = MissingKernelSVC(gamma=0.25, C=10.0).fit(X[train], y[train])
    model = make_pipeline(
        ExpectedKernelFeatures(gamma=0.25, n_components=2000, random_state=0),
        LinearSVC(C=10.0, max_iter=20000),
    ).fit(X[train], y[train])
    assert model.score(X[test], y[test]) >= exact.score(X[test], y[test]) - 0.05
    proba = make_pipeline(
        ExpectedKernelFeatures(gamma=0.25, n_components=500, random_state=0),
        LogisticRegression(C=10.0, max_iter=2000),
    ).fit(X[train], y[train])
    assert proba.predict_proba(X[test]).shape == (200, 2)


@parametrize_with_checks([ExpectedKernelFeatures(n_components=20, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_the_feature_route_of_the_svms_approaches_the_exact_route():
    from missingkernels import MissingKernelSVR

    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, 4))
    y = (X[:, 0] * X[:, 1] + 0.5 * X[:, 2] > 0).astype(int)
    X = mcar(rng, X, 0.3)
    tr, te = slice(0, 500), slice(500, None)
    exact = MissingKernelSVC(gamma=0.25, C=10.0, route="exact").fit(X[tr], y[tr])
    feats = MissingKernelSVC(
        gamma=0.25, C=10.0, route="features", n_kernel_features=3000, random_state=0
    ).fit(X[tr], y[tr])
    assert exact.route_ == "exact" and feats.route_ == "features"
    agree = (exact.predict(X[te]) == feats.predict(X[te])).mean()
    assert agree > 0.9
    assert feats.score(X[te], y[te]) >= exact.score(X[te], y[te]) - 0.05
    target = rng.normal(size=700)
    reg = MissingKernelSVR(route="features", n_kernel_features=200, random_state=0)
    assert reg.fit(X[tr], target[tr]).predict(X[te]).shape == (200,)


@parametrize_with_checks(
    [MissingKernelSVC(route="features", n_kernel_features=50, random_state=0)],
    expected_failed_checks=lambda est: {
        "check_sample_weight_equivalence_on_dense_data": (
            "sample_weight weights the SVM's loss only, not the features' density"
        )
    },
)
def test_feature_route_is_sklearn_compatible(estimator, check):
    # The sample_weight checks fit on a handful of rows, where the density
    # says its covariance is singular: expected there.
    with warnings.catch_warnings():
        if "sample_weight" in check.func.__name__:
            warnings.simplefilter("ignore", SingularCovarianceWarning)
        check(estimator)


def test_density_rows_fits_the_kernel_on_a_random_subsample():
    from missingkernels.densities import GaussianEMDensity

    X = _numeric(n=300)
    f = ExpectedKernelFeatures(density_rows=80, n_components=8, random_state=4)
    f.fit(X)
    chosen = np.sort(np.random.RandomState(4).choice(300, 80, replace=False))
    reference = GaussianEMDensity().fit(X[chosen])
    np.testing.assert_allclose(f.kernel_.density_.mean_, reference.mean_)
    assert f.transform(X).shape == (300, 8)
