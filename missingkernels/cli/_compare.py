"""The ``compare`` command: checks and the run.

The default line-ups (quick, quick on a table with nominal columns, full)
are :mod:`missingkernels.experiments`'s; :func:`cmd_compare` runs the
command.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import _registry
from ..experiments._lineups import (
    FULL_METHODS,
    QUICK_METHODS,
    default_methods,
)
from ..experiments._lineups import QUICK_MIXED_METHODS as QUICK_MIXED

# What _main reads here (the line-ups for the parser's help).
__all__ = [
    "FULL_METHODS",
    "QUICK_METHODS",
    "QUICK_MIXED",
    "cmd_compare",
    "matching_methods",
    "ridge_methods",
]


def _missing_extra(extra: str) -> list[str]:
    """The modules of an extra (``_optional.EXTRAS``) that cannot be imported."""
    import importlib

    from .._optional import EXTRAS

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


def _kernels_whose(test: Any) -> list[str]:
    """The registered kernels that, built bare, pass ``test(kernel, params)``
    (``params``: ``get_params(deep=False)``)."""
    names = []
    for name in _registry.list_kernels():
        try:
            kernel = _registry.get_kernel(name)
            params = kernel.get_params(deep=False)
        except Exception:  # a plugin kernel that cannot be built bare
            continue
        if test(kernel, params):
            names.append(name)
    return names


def ridge_methods() -> list[str]:
    """The registered kernels whose default density is the Gaussian EM one."""
    return _kernels_whose(lambda _, params: params.get("density") == "gaussian_em")


def _with_ridge(
    methods: list[str], ridge: float, C_grid: Any, gamma_grid: Any
) -> list[Any]:
    """``methods`` with those of :func:`ridge_methods` as specs whose Gaussian
    EM density has ``ridge`` instead of the default prior (``prior_rows=0``,
    as the runs that used it before the prior), named e.g.
    ``genrbf[ridge=0.001]`` so that their results never mix with those
    without it in a resumed results file."""
    import dataclasses

    from ..densities import GaussianEMDensity
    from ..experiments import resolve_method

    with_ridge = set(ridge_methods())
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


def matching_methods() -> dict[str, Any]:
    """The registered kernels whose default density models category codes and
    has ``handle_unknown`` (the matching kernels ``belanche_*``): name -> that
    density's registry name or object."""
    from ..experiments._methods import _models_category_codes

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

    from ..experiments import resolve_method

    return [
        dataclasses.replace(
            resolve_method(m, C_grid=C_grid, gamma_grid=gamma_grid),
            grid=dict(_QUICK_GRIDS[m]),
        )
        if isinstance(m, str) and m in _QUICK_GRIDS
        else m
        for m in methods
    ]


def table_methods() -> list[str]:
    """The registered kernels that take nominal columns themselves and have
    ``handle_unknown`` (``"missing"`` or ``"error"``, e.g. ``mixed_rbf``)."""
    return _kernels_whose(
        lambda kernel, params: (
            getattr(type(kernel), "_encode", None) is not None
            and "handle_unknown" in params
        )
    )


def _with_handle_unknown(
    methods: list[Any], handle_unknown: str, C_grid: Any, gamma_grid: Any
) -> list[Any]:
    """``methods`` with those that take ``handle_unknown`` as specs with it:
    the matching kernels (:func:`matching_methods`) in their density, the
    kernels of :func:`table_methods` themselves (``"missing"`` and
    ``"error"``: they cannot keep an unseen level as a value), named e.g.
    ``belanche_k1[handle_unknown=ignore]`` (their failed cells of a run without
    it are not resumed as theirs)."""
    import dataclasses

    from ..experiments import resolve_method

    matching = matching_methods()
    own = table_methods() if handle_unknown != "ignore" else []
    out: list[Any] = []
    for method in methods:
        if not isinstance(method, str) or method not in (*matching, *own):
            out.append(method)
            continue
        params: dict[str, Any] = {"handle_unknown": handle_unknown}
        if method in matching:
            density = _registry.new_density(matching[method]).set_params(**params)
            params = {"density": density}
        spec = resolve_method(
            method,
            C_grid=C_grid,
            gamma_grid=gamma_grid,
            kernel_params=params,
        )
        name = f"{method}[handle_unknown={handle_unknown}]"
        out.append(dataclasses.replace(spec, name=name))
    return out


# What to do about a failed cell, by a phrase of its error.
_ERROR_REMEDIES = {
    "not seen during fit": "rerun with --handle-unknown missing (a level seen "
    "only at test time is then a missing entry, as in the estimators' "
    "default) or --handle-unknown ignore (it then matches no training value)",
    "not seen in the training rows": "rerun with --handle-unknown missing (a "
    "level seen only at test time is then a missing entry, the default of "
    "these methods)",
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
    (they are as sparse in each training set), said once before the run
    rather than by a warning per fit."""
    import numpy as np

    from .._validation import MIN_OBSERVED, sparse_features

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
        categories={c: v for c, v in ds.categories.items() if c not in drop},
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


def cmd_compare(args: argparse.Namespace) -> int:
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


class _Refused(Exception):
    """A check refused the run: :func:`_compare` prints its message, if any."""


def _load_checked_dataset(args: argparse.Namespace) -> tuple[Any, str]:
    """Read the named dataset or the CSV and check it; return it and the mechanism."""
    from .. import datasets as mkd

    if (args.dataset is None) == (args.csv is None):
        raise _Refused("give a dataset name or --csv PATH (not both).")
    nominal = [c.strip() for c in (args.nominal or "").split(",") if c.strip()]
    drop = [c.strip() for c in (args.drop or "").split(",") if c.strip()]
    if args.csv is None and (nominal or drop):
        raise _Refused(
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
        raise _Refused(str(exc)) from exc
    mechanism = args.mechanism
    if mechanism == "auto":
        mechanism = "none" if ds.missing_rate > 0 else "mar"
    if mechanism != "none" and ds.missing_rate > 0:
        raise _Refused(
            f"{ds.name} already has missing values "
            f"({100 * ds.missing_rate:.1f}%); use --mechanism none, or a complete "
            "dataset to simulate missingness."
        )
    if ds.task == "classification" and len(set(ds.y.tolist())) < 2:
        where = f"column {args.target!r}" if args.csv is not None else "target"
        only = ds.y.tolist()[0]
        raise _Refused(
            f"the {where} of {ds.name} has a single class ({only!r}), and a "
            "classification needs at least two; check --target, or use --task "
            "regression for a numeric target."
        )
    return ds, mechanism


def _chosen_methods(
    args: argparse.Namespace, ds: Any, C_grid: Any, gamma_grid: Any
) -> list[Any]:
    """The methods to run: given or default, with --ridge, --density-params etc."""
    if args.methods:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    else:
        methods = default_methods(quick=args.quick, nominal=bool(ds.nominal))
        known = set(_registry.list_kernels()) | set(_registry.list_baselines())
        skipped = [m for m in methods if m not in known]
        if skipped:
            print(f"(not available here, skipped: {', '.join(skipped)})")
        methods = [m for m in methods if m in known]
    run_methods: list[Any] = list(methods)
    if args.ridge is not None:
        if not 0.0 < args.ridge < float("inf"):
            raise _Refused(
                f"--ridge must be a positive finite number (e.g. 1e-3), got "
                f"{args.ridge}."
            )
        run_methods = _with_ridge(methods, args.ridge, C_grid, gamma_grid)
        if run_methods == methods:
            raise _Refused(
                "--ridge applies to the expected-kernel methods with a Gaussian "
                f"EM density ({', '.join(ridge_methods())}); none of "
                f"{', '.join(methods)} has one."
            )
    if args.density_params is not None:
        from .._density_options import apply_density_params

        run_methods, problem = apply_density_params(
            args.density_params, run_methods, C_grid, gamma_grid
        )
        if problem:
            raise _Refused(problem)
    if args.handle_unknown is not None:
        before = run_methods
        run_methods = _with_handle_unknown(
            run_methods, args.handle_unknown, C_grid, gamma_grid
        )
        if run_methods == before:
            raise _Refused(_handle_unknown_refusal(args.handle_unknown, methods))
    if args.quick:
        run_methods = _with_quick_grids(run_methods, C_grid, gamma_grid)
    return run_methods


def _handle_unknown_refusal(handle_unknown: str, methods: Sequence[str]) -> str:
    """Why --handle-unknown does not apply to any of ``methods``."""
    if handle_unknown == "ignore":
        return (
            "--handle-unknown ignore applies to the matching-kernel "
            f"methods ({', '.join(matching_methods())}), whose density "
            "keeps an unseen level as a value matching no training "
            f"value; none of {', '.join(methods)} is one (the methods "
            f"with nominal columns, {', '.join(table_methods())}, take "
            "--handle-unknown missing, their default, or error)."
        )
    return (
        "--handle-unknown applies to the matching-kernel methods "
        f"({', '.join(matching_methods())}) and the kernels with "
        f"nominal columns ({', '.join(table_methods())}); none of "
        f"{', '.join(methods)} is one."
    )


def _specs_and_notes(
    run_methods: Sequence[Any],
    ds: Any,
    class_weight: str | None,
    C_grid: Any,
    gamma_grid: Any,
) -> tuple[list[Any], list[str]]:
    """Resolve the methods to specs; drop binary-only ones a multiclass task skips.

    The notes are the lines printed under the run's header.
    """
    from ..experiments import resolve_method
    from ..experiments._cv import accepts_class_weight

    try:
        specs = [
            resolve_method(m, C_grid=C_grid, gamma_grid=gamma_grid)
            if isinstance(m, str)
            else m
            for m in run_methods
        ]
    except ValueError as exc:
        raise _Refused(str(exc)) from exc
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
            raise _Refused(
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
    return specs, notes


def _run_recording_warnings(
    args: argparse.Namespace,
    ds: Any,
    specs: list[Any],
    run: dict[str, Any],
    out: Path,
) -> Any:
    """Run the comparison, then print the warnings it raised (also if it fails)."""
    from ..experiments import ComparisonData, run_comparison
    from ..experiments._results import _RunInProgressError

    log: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as log:
            return run_comparison(
                {
                    ds.name: ComparisonData(
                        ds.X,
                        ds.y,
                        ds.task,
                        ds.nominal_indices or None,
                        feature_names=ds.feature_names,
                        categories=ds.categories,
                    )
                },
                specs,
                mechanisms=[run["mechanism"]],
                rates=run["rates"],
                n_draws=run["reps"],
                outer_folds=run["folds"],
                inner_folds=run["inner"],
                C_grid=run["C_grid"],
                gamma_grid=run["gamma_grid"],
                selection_metric=args.selection_metric,
                class_weight=run["class_weight"],
                output=out / "results.csv",
                n_jobs=args.n_jobs,
                random_state=args.seed,
                progress=not args.no_progress,
            )
    # Printed here, not by _compare: the message comes before the warnings.
    except _RunInProgressError as exc:
        _fail(
            f"another run is writing to {out / 'results.csv'}; wait for it to "
            "finish, or give this run another --output-dir."
        )
        raise _Refused from exc
    except (ValueError, TypeError, ImportError) as exc:
        _fail(exc)
        raise _Refused from exc
    except OSError as exc:
        _fail(
            f"cannot write the results to {out} ({exc.strerror or exc}); free "
            "space or fix the permissions, then rerun the same command to resume."
        )
        raise _Refused from exc
    finally:  # also when interrupted: the warnings of the cells that ran
        _print_warnings(log, args.ridge)


def _print_report(
    results: Any, ds: Any, out: Path, run: dict[str, Any], elapsed: float
) -> None:
    """Write the table and figures of the results to ``out`` and print them."""
    from ..experiments import CELL_COLUMNS, majority_scores, report_comparison

    metric = "accuracy" if ds.task == "classification" else "r2"
    beside = ("balanced_accuracy",) if ds.task == "classification" else ()
    if not results["score"].notna().any():
        failed = results[results["error"] != ""]
        example = (
            f" ({failed['method'].iloc[0]}: {failed['error'].iloc[0]})"
            if len(failed)
            else ""
        )
        raise _Refused(
            f"every cell failed{example}; see the error column of "
            f"{out / 'results.csv'}."
        )
    mechanism = run["mechanism"]
    report = report_comparison(
        results,
        metric,
        out,
        blocks=CELL_COLUMNS,
        title="blocks: draw x outer fold",
        curves=(
            "rate_curves.png" if len(run["rates"]) > 1 and mechanism != "none" else None
        ),
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


def _compare(args: argparse.Namespace) -> int:
    """Check the data and options, run the comparison and report it."""
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
    try:
        return _checked_run(args)
    except _Refused as exc:
        return _fail(exc) if exc.args else 2


def _checked_run(args: argparse.Namespace) -> int:
    """The steps of ``compare`` once its extra is there; a refusal raises."""
    import time

    from ..experiments import PAPER_C_GRID, PAPER_GAMMA_GRID

    ds, mechanism = _load_checked_dataset(args)
    # After the data checks: a refused run leaves no empty directory behind.
    out = Path(args.output_dir)
    problem = _output_dir_error(out)
    if problem:
        raise _Refused(problem)
    quick = args.quick
    C_grid = (1.0, 8.0, 64.0) if quick else PAPER_C_GRID
    gamma_grid = (2.0**-5, 2.0**-3, 2.0**-1) if quick else PAPER_GAMMA_GRID
    run_methods = _chosen_methods(args, ds, C_grid, gamma_grid)
    class_weight = None if args.class_weight == "none" else args.class_weight
    if class_weight is not None and ds.task != "classification":
        raise _Refused(
            f"--class-weight {class_weight} weighs classes; {ds.name} is a "
            f"{ds.task} task."
        )
    default_metric = "accuracy" if ds.task == "classification" else "r2"
    selection = args.selection_metric or default_metric
    specs, notes = _specs_and_notes(run_methods, ds, class_weight, C_grid, gamma_grid)
    run: dict[str, Any] = {
        "mechanism": mechanism,
        "rates": args.rate or [0.3],
        "folds": args.folds or (3 if quick else 5),
        "inner": args.inner_folds or (3 if quick else 5),
        "reps": args.repetitions or (1 if quick else 10),
        "C_grid": C_grid,
        "gamma_grid": gamma_grid,
        "class_weight": class_weight,
    }
    print(
        f"{ds.name}: {ds.X.shape[0]} rows x {ds.X.shape[1]} features"
        + (f" ({len(ds.nominal)} nominal)" if ds.nominal else "")
        + f", {ds.task}; "
        + _missingness_text(args.mechanism, mechanism, run["rates"], ds.missing_rate)
        + f"; {_repetitions_text(mechanism, run['reps'])}, "
        f"{run['folds']}x{run['inner']} nested CV selecting by {selection}"
        + ("" if class_weight is None else f", class_weight {class_weight}")
        + f"; methods: {', '.join(s.name for s in specs)}"
    )
    for note in notes:
        print(note)
    start = time.perf_counter()
    results = _run_recording_warnings(args, ds, specs, run, out)
    elapsed = time.perf_counter() - start
    _print_report(results, ds, out, run, elapsed)
    return 0
