"""LinearSVC's objective from blockwise sufficient statistics (issue 49).

References: scikit-learn's LinearSVC (liblinear) on the same features and
objective, run to a tight tolerance; Ridge's closed form; the objective's
value and gradient at the returned point.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.svm import LinearSVC

from missingkernels.estimators._blockwise_linear import (
    BlockPasses,
    DaskPasses,
    fit_least_squares,
    fit_squared_epsilon_insensitive,
    fit_squared_hinge,
)

# Against LinearSVC, Ridge and per-precision rounding bounds: also under the
# other OpenBLAS kernels (float32 and float64 rank-k updates, solves).
pytestmark = pytest.mark.numerics


def _blocks(Z, size, dtype=np.float64):
    def blocks():
        for s in range(0, len(Z), size):
            rows = slice(s, min(s + size, len(Z)))
            yield Z[rows].astype(dtype), rows

    return blocks


def _problem(rng, n=1500, d=40, noise=0.8):
    Z = rng.normal(size=(n, d)) / np.sqrt(d)
    w = rng.normal(size=d)
    y = np.where(Z @ w + noise * rng.normal(size=n) + 0.3 > 0, 1.0, -1.0)
    return Z, y


def _objective(w, b, Z, y, C, c, scaling):
    o = Z @ w + b
    full = np.append(w, b / scaling) if scaling > 0 else w
    return 0.5 * full @ full + C * np.sum(c * np.maximum(0.0, 1.0 - y * o) ** 2)


def _gradient(w, b, Z, y, C, c, scaling):
    X = np.hstack([Z, np.full((len(Z), 1), scaling)])
    full = np.append(w, b / scaling)
    m = np.maximum(0.0, 1.0 - y * (X @ full))
    return full - 2.0 * C * X.T @ (c * y * m)


@pytest.mark.parametrize("C", [0.05, 1.0, 30.0])
def test_squared_hinge_is_linearsvc_objective_minimiser(rng, C):
    Z, y = _problem(rng)
    c = rng.uniform(0.5, 2.0, size=len(y))
    fit = fit_squared_hinge(BlockPasses(_blocks(Z, 256), y, c), C=C)
    assert fit.converged and fit.n_passes <= 30
    # First-order optimality of the convex objective: a zero gradient, to the
    # rounding of D x D solves (cond(I + 2C H) <= 1 + 2C ||H||) on sums of
    # n terms of size C ||x||^2.
    g = _gradient(fit.coef, fit.intercept, Z, y, C, c, 1.0)
    scale = 1.0 + 2.0 * C * np.sum(c * (Z**2).sum(1))
    assert np.abs(g).max() <= 1e-10 * scale
    ref = LinearSVC(
        C=C, loss="squared_hinge", dual=False, tol=1e-12, max_iter=100_000
    ).fit(Z, y, sample_weight=c)
    f_ours = _objective(fit.coef, fit.intercept, Z, y, C, c, 1.0)
    f_ref = _objective(ref.coef_[0], ref.intercept_[0], Z, y, C, c, 1.0)
    # ours is the minimiser: never worse than liblinear's, which stops at tol
    assert f_ours <= f_ref * (1.0 + 1e-12)
    np.testing.assert_allclose(fit.coef, ref.coef_[0], rtol=0, atol=1e-5)
    assert abs(fit.intercept - ref.intercept_[0]) <= 1e-5


def test_blocks_of_any_size_and_float32_features_give_the_same_fit(rng):
    Z, y = _problem(rng, n=900, d=25)
    one = fit_squared_hinge(BlockPasses(_blocks(Z, 900), y), C=2.0)
    many = fit_squared_hinge(BlockPasses(_blocks(Z, 97), y), C=2.0)
    # the same sums in another order: rounding only (n terms, cond <= 1e3)
    np.testing.assert_allclose(many.coef, one.coef, rtol=0, atol=1e-10)
    single = fit_squared_hinge(BlockPasses(_blocks(Z, 97, np.float32), y), C=2.0)
    # float32 features: each entry rounded by 2^-24 relative, so the
    # coefficients move by about cond x 6e-8
    np.testing.assert_allclose(single.coef, one.coef, rtol=0, atol=1e-4)


def test_least_squares_is_ridge_with_the_intercept_as_a_feature(rng):
    Z, y = _problem(rng, n=700, d=30)
    t = y + rng.normal(size=len(y))
    C = 3.0
    passes = BlockPasses(_blocks(Z, 128), t, intercept_scaling=2.0)
    fit = fit_least_squares(passes, C=C)
    X = np.hstack([Z, np.full((len(Z), 1), 2.0)])
    ref = Ridge(alpha=1.0 / (2.0 * C), fit_intercept=False, solver="cholesky")
    ref.fit(X, t)
    np.testing.assert_allclose(fit.coef, ref.coef_[:-1], rtol=1e-10, atol=1e-12)
    assert fit.intercept == pytest.approx(2.0 * ref.coef_[-1], rel=1e-10)


def test_separable_rows_and_no_intercept(rng):
    # Far from the boundary: few rows stay in the margin; w = 0 never reached.
    Z, _ = _problem(rng, n=400, d=5)
    y = np.where(Z[:, 0] > 0, 1.0, -1.0)
    Z[:, 0] += 3.0 * y
    passes = BlockPasses(_blocks(Z, 50), y, intercept_scaling=0.0)
    fit = fit_squared_hinge(passes, C=10.0)
    assert fit.converged and fit.intercept == 0.0
    assert np.all(y * (Z @ fit.coef) > 0)
    c = np.ones(len(y))
    X = Z
    m = np.maximum(0.0, 1.0 - y * (X @ fit.coef))
    g = fit.coef - 2.0 * 10.0 * X.T @ (c * y * m)
    assert np.abs(g).max() <= 1e-9 * (1.0 + 20.0 * (Z**2).sum())


def test_bad_labels_and_empty_blocks_are_refused(rng):
    Z, y = _problem(rng, n=50, d=3)
    with pytest.raises(ValueError, match=r"labels in \{-1, \+1\}"):
        fit_squared_hinge(BlockPasses(_blocks(Z, 10), (y > 0).astype(float)), C=1.0)
    with pytest.raises(ValueError, match="empty"):
        fit_least_squares(BlockPasses(lambda: iter(()), y), C=1.0)


def test_dask_passes_compute_features_on_the_blocks_and_give_the_same_fit(rng):
    """Workers compute each block's expected features and return only its
    sums: the fit equals the in-memory fit on the same features, to the
    rounding of another order of the same sums."""
    da = pytest.importorskip("dask.array")
    from missingkernels import ExpectedKernelFeatures

    X = rng.normal(size=(600, 4)) @ rng.normal(size=(4, 4))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=600) > 0, 1.0, -1.0)
    X[rng.random(X.shape) < 0.3] = np.nan
    features = ExpectedKernelFeatures(n_components=64, random_state=0).fit(X)
    Z = features.transform(X)
    c = rng.uniform(0.5, 2.0, size=len(y))
    ref = fit_squared_hinge(BlockPasses(_blocks(Z, 600), y, c), C=3.0)
    dX = da.from_array(X, chunks=(130, 4))
    fit = fit_squared_hinge(DaskPasses(dX, y, c, transform=features.transform), C=3.0)
    # (a row at the margin to rounding may take one more Newton step)
    assert fit.converged
    np.testing.assert_allclose(fit.coef, ref.coef, rtol=0, atol=1e-10)
    assert fit.intercept == pytest.approx(ref.intercept, abs=1e-10)
    ls = fit_least_squares(DaskPasses(da.from_array(Z, chunks=(77, 64)), y), C=3.0)
    ls_ref = fit_least_squares(BlockPasses(_blocks(Z, 600), y), C=3.0)
    np.testing.assert_allclose(ls.coef, ls_ref.coef, rtol=0, atol=1e-10)


def test_dask_passes_refuse_misaligned_targets_and_unknown_blocks(rng):
    da = pytest.importorskip("dask.array")
    dX = da.from_array(rng.normal(size=(50, 3)), chunks=(20, 3))
    with pytest.raises(ValueError, match="50 rows and the targets 40"):
        DaskPasses(dX, np.ones(40))
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    frame = dd.from_pandas(pd.DataFrame(rng.normal(size=(50, 3))), npartitions=2)
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        DaskPasses(frame.to_dask_array(), np.ones(50))


def _margin_statistics(Z, y, c, w, scaling):
    X = np.hstack([Z, np.full((len(Z), 1), scaling)])
    m = y * (X @ w) < 1.0
    return (X[m] * c[m, None]).T @ X[m]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scan_changes_the_held_statistics_into_the_margins(rng, dtype):
    """``H(held) + hessian_change == H(margin at w)``, from the rows that
    changed side only; the gradient sum is the naive one over the margin."""
    Z, y = _problem(rng, n=800, d=20)
    Z = Z.astype(dtype).astype(np.float64)  # the features as the passes see them
    c = rng.uniform(0.5, 2.0, size=len(y))
    passes = BlockPasses(_blocks(Z, 113, dtype), y, c, intercept_scaling=1.5)
    w1, w2 = rng.normal(size=21), rng.normal(size=21)
    X = np.hstack([Z, np.full((len(Z), 1), 1.5)])
    held = y * (X @ w1) < 1.0
    first = passes.scan(w1, None)
    assert first.changed == held.sum()
    second = passes.scan(w2, held)
    margin = y * (X @ w2) < 1.0
    assert second.changed == np.sum(margin != held)
    H = np.triu(first.hessian_change + second.hessian_change)
    ref = _margin_statistics(Z, y, c, w2, 1.5)
    # float64: sums of n products (n eps relative to sum |c x x^T|); float32
    # products: each chunk's sum rounded to 2^-24 relative (x 2 for the sum of
    # two updates), bounded by the sums of absolute values.
    scale = (np.abs(X) * c[:, None]).T @ np.abs(X)
    eps = 2.0**-52 * len(Z) if dtype == np.float64 else 4 * 2.0**-24 * 256
    assert np.all(np.abs(H - np.triu(ref)) <= eps * np.triu(scale))
    np.testing.assert_allclose(second.outputs, X @ w2, rtol=0, atol=1e-12)
    r = np.where(margin, c * (X @ w2 - y), 0.0)
    np.testing.assert_allclose(second.gradient_sum, X.T @ r, rtol=1e-12, atol=1e-12)


def test_a_warm_start_reaches_the_same_minimiser_and_progress_is_reported(rng):
    Z, y = _problem(rng, n=1500, d=40)
    cold = fit_squared_hinge(BlockPasses(_blocks(Z, 256), y), C=1.0)
    # the fit on a fifth of the rows, C scaled to their number, as a start
    sample = fit_squared_hinge(BlockPasses(_blocks(Z[:300], 64), y[:300]), C=5.0)
    seen = []
    warm = fit_squared_hinge(
        BlockPasses(_blocks(Z, 256), y), C=1.0, coef_init=sample.coef,
        intercept_init=sample.intercept,
        progress=lambda k, g, changed: seen.append((k, g, changed)),
    )  # fmt: skip
    assert warm.converged
    np.testing.assert_allclose(warm.coef, cold.coef, rtol=0, atol=1e-9)
    assert warm.intercept == pytest.approx(cold.intercept, abs=1e-9)
    assert [k for k, _, _ in seen] == list(range(1, warm.n_passes + 1))
    # The gradient falls below the stopping norm (progress reports the ratio);
    # the first pass holds the start's margin only.
    assert seen[-1][1] <= 1.0 < seen[0][1]
    X = np.hstack([Z, np.ones((len(Z), 1))])
    w0 = np.append(sample.coef, sample.intercept)
    assert seen[0][2] == np.sum(y * (X @ w0) < 1.0) < len(y)


def test_float32_features_converge_to_a_zero_float64_gradient(rng):
    """The Hessian from float32 products is inexact, the gradient is not: the
    Newton steps stop where the gradient of the float32 features is zero."""
    Z, y = _problem(rng, n=2000, d=60)
    Z32 = Z.astype(np.float32)
    C = 30.0
    fit = fit_squared_hinge(BlockPasses(_blocks(Z, 512, np.float32), y), C=C)
    assert fit.converged
    g = _gradient(
        fit.coef, fit.intercept, Z32.astype(np.float64), y, C, np.ones(len(y)), 1.0
    )
    scale = 1.0 + 2.0 * C * np.sum((Z32.astype(np.float64) ** 2).sum(1))
    assert np.abs(g).max() <= 1e-10 * scale


def test_dask_passes_keep_the_prepared_blocks_for_every_pass_and_target(rng):
    """``prepare`` (the rows' conditionals, once) then ``transform`` of what
    it kept gives the features ``transform`` of the rows gives: the same
    fit to the bit; ``with_targets`` reuses the kept blocks for another
    class's labels."""
    da = pytest.importorskip("dask.array")
    from missingkernels import ExpectedKernelFeatures

    X = rng.normal(size=(500, 4)) @ rng.normal(size=(4, 4))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=500) > 0, 1.0, -1.0)
    X[rng.random(X.shape) < 0.3] = np.nan
    f = ExpectedKernelFeatures(n_components=64, random_state=0, dtype="float32").fit(X)
    dX = da.from_array(X, chunks=(120, 4))
    calls = []

    def prepare(rows):
        calls.append(len(rows))
        return f._prepare(rows)

    kept = DaskPasses(
        dX, np.ones(500), transform=f._transform_prepared, prepare=prepare
    )
    for t in (y, -y):
        ref = fit_squared_hinge(DaskPasses(dX, t, transform=f.transform), C=2.0)
        fit = fit_squared_hinge(kept.with_targets(t), C=2.0)
        np.testing.assert_array_equal(fit.coef, ref.coef)
        assert fit.intercept == ref.intercept and fit.n_passes == ref.n_passes
    assert sorted(calls) == [20, 120, 120, 120, 120]  # each block once
    with pytest.raises(ValueError, match="500 targets needed"):
        kept.with_targets(y[:10])


@pytest.mark.parametrize("keep_rows", [0, 119, 120, 250, 499])
def test_dask_passes_prepare_again_the_blocks_beyond_keep_rows(rng, keep_rows):
    """``keep_rows`` keeps the prepared form of the first blocks that fit
    within it and prepares the others again at every pass: the same
    features to the bit (the same pieces, the same arithmetic), so the same
    fit as keeping every block."""
    da = pytest.importorskip("dask.array")
    from missingkernels import ExpectedKernelFeatures

    X = rng.normal(size=(500, 4)) @ rng.normal(size=(4, 4))
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=500) > 0, 1.0, -1.0)
    X[rng.random(X.shape) < 0.3] = np.nan
    f = ExpectedKernelFeatures(n_components=64, random_state=0, dtype="float32").fit(X)
    dX = da.from_array(X, chunks=(120, 4))  # blocks end at 120, 240, 360, 480
    calls = []

    def prepare(rows):
        calls.append(len(rows))
        return f._prepare(rows)

    passes = DaskPasses(
        dX, y, transform=f._transform_prepared, prepare=prepare, keep_rows=keep_rows
    )
    assert passes.kept_rows == 120 * (min(keep_rows, 480) // 120)
    kept_blocks = passes.kept_rows // 120
    all_kept = DaskPasses(dX, y, transform=f._transform_prepared, prepare=f._prepare)
    fit = fit_squared_hinge(passes, C=2.0)
    ref = fit_squared_hinge(all_kept, C=2.0)
    np.testing.assert_array_equal(fit.coef, ref.coef)
    assert fit.intercept == ref.intercept and fit.n_passes == ref.n_passes
    # kept blocks prepared once; the others once more at every pass
    again = len(calls) - kept_blocks
    assert again == (5 - kept_blocks) * fit.n_passes
    with pytest.raises(ValueError, match="prepare needs a transform"):
        DaskPasses(dX, y, prepare=f._prepare)


@pytest.mark.parametrize("tol", [1e-2, 1e-3])
def test_liblinears_stopping_rule_and_the_objective_it_guarantees(rng, tol):
    """``tol`` is LIBLINEAR's (LinearSVC(dual=False)'s): stop at the first
    pass whose gradient norm is at most ``tol min(n_pos, n_neg) / n`` times
    the norm at zero. The objective is 1-strongly convex (the 1/2 |w|^2), so
    the value left above the minimum is at most |g|^2 / 2."""
    Z, y = _problem(rng, n=3000, d=60, noise=0.3)
    c = rng.uniform(0.5, 2.0, size=len(y))
    C = 10.0
    norms = []
    fit = fit_squared_hinge(
        BlockPasses(_blocks(Z, 512), y, c), C=C, tol=tol,
        progress=lambda k, g, changed: norms.append(g),
    )  # fmt: skip
    best = fit_squared_hinge(BlockPasses(_blocks(Z, 512), y, c), C=C, tol=1e-14)
    X = np.hstack([Z, np.ones((len(Z), 1))])
    g0 = -2.0 * C * X.T @ (c * y)  # every row in the margin at zero
    stop = tol * min(np.sum(y > 0), np.sum(y < 0)) / len(y) * np.linalg.norm(g0)
    g = _gradient(fit.coef, fit.intercept, Z, y, C, c, 1.0)
    assert fit.converged and np.linalg.norm(g) <= stop
    # it stopped at the first such pass, before the tight fit did
    assert all(r > 1.0 for r in norms[:-1]) and norms[-1] <= 1.0
    assert fit.n_passes < best.n_passes
    np.testing.assert_allclose(norms[-1], np.linalg.norm(g) / stop, rtol=1e-8)
    gap = _objective(fit.coef, fit.intercept, Z, y, C, c, 1.0) - _objective(
        best.coef, best.intercept, Z, y, C, c, 1.0
    )
    assert -1e-9 <= gap <= 0.5 * np.linalg.norm(g) ** 2


def test_dask_pieces_bound_the_features_in_memory_and_change_no_sum(rng):
    """A worker makes its block's features ``piece_rows`` rows at a time:
    the same outputs and sums in another order (rounding of n terms), and
    ``transform`` never sees more rows than a piece."""
    da = pytest.importorskip("dask.array")
    Z, y = _problem(rng, n=1000, d=30)
    dZ = da.from_array(Z, chunks=(400, 30))
    seen = []

    def transform(rows):
        seen.append(len(rows))
        return rows

    whole = DaskPasses(dZ, y)
    pieces = DaskPasses(dZ, y, transform=transform, piece_rows=64)
    w = rng.normal(size=31)
    held = rng.random(1000) < 0.5
    a, b = whole.scan(w, held), pieces.scan(w, held)
    assert max(seen) == 64 and sum(seen) == 1000
    np.testing.assert_array_equal(a.outputs, b.outputs)  # row by row: exact
    assert a.changed == b.changed
    for x, z in ((a.gradient_sum, b.gradient_sum), (a.target_sum, b.target_sum),
                 (a.hessian_change, b.hessian_change)):  # fmt: skip
        # sums of 1000 terms of size |z|^2 <= 4 in another order
        np.testing.assert_allclose(z, x, rtol=0, atol=1000 * 4 * 2e-16 * 8)
    np.testing.assert_allclose(
        a.target_sum[:30], Z.T @ y, rtol=0, atol=1000 * 4 * 2e-16 * 8
    )
    fa = fit_squared_hinge(whole, C=3.0)
    fb = fit_squared_hinge(pieces, C=3.0)
    np.testing.assert_allclose(fb.coef, fa.coef, rtol=0, atol=1e-9)


def _svr_objective(w, b, Z, t, C, c, epsilon):
    r = np.abs(t - (Z @ w + b)) - epsilon
    return 0.5 * (w @ w + b * b) + C * np.sum(c * np.maximum(0.0, r) ** 2)


def _svr_gradient(w, b, Z, t, C, c, epsilon):
    X = np.hstack([Z, np.ones((len(Z), 1))])
    full = np.append(w, b)
    o = X @ full
    r = np.abs(t - o) - epsilon
    tau = t - epsilon * np.sign(t - o)
    return full + 2.0 * C * X.T @ (c * np.where(r > 0, o - tau, 0.0))


@pytest.mark.parametrize(("C", "epsilon"), [(0.1, 0.0), (1.0, 0.3), (20.0, 1.5)])
def test_squared_epsilon_insensitive_is_linearsvr_objective_minimiser(rng, C, epsilon):
    """LinearSVR(loss="squared_epsilon_insensitive", dual=False) at a tight
    tolerance is the reference; ours must reach a zero gradient (to the
    rounding of D x D solves on sums of n terms of size C |x|^2), an
    objective never above liblinear's, and its coefficients. epsilon = 1.5
    leaves most rows in the tube; the heavy-tailed targets make rows jump
    from one side of the tube to the other within a step."""
    from sklearn.svm import LinearSVR

    Z, _ = _problem(rng, n=1200, d=30)
    t = Z @ rng.normal(size=30) + 2.0 + rng.standard_t(df=2, size=1200)
    c = rng.uniform(0.5, 2.0, size=len(t))
    fit = fit_squared_epsilon_insensitive(
        BlockPasses(_blocks(Z, 200), t, c), C=C, epsilon=epsilon
    )
    assert fit.converged and fit.n_passes <= 40
    g = _svr_gradient(fit.coef, fit.intercept, Z, t, C, c, epsilon)
    scale = 1.0 + 2.0 * C * np.sum(c * (Z**2).sum(1)) * (1.0 + np.abs(t).max())
    assert np.abs(g).max() <= 1e-10 * scale
    ref = LinearSVR(
        C=C, epsilon=epsilon, loss="squared_epsilon_insensitive", dual=False,
        tol=1e-12, max_iter=100_000,
    ).fit(Z, t, sample_weight=c)  # fmt: skip
    f_ours = _svr_objective(fit.coef, fit.intercept, Z, t, C, c, epsilon)
    f_ref = _svr_objective(ref.coef_, ref.intercept_[0], Z, t, C, c, epsilon)
    assert f_ours <= f_ref * (1.0 + 1e-12)
    np.testing.assert_allclose(fit.coef, ref.coef_, rtol=0, atol=1e-5)
    assert abs(fit.intercept - ref.intercept_[0]) <= 1e-5


def test_squared_epsilon_insensitive_stops_by_liblinears_rule(rng):
    """LIBLINEAR's rule for -s 11: |g| <= tol |g(0)|, g(0) over the rows
    outside the tube at zero; the value left is at most |g|^2 / 2."""
    Z, _ = _problem(rng, n=2000, d=40)
    t = 3.0 * (Z @ rng.normal(size=40)) + rng.normal(size=2000)
    C, epsilon, tol = 5.0, 0.2, 1e-3
    norms = []
    fit = fit_squared_epsilon_insensitive(
        BlockPasses(_blocks(Z, 300), t), C=C, epsilon=epsilon, tol=tol,
        progress=lambda k, g, changed: norms.append(g),
    )  # fmt: skip
    best = fit_squared_epsilon_insensitive(
        BlockPasses(_blocks(Z, 300), t), C=C, epsilon=epsilon, tol=1e-14
    )
    ones = np.ones(len(t))
    g0 = _svr_gradient(np.zeros(40), 0.0, Z, t, C, ones, epsilon)
    g = _svr_gradient(fit.coef, fit.intercept, Z, t, C, ones, epsilon)
    assert np.linalg.norm(g) <= tol * np.linalg.norm(g0)
    assert all(r > 1.0 for r in norms[:-1]) and norms[-1] <= 1.0
    gap = _svr_objective(
        fit.coef, fit.intercept, Z, t, C, ones, epsilon
    ) - _svr_objective(best.coef, best.intercept, Z, t, C, ones, epsilon)
    assert -1e-9 <= gap <= 0.5 * np.linalg.norm(g) ** 2
    with pytest.raises(ValueError, match="epsilon must be"):
        fit_squared_epsilon_insensitive(BlockPasses(_blocks(Z, 300), t), epsilon=-1)
    bad = t.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="finite targets"):
        fit_squared_epsilon_insensitive(BlockPasses(_blocks(Z, 300), bad))
