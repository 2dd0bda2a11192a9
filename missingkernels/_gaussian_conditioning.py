"""Conditioning a multivariate normal on the observed entries of each row.

The one routine behind :meth:`GaussianConditionals.from_moments` and the
E-steps of the Gaussian EM densities: shared by two subpackages, it lives at
the root of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from ._missing_patterns import PatternGroups

__all__ = ["ConditionedGaussian", "condition_gaussian"]

_LOG_2PI = float(np.log(2.0 * np.pi))
# The precision path's conditional means and blocks carry a relative error of
# about d u kappa(R) (u the unit roundoff, R the correlation matrix): past this
# bound they keep fewer than three correct digits, and per-pattern Schur
# complements, whose error grows only with the observed blocks' conditioning,
# are used instead.
_PRECISION_PATH_ERROR = 1e-3
_UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2
# Rows conditioned at once (bounds the (rows, k, k) gathers).
_CHUNK_ROWS = 8192


@dataclass(frozen=True, eq=False)
class ConditionedGaussian:
    """What :func:`condition_gaussian` returns.

    Attributes
    ----------
    means : ndarray of shape (n_samples, n_features) or None
        The rows with missing entries replaced by their conditional means
        (None when not asked for).
    blocks : list of ndarray
        Per group of ``PatternGroups.groups``, the conditional covariances of
        its patterns, shape ``(P_k, k, k)``; ``PatternGroups.per_pattern``
        lists them per pattern.
    logpdf : ndarray of shape (n_samples,) or None
        ``log N(x_O; m_O, S_OO)`` of each row, 0 for a row with no observed
        entry (None when not asked for).
    """

    means: np.ndarray | None
    blocks: list[np.ndarray]
    logpdf: np.ndarray | None


def condition_gaussian(
    X: np.ndarray,
    groups: PatternGroups,
    mean: np.ndarray,
    covariance: np.ndarray,
    *,
    fill: bool = True,
    logpdf: bool = False,
) -> ConditionedGaussian:
    """Condition ``N(mean, covariance)`` on the observed entries of every row.

    Works through the precision ``L = R^-1`` of the correlation matrix ``R``
    of ``covariance`` (features of very different scales stay well
    conditioned): in standardised units the missing block ``J`` of a row is
    ``N(m_J - L_JJ^-1 L_JO r_O, L_JJ^-1)``, one small inverse per pattern,
    batched over the patterns with the same number of missing features,
    instead of a factorisation of ``S_OO`` per pattern. When ``covariance``
    is singular, falls back to Schur complements pattern by pattern.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Rows; only the entries observed according to ``groups.missing`` are
        read.
    groups : PatternGroups
        ``pattern_groups(missing)`` of the rows.
    mean : ndarray of shape (n_features,)
    covariance : ndarray of shape (n_features, n_features)
    fill : bool, default=True
        Return the rows filled with their conditional means.
    logpdf : bool, default=False
        Return the log-density of each row's observed entries. Needs a
        positive definite ``covariance``: a singular one raises
        ``scipy.linalg.LinAlgError`` instead of falling back.

    Returns
    -------
    conditioned : ConditionedGaussian
    """
    try:
        return _condition_by_precision(
            X, groups, mean, covariance, fill, logpdf, check_conditioning=not logpdf
        )
    except linalg.LinAlgError:
        if logpdf:
            raise
        return _condition_by_schur(X, groups, mean, covariance, fill)


def _condition_by_precision(
    X: np.ndarray,
    groups: PatternGroups,
    mean: np.ndarray,
    covariance: np.ndarray,
    fill: bool,
    logpdf: bool,
    check_conditioning: bool = True,
) -> ConditionedGaussian:
    """Batched conditioning through the precision of the correlation matrix.

    Raises LinAlgError when the covariance is singular and, with
    ``check_conditioning``, when it is so ill-conditioned that the precision
    keeps fewer than three correct digits: a singular covariance that
    rounding leaves positive definite (a total column beside its parts) passes
    Cholesky on some BLAS kernels and not on others, and its precision gave
    conditional means wrong by O(1).
    """
    scale = np.sqrt(np.diag(covariance))
    if not np.all(scale > 0):
        raise linalg.LinAlgError("a feature has zero variance")
    R = covariance / np.outer(scale, scale)
    chol = linalg.cholesky(R, lower=True, check_finite=False)
    if check_conditioning:
        # LAPACK's estimate of 1 / kappa_1(R) from the factor, O(d^2).
        rcond, _ = linalg.lapack.dpocon(chol, np.abs(R).sum(axis=0).max(), uplo="L")
        if len(R) * _UNIT_ROUNDOFF > _PRECISION_PATH_ERROR * rcond:
            raise linalg.LinAlgError("ill-conditioned covariance")
    precision = linalg.cho_solve((chol, True), np.eye(len(R)), check_finite=False)
    precision = 0.5 * (precision + precision.T)
    missing = groups.missing
    Z = np.where(missing, 0.0, (X - mean) / scale)
    G = Z @ precision  # G[i, J] = L_JO r_O since r is zero on J
    means = X.copy() if fill else None
    if logpdf:
        quad = np.einsum("ij,ij->i", G, Z)
        # log |S_OO| = log |R| + log |L_JJ| + 2 sum_O log s (L_JJ^-1 is the
        # Schur complement of R_OO in R).
        log_det = 2.0 * float(np.sum(np.log(np.diag(chol))))
        logdet = log_det + (~missing) @ (2.0 * np.log(scale))
    blocks = []
    for g in groups.groups:
        J = g.missing_idx
        precision_JJ = precision[J[:, :, None], J[:, None, :]]
        inv = np.linalg.inv(precision_JJ)
        inv = 0.5 * (inv + np.swapaxes(inv, 1, 2))
        sJ = scale[J]
        blocks.append(inv * (sJ[:, :, None] * sJ[:, None, :]))
        if logpdf:
            logdet[g.rows] += np.linalg.slogdet(precision_JJ)[1][g.pattern_of_row]
        for start in range(0, g.rows.size, _CHUNK_ROWS):
            rows = g.rows[start : start + _CHUNK_ROWS]
            pat = g.pattern_of_row[start : start + _CHUNK_ROWS]
            idx = J[pat]
            gJ = G[rows[:, None], idx]
            delta = -np.einsum("nij,nj->ni", inv[pat], gJ)
            if logpdf:
                # The conditional mean minimises the quadratic form over z_J:
                # r_O' R_OO^-1 r_O = r0' L r0 - g_J' L_JJ^-1 g_J.
                quad[rows] += np.einsum("ni,ni->n", gJ, delta)
            if means is not None:
                means[rows[:, None], idx] = mean[idx] + delta * scale[idx]
    log_density = None
    if logpdf:
        n_obs = missing.shape[1] - missing.sum(axis=1)
        log_density = -0.5 * (n_obs * _LOG_2PI + logdet + quad)
        # A fully missing row: log |S_OO| = 0, up to rounding here.
        log_density[n_obs == 0] = 0.0
    return ConditionedGaussian(means, blocks, log_density)


def _condition_by_schur(
    X: np.ndarray,
    groups: PatternGroups,
    mean: np.ndarray,
    covariance: np.ndarray,
    fill: bool = True,
) -> ConditionedGaussian:
    """Pattern-by-pattern Schur complements; works for singular covariances."""
    means = X.copy()
    blocks = []
    for g in groups.groups:
        k = g.missing_idx.shape[1]
        stack = np.empty((len(g.patterns), k, k))
        for q, J in enumerate(g.missing_idx):
            rows = g.rows[g.pattern_of_row == q]
            O = np.flatnonzero(~groups.patterns[g.patterns[q]])  # noqa: E741
            if O.size == 0:
                means[np.ix_(rows, J)] = mean[J]
                stack[q] = covariance[np.ix_(J, J)]
                continue
            S_OO = covariance[np.ix_(O, O)]
            S_OJ = covariance[np.ix_(O, J)]
            try:
                factor = linalg.cho_factor(S_OO, lower=True, check_finite=False)
                coef = linalg.cho_solve(factor, S_OJ, check_finite=False)
            except linalg.LinAlgError:
                # Singular observed block: the minimum-norm solution keeps the
                # conditional well defined on the span of the data.
                coef = linalg.lstsq(S_OO, S_OJ, check_finite=False)[0]
            resid = X[np.ix_(rows, O)] - mean[O]
            means[np.ix_(rows, J)] = mean[J] + resid @ coef
            C = covariance[np.ix_(J, J)] - S_OJ.T @ coef
            stack[q] = 0.5 * (C + C.T)
        blocks.append(stack)
    return ConditionedGaussian(means if fill else None, blocks, None)
