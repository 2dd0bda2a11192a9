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
one-vs-rest.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.svm import LinearSVC
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets

from .._dask_blocks import as_row_blocks, import_dask, is_dask_collection
from .._validation import check_sample_weight
from ._base import report
from ._blockwise_linear import DaskPasses, fit_squared_hinge
from ._scaling import fit_standardization_blocks

__all__ = ["fit_svc_blocks"]


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
    features.fit(X)
    estimator.features_ = features
    estimator.kernel_ = features.kernel_
    estimator.dropped_features_ = features.dropped_features_
    started = time.perf_counter()
    problems = [classes[1:]] if len(classes) == 2 else [[k] for k in classes]
    coef, intercept, passes = [], [], 0
    for positive in problems:
        t = np.where(np.isin(y, positive), 1.0, -1.0)
        passes_k = DaskPasses(X, t, c, transform=features.transform)
        fit = fit_squared_hinge(passes_k, C=float(estimator.C))
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
