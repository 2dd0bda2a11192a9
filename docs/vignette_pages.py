"""A vignette's committed report (``README.md``) rearranged for the site.

The vignette scripts write their reports in the order they compute them:
provenance, the full results table, the statistics, then the comparison that
answers the vignette's question. A reader wants the reverse. ``arrange``
turns a comparison report into a page that opens with the question and the
answer (the comparison sections and the figures), then the method and the
full results, then the provenance. Nothing is recomputed or reworded: the
sections are moved, headings demoted under the new ones, wide tables split,
and a long pairwise-test table summarised (its file stays in the repository).
"""

from __future__ import annotations

import re

#: Tables with more columns than this are split evenly (the first column
#: repeated in each part).
MAX_COLUMNS = 8
#: A pairwise-test table with more rows than this is summarised.
MAX_PAIRWISE_ROWS = 12
NBSP = "\u00a0"
#: The question each comparison vignette answers, by vignette (the reports
#: describe their setup, not the question; a vignette not listed opens with
#: its setup).
QUESTIONS = {
    "02_classification_mar": "On the genRBF paper's classification datasets "
    "with 30% of the entries removed at random (MAR), does an SVM with an "
    "expected kernel classify better than the same SVM after imputation, or "
    "than gradient boosting?",
    "03_regression_mar": "The same question for regression (R²): expected "
    "kernels against imputation pipelines and gradient boosting, MAR 30%.",
    "04_expected_vs_socp": "With 5% to 40% of the entries missing completely "
    "at random, how do the expected RBF kernel, the SOCP SVM and EM "
    "imputation compare, in accuracy and in fitting time?",
    "05_binary_house_votes": "On binary data with its own missing values (the "
    "house votes), do Belanche's kernels K1 and K2 beat imputation by the "
    "mode, by iterative imputation and by R's mice?",
    "06_real_missingness": "On five datasets with their own missing values, "
    "is an SVM with an expected kernel better than what a user would "
    "otherwise do: impute, then fit an SVM, or fit gradient boosting?",
    "07_mixed_tables": "On tables with numeric and nominal columns and their "
    "own missing values, does the mixed kernel beat one-hot imputation "
    "pipelines and gradient boosting with native categories?",
}


def arrange(text: str, source: str) -> str:
    """The page for ``text``, the report at ``source`` (a repository path).

    A report without provenance bullets at its top (vignette 1, a
    walk-through; vignettes 8-10, which open with their question and end
    with their provenance) keeps its order: its title loses the mode and its
    tables are split, nothing else.
    """
    lines = text.rstrip("\n").split("\n")
    if not lines or not lines[0].startswith("# ") or len(lines) < 3:
        return text
    title = re.sub(r" \((full|quick) mode\)$", "", lines[0][2:])
    i = 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    provenance = []
    while i < len(lines) and lines[i].startswith("- "):
        provenance.append(lines[i])
        i += 1
    if not provenance:
        # Vignette 1 (a walk-through) and the sweeps, which already open with
        # their question and end with their provenance: order kept.
        lines[0] = f"# {title}"
        return "\n".join(_split_tables(lines)) + "\n"
    rest = lines[i:]
    first = next(
        (j for j, line in enumerate(rest) if line.startswith("## ")), len(rest)
    )
    question = _strip_blank(rest[:first])
    sections = _sections(rest[first:])
    figures = []
    for section in sections:
        figures += [line for line in section if line.startswith("![")]
        section[:] = [line for line in section if not line.startswith("![")]
    results, method, answer = [], [], []
    for section in sections:
        heading = section[0]
        if re.match(r"## \S+: mean ± std over draws", heading):
            results.append(section)
        elif heading.startswith(
            ("## What differs from the paper", "## Beside the paper")
        ):
            method.append(section)
        else:
            answer.append(section)
    if results and not any(" vs " in section[0] for section in answer):
        # No comparison section (a " vs " heading): the results table answers.
        main, results = results[0], results[1:]
        stats = _take_statistics(main)
        answer.insert(0, main)
        if stats:
            results.insert(0, ["## Statistics", "", *stats])
    out = [f"# {title}", ""]
    name = source.split("/")[-3] if source.count("/") >= 3 else ""
    if name in QUESTIONS:
        out += [f"**The question.** {QUESTIONS[name]}", ""]
    if question:
        out += [f"**The setup.** {question[0]}", *question[1:], ""]
    out += ["## The answer", ""]
    for section in answer:
        out += [*_demote(section), ""]
    for figure in figures:
        out += [figure, ""]
    out += ["## Method and all results", ""]
    protocol = [line for line in provenance if line.startswith("- Protocol: ")]
    provenance = [line for line in provenance if line not in protocol]
    if protocol:
        out += ["**Protocol.** " + protocol[0].removeprefix("- Protocol: "), ""]
    for section in results + method:
        out += [*_demote(_summarise_pairwise(section, source)), ""]
    out += ["## Provenance", "", *provenance, ""]
    return "\n".join(_split_tables(_squeeze(out))) + "\n"


def _sections(lines: list[str]) -> list[list[str]]:
    sections: list[list[str]] = []
    for line in lines:
        if line.startswith("## ") or not sections:
            sections.append([])
        sections[-1].append(line)
    return [_strip_blank(s) for s in sections]


def _strip_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _squeeze(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line)
    return out


def _demote(section: list[str]) -> list[str]:
    return ["#" + line if re.match(r"#{2,5} ", line) else line for line in section]


def _take_statistics(section: list[str]) -> list[str]:
    """Remove the Friedman and pairwise paragraphs (and the pairwise table)
    from a results section; return them."""
    start = next(
        (j for j, line in enumerate(section) if line.startswith("Friedman test")),
        None,
    )
    if start is None:
        return []
    end = len(section)
    taken = section[start:end]
    del section[start:end]
    return taken


def _summarise_pairwise(section: list[str], source: str) -> list[str]:
    """Replace a pairwise-test table longer than ``MAX_PAIRWISE_ROWS`` rows by
    the pairs that differ and the smallest adjusted p-value."""
    at = next(
        (j for j, line in enumerate(section) if line.startswith("Pairwise Wilcoxon")),
        None,
    )
    if at is None:
        return section
    start = next(
        (j for j in range(at + 1, len(section)) if section[j].startswith("|")), None
    )
    if start is None:
        return section
    end = start
    while end < len(section) and section[end].startswith("|"):
        end += 1
    header, rows = section[start], section[start + 2 : end]
    if len(rows) <= MAX_PAIRWISE_ROWS:
        return section
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    significant = [row for row, c in zip(rows, cells, strict=True) if "**" in c[-1]]

    def number(cell: str) -> float:
        try:
            return float(cell.strip("*"))
        except ValueError:
            return float("nan")

    smallest_holm = min(number(c[-1]) for c in cells)
    smallest_raw = min(number(c[-2]) for c in cells)
    m = re.search(r"over the same (\d+) blocks", section[at])
    blocks = f"over the same {m[1]} blocks" if m else "over the same blocks"
    metric = re.match(r"#+ (\S+):", section[0])
    name = f"pairwise_{metric[1] if metric else 'accuracy'}.md"
    file = source.rsplit("/", 1)[0] + "/" + name
    text = (
        f"Pairwise Wilcoxon signed-rank tests {blocks}, p-values Holm-adjusted "
        f"over all {len(rows)} pairs: "
        + (
            f"{len(significant)} pairs differ at the 0.05 level (below)"
            if significant
            else "no pair differs at the 0.05 level"
        )
        + f"; the smallest adjusted p-value is {smallest_holm:g} (unadjusted: "
        f"{smallest_raw:g}). The table of all {len(rows)} pairs is in the "
        f"repository: `{file}`."
    )
    new = [text]
    if significant:
        new += ["", header, section[start + 1], *significant]
    return section[:at] + new + section[end:]


def _split_tables(lines: list[str]) -> list[str]:
    """Split every table wider than ``MAX_COLUMNS`` into tables of the first
    column and at most ``MAX_COLUMNS - 1`` others; keep "a ± b" on one line."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("|") and i + 1 < len(lines)):
            out.append(lines[i])
            i += 1
            continue
        end = i
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        table = [
            [c.strip() for c in row.strip().strip("|").split("|")]
            for row in lines[i:end]
        ]
        table = [[c.replace(" ± ", f"{NBSP}±{NBSP}") for c in row] for row in table]
        width = len(table[0])
        n_parts = -(-(width - 1) // (MAX_COLUMNS - 1)) if width > MAX_COLUMNS else 1
        size = -(-(width - 1) // n_parts)
        for n, first in enumerate(range(1, width, size)):
            cols = [0, *range(first, min(width, first + size))]
            if n:
                out.append("")
            out += ["| " + " | ".join(row[c] for c in cols) + " |" for row in table]
        i = end
    return out
