"""Tests of the R density plugin (plugins/missingkernels-r): r_norm, r_mice, r_amelia.

Tests that run R are marked ``r``; they skip, with the reason in the summary,
when rpy2, R or the R package is missing. ``norm`` is not packaged by Debian,
so the ``r_norm`` comparisons skip on such machines, while its refusal above
30 features, its missing-package message and its bridge (with R stand-ins
for norm's functions) are tested without it.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from missingkernels import MissingKernelSVC, get_density, get_kernel, list_densities
from missingkernels.densities import GaussianEMDensity

mkr = pytest.importorskip(
    "missingkernels_r",
    reason="the plugin is not installed: pip install -e plugins/missingkernels-r",
)
from missingkernels_r import _session  # noqa: E402

TIGHT = 1e-10  # EM stopping thresholds for the cross-implementation checks


def _require(package: str) -> None:
    """Skip (with the plugin's own explanation) when R or the package is missing."""
    try:
        _session.require_r_package(package, "this test")
    except mkr.RDependencyError as exc:
        pytest.skip(str(exc))


# -- data ------------------------------------------------------------------
def _gaussian_data(rng, n, d, mechanism):
    """Correlated normal rows on very different scales, with missing entries.

    Missing rates differ per column and are not increasing with the column
    index, so Amelia's internal column reordering is not the identity; the
    scales differ by up to 1000x, so a missing back-transform cannot pass.
    """
    A = rng.normal(size=(d, d))
    corr = A @ A.T + d * np.eye(d)
    corr /= np.sqrt(np.outer(np.diag(corr), np.diag(corr)))
    scales = 10.0 ** rng.uniform(-1, 2, d)
    means = rng.normal(0, 5, d) * scales
    X = rng.multivariate_normal(means, corr * np.outer(scales, scales), size=n)
    rates = rng.permutation(np.linspace(0.05, 0.4, d))
    if mechanism == "mcar":
        missing = rng.random((n, d)) < rates
        missing[:2] = True  # fully missing rows carry no information
    else:
        # MAR (Rubin): column 0 is always observed and drives the others.
        rates[0] = 0.0
        z = (X[:, 0] - X[:, 0].mean()) / X[:, 0].std()
        logits = np.log(rates / (1 - rates + 1e-12) + 1e-12)[None, :] + 1.5 * z[:, None]
        missing = rng.random((n, d)) < 1 / (1 + np.exp(-logits))
        missing[:, 0] = False
    X[missing] = np.nan
    order = np.argsort(np.isnan(X).sum(axis=0), kind="stable")
    assert not np.array_equal(order, np.arange(d))
    return X


def _assert_same_gaussian(mean, cov, ref_mean, ref_cov, rtol=1e-4):
    """Entrywise agreement relative to each entry's natural scale."""
    sd = np.sqrt(np.diag(ref_cov))
    err_mean = np.abs(mean - ref_mean) / (np.abs(ref_mean) + sd)
    err_cov = np.abs(cov - ref_cov) / np.outer(sd, sd)
    assert err_mean.max() < rtol, err_mean.max()
    assert err_cov.max() < rtol, err_cov.max()
    np.testing.assert_allclose(np.diag(cov), np.diag(ref_cov), rtol=rtol)


def _r_gaussian(name):
    if name == "r_amelia":
        _require("Amelia")
        return get_density("r_amelia", tolerance=TIGHT, max_iter=20000)
    _require("norm")
    return get_density("r_norm", criterion=TIGHT, maxits=20000)


# -- registry and lazy import (no R needed) -----------------------------------
def test_registry_lists_r_densities_without_importing_rpy2():
    code = (
        "import sys, missingkernels\n"
        "table = missingkernels.list_densities()\n"
        "assert {'r_norm', 'r_mice', 'r_amelia'} <= set(table), table\n"
        "assert table['r_mice'].plugin == 'missingkernels_r'\n"
        "missingkernels.get_density('r_mice', m=3).get_params()\n"
        "import missingkernels_r\n"
        "assert 'rpy2' not in sys.modules, 'rpy2 was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_rpy2_says_what_to_install(monkeypatch):
    monkeypatch.setattr(_session, "_AVAILABLE", set())
    monkeypatch.setitem(sys.modules, "rpy2", None)  # import rpy2 -> ImportError
    assert "r_mice" in list_densities()
    X = np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]])
    for name in ("r_mice", "r_amelia", "r_norm"):
        with pytest.raises(mkr.RDependencyError, match=r"missingkernels\[r\]"):
            get_density(name).fit(X)


def test_r_that_cannot_start_says_what_to_install(monkeypatch):
    pytest.importorskip("rpy2")
    monkeypatch.setattr(_session, "_AVAILABLE", set())
    monkeypatch.setitem(sys.modules, "rpy2.robjects", None)
    X = np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]])
    with pytest.raises(mkr.RDependencyError, match="apt-get install r-base-core"):
        get_density("r_amelia").fit(X)


def test_norm_refuses_more_than_30_features_before_touching_r(monkeypatch, rng):
    def no_r(what):
        raise AssertionError("R was started")

    monkeypatch.setattr(_session, "_rpy2", no_r)
    monkeypatch.setattr(_session, "_AVAILABLE", set())
    X = rng.normal(size=(50, 31))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"above 30 variables.*r_amelia.*gaussian_em"):
        get_density("r_norm").fit(X)
    # 30 features are accepted: the fit goes on to R (here: the stand-in).
    with pytest.raises(AssertionError, match="R was started"):
        get_density("r_norm").fit(X[:, :30])


@pytest.mark.parametrize(
    "prior, message",
    [
        ({"tau": 1.0}, "exactly the keys"),
        ({"tau": 1.0, "m": 3.0, "mu0": np.zeros(2), "lambdainv": np.eye(3)}, "shape"),
        ({"tau": 0.0, "m": 3, "mu0": np.zeros(3), "lambdainv": np.eye(3)}, "positive"),
    ],
)
def test_norm_prior_is_validated_before_r(monkeypatch, rng, prior, message):
    monkeypatch.setattr(_session, "_rpy2", lambda what: pytest.fail("R started"))
    X = rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match=message):
        get_density("r_norm", prior=prior).fit(X)


# -- r_norm: missing package and bridge ---------------------------------------
@pytest.mark.r
def test_norm_missing_package_message():
    _require("Amelia")  # R itself works
    try:
        _session.require_r_package("norm", "probe")
    except mkr.RDependencyError:
        pass
    else:
        pytest.skip("R package norm is installed; its missing-package path is moot")
    X = np.array([[1.0, np.nan], [2.0, 3.0], [0.0, 1.0]])
    with pytest.raises(mkr.RDependencyError) as info:
        get_density("r_norm").fit(X)
    assert 'install.packages("norm")' in str(info.value)
    assert "requireNamespace('norm') is FALSE" in str(info.value)


# Stand-ins for norm's functions, in R: they record what the bridge passes and
# return known parameters, so the bridge is tested where norm is absent.
_NORM_STAND_INS = r"""
local({
  rec <- new.env()
  list(
    prelim = function(x) {
      rec$n_na <- sum(is.na(x) & !is.nan(x)); rec$n_nan <- sum(is.nan(x))
      rec$dim <- dim(x); rec$is_double <- is.double(x)
      cat("stand-in prelim.norm\n"); warning("stand-in warning")
      list(x = x)
    },
    em = function(s, showits, maxits, criterion, prior) {
      rec$showits <- showits; rec$maxits <- maxits; rec$criterion <- criterion
      rec$prior <- if (missing(prior)) "none" else prior
      "theta"
    },
    getparam = function(s, theta, corr) {
      rec$corr <- corr; rec$theta <- theta
      d <- ncol(s$x)
      list(mu = seq_len(d) + 0.5, sigma = outer(seq_len(d), seq_len(d), pmin))
    },
    failing = function(x) stop("stand-in failure: ", nrow(x), " rows"),
    rec = rec
  )
})
"""


@pytest.fixture
def norm_stand_ins(monkeypatch):
    pytest.importorskip("rpy2")
    _require("Amelia")  # only to know that R starts
    import rpy2.robjects as ro

    fakes = ro.r(_NORM_STAND_INS)
    monkeypatch.setattr(mkr.RNormDensity, "_norm_functions", lambda self: fakes)

    def recorded(name):
        return list(fakes.rx2("rec")[name])

    return fakes, recorded


@pytest.mark.r
def test_norm_bridge_with_stand_ins(norm_stand_ins, rng, capsys):
    _, recorded = norm_stand_ins
    X = rng.normal(size=(30, 4))
    X[rng.random((30, 4)) < 0.2] = np.nan
    X[5] = np.nan  # dropped before R
    n_nan = int(np.isnan(np.delete(X, 5, axis=0)).sum())
    with pytest.warns(mkr.RWarning, match="stand-in warning"):
        density = get_density("r_norm", maxits=77, criterion=1e-7).fit(X)
    d = 4
    np.testing.assert_array_equal(density.mean_, np.arange(1, d + 1) + 0.5)
    np.testing.assert_array_equal(
        density.covariance_, np.minimum.outer(np.arange(1, d + 1), np.arange(1, d + 1))
    )
    assert recorded("n_na") == [n_nan] and recorded("n_nan") == [0]
    assert recorded("dim") == [29, d] and recorded("is_double") == [True]
    assert recorded("showits") == [False] and recorded("corr") == [False]
    assert recorded("maxits") == [77] and recorded("criterion") == [1e-7]
    assert list(recorded("prior")) == ["none"]
    assert capsys.readouterr().out == ""  # R's console output is captured
    # The conditionals are the Gaussian ones of the returned moments.
    row = np.array([1.0, np.nan, 2.0, np.nan])
    cond = density.conditionals(row[None, :])
    m, S = density.mean_, density.covariance_
    O, J = np.array([0, 2]), np.array([1, 3])  # noqa: E741
    expected = m[J] + S[np.ix_(J, O)] @ np.linalg.solve(S[np.ix_(O, O)], row[O] - m[O])
    np.testing.assert_allclose(cond.means[0, J], expected, rtol=1e-12)


@pytest.mark.r
def test_norm_bridge_passes_prior_and_echoes_when_verbose(norm_stand_ins, rng, capsys):
    fakes, _ = norm_stand_ins
    X = rng.normal(size=(20, 3))
    X[0, 1] = np.nan
    lam = np.array([[2.0, 0.1, 0.0], [0.1, 2.0, 0.0], [0.0, 0.0, 2.0]])
    prior = {"tau": 2.0, "m": 5.0, "mu0": np.array([0.1, 0.2, 0.3]), "lambdainv": lam}
    with pytest.warns(mkr.RWarning):
        get_density("r_norm", prior=prior, verbose=True).fit(X)
    passed = fakes.rx2("rec")["prior"]
    assert [float(passed[0][0]), float(passed[1][0])] == [2.0, 5.0]
    np.testing.assert_array_equal(np.asarray(passed[2]), prior["mu0"])
    np.testing.assert_array_equal(np.asarray(passed[3]).reshape(3, 3, order="F"), lam)
    assert "stand-in prelim.norm" in capsys.readouterr().out


@pytest.mark.r
def test_r_error_is_raised_with_its_message(monkeypatch, rng):
    pytest.importorskip("rpy2")
    _require("Amelia")
    import rpy2.robjects as ro

    fakes = ro.r(_NORM_STAND_INS)
    broken = ro.r["list"](
        prelim=fakes.rx2("failing"), em=fakes.rx2("em"), getparam=fakes.rx2("getparam")
    )
    monkeypatch.setattr(mkr.RNormDensity, "_norm_functions", lambda self: broken)
    X = rng.normal(size=(12, 3))
    with pytest.raises(mkr.RError, match="stand-in failure: 12 rows"):
        get_density("r_norm").fit(X)


# -- Gaussian R densities against gaussian_em ----------------------------------
@pytest.mark.r
@pytest.mark.parametrize("name", ["r_amelia", "r_norm"])
@pytest.mark.parametrize("mechanism", ["mcar", "mar"])
@pytest.mark.parametrize("d", [6, 12])
def test_r_gaussian_moments_equal_gaussian_em(name, mechanism, d, rng):
    density = _r_gaussian(name)
    X = _gaussian_data(rng, 60 * d, d, mechanism)
    density.fit(X)
    reference = GaussianEMDensity(prior_rows=0, tol=TIGHT, max_iter=20000).fit(X)
    assert reference.converged_
    _assert_same_gaussian(
        density.mean_, density.covariance_, reference.mean_, reference.covariance_
    )
    if name == "r_amelia":
        assert density.converged_ and density.n_iter_ > 1
    # The conditionals are those of the fitted moments (not of the R scale).
    new = _gaussian_data(rng, 30, d, mechanism)
    mine, ref = density.conditionals(new), reference.conditionals(new)
    scale = np.sqrt(np.diag(reference.covariance_))
    assert np.max(np.abs(mine.means - ref.means) / scale) < 1e-4


@pytest.mark.r
@pytest.mark.parametrize("name", ["r_amelia", "r_norm"])
def test_r_gaussian_on_complete_data_is_the_ml_estimate(name, rng):
    density = _r_gaussian(name)
    X = rng.normal(size=(40, 3)) * [1.0, 10.0, 0.1] + [5.0, -3.0, 0.0]
    density.fit(X)
    _assert_same_gaussian(
        density.mean_,
        density.covariance_,
        X.mean(axis=0),
        np.cov(X, rowvar=False, bias=True),
        rtol=1e-10,
    )


@pytest.mark.r
def test_amelia_reports_non_convergence_and_its_errors(rng, capsys):
    _require("Amelia")
    X = _gaussian_data(rng, 300, 6, "mcar")
    from sklearn.exceptions import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        density = get_density("r_amelia", tolerance=1e-12, max_iter=2).fit(X)
    assert density.n_iter_ == 2 and not density.converged_
    # Fewer rows than parameters: Amelia's own error message, console captured.
    few = rng.normal(size=(6, 9))
    few[0, 0] = np.nan
    with pytest.raises(mkr.RError, match="number of observations in too low"):
        get_density("r_amelia").fit(few)
    assert capsys.readouterr().out == ""
    with pytest.raises(mkr.RError):
        get_density("r_amelia", verbose=True).fit(few)
    assert "Amelia Error Code" in capsys.readouterr().out


@pytest.mark.r
@pytest.mark.parametrize("name", ["r_amelia", "r_norm"])
def test_genrbf_gram_from_r_gaussian_equals_gaussian_em(name, rng):
    density = _r_gaussian(name)
    X = _gaussian_data(rng, 240, 6, "mar")
    X = (X - np.nanmean(X, axis=0)) / np.nanstd(X, axis=0)
    gram_r = get_kernel("genrbf", gamma=0.2, density=density).fit(X)(X)
    reference = GaussianEMDensity(prior_rows=0, tol=TIGHT, max_iter=20000)
    gram_em = get_kernel("genrbf", gamma=0.2, density=reference).fit(X)(X)
    np.testing.assert_allclose(gram_r, gram_em, rtol=1e-4, atol=1e-8)
    assert np.ptp(gram_em) > 0.5  # the comparison is not between constants


# -- r_mice ---------------------------------------------------------------
def _mice_data(rng, n=80, d=4, rate=0.2):
    X = rng.multivariate_normal(np.arange(d), np.eye(d) + 0.5, size=n)
    X[rng.random((n, d)) < rate] = np.nan
    return X


@pytest.mark.r
def test_mice_draws_keep_observed_and_vary_on_missing(rng):
    _require("mice")
    X = _mice_data(rng)
    X[3] = np.nan  # a fully missing row is imputed too
    density = get_density("r_mice", m=4, maxit=3, seed=11).fit(X)
    cond = density.conditionals(X)
    missing = np.isnan(X)
    assert cond.samples.shape == (4, *X.shape)
    np.testing.assert_array_equal(cond.missing, missing)
    # Observed entries exactly, in every draw.
    for draw in cond.samples:
        np.testing.assert_array_equal(draw[~missing], X[~missing])
    # Every missing entry differs between draws (norm draws from a predictive).
    spread = np.ptp(cond.samples[:, missing], axis=0)
    assert np.all(spread > 0)
    assert np.all(np.isfinite(cond.samples))


@pytest.mark.r
def test_mice_new_rows_do_not_change_training_draws(rng):
    _require("mice")
    X = _mice_data(rng)
    new = _mice_data(rng, n=15)
    density = get_density("r_mice", m=3, maxit=3, seed=5).fit(X)
    before = density.conditionals(X).samples.copy()
    first = density.conditionals(new).samples
    after = density.conditionals(X).samples
    np.testing.assert_array_equal(before, after)
    # Same seed, same fit: same draws, for training rows and for new rows.
    again = get_density("r_mice", m=3, maxit=3, seed=5).fit(X)
    np.testing.assert_array_equal(again.conditionals(X).samples, before)
    np.testing.assert_array_equal(again.conditionals(new).samples, first)
    new_missing = np.isnan(new)
    np.testing.assert_array_equal(first[:, ~new_missing][0], new[~new_missing])
    assert np.all(np.ptp(first[:, new_missing], axis=0) > 0)
    # Training rows among new ones (support vectors at predict time) keep
    # their training draws.
    some = np.flatnonzero(np.isnan(X).any(axis=1))[[4, 0, 9]]
    mixed = density.conditionals(np.vstack([new[:4], X[some]])).samples
    np.testing.assert_array_equal(mixed[:, 4:], before[:, some])


@pytest.mark.r
def test_mice_draws_of_a_new_row_do_not_depend_on_the_batch(rng):
    """A new row's draws are a function of the row, the fit and the seed only:
    alone, in a batch, in another order or beside other rows, the same."""
    _require("mice")
    X = _mice_data(rng, n=40, d=3)
    new = _mice_data(rng, n=6, d=3, rate=0.4)
    new[0] = [np.nan, 1.0, np.nan]
    new[1] = np.nan
    assert np.isnan(new).any(axis=1).sum() >= 4

    def fitted():
        return get_density("r_mice", m=3, maxit=2, seed=4).fit(X)

    batch = fitted().conditionals(new).samples
    alone = fitted()
    for i in range(len(new)):
        np.testing.assert_array_equal(
            alone.conditionals(new[i : i + 1]).samples[:, 0], batch[:, i]
        )
    order = np.array([5, 3, 1, 0, 4, 2, 0])
    other = fitted().conditionals(np.vstack([new[order], X[:3] + 0.5])).samples
    np.testing.assert_array_equal(other[:, : len(order)], batch[:, order])
    # Two rows, two different seeds: not the same draws.
    assert not np.array_equal(batch[:, 0, 0], batch[:, 1, 0])
    # Moment matched: a row with a missing pattern of the training rows gets
    # their pooled covariance, alone or in a batch.
    gauss = get_density("r_mice", m=3, maxit=2, seed=4, moment_match=True).fit(X)
    seen = {row.tobytes() for row in np.isnan(X)}
    rows = [
        i for i, row in enumerate(np.isnan(new)) if row.any() and row.tobytes() in seen
    ]
    assert rows
    full = gauss.conditionals(new[rows])
    for k, i in enumerate(rows):
        one = gauss.conditionals(new[i : i + 1])
        np.testing.assert_array_equal(one.means[0], full.means[k])
        np.testing.assert_array_equal(
            one.covariances[0], full.covariances[full.pattern_index[k]]
        )


@pytest.mark.r
def test_mice_new_rows_are_imputed_with_the_training_model_only(rng):
    """New rows follow the opposite relation; they must not move the model.

    Training rows: x1 = 2 x0 + N(0, 1). New rows: x1 = -2 x0 + N(0, 1), mostly
    observed, three times as many. Had they entered the regression of x1 on
    x0 (no ``ignore``), the imputed x1 of the probe rows would follow a slope
    near -1 instead of 2 and miss by more than 4 (measured: 4.2 to 7.1).
    """
    _require("mice")
    n = 100
    x0 = rng.normal(size=n)
    X = np.column_stack([x0, 2 * x0 + rng.normal(size=n)])
    X[rng.random(n) < 0.2, 1] = np.nan
    z = rng.normal(size=3 * n)
    new = np.column_stack([z, -2 * z + rng.normal(size=3 * n)])
    probe = np.array([-2.0, 2.0, -1.5, 1.5])
    new = np.vstack([new, np.column_stack([probe, np.full(4, np.nan)])])
    density = get_density("r_mice", m=10, maxit=5, seed=2).fit(X)
    draws = density.conditionals(new).samples[:, -4:, 1]
    # The mean of 10 predictive draws (sd about 1 each) has sd about 0.35.
    assert np.max(np.abs(draws.mean(axis=0) - 2 * probe)) < 1.5


@pytest.mark.r
def test_mice_new_row_is_drawn_from_the_models_of_the_fitted_chains(rng):
    """A new row missing one entry, with mice's deterministic "norm.predict":
    its value in imputation i is the least-squares prediction of that column
    from the others, fitted on the training rows where it is observed, their
    other columns as completed by the fit's imputation i; numpy's lstsq is
    the reference. (Before, each new row ran a new mice on its own seed,
    whose chains were not the fit's: 8e-4 off here.) Both solvers are
    backward stable and the 60 x 3 designs have condition numbers below 10,
    so they agree to about 1e-14 relative; 1e-10 leaves room for any BLAS."""
    _require("mice")
    X = _mice_data(rng, n=60, d=3, rate=0.25)
    density = get_density("r_mice", m=4, maxit=3, method="norm.predict", seed=7).fit(X)
    new = np.array([[0.3, np.nan, 2.5], [np.nan, 1.0, 1.5], [0.1, -1.0, np.nan]])
    draws = density.conditionals(new).samples
    for r, j in [(0, 1), (1, 0), (2, 2)]:
        others = [k for k in range(3) if k != j]
        seen = ~np.isnan(X[:, j])
        for i in range(4):
            design = density.samples_[i][seen][:, others]
            A = np.column_stack([np.ones(seen.sum()), design])
            assert np.linalg.cond(A) < 10
            coef = np.linalg.lstsq(A, X[seen, j], rcond=None)[0]
            expected = coef[0] + new[r, others] @ coef[1:]
            np.testing.assert_allclose(draws[i, r, j], expected, rtol=1e-10)
        np.testing.assert_array_equal(
            draws[:, r, others], np.tile(new[r, others], (4, 1))
        )


@pytest.mark.r
def test_mice_new_rows_cost_draws_not_mice_runs(rng):
    """Issue 48, item 6: a new row costs m draws per missing entry and sweep
    (one sweep when one entry is missing), counted by a method of our own that
    mice finds as it finds any user method; one mice run per row cost
    maxit x m x (incomplete columns) calls each, and 200 times the time of
    density="mice" in benchmarks/bench_r_mice_predict.py."""
    _require("mice")
    robjects = pytest.importorskip("rpy2.robjects")
    robjects.r(
        "mk_probe <- new.env(); mk_probe$calls <- 0L;"
        "mice.impute.mkcount <- function(y, ry, x, wy = NULL, ...) {"
        "  mk_probe$calls <- mk_probe$calls + 1L;"
        "  mice::mice.impute.norm(y, ry, x, wy = wy, ...) }"
    )
    try:
        X = _mice_data(rng, n=60, d=3, rate=0.25)
        m, maxit = 3, 4
        density = get_density("r_mice", m=m, maxit=maxit, method="mkcount", seed=2)
        density.fit(X)
        new = np.array(
            [
                [np.nan, 0.5, 1.0],
                [1.0, np.nan, -1.0],
                [0.2, -0.3, np.nan],
                [np.nan, np.nan, 1.0],
                [0.0, 0.0, 0.0],
            ]
        )
        robjects.r("mk_probe$calls <- 0L")
        first = density.conditionals(new).samples
        calls = int(robjects.r("mk_probe$calls")[0])
        assert calls == 3 * m + m * maxit * 2
        # Cached on the fitted density: a second call runs nothing.
        again = density.conditionals(new[::-1]).samples
        assert int(robjects.r("mk_probe$calls")[0]) == calls
        np.testing.assert_array_equal(again[:, ::-1], first)
    finally:
        robjects.r("rm(mice.impute.mkcount, mk_probe)")


@pytest.mark.r
def test_mice_default_norm_draws_new_rows_as_mice_impute_norm_does(rng):
    """The default method "norm" draws new rows without refitting mice's
    regression at each draw; the same density through a method that only
    calls mice.impute.norm (the path of any other method) must give the same
    draws: the fit is the same mice run, and each draw takes the same random
    numbers in the same order. Only the least-squares solves differ in their
    rounding (the same QR, done once or at each call): 1e-10 relative,
    with the designs' condition numbers below 10 (checked in the test of the
    fitted chains above)."""
    _require("mice")
    robjects = pytest.importorskip("rpy2.robjects")
    robjects.r(
        "mice.impute.mknorm <- function(y, ry, x, wy = NULL, ...)"
        "  mice::mice.impute.norm(y, ry, x, wy = wy, ...)"
    )
    try:
        X = _mice_data(rng, n=70, d=4, rate=0.3)
        new = _mice_data(rng, n=12, d=4, rate=0.4)
        new[0] = np.nan
        fast = get_density("r_mice", m=3, maxit=3, seed=9).fit(X)
        slow = get_density("r_mice", m=3, maxit=3, seed=9, method="mknorm").fit(X)
        np.testing.assert_array_equal(fast.samples_, slow.samples_)
        a, b = fast.conditionals(new).samples, slow.conditionals(new).samples
        assert np.isnan(new).sum(axis=1).max() == 4
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        assert np.all(np.ptp(a[:, np.isnan(new)], axis=0) > 0)
    finally:
        robjects.r("rm(mice.impute.mknorm)")


@pytest.mark.r
def test_mice_moment_matched_gaussian(rng):
    _require("mice")
    X = _mice_data(rng, n=60, d=3)
    density = get_density("r_mice", m=6, maxit=2, seed=3).fit(X)
    samples = density.conditionals(X).samples
    gauss = get_density("r_mice", m=6, maxit=2, seed=3, moment_match=True).fit(X)
    assert gauss.representation == "gaussian" and density.representation == "samples"
    cond = gauss.conditionals(X)
    np.testing.assert_allclose(cond.means, samples.mean(axis=0))
    missing = np.isnan(X)
    np.testing.assert_array_equal(cond.means[~missing], X[~missing])
    # Naive reference: per pattern, the pooled within-row covariance of draws.
    for p, pattern in enumerate(cond.patterns):
        rows = np.flatnonzero(cond.pattern_index == p)
        J = np.flatnonzero(pattern)
        if J.size == 0:
            continue
        acc = np.zeros((J.size, J.size))
        for i in rows:
            acc += np.cov(samples[:, i, J], rowvar=False, ddof=1).reshape(
                J.size, J.size
            ) * (samples.shape[0] - 1)
        ref = acc / (rows.size * (samples.shape[0] - 1))
        np.testing.assert_allclose(cond.covariances[p], ref, rtol=1e-12, atol=1e-14)
    # Too few draws for a pattern's covariance: a clear error.
    lone = np.array([[np.nan, np.nan, np.nan]])
    small = get_density("r_mice", m=3, maxit=2, seed=3, moment_match=True).fit(X)
    with pytest.raises(ValueError, match="Increase m to at least 4"):
        small.conditionals(lone)


@pytest.mark.r
def test_mice_r_error_is_raised_with_its_message(rng):
    _require("mice")
    X = _mice_data(rng, n=30, d=3)
    with pytest.raises(mkr.RError, match=r"mice\.impute\.no_such_method"):
        get_density("r_mice", method="no_such_method", seed=1).fit(X)


def test_r_messages_name_columns_as_the_package_does():
    class Named:
        feature_names_in_ = np.array(["age", "dose"], dtype=object)

    text = "out=f1 meth=norm pred=f0, f10"
    assert _session.name_features(text, Named()) == (
        "out=feature 'dose' meth=norm pred=feature 'age', column 10 (0-based)"
    )
    assert _session.name_features("f2", None) == "column 2 (0-based)"


@pytest.mark.r
def test_r_density_in_svc_names_the_dataframe_column(rng):
    _require("Amelia")
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(_mice_data(rng, n=30, d=3), columns=["age", "dose", "weight"])
    X["dose"] = 1.0
    y = np.arange(30) % 2
    with pytest.raises(ValueError, match="observed in feature 'dose'"):
        MissingKernelSVC(density="r_amelia").fit(X, y)
    with pytest.raises(ValueError, match=r"observed in column 1 \(0-based\)"):
        MissingKernelSVC(density="r_amelia").fit(X.to_numpy(), y)


@pytest.mark.r
def test_mice_unimputed_column_is_named(rng):
    _require("mice")
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(_mice_data(rng, n=30, d=3), columns=["age", "dose", "weight"])
    density = get_density("r_mice", method=["norm", "", "norm"], seed=1)
    with pytest.raises(mkr.RError, match="mice left feature 'dose' unimputed"):
        MissingKernelSVC(density=density).fit(X, np.arange(30) % 2)


# -- estimators on real missing data ------------------------------------------
@pytest.mark.r
@pytest.mark.parametrize("name", ["r_mice", "r_amelia"])
def test_svc_with_r_density_in_cross_val_score(name, shared_data_dir):
    """MissingKernelSVC fits and predicts with an R density on real NaNs.

    Both are used by their registry names, as a user would. ``r_amelia``
    must score like ``gaussian_em`` (the same density); ``r_mice`` (its
    defaults, m=5 and maxit=5, and one mice run per incomplete test row:
    about 55 s here) must beat the majority class
    rate minus 5 points. r_mice's seed is drawn from NumPy's global state when
    None, so that state is fixed first.
    """
    _require("mice" if name == "r_mice" else "Amelia")
    from _helpers import load_shared_csv
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from missingkernels.estimators import MissingKernelSVC

    X, y = load_shared_csv(shared_data_dir, "hepatitis")
    assert np.isnan(X).any()
    cv = StratifiedKFold(3, shuffle=True, random_state=0)

    def cv_scores(density):
        model = make_pipeline(
            StandardScaler(), MissingKernelSVC(density=density, C=2.0)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mkr.RWarning)
            return cross_val_score(model, X, y, cv=cv, error_score="raise")

    if name == "r_amelia":
        scores = cv_scores("r_amelia")
        reference = cv_scores("gaussian_em")
        # At most one of the ~52 predictions per fold may flip.
        assert np.all(np.abs(scores - reference) <= 1 / 50), (scores, reference)
    else:
        np.random.seed(0)  # noqa: NPY002 (r_mice draws its seed from this state)
        scores = cv_scores("r_mice")
    majority = np.mean(y == np.bincount(y.astype(int)).argmax())
    assert np.all(np.isfinite(scores))
    assert scores.mean() >= majority - 0.05, (scores, majority)


# -- the package's contract checks -------------------------------------------------
def _contract_density(name):
    if name == "r_mice":
        _require("mice")
        return get_density("r_mice", m=3, seed=0)
    return _r_gaussian(name)


@pytest.mark.r
@pytest.mark.parametrize("name", ["r_amelia", "r_mice", "r_norm"])
def test_r_densities_keep_the_density_contract(name):
    from missingkernels.utils.estimator_checks import check_density

    check_density(_contract_density(name))


@pytest.mark.r
@pytest.mark.parametrize("name", ["r_amelia", "r_mice", "r_norm"])
@pytest.mark.parametrize("kernel", ["genrbf", "expected_linear"])
def test_kernels_over_r_densities_keep_the_kernel_contract(name, kernel):
    from missingkernels.utils.estimator_checks import check_kernel

    check_kernel(get_kernel(kernel, density=_contract_density(name)))


def test_norm_bridge_keeps_the_density_contract(norm_stand_ins):
    """The bridge itself (norm's functions stood in by R code) on the contract."""
    from missingkernels.utils.estimator_checks import check_density

    check_density(get_density("r_norm", criterion=TIGHT, maxits=2000))


# -- what the missing entries cost, through the R densities -------------------------
@pytest.mark.r
@pytest.mark.parametrize("name", ["r_amelia", "r_norm", "r_mice"])
def test_uncertainty_from_missing_through_r_densities(name, rng):
    """The completed decisions are drawn from the R density: their mean is
    the expected RBF's decision within its Monte Carlo error (4.5 standard
    errors), and plausible_values come back in the table's units."""
    if name == "r_mice":
        _require("mice")
        density = get_density("r_mice", m=5, maxit=3, seed=3)
    else:
        density = _r_gaussian(name)
    X = _gaussian_data(rng, 120, 4, "mcar")[2:]
    y = (X[:, 0] > np.nanmedian(X[:, 0])).astype(int)
    y[np.isnan(X[:, 0])] = np.arange(np.isnan(X[:, 0]).sum()) % 2
    model = MissingKernelSVC(kernel="expected_rbf", density=density, random_state=0)
    model.fit(X, y)
    rows = X[:12]
    n_draws = 400
    u = model.uncertainty_from_missing(rows, n_draws=n_draws, random_state=1)
    se = u["completed_sd"] / np.sqrt(n_draws)
    assert np.all(np.abs(u["completed_mean"] - u["decision"]) <= 4.5 * se + 1e-12)
    incomplete = np.isnan(rows).any(axis=1)
    assert (u["completed_sd"] > 0).tolist() == incomplete.tolist()
    copies = model.plausible_values(rows, n_draws=2, random_state=1)
    observed = ~np.isnan(rows)
    np.testing.assert_array_equal(copies[0][observed], rows[observed])
    # Drawn entries on the columns' own scales (these differ up to 1000x).
    scale = np.nanstd(X, axis=0)
    centre = np.nanmean(X, axis=0)
    z = np.abs(copies[0] - centre) / scale
    assert np.all(z[~observed] < 8)


@pytest.mark.r
def test_the_estimators_random_state_seeds_r_mice(rng):
    """random_state reaches R's mice (whose parameter is `seed`): the same
    random_state gives the same decisions, another gives others."""
    _require("mice")
    X = _mice_data(rng, n=60)
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int)
    y[:2] = [0, 1]

    def decisions(seed):
        model = MissingKernelSVC(density="r_mice", random_state=seed)
        model.set_params(density_params={"m": 3, "maxit": 2})
        return model.fit(X, y).decision_function(X[:10])

    first = decisions(3)
    np.testing.assert_array_equal(first, decisions(3))
    assert not np.allclose(first, decisions(4))
