"""The features route of :class:`~missingkernels.MissingKernelSVC` on dask.

``MissingKernelSVC(route="features").fit(X, y)`` with a dask Array or
DataFrame ``X`` never holds the training rows, nor their features, in
memory: the standardisation and the kernel's density are fitted from sums
over row blocks (:func:`~._scaling.fit_standardization_blocks`,
:class:`~missingkernels.ExpectedKernelFeatures` out of core), then each
class's linear SVM is fitted from blockwise ``D x D`` statistics, the
workers computing each block's expected features
(:mod:`._blockwise_linear`). The labels, weights and one output per row are
the only per-row arrays in the driver.

The linear SVM minimises LinearSVC's primal objective, the squared hinge
(the in-memory route fits the hinge loss, whose statistics are not a fixed
size sum): the same ``C``, ``class_weight`` and ``sample_weight``, classes
one-vs-rest. It starts from the same fit on a random sample of
:data:`WARM_ROWS` rows in memory (``C`` scaled by ``n / WARM_ROWS``, so that
the sample weighs as much as all rows against the penalty): from there few
rows change side, and each pass over all rows costs little more than their
features. The features are float32 (half the memory and half the time of
the ``D x D`` products; their rounding, 6e-8 relative, is far below their
Monte Carlo error); the Newton steps' gradients are float64.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
from sklearn.svm import LinearSVC
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets

from .._dask_blocks import as_row_blocks, import_dask, is_dask_collection
from .._validation import check_sample_weight
from ._base import report
from ._blockwise_linear import BlockPasses, DaskPasses, LinearFit, fit_squared_hinge
from ._scaling import fit_standardization_blocks

__all__ = ["WARM_ROWS", "fit_svc_blocks"]

#: Rows of the sample whose fit starts the out-of-core Newton steps.
WARM_ROWS = 50_000


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


def fit_svc_blocks(estimator: Any, X: Any, y: Any, sample_weight: Any) -> Any:
    """Fit ``estimator`` (a MissingKernelSVC, ``route="features"``) on the
    row blocks of a dask collection ``X``; ``y`` and ``sample_weight`` in
    memory or on dask. Sets the attributes the in-memory features route
    sets; ``svm_`` is a :class:`~sklearn.svm.LinearSVC` (squared hinge)
    holding the fitted coefficients."""
    import_dask(f"{type(estimator).__name__}.fit")
    X = as_row_blocks(estimator, X, reset=True, purpose=type(estimator).__name__)
    if any(np.isnan(size) for size in X.chunks[0]):
        X = X.compute_chunk_sizes()  # a DataFrame's blocks: one pass to count
    y = _labels(estimator, y, X.shape[0])
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs at least two classes; y has "
            f"{len(classes)}."
        )
    c = _row_weights(estimator, y, classes, sample_weight)
    if estimator._standardizes():
        estimator.x_center_, estimator.x_scale_ = fit_standardization_blocks(
            estimator, X
        )
        X = (X - estimator.x_center_) / estimator.x_scale_
    else:
        estimator.x_center_ = estimator.x_scale_ = None
    estimator.route_ = "features"
    report(estimator, "route 'features' out of core: a dask collection")
    for name in ("support_", "support_vectors_", "_support_diagonal"):
        estimator.__dict__.pop(name, None)
    features = estimator._make_features(estimator._n_kernel_features())
    features.set_params(dtype="float32")
    features.fit(X)
    estimator.features_ = features
    estimator.kernel_ = features.kernel_
    estimator.dropped_features_ = features.dropped_features_
    started = time.perf_counter()
    problems = [classes[1:]] if len(classes) == 2 else [[k] for k in classes]
    # The workers' features: no progress bar per block (the passes report).
    quiet = copy.copy(features).set_params(verbose=0)
    sample = _sample(estimator, X, quiet)
    coef, intercept, passes = [], [], 0
    for positive in problems:
        t = np.where(np.isin(y, positive), 1.0, -1.0)
        start = _warm_start(estimator, sample, t, c)
        fit = fit_squared_hinge(
            DaskPasses(X, t, c, transform=quiet.transform),
            C=float(estimator.C),
            coef_init=None if start is None else start.coef,
            intercept_init=0.0 if start is None else start.intercept,
            progress=_progress(estimator, positive, len(problems)),
        )
        coef.append(fit.coef)
        intercept.append(fit.intercept)
        passes = max(passes, fit.n_passes)
    svm = LinearSVC(C=estimator.C, loss="squared_hinge", dual=False)
    svm.classes_ = classes
    svm.coef_ = np.vstack(coef)
    svm.intercept_ = np.asarray(intercept)
    svm.n_features_in_ = svm.coef_.shape[1]
    svm.n_iter_ = passes
    estimator.svm_ = svm
    report(
        estimator,
        f"{len(problems)} linear SVM(s) on {svm.coef_.shape[1]} features fitted "
        f"out of core in {time.perf_counter() - started:.2f} s: at most "
        f"{passes} passes over the blocks",
    )
    estimator.intercept_ = np.atleast_1d(svm.intercept_)
    estimator.n_iter_ = passes
    estimator.shape_fit_ = X.shape
    return estimator


def _sample(estimator: Any, X: Any, features: Any) -> Any:
    """A random sample of :data:`WARM_ROWS` rows and their features, in
    memory (None when the rows are not many more)."""
    n = X.shape[0]
    if n < 2 * WARM_ROWS:
        return None
    rng = check_random_state(estimator.random_state)
    rows = np.sort(rng.choice(n, WARM_ROWS, replace=False))
    return rows, features.transform(np.asarray(X[rows].compute()))


def _warm_start(estimator: Any, sample: Any, t: np.ndarray, c: np.ndarray) -> Any:
    """The squared hinge's minimiser on the sample, ``C`` scaled to the
    rows' number, or None."""
    if sample is None:
        return None
    rows, Z = sample
    passes = BlockPasses(lambda: iter([(Z, slice(0, len(rows)))]), t[rows], c[rows])
    scale = len(t) / len(rows)
    fit: LinearFit = fit_squared_hinge(passes, C=float(estimator.C) * scale)
    report(estimator, f"start: the fit on {len(rows)} rows, {fit.n_passes} passes")
    return fit


def _progress(estimator: Any, positive: Any, n_problems: int) -> Any:
    """The report of each pass (``verbose``), or None."""
    if not estimator.verbose:
        return None
    which = f" (class {positive[0]!r} against the rest)" if n_problems > 2 else ""

    def progress(k: int, gradient: float, changed: int) -> None:
        report(
            estimator,
            f"pass {k}{which}: {changed} rows changed side, gradient {gradient:.2e}",
        )

    return progress
