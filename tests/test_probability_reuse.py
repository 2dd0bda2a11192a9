"""probability=True calibrates on the fitted classifier's kernel: its folds'
SVMs are trained on blocks of the training Gram, no kernel is refitted."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import missingkernels
from missingkernels import MissingKernelSVC
from missingkernels._fit_cache import clear_fit_cache, fit_cache_info
from missingkernels.estimators._calibration import platt_sigmoid


def _table(seed: int, n: int, rate: float):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 1] += X[:, 0]
    noise = 0.5 * rng.normal(size=n)
    y = (X[:, 0] + 0.7 * X[:, 2] * X[:, 1] + noise > 0).astype(int)
    X[rng.random(X.shape) < rate] = np.nan
    return X, y


def test_held_out_decisions_of_complete_rows_are_an_rbf_svm_on_the_fits_scaling():
    """On complete rows genRBF is the RBF: each fold's held-out decision
    values are scikit-learn's RBF SVC trained on the other folds, with the
    rows standardised once on all training rows (the classifier's scaling)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    y = (X[:, 0] + X[:, 1] / 3 + 0.3 * rng.normal(size=90) > 0.5).astype(int)
    clf = MissingKernelSVC(probability=True, gamma=0.4, C=2.0).fit(X, y)
    Z = StandardScaler().fit_transform(X)
    expected = np.zeros(90)
    for train, test in StratifiedKFold(5).split(X, y):
        svm = SVC(kernel="rbf", gamma=0.4, C=2.0).fit(Z[train], y[train])
        expected[test] = svm.decision_function(Z[test])
    np.testing.assert_allclose(clf._held_out_decision[:, 0], expected, atol=1e-7)


def test_calibration_refits_no_density_and_computes_no_gram():
    """With the fit cache on, a fit with probability=True fits one density
    and one Gram, as without it (the calibration reads the cached Gram)."""
    X, y = _table(0, 120, 0.2)
    clear_fit_cache()
    MissingKernelSVC(random_state=0).fit(X, y)
    plain = fit_cache_info()
    clear_fit_cache()
    MissingKernelSVC(probability=True, random_state=0).fit(X, y)
    proba = fit_cache_info()
    clear_fit_cache()
    assert plain["misses"] == proba["misses"] == 2  # density, kernel + Gram
    assert proba["entries"] == plain["entries"]


@pytest.mark.parametrize("density", ["gaussian_em", "gaussian_mixture"])
def test_probabilities_the_same_with_the_cache_off(density):
    """Without the cache (or with a density whose fits are not cached: a
    mixture with random_state=None) the Gram is computed again from the
    fitted kernel: the same probabilities, bit for bit."""
    X, y = _table(1, 100, 0.2)
    Xt, _ = _table(2, 30, 0.2)
    params = {"probability": True, "density": density, "random_state": 0}
    on = MissingKernelSVC(**params).fit(X, y)
    with missingkernels.config_context(fit_cache_memory=0):
        off = MissingKernelSVC(**params).fit(X, y)
    np.testing.assert_array_equal(on._held_out_decision, off._held_out_decision)
    np.testing.assert_array_equal(on.predict_proba(Xt), off.predict_proba(Xt))
    free = MissingKernelSVC(probability=True, density=density).fit(X, y)
    full = free.decision_function(X)
    assert np.isfinite(free.predict_proba(Xt)).all() and np.isfinite(full).all()


def _fisher_se(f: np.ndarray, y: np.ndarray, a: float, b: float) -> np.ndarray:
    """Standard errors of Platt's (A, B) from the logistic model's Fisher
    information at the fit."""
    p = 1 / (1 + np.exp(a * f + b))
    w = p * (1 - p)
    info = np.array([[np.sum(w * f * f), np.sum(w * f)], [np.sum(w * f), np.sum(w)]])
    return np.sqrt(np.diag(np.linalg.inv(info)))


@pytest.mark.parametrize(("seed", "n", "rate"), [(0, 150, 0.2), (1, 300, 0.3)])
def test_probabilities_within_their_own_error_of_refitting_every_fold(seed, n, rate):
    """Against the calibration before the change (every fold refits the
    whole classifier, density and scaling included): the held-out decision
    values differ (the fold's kernel saw 80% of the rows), but Platt's
    (A, B) move by less than half their own standard error, so the
    probabilities differ by far less than the calibration's sampling error
    (measured: at most 0.19 standard errors and 0.008 in a probability over
    12 such tables; see benchmarks/bench_grid_search_probability.py)."""
    X, y = _table(seed, n + 200, rate)
    train, new = slice(0, n), slice(n, n + 200)
    clf = MissingKernelSVC(probability=True).fit(X[train], y[train])
    old = np.zeros(n)
    plain = MissingKernelSVC()
    for tr, te in StratifiedKFold(5).split(X[train], y[train]):
        fold = clone(plain).fit(X[train][tr], y[train][tr])
        old[te] = fold.decision_function(X[train][te])
    positive = y[train] == 1
    a_old, b_old = platt_sigmoid(old, positive)
    a_new, b_new = platt_sigmoid(clf._held_out_decision[:, 0], positive)
    se = _fisher_se(old, positive, a_old, b_old)
    assert abs(a_new - a_old) < 0.5 * se[0]
    assert abs(b_new - b_old) < 0.5 * se[1]
    f = clf.decision_function(X[new])
    p_old = 1 / (1 + np.exp(a_old * f + b_old))
    assert np.max(np.abs(clf.predict_proba(X[new])[:, 1] - p_old)) < 0.02


def test_grid_search_with_probabilities_scores_as_without():
    X, y = _table(4, 150, 0.25)
    grid = {"C": [1.0, 8.0], "gamma": [0.1, 0.5]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    plain = GridSearchCV(MissingKernelSVC(), grid, cv=cv).fit(X, y)
    proba = GridSearchCV(MissingKernelSVC(probability=True), grid, cv=cv).fit(X, y)
    for i in range(3):
        key = f"split{i}_test_score"
        np.testing.assert_array_equal(plain.cv_results_[key], proba.cv_results_[key])
    assert proba.best_estimator_.predict_proba(X).shape == (150, 2)
