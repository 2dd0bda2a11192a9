"""The ``missingkernels`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import _registry
from ._version import __version__

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
        "kind", nargs="?", choices=sorted(_LISTERS), help="only this kind"
    )
    p_list.set_defaults(func=_cmd_list)
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
