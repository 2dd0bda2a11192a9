"""A bounded cache of fits that depend only on the training rows and parameters.

``GridSearchCV(MissingKernelSVC(), {"C": ..., "gamma": ...})`` fits the same
density on the same training rows at every grid point, and the same kernel
(hence the same training Gram matrix) at every ``C``. This module keeps such
fits, keyed by a digest of the rows and the parameters, so that the grid costs
about one density fit per fold:

- :func:`fit_density` fits a density or returns a copy of the one fitted on
  identical rows with identical parameters (used by the expected kernels);
- :func:`fit_kernel_gram` does the same for a kernel and its training Gram
  matrix (used by :class:`~missingkernels.MissingKernelSVC` and
  :class:`~missingkernels.MissingKernelSVR`).

Safety:

- the key holds the rows' shape, dtype and a 128-bit BLAKE2 digest of their
  bytes (NaN included), the object's class (the class object itself, so a
  class redefined under the same name does not get the old class's fits) and
  all of its parameters
  (nested estimators by class and parameters); anything that cannot be told
  apart by value makes the fit uncacheable: a ``random_state`` of None or a
  ``RandomState``/``Generator`` (two fits would differ), a fitted estimator
  as a parameter (e.g. ``FrozenEstimator``), a callable, or an object of
  another type;
- an entry is stored pickled and every hit unpickles a new object: fitted
  attributes are never shared between estimators, and what is cached is what
  pickling (hence joblib) would carry;
- the cache is per process (joblib workers have their own) and guarded by a
  lock (threads); its size is bounded by ``fit_cache_memory``
  (:func:`missingkernels.set_config`), least recently used entries first,
  and 0 disables it.

Warnings raised by a fit (e.g. a convergence warning) are recorded with it
and raised again by every copy handed out later: a fit warns the same way
whether it was computed or found (the comparison runner's summary counts
repeated warnings once each).
"""

from __future__ import annotations

import hashlib
import pickle
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ._config import arrays_bytes, fit_cache_memory

_lock = threading.Lock()
_entries: OrderedDict[tuple, bytes] = OrderedDict()
_size = 0
_stats = {"hits": 0, "misses": 0, "uncacheable": 0}


class _Uncacheable(Exception):
    """A parameter that cannot be compared by value."""


def rows_digest(X: np.ndarray) -> tuple:
    """Shape, dtype and a digest of the bytes of an array (NaN included)."""
    data = np.ascontiguousarray(X)
    digest = hashlib.blake2b(data.tobytes(), digest_size=16).digest()
    return data.shape, data.dtype.str, digest


def _freeze(value: Any) -> Any:
    """A hashable value equal for equal parameters (else _Uncacheable)."""
    from sklearn.base import BaseEstimator

    if value is None or isinstance(value, bool | str | bytes):
        return (type(value).__name__, value)
    if isinstance(value, int | float | complex | np.generic):
        # repr tells 0.0 from -0.0 and keeps NaN equal to itself.
        return (type(value).__name__, repr(value))
    if isinstance(value, tuple | list):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        items = sorted(((repr(k), _freeze(v)) for k, v in value.items()))
        return ("dict", tuple(items))
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise _Uncacheable
        return ("ndarray", rows_digest(value))
    if isinstance(value, type):
        return ("type", value.__module__, value.__qualname__, value)
    if isinstance(value, BaseEstimator):
        return _freeze_estimator(value)
    raise _Uncacheable


def _freeze_estimator(est: Any) -> tuple:
    # A fitted estimator carries state its parameters do not show.
    if any(k.endswith("_") and not k.startswith("__") for k in vars(est)):
        raise _Uncacheable
    params = est.get_params(deep=False)
    if "random_state" in params and params["random_state"] is None:
        raise _Uncacheable  # two fits would differ
    if isinstance(params.get("density"), str):
        # A density given by name is the registry's object with its default
        # parameters: key on that object, so that a name whose density draws
        # at random (random_state=None by default) is not cached either.
        params = {**params, "density": _named_density(params["density"])}
    cls = type(est)
    hint = getattr(est, "_feature_names_hint", None)
    return (
        "estimator",
        cls.__module__,
        cls.__qualname__,
        # The class object itself (compared by identity): a class redefined
        # under the same name (an edited notebook cell) is another class,
        # whose fits are not the old class's.
        cls,
        _freeze(params),
        None if hint is None else tuple(map(str, hint)),
    )


def _named_density(name: str) -> Any:
    """The density a kernel builds from a registry name (the name itself when
    the registry does not know it: the kernel's fit will say so)."""
    from ._registry import new_density

    try:
        return new_density(name)
    except Exception:
        return name


def _key(kind: str, est: Any, X: np.ndarray) -> tuple | None:
    try:
        return (kind, rows_digest(X), _freeze_estimator(est))
    except _Uncacheable:
        return None


def _lookup(key: tuple) -> Any:
    with _lock:
        blob = _entries.get(key)
        if blob is None:
            _stats["misses"] += 1
            return None
        _entries.move_to_end(key)
        _stats["hits"] += 1
    return pickle.loads(blob)


def _store(key: tuple, value: Any, limit: int) -> None:
    global _size
    if arrays_bytes(value) > limit:
        return  # would not fit: not even pickled (a large Gram, a copy saved)
    try:
        blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an unpicklable fit is simply not cached
        return
    if len(blob) > limit:
        return
    with _lock:
        if key in _entries:
            return
        _entries[key] = blob
        _size += len(blob)
        while _size > limit and _entries:
            _, old = _entries.popitem(last=False)
            _size -= len(old)


def _cached(kind: str, est: Any, X: np.ndarray, compute: Callable[[], Any]) -> Any:
    limit = fit_cache_memory()
    if limit <= 0:
        return compute()
    key = _key(kind, est, X)
    if key is None:
        with _lock:
            _stats["uncacheable"] += 1
        return compute()
    found = _lookup(key)
    if found is not None:
        value, records = found
        _replay(records)
        return value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = compute()
    records = [(str(w.message), w.category, w.filename, w.lineno) for w in caught]
    _replay(records)
    _store(key, (value, records), limit)
    return value


def _replay(records: list[tuple[str, type, str, int]]) -> None:
    """Raise recorded warnings again, through the caller's warning filters."""
    for message, category, filename, lineno in records:
        warnings.warn_explicit(message, category, filename, lineno)


def fit_density(density: Any, X: np.ndarray) -> Any:
    """``density.fit(X, None)``, or a copy of an identical earlier fit.

    Parameters
    ----------
    density : density estimator
        Unfitted; its class and parameters are part of the key.
    X : ndarray of shape (n_samples, n_features)
        The validated training rows.

    Returns
    -------
    density : object
        The fitted density: ``density`` itself after a fit, or a new object
        (unpickled from the cache) equal to what that fit gives.
    """

    def compute() -> Any:
        # y passed explicitly: sklearn.frozen.FrozenEstimator requires it.
        density.fit(X, None)
        return density

    return _cached("density", density, X, compute)


def fit_kernel_gram(kernel: Any, X: np.ndarray) -> tuple[Any, np.ndarray]:
    """``kernel.fit(X)`` and its training Gram ``kernel(X)``, or a copy of both
    from an identical earlier fit (the Gram of the same kernel at another
    ``C`` of a grid search).

    Parameters
    ----------
    kernel : expected kernel
        Unfitted; its class and parameters (incl. its density) are the key.
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    kernel : object
        The fitted kernel.
    K : ndarray of shape (n_samples, n_samples)
    """

    def compute() -> tuple[Any, np.ndarray]:
        fitted = kernel.fit(X)
        return fitted, fitted(X)

    result: tuple[Any, np.ndarray] = _cached("kernel_gram", kernel, X, compute)
    return result


def cached_kernel_gram(kernel: Any, X: np.ndarray) -> np.ndarray | None:
    """The training Gram of an identical earlier :func:`fit_kernel_gram`, or
    None when the cache does not hold it (nothing is computed or stored).

    The calibration of ``MissingKernelSVC(probability=True)`` reads the Gram
    its fit has just put here instead of computing it again.

    Parameters
    ----------
    kernel : expected kernel
        Unfitted, with the parameters of the earlier call.
    X : ndarray of shape (n_samples, n_features)

    Returns
    -------
    K : ndarray of shape (n_samples, n_samples) or None
    """
    if fit_cache_memory() <= 0:
        return None
    key = _key("kernel_gram", kernel, X)
    if key is None:
        return None
    with _lock:
        blob = _entries.get(key)
        if blob is None:
            return None
        _entries.move_to_end(key)
        _stats["hits"] += 1
    (_, K), _ = pickle.loads(blob)
    return np.asarray(K)


def clear_fit_cache() -> None:
    """Empty the cache of this process and reset its counters."""
    global _size
    with _lock:
        _entries.clear()
        _size = 0
        for name in _stats:
            _stats[name] = 0


def fit_cache_info() -> dict[str, int]:
    """Hits, misses, uncacheable fits, entries and bytes held in this process."""
    with _lock:
        return {**_stats, "entries": len(_entries), "bytes": _size}
