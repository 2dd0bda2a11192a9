"""Class probabilities for the SVM: decision values calibrated by internal CV.

As libsvm's ``-b 1`` (scikit-learn's ``SVC(probability=True)``), the
calibration map is fitted on decision values the classifier never trained
on: the training rows are split into stratified folds, an SVM is trained
without each fold and scores it, and a map from decision value to
probability is fitted on these held-out scores; the final classifier is the
one fitted on all rows. As libsvm does with a precomputed kernel, the folds'
SVMs share the fitted classifier's kernel (density, standardisation and
``gamma``, fitted on all training rows without their labels): each is trained
on blocks of the training Gram, so the calibration refits no density and
computes no Gram. Two maps: Platt's sigmoid
``P(y = 1 | f) = 1 / (1 + exp(A f + B))``, fitted by the Newton method with
backtracking of Lin, Lin and Weng (2007) on Platt's regularised targets, or
an isotonic (monotone) regression. With more than two classes each class gets
a one-vs-rest map on its decision column and the probabilities are
normalised to sum to one (Zadrozny and Elkan, 2002).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import sklearn
from sklearn.model_selection import StratifiedKFold


def platt_sigmoid(
    f: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[float, float]:
    """Platt's sigmoid ``1 / (1 + exp(A f + B))`` fitted to labels ``y`` (0/1).

    Minimises the (weighted) cross-entropy against Platt's targets
    ``(N+ + 1) / (N+ + 2)`` for positives and ``1 / (N- + 2)`` for negatives,
    by Newton's method with a backtracking line search and a tiny ridge on
    the Hessian (Lin, Lin and Weng, 2007).

    Returns
    -------
    A, B : float
    """
    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(y).astype(bool)
    w = np.ones(len(f)) if sample_weight is None else np.asarray(sample_weight, float)
    n_pos = float(w[y].sum())
    n_neg = float(w[~y].sum())
    t = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def objective(a: float, b: float) -> float:
        z = a * f + b
        # t z + log(1 + exp(-z)), written without overflow for either sign.
        return float(np.sum(w * ((t - 1.0) * z + np.logaddexp(0.0, z))))

    a, b = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = objective(a, b)
    for _ in range(100):
        z = a * f + b
        p = np.exp(-np.logaddexp(0.0, z))  # 1 / (1 + exp(z))
        q = 1.0 - p
        d2 = w * p * q
        h11 = 1e-12 + float(np.sum(f * f * d2))
        h22 = 1e-12 + float(np.sum(d2))
        h21 = float(np.sum(f * d2))
        g1 = float(np.sum(w * f * (t - p)))
        g2 = float(np.sum(w * (t - p)))
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        da = -(h22 * g1 - h21 * g2) / det
        db = -(-h21 * g1 + h11 * g2) / det
        slope = g1 * da + g2 * db
        step = 1.0
        while step >= 1e-10:
            new = objective(a + step * da, b + step * db)
            if new < value + 1e-4 * step * slope:
                a, b, value = a + step * da, b + step * db, new
                break
            step /= 2.0
        else:
            break  # no decrease along the Newton direction: at the optimum
    return a, b


@dataclass(frozen=True)
class _Sigmoid:
    """Platt's map ``1 / (1 + exp(a f + b))`` (picklable)."""

    a: float
    b: float

    def __call__(self, f: np.ndarray) -> np.ndarray:
        return np.exp(-np.logaddexp(0.0, self.a * f + self.b))


def _sigmoid_map(f: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> Callable:
    return _Sigmoid(*platt_sigmoid(f, y, w))


def _isotonic_map(f: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> Callable:
    from sklearn.isotonic import IsotonicRegression

    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    iso.fit(f, y.astype(float), sample_weight=w)
    return iso.predict


def ovr_from_ovo(decision: np.ndarray, n_classes: int) -> np.ndarray:
    """One-vs-rest scores from one-vs-one decision values (columns in the
    order (0, 1), (0, 2), ..., (1, 2), ...; positive for the first class):
    each class's votes plus its summed confidences squashed into (-1/3, 1/3),
    so that ties in votes are broken by confidence (libsvm's and
    scikit-learn's convention)."""
    votes = np.zeros((decision.shape[0], n_classes))
    confidence = np.zeros_like(votes)
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            d = decision[:, k]
            confidence[:, i] += d
            confidence[:, j] -= d
            votes[:, i] += d > 0
            votes[:, j] += d <= 0
            k += 1
    return votes + confidence / (3.0 * (np.abs(confidence) + 1.0))


def _training_rows(estimator: Any, X: Any) -> np.ndarray:
    """The rows the fitted classifier was trained on, as its kernel saw them
    (validated, coded and standardised as for prediction)."""
    from .._validation import validate_missing_data
    from ._scaling import apply_standardization

    rows = validate_missing_data(estimator, X, reset=False, encode=estimator._encode)
    return apply_standardization(rows, estimator.x_center_, estimator.x_scale_)


def _held_out_decisions(
    estimator: Any,
    X: Any,
    y: np.ndarray,
    sample_weight: np.ndarray | None,
    splits: list[tuple[np.ndarray, np.ndarray]],
) -> np.ndarray:
    """Decision values of each fold's rows from an SVM trained without them,
    on the fitted classifier's kernel (its density, standardisation and
    ``gamma`` fitted on all rows; see ``fit_calibration``)."""
    from .._fit_cache import cached_kernel_gram

    rows = _training_rows(estimator, X)
    exact = estimator.route_ == "exact"
    if exact:
        # The training Gram the classifier was fitted on: from the fit cache
        # (where the fit has just put it), else computed again by the fitted
        # kernel, which is what the cache holds.
        cached = cached_kernel_gram(estimator._make_kernel(), rows)
        K = estimator.kernel_(rows) if cached is None else cached
    else:
        Z = estimator.features_.transform(rows)
    n_classes = len(estimator.classes_)
    ovo = exact and estimator.decision_function_shape == "ovo" and n_classes > 2

    def one_fold(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        w = None if sample_weight is None else sample_weight[train]
        # The Gram and the features are finite (the kernel's own output): the
        # fold's SVM skips scikit-learn's scan for NaN and infinity.
        with sklearn.config_context(assume_finite=True):
            if exact:
                rows_train = K.take(train, axis=0)  # two takes: faster than ix_
                svm = estimator._make_svm()
                svm.fit(rows_train.take(train, axis=1), y[train], sample_weight=w)
                del rows_train
                decision = svm.decision_function(
                    K.take(test, axis=0).take(train, axis=1)
                )
            else:
                svm = estimator._make_linear()
                svm.fit(Z[train], y[train], sample_weight=w)
                decision = svm.decision_function(Z[test])
        if ovo:
            decision = ovr_from_ovo(decision, n_classes)
        return np.asarray(decision).reshape(len(test), -1)

    # One fold at a time: one block of the Gram, ((k - 1) / k)^2 of it, is
    # held at once. (On threads, libsvm releasing the GIL, the folds ran no
    # faster on a busy two-core machine and held one block per thread.)
    decisions = [one_fold(train, test) for train, test in splits]
    held_out = np.zeros((len(y), 1 if n_classes == 2 else n_classes))
    for (_, test), decision in zip(splits, decisions, strict=True):
        held_out[test] = decision
    return held_out


def fit_calibration(
    estimator: Any, X: Any, y: np.ndarray, sample_weight: np.ndarray | None
) -> tuple[list[Callable], np.ndarray]:
    """The per-class calibration maps of a fitted classifier with parameters
    ``calibration`` and ``calibration_folds``, from held-out decision values.

    The held-out values come from SVMs trained on the other folds' rows with
    the fitted classifier's kernel: as libsvm's ``-b 1`` on a precomputed
    kernel, each fold's SVM is trained on the rows and columns of the
    training Gram of the other folds and scores its fold with their cross
    block (on the features route: a linear SVM on the other folds' kernel
    features). The density, the standardisation and ``gamma="scale"`` are
    those of the classifier, fitted on all training rows without their
    labels; the labels of a fold never reach the SVM that scores it. No
    kernel is refitted and no Gram computed: the calibration costs
    ``calibration_folds`` SVM fits on the precomputed blocks.

    Returns
    -------
    maps : list of callables
        One map for a binary problem (probability of ``classes[1]``), else one
        per class.
    held_out : ndarray
        The held-out (one-vs-rest) decision values the maps were fitted on.
    """
    classes, counts = np.unique(y, return_counts=True)
    folds = int(estimator.calibration_folds)
    if counts.min() < folds:
        raise ValueError(
            f"{type(estimator).__name__}: probability=True fits the calibration "
            f"on {folds} stratified folds, but class {classes[counts.argmin()]!r} "
            f"has only {counts.min()} training row(s). Lower calibration_folds "
            f"(at least 2, at most {max(counts.min(), 2)}), or set "
            "probability=False."
        )
    binary = len(classes) == 2
    splitter = StratifiedKFold(n_splits=folds)
    splits = list(splitter.split(np.zeros((len(y), 1)), y))
    held_out = _held_out_decisions(estimator, X, y, sample_weight, splits)
    make = _sigmoid_map if estimator.calibration == "sigmoid" else _isotonic_map
    if binary:
        return [make(held_out[:, 0], y == classes[1], sample_weight)], held_out
    maps = [
        make(held_out[:, c], y == classes[c], sample_weight)
        for c in range(len(classes))
    ]
    return maps, held_out


def calibrated_proba(maps: list[Callable], decision: np.ndarray) -> np.ndarray:
    """Class probabilities from (one-vs-rest) decision values."""
    if len(maps) == 1:
        p = np.clip(maps[0](decision.ravel()), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])
    proba = np.column_stack([m(decision[:, c]) for c, m in enumerate(maps)])
    proba = np.clip(proba, 0.0, None)
    total = proba.sum(axis=1, keepdims=True)
    uniform = np.full_like(proba, 1.0 / proba.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, proba / total, uniform)
