"""SQUAREM in the shared EM loop: same fixed point as plain EM, fewer steps,
a monotone trace, fallbacks, and a ConvergenceWarning naming the slow feature.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from missingkernels._sklearn_compat import InvalidParameterError
from missingkernels.datasets import load_dataset
from missingkernels.densities import GaussianEMDensity, GaussianMixtureDensity

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics


def _correlated_mar(rng, n=300, d=5):
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A + np.arange(d)
    p = 1.0 / (1.0 + np.exp(-(X[:, 0] - X[:, 0].mean()) / X[:, 0].std()))
    for j in range(1, d):
        X[rng.random(n) < 0.7 * p, j] = np.nan
    return X


def _slow(rng, n=300):
    """Column 1 is missing in 92% of the rows and strongly correlated with
    columns 2 and 0 (a large fraction of missing information: EM is slow)."""
    Z = rng.normal(size=(n, 4))
    Z[:, 2] = 0.9 * Z[:, 0] + 0.45 * Z[:, 2]
    Z[:, 1] = 0.98 * Z[:, 2] + 0.2 * Z[:, 1]
    X = Z.copy()
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.92, 1] = np.nan
    X[rng.random(n) < 0.1, 3] = np.nan
    return X


def _standardised(X, *arrays):
    """Mean (first array) and covariance (second) in units of the observed sd."""
    sd = np.nanstd(X, axis=0)
    mean, cov = arrays
    return mean / sd, cov / np.outer(sd, sd)


def _plain_rate(X, n_iter):
    """The contraction rate of plain EM near its fixed point: the ratio of
    the largest parameter changes of the last two of ``n_iter`` steps."""
    fits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for k in (n_iter - 2, n_iter - 1, n_iter):
            density = GaussianEMDensity(max_iter=k, tol=0, acceleration="none")
            fits.append(_standardised(X, *_fit_moments(density.fit(X))))
    steps = [
        max(np.max(np.abs(b[0] - a[0])), np.max(np.abs(b[1] - a[1])))
        for a, b in itertools.pairwise(fits)
    ]
    return steps[1] / steps[0]


def _fit_moments(density):
    return density.mean_, density.covariance_


@pytest.mark.parametrize("seed", [0, 1])
def test_same_fixed_point_as_plain_em(seed):
    rng = np.random.default_rng(seed)
    X = _correlated_mar(rng)
    tol = 1e-8
    plain = GaussianEMDensity(prior_rows=0, tol=tol, acceleration="none").fit(X)
    fast = GaussianEMDensity(prior_rows=0, tol=tol).fit(X)
    assert plain.converged_ and fast.converged_
    # Both stop when one EM step changes no parameter by more than tol; where
    # EM contracts at rate rho that is within tol * rho / (1 - rho) of the
    # fixed point. The reference is plain EM run far beyond (tol=1e-13).
    rho = _plain_rate(X, plain.n_iter_)
    assert 0 < rho < 1
    bound = 2 * tol * rho / (1 - rho)  # 2: rho is estimated
    reference = GaussianEMDensity(
        prior_rows=0, tol=1e-13, max_iter=20_000, acceleration="none"
    )
    reference.fit(X)
    ref = _standardised(X, *_fit_moments(reference))
    for density in (plain, fast):
        mean, cov = _standardised(X, *_fit_moments(density))
        assert np.max(np.abs(mean - ref[0])) <= bound
        assert np.max(np.abs(cov - ref[1])) <= bound
    assert fast.loglik_ == pytest.approx(reference.loglik_, rel=1e-12, abs=0)
    assert fast.n_iter_ < plain.n_iter_


def test_mixture_same_fixed_point_as_plain_em(rng):
    X = np.vstack([rng.normal(-3, 1, (200, 3)), rng.normal(3, 1.5, (200, 3))])
    X[:, 2] += X[:, 0]
    X[rng.random(X.shape) < 0.35] = np.nan
    params = dict(n_components=2, random_state=0, tol=1e-10)
    plain = GaussianMixtureDensity(acceleration="none", **params).fit(X)
    fast = GaussianMixtureDensity(**params).fit(X)
    assert plain.converged_ and fast.converged_
    order = np.argsort(plain.means_[:, 0]), np.argsort(fast.means_[:, 0])
    sd = np.nanstd(X, axis=0)
    # Both within tol * rho / (1 - rho) of the fixed point; rho < 0.999 here
    # (plain EM converges in a few hundred steps at most).
    bound = 2 * 1e-10 * 1000
    np.testing.assert_allclose(
        fast.weights_[order[1]], plain.weights_[order[0]], rtol=0, atol=bound
    )
    np.testing.assert_allclose(
        fast.means_[order[1]] / sd, plain.means_[order[0]] / sd, rtol=0, atol=bound
    )
    np.testing.assert_allclose(
        fast.covariances_[order[1]] / np.outer(sd, sd),
        plain.covariances_[order[0]] / np.outer(sd, sd),
        rtol=0,
        atol=bound,
    )
    assert fast.n_iter_ <= plain.n_iter_
    assert np.all(np.diff(fast.loglik_trace_) >= -1e-12 * np.abs(fast.loglik_))


REAL = ["horse_colic", "hepatitis", "pima_indians_diabetes_na"]


@pytest.mark.parametrize("name", REAL)
def test_fewer_steps_on_real_tables(shared_data_dir, name):
    X = load_dataset(name, data_dir=shared_data_dir).X.astype(np.float64)
    plain = GaussianEMDensity(acceleration="none").fit(X)
    fast = GaussianEMDensity().fit(X)
    assert plain.converged_ and fast.converged_
    assert fast.n_iter_ < plain.n_iter_
    trace = fast.loglik_trace_
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace).max())
    # The same estimate, to what tol=1e-5 resolves on these (slow) tables.
    sd = np.sqrt(np.diag(plain.covariance_))
    cov_gap = np.abs(fast.covariance_ - plain.covariance_) / np.outer(sd, sd)
    assert np.max(np.abs(fast.mean_ - plain.mean_) / sd) < 1e-2
    assert np.max(cov_gap) < 1e-2
    assert fast.loglik_ >= plain.loglik_ - 1e-6 * abs(plain.loglik_)


def test_trace_records_accepted_iterates_and_never_decreases(rng):
    X = _slow(rng)
    density = GaussianEMDensity(prior_rows=0, tol=1e-10, max_iter=2000).fit(X)
    trace = density.loglik_trace_
    assert 2 < len(trace) < density.n_iter_ + 1
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace).max())
    # The last value is the objective at the returned estimate: the plain EM
    # fit started there and stopped at once has the same log-likelihood.
    assert density.loglik_ == trace[-1]


def test_rejected_extrapolations_are_plain_em(rng, monkeypatch):
    # When every extrapolation is invalid, SQUAREM takes plain EM steps.
    X = _correlated_mar(rng)
    calls = []

    def reject(self, data, params):
        calls.append(params)
        return None

    for n_iter in (1, 2, 3, 7, 11):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            plain = GaussianEMDensity(max_iter=n_iter, tol=0, acceleration="none")
            plain.fit(X)
            with monkeypatch.context() as patch:
                patch.setattr(GaussianEMDensity, "_valid_params", reject)
                fast = GaussianEMDensity(max_iter=n_iter, tol=0).fit(X)
        np.testing.assert_array_equal(fast.mean_, plain.mean_)
        np.testing.assert_array_equal(fast.covariance_, plain.covariance_)
        assert fast.n_iter_ == plain.n_iter_ == n_iter
    assert calls  # the hook was asked


def test_extrapolation_lowering_the_objective_falls_back(rng, monkeypatch):
    # A hook proposing the (poor) starting point instead of the extrapolation:
    # its objective is below the cycle's, so each cycle keeps the EM iterate.
    X = _correlated_mar(rng)
    start = GaussianEMDensity(max_iter=1, acceleration="none")

    def poor(self, data, params):
        return self._initial(data, None)

    monkeypatch.setattr(GaussianEMDensity, "_valid_params", poor)
    density = GaussianEMDensity(tol=1e-9).fit(X)
    monkeypatch.undo()
    reference = GaussianEMDensity(tol=1e-9, acceleration="none").fit(X)
    assert density.converged_
    trace = density.loglik_trace_
    assert np.all(np.diff(trace) >= -1e-12 * np.abs(trace).max())
    assert density.loglik_ == pytest.approx(reference.loglik_, rel=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = start.fit(X).loglik_trace_[0]
    assert density.loglik_ > first + 1.0


def test_mixture_rejects_weights_off_the_simplex():
    d = 2
    m, S = np.zeros((2, d)), np.stack([np.eye(d), np.eye(d)])
    density = GaussianMixtureDensity(n_components=2)
    assert density._valid_params(None, (np.array([0.3, 0.7]), m, S)) is not None
    assert density._valid_params(None, (np.array([1.2, -0.2]), m, S)) is None
    assert density._valid_params(None, (np.array([0.3, 0.7]), m, -S)) is None
    bad = S.copy()
    bad[0, 0, 0] = np.nan
    assert density._valid_params(None, (np.array([0.3, 0.7]), m, bad)) is None


def test_warning_names_the_slow_feature_and_the_remedies_work(rng):
    X = _slow(rng)
    with pytest.warns(ConvergenceWarning) as record:
        GaussianEMDensity(max_iter=60, acceleration="none").fit(X)
    message = str(record[0].message)
    assert "Slowest: column 1 (0-based)," in message
    assert "acceleration='squarem'" in message
    # With column names, by name.
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    with pytest.warns(ConvergenceWarning, match=r"Slowest: feature 'b',"):
        GaussianEMDensity(max_iter=60, acceleration="none").fit(frame)
    # The remedies it names: dropping that feature, or SQUAREM, converge
    # within the same max_iter.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        dropped = GaussianEMDensity(max_iter=60, acceleration="none")
        assert dropped.fit(np.delete(X, 1, axis=1)).converged_
        assert GaussianEMDensity(max_iter=60).fit(X).converged_
    # Stopped at max_iter with SQUAREM too, it warns the same way.
    with pytest.warns(ConvergenceWarning, match=r"Slowest: column 1 \(0-based\),"):
        GaussianEMDensity(max_iter=20).fit(X)


def test_ridge_remedy_speeds_up_a_nearly_collinear_feature():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(300, 4))
    Z[:, 1] = Z[:, 2] + 0.01 * Z[:, 1]
    Z[rng.random(Z.shape) < 0.3] = np.nan
    for acceleration in ("none", "squarem"):
        bare = GaussianEMDensity(prior_rows=0, acceleration=acceleration).fit(Z)
        ridged = GaussianEMDensity(
            prior_rows=0, ridge=1e-2, acceleration=acceleration
        ).fit(Z)
        assert ridged.n_iter_ < bare.n_iter_


@pytest.mark.parametrize("acceleration", ["none", "squarem"])
def test_tol_loglik_stops_on_the_relative_change(rng, acceleration):
    X = _correlated_mar(rng)
    density = GaussianEMDensity(tol=0, tol_loglik=1e-9, acceleration=acceleration)
    density.fit(X)
    assert density.converged_ and density.n_iter_ < density.max_iter
    # The relative change is that of the objective of the standardised rows
    # (free of the units of X): loglik_trace_ plus the log-Jacobian of the
    # standardisation by the observed moments.
    used = ~np.isnan(X).all(axis=1)
    counts = (~np.isnan(X[used])).sum(axis=0)
    jacobian = np.sum(counts * np.log(np.nanstd(X[used], axis=0)))
    trace = density.loglik_trace_[:-1] + jacobian  # before the final evaluation
    relative = np.abs(np.diff(trace)) / np.abs(trace[1:])
    assert relative[-1] <= 1e-9
    assert np.all(relative[:-1] > 1e-9)
    tight = GaussianEMDensity(tol=0, tol_loglik=1e-12, acceleration=acceleration)
    assert tight.fit(X).n_iter_ > density.n_iter_


def test_parameter_validation(rng):
    X = _correlated_mar(rng, n=50, d=3)
    for cls in (GaussianEMDensity, GaussianMixtureDensity):
        with pytest.raises(InvalidParameterError, match="acceleration"):
            cls(acceleration="aitken").fit(X)
        with pytest.raises(InvalidParameterError, match="tol_loglik"):
            cls(tol_loglik=-1.0).fit(X)


@pytest.mark.parametrize("acceleration", ["none", "squarem"])
def test_dask_gives_the_in_memory_fit(acceleration):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(5)
    X = _slow(rng, n=400) * [1.0, 10.0, 100.0, 0.1] + [0.0, 5.0, -50.0, 1.0]
    expected = GaussianEMDensity(acceleration=acceleration).fit(X)
    fitted = GaussianEMDensity(acceleration=acceleration)
    fitted.fit(da.from_array(X, chunks=(70, 4)))
    assert expected.n_iter_ == fitted.n_iter_ and expected.n_iter_ > 10
    assert expected.converged_ == fitted.converged_
    np.testing.assert_allclose(fitted.mean_, expected.mean_, rtol=1e-9, atol=0)
    sd = np.sqrt(np.diag(expected.covariance_))
    np.testing.assert_allclose(
        fitted.covariance_ / np.outer(sd, sd),
        expected.covariance_ / np.outer(sd, sd),
        rtol=0,
        atol=1e-9,
    )
    np.testing.assert_allclose(
        fitted.loglik_trace_, expected.loglik_trace_, rtol=1e-12, atol=0
    )
