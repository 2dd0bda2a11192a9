"""Nested-CV runner: no leakage, Gram reuse, selection, resume, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.impute import SimpleImputer
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import missingkernels
from missingkernels.densities import GaussianEMDensity
from missingkernels.experiments import (
    ComparisonData,
    MethodSpec,
    resolve_method,
    run_comparison,
)
from missingkernels.experiments._cv import _seed, _splitter
from missingkernels.hookspecs import hookimpl

pytest.importorskip("pandas")
pytest.importorskip("joblib")

SEEN: list[np.ndarray] = []  # missing masks of every fit of the recording parts
BUILT: list[float | None] = []  # gamma of every recording kernel built
TRANSFORMED: list[int] = []  # rows of every RecordingImputer.transform call


class RecordingKernel(BaseEstimator):
    """Mean-filled RBF that records the missing masks of the rows it is fitted on."""

    def __init__(self, gamma: float = 1.0) -> None:
        self.gamma = gamma

    def fit(self, X: np.ndarray) -> RecordingKernel:
        SEEN.append(np.isnan(X).copy())
        self.mean_ = np.nanmean(X, axis=0)
        return self

    def _fill(self, X: np.ndarray) -> np.ndarray:
        return np.where(np.isnan(X), self.mean_, X)

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        Y = X if Y is None else Y
        return rbf_kernel(self._fill(X), self._fill(Y), gamma=self.gamma)


class RecordingImputer(TransformerMixin, BaseEstimator):
    """Mean imputer that records the missing masks of the rows it is fitted on."""

    def fit(self, X: np.ndarray, y: object = None) -> RecordingImputer:
        SEEN.append(np.isnan(X).copy())
        self.mean_ = np.nanmean(X, axis=0)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        TRANSFORMED.append(len(X))
        return np.where(np.isnan(X), self.mean_, X)


class SamplingRecordingImputer(RecordingImputer):
    """Says it draws at transform, like IterativeImputer(sample_posterior=True)."""

    sample_posterior = True


def recording_kernel(**params: object) -> RecordingKernel:
    """Recording test kernel."""
    kernel = RecordingKernel(**params)  # type: ignore[arg-type]
    BUILT.append(kernel.gamma)
    return kernel


def recording_baseline(task: str = "classification") -> Pipeline:
    """Recording test baseline."""
    return Pipeline([("impute", RecordingImputer()), ("svm", SVC())])


def sampling_recording_baseline(task: str = "classification") -> Pipeline:
    """Recording test baseline whose imputer samples at transform."""
    return Pipeline([("impute", SamplingRecordingImputer()), ("svm", SVC())])


class _Plugin:
    @hookimpl
    def missingkernels_register_kernels(self):  # type: ignore[no-untyped-def]
        return {"test_recording": recording_kernel}

    @hookimpl
    def missingkernels_register_baselines(self):  # type: ignore[no-untyped-def]
        return {
            "test_recording_baseline": recording_baseline,
            "test_sampling_baseline": sampling_recording_baseline,
        }


@pytest.fixture
def recording_plugin():
    name = missingkernels.register_plugin(_Plugin(), name="test-recording")
    SEEN.clear()
    BUILT.clear()
    TRANSFORMED.clear()
    yield name
    missingkernels.unregister_plugin(name)


def _fingerprinted(n: int = 48, d: int = 7, seed: int = 0):
    """Rows with distinct missing patterns: a mask identifies its row."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int)
    codes = rng.choice(np.arange(1, 2**d - 1), size=n, replace=False)
    masks = ((codes[:, None] >> np.arange(d)) & 1).astype(bool)
    X[masks] = np.nan
    return X, y, masks


@pytest.mark.parametrize("method", ["test_recording", "test_recording_baseline"])
def test_runner_never_fits_on_scored_rows(recording_plugin, method):
    X, y, masks = _fingerprinted()
    index = {m.tobytes(): i for i, m in enumerate(masks)}
    res = run_comparison(
        {"fp": ComparisonData(X, y, "classification")},
        [method],
        mechanisms=["none"],
        n_draws=1,
        outer_folds=3,
        inner_folds=2,
        C_grid=[1.0, 2.0],
        gamma_grid=[0.1],
        random_state=3,
    )
    assert (res["error"] == "").all(), res["error"].unique()
    rate = float(np.isnan(X).mean())
    outer = list(
        _splitter(
            "classification", 3, _seed(3, "outer", "fp", "none", f"{rate:.6g}", 0)
        ).split(X, y)
    )
    # Fits in order: per outer fold, 2 inner fits then the refit.
    assert len(SEEN) == 3 * 3
    for f, (train, test) in enumerate(outer):
        fits = SEEN[3 * f : 3 * f + 3]
        rows = [{index[m.tobytes()] for m in fit} for fit in fits]
        for seen in rows:
            assert seen.isdisjoint(test)  # never the outer test rows
            assert seen <= set(train)
        assert rows[2] == set(train)  # the refit uses every training row
        # The two inner fits leave out disjoint validation rows.
        held_out = [set(train) - r for r in rows[:2]]
        assert held_out[0].isdisjoint(held_out[1])
        assert held_out[0] | held_out[1] == set(train)


def test_gram_computed_once_per_fit_and_gamma(recording_plugin):
    X, y, _ = _fingerprinted()
    C_grid, gamma_grid = [0.1, 1.0, 10.0, 100.0], [0.01, 0.1, 1.0]
    run_comparison(
        {"fp": ComparisonData(X, y, "classification")},
        ["test_recording"],
        mechanisms=["none"],
        n_draws=1,
        outer_folds=2,
        inner_folds=3,
        C_grid=C_grid,
        gamma_grid=gamma_grid,
    )
    # resolve_method builds one probe kernel; then per outer fold: 3 inner
    # fits x 3 gammas + 1 refit, independent of the 4 values of C.
    assert len(BUILT) == 1 + 2 * (3 * 3 + 1)


@pytest.mark.parametrize(
    ("method", "per_gamma"),
    [("test_recording_baseline", False), ("test_sampling_baseline", True)],
)
def test_validation_rows_imputed_once_unless_the_imputer_samples(
    recording_plugin, method, per_gamma
):
    X, y, _ = _fingerprinted()
    gamma_grid = [0.01, 0.1, 1.0]
    res = run_comparison(
        {"fp": ComparisonData(X, y, "classification")},
        [method],
        mechanisms=["none"],
        n_draws=1,
        outer_folds=2,
        inner_folds=3,
        C_grid=[0.5, 2.0],
        gamma_grid=gamma_grid,
    )
    assert (res["error"] == "").all(), res["error"].unique()
    # Per outer fold: each of the 3 inner fits transforms its training rows
    # (fit_transform) and its validation rows (once, or once per gamma for a
    # sampling imputer); the refit transforms training and test rows once.
    calls = len(gamma_grid) if per_gamma else 1
    assert len(TRANSFORMED) == 2 * (3 * (1 + calls) + 2)


def test_selection_matches_gridsearchcv():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 4))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] ** 2 > 0.8).astype(int)
    X[rng.random(X.shape) < 0.15] = np.nan
    C_grid, gamma_grid = [0.25, 1.0, 4.0, 16.0], [0.05, 0.2, 0.8]
    res = run_comparison(
        {"toy": ComparisonData(X, y, "classification")},
        ["mean"],
        mechanisms=["none"],
        n_draws=1,
        outer_folds=3,
        inner_folds=4,
        C_grid=C_grid,
        gamma_grid=gamma_grid,
        random_state=7,
    )
    acc = res[res.metric == "accuracy"].sort_values("fold")
    rate = f"{float(np.isnan(X).mean()):.6g}"
    outer = _splitter("classification", 3, _seed(7, "outer", "toy", "none", rate, 0))
    for f, (train, test) in enumerate(outer.split(X, y)):
        cell = ("toy", "none", rate, 0, f, "mean")
        inner = StratifiedKFold(4, shuffle=True, random_state=_seed(7, "fit", *cell))
        pipe = Pipeline(
            [
                ("scale", StandardScaler()),
                ("impute", SimpleImputer()),
                ("svm", SVC(kernel="rbf")),
            ]
        )
        search = GridSearchCV(
            pipe,
            {"svm__C": C_grid, "svm__gamma": gamma_grid},
            cv=inner,
            scoring="accuracy",
        ).fit(X[train], y[train])
        row = acc[acc.fold == f].iloc[0]
        chosen = json.loads(row.params)
        cv = search.cv_results_
        at = next(
            i
            for i, p in enumerate(cv["params"])
            if p["svm__C"] == chosen["C"] and p["svm__gamma"] == chosen["gamma"]
        )
        assert cv["mean_test_score"][at] == pytest.approx(cv["mean_test_score"].max())
        best = pipe.set_params(svm__C=chosen["C"], svm__gamma=chosen["gamma"])
        expected = float(
            np.mean(best.fit(X[train], y[train]).predict(X[test]) == y[test])
        )
        assert row.score == pytest.approx(expected)


def _scores(results: Any) -> Any:
    cols = ["dataset", "mechanism", "rate", "draw", "fold", "method", "metric"]
    return results.drop(columns=["fit_seconds", "cell_seconds"]).sort_values(cols)


class _Interrupt(BaseException):
    pass


def test_resume_after_interruption_gives_the_same_table(tmp_path: Path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    data = {"toy": ComparisonData(X, y, "classification")}
    kwargs = dict(
        mechanisms=["mcar", "mar"],
        rates=[0.2],
        n_draws=2,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0, 4.0],
        gamma_grid=[0.3],
        random_state=11,
    )
    full = run_comparison(data, ["mean", "zero"], output=tmp_path / "a.csv", **kwargs)
    assert len(full) == 2 * 2 * 2 * 2 * 2  # mech x draw x fold x method x metric

    calls = {"n": 0}
    zero = resolve_method("zero", C_grid=[1.0, 4.0], gamma_grid=[0.3])

    def flaky(task: str, seed: int):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 9:  # the middle of the third "zero" cell
            raise _Interrupt
        return zero.make(task, seed)

    spec = MethodSpec("zero", "pipeline", flaky, zero.grid)
    out = tmp_path / "b.csv"
    with pytest.raises(_Interrupt):
        run_comparison(data, ["mean", spec], output=out, **kwargs)
    partial = out.read_text().splitlines()
    assert 1 < len(partial) < 1 + len(full)
    resumed = run_comparison(data, ["mean", "zero"], output=out, **kwargs)
    np.testing.assert_array_equal(_scores(full).to_numpy(), _scores(resumed).to_numpy())
    # Nothing was computed twice.
    assert len(out.read_text().splitlines()) == 1 + len(full)


def _parallel_kwargs() -> dict:
    rng = np.random.default_rng(8)
    X = rng.normal(size=(48, 3))
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    return dict(
        datasets={"toy": ComparisonData(X, y, "classification")},
        methods=["mean", "knn", "expected_rbf"],
        mechanisms=["mcar"],
        rates=[0.2],
        n_draws=2,
        outer_folds=2,
        inner_folds=2,
        C_grid=[0.5, 4.0],
        gamma_grid=[0.2, 1.0],
        random_state=4,
    )


def test_parallel_cells_give_the_serial_results(tmp_path: Path):
    kwargs = _parallel_kwargs()
    serial = run_comparison(**kwargs, output=tmp_path / "a.csv")
    out = tmp_path / "b.csv"
    parallel = run_comparison(**kwargs, output=out, n_jobs=2)
    np.testing.assert_array_equal(
        _scores(serial).to_numpy(), _scores(parallel).to_numpy()
    )
    # Every row reached the file once, appended by the parent process.
    assert len(out.read_text().splitlines()) == 1 + len(serial)


def test_cells_run_on_a_dask_cluster(tmp_path: Path):
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    kwargs = _parallel_kwargs()
    serial = run_comparison(**kwargs)
    out = tmp_path / "d.csv"
    with (
        distributed.Client(
            processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
        ) as client,
        parallel_config(backend="dask"),
        distributed.get_task_stream(client) as stream,
    ):
        on_dask = run_comparison(**kwargs, output=out, n_jobs=-1)
    np.testing.assert_array_equal(
        _scores(serial).to_numpy(), _scores(on_dask).to_numpy()
    )
    assert len(out.read_text().splitlines()) == 1 + len(serial)
    assert len(stream.data) > 0  # the cells did go through the cluster


def test_draws_run_in_parts_give_the_full_run(tmp_path: Path):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    data = {"toy": ComparisonData(X, y, "classification")}
    kwargs = dict(
        mechanisms=["mcar"],
        rates=[0.25],
        n_draws=3,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0, 4.0],
        gamma_grid=[0.3, 1.0],
        random_state=3,
    )
    full = run_comparison(data, ["mean"], output=tmp_path / "a.csv", **kwargs)
    out = tmp_path / "b.csv"
    first = run_comparison(data, ["mean"], output=out, draws=[2], **kwargs)
    assert sorted(first["draw"].unique()) == [2]
    assert len(first) == len(full) // 3
    parts = run_comparison(data, ["mean"], output=out, draws=range(2), **kwargs)
    np.testing.assert_array_equal(_scores(full).to_numpy(), _scores(parts).to_numpy())
    assert len(out.read_text().splitlines()) == 1 + len(full)


@pytest.mark.parametrize("draws", [[3], [-1], [0.5], [True], ["0"]])
def test_draws_outside_the_configuration_are_refused(draws):
    X = np.random.default_rng(0).normal(size=(20, 2))
    data = {"toy": ComparisonData(X, (X[:, 0] > 0).astype(int), "classification")}
    with pytest.raises(ValueError, match=r"draws must be integers in \[0, n_draws=3\)"):
        run_comparison(data, ["mean"], n_draws=3, draws=draws)


def test_resume_refuses_another_configuration(tmp_path: Path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    data = {"toy": ComparisonData(X, y, "classification")}
    kw = dict(n_draws=1, outer_folds=2, inner_folds=2, C_grid=[1.0], gamma_grid=[1.0])
    run_comparison(data, ["mean"], mechanisms=["mcar"], output=tmp_path / "r.csv", **kw)
    with pytest.raises(ValueError, match="another configuration"):
        run_comparison(
            data, ["mean"], mechanisms=["mar"], output=tmp_path / "r.csv", **kw
        )


def test_single_grid_point_skips_the_inner_search(recording_plugin):
    X, y, _ = _fingerprinted()
    run_comparison(
        {"fp": ComparisonData(X, y, "classification")},
        ["test_recording"],
        mechanisms=["none"],
        n_draws=1,
        outer_folds=2,
        inner_folds=3,
        C_grid=[1.0],
        gamma_grid=[0.1],
    )
    assert len(SEEN) == 2  # one fit per outer fold


def test_regression_scores_r2_and_errors_are_recorded():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(70, 3))
    y = 3.0 * X[:, 0] + 100.0 + 0.1 * rng.normal(size=70)
    res = run_comparison(
        {"lin": ComparisonData(X, y, "regression")},
        ["mean", "socp"],
        mechanisms=["mcar"],
        rates=[0.1],
        n_draws=1,
        outer_folds=2,
        inner_folds=2,
        C_grid=[10.0],
        gamma_grid=[0.1],
    )
    r2 = res[(res.method == "mean") & (res.metric == "r2")].score
    assert (r2 > 0.5).all()  # the target's offset and scale are handled
    socp = res[res.method == "socp"]
    assert socp.score.isna().all()
    assert socp.error.str.contains("classifier").all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mechanisms": ["maybe"]}, "Unknown mechanism"),
        ({"rates": [1.0]}, r"\[0, 1\)"),
        ({"outer_folds": 1}, "outer_folds"),
        ({"methods": []}, "methods is empty"),
        ({"datasets": {}}, "datasets is empty"),
        ({"n_draws": True}, "n_draws must be an int"),
        ({"n_jobs": 0}, "n_jobs must be a nonzero int"),
        ({"n_jobs": 1.5}, "n_jobs must be a nonzero int"),
        ({"n_jobs": "2"}, "n_jobs must be a nonzero int"),
    ],
)
def test_invalid_arguments_are_explained(kwargs, match):
    X = np.zeros((10, 2))
    y = np.arange(10) % 2
    args = {"datasets": {"z": ComparisonData(X, y, "classification")}}
    args["methods"] = ["mean"]
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        run_comparison(**args)


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(ValueError, match="baselines"):
        resolve_method("no_such_method")


def test_a_second_run_on_the_same_file_is_refused(tmp_path: Path):
    fcntl = pytest.importorskip("fcntl")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    out = tmp_path / "r.csv"
    with (tmp_path / "r.csv.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(RuntimeError, match="Another run"):
            run_comparison(
                {"toy": ComparisonData(X, y, "classification")},
                ["mean"],
                mechanisms=["mcar"],
                n_draws=1,
                outer_folds=2,
                inner_folds=2,
                C_grid=[1.0],
                gamma_grid=[1.0],
                output=out,
            )


def test_a_finished_run_leaves_no_lock_file(tmp_path: Path):
    pytest.importorskip("fcntl")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    out = tmp_path / "r.csv"
    run_comparison(
        {"toy": ComparisonData(X, y, "classification")},
        ["mean"],
        mechanisms=["mcar"],
        n_draws=1,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0],
        gamma_grid=[1.0],
        output=out,
    )
    assert out.exists()
    assert not (tmp_path / "r.csv.lock").exists()


def test_shared_density_gives_the_grams_of_separate_fits(rng):
    from missingkernels.experiments._cv import _prepare_kernel

    X = rng.normal(size=(50, 4))
    X[rng.random(X.shape) < 0.25] = np.nan
    spec = resolve_method("genrbf", C_grid=[1.0], gamma_grid=[0.1, 0.7])
    prep = _prepare_kernel(spec, "classification", X[:35], seed=0)
    scaler = StandardScaler().fit(X[:35])
    tr, te = scaler.transform(X[:35]), scaler.transform(X[35:])
    for gamma in (0.1, 0.7):
        K_tr, K_te = prep.gram(X[35:], gamma)
        direct = missingkernels.get_kernel("genrbf", gamma=gamma).fit(tr)
        np.testing.assert_allclose(K_tr, direct(tr), rtol=1e-10)
        np.testing.assert_allclose(K_te, direct(te, tr), rtol=1e-10)


@pytest.mark.parametrize(
    ("name", "gamma"), [("expected_linear", None), ("expected_rbf", 0.3)]
)
def test_kernel_methods_see_standardised_features(rng, name, gamma):
    # Whether a kernel has a width says nothing about the scale of its
    # inputs: expected_linear is standardised like every other method.
    from missingkernels.experiments._cv import _prepare_kernel

    X = rng.normal(size=(50, 3)) * [1.0, 40.0, 0.1] + [0.0, 500.0, -3.0]
    X[rng.random(X.shape) < 0.2] = np.nan
    spec = resolve_method(name, C_grid=[1.0], gamma_grid=[0.3])
    assert spec.scale
    K_tr, K_te = _prepare_kernel(spec, "classification", X[:35], seed=0).gram(
        X[35:], gamma
    )
    scaler = StandardScaler().fit(X[:35])
    tr, te = scaler.transform(X[:35]), scaler.transform(X[35:])
    params = {} if gamma is None else {"gamma": gamma}
    direct = missingkernels.get_kernel(name, **params).fit(tr)
    np.testing.assert_allclose(K_tr, direct(tr), rtol=1e-10)
    np.testing.assert_allclose(K_te, direct(te, tr), rtol=1e-10)


def test_kernels_on_category_codes_are_not_standardised():
    for name in ("belanche_k1", "belanche_k2"):
        assert not resolve_method(name).scale
    # The density declares it: the same kernel on a continuous density is
    # standardised, a continuous kernel on a categorical one is not.
    gaussian = resolve_method("belanche_k1", kernel_params={"density": "gaussian_em"})
    assert gaussian.scale
    codes = resolve_method("expected_rbf", kernel_params={"density": "categorical"})
    assert not codes.scale


FITTED_ROWS: list[int] = []  # rows of every CountingDensity fit


class CountingDensity(GaussianEMDensity):
    def fit(self, X, y=None):
        FITTED_ROWS.append(len(X))
        return super().fit(X, y)


def test_estimator_density_is_fitted_once_per_inner_fold_with_the_same_result():
    pytest.importorskip("cvxpy")
    from sklearn.model_selection import ParameterGrid

    from missingkernels.estimators import SOCPSVC

    rng = np.random.default_rng(4)
    X = rng.normal(size=(64, 4))
    y = (X[:, 0] - 0.7 * X[:, 1] + 0.4 * rng.normal(size=64) > 0).astype(int)
    X[rng.random(X.shape) < 0.25] = np.nan
    C_grid, gamma_grid = [0.5, 4.0], [0.1, 0.6]
    spec = resolve_method(
        "socp",
        C_grid=C_grid,
        gamma_grid=gamma_grid,
        kernel_params={"density": CountingDensity()},
    )
    FITTED_ROWS.clear()
    res = run_comparison(
        {"toy": ComparisonData(X, y, "classification")},
        [spec],
        mechanisms=["none"],
        n_draws=1,
        outer_folds=2,
        inner_folds=2,
        C_grid=C_grid,
        gamma_grid=gamma_grid,
        random_state=5,
    )
    assert (res["error"] == "").all(), res["error"].unique()
    # Per outer fold: one density per inner fold (not one per grid point),
    # then the refit.
    assert len(FITTED_ROWS) == 2 * (2 + 1)

    # Reference: every grid point fitted from scratch (own density each time).
    acc = res[res.metric == "accuracy"].sort_values("fold")
    rate = f"{float(np.isnan(X).mean()):.6g}"
    outer = _splitter("classification", 2, _seed(5, "outer", "toy", "none", rate, 0))
    outer = outer.split(X, y)
    points = list(ParameterGrid({"C": C_grid, "gamma": gamma_grid}))

    def fresh(params):
        model = SOCPSVC(kappa=0.9, density=GaussianEMDensity(), **params)
        return Pipeline([("scale", StandardScaler()), ("model", model)])

    for f, (train, test) in enumerate(outer):
        seed = _seed(5, "fit", "toy", "none", rate, 0, f, "socp")
        inner = _splitter("classification", 2, seed).split(X[train], y[train])
        totals = np.zeros(len(points))
        for tr, va in inner:
            Xtr, ytr = X[train][tr], y[train][tr]
            for i, params in enumerate(points):
                pred = fresh(params).fit(Xtr, ytr).predict(X[train][va])
                totals[i] += np.mean(pred == y[train][va])
        best = points[int(np.argmax(totals))]
        row = acc[acc.fold == f].iloc[0]
        assert json.loads(row.params) == best
        pred = fresh(best).fit(X[train], y[train]).predict(X[test])
        assert row.score == pytest.approx(np.mean(pred == y[test]))


def test_a_renamed_baseline_keeps_the_results_of_its_old_name(rng):
    # "iterative" was "mice": its cells keep that name's seeds (the draws of
    # the imputer, the inner splits), so the committed results stay
    # reproducible under the new name.
    import dataclasses

    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    data = {"toy": ComparisonData(X, y, "classification")}
    spec = resolve_method("iterative", C_grid=[1.0, 4.0], gamma_grid=[0.5])
    kwargs = dict(mechanisms=["mcar"], rates=[0.3], n_draws=1, outer_folds=2)
    kwargs.update(inner_folds=2, C_grid=[1.0, 4.0], gamma_grid=[0.5])
    new = run_comparison(data, [spec], **kwargs)
    old = run_comparison(data, [dataclasses.replace(spec, name="mice")], **kwargs)
    assert set(new["method"]) == {"iterative"}
    np.testing.assert_array_equal(new["score"], old["score"])
    assert list(new["params"]) == list(old["params"])


def _toy(task: str = "classification", y: Any = None) -> dict:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    if y is None:
        y = (X[:, 0] > 0).astype(int) if task == "classification" else X[:, 0]
    return {"toy": ComparisonData(X, np.asarray(y), task)}


_SMALL = dict(n_draws=1, outer_folds=2, inner_folds=2, C_grid=[1.0], gamma_grid=[1.0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        # Issue 19: these returned NaN scores, the error buried in every cell.
        ({"C_grid": []}, r"C_grid is empty.*C_grid=\[1\.0\]"),
        ({"C_grid": [-1]}, r"C_grid must hold positive finite numbers; got \[-1\]"),
        ({"gamma_grid": [0.0, 1.0]}, r"gamma_grid must hold positive"),
        ({"C_grid": [float("nan")]}, "C_grid must hold positive"),
        ({"C_grid": 1.0}, "C_grid must be a list"),
        ({"methods": "mean"}, r"methods must be a list.*\['mean', 'genrbf'\]"),
        ({"mechanisms": "mar"}, r"mechanisms must be a list"),
        ({"rates": 0.3}, r"rates must be a list"),
        ({"rates": []}, "rates is empty"),
        ({"rates": [0.3, 0.3]}, "rates must be distinct"),
        ({"mechanisms": []}, "mechanisms is empty"),
        ({"random_state": None}, "random_state must be an int"),
        ({"selection_metric": "r2"}, "does not fit the classification task"),
    ],
)
def test_grids_and_arguments_are_checked_before_any_cell(kwargs, match):
    args: dict[str, Any] = {"methods": ["mean"], **_SMALL, **kwargs}
    with pytest.raises(ValueError, match=match):
        run_comparison(_toy(), **args)


def test_a_methodspec_with_an_empty_grid_is_refused():
    spec = resolve_method("mean", C_grid=[], gamma_grid=[1.0])
    with pytest.raises(ValueError, match=r"grid of method 'mean': C is empty"):
        run_comparison(_toy(), [spec], **_SMALL)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (
            _toy("regression", y=np.where(np.arange(30) % 2, "yes", "no")),
            r"datasets\['toy'\]\.y must be numeric for task='regression', but it "
            r"holds labels such as '(no|yes)'; use task='classification'",
        ),
        (
            _toy(y=np.ones(30, dtype=int)),
            r"datasets\['toy'\]\.y has a single class \(1\)",
        ),
        (
            _toy(y=np.r_[np.nan, np.arange(29) % 2]),
            r"datasets\['toy'\]\.y has 1 missing labels",
        ),
        (
            {
                "toy": ComparisonData(
                    np.full((30, 2), np.nan), np.arange(30) % 2, "classification"
                )
            },
            r"has missing values, but the simulated mechanisms need complete data",
        ),
        (
            {
                "toy": ComparisonData(
                    np.zeros((30, 2)), np.arange(29) % 2, "classification"
                )
            },
            r"y must be 1-d with one value per row of X",
        ),
        (
            {
                "toy": ComparisonData(
                    np.where(np.arange(60).reshape(30, 2) % 17 == 7, -np.inf, 1.0),
                    np.arange(30) % 2,
                    "classification",
                )
            },
            # cells 7, 24, 41 and 58 (row-major): the first is row 3, column 1
            r"datasets\['toy'\]\.X holds 4 infinite value\(s\), the first in "
            r"column 1 \(0-based\), row 3 \(0-based\)\. NaN marks",
        ),
        (
            {
                "toy": ComparisonData(
                    np.where(np.arange(60).reshape(30, 2) == 45, np.inf, 1.0),
                    np.arange(30) % 2,
                    "classification",
                    feature_names=["a", "b"],
                )
            },
            r"the first in column 'b', row 22 \(0-based\)",
        ),
    ],
)
def test_data_that_cannot_run_is_refused_naming_the_dataset(data, match):
    with pytest.raises(ValueError, match=match):
        run_comparison(data, ["mean"], mechanisms=["mcar"], **_SMALL)


def test_a_refused_first_run_does_not_pin_the_configuration(tmp_path: Path):
    # MNAR needs 2 features: found while planning, after the configuration
    # file was written; a corrected call on the same file must then run.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 1))
    data = {"toy": ComparisonData(X, (X[:, 0] > 0).astype(int), "classification")}
    out = tmp_path / "r.csv"
    with pytest.raises(ValueError, match="at least 2 features"):
        run_comparison(data, ["mean"], mechanisms=["mnar"], output=out, **_SMALL)
    res = run_comparison(data, ["mean"], mechanisms=["mcar"], output=out, **_SMALL)
    assert (res["error"] == "").all()


def test_a_concurrent_run_is_refused_before_it_reads_the_results(tmp_path: Path):
    # A run appending to the file can leave a partial last line at any moment;
    # a second run used to "repair" it (truncate) before noticing the lock.
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "r.csv"
    run_comparison(_toy(), ["mean"], mechanisms=["mcar"], output=out, **_SMALL)
    with out.open("a") as fh:
        fh.write("toy,classification,mcar,0.3,0,")  # the first run, mid-row
    before = out.read_bytes()
    with (tmp_path / "r.csv.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(RuntimeError, match="Another run is appending"):
            run_comparison(
                _toy(), ["mean", "zero"], mechanisms=["mcar"], output=out, **_SMALL
            )
    assert out.read_bytes() == before


class NoisyKernel(RecordingKernel):
    """Warns at every fit: a number that changes, and a convergence note."""

    def fit(self, X: np.ndarray) -> NoisyKernel:
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(f"noisy fit on {len(X)} rows", UserWarning, stacklevel=2)
        warnings.warn("noisy did not converge", ConvergenceWarning, stacklevel=2)
        return super().fit(X)


class _NoisyPlugin:
    @hookimpl
    def missingkernels_register_kernels(self):  # type: ignore[no-untyped-def]
        return {"test_noisy": lambda **params: NoisyKernel(**params)}


def test_each_distinct_warning_is_warned_once_with_its_count():
    # Issue 19: a full run printed ~600 identical warnings into the progress
    # bar, while convergence warnings were silenced.
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    name = missingkernels.register_plugin(_NoisyPlugin(), name="test-noisy")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run_comparison(
                _toy(),
                ["test_noisy", "mean"],
                mechanisms=["mcar"],
                **{**_SMALL, "C_grid": [1.0, 2.0]},
            )
    finally:
        missingkernels.unregister_plugin(name)
    noisy = [str(w.message) for w in caught if "noisy" in str(w.message)]
    # 2 outer folds x (2 inner fits + 1 refit) = 6 fits, in 2 of 4 cells.
    assert len(noisy) == 2, noisy
    user = next(w for w in caught if w.category is UserWarning)
    assert str(user.message).startswith("noisy fit on ")
    assert "(raised 6 times in 2 of 4 cells; the numbers are those of the first)" in (
        str(user.message)
    )
    conv = next(w for w in caught if w.category is ConvergenceWarning)
    assert (
        str(conv.message) == "noisy did not converge (raised 6 times in 2 of 4 cells)"
    )


def test_warnings_of_worker_processes_are_summarised():
    import warnings

    from missingkernels.densities import GaussianEMDensity, SingularCovarianceWarning
    from missingkernels.experiments import resolve_method

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    X = np.c_[X, X[:, 0]]  # collinear: ML EM adds a ridge, with a warning
    data = {"toy": ComparisonData(X, (X[:, 0] > 0).astype(int), "classification")}
    ml = resolve_method(
        "genrbf",
        C_grid=[1.0],
        gamma_grid=[0.5, 1.0],
        kernel_params={"density": GaussianEMDensity(prior_rows=0)},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_comparison(
            data,
            [ml],
            mechanisms=["mcar"],
            rates=[0.2],
            n_jobs=2,
            **{**_SMALL, "gamma_grid": [0.5, 1.0]},
        )
    singular = [w for w in caught if w.category is SingularCovarianceWarning]
    assert len(singular) == 1
    assert "set prior_rows > 0" in str(singular[0].message)
    assert "of 2 cells" in str(singular[0].message)


def test_class_weight_reaches_the_svms_and_estimators(monkeypatch, tmp_path):
    # Issue 26: --class-weight of compare; kernel and pipeline methods share
    # the runner's precomputed SVC, "hgb" takes the parameter itself.
    import missingkernels.experiments._cv as cv

    weights: list[Any] = []

    class Recording(SVC):
        def fit(self, X, y, sample_weight=None):
            weights.append(self.class_weight)
            return super().fit(X, y, sample_weight)

    monkeypatch.setattr(cv, "SVC", Recording)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0.5).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    data = {"d": ComparisonData(X, y, "classification")}
    kwargs = dict(
        mechanisms=["none"], n_draws=1, outer_folds=2, inner_folds=2,
        C_grid=[1.0], gamma_grid=[0.5],
    )  # fmt: skip
    out = tmp_path / "r.csv"
    res = run_comparison(
        data, ["mean", "genrbf"], class_weight="balanced", output=out, **kwargs
    )
    assert (res["error"] == "").all()
    assert weights and set(weights) == {"balanced"}
    assert json.loads(Path(f"{out}.config.json").read_text())["class_weight"] == (
        "balanced"
    )
    from missingkernels.experiments._cv import _make_estimator, accepts_class_weight

    spec = resolve_method("hgb")
    model = _make_estimator(spec, "classification", 0, X, {}, "balanced")
    assert model.class_weight == "balanced"  # hgb sees unscaled features
    assert accepts_class_weight(spec, "classification")
    assert not accepts_class_weight(resolve_method("geom"), "classification")
    assert not accepts_class_weight(resolve_method("mean"), "regression")
    with pytest.raises(ValueError, match="class_weight must be 'balanced'"):
        run_comparison(data, ["mean"], class_weight="heavy", **kwargs)


def test_binary_only_methods_run_one_vs_rest_on_multiclass_data():
    # Issue 26: "geom" and "socp" are binary-only; on three classes every cell
    # failed ("Only binary classification is supported").
    from sklearn.multiclass import OneVsRestClassifier

    from missingkernels.experiments._cv import _density_to_share, _make_estimator

    assert resolve_method("geom").multiclass == "ovr"
    assert resolve_method("socp").multiclass == "ovr"
    assert resolve_method("mean").multiclass == "native"
    assert resolve_method("genrbf").multiclass == "native"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.repeat([0, 1, 2], 20)
    X[:, 0] += 2.0 * y
    X[rng.random(X.shape) < 0.1] = np.nan
    res = run_comparison(
        {"three": ComparisonData(X, y, "classification")},
        ["geom", "socp"],
        mechanisms=["none"], n_draws=1, outer_folds=2, inner_folds=2,
        C_grid=[1.0], gamma_grid=[0.5],
    )  # fmt: skip
    assert (res["error"] == "").all(), res["error"].unique()
    acc = res[res["metric"] == "accuracy"].groupby("method")["score"].mean()
    assert (acc > 0.5).all(), acc  # chance: 1/3
    # The k binary SOCPs fitted one density: later grid points reuse it.
    spec = resolve_method("socp")
    model = _make_estimator(spec, "classification", 0, X, {}, ovr=True)
    assert isinstance(model[-1], OneVsRestClassifier)
    model.fit(X, y)
    shared = _density_to_share(model, X)
    inner = model[-1].estimators_[0].density_
    assert shared["density"].state.density is inner


# -- missingness that differs between training and prediction; small n -------


def _plan_of(data, **kwargs):  # type: ignore[no-untyped-def]
    """The runner's jobs for ``kwargs`` (cell, X, train, test of each)."""
    from missingkernels.experiments._runner import _plan

    defaults = dict(
        mechanisms=["mcar"],
        rates=[0.4],
        run_draws=[0, 1],
        outer_folds=3,
        inner_folds=2,
        selection_metric=None,
        random_state=5,
        done=set(),
    )
    defaults.update(kwargs)
    specs = [
        resolve_method(m, C_grid=[1.0], gamma_grid=[0.5]) for m in ("mean", "zero")
    ]
    jobs = _plan({"toy": data}, specs, **defaults)
    return [(job[0], job[2], job[5], job[6]) for job in jobs]


def _shift_toy(n: int = 90, seed: int = 3) -> ComparisonData:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    return ComparisonData(X, y, "classification")


@pytest.mark.parametrize("mechanism", ["mcar", "mar", "self_masking"])
def test_train_rate_takes_training_rows_from_their_own_draw(mechanism):
    from missingkernels.experiments import simulate_missing

    data = _shift_toy()
    same = _plan_of(data, mechanisms=[mechanism])
    for train_rate in (0.0, 0.1):
        shifted = _plan_of(data, mechanisms=[mechanism], train_rate=train_rate)
        assert len(shifted) == len(same)
        for (cell, X, train, test), (_, X0, train0, test0) in zip(
            shifted, same, strict=True
        ):
            np.testing.assert_array_equal(train, train0)
            np.testing.assert_array_equal(test, test0)
            # Test rows: exactly those of the run without train_rate.
            np.testing.assert_array_equal(X[test], X0[test])
            assert np.isnan(X[test]).any()
            # Training rows: the draw at train_rate, written independently.
            if train_rate == 0.0:
                expected = data.X
            else:
                seed = _seed(5, "missing", "toy", mechanism, "0.1", cell.draw)
                expected = simulate_missing(
                    data.X, mechanism, train_rate, random_state=seed
                )
            np.testing.assert_array_equal(X[train], expected[train])


def test_train_rate_zero_fits_every_model_on_complete_rows(recording_plugin, tmp_path):
    data = _shift_toy()
    res = run_comparison(
        {"toy": data},
        ["test_recording", "test_recording_baseline"],
        mechanisms=["mar"],
        rates=[0.5],
        n_draws=1,
        outer_folds=3,
        inner_folds=2,
        C_grid=[1.0, 2.0],
        gamma_grid=[0.5],
        train_rate=0.0,
        output=tmp_path / "r.csv",
    )
    assert SEEN and not any(mask.any() for mask in SEEN)
    assert (res["error"] == "").all()
    config = json.loads((tmp_path / "r.csv.config.json").read_text())
    assert config["train_rate"] == "0"
    # Another train_rate is another configuration: not resumed into this file.
    with pytest.raises(ValueError, match="another configuration"):
        run_comparison(
            {"toy": data},
            ["mean"],
            mechanisms=["mar"],
            rates=[0.5],
            n_draws=1,
            outer_folds=3,
            inner_folds=2,
            C_grid=[1.0],
            gamma_grid=[0.5],
            train_rate=0.1,
            output=tmp_path / "r.csv",
        )


def test_train_size_subsamples_training_rows_stratified_and_shared():
    data = _shift_toy(n=150)
    jobs = _plan_of(data, train_size=20)
    full = _plan_of(data)
    by_location: dict[tuple, np.ndarray] = {}
    for (cell, _, train, test), (_, _, train0, test0) in zip(jobs, full, strict=True):
        assert train.size == 20
        assert set(train) <= set(train0)
        np.testing.assert_array_equal(test, test0)  # the test rows stay whole
        # Stratified: each class within one row of its share.
        share = np.mean(data.y[train0])
        assert abs(np.sum(data.y[train]) - 20 * share) <= 1.0
        where = (cell.draw, cell.fold)
        if where in by_location:  # every method of a cell fits on the same rows
            np.testing.assert_array_equal(train, by_location[where])
        by_location[where] = train
    # Different folds and draws draw different subsamples.
    assert len({tuple(t) for t in by_location.values()}) == len(by_location)


def test_train_size_reaches_the_results():
    res = run_comparison(
        {"toy": _shift_toy(n=150)},
        ["mean"],
        mechanisms=["mcar"],
        rates=[0.6],
        n_draws=1,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0],
        gamma_grid=[0.5],
        train_size=30,
    )
    assert (res["n_train"] == 30).all()
    assert (res["n_test"] == 75).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(train_rate=1.0), "train_rate must be a missing rate"),
        (dict(train_rate="0.1"), "train_rate must be a missing rate"),
        (dict(train_rate=0.1, mechanisms=["mnar"]), "'mnar' hides other columns"),
        (dict(train_size=3), "train_size must be an int >= 2 \\* inner_folds"),
        (dict(train_size=2.5), "train_size must be an int"),
    ],
)
def test_train_options_are_checked_before_any_cell(kwargs, match):
    args = dict(
        mechanisms=["mcar"],
        rates=[0.3],
        n_draws=1,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0],
        gamma_grid=[0.5],
    )
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        run_comparison({"toy": _shift_toy()}, ["mean"], **args)


def test_train_size_too_small_for_the_classes_names_the_dataset():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    y = np.repeat([0, 1, 2], 30)
    with pytest.raises(ValueError, match="too small for datasets\\['three'\\]"):
        run_comparison(
            {"three": ComparisonData(X, y, "classification")},
            ["mean"],
            mechanisms=["mcar"],
            rates=[0.3],
            n_draws=1,
            outer_folds=2,
            inner_folds=3,
            C_grid=[1.0],
            gamma_grid=[0.5],
            train_size=7,
        )
