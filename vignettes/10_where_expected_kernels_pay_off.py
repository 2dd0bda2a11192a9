"""Vignette 10: where a kernel that averages over the missing entries pays off.

Four settings in which theory favours expected kernels (genRBF, expected
RBF) over imputation and over models that learn from the missingness mask,
each tested with the same nested CV and the same honesty as vignettes 2 and 8:

(a) missing values only at prediction time: complete training rows, 10-70%
    missing in the test rows (the density and the imputers are fitted on
    complete data; indicator columns and hgb never saw a missing value),
    with genRBF also over a Gaussian mixture (``genrbf_mixture``, 1-6
    components by BIC) for data one Gaussian describes badly;
(b) a shift in missingness: 10% missing in training, 50% in prediction,
    beside no shift (50% in both) and (a) at 50%;
(c) informative missingness (MNAR, eq. 27, and self-masking, where large
    values go missing), with genRBF times a factor on the missingness masks
    (``genrbf_mask``: genRBF's ``missingness_weight``, ``(1 - u) + u * share
    of features missing in both or observed in both``, ``u`` searched in
    {0.25, 0.5}) against the indicator pipelines and hgb;
(d) small samples at a high rate: 50, 100 and 200 training rows at 50% MAR.

Run from the repository root::

    python vignettes/10_where_expected_kernels_pay_off.py --quick   # CI
    python vignettes/10_where_expected_kernels_pay_off.py --full

Each setting runs as parts with their own results file under
``results/10_where_expected_kernels_pay_off/<mode>/``; rerun the same command
to resume, ``--parts a,b`` to run some now, ``--draws N`` for the first N
draws, ``--n-jobs 2``, ``--dask ADDRESS``, ``--report-only``.

Protocol (full): the lighter one of vignette 8 (5 outer x 3 inner folds, C in
{2^-3, ..., 2^5} and gamma in {2^-5, ..., 2^3}, step 2^2; hgb over its 9
settings), 3 draws, on australian, pima_indians_diabetes and
banknote_authentication (690-1372 rows, enough for 200 training rows in
(d)). Budget, estimated from vignette 2's cell times on these three datasets
scaled to this protocol as in vignette 8: per (dataset, mechanism, rate,
draw, fold) the eight methods of (a), (b) and (d) cost about 26 s (iterative
imputation 13 s of it), the six of (c) about 12 s; (a) has 360 such units, (b)
180, (c) 180 and (d) 135, so the 6,480 cells come to about 5.5 core-hours,
under 3 hours on 2 cores. Measured (2026-11-27, 2 cores, nothing else
running): 54 core-minutes summed over cells, 27 minutes of wall time with
``--n-jobs 2`` (a 10.6, b 8.0, c 5.4, d 3.2), six times under the estimate;
then (a)'s ``genrbf_mixture`` (BIC over 1-6 components, 1.6-3.6 s a cell
against genRBF's 0.3 s), 13.7 core-minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import platform
import shlex
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    RESULTS,
    _backend,
    _exit_on_sigterm,
    _finished_cells,
    _record_run,
    _runs_summary,
    complete_rows,
    hgb_single_point,
    load,
)

import missingkernels
from missingkernels.experiments import (
    CELL_COLUMNS,
    MethodSpec,
    block_scores,
    read_results,
    resolve_method,
    run_comparison,
)
from missingkernels.experiments._tables import fit_tables

NAME = "10_where_expected_kernels_pay_off"
TITLE = "Where expected kernels pay off"
C_GRID = [2.0**k for k in (-3, -1, 1, 3, 5)]
GAMMA_GRID = [2.0**k for k in (-5, -3, -1, 1, 3)]
OURS = ("genrbf", "expected_rbf", "genrbf_mask", "genrbf_mixture")
QUESTION = (
    "In the settings where theory favours a kernel that averages over the "
    "missing entries (missing values only at prediction time, more missing "
    "values at prediction than in training, informative missingness, few "
    "training rows at a high rate), is genRBF ahead of imputation pipelines, "
    "indicator pipelines and gradient boosting?"
)


def genrbf_mask(C_grid: Sequence[float], gamma_grid: Sequence[float]) -> MethodSpec:
    """genRBF times the factor on the masks (its ``missingness_weight``),
    ``u`` searched with gamma and C."""
    base = resolve_method("genrbf", C_grid=C_grid, gamma_grid=gamma_grid)
    return dataclasses.replace(
        base,
        name="genrbf_mask",
        grid={**base.grid, "missingness_weight": [0.25, 0.5]},
    )


def genrbf_mixture(C_grid: Sequence[float], gamma_grid: Sequence[float]) -> MethodSpec:
    """genRBF over a Gaussian mixture whose number of components (1-6) BIC
    chooses on each training set: the density for data a single Gaussian
    describes badly (banknote_authentication in (a))."""
    from missingkernels.densities import GaussianMixtureDensity

    spec = resolve_method(
        "genrbf",
        C_grid=C_grid,
        gamma_grid=gamma_grid,
        kernel_params={
            "density": GaussianMixtureDensity(n_components="bic", random_state=0)
        },
    )
    return dataclasses.replace(spec, name="genrbf_mixture")


def parts(quick: bool) -> dict[str, dict]:
    """Setting -> the run_comparison arguments of each of its parts."""
    hgb: Any = hgb_single_point() if quick else "hgb"
    if quick:
        base = dict(
            n_draws=1,
            outer_folds=2,
            inner_folds=2,
            C_grid=[1.0, 8.0],
            gamma_grid=[2.0**-5, 2.0**-3],
        )
        names = ["statlog_heart"]
        data = {k: complete_rows(v) for k, v in load(names, max_rows=150).items()}
        test_rates, sizes = [0.5], [40]
        core = ["genrbf", "mean", "mean_indicator", hgb]
    else:
        base = dict(
            n_draws=3,
            outer_folds=5,
            inner_folds=3,
            C_grid=C_GRID,
            gamma_grid=GAMMA_GRID,
        )
        names = ["australian", "pima_indians_diabetes", "banknote_authentication"]
        data = {k: complete_rows(v) for k, v in load(names).items()}
        test_rates, sizes = [0.1, 0.3, 0.5, 0.7], [50, 100, 200]
        core = [
            "genrbf",
            "expected_rbf",
            "mean",
            "knn",
            "iterative",
            "mean_indicator",
            "knn_indicator",
            hgb,
        ]
    mask = genrbf_mask(base["C_grid"], base["gamma_grid"])
    informative = ["genrbf", mask, "mean", "mean_indicator", hgb]
    if not quick:
        informative.insert(3, "knn_indicator")
    common = dict(base, datasets=data)
    out = {
        "a": {
            "a": dict(
                common,
                methods=core,
                mechanisms=["mcar", "mar"],
                rates=test_rates,
                train_rate=0.0,
            )
        },
        "b": {
            "b_shift": dict(
                common,
                methods=core,
                mechanisms=["mcar", "mar"],
                rates=[0.5],
                train_rate=0.1,
            ),
            "b_same": dict(
                common, methods=core, mechanisms=["mcar", "mar"], rates=[0.5]
            ),
        },
        "c": {
            "c": dict(
                common,
                methods=informative,
                mechanisms=["mnar", "self_masking"],
                rates=[0.5] if quick else [0.3, 0.5],
            )
        },
        "d": {
            f"d_{n}": dict(
                common, methods=core, mechanisms=["mar"], rates=[0.5], train_size=n
            )
            for n in sizes
        },
    }
    if not quick:
        # Added after (a)'s first run: the same masks and folds (their seeds
        # do not depend on the methods), one more kernel.
        out["a"]["a_mixture"] = dict(
            out["a"]["a"],
            methods=[genrbf_mixture(base["C_grid"], base["gamma_grid"])],
        )
    return out


# -- reports ------------------------------------------------------------------


def _column_table(
    frames: dict[str, Any], columns: str
) -> tuple[list[str], Any, dict[str, Any]]:
    """Markdown: per method, mean accuracy over datasets and draws for each
    column (one per frame), and the mean rank over the (dataset, mechanism,
    rate, draw) blocks of that frame; returns the lines, the means and each
    column's block scores (blocks x methods, only blocks every method
    finished)."""
    import pandas as pd

    means, ranks, scores = {}, {}, {}
    for label, res in frames.items():
        s = block_scores(
            res[res["error"] == ""], "accuracy", blocks=(*CELL_COLUMNS[:4],)
        ).dropna()
        scores[label] = s
        means[label] = s.mean()
        ranks[label] = s.rank(axis=1, ascending=False).mean()
    mean = pd.DataFrame(means)
    rank = pd.DataFrame(ranks)
    order = mean.mean(axis=1).sort_values(ascending=False).index
    head = " | ".join(f"{c}: accuracy (rank)" for c in mean.columns)
    lines = [f"| method | {head} |", "|---|" + "---|" * len(mean.columns)]
    for m in order:
        cells = " | ".join(
            f"{mean.loc[m, c]:.3f} ({rank.loc[m, c]:.2f})"
            if not np.isnan(mean.loc[m, c])
            else "-"
            for c in mean.columns
        )
        lines.append(f"| {m} | {cells} |")
    lines.append("")
    lines.append(
        f"Columns: {columns}. Accuracy: mean over the (dataset, mechanism, "
        "rate, draw) blocks that every method finished, each the mean over "
        "outer folds; rank: mean rank over the same blocks (1 = best)."
    )
    return lines, mean, scores


def _best(scores: Any, methods: Sequence[str]) -> str:
    """The method of ``methods`` with the highest score (a Series)."""
    return max(methods, key=lambda m: scores[m])


def _wilcoxon_p(scores: Any, a: str, b: str) -> float:
    """Two-sided Wilcoxon signed-rank p of methods ``a`` and ``b`` over the
    blocks (rows) of ``scores``."""
    from missingkernels.experiments import pairwise_wilcoxon

    return float(pairwise_wilcoxon(scores[[a, b]]).table["pvalue"].iloc[0])


def _verdict(mean: Any, scores: dict[str, Any], ours: Sequence[str]) -> tuple[str, str]:
    """Our best kernel against the best other method, per column, with a
    two-sided Wilcoxon signed-rank test over the column's blocks (Holm over
    the columns of the setting): the sentence for the answer, and the same
    with every column's numbers for the setting's section, both without a
    final full stop."""
    from missingkernels.experiments import holm

    have = [m for m in ours if m in mean.index]
    others = [m for m in mean.index if m not in ours]
    if not have or not others:
        return ("not enough methods ran for a verdict",) * 2
    rows = []
    for col in mean.columns:
        o, t = _best(mean[col], have), _best(mean[col], others)
        s = scores[col]
        p = _wilcoxon_p(s, o, t) if len(s) >= 2 else np.nan
        rows.append((col, o, t, mean.loc[o, col] - mean.loc[t, col], p, len(s)))
    adjusted = holm(np.array([r[4] for r in rows], dtype=float))
    ahead = [r[0] for r in rows if r[3] > 0]
    sig_ahead = [
        r[0] for r, q in zip(rows, adjusted, strict=True) if r[3] > 0 and q <= 0.05
    ]
    sig_behind = [
        r[0] for r, q in zip(rows, adjusted, strict=True) if r[3] < 0 and q <= 0.05
    ]
    detail = "; ".join(
        f"{c}: {o} {mean.loc[o, c]:.3f} vs {t} {mean.loc[t, c]:.3f}, "
        f"{d:+.3f}, Holm p {q:.2g} over {n} blocks"
        for (c, o, t, d, _, n), q in zip(rows, adjusted, strict=True)
    )
    short = (
        f"our best kernel is ahead of the best other method in {len(ahead)} of "
        f"{len(rows)} columns, significantly in {len(sig_ahead)}"
        + (f" ({', '.join(sig_ahead)})" if sig_ahead else "")
        + f", and significantly behind in {len(sig_behind)}"
        + (f" ({', '.join(sig_behind)})" if sig_behind else "")
    )
    return short, f"{short} ({detail})"


def _dataset_table(
    frames: dict[str, Any], ours: Sequence[str]
) -> tuple[list[str], str]:
    """Markdown: per dataset and column, our best kernel's mean accuracy
    minus the best other method's (named), over that dataset's blocks; and a
    sentence on how many cells are ahead and where the largest gaps are."""
    cells: dict[str, dict[str, tuple[float, str]]] = {}
    for label, res in frames.items():
        ok = res[(res["error"] == "") & (res["metric"] == "accuracy")]
        for dataset, g in ok.groupby("dataset"):
            m = g.groupby("method")["score"].mean()
            have = [x for x in ours if x in m.index]
            others = [x for x in m.index if x not in ours]
            if have and others:
                o, t = _best(m, have), _best(m, others)
                cells.setdefault(str(dataset), {})[label] = (m[o] - m[t], t)
    if not cells:
        return [], ""
    labels = list(frames)
    lines = [
        "| dataset | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    for dataset, row in cells.items():
        lines.append(
            f"| {dataset} | "
            + " | ".join(
                f"{row[c][0]:+.3f} ({row[c][1]})" if c in row else "-" for c in labels
            )
            + " |"
        )
    flat = [(d, c, v) for d, row in cells.items() for c, (v, _) in row.items()]
    low = min(flat, key=lambda x: x[2])
    high = max(flat, key=lambda x: x[2])
    extremes = []
    if low[2] < 0:
        extremes.append(f"furthest behind {low[2]:+.3f} ({low[0]}, {low[1]})")
    if high[2] > 0:
        extremes.append(f"furthest ahead {high[2]:+.3f} ({high[0]}, {high[1]})")
    summary = (
        f"by dataset, ahead in {sum(v > 0 for *_, v in flat)} of {len(flat)} "
        f"(dataset, column) cells" + (f", {' and '.join(extremes)}" if extremes else "")
    )
    lines += [
        "",
        "Our best kernel's accuracy minus the best other method's (named), "
        "per dataset, over its draws, mechanisms and outer folds: "
        f"{summary}.",
    ]
    return lines, summary


def _judge(
    cols: dict[str, Any], mean: Any, scores: dict[str, Any]
) -> tuple[str, str, list[str]]:
    """A setting's verdict: the answer's sentence, the section's, and the
    per-dataset table."""
    v, long = _verdict(mean, scores, OURS)
    table, where = _dataset_table(cols, OURS)
    if where:
        v, long = f"{v}; {where}", f"{long}; {where}"
    return f"{v}.", f"{long}.", table


def _sections(frames: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The Markdown sections and the answer sentences of the settings run."""
    import pandas as pd

    body: list[str] = []
    answer: list[str] = []
    if "a" in frames:
        res = pd.concat([f for k, f in frames.items() if k in ("a", "a_mixture")])
        cols = {f"test {100 * r:g}%": g for r, g in res.groupby("rate")}
        lines, mean, scores = _column_table(cols, "missing rate of the test rows")
        v, long, by_dataset = _judge(cols, mean, scores)
        answer.append(f"(a) Missing only at prediction time: {v}")
        body += [
            "## (a) Missing values only at prediction time",
            "",
            "Complete training rows (the density, imputers, indicator "
            "columns and hgb are fitted on complete data), MCAR and MAR "
            "missingness in the test rows. genrbf_mixture: genRBF over a "
            "Gaussian mixture with 1-6 components chosen by BIC on each "
            "training set (run after the others, on the same masks and "
            "folds; the table keeps the blocks every method finished).",
            "",
            *lines,
            "",
            *by_dataset,
            "",
            f"**Verdict:** {long}",
            "",
        ]
    if "b_shift" in frames or "b_same" in frames:
        cols = {}
        if "a" in frames:
            a = frames["a"]
            cols["train 0%"] = a[np.isclose(a["rate"], 0.5)]
        if "b_shift" in frames:
            cols["train 10%"] = frames["b_shift"]
        if "b_same" in frames:
            cols["train 50% (no shift)"] = frames["b_same"]
        cols = {k: v for k, v in cols.items() if not v.empty}
        lines, mean, scores = _column_table(cols, "missing rate of the training rows")
        v, long, by_dataset = _judge(cols, mean, scores)
        answer.append(f"(b) Shift to 50% missing at prediction: {v}")
        body += [
            "## (b) A shift in missingness between training and prediction",
            "",
            "50% missing in the test rows (MCAR and MAR); the training rows "
            "complete (from (a)), at 10%, or at 50% like the test rows.",
            "",
            *lines,
            "",
            *by_dataset,
            "",
            f"**Verdict:** {long}",
            "",
        ]
    if "c" in frames:
        res = frames["c"]
        cols = {
            f"{mech} {100 * r:g}%": g
            for (mech, r), g in res.groupby(["mechanism", "rate"])
        }
        lines, mean, scores = _column_table(cols, "mechanism and rate")
        v, long, by_dataset = _judge(cols, mean, scores)
        if {"genrbf", "genrbf_mask"} <= set(mean.index):
            gain = mean.loc["genrbf_mask"] - mean.loc["genrbf"]
            p_gain = {
                c: _wilcoxon_p(scores[c], "genrbf_mask", "genrbf") for c in gain.index
            }
            mask = (
                " The mask factor changes genRBF's accuracy by "
                + ", ".join(
                    f"{g:+.3f} ({c}, Wilcoxon p {p_gain[c]:.2g})"
                    for c, g in gain.items()
                )
                + "."
            )
            v, long = v + mask, long + mask
        answer.append(f"(c) Informative missingness: {v}")
        body += [
            "## (c) Informative missingness",
            "",
            "MNAR (eq. 27: removal driven by hidden features) and self-masking "
            "(a value's own size drives its removal); genrbf_mask multiplies "
            "genRBF by the mask factor, searched over u in {0.25, 0.5}; the "
            "indicator pipelines and hgb see the mask too.",
            "",
            *lines,
            "",
            *by_dataset,
            "",
            f"**Verdict:** {long}",
            "",
        ]
    small = {k: f for k, f in frames.items() if k.startswith("d_")}
    if small:
        cols = {
            f"n_train {k[2:]}": f
            for k, f in sorted(small.items(), key=lambda kv: int(kv[0][2:]))
        }
        lines, mean, scores = _column_table(cols, "training rows (50% MAR)")
        v, long, by_dataset = _judge(cols, mean, scores)
        answer.append(f"(d) Few training rows at 50% MAR: {v}")
        body += [
            "## (d) Small samples at a high rate",
            "",
            "A stratified subsample of each outer training set (the test rows "
            "whole), 50% MAR.",
            "",
            *lines,
            "",
            *by_dataset,
            "",
            f"**Verdict:** {long}",
            "",
        ]
    return body, answer


# -- driver -------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=TITLE)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true", help="small smoke run (CI)")
    mode.add_argument("--full", action="store_true", help="the full protocol")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--parts", help="run only these settings now (e.g. a,c)")
    parser.add_argument("--draws", type=int, help="run only the first N draws now")
    parser.add_argument("--dask", metavar="ADDRESS", help="Dask scheduler address")
    parser.add_argument(
        "--report-only", action="store_true", help="only rewrite the report"
    )
    args = parser.parse_args(argv)
    quick = bool(args.quick)
    settings = parts(quick)
    wanted = set(args.parts.split(",")) if args.parts else set(settings)
    out = RESULTS / NAME / ("quick" if quick else "full")
    out.mkdir(parents=True, exist_ok=True)
    script = os.path.relpath(sys.argv[0], Path(__file__).resolve().parent.parent)
    given = sys.argv[1:] if argv is None else list(argv)
    invocation = "python " + " ".join(shlex.quote(a) for a in [script, *given])
    runs = {
        part: (out / f"results_{part}.csv", kwargs)
        for setting, group in settings.items()
        for part, kwargs in group.items()
    }
    start = time.perf_counter()
    if not args.report_only:
        todo = [
            (path, dict(kwargs))
            for setting, group in settings.items()
            if setting in wanted
            for part, kwargs in group.items()
            for path in [runs[part][0]]
        ]
        before = sum(_finished_cells(path) for path, _ in todo)
        status = "interrupted"
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            with _backend(args.dask):
                for path, kwargs in todo:
                    n_draws = kwargs["n_draws"]
                    run_comparison(
                        kwargs.pop("datasets"),
                        kwargs.pop("methods"),
                        output=path,
                        n_jobs=-1 if args.dask else args.n_jobs,
                        progress=args.progress,
                        draws=None
                        if args.draws is None
                        else range(min(args.draws, n_draws)),
                        **kwargs,
                    )
            status = "finished"
        finally:
            signal.signal(signal.SIGTERM, previous)
            _record_run(
                out / "runs.csv",
                invocation,
                status=status,
                n_jobs=args.n_jobs,
                wall=time.perf_counter() - start,
                added=sum(_finished_cells(path) for path, _ in todo) - before,
            )
    frames = {
        part: read_results(path) for part, (path, _) in runs.items() if path.is_file()
    }
    if not frames:
        raise SystemExit(f"No results yet under {out}.")
    write_report(out, frames, runs, quick)
    return 0


def write_report(out: Path, frames: dict, runs: dict, quick: bool) -> None:
    body, answer = _sections(frames)
    seconds = {
        part: f.drop_duplicates([*CELL_COLUMNS, "method"])["cell_seconds"].sum()
        for part, f in frames.items()
    }
    planned = 0
    for _, kwargs in runs.values():
        n_rates = len(kwargs["rates"])
        planned += (
            len(kwargs["datasets"])
            * len(kwargs["mechanisms"])
            * n_rates
            * kwargs["n_draws"]
            * kwargs["outer_folds"]
            * len(kwargs["methods"])
        )
    done = sum(
        f.drop_duplicates([*CELL_COLUMNS, "method"]).shape[0] for f in frames.values()
    )
    status = "complete" if done >= planned else f"PARTIAL: {done} of {planned} cells"
    mode = "quick" if quick else "full"
    per_part = ", ".join(f"{part} {s / 60:.1f} min" for part, s in seconds.items())
    any_kwargs = next(iter(runs.values()))[1]
    lines = [
        f"# {TITLE} ({mode} mode)",
        "",
        f"**Question.** {QUESTION}",
        "",
        f"**Answer ({status}).** " + " ".join(answer),
        "",
        *body,
        "## Provenance",
        "",
        f"- Status: **{status}**.",
        f"- Command (from the repository root): `python vignettes/{NAME}.py --{mode}`",
        f"- missingkernels {missingkernels.__version__}, Python "
        f"{platform.python_version()}, {dt.date.today().isoformat()}.",
        f"- Compute time: {sum(seconds.values()) / 60:.1f} min summed over "
        f"cells ({per_part}). {_runs_summary(out / 'runs.csv', done)}",
        f"- Protocol: datasets {', '.join(any_kwargs['datasets'])}; "
        f"{any_kwargs['n_draws']} draws; nested CV {any_kwargs['outer_folds']} "
        f"outer x {any_kwargs['inner_folds']} inner folds; C in "
        f"{[f'{c:g}' for c in any_kwargs['C_grid']]}, gamma in "
        f"{[f'{g:g}' for g in any_kwargs['gamma_grid']]}; seed 0. Parts: "
        + "; ".join(
            f"{part}: {', '.join(kw['mechanisms'])} at "
            f"{', '.join(f'{100 * r:g}%' for r in kw['rates'])}"
            + (
                f", training rows at {100 * kw['train_rate']:g}%"
                if "train_rate" in kw
                else ""
            )
            + (f", {kw['train_size']} training rows" if "train_size" in kw else "")
            for part, (_, kw) in runs.items()
        )
        + ".",
        "- Methods: "
        + "; ".join(
            f"{part}: " + ", ".join(getattr(m, "name", m) for m in kw["methods"])
            for part, (_, kw) in runs.items()
        )
        + ".",
    ]
    # No table wider than a browser window (the vignettes' shared rule).
    lines = fit_tables("\n".join(lines).split("\n"))
    (out / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
