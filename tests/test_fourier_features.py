"""The compiled expected Fourier features against a naive per-row,
per-frequency formula in plain numpy (issue 49).

The bound of every comparison is the rounding analysis of
``tests/test_gram_battery.py`` (FOURIER_ULPS), taken entry by entry: with
``u`` the unit roundoff, ``P = sum_j |x_j - c_j| |w_j|`` (the phase's terms)
and ``Q = k sum_ab |C_ab| |w_a| |w_b|`` (the quadratic form's), an entry of
amplitude ``a`` moves by at most ``u (2 d P + Q + 8) a``; float32 features
add one rounding to float32 (``u32 a``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from missingkernels.conditionals import GaussianConditionals, MixtureConditionals
from missingkernels.kernels.rbf._fourier import (
    FourierMap,
    gaussian_fourier,
    mixture_fourier,
)

U64 = np.finfo(np.float64).eps / 2
U32 = np.finfo(np.float32).eps / 2


def _naive(c: GaussianConditionals, fmap: FourierMap) -> tuple[np.ndarray, np.ndarray]:
    """The features one row, one frequency at a time (math.cos, math.sin,
    math.exp), and each entry's rounding bound (module docstring)."""
    omega, center = fmap.omega, fmap.center
    F, d = omega.shape
    n = c.n_samples
    out = np.zeros((n, 2 * F))
    bound = np.zeros((n, 2 * F))
    for i in range(n):
        p = c.pattern_index[i]
        J = np.flatnonzero(c.patterns[p])
        C = np.asarray(c.covariances[p])
        x = c.means[i] - center
        for f in range(F):
            w = omega[f]
            phase = sum(float(x[j] * w[j]) for j in range(d))
            q = float(w[J] @ C @ w[J]) if len(J) else 0.0
            amp = math.exp(-0.5 * max(q, 0.0)) / math.sqrt(F)
            out[i, f] = amp * math.cos(phase)
            out[i, F + f] = amp * math.sin(phase)
            P = float(np.abs(x) @ np.abs(w))
            Q = len(J) * float(np.abs(w[J]) @ np.abs(C) @ np.abs(w[J]))
            bound[i, f] = bound[i, F + f] = U64 * (2 * d * P + Q + 8) * amp
    return out, bound


def _spd(rng: np.random.Generator, k: int, cond: float = 10.0) -> np.ndarray:
    """A random SPD matrix with eigenvalues from 1 / cond to 1."""
    if k == 0:
        return np.zeros((0, 0))
    Q, _ = np.linalg.qr(rng.standard_normal((k, k)))
    return (Q * np.geomspace(1.0 / cond, 1.0, k)) @ Q.T


def _conditionals(
    rng: np.random.Generator,
    missing: np.ndarray,
    scale: float = 1.0,
    cond: float = 10.0,
    covariance_scale: float = 1.0,
) -> GaussianConditionals:
    patterns, pattern_index = np.unique(missing, axis=0, return_inverse=True)
    covs = tuple(covariance_scale * _spd(rng, int(p.sum()), cond) for p in patterns)
    means = scale * rng.standard_normal(missing.shape)
    return GaussianConditionals(
        means=means,
        missing=missing,
        patterns=patterns,
        pattern_index=pattern_index.ravel(),
        covariances=covs,
    )


def _map(rng: np.random.Generator, d: int, F: int, gamma: float = 0.3) -> FourierMap:
    omega = rng.standard_normal((F, d)) * math.sqrt(2 * gamma)
    return FourierMap(omega=omega, center=0.1 * rng.standard_normal(d))


def _check(new: np.ndarray, ref: np.ndarray, bound: np.ndarray) -> None:
    """``|new - ref| <= bound``, plus the rounding to float32, plus what is
    flushed to 0: dampings below exp(-708) (float64), values below float32's
    smallest subnormal."""
    err = np.abs(new.astype(np.float64) - ref)
    if new.dtype == np.float32:
        floor = float(np.finfo(np.float32).smallest_subnormal)
        allowed = bound + U32 * np.abs(ref) + floor
    else:
        allowed = bound + math.exp(-708.0)
    worst = np.max(err - allowed)
    assert worst <= 0.0, f"error above the bound by {worst:.3g}"


def _cases() -> dict[str, tuple[GaussianConditionals, FourierMap]]:
    rng = np.random.default_rng(0)
    cases = {}
    # 90% missing, about one row per pattern
    d = 12
    miss = rng.random((40, d)) < 0.9
    cases["90% missing"] = (_conditionals(rng, miss), _map(rng, d, 24))
    # rows fully observed and fully missing among partly missing ones
    miss = rng.random((30, 6)) < 0.4
    miss[:5] = False
    miss[5:10] = True
    cases["observed and missing rows"] = (_conditionals(rng, miss), _map(rng, 6, 16))
    # few patterns, their rows shuffled (runs of one pattern after sorting)
    base = rng.random((3, 7)) < 0.5
    miss = base[rng.integers(0, 3, 50)]
    cases["few patterns"] = (_conditionals(rng, miss), _map(rng, 7, 20))
    # ill-conditioned covariances (condition 1e12)
    miss = rng.random((25, 8)) < 0.6
    cases["ill-conditioned"] = (
        _conditionals(rng, miss, cond=1e12),
        _map(rng, 8, 16),
    )
    # large variances: damping down to underflow (exp(-q/2) = 0 for q > 1416)
    miss = rng.random((25, 8)) < 0.6
    cases["underflow"] = (
        _conditionals(rng, miss, covariance_scale=300.0),
        _map(rng, 8, 16, gamma=3.0),
    )
    # large phases (|phase| up to ~10^3): the reduction by pi / 2
    miss = rng.random((25, 5)) < 0.3
    cases["large phases"] = (_conditionals(rng, miss, scale=300.0), _map(rng, 5, 16))
    return cases


CASES = _cases()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gaussian_fourier_against_naive(name: str, dtype: str) -> None:
    c, fmap = CASES[name]
    ref, bound = _naive(c, fmap)
    new = gaussian_fourier(c, fmap.with_dtype(dtype))
    assert new.dtype == np.dtype(dtype)
    assert new.shape == ref.shape
    _check(new, ref, bound)
    if name == "underflow":
        assert (ref == 0).any() and (new[ref == 0] == 0).all()


def test_threads_and_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows are independent: one thread or several, bit for bit; ``out`` of
    the map is written and returned, a mismatched one ignored."""
    c, fmap = CASES["90% missing"]
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "1")
    one = gaussian_fourier(c, fmap)
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "3")
    import missingkernels.kernels.rbf._fourier as fourier

    monkeypatch.setattr(fourier, "_ROWS_PER_THREAD", 1)
    several = gaussian_fourier(c, fmap)
    np.testing.assert_array_equal(one, several)
    out = np.full((c.n_samples, fmap.n_components), np.nan, dtype=np.float32)
    got = gaussian_fourier(c, fmap.with_dtype("float32").writing_to(out))
    assert got is out
    np.testing.assert_array_equal(out, gaussian_fourier(c, fmap.with_dtype("f4")))
    wrong = np.empty((c.n_samples, fmap.n_components))  # float64: not used
    f32 = fmap.with_dtype("float32")
    assert gaussian_fourier(c, f32.writing_to(wrong)) is not wrong


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mixture_and_transform_against_naive(dtype: str) -> None:
    """Mixtures: the weighted sum of the components' naive features; complete
    rows (``transform``), with and without a damping."""
    rng = np.random.default_rng(1)
    d, n, K = 6, 30, 3
    miss = rng.random((n, d)) < 0.5
    comps = [_conditionals(rng, miss) for _ in range(K)]
    weights = rng.dirichlet(np.ones(K), size=n)
    mix = MixtureConditionals(
        weights=weights,
        means=np.stack([c.means for c in comps]),
        missing=miss,
        patterns=comps[0].patterns,
        pattern_index=comps[0].pattern_index,
        covariances=tuple(
            np.stack([c.covariances[p] for c in comps])
            for p in range(len(comps[0].patterns))
        ),
    )
    fmap = _map(rng, d, 16).with_dtype(dtype)
    ref = np.zeros((n, fmap.n_components))
    bound = np.zeros_like(ref)
    terms = np.zeros_like(ref)  # sum_k w_k |features_k|
    for k in range(K):
        r, b = _naive(mix.component(k), fmap)
        ref += weights[:, k : k + 1] * r
        bound += weights[:, k : k + 1] * b
        terms += weights[:, k : k + 1] * np.abs(r)
    new = mixture_fourier(mix, fmap)
    assert new.dtype == np.dtype(dtype)
    # each of the K sums rounds once, in the features' dtype
    u = U32 if dtype == "float32" else U64
    _check(new, ref, bound + 2 * K * u * terms)
    complete = comps[0].means
    full = GaussianConditionals(
        means=complete,
        missing=np.zeros_like(miss),
        patterns=np.zeros((1, d), dtype=bool),
        pattern_index=np.zeros(n, dtype=np.int64),
        covariances=(np.zeros((0, 0)),),
    )
    ref, bound = _naive(full, fmap)
    _check(fmap.transform(complete), ref, bound)
    damping = rng.random((n, fmap.omega.shape[0]))
    damped = np.hstack([damping, damping])
    # (the damping multiplies the stored features: one more rounding)
    _check(fmap.transform(complete, damping), ref * damped, bound + u * np.abs(ref))


def test_estimator_float32_against_float64() -> None:
    """ExpectedKernelFeatures(dtype="float32"): the float64 features rounded
    once (phases and damping in float64), within eps32 of them."""
    from missingkernels import ExpectedKernelFeatures

    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 6))
    X[rng.random(X.shape) < 0.3] = np.nan
    params = {"gamma": 0.1, "n_components": 64, "random_state": 0}
    Z64 = ExpectedKernelFeatures(**params).fit(X).transform(X)
    Z32 = ExpectedKernelFeatures(dtype="float32", **params).fit(X).transform(X)
    assert Z32.dtype == np.float32
    # one rounding of the feature, one of genRBF's factor, one of their product
    assert np.all(np.abs(Z32 - Z64) <= 3 * U32 * np.abs(Z64) + 1e-300)


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_self_log_against_naive(name: str, metric: str) -> None:
    """genRBF's normaliser of the features, ``-log det(I + 4 gamma C G_JJ) / 2``
    per pattern, against numpy's slogdet row by row: both within
    ``k^2 u (1 + 4 gamma ||C|| ||G||)`` of the exact value (LU with pivoting
    of a matrix with eigenvalues in ``[1, 1 + 4 gamma ||C G||]``)."""
    from missingkernels.kernels.rbf._fourier import gaussian_self_log

    c, _ = CASES[name]
    d, gamma = c.n_features, 0.3
    G = None
    if metric == "mahalanobis":
        G = _spd(np.random.default_rng(3), d, cond=100.0) * 2.0
    new = gaussian_self_log(c, gamma, G)
    GG = np.eye(d) if G is None else G
    for i in range(c.n_samples):
        p = c.pattern_index[i]
        J = np.flatnonzero(c.patterns[p])
        C = np.asarray(c.covariances[p])
        if len(J) == 0:
            assert new[i] == 0.0
            continue
        M = np.eye(len(J)) + 4 * gamma * C @ GG[np.ix_(J, J)]
        sign, logdet = np.linalg.slogdet(M)
        assert sign > 0
        norm = np.linalg.norm(C, 2) * np.linalg.norm(GG, 2)
        bound = 2 * len(J) ** 2 * U64 * (1 + 4 * gamma * norm)
        assert abs(new[i] - (-0.5 * logdet)) <= bound
