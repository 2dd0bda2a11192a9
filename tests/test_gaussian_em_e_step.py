"""The Gaussian EM's compiled E-step against a naive per-row reference.

The reference conditions each row on its own, inverting the observed block
``S_OO`` with numpy: no precision matrix, no sharing between rows, no
compiled code. The E-step's sums (log-likelihood, sum of the conditional
means, their scatter about the mean, summed conditional covariances) must
agree to within a rounding bound derived as follows (``u`` the unit
roundoff, ``kappa`` the 2-norm condition number of the correlation matrix
``R``, ``d`` the number of features):

* The E-step works through ``L = R^-1`` from a Cholesky factor: each column
  of ``L`` is a backward-stable solve, so ``R L = I + F`` with
  ``||F|| <~ d u kappa``; the conditionals it gives are those of a
  correlation matrix perturbed by about ``d u kappa`` relative to ``R``
  (the bound behind ``_PRECISION_PATH_ERROR`` in
  ``missingkernels/_gaussian_conditioning.py``). The small ``k x k``
  inverses of ``L_JJ`` (``kappa(L_JJ) <= kappa``) add ``k u kappa``.
* The reference's solve with ``S_OO`` errs by about ``d u kappa(S_OO)``
  with ``kappa(S_OO) <= kappa`` (unit variances here, so ``S = R``).
* Summing ``n`` rows adds at most ``n u`` relative to the sum of the
  absolute values (the compiled loop sums in runs of 256, the reference
  with numpy's pairwise sums: both well below ``n u``).

So each sum is compared with a tolerance of ``C (d u kappa + n u)`` times
the sum of the absolute values of its terms, with ``C = 10`` for the
constants these bounds leave out (they are first order and norm-wise;
entrywise errors are smaller). For the log-likelihood the terms are those
the E-step adds: ``|O| log 2 pi``, ``r_O' S_OO^-1 r_O`` and ``log det S_OO``
computed as ``log det R + log det L_JJ`` (plus ``2 sum_O log sd``, zero
here), two terms of size up to ``d log kappa`` that nearly cancel when most
entries are missing: the bound is relative to ``|log det R| + |log det
L_JJ|``, not to their small sum.
"""

from __future__ import annotations

import numpy as np
import pytest

from missingkernels._missing_patterns import pattern_groups
from missingkernels.densities._gaussian_em import (
    _gaussian_block_e_step,
    _gaussian_e_step,
    _gaussian_e_step_batched,
)

U = np.finfo(np.float64).eps / 2
C = 10.0


def _correlation(d: int, kappa: float, rng: np.random.Generator) -> np.ndarray:
    """A random correlation matrix of condition number about ``kappa``."""
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    S = (Q * np.logspace(0, -np.log10(kappa), d)) @ Q.T
    s = np.sqrt(np.diag(S))
    S = S / np.outer(s, s)
    return 0.5 * (S + S.T)


def _reference(Z: np.ndarray, missing: np.ndarray, m: np.ndarray, S: np.ndarray):
    """Per-row conditioning by inverting ``S_OO``: the sums and, per sum, the
    sum of the absolute values of its terms (rows with no observed entry
    skipped, as the EM drops them)."""
    d = Z.shape[1]
    log_det_S = np.linalg.slogdet(S)[1]  # = log det R: unit variances
    loglik = loglik_abs = 0.0
    total, total_abs = np.zeros(d), np.zeros(d)
    scatter, scatter_abs = np.zeros((d, d)), np.zeros((d, d))
    cov, cov_abs = np.zeros((d, d)), np.zeros((d, d))
    for z, miss in zip(Z, missing, strict=True):
        O, J = np.flatnonzero(~miss), np.flatnonzero(miss)  # noqa: E741
        if O.size == 0:
            continue
        inv = np.linalg.inv(S[np.ix_(O, O)])
        r = z[O] - m[O]
        beta = S[np.ix_(J, O)] @ inv
        filled = z.copy()
        filled[J] = m[J] + beta @ r
        A = S[np.ix_(J, J)] - beta @ S[np.ix_(O, J)]
        logdet = np.linalg.slogdet(S[np.ix_(O, O)])[1]
        quad = r @ inv @ r
        loglik -= 0.5 * (O.size * np.log(2 * np.pi) + logdet + quad)
        # log det L_JJ = log det S_OO - log det S (Schur complement).
        log_dets = abs(log_det_S) + abs(logdet - log_det_S)
        loglik_abs += 0.5 * (O.size * np.log(2 * np.pi) + log_dets + abs(quad))
        c = filled - m
        total += filled
        total_abs += np.abs(filled)
        scatter += np.outer(c, c)
        scatter_abs += np.abs(np.outer(c, c))
        cov[np.ix_(J, J)] += A
        cov_abs[np.ix_(J, J)] += np.abs(A)
    return (loglik, total, scatter, cov), (loglik_abs, total_abs, scatter_abs, cov_abs)


def _rows(n, d, p_missing, kappa, rng, n_patterns=None):
    S = _correlation(d, kappa, rng)
    m = rng.normal(size=d)
    Z = rng.multivariate_normal(m, S, size=n, method="cholesky")
    if n_patterns is None:
        missing = rng.random((n, d)) < p_missing
    else:  # few patterns, many rows each: the loop sorted by pattern
        pool = rng.random((n_patterns, d)) < p_missing
        missing = pool[rng.integers(n_patterns, size=n)]
    return Z, missing, m, S


CASES = {
    # name: (n, d, fraction missing, condition number, distinct patterns)
    "well_conditioned": (300, 10, 0.3, 10.0, None),
    "ill_conditioned": (300, 10, 0.3, 1e8, None),
    "ill_conditioned_90pct_missing": (300, 20, 0.9, 1e8, None),
    "few_patterns_sorted": (400, 10, 0.4, 1e8, 7),
    "one_row_per_pattern_20_features": (200, 20, 0.5, 1e6, None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_e_step_sums_match_a_per_row_reference(name):
    n, d, p, kappa, n_patterns = CASES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    Z, missing, m, S = _rows(n, d, p, kappa, rng, n_patterns)
    # Hard rows in every case: one with nothing missing, one with everything
    # missing (skipped), one with a single observed entry.
    missing[0] = False
    missing[1] = True
    missing[2] = True
    missing[2, 3] = False
    Z0 = np.where(missing, 0.0, Z)
    groups = pattern_groups(missing)
    # Both orders of the loop: rows in memory order (mostly one row per
    # pattern) and sorted by pattern (few patterns).
    if name.startswith("one_row_per_pattern"):
        assert groups.n_patterns > 0.9 * n
    if n_patterns is not None:
        assert 2 * groups.n_patterns <= n
    expected, magnitude = _reference(Z, missing, m, S)
    kappa_R = np.linalg.cond(S)
    tol = C * (d * U * kappa_R + n * U)
    got = _gaussian_e_step(Z0, groups, (m, S), True)
    batched = _gaussian_e_step_batched(Z0, groups, (m, S), True)
    for value, old, ref, size in zip(got, batched, expected, magnitude, strict=True):
        np.testing.assert_array_less(np.abs(value - ref), tol * size + 1e-300)
        # The numpy route of before computes the same precision: the two
        # differ by the k x k inverses and the order of the sums only.
        np.testing.assert_array_less(np.abs(value - old), tol * size + 1e-300)
    loglik_only = _gaussian_e_step(Z0, groups, (m, S), False)
    assert loglik_only == (got[0],)


def test_raw_blocks_give_the_standardised_sums():
    """The out-of-core route standardises inside the loop: same rows, same
    sums (up to the order of the additions)."""
    rng = np.random.default_rng(3)
    Z, missing, m, S = _rows(500, 8, 0.4, 1e3, rng)
    missing[5] = True  # dropped by both routes
    center = rng.normal(size=8)
    scale = rng.uniform(0.5, 3.0, size=8)
    X = np.where(missing, np.nan, center + scale * Z)
    used = ~missing.all(axis=1)
    Zs = (X[used] - center) / scale
    Z0 = np.where(missing[used], 0.0, Zs)
    in_memory = _gaussian_e_step(Z0, pattern_groups(missing[used]), (m, S), True)
    raw = _gaussian_block_e_step(X, center, scale, (m, S), True)
    for a, b in zip(raw, in_memory, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.max(np.abs(b)))


def test_singular_covariance_raises_as_before():
    """A singular covariance is the M-step's to catch: the E-step raises
    LinAlgError as ``condition_gaussian(..., logpdf=True)`` did."""
    from scipy import linalg

    rng = np.random.default_rng(4)
    Z, missing, m, S = _rows(50, 4, 0.3, 10.0, rng)
    S[3, :] = S[2, :]
    S[:, 3] = S[:, 2]
    groups = pattern_groups(missing)
    with pytest.raises(linalg.LinAlgError):
        _gaussian_e_step(np.where(missing, 0.0, Z), groups, (m, S), True)


def test_fallback_to_the_batched_route(monkeypatch):
    """When a pattern's block of the precision is not positive definite to
    working precision, both routes fall back to condition_gaussian's batched
    one, whose sums are the same to rounding."""
    import missingkernels.densities._gaussian_em as module

    rng = np.random.default_rng(5)
    Z, missing, m, S = _rows(300, 6, 0.3, 1e4, rng)
    missing[7] = True
    center, scale = np.zeros(6), np.ones(6)
    X = np.where(missing, np.nan, Z)
    used = ~missing.all(axis=1)
    groups = pattern_groups(missing[used])
    Z0 = np.where(missing[used], 0.0, Z[used])
    compiled = _gaussian_e_step(Z0, groups, (m, S), True)
    _, magnitude = _reference(Z, missing, m, S)
    tol = C * (6 * U * np.linalg.cond(S) + 300 * U)
    monkeypatch.setattr(module, "_compiled_sums", lambda *args: None)
    for fallback in (
        _gaussian_e_step(Z0, groups, (m, S), True),
        _gaussian_block_e_step(X, center, scale, (m, S), True),
    ):
        for a, b, size in zip(fallback, compiled, magnitude, strict=True):
            np.testing.assert_array_less(np.abs(a - b), tol * size + 1e-300)


@pytest.mark.parametrize("d", [1, 7, 8, 9, 20, 63, 64, 65, 100])
def test_group_patterns_integer_keys_sort_as_byte_strings(d):
    """Up to 64 features the patterns are sorted as 64-bit integers: the same
    patterns, order and index as the byte-string keys beyond."""
    from missingkernels._missing_patterns import group_patterns

    rng = np.random.default_rng(d)
    missing = rng.random((2000, d)) < rng.choice([0.05, 0.3, 0.9])
    packed = np.ascontiguousarray(np.packbits(missing, axis=1))
    keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    unique, index = np.unique(keys, return_inverse=True)
    expected = np.unpackbits(
        unique.view(np.uint8).reshape(-1, packed.shape[1]), axis=1, count=d
    ).astype(bool)
    patterns, pattern_index = group_patterns(missing)
    np.testing.assert_array_equal(patterns, expected)
    np.testing.assert_array_equal(pattern_index, index.reshape(-1))
    assert pattern_index.dtype == np.intp
