"""The factor-analytic density, its low-rank conditionals and RBF cells.

References: the full-covariance Gaussian cell and a naive d x d formula on the
same implied covariance (the cells), Monte Carlo over draws (the cells and the
sampler), closed-form and scikit-learn maximum-likelihood fits on complete
data (the EM), and simulated factor data with MAR missingness (recovery, BIC).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _helpers import assert_variance_close, conditioning_log_error

from missingkernels import get_density, get_kernel
from missingkernels._gaussian_conditioning import condition_gaussian
from missingkernels._missing_patterns import pattern_groups
from missingkernels.conditionals import FactorConditionals, GaussianConditionals
from missingkernels.densities import FactorAnalysisDensity
from missingkernels.kernels import RBF, find_expectation
from missingkernels.kernels._expectation_table import expected_gram, expected_variance
from missingkernels.kernels.rbf._fourier import gaussian_fourier
from missingkernels.kernels.rbf.factor._cell import _same_density

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics


def _model(rng, d, q, psi_range=(0.1, 1.0)):
    W = rng.normal(size=(d, q))
    psi = np.exp(rng.uniform(*np.log(psi_range), size=d))
    mu = rng.normal(size=d)
    return mu, W, psi


def _rows(rng, mu, W, psi, n, rate):
    d, q = W.shape
    X = mu + rng.normal(size=(n, q)) @ W.T + rng.normal(size=(n, d)) * np.sqrt(psi)
    X[rng.random(X.shape) < rate] = np.nan
    return X


def _pair(X, mu, W, psi):
    """The factor conditionals and the full-covariance ones of the same model."""
    S = W @ W.T + np.diag(psi)
    return (
        FactorConditionals.from_factors(X, mu, W, psi),
        GaussianConditionals.from_moments(X, mu, S),
    )


# Hard cases: one row per pattern, 90% missing, an ill-conditioned Psi (noise
# variances over eight decades), a large gamma; fully missing and complete rows.
CASES = {
    "moderate": dict(d=9, q=3, n=40, rate=0.5, psi=(0.1, 1.0), gamma=0.3),
    "90% missing": dict(d=12, q=2, n=30, rate=0.9, psi=(0.1, 1.0), gamma=0.2),
    "ill-conditioned psi": dict(d=10, q=4, n=35, rate=0.5, psi=(1e-6, 1e2), gamma=0.1),
    "large gamma": dict(d=8, q=2, n=30, rate=0.4, psi=(0.05, 0.5), gamma=3.0),
    "one row per pattern": dict(d=14, q=5, n=70, rate=0.3, psi=(0.2, 2.0), gamma=0.1),
}


def _case(name, seed=0):
    p = CASES[name]
    rng = np.random.default_rng(seed)
    mu, W, psi = _model(rng, p["d"], p["q"], p["psi"])
    X = _rows(rng, mu, W, psi, p["n"], p["rate"])
    if name == "one row per pattern":
        codes = rng.choice(np.arange(1, 2 ** p["d"] - 1), size=p["n"], replace=False)
        bits = (codes[:, None] >> np.arange(p["d"])) & 1
        X = _rows(rng, mu, W, psi, p["n"], 0.0)
        X[bits == 1] = np.nan
    X[0] = np.nan  # fully missing
    X[1] = mu + W @ rng.normal(size=p["q"])  # complete
    Y = _rows(rng, mu, W, psi, 9, p["rate"])
    return X, Y, mu, W, psi, p["gamma"]


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
@pytest.mark.parametrize("name", list(CASES))
def test_rbf_cells_equal_the_full_covariance_cells(name, metric):
    """To 1e-10. In the Mahalanobis metric with noise variances over eight
    decades the factors stand 1e5 above the noise and the Gaussian cell
    computes the pairs (the low-rank form would lose digits: 1.5e-9), from
    blocks that differ from the reference's by rounding (its Schur
    complements of a covariance of condition 1e8): 1e-9 there."""
    X, Y, mu, W, psi, gamma = _case(name)
    if name == "one row per pattern":
        assert len(np.unique(np.isnan(X), axis=0)) == len(X)
    cx, gx = _pair(X, mu, W, psi)
    cy, gy = _pair(Y, mu, W, psi)
    base = RBF(gamma=gamma, metric=metric).fit(X, cx)
    cell = find_expectation(base, FactorConditionals)
    assert "FactorConditionals" in cell.description
    fast = _same_density(cx, cy, base)
    assert fast == (metric == "euclidean" or name != "ill-conditioned psi")
    rtol = 1e-9 if metric == "mahalanobis" and name == "ill-conditioned psi" else 1e-10
    for normalised in (False, True):
        for diagonal in ("same_draw", "independent"):
            for A, B in (
                (expected_gram(base, cx, None, diagonal, normalised=normalised),
                 expected_gram(base, gx, None, diagonal, normalised=normalised)),
                (expected_variance(base, cx, None, diagonal, normalised=normalised),
                 expected_variance(base, gx, None, diagonal, normalised=normalised)),
            ):  # fmt: skip
                np.testing.assert_allclose(A, B, rtol=rtol, atol=1e-13)
        A = expected_gram(base, cx, cy, "same_draw", normalised=normalised)
        B = expected_gram(base, gx, gy, "same_draw", normalised=normalised)
        np.testing.assert_allclose(A, B, rtol=rtol, atol=1e-13)
        A = expected_variance(base, cx, cy, "same_draw", normalised=normalised)
        B = expected_variance(base, gx, gy, "same_draw", normalised=normalised)
        np.testing.assert_allclose(A, B, rtol=rtol, atol=1e-13)


def _naive(mu_a, A, mu_b, B, gamma):
    """``det(I + 2 g (A + B))^-1/2 exp(-g d^T (I + 2 g (A + B))^-1 d)``."""
    M = np.eye(len(A)) + 2.0 * gamma * (A + B)
    delta = mu_a - mu_b
    return np.linalg.det(M) ** -0.5 * np.exp(-gamma * delta @ np.linalg.solve(M, delta))


def _embedded(c, i):
    J = np.flatnonzero(c.missing[i])
    out = np.zeros((c.n_features, c.n_features))
    out[np.ix_(J, J)] = c.covariances[c.pattern_index[i]]
    return out


def test_rbf_cell_against_the_naive_formula():
    X, Y, mu, W, psi, gamma = _case("ill-conditioned psi", seed=3)
    cx, gx = _pair(X, mu, W, psi)
    cy = FactorConditionals.from_factors(Y, mu, W, psi)
    base = RBF(gamma=gamma).fit(X, gx)
    K = expected_gram(base, cx, cy, "same_draw")
    # The blocks, read through the lazy sequence, are the Gaussian ones.
    for i in range(len(X)):
        np.testing.assert_allclose(
            _embedded(cx, i), gx.row_covariance(i), rtol=1e-9, atol=1e-12
        )
    for i in range(0, len(X), 3):
        for j in range(len(Y)):
            expected = _naive(
                cx.means[i], _embedded(cx, i), cy.means[j], _embedded(cy, j), gamma
            )
            assert K[i, j] == pytest.approx(expected, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("psi_low", [1e-4, 1e-8])
@pytest.mark.parametrize("q", [1, 5])
def test_wide_rows_against_the_naive_formula(q, psi_low):
    """The pair sums over ``J_i & J_j`` come from a table of subset sums
    (features in groups of 8, padded to four groups): with 37 features (five
    groups, the last partial, three empty), 90% missing and more rows than
    one tile (150 x 70, both sides padded to the lanes), every pair equals
    the naive d x d formula on the same blocks to 1e-10. Noise variances
    down to 1e-4 take the low-rank path; down to 1e-8 (the factors 1e8
    above the noise at this gamma: the low-rank form loses 3e-8 at q = 5)
    the Gaussian cell. At 1e-4 the Gram and variance also equal the
    Gaussian cell's on the implied covariance, to the bound its conditioning
    sets (the variances on the scale of their terms: a variance of 10,500
    differed by 1.3e-10 relative under OpenBLAS's SkylakeX kernel); at 1e-8
    conditioning that covariance, of condition ~1e10, moves its blocks by up
    to 1e-3."""
    rng = np.random.default_rng(11 + q)
    d = 37
    mu, W, psi = _model(rng, d, q, (psi_low, 1.0))
    X = _rows(rng, mu, W, psi, 150, 0.9)
    Y = _rows(rng, mu, W, psi, 70, 0.9)
    X[3] = np.nan  # fully missing
    X[4] = mu + W @ rng.normal(size=q)  # complete
    cx, gx = _pair(X, mu, W, psi)
    cy, gy = _pair(Y, mu, W, psi)
    gamma = 0.05
    base = RBF(gamma=gamma).fit(X, gx)
    assert _same_density(cx, cy, base) == (psi_low == 1e-4)
    K = expected_gram(base, cx, cy, "same_draw")
    Kxx = expected_gram(base, cx, None, "same_draw")
    for i in range(0, len(X), 7):
        A = _embedded(cx, i)
        for j in range(0, len(Y), 3):
            expected = _naive(cx.means[i], A, cy.means[j], _embedded(cy, j), gamma)
            assert K[i, j] == pytest.approx(expected, rel=1e-10, abs=1e-15), (i, j)
        for j in range(0, i, 11):
            expected = _naive(cx.means[i], A, cx.means[j], _embedded(cx, j), gamma)
            assert Kxx[i, j] == pytest.approx(expected, rel=1e-10, abs=1e-15), (i, j)
    if psi_low < 1e-4:
        return
    # Against the Gaussian cell the blocks differ (Schur complements of S, of
    # condition 1.3e5 at q = 1 and 4.2e5 at q = 5): the logs of the Grams to
    # the conditioning bound, twice with the normalisation (two more logs).
    rtol = 2.0 * conditioning_log_error(W @ W.T + np.diag(psi), gamma)
    for normalised in (False, True):
        for diagonal in ("same_draw", "independent"):
            np.testing.assert_allclose(
                expected_gram(base, cx, None, diagonal, normalised=normalised),
                expected_gram(base, gx, None, diagonal, normalised=normalised),
                rtol=rtol,
                atol=1e-13,
            )
        assert_variance_close(
            expected_variance(base, cx, cy, "same_draw", normalised=normalised),
            expected_variance(base, gx, gy, "same_draw", normalised=normalised),
            expected_gram(base, gx, gy, "same_draw", normalised=normalised),
            rtol=rtol,
            atol=1e-13,
        )


@pytest.mark.parametrize("q", [1, 5])
def test_wide_rows_mahalanobis_against_the_gaussian_cell(q):
    """The Mahalanobis cell reads ``N`` and ``|J_i & J_j|`` from the same
    subset-sum table: 37 features, 90% missing, 150 x 70 rows, against the
    Gaussian cell on the implied covariance (the metric's) to 1e-10."""
    rng = np.random.default_rng(21 + q)
    mu, W, psi = _model(rng, 37, q, (0.1, 1.0))
    X = _rows(rng, mu, W, psi, 150, 0.9)
    Y = _rows(rng, mu, W, psi, 70, 0.9)
    X[3] = np.nan
    cx, gx = _pair(X, mu, W, psi)
    cy, gy = _pair(Y, mu, W, psi)
    base = RBF(gamma=0.05, metric="mahalanobis").fit(X, cx)
    assert _same_density(cx, cy, base)
    for normalised in (False, True):
        for A, B in (
            (expected_gram(base, cx, None, "independent", normalised=normalised),
             expected_gram(base, gx, None, "independent", normalised=normalised)),
            (expected_gram(base, cx, cy, "same_draw", normalised=normalised),
             expected_gram(base, gx, gy, "same_draw", normalised=normalised)),
            (expected_variance(base, cx, cy, "same_draw", normalised=normalised),
             expected_variance(base, gx, gy, "same_draw", normalised=normalised)),
        ):  # fmt: skip
            np.testing.assert_allclose(A, B, rtol=1e-10, atol=1e-13)


def test_subset_sum_table_and_codes():
    """``table[g, c]`` is the sum of the values of the features of group
    ``g`` whose bits are set in ``c``, and a row's codes index its missing
    features (brute force); the group width shrinks for wide tables."""
    from missingkernels.kernels.rbf.factor import _layouts as _factor_layouts

    rng = np.random.default_rng(4)
    d, bits = 19, 4
    values = rng.normal(size=(d, 8))
    table = _factor_layouts.pair_table(values, bits)
    G = _factor_layouts._n_groups(d, bits)
    assert G % 4 == 0 and table.shape == (G, 16, 8)
    for g in range(G):
        for c in range(16):
            ks = [g * bits + b for b in range(bits) if c >> b & 1 and g * bits + b < d]
            np.testing.assert_allclose(table[g, c], values[ks].sum(axis=0), atol=1e-14)
    missing = rng.random((5, d)) < 0.5
    codes = _factor_layouts.mask_codes(missing, bits)
    for i in range(5):
        for g in range(G):
            for b in range(bits):
                k = g * bits + b
                assert (codes[i, g] >> b & 1) == (k < d and missing[i, k])
    assert _factor_layouts.group_bits(64, 5) == 8
    assert _factor_layouts.group_bits(128, 10) == 6
    assert _factor_layouts.group_bits(2000, 10) == 4


def test_rbf_cell_and_the_sampler_against_draws():
    """``E k`` within 4 standard errors of the average over independent draws
    (the cell and the low-rank sampler against each other)."""
    rng = np.random.default_rng(5)
    mu, W, psi = _model(rng, 7, 2, (0.2, 1.0))
    X = _rows(rng, mu, W, psi, 6, 0.5)
    c = FactorConditionals.from_factors(X, mu, W, psi)
    gamma = 0.15
    base = RBF(gamma=gamma).fit(X, c)
    K = expected_gram(base, c, None, "independent")
    m = 4000
    a = c.sample(m, random_state=1).samples
    b = c.sample(m, random_state=2).samples
    for i in range(len(X)):
        for j in range(len(X)):
            k = np.exp(-gamma * ((a[:, i] - b[:, j]) ** 2).sum(axis=1))
            se = k.std(ddof=1) / np.sqrt(m)
            assert abs(k.mean() - K[i, j]) <= 4 * se + 1e-12, (i, j)


def test_sampler_moments_and_row_keys():
    rng = np.random.default_rng(2)
    mu, W, psi = _model(rng, 6, 2)
    X = _rows(rng, mu, W, psi, 5, 0.6)
    X[2, :] = np.nan
    c = FactorConditionals.from_factors(X, mu, W, psi)
    s = c.sample(5000, random_state=0).samples
    for i in range(len(X)):
        J = np.flatnonzero(c.missing[i])
        if not J.size:
            continue
        draws = s[:, i, J]
        C = c.covariances[c.pattern_index[i]]
        se_mean = np.sqrt(np.diag(C) / len(draws))
        assert np.all(np.abs(draws.mean(axis=0) - c.means[i, J]) <= 4 * se_mean)
        se_cov = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C**2) / len(draws))
        assert np.all(np.abs(np.cov(draws.T, bias=True) - C) <= 4 * se_cov)
    # A row drawn alone gets the draws it gets in the batch.
    alone = c.take(np.array([3])).sample(5, random_state=7).samples
    np.testing.assert_allclose(
        alone[:, 0], c.sample(5, random_state=7).samples[:, 3], rtol=1e-13
    )


def test_conditionals_match_the_gaussian_ones():
    X, _, mu, W, psi, _ = _case("moderate", seed=1)
    c, g = _pair(X, mu, W, psi)
    np.testing.assert_allclose(c.means, g.means, rtol=1e-12, atol=1e-12)
    for a, b in zip(c.covariances, g.covariances, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c.second_moments(), g.second_moments(), atol=1e-10)
    np.testing.assert_allclose(
        c.implied_covariance(), g.implied_covariance(), atol=1e-10
    )
    rows = np.array([5, 2, 2, 9])
    t = c.take(rows)
    assert isinstance(t, FactorConditionals)
    np.testing.assert_allclose(t.second_moments(), g.take(rows).second_moments())
    # Every cell over Gaussian conditionals applies (a subclass), e.g. the
    # polynomial closed form through the moments.
    k = get_kernel("expected_polynomial", gamma=0.5, coef0=1.0, density="gaussian_em")
    k.fit(X)
    base = k.base_kernel_
    np.testing.assert_allclose(
        expected_gram(base, c, None, "same_draw"),
        expected_gram(base, g, None, "same_draw"),
    )


def test_fourier_damping_and_the_fallbacks():
    """The damping from the factors equals the one from the blocks; a
    Mahalanobis metric of another covariance, or conditionals given explicit
    blocks, go to the Gaussian cell."""
    from dataclasses import replace

    from missingkernels.kernels.rbf.factor._cell import fourier_features

    X, _, mu, W, psi, gamma = _case("moderate", seed=4)
    c, g = _pair(X, mu, W, psi)
    base = RBF(gamma=gamma).fit(X, g)
    fmap = base.feature_map(g, 64, 0)
    np.testing.assert_allclose(
        fourier_features(c, fmap), gaussian_fourier(g, fmap), atol=1e-12
    )
    other = GaussianConditionals.from_moments(X, mu, 2.0 * g.covariance)
    maha = RBF(gamma=gamma, metric="mahalanobis").fit(X, other)
    np.testing.assert_allclose(
        expected_gram(maha, c, None, "same_draw", normalised=True),
        expected_gram(maha, g, None, "same_draw", normalised=True),
        rtol=1e-10,
    )
    scaled = replace(c, covariances=tuple(2.0 * C for C in g.covariances))
    assert not scaled.factored
    np.testing.assert_allclose(
        expected_gram(base, scaled, None, "independent"),
        expected_gram(
            base, replace(g, covariances=scaled.covariances), None, "independent"
        ),
        rtol=1e-12,
    )


# -- the density -----------------------------------------------------------------


def test_registered_and_validated():
    density = get_density("factor_analysis", n_factors=2)
    assert isinstance(density, FactorAnalysisDensity)
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="smaller than the number of features"):
        FactorAnalysisDensity(n_factors=3).fit(X)
    with pytest.raises(ValueError, match="n_factors"):
        FactorAnalysisDensity(n_factors=0).fit(X)
    with pytest.raises(ValueError, match="noise"):
        FactorConditionals.from_factors(X, np.zeros(3), np.ones((3, 1)), np.zeros(3))
    with pytest.raises(ValueError, match="loadings"):
        FactorConditionals.from_factors(X, np.zeros(3), np.ones((2, 1)), np.ones(3))


def _observed_loglik(X, mean, S):
    groups = pattern_groups(np.isnan(X))
    Z = np.where(groups.missing, 0.0, X)
    return float(
        condition_gaussian(Z, groups, mean, S, fill=False, logpdf=True).logpdf.sum()
    )


def test_em_objective_is_the_observed_data_loglik_and_increases():
    rng = np.random.default_rng(3)
    mu, W, psi = _model(rng, 8, 2)
    X = _rows(rng, mu, W, psi, 300, 0.3) * np.arange(1, 9) + 5.0
    for noise in ("diagonal", "isotropic"):
        fa = FactorAnalysisDensity(n_factors=2, noise=noise, noise_prior=0.0).fit(X)
        assert fa.converged_
        assert np.all(np.diff(fa.loglik_trace_) >= -1e-8 * abs(fa.loglik_))
        assert fa.loglik_ == pytest.approx(
            _observed_loglik(X, fa.mean_, fa.covariance_), rel=1e-10
        )
        if noise == "isotropic":
            np.testing.assert_allclose(
                fa.noise_variance_, fa.noise_variance_[0], rtol=1e-10
            )


def test_complete_data_fits_are_the_known_mles():
    """Complete rows: probabilistic PCA has a closed form (Tipping & Bishop,
    1999, eq. 7-8); factor analysis is scikit-learn's ML fit."""
    from sklearn.decomposition import FactorAnalysis

    rng = np.random.default_rng(4)
    mu, W, psi = _model(rng, 7, 2, (0.2, 1.5))
    X = _rows(rng, mu, W, psi, 500, 0.0)
    S = np.cov(X.T, bias=True)
    values, vectors = np.linalg.eigh(S)
    values, vectors = values[::-1], vectors[:, ::-1]
    sigma2 = values[2:].mean()
    W_ml = vectors[:, :2] * np.sqrt(values[:2] - sigma2)
    ppca = FactorAnalysisDensity(
        n_factors=2, noise="isotropic", noise_prior=0.0, tol=1e-9
    )
    ppca.fit(X)
    np.testing.assert_allclose(
        ppca.covariance_, W_ml @ W_ml.T + sigma2 * np.eye(7), atol=1e-6
    )
    fa = FactorAnalysisDensity(n_factors=2, noise_prior=0.0, tol=1e-9).fit(X)
    ref = FactorAnalysis(n_components=2, tol=1e-12, max_iter=10000).fit(X)
    assert fa.loglik_ == pytest.approx(ref.score(X) * len(X), rel=1e-7)
    np.testing.assert_allclose(fa.covariance_, ref.get_covariance(), atol=1e-4)


def test_noise_prior_keeps_a_noise_variance_off_zero():
    """Two features the factor explains exactly (a Heywood case): maximum
    likelihood drives their noise variances to zero; the prior keeps them at
    least ``0.1 nu / (n + nu)`` of their variances."""
    rng = np.random.default_rng(6)
    z = rng.normal(size=80)
    X = np.column_stack(
        [z, 2 * z + 1, 0.7 * z + 0.5 * rng.normal(size=80), rng.normal(size=(80, 2))]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ml = FactorAnalysisDensity(n_factors=1, noise_prior=0.0).fit(X)
        fa = FactorAnalysisDensity(n_factors=1, noise_prior=1.0).fit(X)
    floor = 0.1 * 1.0 / (80 + 1.0) * X[:, :2].var(axis=0)
    assert np.all(ml.noise_variance_[:2] < 0.01 * floor)
    assert np.all(fa.noise_variance_[:2] >= floor * (1 - 1e-9))


def test_parameter_recovery_under_mar():
    """Missingness of the later features depends on the always observed first
    one; the fitted W W^T + Psi is within 4 standard errors of the truth (SE
    of a covariance entry from the rows where both features are observed)."""
    rng = np.random.default_rng(8)
    d, q, n = 7, 2, 4000
    mu, W, psi = _model(rng, d, q, (0.3, 1.0))
    X = _rows(rng, mu, W, psi, n, 0.0)
    S = W @ W.T + np.diag(psi)
    p = 1.0 / (1.0 + np.exp(-(X[:, :1] - mu[0]) / np.sqrt(S[0, 0]) * 1.5))
    X[:, 1:][rng.random((n, d - 1)) < 0.6 * p] = np.nan
    fa = FactorAnalysisDensity(n_factors=q).fit(X)
    obs = (~np.isnan(X)).astype(float)
    pairs = obs.T @ obs
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / pairs)
    assert np.all(np.abs(fa.covariance_ - S) <= 4 * se)
    assert np.all(np.abs(fa.mean_ - mu) <= 4 * np.sqrt(np.diag(S) / obs.sum(axis=0)))
    # Complete cases are biased here: the test can tell.
    cc = X[~np.isnan(X).any(axis=1)]
    assert np.any(np.abs(np.cov(cc.T) - S) > 4 * se)


def test_bic_chooses_the_true_number_of_factors_on_most_seeds():
    hits = 0
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        mu, W, psi = _model(rng, 10, 3, (0.2, 0.6))
        X = _rows(rng, mu, W, psi, 400, 0.2)
        fa = FactorAnalysisDensity(n_factors="bic", max_factors=5).fit(X)
        assert set(fa.bic_) == {1, 2, 3, 4, 5}
        assert fa.n_factors_ == min(fa.bic_, key=fa.bic_.get)
        hits += fa.n_factors_ == 3
    assert hits >= 4


def test_genrbf_with_the_factor_density_end_to_end():
    rng = np.random.default_rng(9)
    mu, W, psi = _model(rng, 6, 2)
    X = _rows(rng, mu, W, psi, 60, 0.4)
    k = get_kernel("genrbf", density=FactorAnalysisDensity(n_factors=2)).fit(X)
    K = k(X)
    assert type(k.density_.conditionals(X)).__name__ == "FactorConditionals"
    np.testing.assert_allclose(np.diag(K), 1.0)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    fa = k.density_
    g = GaussianConditionals.from_moments(X, fa.mean_, fa.covariance_)
    expected = expected_gram(k.base_kernel_, g, None, k.diagonal, normalised=True)
    np.testing.assert_allclose(K, expected, rtol=1e-10, atol=1e-13)


def test_dask_fit_equals_in_memory():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(10)
    mu, W, psi = _model(rng, 5, 2)
    X = _rows(rng, mu, W, psi, 300, 0.3) * np.arange(1, 6)
    # Plain EM: the same iterates up to the order of additions.
    plain = {"n_factors": 2, "acceleration": "none", "tol": 1e-3}
    expected = FactorAnalysisDensity(**plain).fit(X)
    fitted = FactorAnalysisDensity(**plain).fit(da.from_array(X, chunks=(70, 5)))
    np.testing.assert_allclose(fitted.covariance_, expected.covariance_, atol=1e-8)
    np.testing.assert_allclose(fitted.loglik_trace_, expected.loglik_trace_, rtol=1e-10)
    assert fitted.n_iter_ == expected.n_iter_
    # SQUAREM: rounding moves its extrapolations along the rotations of W;
    # the fits agree to the tolerance.
    a = FactorAnalysisDensity(n_factors=2).fit(X)
    b = FactorAnalysisDensity(n_factors=2).fit(da.from_array(X, chunks=(70, 5)))
    scale = np.sqrt(np.outer(np.diag(a.covariance_), np.diag(a.covariance_)))
    assert np.abs(a.covariance_ - b.covariance_).max() <= 1e-4 * scale.max()


def test_constant_feature_fits_without_a_ridge_warning():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(50, 4))
    X[:, 2] = 3.0
    X[rng.random(X.shape) < 0.2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fa = FactorAnalysisDensity(n_factors=1).fit(X)
    assert 0 < fa.noise_variance_[2] <= 0.1 / 40
    c = fa.conditionals(X)
    assert np.all(np.isfinite(c.means)) and np.all(c.means[:, 2] == 3.0)


def test_the_table_decides_where_the_low_rank_form_holds():
    """The factor cell says where its form holds (applies_to); the table,
    not the cell, then gives the arguments to the next cell along the chain,
    the Gaussian one (issue 50): factors 1e8 above the noise take the
    Gaussian cell, 1e4 the factor cell; a lookup without the arguments
    finds the factor cell."""
    from missingkernels.kernels._expectation_table import lookup

    rng = np.random.default_rng(3)
    d, q = 12, 2
    factor_cell = find_expectation(RBF(), FactorConditionals)
    gaussian_cell = find_expectation(RBF(), GaussianConditionals)
    assert factor_cell is not gaussian_cell
    assert factor_cell.applies_to is not None
    for psi_low, expected in ((1e-4, factor_cell), (1e-8, gaussian_cell)):
        mu, W, psi = _model(rng, d, q, (psi_low, 1.0))
        X = _rows(rng, mu, W, psi, 40, 0.5)
        cx, gx = _pair(X, mu, W, psi)
        base = RBF(gamma=0.05).fit(X, gx)
        for quantity in ("gram", "variance"):
            assert lookup(base, FactorConditionals, quantity, rows=(cx, None)) is (
                expected
            )
            assert lookup(base, FactorConditionals, quantity) is factor_cell
        # features keep the low-rank damping (no cancellation there)
        assert lookup(base, FactorConditionals, "features", rows=(cx, None)) is (
            factor_cell
        )
