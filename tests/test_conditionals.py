"""GaussianConditionals.from_moments against per-row Schur complements."""

from __future__ import annotations

import numpy as np
import pytest

from missingkernels._gaussian_conditioning import (
    _condition_by_schur,
    condition_gaussian,
)
from missingkernels._missing_patterns import pattern_groups
from missingkernels.conditionals import GaussianConditionals, group_patterns

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics


def _naive(x, m, S):
    """Per-row Schur complement, written from the textbook formula."""
    J = np.isnan(x)
    O = ~J  # noqa: E741
    mu = x.copy()
    A = np.zeros_like(S)
    if J.any():
        coef = np.linalg.solve(S[np.ix_(O, O)], S[np.ix_(O, J)]) if O.any() else None
        mu[J] = m[J] + (0 if coef is None else (x[O] - m[O]) @ coef)
        C = S[np.ix_(J, J)] - (0 if coef is None else S[np.ix_(J, O)] @ coef)
        A[np.ix_(J, J)] = C
    return mu, A


@pytest.mark.parametrize("scales", ["unit", "mixed"])
def test_from_moments_matches_per_row_schur(rng, scales):
    d = 6
    s = np.ones(d) if scales == "unit" else 10.0 ** np.array([-6, -2, 0, 2, 4, 6])
    B = rng.normal(size=(d, d))
    base = B @ B.T + d * np.eye(d)
    S = base * np.outer(s, s)
    m = rng.normal(size=d) * s
    # Rows of N(m, S) drawn as m + diag(s) L z (numpy's own PSD check rejects
    # S at condition number 1e24).
    X = m + (rng.normal(size=(200, d)) @ np.linalg.cholesky(base).T) * s
    X[rng.random(X.shape) < 0.4] = np.nan
    X[:3] = np.nan  # fully missing rows
    cond = GaussianConditionals.from_moments(X, m, S)
    for i in range(X.shape[0]):
        mu, A = _naive(X[i], m, S)
        np.testing.assert_allclose(cond.means[i], mu, rtol=1e-9, atol=1e-12 * s.max())
        scale = np.outer(s, s)
        np.testing.assert_allclose(
            cond.row_covariance(i) / scale, A / scale, rtol=1e-9, atol=1e-10
        )


@pytest.mark.parametrize("jitter", [0.0, 1e-15, 1e-13])
def test_nearly_singular_covariance_is_conditioned_by_schur(rng, jitter):
    """A total column (x_4 = x_1 + x_2 + x_3) makes the covariance singular:
    rounding leaves it positive definite or not, by BLAS kernel, and the
    precision of its correlation matrix (condition ~1/jitter) carries no
    correct digit. Every observed block but the full one is well conditioned,
    so each conditional exists and the per-row textbook formula gives it to
    ~1e-12; the batched precision path returned means wrong by O(1) where
    Cholesky accepted the matrix (OpenBLAS's Sandybridge kernel, or a jitter
    of 1e-15 on any kernel)."""
    Z = rng.normal(size=(300, 3)) * [1.0, 2.0, 0.5]
    X = np.column_stack([Z, Z.sum(axis=1)])  # any 3 columns have full rank
    m = X.mean(axis=0)
    S = np.cov(X.T, bias=True) + jitter * np.eye(4)
    X[rng.random(X.shape) < 0.35] = np.nan
    X = X[~np.isnan(X).all(axis=1) & np.isnan(X).any(axis=1)]
    cond = GaussianConditionals.from_moments(X, m, S)
    for i in range(len(X)):
        mu, A = _naive(X[i], m, S)
        # kappa(S_OO) ~ 1e2 for every proper subset: u kappa ||S|| ~ 1e-13.
        np.testing.assert_allclose(cond.means[i], mu, rtol=0, atol=1e-10)
        np.testing.assert_allclose(cond.row_covariance(i), A, rtol=0, atol=1e-10)


def test_singular_covariance_falls_back_to_schur(rng):
    # Feature 2 = feature 0 + feature 1: S is singular, conditionals still exist.
    Z = rng.normal(size=(100, 2))
    X = np.column_stack([Z, Z.sum(axis=1)])
    S = np.cov(X.T, bias=True)
    m = X.mean(axis=0)
    X[rng.random(X.shape) < 0.3] = np.nan
    cond = GaussianConditionals.from_moments(X, m, S)
    ref_means = _condition_by_schur(X, pattern_groups(np.isnan(X)), m, S).means
    np.testing.assert_allclose(cond.means, ref_means)
    # Rows missing only feature 2 get it exactly from the other two.
    only2 = np.isnan(X).tolist().index([False, False, True])
    assert cond.means[only2, 2] == pytest.approx(X[only2, 0] + X[only2, 1])


def test_from_moments_checks_shapes():
    with pytest.raises(ValueError, match=r"shapes \(2,\) and \(2, 2\)"):
        GaussianConditionals.from_moments(np.zeros((3, 2)), np.zeros(3), np.eye(2))


@pytest.mark.parametrize("d", [1, 7, 8, 9, 20])
def test_group_patterns_matches_numpy_unique(rng, d):
    M = rng.random((500, d)) < 0.3
    patterns, index = group_patterns(M)
    ref, ref_index = np.unique(M, axis=0, return_inverse=True)
    np.testing.assert_array_equal(patterns, ref)
    np.testing.assert_array_equal(index, ref_index.reshape(-1))
    np.testing.assert_array_equal(patterns[index], M)


def test_pattern_groups_partition_rows_by_missing_count(rng):
    M = rng.random((300, 5)) < 0.4
    groups = pattern_groups(M)
    patterns, index = group_patterns(M)
    np.testing.assert_array_equal(groups.patterns, patterns)
    np.testing.assert_array_equal(groups.pattern_index, index)
    seen = []
    for g in groups.groups:
        k = g.missing_idx.shape[1]
        assert k >= 1
        np.testing.assert_array_equal(M[g.rows].sum(axis=1), k)
        np.testing.assert_array_equal(index[g.rows], g.patterns[g.pattern_of_row])
        for q, p in enumerate(g.patterns):
            np.testing.assert_array_equal(np.flatnonzero(patterns[p]), g.missing_idx[q])
        np.testing.assert_array_equal(g.counts, np.bincount(g.pattern_of_row))
        seen.append(g.rows)
    complete = np.flatnonzero(~M.any(axis=1))
    np.testing.assert_array_equal(
        np.sort(np.concatenate([complete, *seen])), np.arange(300)
    )


def test_condition_gaussian_logpdf_is_the_observed_marginal(rng):
    d = 4
    s = 10.0 ** np.array([-3, 0, 1, 3])
    B = rng.normal(size=(d, d))
    S = (B @ B.T + np.eye(d)) * np.outer(s, s)
    m = rng.normal(size=d) * s
    X = m + rng.normal(size=(60, d)) * s
    X[rng.random(X.shape) < 0.4] = np.nan
    X[0] = np.nan
    groups = pattern_groups(np.isnan(X))
    out = condition_gaussian(X, groups, m, S, logpdf=True)
    ref = GaussianConditionals.from_moments(X, m, S)
    np.testing.assert_array_equal(out.means, ref.means)
    for i, x in enumerate(X):
        O = ~np.isnan(x)  # noqa: E741
        expected = 0.0
        if O.any():
            # Written out: scipy's own PSD check rejects S_OO at these scales.
            S_OO, r = S[np.ix_(O, O)], x[O] - m[O]
            quad = r @ np.linalg.solve(S_OO, r)
            logdet = np.linalg.slogdet(S_OO)[1]
            expected = -0.5 * (O.sum() * np.log(2 * np.pi) + logdet + quad)
        assert out.logpdf[i] == pytest.approx(expected, rel=1e-10, abs=1e-10)
    # Singular covariance: the log-density is undefined and raises.
    S1 = np.ones((d, d))
    with pytest.raises(np.linalg.LinAlgError):
        condition_gaussian(X, groups, m, S1, logpdf=True)


def test_joint_covariance_is_the_fitted_one_where_known(rng):
    # Gaussian conditionals: their covariance, else the density's, else the
    # implied one; other representations: the implied one (issue 36: the
    # RBF's Mahalanobis metric asks the representation, not its class).
    from dataclasses import replace
    from types import SimpleNamespace

    S = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 0.5]])
    X = rng.multivariate_normal(np.zeros(3), S, size=40)
    X[rng.random(X.shape) < 0.3] = np.nan
    c = GaussianConditionals.from_moments(X, np.zeros(3), S)
    np.testing.assert_array_equal(c.joint_covariance(), S)
    bare = replace(c, covariance=None)
    other = 3.0 * np.eye(3)
    np.testing.assert_array_equal(
        bare.joint_covariance(SimpleNamespace(covariance_=other)), other
    )
    np.testing.assert_allclose(bare.joint_covariance(), bare.implied_covariance())
    draws = c.sample(5, random_state=0)
    np.testing.assert_allclose(
        draws.joint_covariance(SimpleNamespace(covariance_=other)),
        draws.implied_covariance(),
    )
