"""The densities' prior (MAP-EM) and the number of components chosen by BIC."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from missingkernels.densities import (
    GaussianEMDensity,
    GaussianMixtureDensity,
    LatentClassDensity,
)
from missingkernels.densities._prior import CovariancePrior, bic, n_parameters

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics


def _observed_loglik(X, mean, cov):
    total = 0.0
    for row in X:
        o = ~np.isnan(row)
        if o.any():
            total += stats.multivariate_normal(mean[o], cov[np.ix_(o, o)]).logpdf(
                row[o]
            )
    return total


def _log_prior(cov, m, D):
    """-m/2 (log det S + tr(D S^-1)): m pseudo-rows of scatter D."""
    inv = np.linalg.inv(cov)
    return -0.5 * m * (np.linalg.slogdet(cov)[1] + np.trace(D @ inv))


def _sample(rng, n, d=3):
    A = rng.normal(size=(d, d))
    return rng.multivariate_normal(rng.normal(size=d), A @ A.T + np.eye(d), size=n)


def test_complete_data_is_the_closed_form_posterior_mode(rng):
    X = _sample(rng, 40)
    m = 7.0
    density = GaussianEMDensity(prior_rows=m, tol=1e-12).fit(X)
    n = len(X)
    D = np.diag(X.var(axis=0))
    scatter = n * np.cov(X, rowvar=False, bias=True)
    np.testing.assert_allclose(density.mean_, X.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(
        density.covariance_, (scatter + m * D) / (n + m), rtol=1e-10
    )
    # loglik_ is the observed-data log-likelihood; the trace adds the prior.
    ref = _observed_loglik(X, density.mean_, density.covariance_)
    assert density.loglik_ == pytest.approx(ref, rel=1e-10)
    log_prior = _log_prior(density.covariance_, m, D)
    jacobian = m / 2 * np.sum(np.log(np.diag(D)))  # the prior on the raw scale
    assert density.loglik_trace_[-1] == pytest.approx(
        ref + log_prior + jacobian, rel=1e-10
    )


def test_missing_data_fixed_point_maximises_the_penalised_likelihood(rng):
    # Direct numerical maximisation of loglik + log prior over (mean,
    # Cholesky factor) on a small case, against the MAP-EM fixed point.
    X = _sample(rng, 25, d=3)
    X[rng.random(X.shape) < 0.35] = np.nan
    X = X[~np.isnan(X).all(axis=1)]
    m = 5.0
    D = np.diag(np.nanvar(X, axis=0))
    density = GaussianEMDensity(prior_rows=m, tol=1e-12, max_iter=5000).fit(X)
    d = X.shape[1]
    tril = np.tril_indices(d)

    def unpack(theta):
        L = np.zeros((d, d))
        L[tril] = theta[d:]
        return theta[:d], L @ L.T

    def negative(theta):
        mean, cov = unpack(theta)
        try:
            return -(_observed_loglik(X, mean, cov) + _log_prior(cov, m, D))
        except (np.linalg.LinAlgError, ValueError):
            return np.inf

    start = np.concatenate([np.nanmean(X, axis=0), np.eye(d)[tril]])
    start[d:] = np.linalg.cholesky(np.diag(np.nanvar(X, axis=0)))[tril]
    result = optimize.minimize(
        negative, start, method="BFGS", options={"gtol": 1e-9, "maxiter": 5000}
    )
    mean, cov = unpack(result.x)
    np.testing.assert_allclose(density.mean_, mean, atol=1e-4)
    np.testing.assert_allclose(density.covariance_, cov, atol=1e-4)
    # And the fixed point is at least as good as the optimiser's point.
    assert (
        -negative(
            np.concatenate(
                [density.mean_, np.linalg.cholesky(density.covariance_)[tril]]
            )
        )
        >= -result.fun - 1e-7
    )


@pytest.mark.parametrize("acceleration", ["none", "squarem"])
@pytest.mark.parametrize(
    "density",
    [
        GaussianEMDensity(tol=1e-9),
        GaussianMixtureDensity(n_components=2, random_state=0, tol=1e-9),
    ],
    ids=["gaussian_em", "gaussian_mixture"],
)
def test_penalised_objective_never_decreases(rng, density, acceleration):
    # The hard case: few rows, many missing, where ML degenerates.
    X = _sample(rng, 40, d=8)
    X[rng.random(X.shape) < 0.6] = np.nan
    density = density.set_params(acceleration=acceleration)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        density.fit(X)
    trace = density.loglik_trace_
    assert np.all(np.diff(trace) >= -1e-10 * np.abs(trace).max())
    covariances = getattr(density, "covariances_", None)
    if covariances is None:
        covariances = density.covariance_[None]
    for cov in covariances:
        assert np.linalg.cond(cov) < 1e4


def test_prior_keeps_the_conditioning_where_ml_degenerates(rng):
    # The case: d=14, 70% MCAR, n=60; truth of condition number 15.
    d, n = 14, 60
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    S = (Q * np.geomspace(1, 15, d)) @ Q.T
    X = rng.multivariate_normal(np.zeros(d), S, size=n)
    X[rng.random(X.shape) < 0.7] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ml = GaussianEMDensity(prior_rows=0).fit(X)
        default = GaussianEMDensity().fit(X)
    assert np.linalg.cond(ml.covariance_) > 1e4
    assert np.linalg.cond(default.covariance_) < 10 * 15
    assert default.n_iter_ <= ml.n_iter_


def test_recovers_known_parameters_on_mar_data_within_se(rng):
    n = 2000
    cov = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, 0.5], [0.3, 0.5, 1.0]])
    X = rng.multivariate_normal([0.0, 1.0, -1.0], cov, size=n)
    # MAR: x1, x2 missing with probability rising with the always observed x0.
    p = 1 / (1 + np.exp(-(X[:, 0] - 0.5)))
    X[rng.random(n) < p, 1] = np.nan
    X[rng.random(n) < 0.5 * p, 2] = np.nan
    density = GaussianEMDensity().fit(X)
    # Standard errors of the complete-data estimates (a lower bound of the
    # incomplete-data ones); 5 SE leaves room for the lost information.
    se_mean = np.sqrt(np.diag(cov) / n)
    se_cov = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / n)
    assert np.all(np.abs(density.mean_ - [0.0, 1.0, -1.0]) < 5 * se_mean)
    assert np.all(np.abs(density.covariance_ - cov) < 5 * se_cov)
    # Complete-case means are biased under this MAR (the check can fail).
    assert abs(np.nanmean(X[:, 1]) - 1.0) > 5 * se_mean[1]


def test_ml_is_one_argument_away_and_the_ridge_is_the_scale_only_prior(rng):
    X = _sample(rng, 50)
    n = len(X)
    ml = GaussianEMDensity(prior_rows=0).fit(X)
    np.testing.assert_allclose(
        ml.covariance_, np.cov(X, rowvar=False, bias=True), rtol=1e-10
    )
    prior = CovariancePrior.of(0.0, 0.1, n, np.ones(3))
    assert prior.rows == 0 and np.allclose(prior.scale, 0.1 * n)
    both = CovariancePrior.of(4.0, 0.1, n, np.full(3, 0.5))
    np.testing.assert_allclose(both.scale, 4.0 * 0.5 + 0.1 * n)


def test_latent_class_prior_smooths_the_class_pmfs(rng):
    # One class: the pseudo-counts follow the observed frequencies, so the
    # PMF stays the observed one.
    df = pd.DataFrame(
        {"x": [0.0, 1.0, 2.0, 3.0, np.nan, 5.0], "c": ["a", "a", "a", "a", "b", "a"]}
    )
    one = LatentClassDensity(prior_rows=6.0).fit(df)
    np.testing.assert_allclose(one.category_probabilities_[0], [[5 / 6, 1 / 6]])
    # Two classes, the category determined by the class: the ML PMFs put
    # probability 0 on the other category, the prior's never do.
    x = np.concatenate([rng.normal(-5, 1, 40), rng.normal(5, 1, 40)])
    df = pd.DataFrame({"x": x, "c": ["a"] * 40 + ["b"] * 40})
    ml = LatentClassDensity(2, prior_rows=0).fit(df)
    assert ml.category_probabilities_[0].min() < 1e-8
    m = 8.0
    prior = LatentClassDensity(2, prior_rows=m).fit(df)
    # Each class: 40 rows of its category plus m / 2 pseudo-rows at 1/2, 1/2.
    p_other = (m / 2 * 0.5) / (40 + m / 2)
    np.testing.assert_allclose(
        np.sort(prior.category_probabilities_[0].min(axis=1)), [p_other] * 2,
        rtol=1e-5,
    )  # fmt: skip


def test_parameter_count_and_bic():
    # K=2, d=3: 1 weight + 2 * (3 means + 6 covariances) = 19.
    assert n_parameters(2, 3) == 19
    # Plus 2 * ((3 - 1) + (2 - 1)) probabilities.
    assert n_parameters(2, 3, [3, 2]) == 25
    assert n_parameters(1, 0, [4]) == 3
    assert bic(-100.0, 5, 100) == pytest.approx(200 + 5 * np.log(100))


def _separated(rng, n, K, d):
    centers = np.zeros((K, d))
    for k in range(K):
        centers[k, k % d] = 8.0 * (1 + k // d)
    labels = rng.integers(0, K, n)
    return centers[labels] + rng.normal(size=(n, d)), labels


@pytest.mark.parametrize("K", [2, 3])
def test_bic_chooses_the_true_number_of_components(K):
    chosen = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X, _ = _separated(rng, 200, K, 3)
        X[rng.random(X.shape) < 0.2] = np.nan
        density = GaussianMixtureDensity(
            n_components=(1, 4), n_init=2, random_state=0, tol=1e-3
        ).fit(X)
        chosen.append(density.n_components_)
        assert set(density.bic_scores_) == {1, 2, 3, 4}
        assert density.bic_ == min(density.bic_scores_.values())
        assert len(density.weights_) == density.n_components_
    assert chosen.count(K) >= 2, chosen


def test_latent_class_bic_on_a_mixed_table():
    chosen = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X, labels = _separated(rng, 200, 3, 2)
        pmfs = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
        codes = np.array([rng.choice(3, p=pmfs[k]) for k in labels])
        df = pd.DataFrame(X, columns=["x0", "x1"])
        df["c"] = pd.Series(np.array(["a", "b", "c"])[codes], dtype=object)
        df.loc[rng.random(200) < 0.2, "c"] = None
        df.loc[rng.random(200) < 0.2, "x0"] = np.nan
        density = LatentClassDensity(n_components=(1, 4), n_init=2, tol=1e-3)
        density.fit(df)
        chosen.append(density.n_components_)
        assert density.category_probabilities_[0].shape == (density.n_components_, 3)
    assert chosen.count(3) >= 2, chosen


def test_bic_attributes_repr_and_bad_values(rng):
    X, _ = _separated(rng, 120, 2, 2)
    fixed = GaussianMixtureDensity(n_components=2, random_state=0).fit(X)
    assert fixed.n_components_ == 2
    expected = bic(fixed.loglik_, n_parameters(2, 2), 120)
    assert fixed.bic_ == pytest.approx(expected)
    chosen = GaussianMixtureDensity(n_components="bic", random_state=0).fit(X)
    assert f"n_components_={chosen.n_components_}" in repr(chosen)
    assert "n_components_" not in repr(fixed)
    for bad in [(3, 1), (0, 2), "aic", (1, 2, 3)]:
        with pytest.raises(ValueError, match="n_components"):
            GaussianMixtureDensity(n_components=bad).fit(X)
    # A range beyond the rows stops at the counts the rows allow.
    few = GaussianMixtureDensity(n_components=(1, 6), random_state=0).fit(X[:4])
    assert max(few.bic_scores_) <= 4


def test_get_density_by_name_takes_bic():
    from missingkernels import get_density

    density = get_density("latent_class", n_components="bic")
    assert density.n_components == "bic"
