"""Friedman/Nemenyi against the formulas of Demšar (2006); tables and plots."""

from __future__ import annotations

import numpy as np
import pytest

from missingkernels.experiments import (
    block_scores,
    format_table,
    friedman_nemenyi,
    plot_critical_difference,
    plot_rate_curves,
    summary_table,
)

pd = pytest.importorskip("pandas")
pytest.importorskip("scikit_posthocs")
stats = pytest.importorskip("scipy.stats")


def _scores(rng: np.random.Generator, n: int = 12, k: int = 5):
    base = rng.normal(size=(n, 1))
    effect = np.linspace(0.0, 0.6, k)
    values = 0.7 + 0.05 * base + 0.1 * effect + 0.04 * rng.normal(size=(n, k))
    return pd.DataFrame(values, columns=[f"m{j}" for j in range(k)])


def test_friedman_and_nemenyi_match_demsar_formulas(rng):
    scores = _scores(rng)
    res = friedman_nemenyi(scores)
    n, k = scores.shape
    # Ranks written out: 1 for the best (highest) score of each block.
    ranks = np.empty((n, k))
    for i, row in enumerate(scores.to_numpy()):
        order = np.argsort(-row)
        ranks[i, order] = np.arange(1, k + 1)  # no ties in continuous data
    R = ranks.mean(axis=0)
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(R**2) - k * (k + 1) ** 2 / 4)
    assert res.statistic == pytest.approx(chi2, rel=1e-12)
    assert res.pvalue == pytest.approx(stats.chi2.sf(chi2, k - 1), rel=1e-10)
    np.testing.assert_allclose(res.mean_ranks[scores.columns].to_numpy(), R)
    # Nemenyi: |R_i - R_j| / sqrt(k(k+1)/(6n)) * sqrt(2) ~ studentized range(k, inf).
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            q = abs(R[a] - R[b]) / se * np.sqrt(2.0)
            expected = stats.studentized_range.sf(q, k, np.inf)
            got = res.nemenyi_pvalues.iloc[a, b]
            assert got == pytest.approx(expected, rel=1e-3, abs=1e-4)
    # Demšar's table: q_0.05 = 2.728 for k = 5.
    assert res.critical_difference == pytest.approx(2.728 * se, rel=1e-3)


def test_friedman_matches_scipy_with_ties():
    scores = pd.DataFrame(
        {
            "a": [0.9, 0.8, 0.8, 0.7],
            "b": [0.9, 0.7, 0.8, 0.6],
            "c": [0.7, 0.7, 0.6, 0.6],
        }
    )
    res = friedman_nemenyi(scores)
    expected = stats.friedmanchisquare(scores.a, scores.b, scores.c)
    assert res.statistic == pytest.approx(expected.statistic)
    assert res.mean_ranks["a"] == pytest.approx((1.5 + 1 + 1.5 + 1) / 4)


def test_friedman_rejects_too_few_methods():
    with pytest.raises(ValueError, match="at least 3 methods"):
        friedman_nemenyi(pd.DataFrame({"a": [1.0, 2.0], "b": [1.0, 3.0]}))


def _long(rng):
    rows = []
    for d in ("d1", "d2"):
        for rate in (0.1, 0.3):
            for draw in range(3):
                for fold in range(2):
                    for j, m in enumerate(("m0", "m1", "m2")):
                        rows.append(
                            dict(
                                dataset=d,
                                mechanism="mcar",
                                rate=rate,
                                draw=draw,
                                fold=fold,
                                method=m,
                                metric="accuracy",
                                score=0.6 + 0.1 * j - rate + 0.01 * rng.normal(),
                            )
                        )
    return pd.DataFrame(rows)


def test_summary_table_is_mean_and_std_over_draws(rng):
    res = _long(rng)
    table = summary_table(res)
    sub = res[(res.dataset == "d1") & (res.rate == 0.3) & (res.method == "m2")]
    per_draw = sub.groupby("draw").score.mean()
    row = table.loc[("d1", "mcar", 0.3, "m2")]
    assert row["mean"] == pytest.approx(per_draw.mean())
    assert row["std"] == pytest.approx(per_draw.std(ddof=1))
    assert row["n_draws"] == 3
    md = format_table(res)
    assert md.splitlines()[0].startswith("| method |")
    assert len(md.splitlines()) == 2 + 3
    blocks = block_scores(res)
    assert blocks.shape == (4, 3)


def test_table_columns_name_small_own_rates(rng):
    res = _long(rng)
    res.loc[res.rate == 0.1, "rate"] = 0.0015  # a data set's own 0.15% missing
    header = format_table(res).splitlines()[0]
    assert "d1 mcar 0.15%" in header and "d2 mcar 30%" in header
    assert " 0%" not in header
    res.loc[res.rate == 0.0015, "rate"] = 0.05
    columns = format_table(res).splitlines()[0].split(" | ")[1:]
    # Numeric order: 5% before 30% (as strings "30%" < "5%").
    assert columns.index("d1 mcar 5%") < columns.index("d1 mcar 30%")


def test_table_shows_other_metrics_beside(rng):
    res = _long(rng)
    other = res.assign(metric="balanced_accuracy", score=res["score"] - 0.2)
    both = pd.concat([res, other], ignore_index=True)
    lines = format_table(both, "accuracy", beside=["balanced_accuracy"]).splitlines()
    columns = lines[0].split(" | ")[1:]
    assert columns[:2] == ["d1 mcar 10% accuracy", "d1 mcar 10% balanced_accuracy"]
    assert len(columns) == 8
    m0 = lines[2].split(" | ")
    acc, bal = (float(c.split(" ± ")[0]) for c in m0[1:3])
    assert acc - bal == pytest.approx(0.2, abs=1e-3)
    # Without beside, the table is as before.
    assert format_table(both, "accuracy") == format_table(res, "accuracy")


def test_methods_below_the_majority_class_are_flagged(tmp_path, rng):
    # Issue 26: a method below the majority-class predictor is marked, in the
    # table and in the report's table.md, with a footnote giving the floors.
    from missingkernels.experiments import majority_scores, report_comparison

    pytest.importorskip("matplotlib")
    res = _long(rng)  # m0 about 0.3-0.5, m1 0.4-0.6, m2 0.5-0.7
    res["error"] = ""
    floors = {"d1": {"accuracy": 0.45}, "d2": {"accuracy": 0.1}}
    lines = format_table(res, "accuracy", floors=floors).splitlines()
    rows = {line.split(" | ")[0]: line for line in lines[2:5]}
    d1_10, d1_30, d2_10, d2_30 = rows["| m0"].split(" | ")[1:5]
    assert d1_10.endswith("†") is (float(d1_10.split()[0]) < 0.45)
    assert d1_30.endswith("†") and not d2_10.endswith("†")
    assert not d2_30.rstrip(" |").endswith("†")
    assert not any(cell.endswith("†") for cell in rows["| m2"].split(" | ")[1:3])
    assert lines[-1] == (
        "† below the majority-class predictor: accuracy 0.450 on d1; "
        "accuracy 0.100 on d2."
    )
    assert "†" not in format_table(res, "accuracy")
    # Floors below every mean: nothing marked, so no footnote either.
    low = {"d1": {"accuracy": 0.01}, "d2": {"accuracy": 0.01}}
    assert "†" not in format_table(res, "accuracy", floors=low)
    rep = report_comparison(res, "accuracy", tmp_path, floors=floors)
    assert (tmp_path / "table.md").read_text().strip() == rep.table
    assert rep.table.endswith("accuracy 0.100 on d2.")
    assert majority_scores([0, 0, 0, 1, 2]) == {
        "accuracy": 0.6,
        "balanced_accuracy": pytest.approx(1 / 3),
    }


def test_plots_write_png(tmp_path, rng):
    pytest.importorskip("matplotlib")
    res = _long(rng)
    plot_rate_curves(res, path=tmp_path / "curves.png")
    plot_critical_difference(friedman_nemenyi(block_scores(res)), tmp_path / "cd.png")
    for name in ("curves.png", "cd.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("func", [summary_table, format_table, block_scores])
def test_results_without_the_run_columns_are_explained(func, rng):
    res = _long(rng)
    with pytest.raises(ValueError, match=r"lack the columns \['score'\]"):
        func(res.drop(columns="score"))
    with pytest.raises(ValueError, match=r"lack the columns \['metric'\]"):
        func(res.drop(columns="metric"))
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        func(res.to_dict("list"))
    with pytest.raises(ValueError, match=r"No scores for metric 'r2'"):
        func(res, "r2")


def test_holm_matches_its_definition_and_statsmodels(rng):
    from missingkernels.experiments import holm

    p = rng.uniform(0.0, 0.2, size=15)
    # Written out: sort, scale by m - i, running maximum, cap at 1.
    order = np.argsort(p)
    m = p.size
    expected = np.empty(m)
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[idx]))
        expected[idx] = running
    np.testing.assert_allclose(holm(p), expected, rtol=1e-12)
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    reference = multitest.multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm(p), reference, rtol=1e-12)
    assert np.isnan(holm([0.01, np.nan])[1]) and holm([0.01, np.nan])[0] == 0.01


def test_pairwise_wilcoxon_matches_scipy_and_counts_wins(rng):
    from missingkernels.experiments import holm, pairwise_wilcoxon

    scores = _scores(rng, n=12, k=4)
    scores.iloc[0, 1] = scores.iloc[0, 0]  # one tie between m0 and m1
    res = pairwise_wilcoxon(scores)
    table = res.table
    assert len(table) == 6
    assert list(zip(table.method_a, table.method_b, strict=True))[:3] == [
        ("m0", "m1"),
        ("m0", "m2"),
        ("m0", "m3"),
    ]
    for row in table.itertuples(index=False):
        a, b = scores[row.method_a].to_numpy(), scores[row.method_b].to_numpy()
        ref = stats.wilcoxon(a, b)
        assert row.pvalue == pytest.approx(ref.pvalue, rel=1e-12)
        assert row.statistic == pytest.approx(ref.statistic)
        d = a - b
        assert (row.wins, row.ties, row.losses) == (
            int((d > 0).sum()),
            int((d == 0).sum()),
            int((d < 0).sum()),
        )
        assert row.wins + row.ties + row.losses == row.n_blocks == 12
        assert row.median_difference == pytest.approx(np.median(d))
    assert table.loc[0, "ties"] == 1
    np.testing.assert_allclose(table.pvalue_holm, holm(table.pvalue))
    # scikit-posthocs' pairwise Wilcoxon with Holm's correction agrees.
    sp = pytest.importorskip("scikit_posthocs")
    long = scores.melt(var_name="method", value_name="score")
    long["block"] = np.tile(np.arange(12), 4)
    ref = sp.posthoc_wilcoxon(
        long, val_col="score", group_col="method", p_adjust="holm", sort=False
    )
    np.testing.assert_allclose(
        res.matrix("pvalue_holm")
        .loc[ref.index, ref.columns]
        .to_numpy()[~np.eye(4, dtype=bool)],
        ref.to_numpy()[~np.eye(4, dtype=bool)],
        rtol=1e-10,
    )
    # Wins of the row's method against the column's, mirrored.
    wins = res.matrix("wins")
    assert wins.loc["m0", "m1"] == table.loc[0, "wins"]
    assert wins.loc["m1", "m0"] == table.loc[0, "losses"]


def test_pairwise_wilcoxon_lower_is_better_ties_and_identical_methods():
    from missingkernels.experiments import format_pairwise, pairwise_wilcoxon

    scores = pd.DataFrame(
        {
            "a": [1.0, 2.0, 3.0, 4.0, 5.0],
            "b": [1.0, 2.0, 3.0, 4.0, 5.0],
            "c": [2.0, 2.5, 3.5, 4.4, 5.01],
        }
    )
    res = pairwise_wilcoxon(scores, higher_is_better=False, tie_tolerance=0.02)
    ab, ac = res.table.iloc[0], res.table.iloc[1]
    # Identical methods: all ties, p = 1 (scipy has no test for zero differences).
    assert (ab.wins, ab.ties, ab.losses, ab.pvalue) == (0, 5, 0, 1.0)
    # Lower is better: a (lower) wins against c, except where within 0.02.
    assert (ac.wins, ac.ties, ac.losses) == (4, 1, 0)
    assert ac.median_difference < 0
    text = format_pairwise(res)
    assert text.splitlines()[0].startswith("| method a | method b |")
    assert "| a | c | 4 / 1 / 0 |" in text
    with pytest.raises(ValueError, match="at least 2 methods"):
        pairwise_wilcoxon(scores[["a"]])
    with pytest.raises(ValueError, match="missing cells"):
        pairwise_wilcoxon(scores.assign(a=[np.nan, 1, 2, 3, 4]))


def test_report_writes_the_pairwise_table(tmp_path, rng):
    from missingkernels.experiments import report_comparison

    pytest.importorskip("matplotlib")
    res = _long(rng)
    res["error"] = ""
    rep = report_comparison(res, "accuracy", tmp_path, blocks=["dataset", "rate"])
    assert rep.pairwise is not None
    assert (tmp_path / "pairwise.md").read_text().strip() == rep.pairwise_table
    k = res["method"].nunique()
    assert len(rep.pairwise.table) == k * (k - 1) // 2


def test_critical_difference_diagram_colours_bar_and_axis(rng):
    matplotlib = pytest.importorskip("matplotlib")
    from missingkernels.experiments._stats import CD_COLOURS

    assert len(set(CD_COLOURS)) == 16
    scores = _scores(rng, n=20, k=16)
    fig = plot_critical_difference(friedman_nemenyi(scores))
    ax = fig.axes[0]
    texts = {t.get_text(): t for t in ax.texts}
    # Each method's label in its own colour: 16 distinct colours.
    colours = {
        matplotlib.colors.to_hex(t.get_color())
        for text, t in texts.items()
        if text.startswith("m")
        or (text.endswith(tuple("0123456789")) and "CD" not in text)
    }
    assert len(colours) == 16
    # The CD reference bar and its label.
    assert any(text.startswith("CD = ") for text in texts)
    # The axis runs over the ranks 1..k.
    assert list(ax.get_xticks()) == list(range(1, 17))
    lo, hi = ax.get_xlim()
    assert lo < 1 and hi > 16 and lo > 0 and hi < 17.5


def test_critical_difference_diagram_shows_every_marker_at_tied_ranks(rng):
    pytest.importorskip("matplotlib")
    # m1 and m2 score the same in every block (tied mean ranks), and so do
    # m3 and m4: each marker must stay visible, not drawn over its twin.
    scores = _scores(rng, n=10, k=5)
    scores["m2"] = scores["m1"]
    scores["m4"] = scores["m3"]
    result = friedman_nemenyi(scores)
    assert result.mean_ranks["m1"] == result.mean_ranks["m2"]
    fig = plot_critical_difference(result)
    ax = fig.axes[0]
    points = np.vstack([c.get_offsets() for c in ax.collections])
    assert len(points) == 5
    # Five markers at five distinct places, each on its method's rank.
    assert len({(round(x, 6), round(y, 6)) for x, y in points}) == 5
    assert sorted(np.round(points[:, 0], 6)) == sorted(
        np.round(result.mean_ranks.to_numpy(), 6)
    )


def test_rate_curves_give_each_method_one_distinct_colour_in_every_panel():
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_hex

    from missingkernels.experiments import plot_rate_curves

    # Twelve methods: matplotlib's default cycle would repeat after ten.
    rows = [
        {
            "dataset": d,
            "mechanism": "mcar",
            "rate": r,
            "draw": draw,
            "fold": 0,
            "method": f"m{k:02d}",
            "metric": "accuracy",
            "score": 0.5 + 0.01 * k + 0.001 * draw,
        }
        for d in ("a", "b")
        for r in (0.1, 0.5)
        for draw in range(2)
        for k in range(12)
    ]
    fig = plot_rate_curves(pd.DataFrame(rows), "accuracy", mechanism="mcar")
    panels = [ax for ax in fig.axes if ax.containers]
    assert len(panels) == 2
    # One error-bar container per method and panel, labelled by the method.
    labelled = [
        {bars.get_label(): to_hex(bars.lines[0].get_color()) for bars in ax.containers}
        for ax in panels
    ]
    assert sorted(labelled[0]) == [f"m{k:02d}" for k in range(12)]
    assert len(set(labelled[0].values())) == 12
    assert labelled[0] == labelled[1]


def test_rate_curves_legend_covers_no_panel():
    # With a dozen methods a legend inside a panel hid the first rates'
    # points (vignette 8's page): one legend for the figure, beside the panels.
    pytest.importorskip("matplotlib")
    from missingkernels.experiments import plot_rate_curves

    rows = [
        {
            "dataset": d,
            "mechanism": "mar",
            "rate": r,
            "draw": draw,
            "fold": 0,
            "method": f"method_{k:02d}",
            "metric": "accuracy",
            "score": 0.9 - 0.2 * r + 0.01 * k + 0.001 * draw,
        }
        for d in ("a", "b", "c", "d")
        for r in (0.1, 0.4, 0.7)
        for draw in range(2)
        for k in range(12)
    ]
    fig = plot_rate_curves(pd.DataFrame(rows), "accuracy", mechanism="mar")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes)]
    legends = [leg for leg in legends if leg is not None]
    assert len(legends) == 1
    box = legends[0].get_window_extent(renderer)
    assert len(legends[0].get_texts()) == 12
    for ax in fig.axes:
        if ax.axison:
            assert not box.overlaps(ax.get_window_extent(renderer)), ax.get_title()
