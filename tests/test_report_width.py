"""Comparison reports never write a table wider than a browser window."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from missingkernels.experiments import format_table, report_comparison, summary_table

METHODS = ["genrbf", "expected_rbf", "mean_indicator", "knn_indicator", "hgb"]


def _sweep(seed: int = 0) -> pd.DataFrame:
    """Long results of a rate sweep: 3 datasets x 2 mechanisms x 7 rates."""
    rng = np.random.default_rng(seed)
    rows = [
        (d, mech, rate, draw, fold, m, "accuracy", rng.uniform(0.5, 0.95))
        for d in ["breast_cancer_wisconsin", "ionosphere", "statlog_heart"]
        for mech in ["mar", "mcar"]
        for rate in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
        for draw in range(3)
        for fold in range(2)
        for m in METHODS
    ]
    columns = ["dataset", "mechanism", "rate", "draw", "fold", "method"]
    frame = pd.DataFrame(rows, columns=[*columns, "metric", "score"])
    return frame.assign(error="")


def _tables(markdown: str) -> list[tuple[str, list[str]]]:
    """(bold label above it, lines) of each table."""
    out, label, lines = [], "", markdown.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("**"):
            label = lines[i].strip("*")
        if lines[i].startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out.append((label, lines[i:j]))
            i = j
        else:
            i += 1
    return out


def test_a_wide_table_is_split_per_dataset_and_mechanism_with_every_cell_once():
    res = _sweep()
    whole = format_table(res)
    assert len(_tables(whole)) == 1 and len(whole.splitlines()[0]) > 500
    split = format_table(res, max_width=130)
    tables = _tables(split)
    assert len(tables) == 6
    # The raw Markdown rows are as wide as the rendered table (plus one).
    assert max(len(line) for _, t in tables for line in t) <= 131
    summary = summary_table(res)
    seen = 0
    for label, lines in tables:
        dataset, mechanism = label.split(", ")
        header = [c.strip() for c in lines[0].strip("|").split("|")]
        assert header[0] == "method"
        for line in lines[2:]:
            cells = [c.strip() for c in line.strip("|").split("|")]
            for rate_label, cell in zip(header[1:], cells[1:], strict=True):
                rate = float(rate_label.rstrip("%")) / 100
                row = summary.loc[(dataset, mechanism, rate, cells[0])]
                assert cell == f"{row['mean']:.3f} ± {row['std']:.3f}"
                seen += 1
    assert seen == len(summary) == 3 * 2 * 7 * len(METHODS)


def test_a_table_that_fits_is_left_whole():
    res = _sweep()
    one = res[(res.dataset == "ionosphere") & (res.mechanism == "mar")]
    one = one[one.rate <= 0.3]
    assert format_table(one, max_width=130) == format_table(one)


def test_columns_without_datasets_to_group_are_split_in_equal_runs():
    res = _sweep()
    res = res[(res.mechanism == "mar") & (res.rate == 0.3)]
    wide = res.assign(dataset=res["dataset"] + "_" + res["fold"].astype(str))
    wide = wide.assign(fold=0)
    split = format_table(wide, max_width=60)
    tables = _tables(split)
    assert len(tables) > 1
    heads = [c for _, t in tables for c in t[0].strip("|").split("|")[1:]]
    assert sorted(h.strip() for h in heads) == sorted(set(wide["dataset"]))
    assert all(t[0].startswith("| method |") for _, t in tables)


def test_reports_write_split_tables_by_default(tmp_path):
    rep = report_comparison(_sweep(), "accuracy", tmp_path, table_file="t.md")
    text = (tmp_path / "t.md").read_text()
    assert text == rep.table + "\n"
    assert re.search(r"^\*\*ionosphere, mcar\*\*$", text, flags=re.M)
    assert max(len(line) for line in text.splitlines()) <= 131


def test_the_sweeps_band_table_fits_and_lists_the_significant_pairs(monkeypatch):
    """genrbf far ahead of eleven long-named methods: every pair with it is
    significant in the bands of 24 blocks, listed under the table instead of
    in a column of it."""
    import sys
    from pathlib import Path

    vignettes = Path(__file__).resolve().parent.parent / "vignettes"
    monkeypatch.syspath_prepend(str(vignettes))
    sys.modules.pop("_sweeps", None)
    import _sweeps

    rng = np.random.default_rng(1)
    methods = ["genrbf", *(f"imputation_{i:02d}_indicator" for i in range(11))]
    rows = [
        (d, mech, rate, draw, fold, m, "accuracy", 0.6 + 0.1 * (m == "genrbf"))
        for d in ["d1", "d2", "d3", "d4"]
        for mech in ["mar", "mcar"]
        for rate in [0.1, 0.2, 0.3, 0.5, 0.7]
        for draw in range(2)
        for fold in range(2)
        for m in methods
    ]
    res = pd.DataFrame(
        rows,
        columns=[*CELLS, "method", "metric", "score"],
    ).assign(error="")
    res["score"] += rng.normal(scale=0.01, size=len(res))
    lines = _sweeps.band_table(
        res, "accuracy", "genrbf", methods[1:], ["dataset", "mechanism", "rate", "draw"]
    )
    sys.modules.pop("_sweeps", None)
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + 2 * 3  # header, rule, 2 mechanisms x 3 bands
    assert max(len(line) for line in table) <= 131
    listed = [line for line in lines if line.startswith("- ")]
    assert len(listed) == 6
    wide = [line for line in listed if "10-30%" in line]  # 24 blocks each
    assert len(wide) == 2 and all(line.count("imputation_") == 11 for line in wide)


CELLS = ["dataset", "mechanism", "rate", "draw", "fold"]


def test_hand_made_tables_are_split_into_runs_of_columns_that_fit():
    from missingkernels.experiments._tables import fit_tables, table_width

    header = "| dataset | " + " | ".join(f"a long column name {j}" for j in range(8))
    rows = [
        f"| d{i} | " + " | ".join(f"0.{i}{j}0 ± 0.00{j}" for j in range(8)) + " |"
        for i in range(3)
    ]
    text = ["Before.", "", header + " |", "|---" * 9 + "|", *rows, "", "After."]
    out = fit_tables(text, max_width=130)
    assert out[0] == "Before." and out[-1] == "After."
    tables = _tables("\n".join(out))
    assert len(tables) == 2
    assert all(table_width(t) <= 130 for _, t in tables)
    assert all(t[0].startswith("| dataset |") for _, t in tables)
    cells = {c.strip() for _, t in tables for r in t[2:] for c in r.split("|")[2:-1]}
    assert len(cells) == 3 * 8
    narrow = ["| a | b |", "|---|---|", "| 1 | 2 |"]
    assert fit_tables(narrow) == narrow
