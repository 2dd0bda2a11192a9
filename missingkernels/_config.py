"""Package-wide settings, set globally or for a block (as scikit-learn's).

- ``max_gram_memory``: the most memory (bytes) an exact Gram matrix may take
  before the kernels refuse to allocate it. None: half the machine's physical
  memory (8 GiB where it cannot be read). The environment variable
  ``MISSINGKERNELS_MAX_GRAM_MEMORY`` (bytes, or with a unit: ``"4GB"``,
  ``"512MiB"``) sets the default.
- ``fit_cache_memory``: the most memory (bytes) the cache of fitted densities
  and training Gram matrices may hold in a process (``missingkernels._fit_cache``);
  0 disables it. None: ``MISSINGKERNELS_FIT_CACHE_MEMORY``, else 256 MiB.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["config_context", "get_config", "set_config"]

MAX_GRAM_MEMORY_ENV = "MISSINGKERNELS_MAX_GRAM_MEMORY"
FIT_CACHE_MEMORY_ENV = "MISSINGKERNELS_FIT_CACHE_MEMORY"
_DEFAULT_FIT_CACHE = 256 * 2**20
_FALLBACK_MEMORY = 8 * 2**30
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_DEFAULTS: dict[str, Any] = {"max_gram_memory": None, "fit_cache_memory": None}
_UNCHANGED: Any = object()
_local = threading.local()


def _state() -> dict[str, Any]:
    if not hasattr(_local, "config"):
        _local.config = dict(_DEFAULTS)
    config: dict[str, Any] = _local.config
    return config


def parse_memory(
    value: Any, what: str = "max_gram_memory", allow_zero: bool = False
) -> int:
    """Bytes from an int or a string such as ``"4GB"`` or ``"512 MiB"``.

    A fractional number of bytes is rounded to the nearest byte; a value
    that rounds to 0 bytes (where 0 is not allowed), an infinite or NaN one
    is a ValueError saying so.
    """
    if isinstance(value, bool):
        raise TypeError(f"{what} must be a number of bytes, got {value!r}.")
    if isinstance(value, int | float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(
                f"{what} must be a finite number of bytes, got {value!r}; None "
                "restores the default."
            )
        if not (value >= 0 if allow_zero else value > 0):
            sign = "non-negative" if allow_zero else "positive"
            raise ValueError(f"{what} must be {sign}, got {value!r}.")
        n = round(value)
        if n == 0 and not allow_zero:
            raise ValueError(
                f"{what}={value!r} is less than one byte: sizes are in bytes "
                f"(did you mean '{value}GB'?)."
            )
        return int(n)
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", value)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS:
            raise ValueError(
                f"{what} must be a number of bytes or a size such as '4GB' or "
                f"'512MiB', got {value!r}."
            )
        return parse_memory(float(match.group(1)) * _UNITS[str(unit)], what, allow_zero)
    raise TypeError(f"{what} must be a number of bytes or a string, got {value!r}.")


def physical_memory() -> int | None:
    """The machine's memory in bytes, or None where it cannot be read."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def max_gram_memory() -> tuple[int, str]:
    """The Gram memory limit in bytes and where it comes from (for messages)."""
    value = _state()["max_gram_memory"]
    if value is not None:
        return int(value), "set with missingkernels.set_config"
    env = os.environ.get(MAX_GRAM_MEMORY_ENV)
    if env:
        return parse_memory(env, MAX_GRAM_MEMORY_ENV), f"${MAX_GRAM_MEMORY_ENV}"
    physical = physical_memory()
    if physical is None:
        return _FALLBACK_MEMORY, "the default"
    return physical // 2, "half the machine's memory"


def fit_cache_memory() -> int:
    """The memory limit of the fit cache in bytes (0: disabled)."""
    value = _state()["fit_cache_memory"]
    if value is not None:
        return int(value)
    env = os.environ.get(FIT_CACHE_MEMORY_ENV)
    if env:
        return parse_memory(env, FIT_CACHE_MEMORY_ENV, allow_zero=True)
    return _DEFAULT_FIT_CACHE


def explicit_config() -> dict[str, Any]:
    """The settings this thread set (with :func:`set_config` or
    :func:`config_context`), without those left at their defaults."""
    return {k: v for k, v in _state().items() if v is not None}


@contextmanager
def carried_config(settings: dict[str, Any]) -> Iterator[None]:
    """``settings`` (from :func:`explicit_config` of another process) for the
    block, where this thread has not set its own."""
    state = _state()
    changes = {k: v for k, v in settings.items() if state.get(k) is None}
    old = {k: state[k] for k in changes}
    state.update(changes)
    try:
        yield
    finally:
        state.update(old)


def format_bytes(n: float) -> str:
    """``n`` bytes for people: ``"39.1 KiB"``, ``"11.9 GiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - the loop returns


def arrays_bytes(value: Any, _seen: set[int] | None = None) -> int:
    """The bytes of the numpy arrays in ``value``: an array, or tuples,
    lists, dicts and objects' attributes holding them, each array counted
    once (a lower bound of its memory, and of its pickle's size)."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, dict):
        value = list(value.values())
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        value = list(vars(value).values())
    if isinstance(value, tuple | list):
        return sum(arrays_bytes(v, seen) for v in value)
    return 0


def gram_memory(n_rows: int, n_cols: int) -> int:
    """Bytes an exact Gram takes, as the limit counts them: the float64
    matrix and one working copy of it."""
    return 16 * n_rows * n_cols


def check_gram_memory(owner: str, n_rows: int, n_cols: int) -> None:
    """ValueError, before allocation, when an exact Gram exceeds the limit.

    Counts the float64 matrix and one working copy of it.
    """
    needed = gram_memory(n_rows, n_cols)
    limit, source = max_gram_memory()
    if needed > limit:
        raise ValueError(
            f"{owner}: the {n_rows} x {n_cols} Gram matrix needs about "
            f"{format_bytes(needed)} (the matrix and one working copy), above the "
            f"limit of {format_bytes(limit)} ({source}). Use the route without a "
            "Gram matrix (MissingKernelSVC/SVR(route='features'), or "
            "ExpectedKernelFeatures and a linear model), fit on a random "
            "subsample, predict in smaller batches, or, if the machine has the "
            "memory, raise the limit with "
            "missingkernels.set_config(max_gram_memory=...)."
        )


def get_config() -> dict[str, Any]:
    """The current settings (see :func:`set_config`).

    Returns
    -------
    config : dict

    Examples
    --------
    >>> from missingkernels import get_config
    >>> sorted(get_config())
    ['fit_cache_memory', 'max_gram_memory']
    """
    return dict(_state())


def set_config(
    max_gram_memory: Any = _UNCHANGED, fit_cache_memory: Any = _UNCHANGED
) -> None:
    """Change the package's settings for this thread.

    A setting not passed is left as it is.

    Parameters
    ----------
    max_gram_memory : int, str or None
        The most memory an exact Gram matrix (the training Gram of an SVM,
        ``k(X, Y)``) may take; larger ones are refused before allocation with
        a ValueError. Bytes, or a size such as ``"4GB"``. None restores the
        default: ``$MISSINGKERNELS_MAX_GRAM_MEMORY``, else half the machine's
        physical memory.
    fit_cache_memory : int, str or None
        The most memory the process's cache of fitted densities and training
        Gram matrices may hold (bytes or a size such as ``"1GB"``; 0 turns
        the cache off). A density fitted on rows identical to an earlier
        fit's, with identical parameters, is then a copy of that fit, and a
        kernel's training Gram is reused across ``C``: a grid search over
        ``C`` and ``gamma`` fits the density once per fold (see the user
        guide, "Model selection"). None restores the default:
        ``$MISSINGKERNELS_FIT_CACHE_MEMORY``, else 256 MiB.

    Notes
    -----
    The settings are per thread, like scikit-learn's. They travel with the
    estimators to joblib worker processes (``cross_validate(...,
    n_jobs=2)``, ``GridSearchCV(..., n_jobs=2)``): a clone of
    :class:`~missingkernels.MissingKernelSVC`,
    :class:`~missingkernels.MissingKernelSVR` or
    :class:`~missingkernels.MissingKernelTransformer` records the settings of
    the thread that cloned it, and its ``fit``, ``predict`` and ``transform``
    apply them in any other process whose thread has not set its own.

    Examples
    --------
    >>> from missingkernels import set_config, get_config
    >>> set_config(max_gram_memory="2GB")
    >>> get_config()["max_gram_memory"]
    2000000000
    >>> set_config(max_gram_memory=None)
    >>> set_config(fit_cache_memory=0)  # no cache in this thread
    >>> set_config(fit_cache_memory=None)
    """
    state = _state()
    if max_gram_memory is not _UNCHANGED:
        state["max_gram_memory"] = (
            None if max_gram_memory is None else parse_memory(max_gram_memory)
        )
    if fit_cache_memory is not _UNCHANGED:
        state["fit_cache_memory"] = (
            None
            if fit_cache_memory is None
            else parse_memory(fit_cache_memory, "fit_cache_memory", allow_zero=True)
        )


@contextmanager
def config_context(**changes: Any) -> Iterator[None]:
    """Settings for the ``with`` block only (see :func:`set_config`).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels import config_context, get_kernel
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> k = get_kernel("genrbf").fit(X)
    >>> with config_context(max_gram_memory=1000):
    ...     k(X)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: GenRBFKernel: the 50 x 50 Gram matrix needs about 39.1 KiB...
    """
    old = get_config()
    set_config(**changes)
    try:
        yield
    finally:
        set_config(**old)
