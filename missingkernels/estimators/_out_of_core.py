"""The features route of the kernel SVMs out of core (dask, or rows whose
features do not fit in memory).

``MissingKernelSVC(route="features").fit(X, y)`` (or
``MissingKernelSVR``'s) with a dask Array or DataFrame ``X`` never holds
the training rows, nor their features, in memory: the standardisation and
the kernel's density are fitted from sums over row blocks
(:func:`~._scaling.fit_standardization_blocks`,
:class:`~missingkernels.ExpectedKernelFeatures` out of core), then each
linear SVM is fitted from blockwise ``D x D`` statistics, the workers
computing each block's expected features (:mod:`._blockwise_linear`). The
labels or targets, weights and one output per row are the only per-row
arrays in the driver.

The linear SVM minimises LinearSVC's primal objective, the squared hinge,
or LinearSVR's with the squared epsilon-insensitive loss (the in-memory
route fits the losses without the square, whose statistics are not a fixed
size sum): the same ``C``, ``epsilon``, ``class_weight`` and
``sample_weight``, classes one-vs-rest, the target standardised as in
memory. It starts from the same fit on a random sample of
:data:`WARM_ROWS` rows in memory (``C`` scaled by ``n / WARM_ROWS``, so that
the sample weighs as much as all rows against the penalty): from there few
rows change side, and each pass over all rows costs little more than their
features. The features are float32 (half the memory and half the time of
the ``D x D`` products; their rounding, 6e-8 relative, is far below their
Monte Carlo error); the Newton steps' gradients are float64.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from sklearn.svm import LinearSVC, LinearSVR
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets

from .._config import format_bytes, max_gram_memory
from .._dask_blocks import (
    as_row_blocks,
    cluster_memory,
    import_dask,
    is_dask_collection,
)
from .._validation import (
    check_numeric_target,
    check_sample_weight,
    check_target_missing,
)
from ._base import report
from ._blockwise_linear import (
    BlockPasses,
    DaskPasses,
    LinearFit,
    Passes,
    fit_squared_epsilon_insensitive,
    fit_squared_hinge,
)
from ._scaling import fit_standardization_blocks

__all__ = [
    "BLOCK_ROWS",
    "MEASURE_ROWS",
    "PIECE_BYTES",
    "WARM_ROWS",
    "blocks_why",
    "fit_svm_blocks",
    "fit_svm_in_blocks",
    "keep_budget",
    "piece_rows",
    "rows_to_keep",
]

#: Rows per block when the rows are in memory and their features are not.
BLOCK_ROWS = 25_000

#: Rows of the sample whose fit starts the out-of-core Newton steps.
WARM_ROWS = 50_000

#: Rows on which the memory of the kept conditionals is measured.
MEASURE_ROWS = 2_000

#: Bytes of the features a dask worker makes at once (a piece of its block).
PIECE_BYTES = 2**26


def piece_rows(m: int) -> int:
    """Rows per piece of a block: float32 features of :data:`PIECE_BYTES`."""
    return max(256, PIECE_BYTES // (4 * max(1, m)))


def _labels(estimator: Any, y: Any, n: int) -> np.ndarray:
    """The labels in memory (one per row), checked as a classifier's."""
    if is_dask_collection(y):
        y = y.compute()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be one label per row; got shape {y.shape}.")
    if len(y) != n:
        raise ValueError(
            f"{type(estimator).__name__}: X has {n} rows and y {len(y)} labels."
        )
    check_classification_targets(y)
    return y


def _classes(estimator: Any, y: np.ndarray) -> np.ndarray:
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs at least two classes; y has "
            f"{len(classes)}."
        )
    return classes


def _row_weights(
    estimator: Any, y: np.ndarray, classes: np.ndarray, sample_weight: Any
) -> np.ndarray:
    """``sample_weight`` times the class weight of each row's label."""
    if is_dask_collection(sample_weight):
        sample_weight = sample_weight.compute()
    w = check_sample_weight(estimator, sample_weight, len(y))
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=np.float64)
    if estimator.class_weight is not None:
        per_class = compute_class_weight(estimator.class_weight, classes=classes, y=y)
        w = w * per_class[np.searchsorted(classes, y)]
    return np.asarray(w, dtype=np.float64)


def _targets_and_weights(
    estimator: Any, y: Any, n: int, sample_weight: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The labels and classes (a classifier) or the targets as numbers
    (a regressor; classes None) in memory, checked, and each row's weight."""
    if estimator._task == "classification":
        labels = _labels(estimator, y, n)
        classes = _classes(estimator, labels)
        return labels, _row_weights(estimator, labels, classes, sample_weight), classes
    if is_dask_collection(y):
        y = y.compute()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or len(y) != n:
        raise ValueError(
            f"{type(estimator).__name__}: X has {n} rows; y must be one number "
            f"per row, got shape {y.shape}."
        )
    check_target_missing(estimator, y)
    check_numeric_target(estimator, y)
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError(
            f"{type(estimator).__name__}: the target y has infinite values; "
            "drop or cap those rows before fitting."
        )
    if is_dask_collection(sample_weight):
        sample_weight = sample_weight.compute()
    w = check_sample_weight(estimator, sample_weight, n)
    return y, np.ones(n) if w is None else np.asarray(w, dtype=np.float64), None


def blocks_memory(n: int, m: int) -> int:
    """Bytes of the features route in blocks, beyond the rows: two blocks of
    float32 features in flight (and a float32 copy each), three ``m x m``
    float64 matrices, a few numbers per row."""
    rows = min(n, BLOCK_ROWS)
    return 4 * rows * m * 4 + 3 * 8 * (m + 1) ** 2 + 6 * 8 * n


def blocks_why(n: int, m: int) -> str:
    """The verbose route's reason when the features go in blocks."""
    return (
        f"fitted in blocks of {min(n, BLOCK_ROWS)} rows, the features never all "
        f"in memory (about {format_bytes(blocks_memory(n, m))} beside the rows; "
        "the squared hinge or epsilon-insensitive loss from D x D statistics)"
    )


def fit_svm_in_blocks(
    estimator: Any, X: np.ndarray, y: np.ndarray, sample_weight: Any
) -> Any:
    """The features route on rows in memory (standardised already, and the
    regressor's target) whose features exceed the memory limit: the map
    fitted on the rows, then the linear SVMs from passes that make and drop
    the features of :data:`BLOCK_ROWS` rows at a time (no dask needed)."""
    y, c, classes = _targets_and_weights(estimator, y, len(X), sample_weight)
    features = estimator._make_features(estimator._n_kernel_features())
    features.set_params(dtype="float32")
    features._in_blocks = True  # its features are never all made at once
    features.fit(X)
    quiet = _quiet(features)

    # The rows' conditionals, computed in the first pass and kept for the
    # others where the memory allows (they are 40% of the features' time).
    keep = rows_to_keep(estimator, quiet, X[:MEASURE_ROWS], len(X))
    kept: dict[int, Any] = {}

    def blocks() -> Iterator[tuple[np.ndarray, slice]]:
        for start in range(0, len(X), BLOCK_ROWS):
            rows = slice(start, min(start + BLOCK_ROWS, len(X)))
            prepared = kept.get(start)
            if prepared is None:
                prepared = quiet._prepare(X[rows])
                if rows.stop <= keep:
                    kept[start] = prepared
            yield quiet._transform_prepared(prepared), rows

    def passes(t: np.ndarray) -> BlockPasses:
        return BlockPasses(blocks, t, c)

    # The sample in a box that the fit empties: its features are freed once
    # the starts are fitted.
    box = [_sample(estimator, len(X), lambda rows: X[rows], quiet)]
    return _fit_linear(estimator, features, y, classes, c, passes, box, X.shape)


def fit_svm_blocks(estimator: Any, X: Any, y: Any, sample_weight: Any) -> Any:
    """Fit ``estimator`` (a MissingKernelSVC or MissingKernelSVR,
    ``route="features"``) on the row blocks of a dask collection ``X``;
    ``y`` and ``sample_weight`` in memory or on dask. Sets the attributes
    the in-memory features route sets; ``svm_`` is a
    :class:`~sklearn.svm.LinearSVC` (squared hinge) or
    :class:`~sklearn.svm.LinearSVR` (squared epsilon-insensitive loss)
    holding the fitted coefficients."""
    import_dask(f"{type(estimator).__name__}.fit")
    X = as_row_blocks(estimator, X, reset=True, purpose=type(estimator).__name__)
    if any(np.isnan(size) for size in X.chunks[0]):
        X = X.compute_chunk_sizes()  # a DataFrame's blocks: one pass to count
    y, c, classes = _targets_and_weights(estimator, y, X.shape[0], sample_weight)
    y = estimator._fit_target(y)  # the regressor's, standardised
    if estimator._standardizes():
        estimator.x_center_, estimator.x_scale_ = fit_standardization_blocks(
            estimator, X, getattr(estimator, "is_nominal_", None)
        )
        X = (X - estimator.x_center_) / estimator.x_scale_
    else:
        estimator.x_center_ = estimator.x_scale_ = None
    report(estimator, "route 'features' out of core: a dask collection")
    features = estimator._make_features(estimator._n_kernel_features())
    features.set_params(dtype="float32")
    features.fit(X)
    quiet = _quiet(features)

    # The rows' conditionals, computed once and kept for every pass and
    # class where the memory allows (they are 40% of the features' time).
    head = np.asarray(X[:MEASURE_ROWS].compute())
    kept = DaskPasses(
        X, np.ones(X.shape[0]), c, transform=quiet._transform_prepared,
        prepare=quiet._prepare, piece_rows=piece_rows(estimator._n_kernel_features()),
        keep_rows=rows_to_keep(estimator, quiet, head, X.shape[0]),
    )  # fmt: skip

    def passes(t: np.ndarray) -> DaskPasses:
        return kept.with_targets(t)

    box = [
        _sample(
            estimator, X.shape[0], lambda rows: np.asarray(X[rows].compute()), quiet
        )
    ]
    return _fit_linear(estimator, features, y, classes, c, passes, box, X.shape)


def keep_budget() -> tuple[int, str]:
    """The memory the rows' kept conditionals may take, and where it comes
    from: 40% of the memory limits of the ``dask.distributed`` workers
    (which spill to disk from 60-70% of their limit; the rest for the
    features, sums and the worker itself), else the package's memory limit
    (``max_gram_memory``), this process holding them."""
    workers = cluster_memory()
    if workers is not None:
        return int(0.4 * workers), "40% of the dask workers' memory limits"
    limit, source = max_gram_memory()
    return limit, f"the memory limit, {source}"


def rows_to_keep(estimator: Any, features: Any, head: np.ndarray, n: int) -> int:
    """How many of the ``n`` rows keep their conditionals for every pass
    (the first ones): all, or as many as :func:`keep_budget` holds, their
    memory per row measured on the rows ``head``."""
    per_row = features._prepared_bytes(features._prepare(head)) / max(1, len(head))
    budget, source = keep_budget()
    keep = n if per_row * n <= budget else int(budget // max(per_row, 1.0))
    report(
        estimator,
        f"the rows' conditionals take about {format_bytes(per_row * n)}: "
        + (
            "kept for every pass"
            if keep == n
            else f"those of the first {keep} rows kept for every pass, the "
            "others computed again at each pass"
        )
        + f" (within {format_bytes(budget)}: {source})",
    )
    return keep


def _quiet(features: Any) -> Any:
    """The features for the passes: no progress bar per block (the passes
    report)."""
    return copy.copy(features).set_params(verbose=0)


def _fit_linear(
    estimator: Any, features: Any, y: np.ndarray, classes: np.ndarray | None,
    c: np.ndarray, passes: Callable[[np.ndarray], Passes], box: list[Any],
    shape: Any,
) -> Any:  # fmt: skip
    """The linear SVM(s) from the passes, started from the fit on the sample
    in ``box`` (taken out of it, so that it is freed once used): one
    squared-hinge SVM per class against the rest (one for two classes), or
    the squared epsilon-insensitive SVR; sets the estimator's fitted
    attributes."""
    estimator.route_ = "features"
    for name in ("support_", "support_vectors_", "_support_diagonal"):
        estimator.__dict__.pop(name, None)
    estimator.features_ = features
    estimator.kernel_ = features.kernel_
    estimator.dropped_features_ = features.dropped_features_
    started = time.perf_counter()
    if classes is None:
        svm: Any = LinearSVR(
            C=estimator.C, epsilon=estimator.epsilon,
            loss="squared_epsilon_insensitive", dual=False, tol=estimator.tol,
        )  # fmt: skip
        problems: list[Any] = [None]
        targets = [y]
    else:
        svm = LinearSVC(
            C=estimator.C, loss="squared_hinge", dual=False, tol=estimator.tol
        )
        svm.classes_ = classes
        problems = [classes[1:]] if len(classes) == 2 else [[k] for k in classes]
        targets = [np.where(np.isin(y, positive), 1.0, -1.0) for positive in problems]
    # Every start first: the sample's features (50,000 rows) are then
    # dropped before the passes over all rows.
    sample = box.pop()
    starts = [_warm_start(estimator, sample, t, c) for t in targets]
    del sample
    coef, intercept, n_passes = [], [], 0
    for positive, t, start in zip(problems, targets, starts, strict=True):
        fit = _fit_problem(estimator)(
            passes(t),
            C=float(estimator.C),
            tol=float(estimator.tol),
            coef_init=None if start is None else start.coef,
            intercept_init=0.0 if start is None else start.intercept,
            progress=_progress(estimator, positive, len(problems)),
        )
        coef.append(fit.coef)
        intercept.append(fit.intercept)
        n_passes = max(n_passes, fit.n_passes)
    svm.coef_ = coef[0] if classes is None else np.vstack(coef)
    svm.intercept_ = np.asarray(intercept)
    svm.n_features_in_ = svm.coef_.shape[-1]
    svm.n_iter_ = n_passes
    estimator.svm_ = svm
    report(
        estimator,
        f"{len(problems)} linear SVM(s) on {svm.n_features_in_} features fitted "
        f"in blocks in {time.perf_counter() - started:.2f} s: at most "
        f"{n_passes} passes over the rows",
    )
    estimator.intercept_ = np.atleast_1d(svm.intercept_)
    estimator.n_iter_ = n_passes
    estimator.shape_fit_ = tuple(shape)
    return estimator


def _fit_problem(estimator: Any) -> Callable[..., LinearFit]:
    """The out-of-core fit of the estimator's loss (its ``C``, ``tol`` and
    start are the caller's)."""
    if estimator._task == "classification":
        return fit_squared_hinge
    return functools.partial(
        fit_squared_epsilon_insensitive, epsilon=float(estimator.epsilon)
    )


def _sample(
    estimator: Any, n: int, rows_of: Callable[[np.ndarray], np.ndarray],
    features: Any,
) -> Any:  # fmt: skip
    """A random sample of :data:`WARM_ROWS` rows and their features, in
    memory (None when the rows are not many more)."""
    if n < 2 * WARM_ROWS:
        return None
    rng = check_random_state(estimator.random_state)
    rows = np.sort(rng.choice(n, WARM_ROWS, replace=False))
    return rows, features.transform(rows_of(rows))


def _warm_start(estimator: Any, sample: Any, t: np.ndarray, c: np.ndarray) -> Any:
    """The loss's minimiser on the sample, ``C`` scaled to the rows'
    number, or None."""
    if sample is None:
        return None
    rows, Z = sample
    passes = BlockPasses(lambda: iter([(Z, slice(0, len(rows)))]), t[rows], c[rows])
    scale = len(t) / len(rows)
    fit: LinearFit = _fit_problem(estimator)(
        passes, C=float(estimator.C) * scale, tol=float(estimator.tol)
    )
    report(estimator, f"start: the fit on {len(rows)} rows, {fit.n_passes} passes")
    return fit


def _progress(estimator: Any, positive: Any, n_problems: int) -> Any:
    """The report of each pass (``verbose``), or None."""
    if not estimator.verbose:
        return None
    which = (
        f" (class {positive[0]!r} against the rest)"
        if positive is not None and n_problems > 2
        else ""
    )

    def progress(k: int, gradient: float, changed: int) -> None:
        report(
            estimator,
            f"pass {k}{which}: {changed} rows changed side, gradient {gradient:.2e} "
            "of the stopping norm (tol)",
        )

    return progress
