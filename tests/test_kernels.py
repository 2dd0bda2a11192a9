"""Exactness of the expected RBF kernels against a naive per-pair reference.

The reference is written from the closed form (docs/theory.rst, sections
"Expected RBF" and "genRBF"; the genRBF paper's eqs. (20)-(21), Anderson & Gupta
eq. (3)): for every pair of
rows it builds the full d x d conditional covariances, whitens them for the
Mahalanobis metric, and calls ``slogdet``/``solve``. It shares no code with
the pattern-pair implementation.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _helpers import (
    UNIT_ROUNDOFF,
    FixedGaussian,
    assert_psd,
    assert_rel,
    mcar,
    naive_expected_rbf,
    random_gaussian,
)
from sklearn.metrics.pairwise import rbf_kernel

from missingkernels import get_kernel

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

# -- data with few patterns -------------------------------------------------------


def structured(rng, X, n_patterns, rate=0.4):
    """At most ``n_patterns`` distinct patterns, many rows each."""
    patterns = rng.random((n_patterns, X.shape[1])) < rate
    patterns[0] = False  # some complete rows
    X = X.copy()
    X[patterns[rng.integers(0, n_patterns, len(X))]] = np.nan
    return X


# -- the naive reference (one pair: _helpers.naive_expected_rbf) ------------------


def naive_gram(cx, cy, gamma, S=None, *, normalised=False, diagonal=None):
    """Gram of two GaussianConditionals; ``diagonal`` set when cy is cx (k(X))."""
    nx, ny = cx.n_samples, cy.n_samples
    K = np.empty((nx, ny))
    for i in range(nx):
        for j in range(ny):
            K[i, j] = naive_expected_rbf(
                cx.means[i], cx.row_covariance(i), cy.means[j], cy.row_covariance(j),
                gamma, S,
            )  # fmt: skip
    if normalised:
        nxs = [
            naive_expected_rbf(cx.means[i], cx.row_covariance(i), cx.means[i],
                               cx.row_covariance(i), gamma, S)
            for i in range(nx)
        ]  # fmt: skip
        nys = [
            naive_expected_rbf(cy.means[j], cy.row_covariance(j), cy.means[j],
                               cy.row_covariance(j), gamma, S)
            for j in range(ny)
        ]  # fmt: skip
        K /= np.sqrt(np.outer(nxs, nys))
    if diagonal == "same_draw":
        ones = np.ones(nx)
        K[np.diag_indices(nx)] = ones / (np.asarray(nxs) if normalised else ones)
    return K


def naive_gram_rtol(cx, cy, gamma, R, S=None):
    """Relative error bound of each entry ``R`` of an expected RBF Gram.

    ``log E k = -1/2 log det M - 1/2 d' (A + B + I / 2 gamma)^-1 d`` with
    ``M = I + 2 gamma (A + B)`` (whitened by ``S`` in the Mahalanobis metric).
    A factorisation and two triangular solves of a d x d matrix are backward
    stable to ``(3d + 1) u <= 4 d u`` (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., Thm. 10.4), which the condition number of
    ``M``, at most ``1 + 4 gamma lambda`` (``M >= I``; ``lambda`` the largest
    eigenvalue of a conditional covariance), turns into a relative error of
    each term, so an absolute error of ``log E k`` of ``4 d u kappa(M)
    (1 + |log E k|)`` per term: the relative error of ``E k`` (exp has
    condition ``|log E k|``). Two terms, two algorithms: ``16 d u kappa(M)
    (1 + |log E k|)``. It dominates at large ``gamma`` (4e-8 at gamma = 2^15
    in the Mahalanobis metric, where 5e-9 was seen). Below 1e-10 the bound's
    constants are not sharp (1.3e-14 was seen against its 1.4e-14 at
    gamma = 2^-15, d = 8), so 1e-10, four decades above such rounding, is the
    floor. (``S`` of ``random_gaussian`` is well conditioned: whitening adds
    little.)
    """
    W = np.eye(cx.n_features) if S is None else np.linalg.inv(np.linalg.cholesky(S))
    lam = max(
        np.linalg.eigvalsh(W @ c.row_covariance(i) @ W.T).max()
        for c in (cx, cy)
        for i in range(c.n_samples)
    )
    kappa = 1.0 + 4.0 * gamma * lam
    bound = 16.0 * cx.n_features * UNIT_ROUNDOFF * kappa * (1.0 + np.abs(np.log(R)))
    return np.maximum(bound, 1e-10)


def assert_grams_match_naive(k, X, Y, gamma, S=None):
    """k(X), k(X, Y) and k(Y, X) against the naive reference where it does
    not underflow, to the error bound of :func:`naive_gram_rtol` per entry."""
    cx, cy = k.density_.conditionals(X), k.density_.conditionals(Y)
    for K, R, c1, c2 in (
        (k(X), naive_gram(cx, cx, gamma, S, diagonal=k.diagonal), cx, cx),
        (k(X, Y), naive_gram(cx, cy, gamma, S), cx, cy),
        (k(Y, X), naive_gram(cy, cx, gamma, S), cy, cx),
    ):
        big = R > 1e-250
        assert big.sum() >= 4
        rtol = naive_gram_rtol(c1, c2, gamma, R[big], S)
        err = np.abs(K[big] - R[big]) / R[big]
        worst = np.argmax(err / rtol)
        assert np.all(err <= rtol), (
            f"relative error {err[worst]:.3g} above its bound {rtol[worst]:.3g} "
            f"at E k = {R[big][worst]:.3g}"
        )
        assert np.all(K[~big] < 1e-240)


def count_schur_row_loop_calls(monkeypatch):
    """A list that grows by one at each call of the compiled Schur row loop."""
    from missingkernels.kernels.rbf.engine import _compiled

    calls = []
    rows = _compiled.rbf_rows

    def counted(*args):
        calls.append(1)
        return rows(*args)

    monkeypatch.setattr(_compiled, "rbf_rows", counted)
    return calls


# -- cases --------------------------------------------------------------------------

CASES = [
    # (name, n_train, n_test, d, missingness)
    ("complete", 12, 7, 4, ("mcar", 0.0)),
    ("mcar20", 30, 12, 5, ("mcar", 0.2)),
    ("mcar60", 30, 12, 6, ("mcar", 0.6)),
    ("structured", 70, 25, 6, ("structured", 4)),
]


def make_case(rng, n, m, d, missingness):
    mean, S = random_gaussian(rng, d)
    X = rng.multivariate_normal(mean, S, size=n)
    Y = rng.multivariate_normal(mean, S, size=m)
    kind, value = missingness
    if kind == "mcar":
        X, Y = mcar(rng, X, value), mcar(rng, Y, value)
        if value > 0:
            X[0] = np.nan  # a fully missing row
            X[1, 1:] = np.nan
    else:
        X, Y = structured(rng, X, value), structured(rng, Y, value)
    return mean, S, X, Y


@pytest.mark.parametrize("name,n,m,d,missingness", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
@pytest.mark.parametrize("kernel_name", ["genrbf", "expected_rbf"])
def test_matches_naive_reference(rng, name, n, m, d, missingness, metric, kernel_name):
    mean, S, X, Y = make_case(rng, n, m, d, missingness)
    gamma = 0.37
    density = FixedGaussian(mean, S)
    k = get_kernel(kernel_name, gamma=gamma, metric=metric, density=density).fit(X)
    cx = k.density_.conditionals(X)
    cy = k.density_.conditionals(Y)
    S_metric = S if metric == "mahalanobis" else None
    normalised = kernel_name == "genrbf"
    diagonal = k.diagonal
    K_train = k(X)
    assert K_train.dtype == np.float64
    assert_rel(
        K_train,
        naive_gram(cx, cx, gamma, S_metric, normalised=normalised, diagonal=diagonal),
    )
    assert_rel(k(X, Y), naive_gram(cx, cy, gamma, S_metric, normalised=normalised))
    assert_rel(k(Y, X), naive_gram(cy, cx, gamma, S_metric, normalised=normalised))
    assert_psd(K_train)


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_other_diagonal_conventions(rng, metric):
    mean, S, X, _ = make_case(rng, 25, 1, 4, ("mcar", 0.4))
    S_metric = S if metric == "mahalanobis" else None
    for name, normalised, other in [
        ("genrbf", True, "same_draw"),
        ("expected_rbf", False, "independent"),
    ]:
        k = get_kernel(
            name,
            gamma=0.8,
            metric=metric,
            density=FixedGaussian(mean, S),
            diagonal=other,
        ).fit(X)
        c = k.density_.conditionals(X)
        expected = naive_gram(
            c, c, 0.8, S_metric, normalised=normalised, diagonal=other
        )
        assert_rel(k(X), expected)
        # k(X, X) pairs independent rows everywhere; only the diagonal differs.
        independent = naive_gram(c, c, 0.8, S_metric, normalised=normalised)
        assert_rel(k(X, X), independent)
        off = ~np.eye(len(X), dtype=bool)
        assert_rel(k(X)[off], independent[off])


def test_many_rows_per_pattern_and_many_patterns_agree(rng):
    """Patterns with many rows take the stored-factor loop, singletons the
    direct one; splitting the rows must not change any entry."""
    mean, S = random_gaussian(rng, 5)
    X = structured(rng, rng.multivariate_normal(mean, S, size=60), 3)
    Z = mcar(rng, rng.multivariate_normal(mean, S, size=20), 0.4)
    for metric in ("euclidean", "mahalanobis"):
        k = get_kernel(
            "expected_rbf", gamma=0.5, metric=metric, density=FixedGaussian(mean, S)
        ).fit(X)
        full = k(np.vstack([X, Z]))
        assert_rel(full[:60, 60:], k(X, Z))
        assert_rel(full[60:, :60], k(Z, X))
        assert_rel(full[:60, :60], k(X))


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
@pytest.mark.parametrize("loop", ["row_pairs", "schur_row_pairs", "pattern_pairs"])
def test_both_loops_match_naive_reference(rng, monkeypatch, metric, loop):
    """The row-pair loops (in the Euclidean metric the shared-feature loop
    and the Schur loop, Woodbury on the smaller missing set; either row
    bringing the factored block) and the pattern-pair loop, each forced on
    the same rows: complete rows, a fully missing row, rows with fewer and
    more missing features than their partners."""
    from missingkernels.kernels.rbf.engine import _gram

    monkeypatch.setattr(_gram, "_use_row_pairs", lambda a, b: loop != "pattern_pairs")
    monkeypatch.setattr(_gram, "_EUCLIDEAN_SCHUR", loop == "schur_row_pairs")
    d = 7
    mean, S = random_gaussian(rng, d)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=40), 0.35)
    X[0] = np.nan  # fully missing
    X[1] = mean  # complete
    X[2, 1:] = np.nan  # one observed feature
    X[3, :2] = np.nan  # few missing
    X[4] = X[5]  # duplicated rows
    Y = mcar(rng, rng.multivariate_normal(mean, S, size=15), 0.5)
    Y[0] = np.nan
    Y[1] = mean + 0.1
    S_metric = S if metric == "mahalanobis" else None
    density = FixedGaussian(mean, S)
    for name in ("genrbf", "expected_rbf"):
        k = get_kernel(name, gamma=0.6, metric=metric, density=density).fit(X)
        cx, cy = k.density_.conditionals(X), k.density_.conditionals(Y)
        normalised = name == "genrbf"
        K = k(X)
        assert_rel(
            K,
            naive_gram(
                cx, cx, 0.6, S_metric, normalised=normalised, diagonal=k.diagonal
            ),
        )
        assert_psd(K)
        assert_rel(k(X, Y), naive_gram(cx, cy, 0.6, S_metric, normalised=normalised))
        assert_rel(k(Y, X), naive_gram(cy, cx, 0.6, S_metric, normalised=normalised))
        if normalised:
            assert K[4, 5] == 1.0 and K.max() <= 1.0 + 1e-12
    # Both orientations occur: some pairs have |J_i| < |J_j|, some the reverse.
    counts = np.isnan(X).sum(axis=1)
    assert (counts[:, None] < counts[None, :]).any()


@pytest.mark.parametrize("loop", ["tiles", "schur"])
@pytest.mark.parametrize("log2_gamma", [-15, -3, 0, 4, 15])
def test_row_pairs_every_shared_missing_count_against_naive(
    rng, monkeypatch, log2_gamma, loop
):
    """The Euclidean row-pair loop reduces each pair to the h shared missing
    features and has separate code for h = 0, 1, 2, 3 and more: rows built so
    that every h from 0 to 7 occurs (and rows with many missing features
    against rows with few), on both sides of the cross Gram, at gammas from
    2^-15 to 2^15, against the naive reference where it does not underflow."""
    from missingkernels.kernels.rbf.engine import _gram

    monkeypatch.setattr(_gram, "_use_row_pairs", lambda a, b: True)
    # Either Euclidean row-pair loop, whatever the share of missing entries.
    monkeypatch.setattr(_gram, "_EUCLIDEAN_SCHUR", loop == "schur")
    d = 10
    gamma = 2.0**log2_gamma
    mean, S = random_gaussian(rng, d)
    X = rng.multivariate_normal(mean, S, size=36)
    Y = rng.multivariate_normal(mean, S, size=9)
    # Row r of X misses features 0 .. (r % 8) - 1 plus random others, so
    # pairs share 0 to 7 missing features.
    for r in range(len(X)):
        X[r, : r % 8] = np.nan
        X[r, 8 + r % 2] = np.nan if r % 3 == 0 else X[r, 8 + r % 2]
    Y = mcar(rng, Y, 0.5)
    Y[0, :7] = np.nan
    Y[1:5] = X[20:24]  # duplicates across the sides (survive at gamma = 2^15)
    Y[1, 9] = np.nan
    X[5] = X[6]  # duplicated rows, different patterns after the mask below
    X[6, 9] = np.nan
    density = FixedGaussian(mean, S)
    k = get_kernel("expected_rbf", gamma=gamma, density=density).fit(X)
    assert_grams_match_naive(k, X, Y, gamma)
    g = get_kernel("genrbf", gamma=gamma, density=density).fit(X)
    G = g(X)
    assert np.array_equal(np.diag(G), np.ones(len(X)))
    assert_psd(G)


@pytest.mark.parametrize("loop", ["tiles", "schur"])
@pytest.mark.parametrize("log2_gamma", [-15, 0, 15])
def test_row_pairs_many_shared_missing_against_naive(
    rng, monkeypatch, log2_gamma, loop
):
    """The general path of the Euclidean row-pair loop (h >= 4 shared missing
    features), with many such pairs of several h in each block of pairs:
    rows miss 6 to 12 of 16 features (three rows fewer), so nearly every pair
    shares 4 to 12, on both sides of the cross Gram, at gammas 2^-15, 1 and
    2^15, against the naive reference where it does not underflow."""
    from missingkernels.kernels.rbf.engine import _gram

    monkeypatch.setattr(_gram, "_use_row_pairs", lambda a, b: True)
    monkeypatch.setattr(_gram, "_EUCLIDEAN_SCHUR", loop == "schur")
    d = 16
    gamma = 2.0**log2_gamma
    mean, S = random_gaussian(rng, d)
    X = rng.multivariate_normal(mean, S, size=60)
    Y = rng.multivariate_normal(mean, S, size=20)
    Y[1:3] = X[10:12]  # the same points on both sides (masked differently)
    for Z in (X, Y):
        for r in range(len(Z)):
            others = rng.choice(np.arange(4, d), rng.integers(2, 9), replace=False)
            Z[r, :4] = np.nan
            Z[r, others] = np.nan
    X[:2, :4] = Y[:1, :4] = mean[:4]  # columns 0 to 3 observed in 2 rows
    M = np.isnan(np.vstack([X, Y])).astype(int)
    h = M @ M.T
    assert (h >= 4).mean() > 0.9 and len(np.unique(h[h >= 4])) >= 6
    density = FixedGaussian(mean, S)
    k = get_kernel("expected_rbf", gamma=gamma, density=density).fit(X)
    assert_grams_match_naive(k, X, Y, gamma)


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
@pytest.mark.parametrize("log2_gamma", [-15, 0, 15])
def test_schur_row_pairs_many_rows_against_naive(rng, monkeypatch, log2_gamma, metric):
    """The Schur row-pair loop computes a tile of big rows (the vector lanes)
    against each partner, the lanes that pair with it a trailing run: enough
    rows for several tiles and a partial one, tiles spanning several numbers
    of missing features, every size of the smaller missing set, in the
    training Gram and both cross orientations, against the naive reference
    where it does not underflow; and the loop is the one used."""
    from missingkernels.kernels.rbf.engine import _compiled, _gram

    monkeypatch.setattr(_gram, "_use_row_pairs", lambda a, b: True)
    # (at gamma = 2^15 its error estimate would route the Mahalanobis Gram
    # to the pattern-pair loop: forced here)
    monkeypatch.setattr(_gram, "_SCHUR_MAX_ERROR", np.inf)
    calls = count_schur_row_loop_calls(monkeypatch)
    d = 8
    gamma = 2.0**log2_gamma
    mean, S = random_gaussian(rng, d)
    n = 4 * _compiled.LANES + 45
    X = rng.multivariate_normal(mean, S, size=n)
    # 0 to 7 missing features per row, in every proportion.
    for r in range(len(X)):
        X[r, rng.permutation(d)[: r % 8]] = np.nan
    X[10] = X[11]  # duplicated rows
    Y = mcar(rng, rng.multivariate_normal(mean, S, size=_compiled.LANES + 37), 0.45)
    Y[1:4] = X[20:23]  # duplicates across the sides
    density = FixedGaussian(mean, S)
    S_metric = S if metric == "mahalanobis" else None
    k = get_kernel("expected_rbf", gamma=gamma, metric=metric, density=density)
    k.fit(X)
    assert_grams_match_naive(k, X, Y, gamma, S_metric)
    assert calls
    g = get_kernel("genrbf", gamma=gamma, metric=metric, density=density)
    G = g.fit(X)(X)
    assert G[10, 11] == 1.0 and np.array_equal(np.diag(G), np.ones(len(X)))
    assert_psd(G)


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_schur_row_pairs_with_few_lanes(rng, monkeypatch, metric):
    """In high dimensions the Schur row loop keeps fewer big rows per tile
    (down to 8): forced here at d = 9, the Grams still match the naive
    reference, over many tiles."""
    from missingkernels.kernels.rbf.engine import _gram

    monkeypatch.setattr(_gram, "_use_row_pairs", lambda a, b: True)
    monkeypatch.setattr(_gram, "_LANE_TILE_BYTES", 1)
    assert _gram._lanes(9) == 8
    calls = count_schur_row_loop_calls(monkeypatch)
    mean, S = random_gaussian(rng, 9)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=70), 0.4)
    Y = mcar(rng, rng.multivariate_normal(mean, S, size=21), 0.3)
    density = FixedGaussian(mean, S)
    S_metric = S if metric == "mahalanobis" else None
    k = get_kernel("expected_rbf", gamma=0.3, metric=metric, density=density)
    assert_grams_match_naive(k.fit(X), X, Y, 0.3, S_metric)
    assert calls


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_row_pairs_fall_back_for_uninvertible_covariances(rng, monkeypatch, metric):
    """The Schur row-pair loop inverts the conditional covariances; when its
    error estimate is too large (forced here by the threshold) the
    pattern-pair loop (Mahalanobis) or the shared-feature row loop
    (Euclidean) computes the Gram, with the same results."""
    from missingkernels.kernels.rbf.engine import _gram

    monkeypatch.setattr(_gram, "_use_row_pairs", lambda a, b: True)
    calls = count_schur_row_loop_calls(monkeypatch)
    d = 6
    mean, S = random_gaussian(rng, d)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=40), 0.4)
    X[2] = X[3]
    density = FixedGaussian(mean, S)
    k = get_kernel("genrbf", gamma=0.4, metric=metric, density=density)
    k.fit(X)
    K = k(X)
    assert calls
    monkeypatch.setattr(_gram, "_SCHUR_MAX_ERROR", 0.0)
    calls.clear()
    k = get_kernel("genrbf", gamma=0.4, metric=metric, density=density)
    K2 = k.fit(X)(X)
    assert not calls
    c = k.density_.conditionals(X)
    S_metric = S if metric == "mahalanobis" else None
    R = naive_gram(c, c, 0.4, S_metric, normalised=True, diagonal=k.diagonal)
    assert_rel(K2, R)
    assert_rel(K, R)
    assert K2[2, 3] == 1.0


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_training_side_is_kept(rng, monkeypatch, metric):
    """The training rows' side (and its factors) is built once per fitted
    kernel: later Grams against the training rows build only the new rows'
    side, and give the same values as a freshly fitted kernel."""
    from missingkernels.kernels.rbf.engine import _gram

    mean, S, X, Y = make_case(rng, 60, 20, 6, ("mcar", 0.4))
    builds = []
    build = _gram.Side.build

    def counted(*args, **kwargs):
        builds.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr(_gram.Side, "build", counted)
    density = FixedGaussian(mean, S)
    k = get_kernel("genrbf", gamma=0.5, metric=metric, density=density).fit(X)
    K = k(X)
    assert len(builds) == 1
    C = k(Y, X)
    assert len(builds) == 2
    assert_rel(k(X), K, rtol=0)
    assert len(builds) == 2
    fresh = get_kernel("genrbf", gamma=0.5, metric=metric, density=density).fit(X)
    assert_rel(fresh(Y, X), C, rtol=0)
    assert_rel(fresh(X), K, rtol=0)


def test_side_memo_keeps_two_entries_of_a_kind():
    from missingkernels.kernels.rbf.engine import _gram

    side = _gram.Side(None, None)  # type: ignore[arg-type]
    for g in (1.0, 2.0, 3.0):
        assert side.memoized(("factors", g), lambda g=g: g * 10) == g * 10
        assert side.memoized(("other", 0), lambda: "x") == "x"
    assert sorted(side.memo) == [("factors", 2.0), ("factors", 3.0), ("other", 0)]
    assert side.memoized(("factors", 3.0), lambda: None) == 30.0


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_genrbf_is_normalised_expected_rbf(rng, metric):
    mean, S, X, Y = make_case(rng, 30, 10, 5, ("mcar", 0.35))
    density = FixedGaussian(mean, S)
    g = get_kernel("genrbf", gamma=0.6, metric=metric, density=density).fit(X)
    e = get_kernel(
        "expected_rbf",
        gamma=0.6,
        metric=metric,
        density=density,
        diagonal="independent",
    ).fit(X)
    Ex, Ey, Exy = e(X), e(Y, Y), e(X, Y)
    assert_rel(g(X), Ex / np.sqrt(np.outer(np.diag(Ex), np.diag(Ex))))
    assert_rel(g(X, Y), Exy / np.sqrt(np.outer(np.diag(Ex), np.diag(Ey))))
    assert np.array_equal(np.diag(g(X)), np.ones(len(X)))


def test_complete_rows_reduce_to_sklearn_rbf(rng):
    X = rng.normal(size=(40, 6)) * [1, 2, 3, 0.5, 1, 4]
    Y = rng.normal(size=(9, 6))
    for name in ("genrbf", "expected_rbf"):
        k = get_kernel(name, gamma=0.13).fit(X)  # default gaussian_em density
        assert_rel(k(X), rbf_kernel(X, gamma=0.13), rtol=1e-12)
        assert_rel(k(X, Y), rbf_kernel(X, Y, gamma=0.13), rtol=1e-12)
        assert np.array_equal(np.diag(k(X)), np.ones(40))


def test_mahalanobis_complete_rows(rng):
    mean, S = random_gaussian(rng, 4)
    X = rng.multivariate_normal(mean, S, size=15)
    Sinv = np.linalg.inv(S)
    D = X[:, None, :] - X[None, :, :]
    expected = np.exp(-0.7 * np.einsum("ijk,kl,ijl->ij", D, Sinv, D))
    for name in ("genrbf", "expected_rbf"):
        k = get_kernel(
            name, gamma=0.7, metric="mahalanobis", density=FixedGaussian(mean, S)
        ).fit(X)
        assert_rel(k(X), expected, rtol=1e-11)
        assert np.array_equal(k.metric_covariance_, S)


def test_mahalanobis_uses_fitted_em_covariance(rng):
    X = mcar(rng, rng.normal(size=(80, 3)) @ rng.normal(size=(3, 3)), 0.2)
    k = get_kernel("genrbf", gamma=0.5, metric="mahalanobis").fit(X)
    assert np.allclose(k.metric_covariance_, k.density_.covariance_)
    c = k.density_.conditionals(X[:12])
    expected = naive_gram(c, c, 0.5, k.density_.covariance_, normalised=True)
    assert_rel(k(X[:12]), expected, rtol=1e-9)


def test_gamma_scale(rng):
    X = mcar(rng, rng.normal(size=(50, 4)) * 3.0, 0.3)
    k = get_kernel("expected_rbf").fit(X)
    assert k.gamma_ == pytest.approx(1.0 / (4 * np.nanvar(X)))
    k = get_kernel("expected_rbf", metric="mahalanobis").fit(X)
    assert k.gamma_ == pytest.approx(0.25)
    k = get_kernel("expected_rbf", gamma=2.5).fit(X)
    assert k.gamma_ == 2.5


# -- positive semi-definiteness on ordinary data -----------------------------------


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
@pytest.mark.parametrize("rate", [0.1, 0.3, 0.6])
def test_psd_on_mcar_data(rng, metric, rate):
    mean, S = random_gaussian(rng, 8)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=150), rate)
    for gamma in (2.0**-5, 0.25, 2.0**3):
        for name in ("genrbf", "expected_rbf"):
            k = get_kernel(
                name, gamma=gamma, metric=metric, density=FixedGaussian(mean, S)
            )
            assert_psd(k.fit(X)(X))


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_psd_with_fitted_em_density(rng, metric):
    X = mcar(rng, rng.normal(size=(120, 6)) @ rng.normal(size=(6, 6)), 0.3)
    for name in ("genrbf", "expected_rbf"):
        assert_psd(get_kernel(name, gamma=0.2, metric=metric).fit(X)(X))


# -- numerical range: gamma 2^-15..2^15, feature scales 1e-6..1e6 ------------------


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_extreme_gamma_and_scales(rng, scale, metric):
    d = 5
    mean, S = random_gaussian(rng, d)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=40), 0.4)
    X[3] = X[4]  # duplicated rows: k = 1 in every regime
    base = FixedGaussian(mean, S)
    scaled = FixedGaussian(mean * scale, S * scale**2)
    for log2_gamma in (-15, -5, 0, 5, 15):
        gamma = 2.0**log2_gamma
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow / invalid-value warnings
            with np.errstate(over="raise", invalid="raise", divide="raise"):
                for name in ("genrbf", "expected_rbf"):
                    # Whitened distances do not depend on the scale.
                    g = gamma / scale**2 if metric == "euclidean" else gamma
                    k = get_kernel(name, gamma=g, metric=metric, density=scaled)
                    k.fit(X * scale)
                    K = k(X * scale)
                    V = k.variance(X * scale)
                    assert np.all(np.isfinite(K)) and np.all(np.isfinite(V))
                    assert K.min() >= 0.0
                    assert np.all(V >= 0.0)
                    assert_psd(K)
                    # Scaling rows by s (and gamma by 1/s^2) is the same kernel.
                    ref = get_kernel(name, gamma=gamma, metric=metric, density=base)
                    assert_rel(K, ref.fit(X)(X), rtol=1e-8)
                    if name == "genrbf":
                        assert np.array_equal(np.diag(K), np.ones(len(X)))
                        assert K.max() <= 1.0 + 1e-12


def test_extreme_gamma_against_naive(rng):
    mean, S = random_gaussian(rng, 4)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=15), 0.5)
    X[2] = X[5]
    for gamma in (2.0**-15, 2.0**15):
        k = get_kernel("expected_rbf", gamma=gamma, density=FixedGaussian(mean, S))
        K = k.fit(X)(X, X)
        c = k.density_.conditionals(X)
        R = naive_gram(c, c, gamma)
        # Compare where the reference does not underflow.
        big = R > 1e-250
        assert_rel(K[big], R[big], rtol=1e-8)
        assert np.all(K[~big] < 1e-240)


def test_a_bad_thread_count_leaves_the_blas_limit_usable(monkeypatch):
    # A bad MISSINGKERNELS_NUM_THREADS raised inside serial_blas.__enter__
    # after it had counted itself in, and no __exit__ followed: every later
    # kernel evaluation saw itself nested and never limited BLAS again.
    from missingkernels.kernels.rbf.engine import _threads

    log = []

    class Controller:
        def limit(self, limits, user_api):
            log.append("limit")
            return type("L", (), {"restore_original_limits": lambda self: None})()

    monkeypatch.setattr(_threads.serial_blas, "_controller", Controller())
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="MISSINGKERNELS_NUM_THREADS"):
        with _threads.serial_blas:
            pass
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "2")
    with _threads.serial_blas:
        assert log == ["limit"]


def test_blas_is_held_to_one_thread_while_a_kernel_runs_on_several(rng, monkeypatch):
    """Idle BLAS threads spin after each call and would take the cores from
    the compiled loops: a kernel evaluation on several loop threads limits
    BLAS to one thread (through a recording stand-in for threadpoolctl's
    controller here) and lifts the limit afterwards, once for nested uses;
    with one loop thread it sets no limit."""
    from missingkernels.kernels.rbf.engine import _gram, _threads

    log = []

    class Limiter:
        def restore_original_limits(self):
            log.append("restore")

    class Controller:
        def limit(self, limits, user_api):
            log.append(("limit", limits, user_api))
            return Limiter()

    monkeypatch.setattr(_threads.serial_blas, "_controller", Controller())
    during = []
    exp = _gram.exp_inplace

    def recording(out, **kwargs):
        during.append(list(log))
        return exp(out, **kwargs)

    monkeypatch.setattr(_gram, "exp_inplace", recording)
    mean, S = random_gaussian(rng, 4)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=30), 0.3)
    k = get_kernel("genrbf", gamma=0.5, density=FixedGaussian(mean, S)).fit(X)
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "2")
    K = k(X)
    assert during and all(seen == [("limit", 1, "blas")] for seen in during)
    assert log == [("limit", 1, "blas"), "restore"]
    log.clear()
    with _threads.serial_blas:
        with _threads.serial_blas:
            assert log == [("limit", 1, "blas")]
        assert log == [("limit", 1, "blas")]
    assert log == [("limit", 1, "blas"), "restore"]
    log.clear()
    during.clear()
    monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "1")
    assert_rel(k(X), K, rtol=0)
    assert during and log == []


def test_blas_runs_on_one_thread_while_a_kernel_is_evaluated(rng, monkeypatch):
    """The same with the BLAS library numpy loaded, where its thread count
    can be set (not where it was started with one thread)."""
    from threadpoolctl import ThreadpoolController, threadpool_limits

    from missingkernels.kernels.rbf.engine import _gram, _threads

    def blas_threads():
        return {lib["num_threads"] for lib in ThreadpoolController().info()
                if lib["user_api"] == "blas"}  # fmt: skip

    seen = []
    exp = _gram.exp_inplace

    def recording(out, **kwargs):
        seen.append(blas_threads())
        return exp(out, **kwargs)

    monkeypatch.setattr(_gram, "exp_inplace", recording)
    mean, S = random_gaussian(rng, 4)
    X = mcar(rng, rng.multivariate_normal(mean, S, size=30), 0.3)
    k = get_kernel("genrbf", gamma=0.5, density=FixedGaussian(mean, S)).fit(X)
    with threadpool_limits(2, user_api="blas"):
        if blas_threads() != {2}:
            pytest.skip("no BLAS library with a settable thread count")
        monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "2")
        K = k(X)
        assert seen and all(s == {1} for s in seen)
        assert blas_threads() == {2}
        with _threads.serial_blas:
            with _threads.serial_blas:
                assert blas_threads() == {1}
            assert blas_threads() == {1}
        assert blas_threads() == {2}
        seen.clear()
        monkeypatch.setenv("MISSINGKERNELS_NUM_THREADS", "1")
        assert_rel(k(X), K, rtol=0)
        assert seen and all(s == {2} for s in seen)
