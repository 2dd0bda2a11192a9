"""The vignette reports rearranged for the documentation site
(docs/vignette_pages.py): question and answer first, provenance last,
nothing lost."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "docs" / "vignette_pages.py"
if not MODULE.exists():  # the sdist has tests/ but not docs/
    pytest.skip("docs/ is not in this tree", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("vignette_pages", MODULE)
assert _spec is not None and _spec.loader is not None
vp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vp)

SOURCE = "vignettes/results/06_real_missingness/full/README.md"


def _report(n_methods: int = 15, significant: int = 0) -> str:
    methods = [f"m{i:02d}" for i in range(n_methods)]
    datasets = [f"data_{j}" for j in range(8)]
    table = ["| method | " + " | ".join(datasets) + " |", "|---" * 9 + "|"]
    table += [
        f"| {m} | " + " | ".join(f"0.{i}{j}1 ± 0.00{j}" for j in range(8)) + " |"
        for i, m in enumerate(methods)
    ]
    pairs = [(a, b) for i, a in enumerate(methods) for b in methods[i + 1 :]]
    pairwise = [
        "| method a | method b | w/t/l | median | p | p (Holm) |",
        "|---" * 6 + "|",
    ]
    pairwise += [
        f"| {a} | {b} | 3 / 0 / 2 | +0.001 | 0.0{k % 9 + 1} | "
        + ("**0.01**" if k < significant else "1")
        + " |"
        for k, (a, b) in enumerate(pairs)
    ]
    return "\n".join(
        [
            "# Real missingness, all methods (full mode)",
            "",
            "- Status: **complete**.",
            "- Command (from the repository root): `python x.py --full`",
            "- Protocol: 5 draws; nested CV.",
            "",
            "The data's own missing values.",
            "",
            "## accuracy: mean ± std over draws (each draw: mean over outer folds)",
            "",
            *table,
            "",
            "Friedman test over 8 blocks: chi2 = 1.0, p = 0.5.",
            "",
            f"Pairwise Wilcoxon signed-rank tests over the same 8 blocks, p-values "
            f"Holm-adjusted over all {len(pairs)} pairs (bold: at most 0.05):",
            "",
            *pairwise,
            "",
            "## Our best kernel vs the best imputation pipeline vs hgb",
            "",
            "| dataset | ours |",
            "|---|---|",
            "| data_0 | 0.9 |",
            "",
            "THE CONCLUSION.",
            "",
            "![critical_difference.png](critical_difference.png)",
        ]
    )


def _position(page: str, text: str) -> int:
    at = page.find(text)
    assert at >= 0, f"{text!r} missing from the page"
    return at


def test_question_and_answer_first_then_method_then_provenance():
    page = vp.arrange(_report(), SOURCE)
    assert page.startswith("# Real missingness, all methods\n")  # no "(full mode)"
    order = [
        "**The question.**",
        "**The setup.** The data's own missing values.",
        "## The answer",
        "### Our best kernel vs the best imputation pipeline vs hgb",
        "THE CONCLUSION.",
        "![critical_difference.png](critical_difference.png)",
        "## Method and all results",
        "**Protocol.** 5 draws; nested CV.",
        "### accuracy: mean ± std over draws",
        "Friedman test over 8 blocks",
        "## Provenance",
        "- Status: **complete**.",
        "- Command (from the repository root)",
    ]
    positions = [_position(page, text) for text in order]
    assert positions == sorted(positions)
    # The protocol moved to the method, not repeated in the provenance.
    assert page.count("5 draws; nested CV") == 1


def test_long_pairwise_table_summarised_with_the_pairs_that_differ():
    page = vp.arrange(_report(significant=2), SOURCE)
    assert "over all 105 pairs: 2 pairs differ at the 0.05 level" in page
    assert "smallest adjusted p-value is 0.01" in page
    assert "vignettes/results/06_real_missingness/full/pairwise_accuracy.md" in page
    rows = [line for line in page.splitlines() if line.startswith("| m0")]
    pair_rows = [r for r in rows if r.count("|") == 7]
    assert len(pair_rows) == 2 and all("**0.01**" in r for r in pair_rows)
    none = vp.arrange(_report(significant=0), SOURCE)
    assert "no pair differs at the 0.05 level" in none
    assert "smallest adjusted p-value is 1 (unadjusted: 0.01)" in none


def test_short_pairwise_table_kept():
    page = vp.arrange(_report(n_methods=4), SOURCE)  # 6 pairs
    assert (
        "Pairwise Wilcoxon signed-rank tests over the same 8 blocks, p-values" in page
    )
    assert sum(line.count("|") == 7 for line in page.splitlines()) == 6 + 2


def test_wide_tables_split_evenly_and_no_cell_lost():
    page = vp.arrange(_report(n_methods=3), SOURCE)
    tables, current = [], []
    for line in [*page.splitlines(), ""]:
        if line.startswith("|"):
            current.append([c.strip() for c in line.strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    results = [t for t in tables if t[0][0] == "method" and t[0][1].startswith("data_")]
    # 9 columns (more than MAX_COLUMNS = 8): two parts of 1 + 4 columns, the
    # method column in both.
    assert [len(t[0]) for t in results] == [5, 5]
    cells = {c for t in results for row in t[2:] for c in row[1:]}
    assert len(cells) == 3 * 8
    # "a ± b" cannot break across lines.
    assert all(re.fullmatch(r"0\.\d+\u00a0±\u00a00\.\d+", c) for c in cells)


def test_report_without_provenance_kept_as_it_is():
    text = "# Getting started\n\n## 1. Data\n\n569 rows\n"
    assert (
        vp.arrange(text, "vignettes/results/01_getting_started/full/README.md") == text
    )


@pytest.mark.parametrize(
    "path", sorted(ROOT.glob("vignettes/results/*/full/README.md"))
)
def test_committed_reports_keep_every_number(path):
    text = path.read_text()
    page = vp.arrange(text, path.relative_to(ROOT).as_posix())
    numbers = re.findall(r"\d+\.\d+", text.split("Pairwise Wilcoxon")[0])
    page_numbers = re.findall(r"\d+\.\d+", page)
    for number in set(numbers):
        assert number in page_numbers, number


def test_report_that_opens_with_its_question_loses_the_mode_in_its_title():
    # Vignettes 8-10 write question and answer first, provenance last: the
    # page keeps that order but, like the others, titles without the mode.
    text = (
        "# Where expected kernels pay off (full mode)\n\n**Question.** Is it?\n\n"
        "## Provenance\n\n- Status: complete.\n"
    )
    page = vp.arrange(text, "vignettes/results/10_x/full/README.md")
    assert page == text.replace(" (full mode)", "")
