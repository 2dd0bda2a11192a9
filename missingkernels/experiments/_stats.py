"""Tables, Friedman/Nemenyi statistics and figures of the method comparisons.

pandas, scipy, scikit-posthocs and matplotlib are imported inside the
functions (the ``experiments``/``plots`` extras).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._optional import import_optional

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


def format_table(results: Any, metric: str = "accuracy", digits: int = 3) -> str:
    """Markdown table: rows = methods, columns = datasets, cells ``mean ± std``.

    Parameters
    ----------
    results : pandas.DataFrame
        Long-format rows of :func:`run_comparison`.
    metric : str, default="accuracy"
    digits : int, default=3

    Returns
    -------
    markdown : str
    """
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
        return f"{r['mean']:.{digits}f}{std}{flag}"

    table["cell"] = table.apply(cell, axis=1)
    wide = table.pivot(index="method", columns="column", values="cell").fillna("-")
    # Columns in (dataset, mechanism, numeric rate) order, not as strings.
    order = table.sort_values(["dataset", "mechanism", "rate"])["column"].unique()
    wide = wide[list(order)]
    header = "| method | " + " | ".join(wide.columns) + " |"
    sep = "|---|" + "---|" * len(wide.columns)
    lines = [header, sep]
    for method, row in wide.iterrows():
        lines.append(f"| {method} | " + " | ".join(row.tolist()) + " |")
    return "\n".join(lines)


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

    if not isinstance(scores, pd.DataFrame):
        raise TypeError("scores must be a pandas DataFrame of blocks x methods.")
    if scores.shape[1] < 3 or scores.shape[0] < 2:
        raise ValueError(
            "The Friedman test needs at least 3 methods and 2 blocks; got "
            f"{scores.shape[1]} methods and {scores.shape[0]} blocks."
        )
    if scores.isna().to_numpy().any():
        raise ValueError("scores has missing cells; drop incomplete blocks first.")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}.")
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


def plot_critical_difference(
    result: FriedmanNemenyi, path: str | Path | None = None, title: str = ""
) -> Any:
    """Critical-difference diagram of a :class:`FriedmanNemenyi` result.

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

    k = len(result.mean_ranks)
    fig, ax = plt.subplots(figsize=(7, 1.0 + 0.3 * k))
    sp.critical_difference_diagram(
        result.mean_ranks, result.nemenyi_pvalues, alpha=result.alpha, ax=ax
    )
    label = (
        f"Friedman p = {result.pvalue:.3g}, {result.n_blocks} blocks; "
        f"CD = {result.critical_difference:.2f} (Nemenyi, alpha = {result.alpha})"
    )
    ax.set_title(f"{title}\n{label}" if title else label, fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


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
                capsize=2,
                label=method,
            )
        ax.set_title(name)
        ax.set_xlabel(f"missing entries (%), {mechanism.upper()}")
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(datasets) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
