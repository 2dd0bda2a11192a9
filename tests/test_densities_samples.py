"""Tests of the multiple-imputation densities (MICE, IterativeImputer)."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from sklearn.base import clone

from missingkernels import get_density
from missingkernels.conditionals import SampleConditionals
from missingkernels.densities import IterativeImputerDensity, MICEDensity

_NO_STATSMODELS = importlib.util.find_spec("statsmodels") is None

COV = np.array([[1.0, 0.8, 0.5], [0.8, 1.0, 0.4], [0.5, 0.4, 1.0]])
MEAN = np.array([0.0, 1.0, 2.0])

NAMES = [
    pytest.param(
        "mice",
        marks=pytest.mark.skipif(_NO_STATSMODELS, reason="MICE needs statsmodels"),
    ),
    "iterative",
]
FACTORIES = {
    "mice": lambda **kw: MICEDensity(max_iter=3, **kw),
    "iterative": lambda **kw: IterativeImputerDensity(max_iter=5, **kw),
}


def _data(rng, n, rate=0.3):
    X = rng.multivariate_normal(MEAN, COV, size=n)
    Xm = X.copy()
    Xm[rng.random(X.shape) < rate] = np.nan
    return X, Xm


@pytest.mark.parametrize("name", NAMES)
def test_registry_and_common_parameters(name):
    density = get_density(name, n_draws=3, random_state=0)
    assert density.representation == "samples"
    assert density.get_params()["n_draws"] == 3
    assert clone(density).get_params() == density.get_params()


@pytest.mark.parametrize("name", NAMES)
def test_draws_keep_observed_and_vary_missing(rng, name):
    _, Xm = _data(rng, 300)
    density = FACTORIES[name](n_draws=4, random_state=0).fit(Xm)
    _, X_new = _data(rng, 50, rate=0.4)
    X_new[0] = np.nan
    cond = density.conditionals(X_new)
    assert isinstance(cond, SampleConditionals)
    assert cond.samples.shape == (4, 50, 3)
    missing = np.isnan(X_new)
    np.testing.assert_array_equal(cond.missing, missing)
    for draw in cond.samples:
        np.testing.assert_array_equal(draw[~missing], X_new[~missing])
    assert np.all(np.isfinite(cond.samples))
    spread = cond.samples.std(axis=0)
    assert np.all(spread[~missing] == 0)
    assert np.mean(spread[missing] > 0) > 0.9


@pytest.mark.parametrize("name", NAMES)
def test_deterministic(rng, name):
    _, Xm = _data(rng, 200)
    a = FACTORIES[name](n_draws=3, random_state=5).fit(Xm)
    b = FACTORIES[name](n_draws=3, random_state=5).fit(Xm)
    first = a.conditionals(Xm).samples
    np.testing.assert_array_equal(first, b.conditionals(Xm).samples)
    np.testing.assert_array_equal(first, a.conditionals(Xm).samples)


@pytest.mark.parametrize("name", NAMES)
def test_draws_follow_the_gaussian_conditional(rng, name):
    # x1 missing in new rows: under the true Gaussian it is N(mu, v) by the
    # Schur complement. Chained regressions + PMM / Bayesian ridge only
    # approximate it, so the tolerances are loose but would catch a draw
    # ignoring the observed features (variance ratio 1 / (1 - R^2) = 2.8).
    _, Xm = _data(rng, 800)
    density = FACTORIES[name](n_draws=5, random_state=0).fit(Xm)
    X_new = rng.multivariate_normal(MEAN, COV, size=400)
    X_new[:, 1] = np.nan
    draws = density.conditionals(X_new).samples[:, :, 1]
    O = [0, 2]  # noqa: E741
    coef = np.linalg.solve(COV[np.ix_(O, O)], COV[O, 1])
    mu = MEAN[1] + (X_new[:, O] - MEAN[O]) @ coef
    v = COV[1, 1] - COV[1, O] @ coef
    resid = draws - mu
    assert abs(resid.mean()) < 0.1
    assert 0.7 < resid.var() / v < 1.4


@pytest.mark.parametrize("name", NAMES)
def test_new_rows_use_the_training_model_only(rng, name):
    # Training: x1 = 3 x0 (+ small noise). New rows: half of them follow
    # x1 = -3 x0 with x1 observed. If the imputer learnt from new rows, the
    # imputed x1 of the other half would be pulled away from 3 x0.
    x0 = rng.normal(size=300)
    train = np.column_stack([x0, 3 * x0 + 0.05 * rng.normal(size=300)])
    train[rng.random(300) < 0.2, 1] = np.nan
    density = FACTORIES[name](n_draws=3, random_state=0).fit(train)
    z = rng.normal(size=200)
    new = np.column_stack([z, -3 * z])
    new[:100, 1] = np.nan
    imputed = density.conditionals(new).samples[:, :100, 1].mean(axis=0)
    slope = np.polyfit(z[:100], imputed, 1)[0]
    assert 2.5 < slope < 3.5  # about 0 if half the rows had taught x1 = -3 x0
    # Predictive mean matching draws observed training values, which clips
    # the tails; in the bulk the imputations sit on 3 x0: no bias beyond 4
    # standard errors, and a spread of the order of the donor pool's. (A
    # bound on the largest of ~70 errors fails by chance for some seeds.)
    bulk = np.abs(z[:100]) < 1.5
    err = imputed[bulk] - 3 * z[:100][bulk]
    assert abs(err.mean()) < 4 * err.std() / np.sqrt(err.size)
    assert np.sqrt(np.mean(err**2)) < 0.4


@pytest.mark.skipif(_NO_STATSMODELS, reason="MICE needs statsmodels")
def test_mice_import_error_names_the_extra(rng, monkeypatch):
    monkeypatch.setitem(sys.modules, "statsmodels.imputation.mice", None)
    _, Xm = _data(rng, 30)
    with pytest.raises(
        ImportError, match=r'pip install "missingkernels\[experiments\]"'
    ):
        MICEDensity().fit(Xm)


@pytest.mark.parametrize("name", NAMES)
def test_bad_input(rng, name):
    _, Xm = _data(rng, 40)
    bad = Xm.copy()
    bad[:, 2] = np.nan
    with pytest.raises(ValueError, match=r"column 2 \(0-based\) \(missing in every"):
        FACTORIES[name]().fit(bad)
    density = FACTORIES[name](n_draws=2, random_state=0).fit(Xm)
    with pytest.raises(ValueError, match="features"):
        density.conditionals(Xm[:, :2])
    with pytest.raises(ValueError, match=r"[Ii]nf"):
        density.conditionals(np.array([[np.inf, 0.0, 1.0]]))
