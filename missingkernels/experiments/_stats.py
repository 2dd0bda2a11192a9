"""Tables, Friedman/Nemenyi statistics and figures of the method comparisons.

pandas, scipy, scikit-posthocs and matplotlib are imported inside the
functions (the ``experiments``/``plots`` extras).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._optional import import_optional
from ._tables import markdown_rows, split_wide, table_width

_BLOCK = ("dataset", "mechanism", "rate")


def _check_results(results: Any, metric: str) -> Any:
    pd = import_optional("pandas", "experiments", "summary_table and block_scores")

    if not isinstance(results, pd.DataFrame):
        raise TypeError(
            "results must be a pandas DataFrame (returned by run_comparison or "
            f"read from its CSV), got {type(results).__name__}."
        )
    needed = {
        "dataset",
        "mechanism",
        "rate",
        "draw",
        "fold",
        "method",
        "metric",
        "score",
    }
    missing = needed - set(results.columns)
    if missing:
        raise ValueError(
            f"results lack the columns {sorted(missing)}; pass the DataFrame "
            "returned by run_comparison (or read from its CSV)."
        )
    rows = results[(results["metric"] == metric) & results["score"].notna()]
    if rows.empty:
        known = sorted(results["metric"].unique())
        raise ValueError(f"No scores for metric {metric!r}; metrics present: {known}.")
    return rows


def summary_table(results: Any, metric: str = "accuracy") -> Any:
    """Mean and standard deviation over missingness draws, per method.

    As in the genRBF paper's Table 2: the score of a draw is the mean over its
    outer folds; the table gives the mean and the (sample) standard deviation
    of those per-draw scores.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format rows of :func:`run_comparison`.
    metric : str, default="accuracy"

    Returns
    -------
    table : pandas.DataFrame
        Index (dataset, mechanism, rate, method); columns ``mean``, ``std``,
        ``n_draws``, ``n_failed`` (cells with an error).

    Examples
    --------
    >>> import pandas as pd
    >>> from missingkernels.experiments import summary_table
    >>> res = pd.DataFrame({"dataset": "d", "mechanism": "mar", "rate": 0.3,
    ...     "draw": [0, 0, 1, 1], "fold": [0, 1, 0, 1], "method": "m",
    ...     "metric": "accuracy", "score": [0.8, 0.9, 0.7, 0.7]})
    >>> float(summary_table(res)["mean"].iloc[0])
    0.775
    """
    rows = _check_results(results, metric)
    all_rows = results[results["metric"] == metric]
    keys = [*_BLOCK, "method"]
    per_draw = rows.groupby([*keys, "draw"])["score"].mean()
    table = per_draw.groupby(keys).agg(["mean", "std", "count"])
    table = table.rename(columns={"count": "n_draws"})
    failed = all_rows["score"].isna().groupby([all_rows[k] for k in keys]).sum()
    table["n_failed"] = failed.reindex(table.index).fillna(0).astype(int)
    return table


def format_table(
    results: Any,
    metric: str = "accuracy",
    digits: int = 3,
    *,
    beside: Sequence[str] = (),
    floors: Mapping[str, Mapping[str, float]] | None = None,
    max_width: int | None = None,
) -> str:
    """Markdown table: rows = methods, columns = datasets, cells ``mean ± std``.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format rows of :func:`run_comparison`.
    metric : str, default="accuracy"
    digits : int, default=3
    beside : sequence of str, default=()
        Further metrics (e.g. ``("balanced_accuracy",)``), each shown in a
        column beside ``metric`` for every dataset column; the columns are
        then headed ``"<dataset> <metric>"``.
    floors : mapping or None, default=None
        ``floors[dataset][metric]``: the score of the majority-class
        predictor (always the most frequent class; see
        :func:`majority_scores`). A mean below it is marked
        :data:`BELOW_MAJORITY` and a footnote under the table gives the
        floors (no footnote when no mean is marked).
    max_width : int or None, default=None
        The widest table written, in characters: the sum over its columns of
        the longest cell plus 3 (130, ``MAX_TABLE_WIDTH`` of ``_tables``, is
        about what a browser window shows). A wider table is split: one
        table per dataset, headed by its name in bold, then per dataset and
        mechanism, then into equal runs of columns (the method column
        repeated), as far as needed.
        None: one table, however wide.

    Returns
    -------
    markdown : str

    Examples
    --------
    >>> import pandas as pd
    >>> from missingkernels.experiments import format_table
    >>> res = pd.DataFrame({"dataset": "d", "mechanism": "none", "rate": 0.1,
    ...     "draw": 0, "fold": [0, 1], "method": "m", "metric": "accuracy",
    ...     "score": [0.6, 0.7]})
    >>> print(format_table(res, floors={"d": {"accuracy": 0.8}}))
    | method | d |
    |---|---|
    | m | 0.650 † |
    <BLANKLINE>
    † below the majority-class predictor: accuracy 0.800 on d.
    """
    metrics = [metric, *(m for m in beside if m != metric)]
    wides = [
        _wide_table(
            results,
            m,
            digits,
            None if floors is None else {d: f[m] for d, f in floors.items() if m in f},
        )
        for m in metrics
    ]
    if len(metrics) == 1:
        wide = wides[0]
    else:
        pd = import_optional("pandas", "experiments", "format_table")

        columns = list(wides[0].columns)
        parts = {
            (col, m): w[col] if col in w.columns else None
            for col in columns
            for m, w in zip(metrics, wides, strict=True)
        }
        methods = wides[0].index
        for w in wides[1:]:
            methods = methods.union(w.index, sort=False)
        wide = pd.DataFrame(
            {
                f"{col} {m}": (
                    "-" if part is None else part.reindex(methods).fillna("-")
                )
                for (col, m), part in parts.items()
            },
            index=methods,
        )
        wide.index.name = "method"
    lines = markdown_rows(wide)
    if max_width is not None and table_width(lines) > max_width:
        lines = split_wide(wide, _column_keys(results, metrics), max_width)
    marked = any(BELOW_MAJORITY in str(v) for v in wide.to_numpy().ravel())
    if floors and marked:  # the footnote explains marks: none, no footnote
        shown = set(results["dataset"])
        per_dataset = [
            ", ".join(f"{m} {f[m]:.{digits}f}" for m in metrics if m in f) + f" on {d}"
            for d, f in floors.items()
            if d in shown and any(m in f for m in metrics)
        ]
        if per_dataset:
            lines += [
                "",
                f"{BELOW_MAJORITY} below the majority-class predictor: "
                f"{'; '.join(per_dataset)}.",
            ]
    return "\n".join(lines)


#: The mark of a mean below the majority-class predictor in :func:`format_table`.
BELOW_MAJORITY = "†"


def _column_keys(results: Any, metrics: Sequence[str]) -> dict[str, tuple]:
    """Column label -> (dataset, mechanism, rate label, metric suffix), as
    :func:`_wide_table` and :func:`format_table` name the columns."""
    keys: dict[str, tuple] = {}
    for m in metrics:
        table = summary_table(results, m).reset_index()
        multi = table[["mechanism", "rate"]].drop_duplicates().shape[0] > 1
        suffix = f" {m}" if len(metrics) > 1 else ""
        for d, mech, rate in table[["dataset", "mechanism", "rate"]].itertuples(
            index=False
        ):
            rate_label = f"{rate * 100:.3g}%"
            label = f"{d} {mech} {rate_label}" if multi else str(d)
            keys[label + suffix] = (d, mech, rate_label, suffix.strip())
    return keys


def majority_scores(y: Any) -> dict[str, float]:
    """The scores of the majority-class predictor on labels ``y``.

    It always predicts the most frequent class: its accuracy is that class's
    share, its balanced accuracy one over the number of classes. A method
    scoring below it has learnt less than the class frequencies.

    Parameters
    ----------
    y : array-like of shape (n_samples,)

    Returns
    -------
    scores : dict
        ``{"accuracy": ..., "balanced_accuracy": ...}``.

    Examples
    --------
    >>> from missingkernels.experiments import majority_scores
    >>> majority_scores(["a", "a", "a", "b"])
    {'accuracy': 0.75, 'balanced_accuracy': 0.5}
    """
    _, counts = np.unique(np.asarray(y), return_counts=True)
    return {
        "accuracy": float(counts.max() / counts.sum()),
        "balanced_accuracy": 1.0 / counts.size,
    }


def _wide_table(
    results: Any,
    metric: str,
    digits: int,
    floors: Mapping[str, float] | None = None,
) -> Any:
    """``mean ± std`` cells of one metric: methods x dataset columns."""
    table = summary_table(results, metric).reset_index()
    multi = table[["mechanism", "rate"]].drop_duplicates().shape[0] > 1
    table["column"] = table["dataset"]
    if multi:
        table["column"] = (
            table["dataset"]
            + " "
            + table["mechanism"]
            + " "
            # 3 significant digits: a data set's own 0.15% is not shown as 0%.
            + (table["rate"] * 100).map(lambda v: f"{v:.3g}%")
        )

    def cell(r: Any) -> str:
        std = "" if np.isnan(r["std"]) else f" ± {r['std']:.{digits}f}"
        flag = f" ({int(r['n_failed'])} failed)" if r["n_failed"] else ""
        floor = (floors or {}).get(r["dataset"])
        below = f" {BELOW_MAJORITY}" if floor is not None and r["mean"] < floor else ""
        return f"{r['mean']:.{digits}f}{std}{flag}{below}"

    table["cell"] = table.apply(cell, axis=1)
    wide = table.pivot(index="method", columns="column", values="cell").fillna("-")
    # Columns in (dataset, mechanism, numeric rate) order, not as strings.
    order = table.sort_values(["dataset", "mechanism", "rate"])["column"].unique()
    return wide[list(order)]


def block_scores(
    results: Any, metric: str = "accuracy", blocks: Sequence[str] = _BLOCK
) -> Any:
    """Mean score per block (by default dataset x mechanism x rate) and method.

    Parameters
    ----------
    results : pandas.DataFrame
    metric : str, default="accuracy"
    blocks : sequence of str
        Columns that define one block of the Friedman test.

    Returns
    -------
    scores : pandas.DataFrame
        One row per block, one column per method; blocks where a method has
        no score are dropped (the Friedman test needs complete blocks).
    """
    rows = _check_results(results, metric)
    wide = rows.groupby([*blocks, "method"])["score"].mean().unstack("method")
    return wide.dropna(axis=0, how="any")


@dataclass(frozen=True)
class FriedmanNemenyi:
    """Result of :func:`friedman_nemenyi`.

    Attributes
    ----------
    statistic : float
        Friedman's chi-square statistic.
    pvalue : float
        Its p-value (chi-square with k - 1 degrees of freedom).
    mean_ranks : pandas.Series
        Average rank of each method over the blocks (1 = best).
    nemenyi_pvalues : pandas.DataFrame
        Pairwise p-values of the Nemenyi post hoc test.
    critical_difference : float
        Smallest significant difference of mean ranks at ``alpha``.
    n_blocks : int
    alpha : float
    """

    statistic: float
    pvalue: float
    mean_ranks: Any
    nemenyi_pvalues: Any
    critical_difference: float
    n_blocks: int
    alpha: float


def _check_scores(
    pd: Any, scores: Any, alpha: float, methods: int, blocks: int, need: str
) -> None:
    """A score table of blocks x methods: a DataFrame of at least ``methods``
    columns and ``blocks`` rows without missing cells (``need`` says so in
    the error), and ``alpha`` in (0, 1)."""
    if not isinstance(scores, pd.DataFrame):
        raise TypeError("scores must be a pandas DataFrame of blocks x methods.")
    if scores.shape[1] < methods or scores.shape[0] < blocks:
        raise ValueError(
            f"{need}; got {scores.shape[1]} methods and {scores.shape[0]} blocks."
        )
    if scores.isna().to_numpy().any():
        raise ValueError("scores has missing cells; drop incomplete blocks first.")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}.")


def friedman_nemenyi(
    scores: Any, *, alpha: float = 0.05, higher_is_better: bool = True
) -> FriedmanNemenyi:
    """Friedman test over blocks and the Nemenyi post hoc test (Demšar 2006).

    Parameters
    ----------
    scores : pandas.DataFrame
        Blocks x methods (e.g. from :func:`block_scores`), no missing cell.
    alpha : float, default=0.05
        Level of the critical difference.
    higher_is_better : bool, default=True
        Rank 1 goes to the highest score.

    Returns
    -------
    result : FriedmanNemenyi

    References
    ----------
    .. [1] J. Demšar. "Statistical comparisons of classifiers over multiple
       data sets", JMLR 7 (2006) 1-30.

    Examples
    --------
    >>> import pandas as pd
    >>> from missingkernels.experiments import friedman_nemenyi
    >>> s = pd.DataFrame({"a": [0.9, 0.8, 0.85, 0.7], "b": [0.8, 0.7, 0.8, 0.6],
    ...                   "c": [0.7, 0.75, 0.6, 0.65]})
    >>> res = friedman_nemenyi(s)
    >>> res.mean_ranks.round(2).to_dict()
    {'a': 1.0, 'b': 2.5, 'c': 2.5}
    """
    pd = import_optional("pandas", "experiments", "friedman_nemenyi")
    sp = import_optional("scikit_posthocs", "experiments", "friedman_nemenyi")
    from scipy import stats

    need = "The Friedman test needs at least 3 methods and 2 blocks"
    _check_scores(pd, scores, alpha, 3, 2, need)
    values = scores.to_numpy(dtype=float)
    signed = -values if higher_is_better else values
    ranks = np.apply_along_axis(stats.rankdata, 1, signed)
    mean_ranks = pd.Series(ranks.mean(axis=0), index=scores.columns).sort_values()
    stat, pvalue = stats.friedmanchisquare(*values.T)
    nemenyi = sp.posthoc_nemenyi_friedman(pd.DataFrame(values, columns=scores.columns))
    n, k = values.shape
    q = stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0)
    cd = float(q * np.sqrt(k * (k + 1) / (6.0 * n)))
    return FriedmanNemenyi(
        statistic=float(stat),
        pvalue=float(pvalue),
        mean_ranks=mean_ranks,
        nemenyi_pvalues=nemenyi,
        critical_difference=cd,
        n_blocks=n,
        alpha=alpha,
    )


def holm(pvalues: Any) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values.

    Parameters
    ----------
    pvalues : array-like of float
        The raw p-values of the family (NaN entries are left NaN and not
        counted).

    Returns
    -------
    adjusted : ndarray of float
        ``min(1, max over j <= i of (m - j + 1) p_(j))`` for the i-th
        smallest p-value, in the input's order; reject at level alpha where
        it is at most alpha (controls the family-wise error rate).

    References
    ----------
    .. [1] S. Holm. "A simple sequentially rejective multiple test
       procedure", Scandinavian Journal of Statistics 6 (1979) 65-70.

    Examples
    --------
    >>> from missingkernels.experiments import holm
    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


@dataclass(frozen=True)
class PairwiseWilcoxon:
    """Result of :func:`pairwise_wilcoxon`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per pair of methods (``method_a``, ``method_b``, in the
        order of the score columns): ``n_blocks``, ``wins``/``ties``/
        ``losses`` of ``method_a`` against ``method_b`` over the blocks,
        ``median_difference`` (a - b; positive: a scores higher),
        ``statistic`` and ``pvalue`` of the two-sided Wilcoxon signed-rank
        test, and ``pvalue_holm``, Holm-adjusted over all pairs.
    alpha : float
        The level :meth:`significant` and the report use.
    higher_is_better : bool
    """

    table: Any
    alpha: float
    higher_is_better: bool

    def significant(self) -> Any:
        """The rows of the pairs whose Holm-adjusted p-value is at most alpha."""
        return self.table[self.table["pvalue_holm"] <= self.alpha]

    def matrix(self, column: str = "pvalue_holm") -> Any:
        """Methods x methods matrix of one column (symmetric for p-values,
        ``wins`` of the row's method against the column's for counts)."""
        pd = import_optional("pandas", "experiments", "PairwiseWilcoxon.matrix")
        methods = list(
            dict.fromkeys([*self.table["method_a"], *self.table["method_b"]])
        )
        out = pd.DataFrame(np.nan, index=methods, columns=methods)
        mirror = {"wins": "losses", "losses": "wins"}.get(column, column)
        for row in self.table.itertuples(index=False):
            out.loc[row.method_a, row.method_b] = getattr(row, column)
            value = getattr(row, mirror)
            if column == "median_difference":
                value = -value
            out.loc[row.method_b, row.method_a] = value
        return out


def pairwise_wilcoxon(
    scores: Any,
    *,
    alpha: float = 0.05,
    higher_is_better: bool = True,
    tie_tolerance: float = 0.0,
    zero_method: str = "wilcox",
) -> PairwiseWilcoxon:
    """Pairwise Wilcoxon signed-rank tests (Holm-corrected) and win/tie/loss
    counts over blocks.

    For every pair of methods, the per-block score differences are tested
    with :func:`scipy.stats.wilcoxon` (two-sided); the p-values of all
    ``k (k - 1) / 2`` pairs are adjusted together by Holm's method
    (:func:`holm`). Wins, ties and losses count the blocks where the first
    method scores better, within ``tie_tolerance``, or worse.

    Parameters
    ----------
    scores : pandas.DataFrame
        Blocks x methods (e.g. from :func:`block_scores`), no missing cell.
    alpha : float, default=0.05
    higher_is_better : bool, default=True
        What a win is (the test itself is two-sided).
    tie_tolerance : float, default=0.0
        Differences of at most this size are ties.
    zero_method : {"wilcox", "pratt", "zsplit"}, default="wilcox"
        How :func:`scipy.stats.wilcoxon` treats zero differences
        (``"wilcox"``: dropped). A pair whose differences are all zero has
        p-value 1.

    Returns
    -------
    result : PairwiseWilcoxon

    References
    ----------
    .. [1] J. Demšar. "Statistical comparisons of classifiers over multiple
       data sets", JMLR 7 (2006) 1-30, sec. 3.1.3 and 3.2.

    Examples
    --------
    >>> import pandas as pd
    >>> from missingkernels.experiments import pairwise_wilcoxon
    >>> s = pd.DataFrame({"a": [0.9, 0.8, 0.85, 0.7, 0.75, 0.8],
    ...                   "b": [0.8, 0.7, 0.8, 0.6, 0.7, 0.8]})
    >>> row = pairwise_wilcoxon(s).table.iloc[0]
    >>> [int(row[c]) for c in ("wins", "ties", "losses")]
    [5, 1, 0]
    >>> round(float(row["pvalue"]), 4)
    0.0625
    """
    pd = import_optional("pandas", "experiments", "pairwise_wilcoxon")
    from scipy import stats

    need = "Pairwise tests need at least 2 methods and 1 block"
    _check_scores(pd, scores, alpha, 2, 1, need)
    if not tie_tolerance >= 0.0:
        raise ValueError(f"tie_tolerance must be >= 0, got {tie_tolerance}.")
    values = scores.to_numpy(dtype=float)
    methods = list(scores.columns)
    rows = []
    for i in range(len(methods)):
        for j in range(i + 1, len(methods)):
            d = values[:, i] - values[:, j]
            better = d if higher_is_better else -d
            tie = np.abs(d) <= tie_tolerance
            if np.all(d == 0.0):
                statistic, pvalue = np.nan, 1.0
            else:
                res = stats.wilcoxon(
                    values[:, i], values[:, j], zero_method=zero_method
                )
                statistic, pvalue = float(res.statistic), float(res.pvalue)
            rows.append(
                {
                    "method_a": methods[i],
                    "method_b": methods[j],
                    "n_blocks": int(d.size),
                    "wins": int(np.sum((better > 0) & ~tie)),
                    "ties": int(np.sum(tie)),
                    "losses": int(np.sum((better < 0) & ~tie)),
                    "median_difference": float(np.median(d)),
                    "statistic": statistic,
                    "pvalue": pvalue,
                }
            )
    table = pd.DataFrame(rows)
    table["pvalue_holm"] = holm(table["pvalue"].to_numpy())
    return PairwiseWilcoxon(table=table, alpha=alpha, higher_is_better=higher_is_better)


def format_pairwise(result: PairwiseWilcoxon, digits: int = 3) -> str:
    """Markdown table of :func:`pairwise_wilcoxon`, one row per pair.

    Parameters
    ----------
    result : PairwiseWilcoxon
    digits : int, default=3

    Returns
    -------
    markdown : str
        Columns: the pair, wins/ties/losses of the first method, the median
        difference, the raw and the Holm-adjusted p-value (bold at most
        alpha).
    """
    lines = [
        "| method a | method b | a wins / ties / losses | median a - b | p | "
        "p (Holm) |",
        "|---|---|---|---|---|---|",
    ]
    for r in result.table.itertuples(index=False):
        holm_p = f"{r.pvalue_holm:.{digits}g}"
        if r.pvalue_holm <= result.alpha:
            holm_p = f"**{holm_p}**"
        lines.append(
            f"| {r.method_a} | {r.method_b} | {r.wins} / {r.ties} / {r.losses} | "
            f"{r.median_difference:+.{digits}f} | {r.pvalue:.{digits}g} | {holm_p} |"
        )
    return "\n".join(lines)


#: Sixteen colours told apart at a glance (matplotlib's tab10, black, three
#: dark ones of tab20b, a gold and a dark teal): one per method of a
#: critical-difference diagram.
CD_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#000000",
    "#393b79",
    "#637939",
    "#e7ba52",
    "#004d4d",
    "#7b4173",
)


def plot_critical_difference(
    result: FriedmanNemenyi, path: str | Path | None = None, title: str = ""
) -> Any:
    """Critical-difference diagram of a :class:`FriedmanNemenyi` result.

    The mean ranks on an axis from 1 to k (the number of methods), each
    method in its own colour (distinct for up to 16 methods, then repeated),
    bars joining the methods the Nemenyi test does not tell apart, and a
    reference bar as long as the critical difference, drawn from the best
    rank. Methods with the same mean rank have their markers stacked below
    the axis at that rank, on their shared line, so that none hides another.

    Parameters
    ----------
    result : FriedmanNemenyi
    path : path or None
        Save the figure there (PNG by extension).
    title : str, default=""

    Returns
    -------
    figure : matplotlib.figure.Figure
    """
    matplotlib = import_optional("matplotlib", "plots", "plot_critical_difference")

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    sp = import_optional("scikit_posthocs", "experiments", "plot_critical_difference")

    ranks = result.mean_ranks
    k = len(ranks)
    colours = {m: CD_COLOURS[i % len(CD_COLOURS)] for i, m in enumerate(ranks.index)}
    fig, ax = plt.subplots(figsize=(7, 1.4 + 0.3 * k))
    drawn = sp.critical_difference_diagram(
        ranks,
        result.nemenyi_pvalues,
        alpha=result.alpha,
        ax=ax,
        color_palette=colours,
        label_fmt_left="{label} ({rank:.2f})",
        label_fmt_right="({rank:.2f}) {label}",
    )
    _stack_tied_markers(drawn.get("markers", []))
    ax.set_xlim(1.0 - 0.05 * k, k + 0.05 * k)
    ax.set_xticks(np.arange(1, k + 1))
    # The CD reference bar, above the rank axis and its labels, from rank 1.
    cd = result.critical_difference
    ax.plot([1.0, 1.0 + cd], [1.3, 1.3], color="k", linewidth=2, clip_on=False)
    for end in (1.0, 1.0 + cd):
        ax.plot([end, end], [1.15, 1.45], color="k", linewidth=1, clip_on=False)
    ax.text(1.0 + cd / 2, 1.55, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)
    bottom, _ = ax.get_ylim()
    ax.set_ylim(bottom, 2.2)
    label = (
        f"Friedman p = {result.pvalue:.3g}, {result.n_blocks} blocks; "
        f"CD = {result.critical_difference:.2f} (Nemenyi, alpha = {result.alpha})"
    )
    ax.set_title(f"{title}\n{label}" if title else label, fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _stack_tied_markers(markers: Sequence[Any]) -> None:
    """Move the 2nd, 3rd, ... marker of a tied mean rank below the axis.

    scikit-posthocs draws every marker at (rank, 0): at a tie the last one
    drawn hides the others. Each marker keeps its rank (x) and its colour and
    sits on the vertical line the tied methods' labels share (the crossbars
    start one unit below the axis).
    """
    stacks: dict[float, int] = {}
    for marker in markers:
        offsets = marker.get_offsets()
        if len(offsets) != 1:
            continue
        x = float(offsets[0][0])
        level = stacks.get(round(x, 9), 0)
        stacks[round(x, 9)] = level + 1
        if level:
            marker.set_offsets([[x, -0.3 * level]])


def plot_rate_curves(
    results: Any,
    metric: str = "accuracy",
    path: str | Path | None = None,
    mechanism: str | None = None,
) -> Any:
    """Score versus missing rate, one panel per dataset, one line per method.

    Points are the mean over draws; error bars the standard deviation over
    draws (as in the genRBF paper's Figures 3-5 and Anderson & Gupta's Fig. 1).

    Parameters
    ----------
    results : pandas.DataFrame
    metric : str, default="accuracy"
    path : path or None
        Save the figure there.
    mechanism : str or None
        Only this mechanism (default: the only one present).

    Returns
    -------
    figure : matplotlib.figure.Figure
    """
    matplotlib = import_optional("matplotlib", "plots", "plot_rate_curves")

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    table = summary_table(results, metric).reset_index()
    mechs = sorted(table["mechanism"].unique())
    if mechanism is None:
        if len(mechs) > 1:
            raise ValueError(f"Several mechanisms {mechs}: choose one with mechanism=.")
        mechanism = mechs[0]
    table = table[table["mechanism"] == mechanism]
    datasets = sorted(table["dataset"].unique())
    # One colour per method in every panel, distinct for up to 16 methods
    # (matplotlib's default cycle repeats after 10).
    methods = sorted(table["method"].unique())
    colours = {m: CD_COLOURS[i % len(CD_COLOURS)] for i, m in enumerate(methods)}
    ncols = min(3, len(datasets))
    nrows = int(np.ceil(len(datasets) / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False
    )
    for ax, name in zip(axes.flat, datasets, strict=False):
        sub = table[table["dataset"] == name]
        for method, line in sub.groupby("method"):
            line = line.sort_values("rate")
            ax.errorbar(
                100 * line["rate"],
                line["mean"],
                yerr=line["std"].fillna(0.0),
                marker="o",
                color=colours[method],
                capsize=2,
                label=method,
            )
        ax.set_title(name)
        ax.set_xlabel(f"missing entries (%), {mechanism.upper()}")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(datasets) :]:
        ax.axis("off")
    # One legend for the figure, right of the panels: inside a panel a dozen
    # methods' labels hide the points they name. Every panel's methods (a
    # method may be missing from one dataset), in the methods' order.
    named: dict[str, Any] = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            named.setdefault(label, handle)
    fig.tight_layout()
    fig.legend(
        [named[m] for m in methods if m in named],
        [m for m in methods if m in named],
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        fontsize=8,
        frameon=False,
    )
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig
