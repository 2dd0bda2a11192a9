"""Features (almost) never observed in the training rows are dropped at fit.

A column missing in every training row, or observed in fewer than
``MIN_OBSERVED`` (2) of them, carries no information: every registry kernel
(and the density it fits), the estimators built on them and every baseline
drop it, list it in ``dropped_features_``, name it in one
``DroppedFeaturesWarning``, and predict as on the table without it (issue 26).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold

import missingkernels
from missingkernels import (
    MIN_OBSERVED,
    DroppedFeaturesWarning,
    ExpectedKernelFeatures,
    MissingKernelSVC,
    MissingKernelSVR,
    MissingKernelTransformer,
    get_baseline,
    get_density,
    get_kernel,
    list_baselines,
    list_kernels,
)

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

pd = pytest.importorskip("pandas")

N = 100
COLUMNS = ["a", "b", "empty", "c", "d", "rare"]  # "rare": observed in 1% of rows
KEPT = ["a", "b", "c", "d"]


def _tables(binary=False, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    if binary:  # 0/1 codes for the Belanche kernels
        X = np.where(np.isnan(X), np.nan, (X > 0).astype(float))
    full = pd.DataFrame(X, columns=KEPT)
    full.insert(2, "empty", np.nan)
    full["rare"] = np.nan
    full.loc[7, "rare"] = 1.0
    return full, full[KEPT], y


def _fit_warned(est, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(*args)
    dropped = [w for w in caught if issubclass(w.category, DroppedFeaturesWarning)]
    assert len(dropped) == 1, [str(w.message) for w in caught]
    message = str(dropped[0].message)
    assert "'empty', 'rare'" in message and "fewer than 2" in message
    return est


def test_threshold_is_two_observed_values():
    assert MIN_OBSERVED == 2


@pytest.mark.parametrize("name", sorted(list_kernels()))
def test_every_registry_kernel_drops_empty_and_rare_columns(name):
    full, kept, _ = _tables(binary=name.startswith("belanche"))
    k = _fit_warned(get_kernel(name), full)
    assert k.dropped_features_.tolist() == [2, 5]
    assert k.feature_names_in_[k.dropped_features_].tolist() == ["empty", "rare"]
    k0 = get_kernel(name).fit(kept)
    # New rows: their values in the dropped columns are ignored.
    new = full.iloc[:30].copy()
    new["empty"] = 3.0
    new["rare"] = -1.0
    np.testing.assert_allclose(k(full), k0(kept), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        k(new, full), k0(kept.iloc[:30], kept), rtol=0, atol=1e-12
    )


def test_kernel_on_arrays_names_columns_by_position():
    full, _, _ = _tables()
    with pytest.warns(DroppedFeaturesWarning, match=r"columns 2, 5 \(0-based\)"):
        k = get_kernel("genrbf").fit(full.to_numpy())
    assert k.dropped_features_.tolist() == [2, 5]
    assert k.density_.n_features_in_ == 4


def test_a_column_observed_twice_is_kept():
    full, _, _ = _tables()
    full.loc[8, "rare"] = 0.0
    full = full.drop(columns="empty")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedFeaturesWarning)
        k = get_kernel("expected_rbf").fit(full)
    assert k.dropped_features_.tolist() == []


def test_a_density_fitted_elsewhere_keeps_every_column():
    frozen = pytest.importorskip("sklearn.frozen")
    full, _, _ = _tables()
    full = full.drop(columns="empty")
    density = get_density("gaussian_em").fit(full)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DroppedFeaturesWarning)
        k = get_kernel("expected_rbf", density=frozen.FrozenEstimator(density))
        k.fit(full)
    assert k.dropped_features_.tolist() == []
    assert k(full.iloc[:3]).shape == (3, 3)


def test_no_feature_left_is_an_error():
    X = np.full((5, 2), np.nan)
    X[0, 0] = 1.0
    with pytest.raises(ValueError, match="no feature is observed in at least 2"):
        get_kernel("genrbf").fit(X)


def test_a_density_fitted_alone_still_refuses_an_empty_column():
    full, _, _ = _tables()
    with pytest.raises(ValueError, match="missing in every one of the 100"):
        get_density("gaussian_em").fit(full)


@pytest.mark.parametrize(
    "make",
    [
        lambda: MissingKernelSVC(route="exact"),
        lambda: MissingKernelSVC(route="features", random_state=0),
        lambda: MissingKernelSVC(kernel="expected_rbf", gamma=0.3),
        lambda: MissingKernelSVR(),
    ],
    ids=["svc-exact", "svc-features", "svc-expected-rbf", "svr"],
)
def test_svms_drop_and_predict_as_without_the_columns(make):
    full, kept, y = _tables()
    est = _fit_warned(make(), full, y)
    assert est.dropped_features_.tolist() == [2, 5]
    ref = make().fit(kept, y)
    np.testing.assert_allclose(
        est.decision_function(full)
        if hasattr(est, "decision_function")
        else est.predict(full),
        ref.decision_function(kept)
        if hasattr(ref, "decision_function")
        else ref.predict(kept),
        rtol=0,
        atol=1e-10,
    )


def test_transformer_and_features_drop_the_columns():
    full, kept, _ = _tables()
    t = _fit_warned(MissingKernelTransformer(), full)
    assert t.dropped_features_.tolist() == [2, 5]
    np.testing.assert_allclose(
        t.transform(full), MissingKernelTransformer().fit(kept).transform(kept),
        rtol=0, atol=1e-12,
    )  # fmt: skip
    f = _fit_warned(ExpectedKernelFeatures(random_state=0), full)
    assert f.dropped_features_.tolist() == [2, 5]
    ref = ExpectedKernelFeatures(random_state=0).fit(kept)
    np.testing.assert_allclose(f.transform(full), ref.transform(kept), atol=1e-12)


@pytest.mark.parametrize("form", ["kernel", "linear"])
def test_socp_drops_the_columns(form):
    pytest.importorskip("cvxpy")
    full, kept, y = _tables()
    full, kept, y = full.iloc[:40], kept.iloc[:40], y[:40]  # "rare": row 7
    params = {"form": form, "gamma": 0.5} if form == "kernel" else {"form": form}
    est = _fit_warned(missingkernels.SOCPSVC(**params), full, y)
    assert est.dropped_features_.tolist() == [2, 5]
    ref = missingkernels.SOCPSVC(**params).fit(kept, y)
    np.testing.assert_allclose(
        est.decision_function(full), ref.decision_function(kept), atol=1e-8
    )
    if form == "linear":
        assert est.coef_.shape == (6,) and est.coef_[[2, 5]].tolist() == [0.0, 0.0]


def _baseline(name):
    factory = list_baselines()[name].factory
    seeded = "random_state" in inspect.signature(factory).parameters
    extra = {"random_state": 0} if seeded else {}
    return get_baseline(name, task="classification", **extra)


@pytest.mark.parametrize("name", sorted(list_baselines()))
def test_every_baseline_drops_empty_and_rare_columns(name):
    if name in ("socp",):
        pytest.importorskip("cvxpy")
    full, kept, y = _tables()
    if name == "socp":  # a smaller SOCP
        full, kept, y = full.iloc[:40], kept.iloc[:40], y[:40]
    model = _fit_warned(_baseline(name), full, y)
    step = model.steps[0][1] if hasattr(model, "steps") else model
    assert step.dropped_features_.tolist() == [2, 5]
    if name == "r_mice":
        return  # R's draws are not reproducible from random_state
    ref = _baseline(name).fit(kept, y)
    np.testing.assert_array_equal(model.predict(full), ref.predict(kept))


def test_grid_search_never_falls_back_on_a_column_empty_in_a_fold():
    # "rare" is observed in rows 0-2 only: the first fold's training rows
    # never see it, the others see it two or three times.
    full, _, y = _tables()
    full = full.drop(columns="empty")
    full["rare"] = np.nan
    full.loc[[0, 1, 2], "rare"] = [0.5, -0.3, 1.2]
    search = GridSearchCV(
        MissingKernelSVC(),
        {"C": [0.5, 2.0], "gamma": [0.1, 1.0]},
        cv=KFold(5),
        error_score="raise",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedFeaturesWarning)
        search.fit(full, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    assert search.best_score_ > 0.6


def test_run_comparison_lists_every_method_with_an_empty_column():
    from missingkernels.experiments import ComparisonData, run_comparison

    full, _, y = _tables(seed=3)
    methods = ["genrbf", "expected_rbf", "mean", "zero", "hgb", "geom"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = run_comparison(
            {"t": ComparisonData(full.to_numpy(), y, "classification")},
            methods,
            mechanisms=("none",),
            n_draws=1,
            outer_folds=2,
            inner_folds=2,
            C_grid=[1.0],
            gamma_grid=[0.5],
        )
    frame = pd.DataFrame(results) if not hasattr(results, "columns") else results
    assert set(frame["method"]) == set(methods)
    errors = frame["error"].fillna("").astype(str)
    assert (errors == "").all(), frame.loc[errors != "", ["method", "error"]]
    assert frame["score"].notna().all()


def test_compare_cli_lists_every_method_with_an_empty_column(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from missingkernels.cli import main

    full, _, y = _tables(seed=4)
    full = full.iloc[:72]
    full["label"] = np.where(y[:72] == 1, "yes", "no")
    path = tmp_path / "empty.csv"
    full.to_csv(path, index=False)
    out = tmp_path / "out"
    methods = ["genrbf", "mean", "hgb"]
    code = main(
        ["compare", "--csv", str(path), "--target", "label", "--quick",
         "--methods", ",".join(methods), "--output-dir", str(out),
         "--no-progress"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(res["method"]) == set(methods)
    assert (res["error"] == "").all()
    for method in methods:
        assert f"| {method} |" in printed
    # The note names them (the warnings of the cells can only give positions).
    assert (
        "dropped by every method in every fit: 'empty' (column 2 (0-based), "
        "0 values), 'rare' (column 5 (0-based), 1 value)" in printed
    )
