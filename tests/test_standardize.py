"""Defaults that work on a raw table: the estimators standardise numeric columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from missingkernels.estimators import (
    MissingKernelSVC,
    MissingKernelSVR,
    MissingKernelTransformer,
)


def _rows(rng, n=90, rate=0.2):
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    Xm = X.copy()
    Xm[rng.random(X.shape) < rate] = np.nan
    return X, Xm, y


def test_default_is_the_standard_scaler_pipeline(rng):
    """StandardScaler (independent code: it ignores NaN in fit, keeps them in
    transform) then the unscaled estimator gives the same decisions."""
    _, Xm, y = _rows(rng)
    raw = Xm * [1.0, 1000.0, 0.001] + [5.0, -300.0, 0.0]
    ours = MissingKernelSVC(gamma=0.3).fit(raw[:70], y[:70])
    ref = make_pipeline(
        StandardScaler(), MissingKernelSVC(gamma=0.3, standardize=False)
    ).fit(raw[:70], y[:70])
    np.testing.assert_allclose(
        ours.decision_function(raw[70:]), ref.decision_function(raw[70:]), atol=1e-8
    )
    np.testing.assert_allclose(ours.x_center_, np.nanmean(raw[:70], axis=0))
    np.testing.assert_allclose(ours.x_scale_, np.nanstd(raw[:70], axis=0))
    # Missing stays missing; observed entries are standardised (the support
    # vectors are the training rows the model keeps).
    rows = raw[:70][ours.support_]
    np.testing.assert_array_equal(np.isnan(ours.support_vectors_), np.isnan(rows))
    standardised = (rows - np.nanmean(raw[:70], axis=0)) / np.nanstd(raw[:70], axis=0)
    np.testing.assert_allclose(ours.support_vectors_, standardised, atol=1e-12)


def test_the_units_of_the_columns_do_not_change_the_default_model(rng):
    _, Xm, y = _rows(rng)
    a = MissingKernelSVC().fit(Xm[:70], y[:70]).decision_function(Xm[70:])
    units = np.array([1e-3, 1e4, 7.0])
    b = MissingKernelSVC().fit(Xm[:70] * units, y[:70])
    np.testing.assert_allclose(b.decision_function(Xm[70:] * units), a, atol=1e-7)
    # Without standardising, the units decide the kernel.
    c = MissingKernelSVC(standardize=False).fit(Xm[:70] * units, y[:70])
    assert not np.allclose(c.decision_function(Xm[70:] * units), a, atol=1e-3)


def test_a_small_informative_column_next_to_a_large_noise_column(rng):
    """The hepatitis trap: raw scales make the default predict the majority
    class; standardised, the informative column is found."""
    n = 200
    signal = rng.normal(size=n)
    y = np.where(signal + 0.3 * rng.normal(size=n) > 0.6, 1, 0)  # ~30% ones
    X = np.column_stack([0.01 * signal, 1000.0 * rng.normal(size=n)])
    X[rng.random(X.shape) < 0.15] = np.nan
    majority = max(np.mean(y), 1 - np.mean(y))
    raw = cross_val_score(MissingKernelSVC(standardize=False), X, y, cv=5).mean()
    ours = cross_val_score(MissingKernelSVC(), X, y, cv=5).mean()
    assert raw == pytest.approx(majority, abs=0.03)
    assert ours > majority + 0.1


def test_nominal_columns_are_not_rescaled(rng):
    n = 60
    table = pd.DataFrame(
        {
            "size": rng.normal(50.0, 20.0, n),
            "colour": rng.choice(["red", "green", "blue"], n),
            "weight": rng.normal(0.0, 0.01, n),
        }
    )
    y = (table["size"] > 50).astype(int).to_numpy()
    clf = MissingKernelSVC().fit(table, y)
    assert clf.x_center_[1] == 0.0 and clf.x_scale_[1] == 1.0
    codes = clf.support_vectors_[:, 1]
    assert set(np.unique(codes)) <= {0.0, 1.0, 2.0}
    np.testing.assert_allclose(
        clf.x_scale_[[0, 2]], table[["size", "weight"]].std(ddof=0)
    )


def test_belanche_kernels_take_their_codes_as_given(rng):
    X = rng.integers(0, 3, size=(60, 3)).astype(float)
    y = (X[:, 0] == 1).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    clf = MissingKernelSVC(kernel="belanche_k1").fit(X, y)
    assert clf.x_center_ is None
    np.testing.assert_array_equal(clf.support_vectors_, X[clf.support_])


def test_svr_standardises_the_target_as_e1071(rng):
    """On complete rows: scikit-learn's RBF SVR on the standardised X and y,
    mapped back to the units of y."""
    X = rng.normal(size=(100, 3)) * [1.0, 50.0, 0.1]
    y = 1000.0 + 300.0 * (np.sin(X[:, 0]) + X[:, 1] / 50)
    ours = MissingKernelSVR(gamma=0.4, C=3.0, epsilon=0.05).fit(X[:70], y[:70])
    Xs = StandardScaler().fit(X[:70])
    mu, sd = y[:70].mean(), y[:70].std()
    ref = SVR(kernel="rbf", gamma=0.4, C=3.0, epsilon=0.05)
    ref.fit(Xs.transform(X[:70]), (y[:70] - mu) / sd)
    expected = ref.predict(Xs.transform(X[70:])) * sd + mu
    np.testing.assert_allclose(ours.predict(X[70:]), expected, atol=1e-6)
    assert ours.y_center_ == pytest.approx(mu) and ours.y_scale_ == pytest.approx(sd)
    # Changing the units of y changes the predictions' units only.
    scaled = MissingKernelSVR(gamma=0.4, C=3.0, epsilon=0.05).fit(X[:70], y[:70] / 1e3)
    np.testing.assert_allclose(scaled.predict(X[70:]) * 1e3, expected, atol=1e-6)
    off = MissingKernelSVR(standardize=False).fit(X[:70], y[:70])
    assert off.y_center_ is None


def test_svr_default_learns_a_raw_target(rng):
    """A target in the thousands: unstandardised, epsilon=0.1 and C=1 can
    barely move the prediction from the intercept; standardised, they fit."""
    X = rng.normal(size=(160, 3))
    y = 5000.0 * (X[:, 0] - X[:, 1]) + 20000.0
    X[rng.random(X.shape) < 0.15] = np.nan
    raw = cross_val_score(MissingKernelSVR(standardize=False), X, y, cv=4).mean()
    ours = cross_val_score(MissingKernelSVR(), X, y, cv=4).mean()
    assert raw < 0.3 < 0.6 < ours


def test_transformer_standardises_like_a_scaler_in_front(rng):
    _, Xm, _ = _rows(rng)
    raw = Xm * [1.0, 100.0, 0.01]
    ours = MissingKernelTransformer(gamma=0.4).fit(raw[:60])
    ref = make_pipeline(
        StandardScaler(), MissingKernelTransformer(gamma=0.4, standardize=False)
    ).fit(raw[:60])
    np.testing.assert_allclose(ours.transform(raw[60:]), ref.transform(raw[60:]))
    np.testing.assert_allclose(
        ours.fit_transform(raw[:60]), ref.fit_transform(raw[:60])
    )


@pytest.mark.parametrize("route", ["exact", "features"])
@pytest.mark.parametrize("standardize", [True, False])
def test_the_fitted_model_does_not_see_later_edits_of_the_callers_array(
    rng, route, standardize
):
    _, Xm, y = _rows(rng)
    T = Xm[70:].copy()
    X = Xm[:70].copy()
    clf = MissingKernelSVC(
        route=route, n_kernel_features=50, random_state=0, standardize=standardize
    ).fit(X, y[:70])
    before = clf.decision_function(T)
    X[:, 0] += 3.0
    np.testing.assert_array_equal(clf.decision_function(T), before)
    for kept in (getattr(clf, "support_vectors_", None), clf.x_center_):
        assert kept is None or not np.shares_memory(kept, X)


def test_the_transformer_does_not_keep_the_callers_array(rng):
    _, Xm, _ = _rows(rng)
    X = Xm[:50].copy()
    t = MissingKernelTransformer(standardize=False).fit(X)
    before = t.transform(Xm[50:])
    X[:, 1] -= 2.0
    np.testing.assert_array_equal(t.transform(Xm[50:]), before)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (np.nan, "NaN or infinite at row"),
        (np.inf, "NaN or infinite at row"),
        (-1.0, "negative at row"),
    ],
)
@pytest.mark.parametrize("Estimator", [MissingKernelSVC, MissingKernelSVR])
def test_a_nan_or_negative_sample_weight_is_an_error(rng, bad, message, Estimator):
    _, Xm, y = _rows(rng, n=40)
    w = np.ones(40)
    w[7] = bad
    with pytest.raises(ValueError, match=message + r"\(s\) \[7\]"):
        Estimator().fit(Xm, y, sample_weight=w)
    with pytest.raises(ValueError, match="zero"):
        Estimator().fit(Xm, y, sample_weight=np.zeros(40))


def test_a_column_transformer_with_dataframe_output_keeps_nominal_columns(rng):
    """The documented recipe for preprocessing a mixed table in front of the
    estimator: DataFrame output keeps the string columns' dtype."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer

    n = 60
    table = pd.DataFrame(
        {
            "size": rng.normal(50.0, 20.0, n),
            "colour": rng.choice(["red", "green", "blue"], n),
        }
    )
    table.loc[rng.random(n) < 0.2, "size"] = np.nan
    y = (table["colour"] == "red").astype(int).to_numpy()
    prep = ColumnTransformer(
        [
            ("num", SimpleImputer(strategy="median"), ["size"]),
            ("cat", "passthrough", ["colour"]),
        ]
    ).set_output(transform="pandas")
    model = make_pipeline(prep, MissingKernelSVC()).fit(table, y)
    assert model[-1].is_nominal_.tolist() == [False, True]
    assert model[-1].kernel_name_ == "mixed_rbf"
