"""The vignettes' shared report writer (vignettes/_common.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from missingkernels.experiments import ComparisonData

VIGNETTES = Path(__file__).resolve().parent.parent / "vignettes"


@pytest.fixture
def common(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(VIGNETTES))
    sys.modules.pop("_common", None)
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    yield _common
    sys.modules.pop("_common", None)


def _config(quick):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    X[rng.random(X.shape) < 0.15] = np.nan
    return dict(
        datasets={"toy": ComparisonData(X, y, "classification")},
        metric="accuracy",
        methods=["zero", "mean", "genrbf"],
        mechanisms=["none"],
        n_draws=2,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0],
        gamma_grid=[0.5],
    )


def test_report_counts_cells_and_their_time_once(common, tmp_path):
    assert common.main("toy", "Toy", _config, argv=["--quick"]) == 0
    out = tmp_path / "toy" / "quick"
    results = pd.read_csv(out / "results.csv")
    # Classification writes two metric rows per cell, each with the cell's time.
    assert set(results["metric"]) == {"accuracy", "balanced_accuracy"}
    cells = results[results["metric"] == "accuracy"]
    assert len(cells) == 3 * 2 * 2
    assert "Status: **complete**" in (out / "README.md").read_text()

    # Each cell took 30 s (say): the report sums 12 cells, not 24 rows.
    results["cell_seconds"] = 30.0
    results.to_csv(out / "results.csv", index=False)
    assert common.main("toy", "Toy", _config, argv=["--quick", "--report-only"]) == 0
    report = (out / "README.md").read_text()
    assert "Compute time: 6.0 min summed over cells" in report
    assert "Status: **complete**" in report


def _runs(out):
    return pd.read_csv(out / "runs.csv", keep_default_na=False)


def test_report_keeps_the_wall_time_of_each_run(common, tmp_path, monkeypatch):
    import os
    import signal

    out = tmp_path / "toy" / "quick"
    real = common.run_comparison

    def killed_after_one_method(datasets, methods, **kwargs):
        real(datasets, methods[:1], **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill` or a scheduler would

    monkeypatch.setattr(common, "run_comparison", killed_after_one_method)
    with pytest.raises(SystemExit) as exc:
        common.main("toy", "Toy", _config, argv=["--quick"])
    assert exc.value.code == 128 + signal.SIGTERM
    # The handler is removed again once main returns.
    assert signal.getsignal(signal.SIGTERM) is not common._exit_on_sigterm
    runs = _runs(out)
    assert runs["status"].tolist() == ["interrupted"]
    assert runs["cells_added"].tolist() == [2 * 2]  # one method, 2 draws x 2 folds

    monkeypatch.setattr(common, "run_comparison", real)
    assert common.main("toy", "Toy", _config, argv=["--quick", "--n-jobs", "2"]) == 0
    runs = _runs(out)
    assert runs["status"].tolist() == ["interrupted", "finished"]
    assert runs["cells_added"].tolist() == [4, 8]
    assert runs["n_jobs"].tolist() == [1, 2]
    assert (runs["wall_minutes"] >= 0).all()
    total = runs["wall_minutes"].sum()

    # Rewriting the report records no run and keeps the last run's line.
    assert common.main("toy", "Toy", _config, argv=["--quick", "--report-only"]) == 0
    assert len(_runs(out)) == 2
    report = (out / "README.md").read_text()
    assert f"Wall time: 2 recorded run(s), {total:.1f} min in all" in report
    assert "--n-jobs 2`, finished at" in report
    assert "added 8 cells." in report
    assert "before runs.csv existed" not in report

    # Results from before the run log: the report says how many cells it
    # cannot account for.
    (out / "runs.csv").unlink()
    assert common.main("toy", "Toy", _config, argv=["--quick", "--report-only"]) == 0
    assert "no run recorded" in (out / "README.md").read_text()
    runs.iloc[:1].to_csv(out / "runs.csv", index=False)
    assert common.main("toy", "Toy", _config, argv=["--quick", "--report-only"]) == 0
    assert (
        "The other 8 cells come from runs made before runs.csv existed."
        in (out / "README.md").read_text()
    )


def test_partial_report_estimates_the_compute_left(common, tmp_path):
    assert common.main("toy", "Toy", _config, argv=["--quick"]) == 0
    out = tmp_path / "toy" / "quick"
    results = pd.read_csv(out / "results.csv")
    # Half an hour per zero cell, a minute per mean cell; zero loses its
    # draw-1 cells (2 folds), mean one cell, genrbf all of them.
    results["cell_seconds"] = np.where(results["method"] == "zero", 1800.0, 60.0)
    keep = ~((results["method"] == "zero") & (results["draw"] == 1))
    keep &= ~((results["method"] == "mean") & (results["draw"] == 1))
    keep &= results["method"] != "genrbf"
    mean_d1 = results[(results["method"] == "mean") & (results["draw"] == 1)]
    kept = pd.concat([results[keep], mean_d1[mean_d1["fold"] == 0]])
    kept.to_csv(out / "results.csv", index=False)
    assert common.main("toy", "Toy", _config, argv=["--quick", "--report-only"]) == 0
    report = (out / "README.md").read_text()
    assert "PARTIAL: 5 of 12 cells finished" in report
    # zero: 2 cells x 0.5 h; mean: 1 cell x 60 s.
    assert "Estimated compute left: 1.0 core-hours (zero 1.0 h, mean 0.0 h;" in report
    assert "no estimate where a method has no finished cell: genrbf on toy." in report


@pytest.fixture
def pay_off(monkeypatch):
    """Vignette 10's module (its file name starts with a digit)."""
    import importlib.util

    monkeypatch.syspath_prepend(str(VIGNETTES))
    path = VIGNETTES / "10_where_expected_kernels_pay_off.py"
    spec = importlib.util.spec_from_file_location("_pay_off", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cells(rng, datasets, offsets):
    """Result rows: every (dataset, draw, fold) scores each method at
    0.7 + its offset + a shared block effect + noise."""
    rows = []
    for dataset in datasets:
        for draw in range(4):
            block = rng.normal(scale=0.05)
            for fold in range(2):
                for method, offset in offsets.items():
                    score = 0.7 + offset + block + rng.normal(scale=0.002)
                    rows.append(
                        dict(
                            dataset=dataset,
                            task="classification",
                            mechanism="mar",
                            rate=0.5,
                            draw=draw,
                            fold=fold,
                            method=method,
                            metric="accuracy",
                            score=score,
                            error="",
                        )
                    )
    return pd.DataFrame(rows)


def test_pay_off_verdict_tests_the_best_kernel_against_the_best_rival(pay_off):
    from scipy import stats

    rng = np.random.default_rng(0)
    offsets = {"genrbf": 0.03, "expected_rbf": 0.0, "mean": 0.01, "hgb": -0.02}
    ahead = _cells(rng, ["d1", "d2", "d3"], offsets)
    tied = _cells(rng, ["d1", "d2", "d3"], {**offsets, "genrbf": 0.01})
    cols = {"ahead": ahead, "tied": tied}
    _, mean, scores = pay_off._column_table(cols, "toy")
    short, long = pay_off._verdict(mean, scores, pay_off.OURS)
    # Reference: scipy's Wilcoxon on the per-block means of genrbf and mean,
    # Holm over the two columns by hand.
    p = []
    for frame in (ahead, tied):
        block = frame.groupby(["dataset", "draw", "method"])["score"].mean()
        wide = block.unstack("method")
        p.append(stats.wilcoxon(wide["genrbf"], wide["mean"]).pvalue)
    holm = sorted(p)
    holm = [min(1.0, 2 * holm[0]), min(1.0, max(2 * holm[0], holm[1]))]
    assert holm[0] <= 0.05  # the 12 blocks of the "ahead" column all agree
    assert "ahead of the best other method in 1 of 2 columns" in short
    assert "significantly in 1 (ahead)" in short
    assert "significantly behind in 0" in short
    assert f"Holm p {holm[0]:.2g} over 12 blocks" in long
    # Per dataset: genrbf's mean minus mean's, by hand.
    lines, summary = pay_off._dataset_table(cols, pay_off.OURS)
    d1 = ahead[ahead["dataset"] == "d1"].groupby("method")["score"].mean()
    row = next(line for line in lines if line.startswith("| d1 |"))
    assert row.split(" | ")[1] == f"{d1['genrbf'] - d1['mean']:+.3f} (mean)"
    assert summary.startswith("by dataset, ahead in ")


@pytest.fixture
def sweeps(monkeypatch):
    monkeypatch.syspath_prepend(str(VIGNETTES))
    sys.modules.pop("_sweeps", None)
    import _sweeps

    yield _sweeps
    sys.modules.pop("_sweeps", None)


def _block_scores(rng, offsets, rates=(0.1, 0.3, 0.5, 0.7)):
    """Blocks (dataset, mechanism, rate) x methods: 0.7 + offset + a shared
    block effect + noise."""
    index = pd.MultiIndex.from_product(
        [["d1", "d2", "d3", "d4"], ["mar"], list(rates)],
        names=["dataset", "mechanism", "rate"],
    )
    block = rng.normal(scale=0.05, size=len(index))
    return pd.DataFrame(
        {
            m: 0.7 + off + block + rng.normal(scale=0.002, size=len(index))
            for m, off in offsets.items()
        },
        index=index,
    )


def test_claim_parts_test_what_they_say(sweeps):
    from scipy import stats

    rng = np.random.default_rng(1)
    scores = _block_scores(rng, {"genrbf": 0.03, "mean": 0.0, "knn": 0.0301})
    ranks = scores.rank(axis=1, ascending=False)
    every = np.ones(len(scores), dtype=bool)
    # Reference: scipy's Wilcoxon per pair, Holm over the three pairs by hand.
    pairs = [("genrbf", "mean"), ("genrbf", "knn"), ("mean", "knn")]
    p = np.array([stats.wilcoxon(scores[a], scores[b]).pvalue for a, b in pairs])
    order = np.argsort(p)
    holm = np.empty(3)
    holm[order] = np.minimum(1, np.maximum.accumulate(p[order] * [3, 2, 1]))
    assert holm[0] <= 0.05 < holm[1]  # ahead of mean; level with knn
    text, holds = sweeps.significantly_ahead_part(scores, "genrbf", every, "overall")
    assert not holds and text.endswith(": not of knn")
    assert "16 blocks" in text
    _, holds = sweeps.significantly_ahead_part(
        scores, "genrbf", every, "overall", of=["mean"]
    )
    assert holds
    text, holds = sweeps.significantly_ahead_part(
        scores, "genrbf", every, "overall", of=["knn"], expected=False
    )
    assert holds and "not significantly ahead of knn" in text
    _, holds = sweeps.significantly_ahead_part(
        scores, "genrbf", every, "overall", of=["mean"], expected=False
    )
    assert not holds

    low = sweeps.rates_between(scores, 0.0, 0.35)
    assert low.sum() == 8  # 10% and 30% of four datasets
    mean_rank = ranks[low].mean()
    text, holds = sweeps.ranks_ahead_part(ranks, "mean", "genrbf", low, "low")
    assert holds == (mean_rank["mean"] < mean_rank["genrbf"]) and not holds
    assert f"mean {mean_rank['mean']:.2f}" in text
    text, holds = sweeps.best_rank_part(ranks, "genrbf", every, "overall")
    best = ranks.mean().idxmin()
    assert holds == (best == "genrbf")
    a, b = ranks[low]["knn"].mean(), ranks[~low]["knn"].mean()
    text, holds = sweeps.rank_worsens_part(ranks, "knn", low, ~low, "low to high")
    assert holds == (b > a) and text.endswith(f"{a:.2f} to {b:.2f}")


def test_claim_verdict_counts_the_parts_that_hold(sweeps):
    lineup = ["genrbf", "mean"]
    assert (
        "**Beside ours: reproduced** (2 of 2"
        in sweeps.claim_verdict([("a", True), ("b", True)], lineup)[0]
    )
    assert (
        "**Beside ours: partly reproduced** (1 of 2"
        in sweeps.claim_verdict([("a", True), ("b", False)], lineup)[0]
    )
    lines = sweeps.claim_verdict([("a", False), ("b", False)], lineup)
    assert "**Beside ours: not reproduced** (0 of 2" in lines[0]
    assert lines[2:] == ["- does not hold: a.", "- does not hold: b."]


def _long_results(rng, offsets, mechanisms=("mar", "mcar"), rates=(0.1, 0.3, 0.5, 0.7)):
    """Runner-format results: 5 datasets x mechanisms x rates x 2 folds x
    methods, accuracy 0.7 + offset(rate) + a shared block effect + noise."""
    rows = []
    for d in range(5):
        for mech in mechanisms:
            for rate in rates:
                block = rng.normal(scale=0.05)
                for fold in range(2):
                    for method, off in offsets.items():
                        rows.append(
                            dict(
                                dataset=f"d{d}",
                                task="classification",
                                mechanism=mech,
                                rate=rate,
                                draw=0,
                                fold=fold,
                                method=method,
                                metric="accuracy",
                                score=0.7 + off(rate) + block + rng.normal(scale=0.004),
                                error="",
                            )
                        )
    return pd.DataFrame(rows)


def test_kernel_or_density_section_against_scipy_and_holm_by_hand(sweeps):
    from scipy import stats

    rng = np.random.default_rng(7)
    results = _long_results(
        rng,
        {
            "genrbf": lambda rate: 0.02 if rate > 0.55 else 0.0,
            "em": lambda rate: 0.0,
            "mean": lambda rate: -0.01,
        },
    )
    blocks = ("dataset", "mechanism", "rate")
    rows = sweeps.ablation_rows(results, "accuracy", "genrbf", "em", blocks)
    wide = results.groupby([*blocks, "method"])["score"].mean().unstack("method")
    d = wide["genrbf"] - wide["em"]
    assert rows[0]["blocks"] == 40 and rows[0]["band"] == "all rates"
    np.testing.assert_allclose(rows[0]["difference"], 100 * d.mean())
    assert rows[0]["wins"] == int((d > 0).sum())
    np.testing.assert_allclose(
        rows[0]["pvalue"], stats.wilcoxon(wide["genrbf"], wide["em"]).pvalue
    )
    # Bands: MAR and MCAR x (10-30%, 40-50%, 60%+) -> 6 bands, Holm over them.
    bands = rows[1:]
    assert [(r["mechanism"], r["band"]) for r in bands] == [
        (m, b) for m in ("MAR", "MCAR") for b in ("10-30%", "40-50%", "60%+")
    ]
    rate = wide.index.get_level_values("rate")
    mech = wide.index.get_level_values("mechanism")
    p = []
    for r in bands:
        lo, hi = {"10-30%": (0, 0.35), "40-50%": (0.35, 0.55), "60%+": (0.55, 1)}[
            r["band"]
        ]
        sel = (mech == r["mechanism"].lower()) & (rate > lo) & (rate <= hi)
        assert r["blocks"] == sel.sum()
        np.testing.assert_allclose(r["difference"], 100 * d[sel].mean())
        p.append(stats.wilcoxon(wide["genrbf"][sel], wide["em"][sel]).pvalue)
    p = np.array(p)
    order = np.argsort(p)
    holm = np.empty_like(p)
    holm[order] = np.minimum(1, np.maximum.accumulate(p[order] * np.arange(6, 0, -1)))
    np.testing.assert_allclose([r["pvalue_holm"] for r in bands], holm)
    # The 60%+ bands (+2 points on all 5 blocks) are the ones that count.
    assert [r["band"] for r in bands if r["difference"] > 1.0] == ["60%+"] * 2
    lines = sweeps.ablation_table(results, "accuracy", "genrbf", "em", blocks, "x")
    assert lines[0] == "## The kernel or the density?"
    assert sum(line.startswith("| MAR |") for line in lines) == 3
    sentence = sweeps.ablation_sentence(results, "accuracy", "genrbf", "em", blocks)
    assert f"{100 * d.mean():+.2f} points of accuracy over 40 blocks" in sentence
    # Without the control: nothing to say, and the section says why.
    no_em = results[results["method"] != "em"]
    assert sweeps.ablation_rows(no_em, "accuracy", "genrbf", "em", blocks) == []
    assert sweeps.ablation_sentence(no_em, "accuracy", "genrbf", "em", blocks) == ""
    assert (
        "No results"
        in sweeps.ablation_table(no_em, "accuracy", "genrbf", "em", blocks, "x")[-1]
    )
