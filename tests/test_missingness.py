"""Tests of the missingness mechanisms (genRBF paper, sec. 5.1, eqs. 26-27)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from missingkernels._sklearn_compat import InvalidParameterError
from missingkernels.experiments import (
    DegenerateMissingnessWarning,
    MissingnessInfo,
    simulate_missing,
)


@pytest.fixture
def X(rng):
    A = rng.normal(size=(6, 6))
    return rng.normal(size=(3000, 6)) @ A + np.arange(6)


def _removal_probability(driver, reference_rows, t):
    """exp(-t ||x - x_i||^2_Sigma), written from eq. (26) independently."""
    S_inv = np.linalg.inv(np.cov(driver, rowvar=False))
    p = np.empty((len(driver), len(reference_rows)))
    for i, r in enumerate(reference_rows):
        diff = driver - driver[r]
        p[:, i] = np.exp(-t * np.einsum("ij,jk,ik->i", diff, S_inv, diff))
    return p


def _calibration_z(removed, p, n_bins=10):
    """Largest |z| of removal frequency vs mean probability over p-bins."""
    edges = np.quantile(p, np.linspace(0, 1, n_bins + 1))
    bins = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)
    worst = 0.0
    for b in range(n_bins):
        sel = bins == b
        var = np.sum(p[sel] * (1 - p[sel]))
        if var > 0:
            worst = max(worst, abs(removed[sel].sum() - p[sel].sum()) / np.sqrt(var))
    return worst


def _value_dependence_z(removed, p, values):
    """z statistic of sum (removed - p) * standardised value (0 if no effect)."""
    s = (values - values.mean(axis=0)) / values.std(axis=0)
    return np.sum((removed - p) * s) / np.sqrt(np.sum(p * (1 - p) * s**2))


@pytest.mark.parametrize("mechanism", ["mcar", "mar", "mnar"])
@pytest.mark.parametrize("rate", [0.0, 0.1, 0.3, 0.6])
def test_rate_is_hit(X, mechanism, rate):
    Xm, info = simulate_missing(
        X[:500], mechanism, rate, random_state=1, return_info=True
    )
    assert abs(np.isnan(Xm).mean() - rate) < 0.01
    assert info.missing_rate == pytest.approx(np.isnan(Xm).mean())
    # Observed entries are untouched.
    kept = X[:500][:, info.visible]
    np.testing.assert_array_equal(Xm[~np.isnan(Xm)], kept[~np.isnan(Xm)])


def test_input_not_modified_and_copy_returned(X):
    before = X.copy()
    simulate_missing(X, "mar", 0.3, random_state=0)
    np.testing.assert_array_equal(X, before)


@pytest.mark.parametrize("mechanism", ["mcar", "mar", "mnar"])
def test_deterministic_given_seed(X, mechanism):
    a, ia = simulate_missing(X, mechanism, 0.3, random_state=7, return_info=True)
    b, ib = simulate_missing(X, mechanism, 0.3, random_state=7, return_info=True)
    np.testing.assert_array_equal(a, b)  # NaN compare equal here
    np.testing.assert_array_equal(ia.visible, ib.visible)
    assert ia.t == ib.t
    c = simulate_missing(X, mechanism, 0.3, random_state=8)
    assert not np.array_equal(np.isnan(a), np.isnan(c))


def test_mcar_does_not_depend_on_values(X):
    Xm = simulate_missing(X, "mcar", 0.3, random_state=3)
    removed = np.isnan(Xm)
    p = np.full(X.shape, 0.3)
    assert abs(_value_dependence_z(removed, p, X)) < 4


def test_mar_follows_reference_distances(X):
    Xm, info = simulate_missing(X, "mar", 0.3, random_state=5, return_info=True)
    assert isinstance(info, MissingnessInfo) and info.t > 0
    refs = info.reference_rows
    assert len(refs) == X.shape[1] and len(set(refs.tolist())) == X.shape[1]
    removed = np.isnan(Xm)
    assert not removed[refs].any()  # reference rows stay complete
    others = np.setdiff1d(np.arange(len(X)), refs)
    p = _removal_probability(X, refs, info.t)[others]
    removed = removed[others]
    # The removal frequency follows exp(-t dist) across the distance range ...
    assert _calibration_z(removed, p) < 4.5
    low, high = p < np.quantile(p, 0.2), p > np.quantile(p, 0.8)
    assert removed[high].mean() > removed[low].mean() + 0.3
    # ... and, given the distances, not the value that gets removed.
    assert abs(_value_dependence_z(removed, p, X[others])) < 4
    # The statistic has power: a self-masking removal is flagged.
    self_masking = X[others] > np.quantile(X[others], 0.7, axis=0)
    assert abs(_value_dependence_z(self_masking, p, X[others])) > 10


def test_mnar_depends_on_hidden_features(X):
    Xm, info = simulate_missing(X, "mnar", 0.3, random_state=11, return_info=True)
    d = X.shape[1]
    assert len(info.hidden) == d // 2
    assert sorted(np.r_[info.hidden, info.visible].tolist()) == list(range(d))
    assert Xm.shape == (len(X), len(info.visible))
    np.testing.assert_array_equal(Xm[~np.isnan(Xm)], X[:, info.visible][~np.isnan(Xm)])
    refs = info.reference_rows
    others = np.setdiff1d(np.arange(len(X)), refs)
    removed = np.isnan(Xm)[others]
    p_hidden = _removal_probability(X[:, info.hidden], refs, info.t)[others]
    assert _calibration_z(removed, p_hidden) < 4.5
    low = p_hidden < np.quantile(p_hidden, 0.2)
    high = p_hidden > np.quantile(p_hidden, 0.8)
    assert removed[high].mean() > removed[low].mean() + 0.3
    # The same distances on the visible features do not explain the removal.
    p_visible = _removal_probability(X[:, info.visible], refs, info.t)[others]
    assert _calibration_z(removed, p_visible) > 10


def test_odd_number_of_features_mnar(X):
    Xm, info = simulate_missing(X[:, :5], "mnar", 0.2, random_state=0, return_info=True)
    assert len(info.hidden) == 2 and Xm.shape[1] == 3


def test_fully_missing_rows_are_allowed():
    X = np.random.default_rng(0).normal(size=(400, 2))
    Xm = simulate_missing(X, "mcar", 0.6, random_state=0)
    assert np.isnan(Xm).all(axis=1).any()


def test_bad_input(X):
    bad = X.copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"complete, finite data.*row 2, column 3"):
        simulate_missing(bad, "mar", 0.3)
    bad[2, 3] = np.inf
    with pytest.raises(ValueError, match="1 inf"):
        simulate_missing(bad, "mcar", 0.3)
    with pytest.raises(InvalidParameterError, match="rate"):
        simulate_missing(X, "mcar", 1.0)
    with pytest.raises(InvalidParameterError, match="rate"):
        simulate_missing(X, "mcar", -0.1)
    with pytest.raises(InvalidParameterError, match="mechanism"):
        simulate_missing(X, "nmar", 0.1)
    with pytest.raises(ValueError, match="at least 2 features"):
        simulate_missing(X[:, :1], "mnar", 0.1)
    with pytest.raises(ValueError, match="more rows than affected features"):
        simulate_missing(X[:6], "mar", 0.1)
    with pytest.raises(ValueError, match="at most"):
        simulate_missing(X[:8], "mar", 0.9)
    with pytest.raises(ValueError, match=r"numeric|convert"):
        simulate_missing(np.array([["a", "b"], ["c", "d"]]), "mcar", 0.1)


def _columns(kind, n=300, d=4):
    rng = np.random.default_rng(3)
    if kind == "continuous":
        return rng.normal(size=(n, d))
    if kind == "binary":
        return rng.integers(0, 2, size=(n, d)).astype(float)
    return np.full((n, d), 2.5)  # constant


@pytest.mark.parametrize("mechanism", ["mcar", "mar", "mnar"])
@pytest.mark.parametrize("kind", ["continuous", "binary", "constant"])
@pytest.mark.parametrize("rate", [0.1, 0.3, 0.6])
def test_rate_is_hit_on_any_column_kind(mechanism, kind, rate):
    # Issue 19: binary data gave 0.245 for 0.1 (MAR), constant data 0.94 for
    # 0.3. Documented tolerance: round(rate * n_entries) entries exactly.
    X = _columns(kind, d=2 if kind == "binary" else 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Xm, info = simulate_missing(
            X, mechanism, rate, random_state=0, return_info=True
        )
    n_entries = Xm.size
    achieved = np.isnan(Xm).mean()
    assert abs(achieved - rate) <= 0.5 / n_entries + 1e-12
    assert info.missing_rate == achieved
    degenerate = [w for w in caught if w.category is DegenerateMissingnessWarning]
    assert len(degenerate) == (info.p_zero < 1)
    if kind == "continuous" or mechanism == "mcar":
        assert not caught and info.p_zero == 1.0
    if kind == "constant" and mechanism != "mcar":
        # Every removable entry ties with its reference row: removal is MCAR
        # over the non-reference rows, at the requested rate.
        assert info.t == np.inf and info.p_zero < 1
        assert "probability" in str(degenerate[0].message)
        assert not np.isnan(Xm[info.reference_rows]).any()


def test_degenerate_removal_only_hits_rows_equal_to_their_reference():
    X = _columns("binary", d=2)
    with pytest.warns(DegenerateMissingnessWarning, match=r"rate=0\.1.*mcar"):
        Xm, info = simulate_missing(X, "mar", 0.1, random_state=0, return_info=True)
    assert info.t == np.inf and 0 < info.p_zero < 1
    for i, r in enumerate(info.reference_rows):
        same = np.all(X == X[r], axis=1)
        assert not np.isnan(Xm[~same, i]).any()


# -- self-masking -------------------------------------------------------------


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.5, 0.9])
def test_self_masking_hits_the_rate_exactly(X, rate):
    Xm, info = simulate_missing(
        X, "self_masking", rate, random_state=1, return_info=True
    )
    assert Xm.shape == X.shape
    k = round(rate * X.size)
    assert int(np.isnan(Xm).sum()) == k
    assert info.missing_rate == pytest.approx(k / X.size)
    np.testing.assert_array_equal(Xm[~np.isnan(Xm)], X[~np.isnan(Xm)])
    assert info.hidden.size == 0 and info.reference_rows is None


def test_self_masking_follows_the_logistic_in_the_standardised_value(rng):
    # One column of 200,000 standard normals: the removal frequency per bin
    # of z must match sigmoid(2 z + c) (c as calibrated) within 4 standard
    # errors, the form written here independently of the implementation.
    x = rng.normal(size=(200_000, 1))
    Xm, info = simulate_missing(
        x, "self_masking", 0.3, random_state=2, return_info=True
    )
    z = (x[:, 0] - x.mean()) / x.std()
    removed = np.isnan(Xm[:, 0])
    edges = np.linspace(-2.5, 2.5, 11)
    for lo, hi in itertools.pairwise(edges):
        inside = (z >= lo) & (z < hi)
        p = 1.0 / (1.0 + np.exp(-(2.0 * z[inside] + info.t)))
        expected = p.mean()
        se = np.sqrt(np.sum(p * (1 - p))) / inside.sum()
        assert abs(removed[inside].mean() - expected) < 4 * se + 1e-12
    # Large values go missing more often: not missing at random.
    assert x[removed, 0].mean() > x[~removed, 0].mean() + 0.5


def test_self_masking_constant_column_is_mcar_and_seeded(X):
    Xc = X.copy()
    Xc[:, 2] = 7.0
    a = simulate_missing(Xc, "self_masking", 0.3, random_state=4)
    b = simulate_missing(Xc, "self_masking", 0.3, random_state=4)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    assert 0 < np.isnan(a[:, 2]).mean() < 1
