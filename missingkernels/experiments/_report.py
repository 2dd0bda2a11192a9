"""Reports of the comparisons: the table, the Friedman/Nemenyi summary, figures.

One code path for the ``missingkernels compare`` command and the vignettes:
:func:`report_comparison` writes the Markdown table and the figures of a
results frame and returns what the caller prints or puts in its Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _stats
from ._stats import _BLOCK, FriedmanNemenyi, PairwiseWilcoxon
from ._tables import MAX_TABLE_WIDTH

#: The columns of a (dataset, mechanism, rate, draw, outer fold) cell.
CELL_COLUMNS = ("dataset", "mechanism", "rate", "draw", "fold")


@dataclass
class ComparisonReport:
    """What :func:`report_comparison` wrote and computed.

    Attributes
    ----------
    metric : str
    table : str
        The Markdown table (:func:`format_table`).
    stats : FriedmanNemenyi or None
        The Friedman/Nemenyi test over the blocks; None with fewer than two
        blocks or three methods.
    n_common_cells : int
        The (dataset, mechanism, rate, draw, fold) cells every method
        finished without an error: the only ones the test ranks on.
    pairwise : PairwiseWilcoxon or None
        Pairwise Wilcoxon signed-rank tests (Holm-corrected) and win/tie/loss
        counts over the same blocks; None with fewer than two methods.
    pairwise_table : str
        Its Markdown table ("" without it).
    errors : dict of str to str
        Method -> the first error of its failed cells.
    n_failed_cells : int
        Method cells that failed.
    figures : list of str
        File names of the figures written, in order.
    """

    metric: str
    table: str
    stats: FriedmanNemenyi | None
    n_common_cells: int
    errors: dict[str, str]
    n_failed_cells: int
    figures: list[str] = field(default_factory=list)
    pairwise: PairwiseWilcoxon | None = None
    pairwise_table: str = ""

    def mean_ranks(self) -> str:
        """``"method rank, ..."``, best first ("" without a test)."""
        if self.stats is None:
            return ""
        return ", ".join(f"{m} {r:.2f}" for m, r in self.stats.mean_ranks.items())


def common_cells(results: Any) -> Any:
    """Rows of the cells (:data:`CELL_COLUMNS`) that every method finished.

    Methods may have finished different draws (a partial run) or failed in
    some cells: ranking them on these rows compares like with like.
    """
    cell = list(CELL_COLUMNS)
    ok = results[results["error"] == ""]
    n_methods = ok["method"].nunique()
    counts = ok.drop_duplicates([*cell, "method"]).groupby(cell).size()
    full = counts[counts == n_methods].index
    return ok.set_index(cell).loc[lambda f: f.index.isin(full)].reset_index()


def report_comparison(
    results: Any,
    metric: str,
    out_dir: str | Path,
    *,
    table_file: str = "table.md",
    blocks: Sequence[str] = _BLOCK,
    title: str = "",
    curves: str | None = None,
    pairwise_file: str = "pairwise.md",
    beside: Sequence[str] = (),
    floors: Mapping[str, Mapping[str, float]] | None = None,
    max_width: int | None = MAX_TABLE_WIDTH,
) -> ComparisonReport:
    """Write the table and figures of a comparison; return the summary.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format rows of :func:`run_comparison` (or :func:`read_results`).
    metric : str
    out_dir : path
        Where the table and figures are written.
    table_file : str, default="table.md"
        File name of the Markdown table.
    blocks : sequence of str, default=("dataset", "mechanism", "rate")
        The columns of one block of the Friedman test; its scores are the
        means over the cells every method finished (:func:`common_cells`).
    title : str, default=""
        Title of the critical-difference diagram.
    curves : str or None, default=None
        File name of the score-vs-rate curves, one figure per mechanism
        (``{mechanism}`` in the name is replaced by it); None: no curves.
    pairwise_file : str, default="pairwise.md"
        File name of the Markdown table of the pairwise Wilcoxon
        signed-rank tests (Holm-corrected) and win/tie/loss counts over the
        same blocks as the Friedman test (:func:`pairwise_wilcoxon`).
    beside : sequence of str, default=()
        Further metrics shown beside ``metric`` in the table (e.g.
        ``("balanced_accuracy",)``, see :func:`format_table`); the tests and
        figures are of ``metric`` only.
    floors : mapping or None, default=None
        ``floors[dataset][metric]``, the majority-class predictor's scores
        (:func:`majority_scores` of the dataset's labels): the methods below
        them are marked in the table, with a footnote (:func:`format_table`).
    max_width : int or None, default=130
        The widest table written, in characters: a wider one is split per
        dataset, then per mechanism (:func:`format_table`), so that every
        table fits a browser window. None: one table, however wide.

    Returns
    -------
    report : ComparisonReport
    """
    out = Path(out_dir)
    table = _stats.format_table(
        results, metric, beside=beside, floors=floors, max_width=max_width
    )
    (out / table_file).write_text(table + "\n")
    common = common_cells(results)
    scores = _stats.block_scores(common, metric, blocks=blocks)
    stats = None
    figures = []
    pairwise = None
    pairwise_table = ""
    if scores.shape[0] >= 1 and scores.shape[1] >= 2:
        pairwise = _stats.pairwise_wilcoxon(scores)
        pairwise_table = _stats.format_pairwise(pairwise)
        (out / pairwise_file).write_text(pairwise_table + "\n")
    if scores.shape[0] >= 2 and scores.shape[1] >= 3:
        stats = _stats.friedman_nemenyi(scores)
        _stats.plot_critical_difference(
            stats, out / "critical_difference.png", title=title
        )
        figures.append("critical_difference.png")
    if curves is not None:
        for mech in sorted(results["mechanism"].unique()):
            name = curves.format(mechanism=mech)
            _stats.plot_rate_curves(
                results[results["mechanism"] == mech], metric, out / name, mech
            )
            figures.append(name)
    failed = results[results["error"] != ""]
    return ComparisonReport(
        metric=metric,
        table=table,
        stats=stats,
        n_common_cells=int(common.drop_duplicates(list(CELL_COLUMNS)).shape[0]),
        errors=dict(failed.groupby("method")["error"].first().items()),
        n_failed_cells=int(failed.drop_duplicates([*CELL_COLUMNS, "method"]).shape[0]),
        figures=figures,
        pairwise=pairwise,
        pairwise_table=pairwise_table,
    )
