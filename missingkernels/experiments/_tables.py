"""Markdown tables that fit a browser window.

The reports' tables (:func:`~missingkernels.experiments.format_table` and
the tables a vignette writes by hand) are split, when wider than
:data:`MAX_TABLE_WIDTH` characters, into tables of fewer columns, the first
column repeated in each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The widest table (in characters, ``table_width``) the reports write:
#: about 1,000 pixels of 16-pixel text, what a browser window shows of a
#: page (eight columns of ``0.850 ± 0.012`` and a method name).
MAX_TABLE_WIDTH = 130


def table_width(lines: Sequence[str]) -> int:
    """The width of a Markdown table as rendered, in characters: each
    column's longest cell plus 3 (padding and rule)."""
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in lines
        if line.startswith("|") and not set(line) <= set("|-: ")
    ]
    if not rows:
        return 0
    n = max(len(r) for r in rows)
    return sum(3 + max(len(r[j]) if j < len(r) else 0 for r in rows) for j in range(n))


def _columns(cells: Sequence[Sequence[str]], cols: Sequence[int]) -> list[str]:
    """Markdown rows of the first column and ``cols`` of a table's cells."""
    return ["| " + " | ".join(row[c] for c in [0, *cols]) + " |" for row in cells]


def fit_tables(lines: Sequence[str], max_width: int = MAX_TABLE_WIDTH) -> list[str]:
    """Markdown ``lines`` with every table wider than ``max_width``
    characters (:func:`table_width`) split into the fewest equal runs of its
    columns that fit, the first column repeated in each: what a report's
    hand-made tables (comparisons, the papers' numbers beside ours) get."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            out.append(lines[i])
            i += 1
            continue
        end = i
        while end < len(lines) and lines[end].startswith("|"):
            end += 1
        table = list(lines[i:end])
        i = end
        if table_width(table) <= max_width or len(table) < 2:
            out += table
            continue
        cells = [
            [c.strip() for c in row.strip().strip("|").split("|")] for row in table
        ]
        n = len(cells[0])
        if any(len(row) != n for row in cells) or n < 3:
            out += table  # not a plain table: left as it is
            continue

        rest = list(range(1, n))
        for n_runs in range(2, n):
            size = -(-len(rest) // n_runs)
            runs = [rest[k : k + size] for k in range(0, len(rest), size)]
            if all(table_width(_columns(cells, r)) <= max_width for r in runs):
                break
        for k, run in enumerate(runs):
            if k:
                out.append("")
            out += _columns(cells, run)
    return out


def markdown_rows(wide: Any, headers: Sequence[str] | None = None) -> list[str]:
    """Markdown rows of a DataFrame of cells (index: the methods)."""
    headers = list(wide.columns) if headers is None else list(headers)
    lines = [
        "| method | " + " | ".join(headers) + " |",
        "|---|" + "---|" * len(headers),
    ]
    for method, row in wide.iterrows():
        lines.append(f"| {method} | " + " | ".join(row.tolist()) + " |")
    return lines


def split_wide(wide: Any, keys: Mapping[str, tuple], max_width: int) -> list[str]:
    """Tables of at most ``max_width`` characters from the columns of ``wide``:
    per dataset, then per dataset and mechanism, then equal runs of columns."""
    columns = list(wide.columns)
    datasets = list(dict.fromkeys(keys[c][0] for c in columns))
    # (label, columns, header of each column)
    groups: list[tuple[str, list[str], list[str]]] = []
    if len(datasets) < len(columns):
        for d in datasets:
            cols = [c for c in columns if keys[c][0] == d]
            heads = [" ".join(x for x in keys[c][1:] if x) for c in cols]
            groups.append((str(d), cols, heads))
    else:
        groups.append(("", columns, columns))
    lines: list[str] = []
    for label, cols, heads in groups:
        parts = [(label, cols, heads)]
        mechanisms = list(dict.fromkeys(keys[c][1] for c in cols))
        too_wide = table_width(markdown_rows(wide[cols], heads)) > max_width
        if label and too_wide and 1 < len(mechanisms) < len(cols):
            parts = []
            for mech in mechanisms:
                sub = [c for c in cols if keys[c][1] == mech]
                parts.append(
                    (
                        f"{label}, {mech}",
                        sub,
                        [" ".join(x for x in keys[c][2:] if x) for c in sub],
                    )
                )
        for name, sub, sub_heads in parts:
            n_runs = 1
            while n_runs < len(sub):
                size = -(-len(sub) // n_runs)
                runs = [
                    range(i, min(i + size, len(sub))) for i in range(0, len(sub), size)
                ]
                if all(
                    table_width(
                        markdown_rows(
                            wide[[sub[i] for i in r]], [sub_heads[i] for i in r]
                        )
                    )
                    <= max_width
                    for r in runs
                ):
                    break
                n_runs += 1
            size = -(-len(sub) // n_runs)
            for first in range(0, len(sub), size):
                run = range(first, min(first + size, len(sub)))
                if lines:
                    lines.append("")
                if name:
                    lines += [f"**{name}**", ""]
                lines += markdown_rows(
                    wide[[sub[i] for i in run]], [sub_heads[i] for i in run]
                )
    return lines
