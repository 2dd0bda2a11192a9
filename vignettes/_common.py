"""Shared driver of the comparison vignettes: run, tabulate, plot, report.

Every vignette script calls :func:`main` with its datasets, methods and the
settings of its two modes. ``--quick`` is a small smoke run (CI); ``--full``
is the papers' protocol. Results go to ``vignettes/results/<name>/<mode>/``:
``results.csv`` (long format, resumable: rerun the same command after an
interruption), ``runs.csv`` (the wall time of every run, also of one
stopped by SIGTERM or Ctrl-C), ``table_<metric>.md`` (split per dataset and
mechanism when wider than a browser window), ``summary_<metric>.csv``
(mean, std and draws per dataset, mechanism, rate and method), figures,
and ``README.md`` with the command, the compute and wall time and the
package version. A vignette whose settings differ between datasets (vignette 9's
gamma per dataset) runs them as *parts*, one results file each
(``results_<part>.csv``), reported together. ``--dask ADDRESS`` runs the
cells on a Dask cluster (the ``dask`` extra).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shlex
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import missingkernels
from missingkernels.datasets import load_dataset
from missingkernels.experiments import (
    CELL_COLUMNS,
    IMPUTATION_BASELINES,
    ComparisonData,
    read_results,
    report_comparison,
    resolve_method,
    run_comparison,
    summary_table,
)
from missingkernels.experiments._tables import fit_tables

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
# Development checkouts sit beside ../shared/data; elsewhere set the variable.
_SHARED = HERE.parent.parent / "shared" / "data"
if "MISSINGKERNELS_DATA_DIR" not in os.environ and _SHARED.is_dir():
    os.environ["MISSINGKERNELS_DATA_DIR"] = str(_SHARED)


#: SOCP solves one cone program per grid point, so vignettes 4 and 6 search it
#: over this smaller grid (31 cone programs per cell with 5 inner folds), the
#: other methods over the genRBF paper's; each report says so.
#: Said in the reports of the vignettes whose full results were computed
#: before SQUAREM became the EM densities' default.
PLAIN_EM_NOTE = (
    " The committed full results were computed with plain EM, before SQUAREM "
    "became the default of the EM densities (acceleration='squarem'; same "
    "fixed point, fewer steps); they have not been rerun. Measured on "
    "vignette 6 (benchmarks/replay_vignette6_em.py): at the committed "
    "parameters 6 of 38,325 test predictions change, all on horse_colic, "
    "and with the inner grid search rerun the chosen C changes in 7 of 50 "
    "horse_colic cells (mean accuracy within +0.003). A rerun gives slightly "
    "different numbers; acceleration='none' in the densities reproduces "
    "these."
)

#: The eight classification datasets of the genRBF paper's Table 1
#: (vignettes 2 and 8).
GENRBF_PAPER_DATASETS = (
    "australian",
    "banknote_authentication",
    "breast_cancer_wisconsin",
    "climate_model_crashes",
    "pima_indians_diabetes",
    "statlog_heart",
    "ionosphere",
    "liver_disorders_bupa",
)
#: Struski et al., Table 1: the regression datasets and the gamma of each
#: (standardised features; vignettes 3 and 9).
STRUSKI_GAMMA = {
    "abalone": 2.0**-4,
    "airfoil_self_noise": 2.0**-5,
    "concrete_compressive_strength": 2.0**-5,
    "friedman": 2.0**-4,
    "laser": 2.0**-6,
    "mortgage": 2.0**-4,
    "stock": 2.0**-4,
}

#: The imputation pipelines of the classification vignettes (2 and 8): the
#: genRBF paper's imputation baselines and those with missingness indicators.
IMPUTATION_PIPELINES = IMPUTATION_BASELINES

SOCP_C_GRID = (1.0, 8.0, 64.0)
SOCP_GAMMA_GRID = (2.0**-5, 2.0**-3)


def socp_method() -> Any:
    """The ``socp`` method (kappa 0.9) on the smaller grid above."""
    return resolve_method("socp", C_grid=SOCP_C_GRID, gamma_grid=SOCP_GAMMA_GRID)


def hgb_single_point() -> Any:
    """``hgb`` at one setting (learning_rate 0.1, 31 leaves: scikit-learn's
    defaults), no inner search: for the quick modes, where its 9-point
    search would be most of the run time."""
    import dataclasses

    return dataclasses.replace(
        resolve_method("hgb"), grid={"learning_rate": [0.1], "max_leaf_nodes": [31]}
    )


def load(
    names: Sequence[str],
    max_rows: int | None = None,
    seed: int = 0,
    nominal: bool = False,
) -> dict:
    """Named datasets as ComparisonData (optionally a stratified row subsample).

    ``nominal=True`` passes the catalogue's nominal columns (vignette 7);
    otherwise every column is numeric, as the vignettes before it ran.
    """
    out = {}
    for name in names:
        ds = load_dataset(name)
        X, y = ds.X, ds.y
        if max_rows is not None and X.shape[0] > max_rows:
            rng = np.random.default_rng(seed)
            keep = np.sort(rng.choice(X.shape[0], max_rows, replace=False))
            X, y = X[keep], y[keep]
        columns = ds.nominal_indices if nominal else None
        out[name] = ComparisonData(X, y, ds.task, columns or None)
    return out


def available(methods: Sequence[Any]) -> tuple[list[Any], list[str]]:
    """Split methods into those this installation provides and the rest."""
    known = set(missingkernels.list_kernels()) | set(missingkernels.list_baselines())
    ok = [m for m in methods if not isinstance(m, str) or m in known]
    return ok, [m for m in methods if isinstance(m, str) and m not in known]


def main(
    name: str,
    title: str,
    make_config: Callable[[bool], dict],
    report: Callable[[Any, dict], str] | None = None,
    argv: Sequence[str] | None = None,
) -> int:
    """Parse ``--quick/--full``, run the comparison, write tables/figures/report.

    ``make_config(quick)`` returns the keyword arguments of run_comparison plus
    ``datasets`` (name -> ComparisonData), ``methods``, ``metric`` and
    optionally ``curves`` (plot score vs rate), ``intro`` (Markdown),
    ``blocks`` (the columns of a block of the Friedman test and the Wilcoxon
    tests; default dataset x mechanism x rate), ``question`` and ``answer``
    (the README then opens with the question and ``answer(results, extra)``,
    then the figures and tables, the provenance at the end; ``extra`` as for
    ``report``: ``summary``, ``out``, ``report``) and ``parts`` (part name ->
    overrides of the keyword arguments, e.g. ``{"datasets": ..., "gamma_grid":
    ...}``: each part runs with its own results file, the report covers all).
    """
    parser = argparse.ArgumentParser(description=title)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true", help="small smoke run (CI)")
    mode.add_argument("--full", action="store_true", help="the papers' protocol")
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument(
        "--methods",
        help="run only these methods now (comma-separated); the report covers "
        "every result in the output file",
    )
    parser.add_argument(
        "--draws",
        type=int,
        help="run only the first N draws now (the report covers every result "
        "in the output file; rerun without it to complete the rest)",
    )
    parser.add_argument(
        "--parts",
        help="run only these parts now (comma-separated; a vignette that runs "
        "parts, e.g. 9: one per dataset); the report covers every results file",
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the cells on the Dask cluster whose scheduler is at ADDRESS "
        "(e.g. tcp://10.0.0.5:8786; the dask extra); results are appended here",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="only rewrite the report from the results file (safe while a run "
        "is appending to it)",
    )
    args = parser.parse_args(argv)
    quick = bool(args.quick)
    config = make_config(quick)
    datasets = config.pop("datasets")
    metric = config.pop("metric")
    curves = config.pop("curves", False)
    intro = config.pop("intro", "")
    blocks = tuple(config.pop("blocks", ("dataset", "mechanism", "rate")))
    question = config.pop("question", None)
    answer_of = config.pop("answer", None)
    parts = config.pop("parts", None) or {"": {}}
    methods, missing = available(config.pop("methods"))
    planned = list(methods)
    if args.methods:
        wanted = [m for m in args.methods.split(",") if m]
        methods = [m for m in methods if getattr(m, "name", m) in wanted]
    out = RESULTS / name / ("quick" if quick else "full")
    out.mkdir(parents=True, exist_ok=True)
    script = os.path.relpath(sys.argv[0], HERE.parent)
    given = sys.argv[1:] if argv is None else list(argv)
    invocation = "python " + " ".join(shlex.quote(a) for a in [script, *given])
    start = time.perf_counter()
    runs = {
        part: (
            out / (f"results_{part}.csv" if part else "results.csv"),
            {"datasets": datasets, **config, **overrides},
        )
        for part, overrides in parts.items()
    }
    files = [path for path, _ in runs.values()]
    if args.report_only:
        results = _read_all(files)
    else:
        before = sum(_finished_cells(path) for path in files)
        status = "interrupted"
        # A run stopped with SIGTERM (kill, a batch scheduler) still records
        # its wall time: the signal becomes SystemExit, which runs the finally.
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
        try:
            with _backend(args.dask):
                now = set(args.parts.split(",")) if args.parts else set(runs)
                for part, (path, planned_kwargs) in runs.items():
                    if part not in now:
                        continue
                    kwargs = dict(planned_kwargs)
                    run_comparison(
                        kwargs.pop("datasets"),
                        methods,
                        output=path,
                        n_jobs=-1 if args.dask else args.n_jobs,
                        progress=args.progress,
                        draws=None
                        if args.draws is None
                        else range(min(args.draws, kwargs.get("n_draws", 10))),
                        **kwargs,
                    )
            results = _read_all(files)
            status = "finished"
        finally:
            signal.signal(signal.SIGTERM, previous)
            after = sum(_finished_cells(path) for path in files)
            _record_run(
                out / "runs.csv",
                invocation,
                status=status,
                n_jobs=args.n_jobs,
                wall=time.perf_counter() - start,
                added=after - before,
            )
    # Methods may have finished different draws (a partial run): the report
    # ranks them on the cells every method finished.
    rep = report_comparison(
        results,
        metric,
        out,
        table_file=f"table_{metric}.md",
        pairwise_file=f"pairwise_{metric}.md",
        title=title,
        curves="curves_{mechanism}.png" if curves else None,
        blocks=blocks,
    )
    stats = rep.stats
    n_expected = sum(
        _expected_cells(kw["datasets"], planned, kw) for _, kw in runs.values()
    )
    # One row per metric of a cell: count cells (and their time) once.
    cells = results.drop_duplicates([*CELL_COLUMNS, "method"])
    n_done = cells.shape[0]
    status = (
        "complete"
        if n_done >= n_expected
        else f"PARTIAL: {n_done} of {n_expected} cells finished"
    )
    # The command that reproduces the whole report; --methods, --draws,
    # --n-jobs and --progress only choose what runs now, not the results.
    command = f"python {shlex.quote(script)} --{'quick' if quick else 'full'}"
    provenance = [
        f"- Status: **{status}**."
        + (
            ""
            if n_done >= n_expected
            else " In a partial run the last draw of a dataset may cover fewer "
            "than all outer folds; (n=...) counts the draws."
        ),
        f"- Command (from the repository root): `{command}`",
        f"- missingkernels {missingkernels.__version__}, Python "
        f"{platform.python_version()}, {dt.date.today().isoformat()}.",
        f"- Compute time: {cells['cell_seconds'].sum() / 60:.1f} min summed over "
        f"cells. {_runs_summary(out / 'runs.csv', n_done)}"
        + (
            ""
            if n_done >= n_expected
            else " "
            + _compute_left(
                cells,
                [kw["datasets"] for _, kw in runs.values()],
                planned,
                [kw for _, kw in runs.values()],
            )
        ),
        f"- Protocol: {_protocol(config)}"
        + (
            "; per part: "
            + "; ".join(
                f"{part}: {_overrides(over)}" for part, over in parts.items() if over
            )
            if len(parts) > 1
            else ""
        )
        + ".",
        "- Methods with results: "
        + ", ".join(sorted(results["method"].unique()))
        + "; planned: "
        + ", ".join(getattr(m, "name", m) for m in planned)
        + ".",
    ]
    if missing:
        provenance.append(f"- Not run (not available in this installation): {missing}.")
    if rep.errors:
        provenance.append(
            f"- Failed cells: {rep.n_failed_cells} (first error per method: "
            + "; ".join(f"{m}: {e}" for m, e in rep.errors.items())
            + ")."
        )
    # Every mean and std in one file; the report's tables are split to fit a
    # browser window when there are many (dataset, mechanism, rate) columns.
    summary_file = f"summary_{metric}.csv"
    summary_table(results, metric).to_csv(out / summary_file)
    lines = ["", intro] if intro else []
    lines += [
        "",
        f"## {metric}: mean ± std over draws (each draw: mean over outer folds)",
        "",
    ]
    if rep.table.startswith("**"):
        lines += [
            "One table per dataset (and mechanism) so that each fits a browser "
            f"window; every mean, std and draw count is in `{summary_file}`.",
            "",
        ]
    lines += [rep.table]
    if stats is not None:
        lines += [
            "",
            f"Friedman test over {stats.n_blocks} blocks ({' x '.join(blocks)};"
            f" scores averaged over the {rep.n_common_cells} draw x fold cells that "
            "every method finished):"
            f" chi2 = {stats.statistic:.2f}, p = {stats.pvalue:.3g}; Nemenyi critical "
            f"difference {stats.critical_difference:.2f} at alpha = {stats.alpha}. "
            f"Mean ranks: {rep.mean_ranks()}.",
        ]
    if rep.pairwise is not None:
        lines += [
            "",
            f"Pairwise Wilcoxon signed-rank tests over the same "
            f"{int(rep.pairwise.table['n_blocks'].iloc[0])} blocks, p-values "
            f"Holm-adjusted over all {len(rep.pairwise.table)} pairs (bold: at "
            f"most {rep.pairwise.alpha}); wins / ties / losses count the blocks "
            "where method a scores higher / the same / lower:",
            "",
            rep.pairwise_table,
        ]
    extra = {"summary": summary_table(results, metric), "out": out, "report": rep}
    if report is not None:
        lines += ["", report(results, extra)]
    figures = [f"![{fig}]({fig})" for fig in rep.figures]
    heading = [f"# {title} ({'quick' if quick else 'full'} mode)", ""]
    if question is None:
        lines = [*heading, *provenance, *lines]
        for fig in figures:
            lines += ["", fig]
    else:
        # Question and answer first, then the figures and tables; where the
        # numbers come from at the end.
        answer = answer_of(results, extra) if answer_of is not None else ""
        lines = [
            *heading,
            f"**Question.** {question}",
            "",
            f"**Answer ({status}).** {answer}",
            "",
            *[x for fig in figures for x in (fig, "")],
            *lines,
            "",
            "## Provenance",
            "",
            *provenance,
        ]
    # No table wider than a browser window, also those a vignette builds.
    lines = fit_tables("\n".join(lines).split("\n"))
    (out / "README.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _read_all(files: Sequence[Path]) -> Any:
    """The results of every part (files not yet written left out)."""
    import pandas as pd

    frames = [read_results(path) for path in files if path.is_file()]
    if not frames:
        raise SystemExit(f"No results yet in {[str(f) for f in files]}.")
    return pd.concat(frames, ignore_index=True)


def _backend(address: str | None) -> Any:
    """A context running joblib's cells on the Dask cluster at ``address``
    (none: the default backend)."""
    import contextlib

    if not address:
        return contextlib.nullcontext()
    import joblib
    from distributed import Client

    stack = contextlib.ExitStack()
    stack.enter_context(Client(address))
    stack.enter_context(joblib.parallel_config(backend="dask"))
    return stack


def _overrides(over: Mapping[str, Any]) -> str:
    """The settings a part changes, for the protocol line."""
    shown = []
    for key, value in over.items():
        if key == "datasets":
            shown.append("datasets " + ", ".join(value))
        elif key in ("C_grid", "gamma_grid"):
            exps = [np.log2(v) for v in value]
            shown.append(f"{key} {{" + ", ".join(f"2^{e:g}" for e in exps) + "}")
        else:
            shown.append(f"{key} {value}")
    return ", ".join(shown)


def _n_method_cells(results: Any) -> int:
    return int(results.drop_duplicates([*CELL_COLUMNS, "method"]).shape[0])


def _finished_cells(path: Path) -> int:
    """Method cells already in the results file (0 before the first run)."""
    return _n_method_cells(read_results(path)) if path.is_file() else 0


_RUN_FIELDS = (
    "ended_utc",
    "status",
    "invocation",
    "n_jobs",
    "wall_minutes",
    "cells_added",
)


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _record_run(
    path: Path, invocation: str, *, status: str, n_jobs: int, wall: float, added: int
) -> None:
    """Append one run to ``runs.csv``, where the report's wall times come from."""
    import csv

    new = not path.is_file()
    with path.open("a", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        if new:
            writer.writerow(_RUN_FIELDS)
        writer.writerow(
            [
                dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                status,
                invocation,
                n_jobs,
                f"{wall / 60:.2f}",
                added,
            ]
        )


def _runs_summary(path: Path, n_done: int) -> str:
    """One sentence on the recorded runs: how many, their wall time, the last."""
    import csv

    runs = []
    if path.is_file():
        with path.open(newline="", encoding="utf-8") as fh:
            runs = list(csv.DictReader(fh))
    if not runs:
        return "Wall time: no run recorded (runs.csv is absent or empty)."
    wall = sum(float(r["wall_minutes"]) for r in runs)
    added = sum(int(r["cells_added"]) for r in runs)
    last = runs[-1]
    text = (
        f"Wall time: {len(runs)} recorded run(s), {wall:.1f} min in all; the "
        f"last, `{last['invocation']}`, {last['status']} at {last['ended_utc']} "
        f"after {float(last['wall_minutes']):.1f} min with n_jobs={last['n_jobs']}"
        f" and added {last['cells_added']} cells."
    )
    if added < n_done:
        text += (
            f" The other {n_done - added} cells come from runs made before "
            "runs.csv existed."
        )
    return text


def _protocol(config: Mapping[str, Any]) -> str:
    def grid(values: Sequence[float]) -> str:
        exps = [np.log2(v) for v in values]
        if all(float(e).is_integer() for e in exps):
            return "{" + ", ".join(f"2^{int(e)}" for e in exps) + "}"
        return str(list(values))

    mechs = list(config.get("mechanisms", ("mar",)))
    rates = ", ".join(f"{100 * r:g}%" for r in config.get("rates", (0.3,)))
    where = f"{', '.join(mechs)} at {rates}"
    if mechs == ["none"]:
        where = "the data's own missing values (draws = new fold splits)"
    return (
        f"{where}; {config.get('n_draws', 10)} draws; nested CV "
        f"{config.get('outer_folds', 5)} outer x {config.get('inner_folds', 5)} inner"
        f" folds; C in {grid(config['C_grid'])}, gamma in "
        f"{grid(config['gamma_grid'])}; seed {config.get('random_state', 0)}"
    )


def _cells_per_dataset(config: Mapping) -> int:
    """Planned (mechanism, rate, draw, fold) cells of one method on one dataset."""
    n = 0
    for mech in config.get("mechanisms", ("mar",)):
        n_rates = 1 if mech == "none" else len(config.get("rates", (0.3,)))
        n += n_rates * config.get("n_draws", 10) * config.get("outer_folds", 5)
    return n


def _expected_cells(datasets: Mapping, methods: Sequence[str], config: Mapping) -> int:
    return len(datasets) * _cells_per_dataset(config) * len(methods)


def _compute_left(
    cells: Any,
    datasets: Mapping | Sequence[Mapping],
    methods: Sequence[Any],
    config: Mapping | Sequence[Mapping],
) -> str:
    """Estimated compute still to run, per method: its mean seconds per cell on
    each dataset times the cells it has not finished there (``datasets`` and
    ``config`` may be lists, one per part)."""
    if isinstance(config, Mapping):
        datasets, config = [datasets], [config]  # type: ignore[list-item]
    per_dataset = {
        name: _cells_per_dataset(cfg)
        for data, cfg in zip(datasets, config, strict=True)  # type: ignore[arg-type]
        for name in data
    }
    hours: dict[str, float] = {}
    unknown: dict[str, list[str]] = {}
    for method in (getattr(m, "name", m) for m in methods):
        mine = cells[cells["method"] == method]
        for dataset, planned in per_dataset.items():
            done = mine[mine["dataset"] == dataset]["cell_seconds"]
            left = planned - done.size
            if left <= 0:
                continue
            if done.empty and not (cells["dataset"] == dataset).any():
                # No method has started this dataset: assume its cells cost
                # what this method's cost elsewhere (said below).
                done = mine["cell_seconds"]
            if done.empty:
                unknown.setdefault(method, []).append(str(dataset))
            else:
                hours[method] = hours.get(method, 0.0) + left * done.mean() / 3600
    parts = [f"{m} {h:.1f} h" for m, h in sorted(hours.items(), key=lambda kv: -kv[1])]
    text = (
        f"Estimated compute left: {sum(hours.values()):.1f} core-hours ("
        + ", ".join(parts)
        + "; each method's mean time per cell on a dataset times its cells "
        "still to run there"
    )
    untouched = [d for d in per_dataset if not (cells["dataset"] == d).any()]
    if untouched:
        text += (
            "; on the datasets without a finished cell ("
            + ", ".join(map(str, untouched))
            + ") its mean over the finished ones, which misses their size"
        )
    text += ")"
    if unknown:
        text += "; no estimate where a method has no finished cell: " + "; ".join(
            f"{m} on {', '.join(ds)}" for m, ds in unknown.items()
        )
    return text + "."


def paper_beside(
    summary: Any,
    paper: Mapping[str, Mapping[str, str]],
    methods: Sequence[str | tuple[str, str]],
) -> str:
    """Markdown: per dataset and method, our mean ± std beside the paper's.

    A method is a name, or a pair (our name, the paper's name).
    """
    pairs = [(m, m) if isinstance(m, str) else m for m in methods]
    head = "| dataset | " + " | ".join(f"{m} (ours) | {p} (paper)" for m, p in pairs)
    lines = [head + " |", "|---|" + "---|---|" * len(pairs)]
    ours = summary.reset_index()
    for dataset, row in paper.items():
        cells = []
        for m, p in pairs:
            sel = ours[(ours["dataset"] == dataset) & (ours["method"] == m)]
            if sel.empty:
                mine = "not run"
            else:
                r = sel.iloc[0]
                std = "" if np.isnan(r["std"]) else f" ± {r['std']:.3f}"
                n = f" (n={int(r['n_draws'])})"
                mine = f"{r['mean']:.3f}{std}{n}"
            cells += [mine, row.get(p, "-")]
        lines.append(f"| {dataset} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def best_of(means, names):  # type: ignore[no-untyped-def]
    """The name among ``names`` with the highest mean (None if none ran)."""
    have = [n for n in names if n in means.index]
    return max(have, key=lambda n: means.loc[n, "mean"]) if have else None


def mean_std(means, name):  # type: ignore[no-untyped-def]
    """``mean ± std`` of a method's row, or "not run"."""
    if name is None:
        return "not run"
    row = means.loc[name]
    return f"{row['mean']:.3f} ± {row['std']:.3f}"


def versus(means, draws, ours, other):  # type: ignore[no-untyped-def]
    """Ours minus other (means over draws), and the draws where ours is
    higher / the same / lower."""
    if ours is None or other is None:
        return "-"
    higher = int((draws[ours] > draws[other]).sum())
    same = int((draws[ours] == draws[other]).sum())
    diff = means.loc[ours, "mean"] - means.loc[other, "mean"]
    return f"{diff:+.3f} ({higher}/{same}/{len(draws) - higher - same})"


def versus_table(  # type: ignore[no-untyped-def]
    results,
    metric: str,
    ours: Sequence[str],
    imputation: Sequence[str],
    labels: Callable[[str], Any],
    single: str | None = None,
) -> list[str]:
    """Markdown rows, per dataset: our best method, the best imputation
    pipeline and hgb, with the majority-class score of the labels
    ``labels(dataset)`` and ours minus each other (see :func:`versus`).

    ``single``: the name of our one method, shown in the header instead of
    "ours (best kernel)" (and not repeated in its cells).
    """
    from missingkernels.experiments import majority_scores

    ok = results[(results["metric"] == metric) & (results["error"] == "")]
    per_draw = ok.groupby(["dataset", "method", "draw"])["score"].mean()
    stats = per_draw.groupby(["dataset", "method"]).agg(["mean", "std"])
    short = single or "ours"
    lines = [
        f"| dataset | majority class | {single or 'ours (best kernel)'} | best "
        f"imputation pipeline | hgb | {short} - imputation | {short} - hgb |",
        "|---|---|---|---|---|---|---|",
    ]
    for dataset in sorted(ok["dataset"].unique()):
        means = stats.loc[dataset]
        floor = majority_scores(labels(dataset))[metric]
        best, imp = best_of(means, ours), best_of(means, imputation)
        hgb = "hgb" if "hgb" in means.index else None
        names = [n for n in (best, imp, hgb) if n is not None]
        draws = per_draw.loc[dataset].unstack("method")[names].dropna()
        shown = mean_std(means, best) if single else f"{best}: {mean_std(means, best)}"
        lines.append(
            f"| {dataset} | {floor:.3f} | {shown} | "
            f"{imp}: {mean_std(means, imp)} | {mean_std(means, hgb)} | "
            f"{versus(means, draws, best, imp)} | "
            f"{versus(means, draws, best, hgb)} |"
        )
    return lines


def complete_rows(data: ComparisonData) -> ComparisonData:
    """``data`` without its rows that have a missing value (the simulated
    mechanisms need complete data)."""
    keep = ~np.isnan(data.X).any(axis=1)
    return ComparisonData(data.X[keep], data.y[keep], data.task)
