"""MissingKernelSVC(probability=True): calibrated class probabilities."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from missingkernels.densities import SingularCovarianceWarning
from missingkernels.estimators import MissingKernelSVC
from missingkernels.estimators._calibration import ovr_from_ovo, platt_sigmoid


def _platt_reference(f, y):
    """Platt's objective minimised by a general-purpose optimiser."""
    n_pos, n_neg = y.sum(), (~y).sum()
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def nll(ab):
        p = 1 / (1 + np.exp(ab[0] * f + ab[1]))
        p = np.clip(p, 1e-300, 1 - 1e-16)
        return -np.sum(t * np.log(p) + (1 - t) * np.log1p(-p))

    options = {"xatol": 1e-9, "fatol": 1e-12, "maxiter": 5000}
    res = minimize(nll, [0.0, 0.0], method="Nelder-Mead", options=options)
    return res.x


def test_platt_matches_a_general_optimiser(rng):
    f = rng.normal(size=300) * 2
    y = rng.random(300) < 1 / (1 + np.exp(-1.5 * f + 0.3))
    a, b = platt_sigmoid(f, y)
    np.testing.assert_allclose([a, b], _platt_reference(f, y), atol=1e-4)


def test_platt_recovers_a_known_sigmoid_within_standard_errors(rng):
    """Labels drawn from 1 / (1 + exp(A f + B)): the fit is within 4
    standard errors (Fisher information of the logistic model)."""
    A, B, n = -2.0, 0.5, 20000
    f = rng.normal(size=n)
    p = 1 / (1 + np.exp(A * f + B))
    y = rng.random(n) < p
    a, b = platt_sigmoid(f, y)
    w = p * (1 - p)
    info = np.array([[np.sum(w * f * f), np.sum(w * f)], [np.sum(w * f), np.sum(w)]])
    se = np.sqrt(np.diag(np.linalg.inv(info)))
    assert abs(a - A) < 4 * se[0] and abs(b - B) < 4 * se[1]


def test_platt_on_separable_scores_stays_finite():
    f = np.r_[-np.arange(1.0, 11.0), np.arange(1.0, 11.0)]
    y = f > 0
    a, b = platt_sigmoid(f, y)
    assert np.isfinite(a) and np.isfinite(b) and a < 0


def _binary(rng, n=120, rate=0.2):
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    X[rng.random(X.shape) < rate] = np.nan
    return X, y


def test_probabilities_come_from_held_out_decisions(rng):
    """Independent computation: on each of the 5 stratified folds (row
    order), an SVM on the full model's kernel (its Gram over the standardised
    training rows) trained without the fold scores it; Platt's sigmoid
    fitted by a general optimiser, applied to the full model's decision
    values."""
    X, y = _binary(rng)
    clf = MissingKernelSVC(probability=True, C=2.0).fit(X[:100], y[:100])
    held_out = np.zeros(100)
    plain = MissingKernelSVC(C=2.0).fit(X[:100], y[:100])
    K = plain.kernel_((X[:100] - plain.x_center_) / plain.x_scale_)
    for train, test in StratifiedKFold(5).split(X[:100], y[:100]):
        svm = SVC(kernel="precomputed", C=2.0).fit(K[np.ix_(train, train)], y[train])
        held_out[test] = svm.decision_function(K[np.ix_(test, train)])
    np.testing.assert_allclose(clf._held_out_decision[:, 0], held_out, atol=1e-8)
    a, b = _platt_reference(held_out, y[:100] == 1)
    full = plain.fit(X[:100], y[:100]).decision_function(X[100:])
    expected = 1 / (1 + np.exp(a * full + b))
    proba = clf.predict_proba(X[100:])
    np.testing.assert_allclose(proba[:, 1], expected, atol=1e-4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.predict_log_proba(X[100:]), np.log(proba))
    np.testing.assert_array_equal(clf.predict(X[100:]), plain.predict(X[100:]))


def test_probabilities_are_calibrated_on_a_known_model(rng):
    """P(y = 1 | x) = logistic(2 x_0): the calibrated probabilities are
    within 0.1 of the true ones on average (MCAR 20%; a constant 0.5 is
    0.3 away)."""
    n = 600
    X = rng.normal(size=(n, 2))
    truth = 1 / (1 + np.exp(-2 * X[:, 0]))
    y = (rng.random(n) < truth).astype(int)
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.2] = np.nan
    Xm[400:, 0] = X[400:, 0]  # the rows scored have the informative column
    clf = MissingKernelSVC(probability=True).fit(Xm[:400], y[:400])
    proba = clf.predict_proba(Xm[400:])[:, 1]
    assert np.mean(np.abs(proba - truth[400:])) < 0.1
    iso = MissingKernelSVC(probability=True, calibration="isotonic")
    proba_iso = iso.fit(Xm[:400], y[:400]).predict_proba(Xm[400:])[:, 1]
    assert np.mean(np.abs(proba_iso - truth[400:])) < 0.12


@pytest.mark.parametrize("route", ["exact", "features"])
def test_three_classes_sum_to_one_whatever_the_decision_shape(rng, route):
    n = 150
    X = rng.normal(size=(n, 2))
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    X[rng.random(X.shape) < 0.15] = np.nan
    params = dict(probability=True, route=route, n_kernel_features=60, random_state=0)
    ovr = MissingKernelSVC(**params).fit(X, y)
    proba = ovr.predict_proba(X)
    assert proba.shape == (n, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(proba.argmax(axis=1) == y) > 0.6
    if route == "exact":
        ovo = MissingKernelSVC(**params, decision_function_shape="ovo").fit(X, y)
        np.testing.assert_allclose(ovo.predict_proba(X), proba, atol=1e-10)


def test_ovr_from_ovo_votes_and_breaks_ties_by_confidence():
    # Pairs (0,1), (0,2), (1,2): class 0 beats 1, 2 beats 0, 1 beats 2.
    d = np.array([[1.0, -2.0, 0.5]])
    out = ovr_from_ovo(d, 3)
    conf = np.array([1.0 - 2.0, -1.0 + 0.5, 2.0 - 0.5])
    np.testing.assert_allclose(out[0], 1.0 + conf / (3 * (np.abs(conf) + 1)))


def test_probability_errors(rng):
    X, y = _binary(rng, n=40)
    clf = MissingKernelSVC().fit(X, y)
    assert not hasattr(clf, "predict_proba")
    with pytest.raises(AttributeError, match="predict_proba") as info:
        clf.predict_proba(X)
    assert "set probability=True" in str(info.value.__cause__)
    y_rare = np.zeros(40, dtype=int)
    y_rare[:3] = 1
    with pytest.raises(ValueError, match=r"only 3 training row.*calibration_folds"):
        MissingKernelSVC(probability=True).fit(X, y_rare)
    ok = MissingKernelSVC(probability=True, calibration_folds=3).fit(X, y_rare)
    assert ok.predict_proba(X).shape == (40, 2)


@parametrize_with_checks([MissingKernelSVC(probability=True, calibration_folds=2)])
def test_sklearn_compatible_with_probabilities(estimator, check):
    name = check.func.__name__
    if name == "check_sample_weight_equivalence_on_dense_data":
        pytest.skip("the density and scaling are fitted unweighted")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularCovarianceWarning)
        check(estimator)
