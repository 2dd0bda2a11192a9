"""Tests of GaussianMixtureDensity (Ghahramani & Jordan EM with missing data)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from missingkernels import get_density
from missingkernels._sklearn_compat import InvalidParameterError
from missingkernels.conditionals import MixtureConditionals
from missingkernels.densities import (
    GaussianEMDensity,
    GaussianMixtureDensity,
    SingularCovarianceWarning,
)

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

TRUE_WEIGHTS = np.array([0.5, 0.3, 0.2])
TRUE_MEANS = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 5.0], [0.0, 10.0, -5.0]])
TRUE_COVS = np.array(
    [
        [[1.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 1.0]],
        [[2.0, -0.8, 0.0], [-0.8, 1.0, 0.0], [0.0, 0.0, 0.5]],
        [[0.5, 0.0, 0.2], [0.0, 1.5, 0.0], [0.2, 0.0, 1.0]],
    ]
)


def _sample(rng, n):
    labels = rng.choice(3, size=n, p=TRUE_WEIGHTS)
    X = np.empty((n, 3))
    for k in range(3):
        rows = labels == k
        X[rows] = rng.multivariate_normal(TRUE_MEANS[k], TRUE_COVS[k], rows.sum())
    return X


def _mcar(rng, X, rate):
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    return X


def _mixture_loglik(X, weights, means, covs):
    total = 0.0
    for x in X:
        o = ~np.isnan(x)
        if o.any():
            terms = [
                np.log(w) + multivariate_normal(m[o], c[np.ix_(o, o)]).logpdf(x[o])
                for w, m, c in zip(weights, means, covs, strict=True)
            ]
            total += logsumexp(terms)
    return total


def _naive_em_step(X, weights, means, covs, ridge):
    """One Ghahramani-Jordan EM step written per row (the paper's formulas)."""
    X = X[~np.isnan(X).all(axis=1)]
    n, d = X.shape
    K = len(weights)
    D = np.diag(np.nanvar(X, axis=0))
    resp = np.zeros((n, K))
    xhat = np.zeros((K, n, d))
    C = np.zeros((K, n, d, d))
    for i, x in enumerate(X):
        J = np.isnan(x)
        O = ~J  # noqa: E741
        for k in range(K):
            m, S = means[k], covs[k]
            resp[i, k] = np.log(weights[k]) + multivariate_normal(
                m[O], S[np.ix_(O, O)]
            ).logpdf(x[O])
            xhat[k, i] = x
            if J.any():
                coef = np.linalg.solve(S[np.ix_(O, O)], S[np.ix_(O, J)])
                xhat[k, i, J] = m[J] + (x[O] - m[O]) @ coef
                C[k, i][np.ix_(J, J)] = S[np.ix_(J, J)] - S[np.ix_(J, O)] @ coef
        resp[i] = np.exp(resp[i] - logsumexp(resp[i]))
    Nk = resp.sum(axis=0)
    new_means = np.einsum("nk,knd->kd", resp, xhat) / Nk[:, None]
    new_covs = np.empty((K, d, d))
    for k in range(K):
        diff = xhat[k] - new_means[k]
        scatter = np.einsum("n,ni,nj->ij", resp[:, k], diff, diff)
        scatter += np.einsum("n,nij->ij", resp[:, k], C[k])
        new_covs[k] = (scatter + n / K * ridge * D) / Nk[k]
    return Nk / n, new_means, new_covs


def _match(density):
    """Order the fitted components like the true ones (nearest means)."""
    return [
        int(np.argmin(np.linalg.norm(density.means_ - m, axis=1))) for m in TRUE_MEANS
    ]


def test_registered_and_params():
    density = get_density("gaussian_mixture", n_components=2, random_state=0)
    assert isinstance(density, GaussianMixtureDensity)
    assert GaussianMixtureDensity.representation == "mixture"
    copy = clone(density.set_params(ridge=1e-3))
    assert copy.get_params()["ridge"] == 1e-3 and copy.n_components == 2


def test_recovers_well_separated_components(rng):
    X = _mcar(rng, _sample(rng, 3000), 0.2)
    density = GaussianMixtureDensity(n_components=3, random_state=0).fit(X)
    order = _match(density)
    assert sorted(order) == [0, 1, 2]
    np.testing.assert_allclose(density.weights_[order], TRUE_WEIGHTS, atol=0.03)
    np.testing.assert_allclose(density.means_[order], TRUE_MEANS, atol=0.15)
    np.testing.assert_allclose(density.covariances_[order], TRUE_COVS, atol=0.2)
    assert density.converged_


def test_em_fixed_point_matches_naive_step(rng):
    X = _mcar(rng, _sample(rng, 300), 0.3)
    X[5] = np.nan
    density = GaussianMixtureDensity(
        prior_rows=0, n_components=3, tol=1e-11, ridge=1e-3, random_state=1
    ).fit(X)
    weights, means, covs = _naive_em_step(
        X, density.weights_, density.means_, density.covariances_, ridge=1e-3
    )
    np.testing.assert_allclose(weights, density.weights_, atol=1e-8)
    np.testing.assert_allclose(means, density.means_, atol=1e-7)
    np.testing.assert_allclose(covs, density.covariances_, atol=1e-7)


def test_one_step_from_start_matches_naive(rng):
    # After the fit, a single further EM iteration from any parameters must
    # be the naive step: use the (non-converged) 2-iteration estimate.
    X = _mcar(rng, _sample(rng, 200), 0.3)
    with pytest.warns(ConvergenceWarning):
        two = GaussianMixtureDensity(
            prior_rows=0, max_iter=2, tol=0, random_state=3
        ).fit(X)
    with pytest.warns(ConvergenceWarning):
        three = GaussianMixtureDensity(
            prior_rows=0, max_iter=3, tol=0, random_state=3
        ).fit(X)
    weights, means, covs = _naive_em_step(
        X, two.weights_, two.means_, two.covariances_, ridge=1e-6
    )
    np.testing.assert_allclose(weights, three.weights_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(means, three.means_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(covs, three.covariances_, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("rate", [0.1, 0.4])
@pytest.mark.parametrize("acceleration", ["none", "squarem"])
def test_objective_never_decreases(rng, rate, acceleration):
    X = _mcar(rng, _sample(rng, 400), rate)
    density = GaussianMixtureDensity(
        prior_rows=0, tol=1e-8, random_state=0, acceleration=acceleration
    ).fit(X)
    trace = density.loglik_trace_
    if acceleration == "none":
        assert len(trace) == density.n_iter_ + 1
    else:
        assert len(trace) <= density.n_iter_ + 1
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace).max())
    # The objective is the observed-data log-likelihood (loglik_) minus the
    # ridge penalty.
    used = ~np.isnan(X).all(axis=1)
    D = np.diag(np.nanvar(X[used], axis=0))
    penalty = sum(
        0.5 * used.sum() / 3 * 1e-6 * np.trace(D @ np.linalg.inv(c))
        for c in density.covariances_
    )
    ref = _mixture_loglik(X, density.weights_, density.means_, density.covariances_)
    assert density.loglik_ == pytest.approx(ref, rel=1e-10)
    assert trace[-1] == pytest.approx(ref - penalty, rel=1e-10)


def test_single_component_is_gaussian_em(rng):
    X = _mcar(rng, _sample(rng, 300), 0.3)
    mix = GaussianMixtureDensity(n_components=1, ridge=1e-3, tol=1e-10).fit(X)
    em = GaussianEMDensity(ridge=1e-3, tol=1e-10).fit(X)
    np.testing.assert_allclose(mix.means_[0], em.mean_, atol=1e-8)
    np.testing.assert_allclose(mix.covariances_[0], em.covariance_, atol=1e-8)
    assert mix.loglik_ == pytest.approx(em.loglik_, rel=1e-10)


def test_conditionals(rng):
    X = _mcar(rng, _sample(rng, 500), 0.2)
    density = GaussianMixtureDensity(random_state=0).fit(X)
    X_new = _mcar(rng, _sample(rng, 20), 0.4)
    X_new[0] = np.nan
    cond = density.conditionals(X_new)
    assert isinstance(cond, MixtureConditionals)
    assert cond.means.shape == (3, 20, 3) and cond.weights.shape == (20, 3)
    np.testing.assert_allclose(cond.component_covariances, density.covariances_)
    np.testing.assert_allclose(cond.weights[0], density.weights_)
    for i, x in enumerate(X_new):
        J = np.isnan(x)
        O = ~J  # noqa: E741
        logw = np.log(density.weights_).copy()
        for k in range(3):
            m, S = density.means_[k], density.covariances_[k]
            mu, A = x.copy(), np.zeros((3, 3))
            if O.any():
                logw[k] += multivariate_normal(m[O], S[np.ix_(O, O)]).logpdf(x[O])
            if J.any() and O.any():
                inv = np.linalg.inv(S[np.ix_(O, O)])
                mu[J] = m[J] + S[np.ix_(J, O)] @ inv @ (x[O] - m[O])
                A[np.ix_(J, J)] = (
                    S[np.ix_(J, J)] - S[np.ix_(J, O)] @ inv @ S[np.ix_(O, J)]
                )
            elif J.any():
                mu, A = m.copy(), S.copy()
            np.testing.assert_allclose(cond.means[k, i], mu, rtol=1e-9, atol=1e-9)
            p = cond.pattern_index[i]
            got = np.zeros((3, 3))
            idx = np.flatnonzero(cond.patterns[p])
            got[np.ix_(idx, idx)] = cond.covariances[p][k]
            np.testing.assert_allclose(got, A, rtol=1e-9, atol=1e-9)
        expected = np.exp(logw - logsumexp(logw))
        np.testing.assert_allclose(cond.weights[i], expected, rtol=1e-7, atol=1e-12)


def test_deterministic_given_random_state(rng):
    X = _mcar(rng, _sample(rng, 300), 0.3)
    a = GaussianMixtureDensity(random_state=4, n_init=2).fit(X)
    b = GaussianMixtureDensity(random_state=4, n_init=2).fit(X)
    np.testing.assert_array_equal(a.means_, b.means_)
    np.testing.assert_array_equal(a.loglik_trace_, b.loglik_trace_)


def test_fully_missing_rows_contribute_nothing(rng):
    X = _mcar(rng, _sample(rng, 200), 0.2)
    padded = np.vstack([X, np.full((5, 3), np.nan)])
    a = GaussianMixtureDensity(random_state=0, tol=1e-9).fit(X)
    b = GaussianMixtureDensity(random_state=0, tol=1e-9).fit(padded)
    np.testing.assert_allclose(b.means_, a.means_, atol=1e-8)


def test_bad_input(rng):
    X = _mcar(rng, _sample(rng, 30), 0.2)
    with pytest.raises(ValueError, match="n_components=40 needs at least 40"):
        GaussianMixtureDensity(n_components=40).fit(X)
    with pytest.raises(InvalidParameterError, match="n_components"):
        GaussianMixtureDensity(n_components=0).fit(X)
    bad = X.copy()
    bad[:, 0] = np.nan
    with pytest.raises(ValueError, match=r"column 0 \(0-based\) \(missing in every"):
        GaussianMixtureDensity().fit(bad)
    with pytest.raises(ValueError, match="features"):
        GaussianMixtureDensity(random_state=0).fit(X).conditionals(X[:, :2])


def test_collapsed_component_warns_without_ridge(rng):
    # A tight cluster of identical rows makes its component singular.
    X = np.vstack([rng.normal(size=(50, 2)), np.tile([8.0, 8.0], (20, 1))])
    with pytest.warns(SingularCovarianceWarning, match="ridge"):
        density = GaussianMixtureDensity(
            prior_rows=0, n_components=2, ridge=0, random_state=0
        )
        density.fit(X)
    assert density.ridge_ == pytest.approx(1e-6)
    assert np.all(np.linalg.eigvalsh(density.covariances_) > 0)


def test_constant_feature_without_ridge_starts_with_the_automatic_ridge(rng):
    X = np.column_stack([rng.normal(size=(90, 2)), np.full(90, -1.5)])
    X[rng.random(X.shape) < 0.2] = np.nan
    # Plain EM: on this sample SQUAREM climbs to a higher penalised
    # likelihood, a component of about one row, and is still crawling there
    # at max_iter (the tiny ridge barely bounds the objective).
    params = dict(n_components=2, random_state=0, acceleration="none")
    with pytest.warns(SingularCovarianceWarning, match=r"column 2 \(0-based\)") as rec:
        auto = GaussianMixtureDensity(prior_rows=0, ridge=0, **params).fit(X)
    assert len(rec) == 1  # no restart
    explicit = GaussianMixtureDensity(prior_rows=0, ridge=1e-6, **params).fit(X)
    assert auto.ridge_ == 1e-6
    np.testing.assert_array_equal(auto.means_, explicit.means_)
    np.testing.assert_array_equal(auto.covariances_, explicit.covariances_)
    np.testing.assert_allclose(auto.means_[:, 2], -1.5)
