"""Store the Gram battery of ``tests/_gram_battery.py`` (issue 50).

Run with the code whose Grams are the reference (the pre-refactor commit,
checked out in a worktree and put first on the path)::

    git worktree add --detach /tmp/battery-old 0b25213
    PYTHONPATH=/tmp/battery-old .venv/bin/python tests/make_gram_battery.py \\
        --out tests/data/gram_battery.npz

It writes the arrays (``numpy.savez_compressed``) and a JSON sidecar of the
same name: the commit of the imported package, the fingerprint of the
floating-point environment (BLAS, numeric packages, CPU) that
``tests/test_gram_battery.py`` compares to choose between the exact and the
tolerance mode, and this command. Not a test module (not ``test_*``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _gram_battery as gb
import numpy as np


def _commit(package_dir: Path) -> dict[str, object]:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(package_dir), *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty_package": bool(git("status", "--porcelain", "--", ".")),
    }


def _command() -> str:
    """This run's command line, with the PYTHONPATH that chose the code."""
    path = os.environ.get("PYTHONPATH")
    prefix = [f"PYTHONPATH={shlex.quote(path)}"] if path else []
    return " ".join([*prefix, "python", *map(shlex.quote, sys.argv)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/data/gram_battery.npz"))
    args = parser.parse_args(argv)

    from threadpoolctl import threadpool_info

    import missingkernels

    package_dir = Path(missingkernels.__file__).resolve().parent
    print(f"missingkernels imported from {package_dir}", file=sys.stderr)
    start = time.perf_counter()
    arrays = gb.battery()
    elapsed = time.perf_counter() - start
    stored = gb.stored_form(arrays)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, **stored)
    sidecar = {
        "source": {"package": str(package_dir), **_commit(package_dir)},
        "fingerprint": gb.fingerprint(),
        "threadpool_info": threadpool_info(),
        "env": {
            k: os.environ.get(k)
            for k in (
                "OPENBLAS_CORETYPE",
                "OPENBLAS_NUM_THREADS",
                "OMP_NUM_THREADS",
                "MISSINGKERNELS_NUM_THREADS",
                "NUMBA_CPU_NAME",
                "PYTHONPATH",
            )
        },
        "python": sys.version,
        "command": _command(),
        "cases": gb.case_names(),
        "n_arrays": len(arrays),
        "n_stored": len(stored),
        "seconds": round(elapsed, 1),
    }
    args.out.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")
    size = args.out.stat().st_size
    print(
        f"{len(arrays)} arrays of {len(gb.case_names())} cases in {elapsed:.1f} s; "
        f"{args.out} {size / 1e6:.2f} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
