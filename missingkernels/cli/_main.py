"""The ``missingkernels`` command line: the parser, ``list`` and ``datasets``."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence

from .. import _registry
from .._version import __version__
from ._compare import (
    FULL_METHODS,
    QUICK_METHODS,
    QUICK_MIXED,
    cmd_compare,
    matching_methods,
    ridge_methods,
    table_methods,
)

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


def _cmd_datasets(args: argparse.Namespace) -> int:
    import os

    from .. import datasets as mkd

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
    _add_list_command(sub)
    _add_datasets_command(sub)
    _add_compare_command(sub)
    return parser


def _add_list_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Add the ``list`` command to the subparsers ``sub``."""
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


def _add_datasets_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Add the ``datasets`` command to the subparsers ``sub``."""
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


def _add_compare_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    """Add the ``compare`` command and its options to the subparsers ``sub``."""
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
    # In this order: the order of the options in --help.
    _add_compare_data_options(p_cmp)
    _add_compare_protocol_options(p_cmp)
    _add_compare_method_options(p_cmp)
    _add_compare_execution_options(p_cmp)
    p_cmp.set_defaults(func=cmd_compare)


def _add_compare_data_options(p_cmp: argparse.ArgumentParser) -> None:
    """The data of ``compare``: dataset or CSV, its columns, the missingness."""
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


def _add_compare_protocol_options(p_cmp: argparse.ArgumentParser) -> None:
    """The protocol of ``compare``: methods, folds, repetitions, selection."""
    p_cmp.add_argument(
        "--methods",
        help="comma-separated kernels and baselines, see 'missingkernels list' "
        f"(default: {','.join(FULL_METHODS)}, and mixed_rbf on a table with "
        f"nominal columns; with --quick {','.join(QUICK_METHODS)}, or "
        f"{','.join(QUICK_MIXED)} with nominal columns)",
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
        f"{','.join(QUICK_METHODS)} ({','.join(QUICK_MIXED)} on a table with "
        "nominal columns) (default: off, the genRBF paper's protocol and grids)",
    )
    p_cmp.add_argument(
        "--output-dir",
        default="missingkernels-compare",
        help="where results.csv, table.md and the figures go; a rerun resumes "
        "from its results.csv (default: %(default)s)",
    )


def _add_compare_method_options(p_cmp: argparse.ArgumentParser) -> None:
    """The options ``compare`` passes to the methods: ridge, density, unknown levels."""
    p_cmp.add_argument(
        "--ridge",
        type=float,
        help="ridge of the Gaussian EM density of the expected-kernel methods "
        f"({', '.join(ridge_methods())}), the remedy of a singular covariance "
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
        choices=["error", "missing", "ignore"],
        help="what the methods do with a category level seen only in test "
        "rows, in the words of the estimators' handle_unknown: 'error' fails "
        "the cell, 'missing' makes it a missing entry; 'ignore' (the "
        f"matching-kernel methods {', '.join(matching_methods())} only) lets "
        "it match no training value. It reaches those methods and the "
        f"kernels with nominal columns ({', '.join(table_methods())}); their "
        "results are named e.g. belanche_k1[handle_unknown=ignore] (default: "
        "none given, each method's own: 'error' for the matching kernels, "
        "'missing' for the others)",
    )


def _add_compare_execution_options(p_cmp: argparse.ArgumentParser) -> None:
    """How ``compare`` runs: processes, seed, progress bar."""
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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    return int(args.func(args))
