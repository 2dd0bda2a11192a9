"""Threads of the compiled kernel loops, and BLAS kept serial beside them.

The loops release the GIL and run on threads over disjoint output rows;
``MISSINGKERNELS_NUM_THREADS`` caps their number (:func:`n_threads`).
``LOCK`` lets one Gram computation run at a time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

NUM_THREADS_ENV_VAR = "MISSINGKERNELS_NUM_THREADS"

# One Gram computation at a time: each already uses every allowed core, and
# this bounds the peak memory of concurrent calls from user threads.
LOCK = threading.RLock()


class _SerialBlas:
    """One BLAS thread while the compiled loops run on several.

    Idle BLAS worker threads spin-wait after each call (OpenBLAS: about
    0.1 s) and take the cores from the loops: measured on two cores, a cross
    Gram after the small BLAS calls that prepare it ran twice as slow. The
    BLAS work around the loops is on small matrices, so one thread costs it
    nothing. Nested and concurrent uses share one limit, set by the first to
    enter and lifted by the last to leave.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._controller: Any = None
        self._limit: Any = None

    def __enter__(self) -> None:
        several = n_threads() > 1  # may raise: before counting this use in
        with self._lock:
            self._depth += 1
            if self._depth == 1 and several:
                if self._controller is None:
                    from threadpoolctl import ThreadpoolController

                    self._controller = ThreadpoolController()
                self._limit = self._controller.limit(limits=1, user_api="blas")

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._limit is not None:
                self._limit.restore_original_limits()
                self._limit = None


serial_blas = _SerialBlas()


def n_threads() -> int:
    """Threads used by the compiled loops.

    ``MISSINGKERNELS_NUM_THREADS`` if set, else ``OMP_NUM_THREADS`` if set
    (joblib sets it in its worker processes to avoid oversubscription), else
    the available cores (at most 16).
    """
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        available = os.cpu_count() or 1
    value = os.environ.get(NUM_THREADS_ENV_VAR, "").strip()
    if not value:
        omp = os.environ.get("OMP_NUM_THREADS", "").strip()
        if omp.isdigit() and int(omp) > 0:
            return int(omp)
    if value:
        try:
            requested = int(value)
        except ValueError:
            raise ValueError(
                f"{NUM_THREADS_ENV_VAR} must be a positive integer, got {value!r}."
            ) from None
        if requested < 1:
            raise ValueError(
                f"{NUM_THREADS_ENV_VAR} must be a positive integer, got {value!r}."
            )
        return requested
    return max(1, min(available, 16))


def run(tasks: Sequence[Callable[[], object]]) -> list[object]:
    """Run callables, on threads when there are several."""
    if len(tasks) <= 1:
        return [task() for task in tasks]
    with ThreadPoolExecutor(max_workers=len(tasks)) as pool:
        futures = [pool.submit(task) for task in tasks]
        return [f.result() for f in futures]


def deal(tiles: np.ndarray, n_lists: int, growing: bool) -> list[np.ndarray]:
    """``tiles`` dealt round robin into ``n_lists`` lists; with ``growing``
    (the work of tile t grows with t: it pairs with the tiles before it) in
    pairs of one tile from each end, first with last, second with second
    last, so that each list gets an equal share of the work."""
    order, per_turn = tiles, 1
    if growing:
        order, per_turn = np.empty_like(tiles), 2
        order[0::2] = tiles[: (len(tiles) + 1) // 2]
        order[1::2] = tiles[::-1][: len(tiles) // 2]
    owner = (np.arange(len(order)) // per_turn) % n_lists
    return [np.ascontiguousarray(order[owner == t]) for t in range(n_lists)]
