"""Baselines: registry, imputation order, draws from conditionals."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import missingkernels
from missingkernels.conditionals import GaussianConditionals
from missingkernels.experiments._baselines import zero_svm


def test_builtin_baselines_are_registered_and_fit_on_nan_data(rng):
    names = set(missingkernels.list_baselines())
    assert {
        "zero",
        "mean",
        "mode",
        "knn",
        "iterative",
        "missforest",
        "gmm",
        "em",
    } <= names
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    for name in ("zero", "mean", "mode", "knn", "iterative", "em"):
        kwargs = {"random_state": 0} if name == "iterative" else {}
        model = missingkernels.get_baseline(name, task="classification", **kwargs)
        assert isinstance(model, Pipeline)
        assert model.fit(X, y).predict(X).shape == (40,)
    reg = missingkernels.get_baseline("mean", task="regression")
    assert reg.fit(X, rng.normal(size=40)).predict(X).shape == (40,)
    with pytest.raises(ValueError, match="task must be"):
        missingkernels.get_baseline("mean", task="ranking")


def test_zero_imputes_zero_in_original_units(rng):
    X = rng.normal(loc=5.0, size=(30, 2))
    X[::4, 1] = np.nan
    pre = Pipeline(zero_svm().steps[:-1]).fit(X)
    filled = np.where(np.isnan(X), 0.0, X)
    expected = (filled - filled.mean(0)) / filled.std(0)
    np.testing.assert_allclose(pre.transform(X), expected)
    # ...which differs from mean imputation (what zero would be after scaling).
    mean_pre = Pipeline(
        [("s", StandardScaler()), ("i", SimpleImputer(strategy="mean"))]
    ).fit(X)
    assert not np.allclose(mean_pre.transform(X), expected)


def test_gaussian_draws_follow_the_conditional_distribution():
    mean = np.array([1.0, -1.0, 0.5])
    S = np.array([[2.0, 0.8, 0.3], [0.8, 1.0, 0.4], [0.3, 0.4, 1.5]])
    n = 4000
    X = np.tile([[2.0, np.nan, np.nan]], (n, 1))
    cond = GaussianConditionals.from_moments(X, mean, S)
    draws = cond.sample(1, np.random.RandomState(0), by_row=False).samples[0]
    # Closed form, written out: mu_J = m_J + S_JO S_OO^-1 (x_O - m_O).
    mu = mean[1:] + S[1:, :1] @ np.linalg.solve(S[:1, :1], [2.0 - mean[0]])
    C = S[1:, 1:] - S[1:, :1] @ np.linalg.solve(S[:1, :1], S[:1, 1:])
    assert (draws[:, 0] == 2.0).all()
    se = np.sqrt(np.diag(C) / n)
    assert np.all(np.abs(draws[:, 1:].mean(0) - mu) < 4 * se)
    emp = np.cov(draws[:, 1:], rowvar=False)
    # SE of a sample covariance entry ~ sqrt((C_ii C_jj + C_ij^2) / n).
    se_cov = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C**2) / n)
    assert np.all(np.abs(emp - C) < 4 * se_cov)
    np.testing.assert_allclose(cond.first_moments()[0, 1:], mu)


def test_density_draw_imputer_fits_on_training_rows_only(rng):
    from missingkernels.experiments import DensityDrawImputer

    X = rng.normal(size=(60, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    imp = DensityDrawImputer("gaussian_em", fill="mean").fit(X[:40])
    out = imp.transform(X[40:])
    direct = missingkernels.get_density("gaussian_em").fit(X[:40])
    np.testing.assert_allclose(out, direct.conditionals(X[40:]).means)
    with pytest.raises(ValueError, match="fill"):
        DensityDrawImputer("gaussian_em", fill="median").fit(X)


def test_socp_is_a_registered_baseline_resolved_like_the_others():
    from missingkernels.estimators import SOCPSVC
    from missingkernels.experiments import resolve_method

    entry = missingkernels.list_baselines()["socp"]
    assert entry.plugin == "missingkernels.experiments"
    model = missingkernels.get_baseline("socp", task="classification", C=2.0)
    assert isinstance(model, SOCPSVC)
    assert (model.kappa, model.C) == (0.9, 2.0)
    with pytest.raises(ValueError, match="socp is a classifier"):
        missingkernels.get_baseline("socp", task="regression")
    spec = resolve_method("socp", C_grid=[1.0, 8.0], gamma_grid=[0.5])
    assert (spec.kind, spec.grid) == ("estimator", {"C": [1.0, 8.0], "gamma": [0.5]})
    made = spec.make("classification", 0)
    assert isinstance(made, SOCPSVC) and made.kappa == 0.9


def test_the_baseline_mice_is_now_called_iterative():
    from sklearn.impute import IterativeImputer

    from missingkernels.experiments import resolve_method

    assert "mice" not in missingkernels.list_baselines()
    assert "mice" in missingkernels.list_densities()  # statsmodels' MICE draws
    imputer = missingkernels.get_baseline("iterative", random_state=0)["impute"]
    assert isinstance(imputer, IterativeImputer) and imputer.sample_posterior
    message = "The baseline 'mice' is now called 'iterative'"
    with pytest.raises(ValueError, match=message):
        missingkernels.get_baseline("mice")
    with pytest.raises(ValueError, match=message):
        resolve_method("mice")


def test_the_core_registry_does_not_list_the_experiments():
    import subprocess
    import sys

    from missingkernels import _registry

    assert not [p for p in _registry._BUILTIN_PLUGINS if "experiments" in p[1]]
    code = (
        "import sys, missingkernels as mk; mk.list_kernels(); mk.list_densities();"
        "assert 'missingkernels.experiments' not in sys.modules;"
        "entry = mk.list_baselines()['mean'];"
        "assert entry.plugin == 'missingkernels.experiments', entry;"
        "assert 'missingkernels.experiments' in sys.modules;"
        "mk.reload_plugins(); assert 'geom' in mk.list_baselines();"
        "mk.reload_plugins(); mk.get_baseline('mean');"
        "from missingkernels.experiments import register_baselines;"
        "register_baselines(); register_baselines();"
        "assert mk.get_plugin_manager().has_plugin('missingkernels.experiments')"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_lists_the_baselines_with_their_plugin(capsys):
    from missingkernels import cli

    missingkernels.reload_plugins()
    assert cli.main(["list", "baselines"]) == 0
    out = capsys.readouterr().out
    assert "iterative" in out and "[missingkernels.experiments]" in out


def test_cli_lists_the_new_baselines(capsys):
    from missingkernels import cli
    from missingkernels.cli._compare import FULL_METHODS

    assert cli.main(["list", "baselines"]) == 0
    out = capsys.readouterr().out
    for name in ("hgb", "mean_indicator", "knn_indicator", "missforest"):
        assert f"  {name} " in out
    assert {"hgb", "mean_indicator", "knn_indicator"} <= set(FULL_METHODS)


# One OpenMP thread for the boosting: on a machine whose cores are busy with
# other work, its threads' barriers make small fits 30x slower.
@threadpool_limits.wrap(limits=1, user_api="openmp")
def test_hgb_takes_nan_natively_and_declares_its_own_grid(rng):
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    from missingkernels.experiments import resolve_method

    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    clf = missingkernels.get_baseline("hgb", task="classification", random_state=0)
    assert isinstance(clf, HistGradientBoostingClassifier)
    assert clf.fit(X, y).predict(X).shape == (80,)
    reg = missingkernels.get_baseline("hgb", task="regression", max_iter=20)
    assert isinstance(reg, HistGradientBoostingRegressor) and reg.max_iter == 20
    assert reg.fit(X, rng.normal(size=80)).predict(X).shape == (80,)
    with pytest.raises(ValueError, match="task must be"):
        missingkernels.get_baseline("hgb", task="ranking")
    # Its own inner grid (not C x gamma), on the features as given.
    spec = resolve_method("hgb", C_grid=[1.0, 8.0], gamma_grid=[0.5])
    assert spec.kind == "estimator" and spec.scale is False
    assert spec.grid == {
        "learning_rate": [0.03, 0.1, 0.3],
        "max_leaf_nodes": [15, 31, 63],
    }
    assert spec.make("classification", 7).random_state == 7
    # Peers without a declared grid keep C x gamma.
    assert set(resolve_method("geom").grid) == {"C", "gamma"}


@threadpool_limits.wrap(limits=1, user_api="openmp")
def test_hgb_runs_in_a_comparison_and_records_its_grid_point(rng):
    import json

    from missingkernels.experiments import ComparisonData, run_comparison

    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    res = run_comparison(
        {"toy": ComparisonData(X, y, "classification")},
        ["hgb", "mean_indicator"],
        mechanisms=["mcar"],
        rates=[0.2],
        n_draws=1,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0],
        gamma_grid=[0.5],
    )
    assert (res["error"] == "").all()
    hgb_params = res.loc[res["method"] == "hgb", "params"].map(json.loads)
    assert all(set(p) == {"learning_rate", "max_leaf_nodes"} for p in hgb_params)
    ind_params = res.loc[res["method"] == "mean_indicator", "params"].map(json.loads)
    assert all(set(p) == {"C", "gamma"} for p in ind_params)


@pytest.mark.parametrize(
    ("name", "imputer_cls"),
    [("mean_indicator", "SimpleImputer"), ("knn_indicator", "KNNImputer")],
)
def test_indicator_baselines_append_one_column_per_incomplete_feature(
    rng, name, imputer_cls
):
    X = rng.normal(loc=3.0, size=(50, 4))
    X[::5, 1] = np.nan
    X[1::7, 3] = np.nan
    pipe = missingkernels.get_baseline(name, task="classification")
    assert [s for s, _ in pipe.steps] == ["drop", "scale", "impute", "svm"]
    assert type(pipe["impute"]).__name__ == imputer_cls
    assert pipe["impute"].add_indicator
    Xt = Pipeline(pipe.steps[:-1]).fit(X).transform(X)
    # Standardised, imputed features, then 0/1 indicators of features 1 and 3.
    assert Xt.shape == (50, 6) and not np.isnan(Xt).any()
    np.testing.assert_array_equal(Xt[:, 4:], np.isnan(X[:, [1, 3]]).astype(float))
    observed = ~np.isnan(X[:, 0])
    np.testing.assert_allclose(
        Xt[observed, 0], (X[:, 0] - X[:, 0].mean()) / X[:, 0].std()
    )
    if name == "mean_indicator":
        # The standardised training mean is 0.
        np.testing.assert_allclose(Xt[np.isnan(X[:, 1]), 1], 0.0, atol=1e-12)
    y = (rng.random(50) > 0.5).astype(int)
    assert pipe.fit(X, y).predict(X).shape == (50,)


@pytest.mark.skipif(
    __import__("os").cpu_count() == 1, reason="one core: one thread anyway"
)
def test_hgb_fits_and_predicts_on_one_openmp_thread(rng, monkeypatch):
    # Issue 38: compare --quick on hepatitis spent 20-89 s in hgb with the
    # machine's two cores busy (0.9 s on one thread): OpenMP's threads wait
    # for each other at every barrier. The comparisons' tables are small.
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_info

    def openmp_threads():
        return max(
            (i["num_threads"] for i in threadpool_info() if i["user_api"] == "openmp"),
            default=None,
        )

    threads = []
    for name in ("fit", "predict"):
        original = getattr(HistGradientBoostingClassifier, name)

        def spy(self, *args, _original=original, **kwargs):
            threads.append(openmp_threads())
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(HistGradientBoostingClassifier, name, spy)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    model = missingkernels.get_baseline("hgb", task="classification").fit(X, y)
    model.predict(X)
    assert threads == [1, 1]


def test_iterative_mean_is_iterative_imputer_at_its_defaults(rng):
    """The baseline a scikit-learn user runs: the default IterativeImputer
    (conditional means, no draw) on standardised columns, then the RBF SVM,
    equal to that pipeline written out by hand; 'iterative' draws instead."""
    from sklearn.experimental import enable_iterative_imputer  # noqa: F401
    from sklearn.impute import IterativeImputer
    from sklearn.svm import SVC

    X = rng.normal(size=(80, 4))
    X[:, 1] += X[:, 0]
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    model = missingkernels.get_baseline("iterative_mean", random_state=3)
    imputer = model["impute"]
    defaults = IterativeImputer().get_params()
    assert {k: v for k, v in imputer.get_params().items() if k != "random_state"} == {
        k: v for k, v in defaults.items() if k != "random_state"
    }
    assert not imputer.sample_posterior
    by_hand = Pipeline(
        [
            ("scale", StandardScaler()),
            ("impute", IterativeImputer(random_state=3)),
            ("svm", SVC(kernel="rbf")),
        ]
    )
    np.testing.assert_array_equal(
        model.fit(X, y).decision_function(X), by_hand.fit(X, y).decision_function(X)
    )
    # Conditional means do not depend on the seed; one posterior draw does.
    other = missingkernels.get_baseline("iterative_mean", random_state=4).fit(X, y)
    np.testing.assert_array_equal(other[:-1].transform(X), model[:-1].transform(X))
    drawn = missingkernels.get_baseline("iterative", random_state=3).fit(X, y)
    assert not np.allclose(drawn[:-1].transform(X), model[:-1].transform(X))
    reg = missingkernels.get_baseline("iterative_mean", task="regression")
    assert reg.fit(X, rng.normal(size=80)).predict(X).shape == (80,)
