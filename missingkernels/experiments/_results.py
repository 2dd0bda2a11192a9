"""Results files of the comparisons: read, append, resume.

:func:`run_comparison` appends one row per cell and metric to a CSV file as
cells finish (columns :data:`RESULT_COLUMNS`); a rerun with the same file
skips the cells it holds, guarded by a sidecar ``<file>.config.json``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._optional import import_optional
from ._cv import _rate_key

#: Columns of the long-format results, in file order.
RESULT_COLUMNS = (
    "dataset",
    "task",
    "mechanism",
    "rate",
    "draw",
    "fold",
    "method",
    "params",
    "metric",
    "score",
    "fit_seconds",
    "cell_seconds",
    "n_train",
    "n_test",
    "missing_rate",
    "error",
)

_TEXT_COLUMNS = ("dataset", "task", "mechanism", "method", "params", "metric", "error")


def read_results(path: str | os.PathLike) -> Any:
    """Read a results file written by :func:`run_comparison`.

    A partial last line (a run appending to the file now, or one killed while
    writing) is left out; the file is not changed, so reading is safe while a
    run appends to it.

    Parameters
    ----------
    path : path
        The CSV file (``output`` of :func:`run_comparison`).

    Returns
    -------
    results : pandas.DataFrame
        Columns :data:`RESULT_COLUMNS`; text columns as str (an empty
        ``error`` is ``""``), a failed cell's ``score`` NaN.
    """
    pd = import_optional("pandas", "experiments", "read_results")
    text = Path(path).read_text(encoding="utf-8")
    text = text[: text.rfind("\n") + 1]
    return pd.read_csv(
        io.StringIO(text),
        dtype={c: str for c in _TEXT_COLUMNS},
        keep_default_na=False,
        na_values={"score": [""], "fit_seconds": [""]},
    )


def _read_done(path: Path) -> tuple[Any, set]:
    if not path.exists() or path.stat().st_size == 0:
        return None, set()
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):
        # A run killed while writing leaves a partial last line: drop it, the
        # cell is recomputed.
        path.write_bytes(raw[: raw.rfind(b"\n") + 1])
    frame = read_results(path)
    done = {
        (r.dataset, r.mechanism, _rate_key(r.rate), int(r.draw), int(r.fold), r.method)
        for r in frame.itertuples()
    }
    return frame, done


def _append(path: Path, rows: list[dict]) -> None:
    import csv

    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=RESULT_COLUMNS, lineterminator="\n")
        if new:
            writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in RESULT_COLUMNS})
        fh.flush()
        os.fsync(fh.fileno())


class _RunInProgressError(RuntimeError):
    """Another run holds the lock of the results file."""


@contextlib.contextmanager
def _exclusive(path: Path | None) -> Iterator[None]:
    """Refuse a second run appending to the same results file at once."""
    if path is None:
        yield
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks
        yield
        return
    lock = path.with_name(path.name + ".lock").open("w")
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise _RunInProgressError(
                f"Another run is appending to {path}; wait for it to finish, or "
                "choose another output file."
            ) from None
        yield
        # Done: the lock file goes too (a run that dies leaves it behind,
        # unlocked, for the next run to take over).
        lock_path = Path(lock.name)
        with contextlib.suppress(OSError):
            lock_path.unlink()
    finally:
        lock.close()  # closing releases the lock, also when the process dies


def _check_config(path: Path, config: dict) -> None:
    side = path.with_name(path.name + ".config.json")
    has_rows = path.exists() and path.stat().st_size > 0
    if side.exists() and has_rows:
        old = json.loads(side.read_text())
        if old != config:
            diff = sorted(k for k in {*config, *old} if old.get(k) != config.get(k))
            raise ValueError(
                f"{path} holds results of another configuration (differs in "
                f"{diff}); choose a new output file or delete it to start over."
            )
    elif has_rows:
        raise ValueError(
            f"{path} exists without its {side.name}; cannot tell whether it is "
            "this configuration. Choose a new output file."
        )
    else:  # no results yet: nothing to protect, (re)write the configuration
        side.write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
