"""The ``missingkernels`` command line."""

from __future__ import annotations

import argparse
import sys
import textwrap
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import _registry
from ._version import __version__

_DATA_ENV = "MISSINGKERNELS_DATA_DIR"  # as missingkernels.datasets.DATA_DIR_ENV

_LISTERS = {
    "kernels": _registry.list_kernels,
    "densities": _registry.list_densities,
    "baselines": _registry.list_baselines,
}


def _cmd_list(args: argparse.Namespace) -> int:
    kinds = [args.kind] if args.kind else list(_LISTERS)
    for kind in kinds:
        entries = _LISTERS[kind]()
        print(f"{kind}:")
        if not entries:
            print("  (none registered)")
        width = max((len(name) for name in entries), default=0)
        for name, entry in entries.items():
            print(f"  {name:<{width}}  {entry.description}  [{entry.plugin}]")
        print()
    errors = _registry.plugin_errors()
    if errors:
        print("plugins that failed to load:")
        for name, message in errors.items():
            print(f"  {name}: {message}")
    return 0


_QUICK_METHODS = ("zero", "mean", "knn", "genrbf")
# On a table with nominal columns: the mixed kernel (ours for such tables) and
# histogram gradient boosting (native missing values and categories) join.
_QUICK_MIXED = ("zero", "mean", "knn", "mixed_rbf", "hgb")
# genrbf is left out of it: over one-hot codes its Gaussian EM meets a
# singular covariance (the 0/1 columns of a column sum to 1) and runs to
# max_iter (about 45 s per fit on horse_colic); name it in --methods.
_FULL_METHODS = (
    "zero",
    "mean",
    "knn",
    "iterative",
    "missforest",
    "gmm",
    "mean_indicator",
    "knn_indicator",
    "hgb",
    "genrbf",
    "expected_rbf",
)


def _missing_extra(extra: str) -> list[str]:
    """The modules of an extra (``_optional.EXTRAS``) that cannot be imported."""
    import importlib

    from ._optional import EXTRAS

    missing = []
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    return missing


def _fail(message: object) -> int:
    """Print ``compare: <message>`` as one line on stderr; return exit code 2."""
    print("compare: " + " ".join(str(message).split()), file=sys.stderr)
    return 2


def _output_dir_error(out: Path) -> str | None:
    """Why the results cannot be written to ``out`` (None if they can)."""
    import tempfile

    if out.exists() and not out.is_dir():
        return (
            f"--output-dir {out} is an existing file, not a directory; give a "
            "new or existing directory."
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
        results = out / "results.csv"
        if results.exists():
            with results.open("a"):
                pass
    except OSError as exc:
        return (
            f"cannot write to --output-dir {out} ({exc.strerror or exc}); "
            "choose a directory you can write to."
        )
    return None


def _ridge_methods() -> list[str]:
    """The registered kernels whose default density is the Gaussian EM one."""
    names = []
    for name in _registry.list_kernels():
        try:
            params = _registry.get_kernel(name).get_params(deep=False)
        except Exception:  # a plugin kernel that cannot be built bare
            continue
        if params.get("density") == "gaussian_em":
            names.append(name)
    return names


def _with_ridge(
    methods: list[str], ridge: float, C_grid: Any, gamma_grid: Any
) -> list[Any]:
    """``methods`` with those of :func:`_ridge_methods` as specs whose Gaussian
    EM density has ``ridge`` instead of the default prior (``prior_rows=0``,
    as the runs that used it before the prior), named e.g.
    ``genrbf[ridge=0.001]`` so that their results never mix with those
    without it in a resumed results file."""
    import dataclasses

    from .densities import GaussianEMDensity
    from .experiments import resolve_method

    with_ridge = set(_ridge_methods())
    out: list[Any] = []
    for name in methods:
        if name not in with_ridge:
            out.append(name)
            continue
        spec = resolve_method(
            name,
            C_grid=C_grid,
            gamma_grid=gamma_grid,
            kernel_params={"density": GaussianEMDensity(ridge=ridge, prior_rows=0)},
        )
        out.append(dataclasses.replace(spec, name=f"{name}[ridge={ridge:g}]"))
    return out


def _matching_methods() -> dict[str, Any]:
    """The registered kernels whose default density models category codes and
    has ``handle_unknown`` (the matching kernels ``belanche_*``): name -> that
    density's registry name or object."""
    from .experiments._methods import _models_category_codes

    found = {}
    for name in _registry.list_kernels():
        try:
            density = _registry.get_kernel(name).get_params(deep=False).get("density")
            built = _registry.new_density(density)
        except Exception:  # a plugin kernel or density that cannot be built bare
            continue
        if _models_category_codes(density) and "handle_unknown" in built.get_params():
            found[name] = density
    return found


#: --quick's grids for baselines with their own (hgb's 3 x 3 took 324 of 333 s).
_QUICK_GRIDS: dict[str, dict] = {"hgb": {"max_leaf_nodes": [15, 31]}}


def _with_quick_grids(methods: list[Any], C_grid: Any, gamma_grid: Any) -> list[Any]:
    """``methods`` with those of :data:`_QUICK_GRIDS` searching that grid."""
    import dataclasses

    from .experiments import resolve_method

    return [
        dataclasses.replace(
            resolve_method(m, C_grid=C_grid, gamma_grid=gamma_grid),
            grid=dict(_QUICK_GRIDS[m]),
        )
        if isinstance(m, str) and m in _QUICK_GRIDS
        else m
        for m in methods
    ]


def _with_handle_unknown(
    methods: list[Any], handle_unknown: str, C_grid: Any, gamma_grid: Any
) -> list[Any]:
    """``methods`` with those of :func:`_matching_methods` as specs whose
    density has ``handle_unknown``, named e.g.
    ``belanche_k1[handle_unknown=ignore]`` (their failed cells of a run without
    it are not resumed as theirs)."""
    import dataclasses

    from .experiments import resolve_method

    matching = _matching_methods()
    out: list[Any] = []
    for method in methods:
        if not isinstance(method, str) or method not in matching:
            out.append(method)
            continue
        density = _registry.new_density(matching[method]).set_params(
            handle_unknown=handle_unknown
        )
        spec = resolve_method(
            method,
            C_grid=C_grid,
            gamma_grid=gamma_grid,
            kernel_params={"density": density},
        )
        name = f"{method}[handle_unknown={handle_unknown}]"
        out.append(dataclasses.replace(spec, name=name))
    return out


# What to do about a failed cell, by a phrase of its error.
_ERROR_REMEDIES = {
    "not seen during fit": "rerun with --handle-unknown ignore (a level seen "
    "only at test time then matches no training value)",
}

# What to do about a warning, by category, in terms of the CLI's options.
_REMEDIES = {
    "SingularCovarianceWarning": "rerun with --ridge 1e-3 (the methods are then "
    "named e.g. genrbf[ridge=0.001]), or drop collinear or constant features",
    "DegenerateMissingnessWarning": "use --mechanism mcar, or features with more "
    "distinct values",
}


def _print_warnings(log: list[warnings.WarningMessage], ridge: float | None) -> None:
    """Print the run's warnings (each distinct one once, with its count, as
    :func:`run_comparison` warns them) and what to do about them."""
    if not log:
        return
    print("\nwarnings (each distinct one once):", file=sys.stderr)
    for record in log:
        name = record.category.__name__
        print(f"  {name}: {record.message}", file=sys.stderr)
        remedy = _REMEDIES.get(name)
        if remedy and not (name == "SingularCovarianceWarning" and ridge):
            print(f"    what to do: {remedy}", file=sys.stderr)


def _missingness_text(
    asked: str, mechanism: str, rates: Sequence[float], data_rate: float
) -> str:
    """The banner's account of the missingness a run uses, and why."""
    if mechanism == "none":
        if data_rate > 0:
            return (
                f"the data's own missingness ({100 * data_rate:.3g}% of entries "
                "missing; nothing simulated)"
            )
        return "no missingness (the data has no missing value; nothing simulated)"
    at = ", ".join(f"{r:g}" for r in rates)
    rate_word = "rate" if len(rates) == 1 else "rates"
    text = f"simulated {mechanism} missingness at {rate_word} {at}"
    if asked == "auto":
        text += (
            " (the data has no missing value, so --mechanism auto simulates "
            "mar; choose another with --mechanism)"
        )
    return text


def _sparse_columns_note(ds: Any) -> str:
    """A note naming the features observed in fewer than ``MIN_OBSERVED`` of
    the dataset's rows ("" if none): every method drops them in every fit
    (they are as sparse in each training set), where the warnings can only
    give their 0-based positions."""
    import numpy as np

    from ._validation import MIN_OBSERVED, sparse_features

    sparse = sparse_features(ds.X)
    if sparse.size == 0:
        return ""
    counts = (~np.isnan(ds.X[:, sparse])).sum(axis=0)
    listed = ", ".join(
        f"{ds.feature_names[j]!r} (column {j} (0-based), {int(c)} "
        f"value{'' if c == 1 else 's'})"
        for j, c in zip(sparse, counts, strict=True)
    )
    return (
        f"(observed in fewer than {MIN_OBSERVED} of the {ds.X.shape[0]} rows, "
        f"so dropped by every method in every fit: {listed})"
    )


def _drop_columns(ds: Any, drop: Sequence[str]) -> Any:
    """The dataset without the features named in ``drop`` (``--drop``)."""
    import dataclasses

    if not drop:
        return ds
    absent = [c for c in drop if c not in ds.feature_names]
    if absent:
        raise ValueError(
            f"--drop names {absent}, which are not features of {ds.name}; the "
            f"features are {ds.feature_names}."
        )
    keep = [j for j, c in enumerate(ds.feature_names) if c not in drop]
    return dataclasses.replace(
        ds,
        X=ds.X[:, keep],
        feature_names=[ds.feature_names[j] for j in keep],
        nominal=[c for c in ds.nominal if c not in drop],
        note=(ds.note + "; " if ds.note else "") + f"dropped {', '.join(drop)}",
    )


def _nominal_note(ds: Any, specs: Sequence[Any]) -> str:
    """How the methods of a run meet the nominal columns."""
    native = [s.name for s in specs if s.nominal == "native"]
    coded = [s.name for s in specs if s.nominal != "native"]
    text = f"(nominal columns: {', '.join(ds.nominal)}; category codes, never "
    text += "standardised"
    if native:
        text += (
            f"; {', '.join(native)} take them as nominal (the imputation "
            "baselines one-hot code them, imputing the mode where they impute "
            "the mean; hgb splits on them natively)"
        )
    if coded:
        text += f"; {', '.join(coded)} see them one-hot coded"
    return text + ")"


def _repetitions_text(mechanism: str, reps: int) -> str:
    """What ``--repetitions`` repeats: CV splits of the data's own missing
    values, or missingness draws (each with its own splits)."""
    if mechanism == "none":
        return f"{reps} repetition(s) of the CV splits"
    return f"{reps} missingness draw(s)"


def _cmd_compare(args: argparse.Namespace) -> int:
    try:
        return _compare(args)
    except KeyboardInterrupt:
        results = Path(args.output_dir) / "results.csv"
        print(
            f"compare: interrupted; the cells finished so far are kept in "
            f"{results}: rerun the same command to resume.",
            file=sys.stderr,
        )
        return 1


def _compare(args: argparse.Namespace) -> int:
    import time

    missing = _missing_extra("experiments")
    if missing:
        print(
            f"compare needs the 'experiments' extra ({', '.join(missing)} could "
            "not be imported).\n"
            'Install it with: pip install "missingkernels[experiments]" '
            '(add "plots" for the critical-difference diagram: '
            '"missingkernels[experiments,plots]")',
            file=sys.stderr,
        )
        return 2

    from . import datasets as mkd
    from .experiments import (
        CELL_COLUMNS,
        PAPER_C_GRID,
        PAPER_GAMMA_GRID,
        ComparisonData,
        majority_scores,
        report_comparison,
        resolve_method,
        run_comparison,
    )
    from .experiments._cv import accepts_class_weight
    from .experiments._results import _RunInProgressError

    if (args.dataset is None) == (args.csv is None):
        return _fail("give a dataset name or --csv PATH (not both).")
    nominal = [c.strip() for c in (args.nominal or "").split(",") if c.strip()]
    drop = [c.strip() for c in (args.drop or "").split(",") if c.strip()]
    if args.csv is None and (nominal or drop):
        return _fail(
            "--nominal and --drop apply to --csv; a named dataset's nominal and "
            "dropped columns come from the catalogue ('missingkernels datasets')."
        )
    try:
        if args.csv is not None:
            ds = mkd.load_csv(
                args.csv, target=args.target, task=args.task, nominal=nominal
            )
            ds = _drop_columns(ds, drop)
        else:
            ds = mkd.load_dataset(args.dataset, data_dir=args.data_dir)
    except (ValueError, FileNotFoundError) as exc:
        return _fail(exc)
    mechanism = args.mechanism
    if mechanism == "auto":
        mechanism = "none" if ds.missing_rate > 0 else "mar"
    if mechanism != "none" and ds.missing_rate > 0:
        return _fail(
            f"{ds.name} already has missing values "
            f"({100 * ds.missing_rate:.1f}%); use --mechanism none, or a complete "
            "dataset to simulate missingness."
        )
    if ds.task == "classification" and len(set(ds.y.tolist())) < 2:
        where = f"column {args.target!r}" if args.csv is not None else "target"
        only = ds.y.tolist()[0]
        return _fail(
            f"the {where} of {ds.name} has a single class ({only!r}), and a "
            "classification needs at least two; check --target, or use --task "
            "regression for a numeric target."
        )
    # After the data checks: a refused run leaves no empty directory behind.
    out = Path(args.output_dir)
    problem = _output_dir_error(out)
    if problem:
        return _fail(problem)
    quick = args.quick
    if args.methods:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    else:
        if ds.nominal:
            methods = list(_QUICK_MIXED if quick else (*_FULL_METHODS, "mixed_rbf"))
        else:
            methods = list(_QUICK_METHODS if quick else _FULL_METHODS)
        known = set(_registry.list_kernels()) | set(_registry.list_baselines())
        skipped = [m for m in methods if m not in known]
        if skipped:
            print(f"(not available here, skipped: {', '.join(skipped)})")
        methods = [m for m in methods if m in known]
    folds = args.folds or (3 if quick else 5)
    inner = args.inner_folds or (3 if quick else 5)
    reps = args.repetitions or (1 if quick else 10)
    C_grid = (1.0, 8.0, 64.0) if quick else PAPER_C_GRID
    gamma_grid = (2.0**-5, 2.0**-3, 2.0**-1) if quick else PAPER_GAMMA_GRID
    rates = args.rate or [0.3]
    run_methods: list[Any] = list(methods)
    if args.ridge is not None:
        if not 0.0 < args.ridge < float("inf"):
            return _fail(
                f"--ridge must be a positive finite number (e.g. 1e-3), got "
                f"{args.ridge}."
            )
        run_methods = _with_ridge(methods, args.ridge, C_grid, gamma_grid)
        if run_methods == methods:
            return _fail(
                "--ridge applies to the expected-kernel methods with a Gaussian "
                f"EM density ({', '.join(_ridge_methods())}); none of "
                f"{', '.join(methods)} has one."
            )
    if args.density_params is not None:
        from ._density_options import apply_density_params

        run_methods, problem = apply_density_params(
            args.density_params, run_methods, C_grid, gamma_grid
        )
        if problem:
            return _fail(problem)
    if args.handle_unknown is not None:
        before = run_methods
        run_methods = _with_handle_unknown(
            run_methods, args.handle_unknown, C_grid, gamma_grid
        )
        if run_methods == before:
            return _fail(
                "--handle-unknown applies to the matching-kernel methods "
                f"({', '.join(_matching_methods())}); none of "
                f"{', '.join(methods)} is one."
            )
    if quick:
        run_methods = _with_quick_grids(run_methods, C_grid, gamma_grid)
    class_weight = None if args.class_weight == "none" else args.class_weight
    if class_weight is not None and ds.task != "classification":
        return _fail(
            f"--class-weight {class_weight} weighs classes; {ds.name} is a "
            f"{ds.task} task."
        )
    default_metric = "accuracy" if ds.task == "classification" else "r2"
    selection = args.selection_metric or default_metric
    try:
        specs = [
            resolve_method(m, C_grid=C_grid, gamma_grid=gamma_grid)
            if isinstance(m, str)
            else m
            for m in run_methods
        ]
    except ValueError as exc:
        return _fail(exc)
    notes: list[str] = []
    n_classes = len(set(ds.y.tolist())) if ds.task == "classification" else 0
    if n_classes > 2:
        # Binary-only classifiers: one-vs-rest, or left out, as each declares.
        notes.extend(
            f"(skipped {s.name}: a binary-only classifier, and {ds.name} has "
            f"{n_classes} classes)"
            for s in specs
            if s.multiclass == "skip"
        )
        ovr = [s.name for s in specs if s.multiclass == "ovr"]
        if ovr:
            notes.append(
                f"({', '.join(ovr)}: binary-only, fitted one-vs-rest on the "
                f"{n_classes} classes)"
            )
        specs = [s for s in specs if s.multiclass != "skip"]
        if not specs:
            return _fail(
                f"every method given is binary-only and {ds.name} has "
                f"{n_classes} classes; choose others (see 'missingkernels list')."
            )
    if class_weight is not None:
        unweighted = [s.name for s in specs if not accepts_class_weight(s, ds.task)]
        if unweighted:
            notes.append(
                f"(class_weight not supported, ignored by: {', '.join(unweighted)})"
            )
    sparse_note = _sparse_columns_note(ds)
    if sparse_note:
        notes.insert(0, sparse_note)
    if ds.nominal:
        notes.insert(0, _nominal_note(ds, specs))
    names = [s.name for s in specs]
    print(
        f"{ds.name}: {ds.X.shape[0]} rows x {ds.X.shape[1]} features"
        + (f" ({len(ds.nominal)} nominal)" if ds.nominal else "")
        + f", {ds.task}; "
        + _missingness_text(args.mechanism, mechanism, rates, ds.missing_rate)
        + f"; {_repetitions_text(mechanism, reps)}, {folds}x{inner} nested CV "
        f"selecting by {selection}"
        + ("" if class_weight is None else f", class_weight {class_weight}")
        + f"; methods: {', '.join(names)}"
    )
    for note in notes:
        print(note)
    start = time.perf_counter()
    log: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as log:
            results = run_comparison(
                {
                    ds.name: ComparisonData(
                        ds.X, ds.y, ds.task, ds.nominal_indices or None
                    )
                },
                specs,
                mechanisms=[mechanism],
                rates=rates,
                n_draws=reps,
                outer_folds=folds,
                inner_folds=inner,
                C_grid=C_grid,
                gamma_grid=gamma_grid,
                selection_metric=args.selection_metric,
                class_weight=class_weight,
                output=out / "results.csv",
                n_jobs=args.n_jobs,
                random_state=args.seed,
                progress=not args.no_progress,
            )
    except _RunInProgressError:
        return _fail(
            f"another run is writing to {out / 'results.csv'}; wait for it to "
            "finish, or give this run another --output-dir."
        )
    except (ValueError, TypeError, ImportError) as exc:
        return _fail(exc)
    except OSError as exc:
        return _fail(
            f"cannot write the results to {out} ({exc.strerror or exc}); free "
            "space or fix the permissions, then rerun the same command to resume."
        )
    finally:  # also when interrupted: the warnings of the cells that ran
        _print_warnings(log, args.ridge)
    elapsed = time.perf_counter() - start
    metric = default_metric
    beside = ("balanced_accuracy",) if ds.task == "classification" else ()
    if not results["score"].notna().any():
        failed = results[results["error"] != ""]
        example = (
            f" ({failed['method'].iloc[0]}: {failed['error'].iloc[0]})"
            if len(failed)
            else ""
        )
        return _fail(
            f"every cell failed{example}; see the error column of "
            f"{out / 'results.csv'}."
        )
    report = report_comparison(
        results,
        metric,
        out,
        blocks=CELL_COLUMNS,
        title="blocks: draw x outer fold",
        curves="rate_curves.png" if len(rates) > 1 and mechanism != "none" else None,
        beside=beside,
        floors=(
            {ds.name: majority_scores(ds.y)} if ds.task == "classification" else None
        ),
    )
    over = (
        "repetitions of the CV splits" if mechanism == "none" else "missingness draws"
    )
    shown = " and ".join((metric, *beside))
    print(f"\n{shown} (mean ± std over {over} of the mean over outer folds):")
    print(report.table)
    if report.errors:
        print(f"\n{len(report.errors)} method(s) failed in some cells:")
        for method, msg in report.errors.items():
            print(f"  {method}: {msg}")
            for phrase, remedy in _ERROR_REMEDIES.items():
                if phrase in msg:
                    print(f"    what to do: {remedy}")
    if report.stats is not None:
        print(
            f"\nFriedman p = {report.stats.pvalue:.3g} over "
            f"{report.stats.n_blocks} blocks; mean ranks: {report.mean_ranks()}"
        )
    if report.pairwise is not None:
        significant = report.pairwise.significant()
        print(
            f"pairwise Wilcoxon (Holm, alpha {report.pairwise.alpha}): "
            f"{len(significant)} of {len(report.pairwise.table)} pairs differ; "
            f"table with win/tie/loss counts in {out / 'pairwise.md'}"
        )
    print(
        f"\nwrote {out / 'results.csv'}, {out / 'table.md'}"
        + "".join(f", {out / f}" for f in report.figures)
        + f" in {elapsed:.1f} s"
    )
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    import os

    from . import datasets as mkd

    rows = mkd.describe_datasets(args.data_dir)
    if args.task:
        rows = [r for r in rows if r["task"] == args.task]
    directory = mkd.get_data_dir(args.data_dir)
    origin = (
        "--data-dir"
        if args.data_dir
        else f"${mkd.DATA_DIR_ENV}"
        if os.environ.get(mkd.DATA_DIR_ENV)
        else f"default; set ${mkd.DATA_DIR_ENV} to change it"
    )
    print(f"data directory: {directory} ({origin})\n")
    header = ("name", "task", "rows x features", "source", "status", "note")
    table = [
        (
            r["name"],
            r["task"],
            "" if r["shape"] is None else f"{r['shape'][0]} x {r['shape'][1]}",
            r["source"],
            r["status"],
            r["note"],
        )
        for r in rows
    ]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *table, strict=True)]
    for line in (header, *table):
        cells = zip(line, widths, strict=True)
        print("  ".join(f"{c:<{w}}" for c, w in cells).rstrip())
    print()
    print(
        textwrap.fill(
            "status: bundled = shipped with scikit-learn; present = <name>.csv is "
            "in the data directory; fetchable = downloaded from OpenML on first "
            "use; absent = put <name>.csv (header row, numeric features, last "
            "column 'target') in the data directory. Run one with "
            "'missingkernels compare NAME'.",
            width=79,
        )
    )
    return 0


_COMPARE_EXAMPLES = """\
examples:
  # a quick run on a dataset shipped with scikit-learn (about 20 s)
  missingkernels compare sklearn_breast_cancer --quick

  # the data's own missing values, chosen methods, two processes
  missingkernels compare pima_indians_diabetes_na --methods mean,knn,genrbf \\
      --n-jobs 2 --output-dir pima

  # your CSV: simulated MCAR at three rates, rate curves and CD diagram
  missingkernels compare --csv mydata.csv --target label --mechanism mcar \\
      --rate 0.1 --rate 0.3 --rate 0.5

  # a table with nominal columns (codes or text) and its own missing values
  missingkernels compare --csv horse_colic.csv --nominal surgery,age,pain \\
      --drop outcome --quick

  # which datasets have a name; which methods exist
  missingkernels datasets
  missingkernels list
"""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keep the examples' line breaks; wrap the option help as usual."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``missingkernels`` command."""
    parser = argparse.ArgumentParser(
        prog="missingkernels",
        description=(
            "Kernels and SVMs for data with missing values, without imputation."
        ),
    )
    parser.add_argument(
        "--version", action="version", version=f"missingkernels {__version__}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_list = sub.add_parser(
        "list",
        help="list the registered kernels, densities and baselines",
        description="List the registry: name, one-line description, plugin.",
    )
    p_list.add_argument(
        "kind",
        nargs="?",
        choices=sorted(_LISTERS),
        help="only this kind (default: all three)",
    )
    p_list.set_defaults(func=_cmd_list)

    p_data = sub.add_parser(
        "datasets",
        help="list the named datasets, bundled or fetchable",
        description=(
            "List the datasets 'compare' knows by name: task, size, where they "
            "come from and whether they are available here."
        ),
    )
    p_data.add_argument(
        "--task",
        choices=["classification", "regression"],
        help="only datasets of this task (default: both)",
    )
    p_data.add_argument(
        "--data-dir",
        help=f"directory of the dataset CSV files (default: ${_DATA_ENV}, "
        "else ~/.cache/missingkernels/data)",
    )
    p_data.set_defaults(func=_cmd_datasets)

    p_cmp = sub.add_parser(
        "compare",
        help="compare methods by nested cross-validation on a dataset",
        description=textwrap.fill(
            "Nested cross-validation of imputation baselines and expected-kernel "
            "SVMs on a named dataset (see 'missingkernels datasets') or a CSV, "
            "with simulated or real missingness. Writes results.csv (long "
            "format, resumable), table.md and figures to --output-dir. Needs "
            'the experiments extra: pip install "missingkernels[experiments,plots]".',
            width=79,
        ),
        epilog=_COMPARE_EXAMPLES,
        formatter_class=_HelpFormatter,
    )
    p_cmp.add_argument(
        "dataset",
        nargs="?",
        help="a dataset name, e.g. sklearn_breast_cancer (see 'missingkernels "
        "datasets'); give this or --csv",
    )
    p_cmp.add_argument(
        "--csv", help="a CSV file instead of a named dataset (default: none)"
    )
    p_cmp.add_argument(
        "--target",
        default="target",
        help="target column of --csv (default: %(default)s)",
    )
    p_cmp.add_argument(
        "--task",
        choices=["classification", "regression"],
        help="task of --csv (default: regression for a float target with more "
        "than 10 values, else classification)",
    )
    p_cmp.add_argument(
        "--nominal",
        help="comma-separated nominal columns of --csv (category codes, e.g. "
        "1 = yes, 2 = no); columns with text are nominal anyway. The kernels "
        "with nominal support (mixed_rbf) and hgb take them as nominal, the "
        "imputation baselines and the other kernels one-hot code them "
        "(default: the text columns only; a named dataset's come from the "
        "catalogue)",
    )
    p_cmp.add_argument(
        "--drop",
        help="comma-separated columns of --csv to leave out, e.g. a post-hoc "
        "column that would leak the target (default: none)",
    )
    p_cmp.add_argument(
        "--data-dir",
        help=f"directory of the dataset CSV files (default: ${_DATA_ENV}, "
        "else ~/.cache/missingkernels/data)",
    )
    p_cmp.add_argument(
        "--mechanism",
        default="auto",
        choices=["auto", "mcar", "mar", "mnar", "none"],
        help="simulated missingness; 'none' keeps the data's own NaN; 'auto': "
        "none if the data has missing values, else simulated mar (the banner "
        "says which) (default: %(default)s)",
    )
    p_cmp.add_argument(
        "--rate",
        type=float,
        action="append",
        help="missing rate of the simulated mechanism, repeatable (default: 0.3)",
    )
    p_cmp.add_argument(
        "--methods",
        help="comma-separated kernels and baselines, see 'missingkernels list' "
        f"(default: {','.join(_FULL_METHODS)}, and mixed_rbf on a table with "
        f"nominal columns; with --quick {','.join(_QUICK_METHODS)}, or "
        f"{','.join(_QUICK_MIXED)} with nominal columns)",
    )
    p_cmp.add_argument(
        "--folds", type=int, help="outer folds (default: 5; with --quick 3)"
    )
    p_cmp.add_argument(
        "--inner-folds",
        type=int,
        help="inner folds of the grid search (default: 5; with --quick 3)",
    )
    p_cmp.add_argument(
        "--repetitions",
        type=int,
        help="repetitions of the comparison: with simulated missingness, new "
        "missingness draws (each with new CV splits); with the data's own "
        "missingness, repeated CV splits of the same data (the 'draw' column "
        "of results.csv numbers them) (default: 10; with --quick 1)",
    )
    p_cmp.add_argument(
        "--selection-metric",
        choices=["accuracy", "balanced_accuracy", "r2"],
        help="criterion of the inner grid search; balanced_accuracy for "
        "imbalanced classes (default: accuracy for classification, r2 for "
        "regression)",
    )
    p_cmp.add_argument(
        "--class-weight",
        choices=["none", "balanced"],
        default="none",
        help="class weights of the classifiers that take them (the SVM of every "
        "kernel and imputation method, hgb); 'balanced' weighs classes "
        "inversely to their frequency; the methods without (e.g. geom) are "
        "named in the output (default: %(default)s)",
    )
    p_cmp.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 3x3 CV, 1 repetition, a 3x3 grid of C and gamma, methods "
        f"{','.join(_QUICK_METHODS)} ({','.join(_QUICK_MIXED)} on a table with "
        "nominal columns) (default: off, the genRBF paper's protocol and grids)",
    )
    p_cmp.add_argument(
        "--output-dir",
        default="missingkernels-compare",
        help="where results.csv, table.md and the figures go; a rerun resumes "
        "from its results.csv (default: %(default)s)",
    )
    p_cmp.add_argument(
        "--ridge",
        type=float,
        help="ridge of the Gaussian EM density of the expected-kernel methods "
        f"({', '.join(_ridge_methods())}), the remedy of a singular covariance "
        "(SingularCovarianceWarning); their results are named e.g. "
        "genrbf[ridge=0.001]; the ridge replaces the density's default prior "
        "(as --density-params ridge=R,prior_rows=0) (default: none)",
    )
    p_cmp.add_argument(
        "--density-params",
        metavar="KEY=VALUE,...",
        help="parameters of the default density of the expected-kernel methods "
        "whose density takes them, e.g. 'prior_rows=0' (the maximum-likelihood "
        "density of the papers) or 'n_components=bic' (latent_class chooses its "
        "number of classes by BIC; a range: 'n_components=(1,6)'); their results "
        "are named e.g. genrbf[prior_rows=0] (default: none, each density's "
        "defaults)",
    )
    p_cmp.add_argument(
        "--handle-unknown",
        choices=["error", "ignore"],
        help="what the matching-kernel methods "
        f"({', '.join(_matching_methods())}) do with a category level seen only "
        "in test rows: 'error' fails the cell, 'ignore' lets it match no "
        "training value; their results are named e.g. "
        "belanche_k1[handle_unknown=ignore] (default: none given, their "
        "density's own, 'error')",
    )
    p_cmp.add_argument(
        "--n-jobs",
        type=int,
        default=1,
        help="cells run in parallel by joblib processes (default: %(default)s)",
    )
    p_cmp.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the missingness draws, folds and fits (default: %(default)s)",
    )
    p_cmp.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (default: a bar on stderr)",
    )
    p_cmp.set_defaults(func=_cmd_compare)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
