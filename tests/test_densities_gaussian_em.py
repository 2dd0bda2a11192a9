"""Tests of GaussianEMDensity against closed forms and a naive per-row EM."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from missingkernels import get_density, list_densities
from missingkernels._sklearn_compat import InvalidParameterError
from missingkernels.conditionals import GaussianConditionals
from missingkernels.densities import GaussianEMDensity, SingularCovarianceWarning

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics


def _correlated(rng, n, d, shift=2.0):
    A = rng.normal(size=(d, d))
    return rng.normal(size=(n, d)) @ A + shift * np.arange(d)


def _mcar(rng, X, rate):
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    return X


def _mar(rng, X):
    # Feature 0 always observed; the others go missing more often when
    # feature 0 is large (missingness depends on observed values only).
    X = X.copy()
    p = 1.0 / (1.0 + np.exp(-(X[:, 0] - X[:, 0].mean()) / X[:, 0].std()))
    for j in range(1, X.shape[1]):
        X[rng.random(len(X)) < 0.6 * p, j] = np.nan
    return X


def _monotone(rng, X):
    # Feature j missing implies features j+1, ... missing.
    X = X.copy()
    first_missing = rng.integers(1, X.shape[1] + 1, size=len(X))
    for i, j in enumerate(first_missing):
        X[i, j:] = np.nan
    return X


def _observed_loglik(X, mean, cov):
    total = 0.0
    for x in X:
        o = ~np.isnan(x)
        if o.any():
            total += multivariate_normal(mean[o], cov[np.ix_(o, o)]).logpdf(x[o])
    return total


def _naive_em(X, n_iter):
    """Textbook EM (Little & Rubin sec. 11.2), one Schur complement per row."""
    X = X[~np.isnan(X).all(axis=1)]
    n, d = X.shape
    m = np.nanmean(X, axis=0)
    S = np.diag(np.nanvar(X, axis=0))
    for _ in range(n_iter):
        T1 = np.zeros(d)
        T2 = np.zeros((d, d))
        for x in X:
            J = np.isnan(x)
            O = ~J  # noqa: E741
            xh = x.copy()
            C = np.zeros((d, d))
            if J.any():
                coef = np.linalg.solve(S[np.ix_(O, O)], S[np.ix_(O, J)])
                xh[J] = m[J] + (x[O] - m[O]) @ coef
                C[np.ix_(J, J)] = S[np.ix_(J, J)] - S[np.ix_(J, O)] @ coef
            T1 += xh
            T2 += np.outer(xh, xh) + C
        m = T1 / n
        S = T2 / n - np.outer(m, m)
    return m, S


def test_registered():
    assert list_densities()["gaussian_em"].factory is GaussianEMDensity
    density = get_density("gaussian_em", max_iter=7, ridge=0.5)
    assert isinstance(density, GaussianEMDensity)
    assert (density.max_iter, density.ridge) == (7, 0.5)
    assert GaussianEMDensity.representation == "gaussian"


def test_params_clone():
    density = GaussianEMDensity(tol=1e-3)
    assert density.get_params() == {
        "max_iter": 500,
        "tol": 1e-3,
        "ridge": 0.0,
        "tol_loglik": None,
        "acceleration": "squarem",
        "prior_rows": "auto",
    }
    copy = clone(density.set_params(ridge=0.2))
    assert copy.ridge == 0.2 and copy is not density
    assert not hasattr(copy, "mean_")


def test_complete_data_is_sample_moments(rng):
    X = _correlated(rng, 200, 5)
    density = GaussianEMDensity(prior_rows=0).fit(X)
    np.testing.assert_allclose(density.mean_, X.mean(axis=0), rtol=0, atol=1e-10)
    ml_cov = np.cov(X, rowvar=False, bias=True)
    np.testing.assert_allclose(density.covariance_, ml_cov, rtol=0, atol=1e-10)
    assert density.converged_ and density.n_patterns_ == 1
    ref = multivariate_normal(X.mean(0), ml_cov).logpdf(X).sum()
    assert density.loglik_ == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("n_iter", [1, 2, 5])
def test_matches_naive_em(rng, n_iter):
    X = _mcar(rng, _correlated(rng, 80, 4), 0.3)
    X[3] = np.nan  # a fully missing row: ignored by both
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        density = GaussianEMDensity(
            prior_rows=0, max_iter=n_iter, tol=0, acceleration="none"
        )
        density.fit(X)
    m, S = _naive_em(X, n_iter)
    np.testing.assert_allclose(density.mean_, m, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(density.covariance_, S, rtol=1e-10, atol=1e-10)
    assert density.n_iter_ == n_iter and not density.converged_


@pytest.mark.parametrize("acceleration", ["none", "squarem"])
@pytest.mark.parametrize("mechanism", ["mcar", "mar", "monotone"])
def test_loglik_never_decreases(rng, mechanism, acceleration):
    X = _correlated(rng, 300, 5)
    X = {"mcar": lambda: _mcar(rng, X, 0.35), "mar": lambda: _mar(rng, X)}.get(
        mechanism, lambda: _monotone(rng, X)
    )()
    density = GaussianEMDensity(tol=1e-8, acceleration=acceleration).fit(X)
    trace = density.loglik_trace_
    # One value per accepted iterate: every EM step without acceleration.
    if acceleration == "none":
        assert len(trace) == density.n_iter_ + 1
    else:
        assert 2 <= len(trace) < density.n_iter_ + 1
    assert density.n_iter_ > 3
    scale = np.abs(trace).max()
    assert np.all(np.diff(trace) >= -1e-12 * scale)
    assert trace[-1] > trace[0] + 1.0
    # The trace is the observed-data log-likelihood, computed independently.
    ref = _observed_loglik(X, density.mean_, density.covariance_)
    assert density.loglik_ == pytest.approx(ref, rel=1e-10)


def test_converged_estimate_is_a_local_maximum(rng):
    X = _mcar(rng, _correlated(rng, 150, 3), 0.3)
    density = GaussianEMDensity(prior_rows=0, tol=1e-10).fit(X)
    best = _observed_loglik(X, density.mean_, density.covariance_)
    for _ in range(10):
        dm = 1e-3 * rng.normal(size=3)
        E = 1e-3 * rng.normal(size=(3, 3))
        cov = density.covariance_ + E + E.T
        assert _observed_loglik(X, density.mean_ + dm, cov) < best


def test_bivariate_monotone_closed_form(rng):
    # Anderson (1957): x always observed, y observed on the first r rows.
    n, r = 400, 250
    X = rng.multivariate_normal([1.0, -2.0], [[2.0, 1.2], [1.2, 1.5]], size=n)
    x, y = X[:, 0], X[:r, 1]
    X[r:, 1] = np.nan
    mx = x.mean()
    sxx = x.var()
    xr = x[:r]
    beta = np.cov(xr, y, bias=True)[0, 1] / xr.var()
    resid_var = np.mean((y - y.mean() - beta * (xr - xr.mean())) ** 2)
    my = y.mean() + beta * (mx - xr.mean())
    expected_cov = np.array(
        [[sxx, beta * sxx], [beta * sxx, resid_var + beta**2 * sxx]]
    )
    density = GaussianEMDensity(prior_rows=0, tol=1e-12, max_iter=5000).fit(X)
    np.testing.assert_allclose(density.mean_, [mx, my], atol=1e-8)
    np.testing.assert_allclose(density.covariance_, expected_cov, atol=1e-8)


def test_conditionals_match_schur_complement(rng):
    X = _mcar(rng, _correlated(rng, 120, 5), 0.4)
    density = GaussianEMDensity().fit(X)
    X_new = _mcar(rng, _correlated(rng, 30, 5), 0.5)
    X_new[0] = np.nan
    X_new[1] = np.arange(5.0)
    cond = density.conditionals(X_new)
    assert isinstance(cond, GaussianConditionals)
    m, S = density.mean_, density.covariance_
    for i, x in enumerate(X_new):
        J = np.isnan(x)
        O = ~J  # noqa: E741
        mu = x.copy()
        A = np.zeros((5, 5))
        if J.any() and O.any():
            S_oo_inv = np.linalg.inv(S[np.ix_(O, O)])
            mu[J] = m[J] + S[np.ix_(J, O)] @ S_oo_inv @ (x[O] - m[O])
            A[np.ix_(J, J)] = (
                S[np.ix_(J, J)] - S[np.ix_(J, O)] @ S_oo_inv @ S[np.ix_(O, J)]
            )
        elif J.any():
            mu, A = m.copy(), S.copy()
        np.testing.assert_allclose(cond.means[i], mu, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(cond.row_covariance(i), A, rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(cond.missing, np.isnan(X_new))
    # Covariances are stored per pattern, not per row.
    assert len(cond.covariances) == len(np.unique(np.isnan(X_new), axis=0))


def test_fully_missing_rows_contribute_nothing(rng):
    X = _mcar(rng, _correlated(rng, 100, 4), 0.25)
    with_empty = np.vstack([X[:50], np.full((7, 4), np.nan), X[50:]])
    a = GaussianEMDensity(tol=1e-9).fit(X)
    b = GaussianEMDensity(tol=1e-9).fit(with_empty)
    np.testing.assert_allclose(b.mean_, a.mean_, rtol=1e-12)
    np.testing.assert_allclose(b.covariance_, a.covariance_, rtol=1e-12)
    cond = b.conditionals(with_empty[50:57])
    np.testing.assert_allclose(cond.means, np.tile(b.mean_, (7, 1)))
    np.testing.assert_allclose(cond.covariances[0], b.covariance_)


@pytest.mark.parametrize("acceleration", ["none", "squarem"])
def test_deterministic_and_order_invariant(rng, acceleration):
    X = _mcar(rng, _correlated(rng, 200, 6), 0.3)
    a = GaussianEMDensity(tol=1e-9, acceleration=acceleration).fit(X)
    b = GaussianEMDensity(tol=1e-9, acceleration=acceleration).fit(X)
    np.testing.assert_array_equal(a.covariance_, b.covariance_)
    np.testing.assert_array_equal(a.loglik_trace_, b.loglik_trace_)
    # Another row order changes the sums by rounding only, but SQUAREM's
    # extrapolations amplify that into another path to the fixed point: both
    # stop within about tol / (1 - rho) of it, so compare at a tighter tol.
    tol = 1e-9 if acceleration == "none" else 1e-12
    a = GaussianEMDensity(tol=tol, acceleration=acceleration).fit(X)
    c = GaussianEMDensity(tol=tol, acceleration=acceleration)
    c.fit(X[rng.permutation(len(X))])
    np.testing.assert_allclose(c.covariance_, a.covariance_, rtol=1e-7, atol=1e-9)


def test_ridge_is_documented_floor(rng):
    X = _correlated(rng, 60, 3)
    ridge = 0.1
    density = GaussianEMDensity(prior_rows=0, ridge=ridge).fit(X)
    expected = np.cov(X, rowvar=False, bias=True) + ridge * np.diag(X.var(axis=0))
    np.testing.assert_allclose(density.covariance_, expected, rtol=1e-10)
    # With missing entries the penalised objective is monotone.
    Xm = _mcar(rng, X, 0.3)
    density = GaussianEMDensity(prior_rows=0, ridge=ridge, tol=1e-9).fit(Xm)
    trace = density.loglik_trace_
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace).max())
    d = np.diag(np.nanvar(Xm[~np.isnan(Xm).all(1)], axis=0))
    n = int((~np.isnan(Xm).all(1)).sum())
    penalty = 0.5 * n * ridge * np.trace(d @ np.linalg.inv(density.covariance_))
    ref = _observed_loglik(Xm, density.mean_, density.covariance_)
    # loglik_ is the observed-data log-likelihood; the trace is penalised.
    assert density.loglik_ == pytest.approx(ref, rel=1e-10)
    assert trace[-1] == pytest.approx(ref - penalty, rel=1e-10)


def test_singular_covariance_warns_and_regularises(rng):
    X = _correlated(rng, 50, 3)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # collinear
    with pytest.warns(SingularCovarianceWarning, match="singular"):
        density = GaussianEMDensity(prior_rows=0).fit(X)
    assert density.ridge_ == pytest.approx(1e-6)
    assert np.all(np.linalg.eigvalsh(density.covariance_) > 0)
    # d close to n: fewer rows than features.
    with pytest.warns(SingularCovarianceWarning, match="ridge"):
        GaussianEMDensity(prior_rows=0).fit(rng.normal(size=(4, 6)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        density = GaussianEMDensity(prior_rows=0, ridge=1e-2).fit(X)
    assert density.ridge_ == 1e-2


def test_constant_feature_starts_with_the_ridge_and_equals_the_explicit_fit(rng):
    X = _mcar(rng, _correlated(rng, 80, 3), 0.3)
    X = np.column_stack([X, np.where(rng.random(80) < 0.3, np.nan, 2.5)])
    with pytest.warns(SingularCovarianceWarning, match=r"column 3 \(0-based\)") as rec:
        auto = GaussianEMDensity(prior_rows=0).fit(X)
    assert len(rec) == 1  # no second warning from a restart
    explicit = GaussianEMDensity(prior_rows=0, ridge=1e-6).fit(X)
    assert auto.ridge_ == 1e-6
    np.testing.assert_array_equal(auto.mean_, explicit.mean_)
    np.testing.assert_array_equal(auto.covariance_, explicit.covariance_)
    assert auto.n_iter_ == explicit.n_iter_
    assert auto.mean_[3] == pytest.approx(2.5)
    assert auto.covariance_[3, 3] < 1e-4 * auto.covariance_[0, 0]


def test_not_converged_warns(rng):
    X = _mcar(rng, _correlated(rng, 100, 4), 0.4)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        density = GaussianEMDensity(max_iter=2).fit(X)
    assert not density.converged_ and density.n_iter_ == 2


def test_bad_input(rng):
    X = _mcar(rng, _correlated(rng, 30, 3), 0.2)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"[Ii]nf"):
        GaussianEMDensity().fit(bad)
    with pytest.raises(ValueError, match="numeric"):
        GaussianEMDensity().fit(np.array([["a", "b"], ["c", "d"]], dtype=object))
    empty_col = X.copy()
    empty_col[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"column 1 \(0-based\) \(missing in every"):
        GaussianEMDensity().fit(empty_col)
    with pytest.raises(ValueError, match="minimum of 2"):
        GaussianEMDensity().fit(X[:1])
    only_one_informative = np.array([[1.0, 2.0], [np.nan, np.nan], [np.nan, np.nan]])
    with pytest.raises(ValueError, match="at least 2 rows with an observed"):
        GaussianEMDensity().fit(only_one_informative)
    density = GaussianEMDensity()
    with pytest.raises(NotFittedError):
        density.conditionals(X)
    density.fit(X)
    with pytest.raises(ValueError, match="features"):
        density.conditionals(X[:, :2])
    with pytest.raises(InvalidParameterError, match="max_iter"):
        GaussianEMDensity(max_iter=0).fit(X)
    with pytest.raises(InvalidParameterError, match="ridge"):
        GaussianEMDensity(ridge=-1.0).fit(X)
