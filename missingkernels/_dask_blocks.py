"""Dask collections as input: detection, validation and block reductions.

Nothing here imports dask at module level: :func:`is_dask_collection`
recognises a collection by its type, and the functions that build graphs
import dask through :func:`~missingkernels._optional.import_optional` (the
``dask`` extra), so numpy-only users never load it.

A dask array or DataFrame is read as *row blocks*: every block holds all the
columns of some rows. The estimators of the package are row-wise (a row's
conditionals and features depend only on the row and the fitted state), so
blockwise results equal the in-memory ones; fits reduce per-block sums.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from ._optional import import_optional
from ._validation import check_observed_columns, check_range_summary

__all__ = [
    "ColumnSummary",
    "as_row_blocks",
    "block_map",
    "block_sums",
    "cluster_memory",
    "import_dask",
    "is_dask_collection",
    "map_rows",
    "reporting_passes",
    "rowwise_on_dask",
    "summarise_columns",
]

# Where the passes of block_map are reported (a long fit's progress), if set.
_PASS_REPORT: contextvars.ContextVar[Callable[[float, int], None] | None] = (
    contextvars.ContextVar("missingkernels_pass_report", default=None)
)


@contextlib.contextmanager
def reporting_passes(report: Callable[[str], None]) -> Iterator[None]:
    """Within it, every pass of :func:`block_map` over the row blocks (each
    EM iteration of a density fitted out of core, each summary) is told to
    ``report``: its number and time, a long fit's progress."""
    count = [0]

    def one_pass(seconds: float, n_blocks: int) -> None:
        count[0] += 1
        report(f"pass {count[0]} over {n_blocks} blocks of rows: {seconds:.1f} s")

    token = _PASS_REPORT.set(one_pass)
    try:
        yield
    finally:
        _PASS_REPORT.reset(token)


def is_dask_collection(X: Any) -> bool:
    """Whether ``X`` is a dask collection (array, DataFrame, ...).

    Looks at the type only (the dask collection protocol), so that numpy,
    pandas and lists never import dask.
    """
    return callable(getattr(type(X), "__dask_graph__", None))


def import_dask(purpose: str) -> ModuleType:
    """``dask.array``, or an ImportError naming ``purpose`` and the extra."""
    return import_optional("dask.array", "dask", purpose)


def cluster_memory() -> int | None:
    """The total memory limit of the workers of the current
    ``dask.distributed`` client (dask's default scheduler then), or None
    without one (or without workers). A worker without a limit counts as
    its machine's memory."""
    import sys

    if "distributed" not in sys.modules:  # no client without it
        return None
    from distributed import default_client

    try:
        client = default_client()
    except ValueError:  # no client
        return None
    from ._config import physical_memory

    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    total = 0
    for worker in workers:
        limit = worker.get("memory_limit") or physical_memory()
        if limit is None:
            return None
        total += int(limit)
    return total or None


def _nominal_message(estimator: Any, what: str) -> str:
    """The error for non-numeric dask input to an estimator that reads
    numbers only (one without an ``_encode``: no mixed-type tables)."""
    return (
        f"{type(estimator).__name__} on a dask collection reads numeric "
        f"columns only (NaN for missing entries), block by block; {what} not "
        "numeric. Encode them as numbers first, e.g. one-hot columns "
        "(pandas.get_dummies per partition, with the categories of the "
        "training rows), or use an estimator that takes nominal columns."
    )


def _takes_tables(estimator: Any) -> bool:
    return getattr(type(estimator), "_encode", None) is not None


def _fit_coding(estimator: Any, X: Any) -> Any:
    """Fit the coding of the nominal columns of a dask DataFrame or Array
    (an estimator that takes tables, at fit) from one pass that gathers the
    distinct values of the columns that may be nominal; returns the rows
    coded as numbers (a dask DataFrame of float columns, or a dask array),
    or the collection itself when no column needs coding."""
    import dask

    from ._table_encoding import (
        distinct_rows,
        encode_table,
        merge_distinct_rows,
        nominal_candidates,
    )

    frame = hasattr(X, "to_delayed") and hasattr(X, "dtypes")
    meta = X._meta if frame else np.empty((0, X.shape[1]), dtype=X.dtype)
    candidates = nominal_candidates(estimator, meta)
    rows = meta
    if candidates.any():
        blocks = X.to_delayed() if frame else _blocks(X.rechunk({1: -1}))
        found = dask.delayed(distinct_rows, pure=True)
        parts = dask.compute(*[found(b, candidates) for b in blocks])
        rows = merge_distinct_rows(list(parts), candidates)
    encode_table(estimator, rows, reset=True)
    encoding = getattr(estimator, "_table_encoding", None)
    if encoding is None or encoding.trivial:
        return X
    if frame:
        meta = X._meta.astype({c: np.float64 for c in X.columns})
        return X.map_partitions(_coded_frame, estimator, meta=meta)
    coded = functools.partial(_coded, estimator)
    return X.rechunk({1: -1}).map_blocks(coded, dtype=np.float64)


def _coded(estimator: Any, rows: Any) -> np.ndarray:
    from ._table_encoding import encode_table

    return np.asarray(encode_table(estimator, rows, reset=False), dtype=np.float64)


def _coded_frame(part: Any, estimator: Any) -> Any:
    import pandas as pd

    return pd.DataFrame(_coded(estimator, part), columns=part.columns, index=part.index)


def as_row_blocks(estimator: Any, X: Any, *, reset: bool, purpose: str) -> Any:
    """A dask array of float64 row blocks, checked without reading the data.

    Checks what :func:`~missingkernels._validation.validate_missing_data`
    checks from the metadata: a 2D numeric collection, its number of features
    and column names (set on ``estimator`` when ``reset``, compared with the
    fitted ones otherwise, as scikit-learn does). What needs the values
    (infinities, empty columns, the range) is :func:`summarise_columns`'s.

    Parameters
    ----------
    estimator : BaseEstimator
    X : dask Array or DataFrame of shape (n_samples, n_features)
    reset : bool
        True at fit time.
    purpose : str
        What needs dask, for the ImportError (e.g. ``"GaussianEMDensity.fit"``).

    Returns
    -------
    X : dask Array of shape (n_samples, n_features), dtype float64
        Chunked by rows only, the row-chunk sizes known.
    """
    from ._sklearn_compat import _check_feature_names, _check_n_features

    import_dask(purpose)
    name = type(estimator).__name__
    frame = hasattr(X, "dtypes") and hasattr(X, "to_dask_array")
    if not frame and (not hasattr(X, "ndim") or not hasattr(X, "dtype")):
        raise TypeError(
            f"{name}: expected a dask Array or DataFrame, got {type(X).__name__}; "
            "call .to_dask_array() on other collections."
        )
    if frame:
        import pandas as pd

        # scikit-learn reads the names of a pandas frame: an empty one with
        # the same columns gives the in-memory checks without reading data.
        _check_feature_names(estimator, pd.DataFrame(columns=X.columns), reset=reset)
    else:
        _check_feature_names(estimator, X, reset=reset)
    if reset and _takes_tables(estimator) and (frame or X.ndim == 2):
        # Nominal columns coded as in memory (the estimator records the
        # coding): numbers from here on.
        X = _fit_coding(estimator, X)
        frame = hasattr(X, "dtypes") and hasattr(X, "to_dask_array")
    if frame:
        dtypes = list(X.dtypes)
        bad = [
            str(c) for c, t in zip(X.columns, dtypes, strict=True) if not _numeric(t)
        ]
        if bad:
            raise ValueError(_nominal_message(estimator, f"columns {bad} are"))
        X = X.to_dask_array(lengths=True)  # (one pass counts each block's rows)
    elif not _numeric(X.dtype):
        raise ValueError(_nominal_message(estimator, f"the array's dtype {X.dtype} is"))
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2D array, got a {X.ndim}D dask array instead "
            f"(shape {X.shape}); {name} takes rows of features."
        )
    if X.shape[1] == 0:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of "
            f"1 is required by {name}."
        )
    _check_n_features(estimator, X, reset=reset)
    # One chunk across the columns: every block holds whole rows.
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X.astype(np.float64)


def map_rows(estimator: Any, X: Any, method: Callable[..., Any], purpose: str) -> Any:
    """``method(block)`` over the row blocks of X, as a lazy dask array.

    For a row-wise method of a fitted estimator (a row's output depends only
    on the row and the fitted state): the blocks give the in-memory result.
    X is checked as :func:`as_row_blocks` checks new rows (number of
    features, column names) without reading data; a row whose entries are
    all missing, computed now, gives the output's number of dimensions,
    width and dtype (class labels keep theirs).

    Parameters
    ----------
    estimator : fitted estimator
    X : dask Array or DataFrame of shape (n_samples, n_features)
    method : callable
        Takes and returns arrays of rows; picklable for a cluster (a bound
        method or a ``functools.partial`` of module-level functions).
    purpose : str
        What needs dask, for the messages.

    Returns
    -------
    out : dask Array of shape (n_samples,) or (n_samples, n_outputs)
        Row chunks as in X.
    """
    da = import_dask(purpose)
    if not is_dask_collection(X):
        raise TypeError(
            f"{purpose} takes a dask Array or DataFrame; got {type(X).__name__}. "
            "Call the estimator's own method on in-memory data."
        )
    if _mixed_frame(estimator, X):
        return _map_partitions(X, method)
    X = as_row_blocks(estimator, X, reset=False, purpose=purpose)
    probe = np.asarray(_quiet(method, np.full((1, X.shape[1]), np.nan)))
    width = probe.shape[1:]  # () for one value per row, (k,) for k
    return da.map_blocks(
        _quiet,
        method,
        X,
        chunks=(X.chunks[0], *((w,) for w in width)),
        drop_axis=[] if width else 1,
        dtype=probe.dtype,
        meta=np.empty((0, *width), dtype=probe.dtype),
    )


def _mixed_frame(estimator: Any, X: Any) -> bool:
    """Whether ``X`` is a dask DataFrame with columns that are not numbers
    and the estimator takes such tables in memory (it has an ``_encode``):
    then each partition goes to its in-memory method as a pandas frame."""
    return (
        hasattr(X, "dtypes")
        and hasattr(X, "map_partitions")
        and getattr(type(estimator), "_encode", None) is not None
        and not all(_numeric(t) for t in X.dtypes)
    )


def _map_partitions(X: Any, method: Callable[..., Any]) -> Any:
    """``method(partition)`` over the partitions of a dask DataFrame (pandas
    frames, their column names and dtypes kept: the estimator encodes them
    as in memory), as a lazy dask array of unknown row-chunk sizes. A row
    whose entries are all missing, computed now, gives the output's width
    and dtype, and checks the columns against the fitted ones."""
    import dask
    import dask.array as da

    meta = X._meta  # an empty pandas frame of X's columns and dtypes
    probe = np.asarray(method(meta.reindex([0])))
    width = probe.shape[1:]
    parts = [
        da.from_delayed(
            dask.delayed(_as_array)(method, part),
            shape=(np.nan, *width),
            dtype=probe.dtype,
            meta=np.empty((0, *width), dtype=probe.dtype),
        )
        for part in X.to_delayed()
    ]
    return da.concatenate(parts, axis=0)


def _as_array(method: Callable[..., Any], part: Any) -> np.ndarray:
    return np.asarray(method(part))


def _quiet(method: Callable[..., Any], block: np.ndarray) -> Any:
    # The column names were checked once, on the collection; the blocks are
    # plain arrays.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "X does not have valid feature names")
        return method(block)


def rowwise_on_dask(method: Callable[..., Any]) -> Callable[..., Any]:
    """Let a row-wise estimator method take a dask collection.

    On a dask Array or DataFrame the decorated method returns a lazy dask
    array computed block of rows by block of rows (:func:`map_rows`), on any
    scheduler or cluster; on anything else it runs as written.
    """

    @functools.wraps(method)
    def on_rows(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_dask_collection(X):
            return method(self, X, *args, **kwargs)
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        purpose = f"{type(self).__name__}.{method.__name__}"
        call = functools.partial(_call_method, self, method.__name__, args, kwargs)
        return map_rows(self, X, call, purpose)

    return on_rows


def _call_method(
    estimator: Any, name: str, args: tuple, kwargs: dict, block: np.ndarray
) -> Any:
    # By name, so a worker unpickles the estimator and calls its method on an
    # in-memory block (the decorated method then runs as written).
    return getattr(estimator, name)(block, *args, **kwargs)


def _numeric(dtype: Any) -> bool:
    try:
        kind = np.dtype(dtype).kind
    except TypeError:  # pandas extension dtypes (nullable Int64, Float64, ...)
        return bool(getattr(dtype, "_is_numeric", False))
    return kind in "biuf"


@dataclass(frozen=True)
class ColumnSummary:
    """What one pass over the rows gives (observed entries only).

    Attributes
    ----------
    n_rows : int
    n_used : int
        Rows with at least one observed entry.
    counts : ndarray of shape (n_features,)
        Observed entries per feature.
    sums : ndarray of shape (n_features,)
    hi, lo : ndarray of shape (n_features,)
        Largest and smallest observed value (``-inf``/``inf`` when none).
    """

    n_rows: int
    n_used: int
    counts: np.ndarray
    sums: np.ndarray
    hi: np.ndarray
    lo: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        """Observed mean of each feature (``np.nanmean``)."""
        return self.sums / self.counts

    @property
    def constant(self) -> np.ndarray:
        """Features whose observed entries take one value (as
        :func:`~missingkernels._numerics.constant_features`)."""
        return ~(self.hi > self.lo)


def _column_block(block: np.ndarray) -> tuple[Any, ...]:
    block = np.asarray(block, dtype=np.float64)
    missing = np.isnan(block)
    observed = ~missing
    return (
        block.shape[0],
        int(observed.any(axis=1).sum()),
        observed.sum(axis=0),
        np.where(missing, 0.0, block).sum(axis=0),
        np.where(missing, -np.inf, block).max(axis=0, initial=-np.inf),
        np.where(missing, np.inf, block).min(axis=0, initial=np.inf),
        # The first infinite entry (row in the block, column), if any.
        tuple(int(k[0]) for k in np.nonzero(np.isinf(block)))
        if np.isinf(block).any()
        else None,
    )


def summarise_columns(
    estimator: Any, X: Any, *, min_samples: int, require_observed_columns: bool
) -> ColumnSummary:
    """One pass over row blocks: the checks that need the values, and the sums.

    Raises the errors :func:`~missingkernels._validation.validate_missing_data`
    raises for the same rows (infinity, too few rows, a feature missing in
    every row, values outside float64's squares).

    Parameters
    ----------
    estimator : BaseEstimator
    X : dask Array
        From :func:`as_row_blocks`.
    min_samples : int
    require_observed_columns : bool

    Returns
    -------
    summary : ColumnSummary
    """
    import dask

    parts = dask.compute(*[dask.delayed(_column_block)(b) for b in _blocks(X)])
    offset = 0
    for part in parts:
        if part[6] is not None:
            from ._validation import infinite_value_message

            row, col = part[6]
            raise ValueError(infinite_value_message(estimator, offset + row, col))
        offset += int(part[0])
    n_rows = sum(int(part[0]) for part in parts)
    if n_rows < min_samples:
        raise ValueError(
            f"Found array with {n_rows} sample(s) (shape=({n_rows}, "
            f"{X.shape[1]})) while a minimum of {min_samples} is required by "
            f"{type(estimator).__name__}."
        )
    counts = _sum([p[2] for p in parts])
    if require_observed_columns and n_rows > 0:
        check_observed_columns(estimator, counts, n_rows)
    hi = np.max([p[4] for p in parts], axis=0)
    lo = np.min([p[5] for p in parts], axis=0)
    check_range_summary(estimator, hi, lo)
    return ColumnSummary(
        n_rows=n_rows,
        n_used=sum(int(p[1]) for p in parts),
        counts=counts,
        sums=_sum([p[3] for p in parts]),
        hi=hi,
        lo=lo,
    )


def _blocks(X: Any) -> list[Any]:
    """The row blocks of a dask array, as delayed objects, in row order."""
    return list(X.to_delayed().ravel())


def _sum(values: Sequence[Any]) -> Any:
    # In block order: the same additions on every run and cluster.
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total


def block_map(
    X: Any, function: Callable[..., Any], *args: Any, pass_index: bool = False
) -> list[Any]:
    """``function(block, *args)`` of every row block, computed, in row order.

    With ``pass_index``, ``function(block, index, *args)`` with the block's
    position (e.g. to seed a per-block draw reproducibly).
    """
    import dask

    started = time.perf_counter()
    make = dask.delayed(function, pure=True)
    blocks = _blocks(X)
    if pass_index:
        calls = [make(b, i, *args) for i, b in enumerate(blocks)]
    else:
        calls = [make(b, *args) for b in blocks]
    out = list(dask.compute(*calls))
    report = _PASS_REPORT.get()
    if report is not None:
        report(time.perf_counter() - started, len(blocks))
    return out


def block_sums(
    X: Any, function: Callable[..., tuple[Any, ...]], *args: Any
) -> tuple[Any, ...]:
    """``function(block, *args)`` on every row block, summed entry by entry.

    ``function`` returns a tuple of numbers and arrays (sums over the block's
    rows); the tuples of the blocks are added in block order, in the driver,
    so the result does not depend on the scheduler.

    Parameters
    ----------
    X : dask Array
        Row blocks (:func:`as_row_blocks`).
    function : callable
        A module-level function (shipped to the workers).
    *args
        Further arguments, the same for every block (small arrays).

    Returns
    -------
    sums : tuple
    """
    parts = block_map(X, function, *args)
    return tuple(_sum(column) for column in zip(*parts, strict=True))
