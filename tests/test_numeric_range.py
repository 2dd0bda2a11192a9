"""Extreme scales and awkward tables: a right number or a clear ValueError.

Explicit cases from user reports, then property-based tests (hypothesis)
over kernels and densities: random shapes, 0-95% missing, feature scales
1e-150..1e150, constant and duplicate columns, duplicate rows.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _helpers import mcar

from missingkernels import MissingKernelSVC, get_density, get_kernel

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _data(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    y = (X[:, 0] > np.median(X[:, 0])).astype(int)
    return mcar(rng, X, 0.2), y


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1e154, 1e200, 1e300])
@pytest.mark.parametrize("kernel", ["genrbf", "expected_rbf", "expected_linear"])
def test_scales_beyond_float64_squares_are_refused_with_the_remedy(scale, kernel):
    X, _ = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow or wrong warning first
        with pytest.raises(ValueError, match="Rescale") as info:
            get_kernel(kernel).fit(X * scale)
    message = str(info.value)
    assert "columns 0, 1, 2 (0-based)" in message
    assert "StandardScaler" in message


@pytest.mark.parametrize("scale", [1e154, 1e200, 1e300])
def test_svc_at_huge_scales_names_the_scale_not_psd(scale):
    X, y = _data()
    with pytest.raises(ValueError, match="Rescale") as info:
        MissingKernelSVC().fit(X * scale, y)
    assert "positive semi-definite" not in str(info.value)


@pytest.mark.parametrize("scale", [1e-140, 1e-100, 1e100, 1e140])
def test_gamma_scale_makes_the_rbf_kernels_scale_free(scale):
    X, _ = _data()
    for kernel in ("genrbf", "expected_rbf"):
        K = get_kernel(kernel).fit(X)(X)
        Ks = get_kernel(kernel).fit(X * scale)(X * scale)
        np.testing.assert_allclose(Ks, K, rtol=1e-10, atol=1e-13)
    K = get_kernel("expected_linear").fit(X)(X)
    Ks = get_kernel("expected_linear").fit(X * scale)(X * scale)
    np.testing.assert_allclose(Ks / scale**2, K, rtol=1e-10, atol=1e-13)


def test_new_rows_out_of_range_are_refused():
    X, _ = _data()
    k = get_kernel("genrbf").fit(X)
    with pytest.raises(ValueError, match="values as large as"):
        k(X * 1e200, X)


def test_a_non_finite_kernel_is_an_error_not_a_number():
    X, _ = _data()
    k = get_kernel("expected_linear").fit(X * 1e140)
    # 1e140^2 * (many features summed) stays finite; a huge polynomial does not.
    with pytest.raises(ValueError, match="non-finite"):
        get_kernel("expected_polynomial", degree=3, gamma=1e200).fit(X)(X)
    assert np.all(np.isfinite(k(X * 1e140)))


def test_row_pair_loops_hand_over_when_gamma_times_variance_is_huge(monkeypatch):
    """Found by hypothesis: a constant observed column gets a ridge variance
    far above the data's spread, and gamma="scale" follows the spread, so
    gamma * C reaches 1e12. The row-pair loops subtract quadratic forms with a
    rounding error of about eps * gamma * C (identical rows got kernel rows
    differing by 6e-5 and a Gram eigenvalue of -1e-4); the pattern-pair loop
    computes such Grams, exactly."""
    from missingkernels.kernels.rbf.engine import _gram

    nan = np.nan
    X = np.array([
        [nan, nan, nan],
        [1.0490011715303971e-10, 1e-09, nan],
        [nan, nan, nan],
        [nan, nan, 4.1325979347243603e-11],
        [nan, 1e-09, nan],
        [-7.3226735470345161e-10, 1e-09, nan],
        [4.1163053637413286e-10, nan, nan],
        [nan, nan, 3.5151007009301973e-10],
        [nan, nan, nan],
        [nan, nan, nan],
        [nan, 1e-09, nan],
    ])  # fmt: skip
    grams = {}
    for loop in ("auto", "pattern_pairs"):
        if loop == "pattern_pairs":
            monkeypatch.setattr(_gram, "_use_row_pairs", lambda a, b: False)
        for metric in ("euclidean", "mahalanobis"):
            k = get_kernel("genrbf", metric=metric)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                k.fit(X)
                grams[loop, metric] = k(X)
    for metric in ("euclidean", "mahalanobis"):
        K = grams["auto", metric]
        np.testing.assert_allclose(K, grams["pattern_pairs", metric], rtol=1e-10)
        for i in (2, 8, 9):  # fully missing, as row 0
            assert np.array_equal(K[i], K[0])
        _check_gram(K, len(X))


# -- property-based -----------------------------------------------------------------

KERNELS = ["genrbf", "expected_rbf", "expected_linear", "expected_polynomial"]
DENSITIES = {
    "gaussian_em": {},
    "gaussian_mixture": {"n_components": 2, "random_state": 0},
    "iterative": {"n_draws": 2, "random_state": 0, "max_iter": 3},
}


@st.composite
def tables(draw):
    n = draw(st.integers(2, 25))
    d = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**31 - 1))
    rate = draw(st.sampled_from([0.0, 0.1, 0.3, 0.6, 0.95]))
    exponent = draw(st.integers(-150, 150))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0**exponent
    if draw(st.booleans()):
        X[:, rng.integers(d)] = 10.0**exponent  # a constant column
    if d > 1 and draw(st.booleans()):
        X[:, -1] = X[:, 0]  # a duplicate column
    if n > 3 and draw(st.booleans()):
        X[1] = X[0]  # a duplicate row
    return mcar(rng, X, rate)


def _check_gram(K, n):
    assert K.shape == (n, n) and K.dtype == np.float64
    assert np.all(np.isfinite(K))
    # On the Gram's own scale: entries near the largest double (a polynomial
    # kernel of rows near 1e77) would overflow in K + K.T.
    Ks = K / max(1.0, np.abs(K).max())
    assert np.abs(Ks - Ks.T).max() <= 1e-10
    assert np.linalg.eigvalsh(0.5 * Ks + 0.5 * Ks.T).min() >= -1e-9 * n


def _fit_or_clear_error(kernel, density, X):
    """The Gram, or None after a ValueError that is ours (not numpy's)."""
    k = get_kernel(kernel, density=get_density(density, **DENSITIES[density]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("error", RuntimeWarning)  # no numpy overflow
            k.fit(X)
            return k, k(X)
    except np.linalg.LinAlgError:
        raise
    except ValueError as exc:
        assert len(str(exc)) > 60, f"terse error: {exc}"
        return None, None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    X=tables(),
    kernel=st.sampled_from(KERNELS),
    density=st.sampled_from(sorted(DENSITIES)),
)
@example(X=np.full((3, 1), 1e77), kernel="expected_polynomial", density="gaussian_em")
@example(X=np.full((2, 1), 1e77), kernel="expected_polynomial", density="gaussian_em")
def test_grams_are_finite_symmetric_psd_or_a_clear_error(X, kernel, density):
    k, K = _fit_or_clear_error(kernel, density, X)
    if K is None:
        return
    _check_gram(K, len(X))
    off = ~np.eye(len(X), dtype=bool)
    C = k(X, X)
    assert np.all(np.isfinite(C))
    np.testing.assert_allclose(C[off], K[off], rtol=1e-9, atol=1e-12 * np.abs(K).max())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(X=tables(), density=st.sampled_from(sorted(DENSITIES)))
def test_conditionals_per_row_equal_the_batch(X, density):
    d = get_density(density, **DENSITIES[density])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d.fit(X)
    except ValueError:
        return
    batch = d.conditionals(X)
    draws = batch.sample(2, random_state=3).samples
    # A row conditioned alone or in its pattern's batch meets other rounding;
    # an ill-conditioned fitted covariance (few rows, few observed pairs)
    # amplifies it by up to its condition number.
    covs = getattr(d, "covariances_", getattr(d, "covariance_", None))
    cond = 1.0 if covs is None else float(np.max(np.linalg.cond(covs)))
    rtol = max(1e-9, 50 * np.finfo(float).eps * cond)
    for i in (0, len(X) - 1):
        alone = d.conditionals(X[i : i + 1])
        np.testing.assert_allclose(
            alone.first_moments()[0], batch.first_moments()[i], rtol=rtol, atol=0
        )
        np.testing.assert_allclose(
            alone.sample(2, random_state=3).samples[:, 0], draws[:, i], rtol=rtol
        )


def test_vectorised_log_of_the_row_loop_matches_numpy(rng):
    """The Schur row loop takes the log of its pivot products with a log of
    its own (vectorised): against numpy's log over the range those products
    keep (1e-150 to 1e150), at the points where the mantissa reduction
    switches (around sqrt 2) and at powers of two."""
    from missingkernels.kernels.rbf.engine import _rows_compiled

    x = np.concatenate(
        [
            np.exp(rng.uniform(np.log(1e-150), np.log(1e150), 4000)),
            np.exp(rng.uniform(-1e-3, 1e-3, 1000)),
            np.nextafter(np.sqrt(2.0), [0.0, 3.0]) * [[1.0], [2.0**-40], [2.0**30]],
            np.sqrt(2.0) * np.array([1.0, 0.5, 4.0]),
            2.0 ** np.arange(-498, 499, 7),
            [1.0, 0.5, 1e-150, 1e150],
        ],
        axis=None,
    )
    out = np.empty_like(x)
    _rows_compiled._lane_logs(x, out, np.empty(len(x), np.int64), 0, len(x))
    ref = np.log(x)
    assert np.all(np.abs(out - ref) <= 4e-16 * np.maximum(1.0, np.abs(ref)))
    assert out[np.flatnonzero(x == 1.0)][0] == 0.0
