"""Maximum-likelihood multivariate normal from incomplete rows, by EM."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from .._sklearn_compat import Interval
from ..conditionals import GaussianConditionals, group_patterns
from ._base import BaseDensity

__all__ = ["GaussianEMDensity", "SingularCovarianceWarning"]

_LOG_2PI = float(np.log(2.0 * np.pi))
# Relative eigenvalue floor below which the (standardised) covariance is
# treated as singular: beyond this the conditionals lose most of their digits.
_SINGULAR_RCOND = 1e-12
# Ridge used, with a warning, when the covariance is singular and ridge=0.
_AUTO_RIDGE = 1e-6
# Rows processed at once in the E-step (bounds the (rows, k, k) gathers).
_CHUNK = 8192


class SingularCovarianceWarning(UserWarning):
    """Warned when a fitted covariance is singular and a ridge had to be added."""


class _SingularCovarianceError(ArithmeticError):
    """Internal: the M-step produced a singular covariance."""


@dataclass
class _PatternGroup:
    """Rows whose pattern has ``k`` missing features (k >= 1, k < d)."""

    rows: np.ndarray  # (n_k,) row indices into the used rows
    pattern_of_row: np.ndarray  # (n_k,) index into missing_idx
    missing_idx: np.ndarray  # (P_k, k) missing feature indices of each pattern
    counts: np.ndarray  # (P_k,) rows per pattern


def _pattern_groups(missing: np.ndarray) -> tuple[int, list[_PatternGroup]]:
    """Group rows by pattern, then patterns by their number of missing features."""
    patterns, index = group_patterns(missing)
    n_missing = patterns.sum(axis=1)
    groups = []
    for k in np.unique(n_missing):
        if k == 0:
            continue
        pats = np.flatnonzero(n_missing == k)
        local = np.full(len(patterns), -1, dtype=np.intp)
        local[pats] = np.arange(len(pats))
        rows = np.flatnonzero(local[index] >= 0)
        # np.nonzero on a boolean matrix returns column indices row by row,
        # so each pattern's k missing indices come out sorted and contiguous.
        missing_idx = np.nonzero(patterns[pats])[1].reshape(len(pats), int(k))
        groups.append(
            _PatternGroup(
                rows=rows,
                pattern_of_row=local[index[rows]],
                missing_idx=missing_idx,
                counts=np.bincount(local[index[rows]], minlength=len(pats)),
            )
        )
    return len(patterns), groups


class GaussianEMDensity(BaseDensity):
    """Multivariate normal fitted to incomplete rows by maximum likelihood (EM).

    The expectation-maximisation algorithm of Dempster, Laird & Rubin (1977)
    for the mean and covariance of a multivariate normal when entries are
    missing at random, as in R's ``norm::em.norm`` (Schafer, 1997). Rows are
    grouped by missing pattern and the E-step works through the precision
    matrix: with ``L = S^-1`` the conditional of the missing block ``J`` given
    the observed block is ``N(m_J - L_JJ^-1 L_JO (x_O - m_O), L_JJ^-1)``, so
    each iteration costs ``O(n d^2 + sum_p |J_p|^3)`` for the distinct patterns
    ``p``, and never inverts a matrix per row.

    Rows with every feature missing contribute nothing to the likelihood and
    are ignored when fitting; :meth:`conditionals` still returns the marginal
    ``N(mean_, covariance_)`` for them.

    Parameters
    ----------
    max_iter : int, default=500
        Maximum number of EM iterations.
    tol : float, default=1e-5
        Convergence threshold on the largest change of a parameter between
        two iterations, measured in units of each feature's observed standard
        deviation (mean entries) or variance (covariance entries); like the
        relative criterion of ``norm::em.norm``, but well defined at zero.
    ridge : float, default=0.0
        Covariance floor: the M-step returns ``S_ML + ridge * D`` where ``D``
        is the diagonal matrix of the observed variances of the features
        (divisor = number of observed entries). This is the exact EM for the
        penalised log-likelihood ``loglik(m, S) - n/2 * ridge * tr(D S^-1)``
        (a MAP estimate under an improper inverse-Wishart-type prior with
        scale ``n * ridge * D``), with ``n`` the number of rows having at least
        one observed entry. Use it when ``n`` is close to ``d`` or features
        are collinear. With ``ridge=0`` and a singular covariance the fit is
        restarted with ``ridge=1e-6`` and a :class:`SingularCovarianceWarning`
        is issued (a feature constant on its observed entries makes it
        singular from the start, so that fit starts with ``ridge=1e-6``
        directly); the ridge actually used is ``ridge_``.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Estimated mean.
    covariance_ : ndarray of shape (n_features, n_features)
        Estimated covariance (maximum likelihood, divisor n).
    n_iter_ : int
        Number of EM iterations run.
    converged_ : bool
        Whether ``tol`` was reached within ``max_iter`` iterations.
    loglik_trace_ : ndarray of shape (n_iter_ + 1,)
        Observed-data log-likelihood (minus the ridge penalty when
        ``ridge_ > 0``) at the starting point and after each iteration;
        EM guarantees it never decreases.
    loglik_ : float
        ``loglik_trace_[-1]``, the objective at the returned estimate.
    ridge_ : float
        The ridge used (``ridge``, or ``1e-6`` after a singularity warning).
    n_patterns_ : int
        Number of distinct missing patterns among the training rows.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    GaussianMixtureDensity : K Gaussian components fitted the same way.

    References
    ----------
    .. [1] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood
       from incomplete data via the EM algorithm", J. R. Stat. Soc. B 39(1),
       1-38, 1977.
    .. [2] J. L. Schafer, "Analysis of Incomplete Multivariate Data", Chapman
       & Hall, 1997, ch. 5 (the algorithm of R package ``norm``).
    .. [3] R. J. A. Little and D. B. Rubin, "Statistical Analysis with Missing
       Data", 2nd ed., Wiley, 2002, sec. 11.2.
    .. [4] M. Smieja, L. Struski, J. Tabor and M. Marzec, "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173, 150-162,
       2019 (the default density of the genRBF kernel).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.densities import GaussianEMDensity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.multivariate_normal([0, 1], [[1, 0.8], [0.8, 1]], size=200)
    >>> X[rng.random(200) < 0.3, 1] = np.nan
    >>> density = GaussianEMDensity().fit(X)
    >>> bool(density.converged_), density.mean_.shape
    (True, (2,))
    >>> cond = density.conditionals(np.array([[1.0, np.nan]]))
    >>> cond.covariances[0].shape
    (1, 1)
    """

    representation: ClassVar[str] = "gaussian"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "ridge": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, max_iter: int = 500, tol: float = 1e-5, ridge: float = 0.0):
        self.max_iter = max_iter
        self.tol = tol
        self.ridge = ridge

    # -- fitting ---------------------------------------------------------
    def _fit(self, X: np.ndarray) -> None:
        missing = np.isnan(X)
        used = ~missing.all(axis=1)
        n_used = int(used.sum())
        if n_used < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 rows with an observed "
                f"entry; got {n_used} (rows with every feature missing carry no "
                "information)."
            )
        Xu = X[used]
        # Work on features standardised by their observed moments: the
        # tolerance and the ridge are then scale free and the linear algebra
        # well conditioned.
        center = np.nanmean(Xu, axis=0)
        scale = np.nanstd(Xu, axis=0)
        scale[~(scale > 0)] = 1.0
        Z = (Xu - center) / scale
        mask = np.isnan(Z)
        n_patterns, groups = _pattern_groups(mask)
        # Jacobian of the standardisation, to report the log-likelihood of X.
        log_jacobian = float(np.sum((~mask) * np.log(scale)))

        ridge = _starting_ridge(self, Xu)
        try:
            result = self._em(Z, mask, groups, ridge)
        except _SingularCovarianceError as exc:
            if ridge > 0:
                raise ValueError(
                    f"{type(self).__name__}: the covariance is singular even with "
                    f"ridge={ridge:g} ({exc}). Increase ridge (e.g. 1e-3) or drop "
                    "collinear or constant features."
                ) from None
            ridge = _AUTO_RIDGE
            _warn_auto_ridge(self, f"{exc} The fit was restarted.")
            result = self._em(Z, mask, groups, ridge)
        m, S, trace, n_iter, converged = result
        if not converged:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter="
                f"{self.max_iter} iterations (largest parameter change still "
                f"above tol={self.tol:g}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.mean_ = center + scale * m
        self.covariance_ = S * np.outer(scale, scale)
        self.loglik_trace_ = np.asarray(trace) - log_jacobian
        self.loglik_ = float(self.loglik_trace_[-1])
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.ridge_ = ridge
        self.n_patterns_ = n_patterns

    def _em(
        self,
        Z: np.ndarray,
        mask: np.ndarray,
        groups: list[_PatternGroup],
        ridge: float,
    ) -> tuple[np.ndarray, np.ndarray, list[float], int, bool]:
        n, d = Z.shape
        Z0 = np.where(mask, 0.0, Z)
        # Start: observed means and variances, no correlation (standardised).
        m = np.zeros(d)
        S = np.eye(d)
        trace: list[float] = []
        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            Zhat, logpdf, inv_list = _condition(Z0, mask, m, S, groups)
            assert Zhat is not None
            cov_sum = _pattern_cov_sum(groups, inv_list, d)
            trace.append(float(logpdf.sum()) - _penalty(S, n, ridge))
            m_new = Zhat.mean(axis=0)
            centred = Zhat - m_new
            S_new = (centred.T @ centred + cov_sum) / n
            S_new = 0.5 * (S_new + S_new.T)
            if ridge > 0:
                S_new[np.diag_indices(d)] += ridge
            _check_singular(S_new, n_iter)
            change = max(np.max(np.abs(m_new - m)), np.max(np.abs(S_new - S)))
            m, S = m_new, S_new
            if change <= self.tol:
                converged = True
                break
        logpdf = _condition(Z0, mask, m, S, groups, fill=False)[1]
        trace.append(float(logpdf.sum()) - _penalty(S, n, ridge))
        return m, S, trace, n_iter, converged

    # -- conditionals ------------------------------------------------------
    def _conditionals(self, X: np.ndarray) -> GaussianConditionals:
        return GaussianConditionals.from_moments(X, self.mean_, self.covariance_)


def _starting_ridge(density: Any, X: np.ndarray) -> float:
    """``density.ridge``, or the automatic ridge when it is 0 and a feature of
    ``X`` takes a single value on its observed entries.

    Such a feature makes the ML covariance singular for certain: starting with
    the ridge avoids finding out tens of EM iterations in and restarting (the
    restart gives the same fit).
    """
    ridge = float(density.ridge)
    constant = np.flatnonzero(~(np.nanstd(X, axis=0) > 0))
    if ridge == 0 and constant.size:
        ridge = _AUTO_RIDGE
        _warn_auto_ridge(
            density,
            f"feature(s) {constant.tolist()} take a single value on their "
            "observed entries, so the covariance is singular.",
            stacklevel=5,
        )
    return ridge


def _warn_auto_ridge(density: Any, reason: str, stacklevel: int = 4) -> None:
    """Warn that the automatic ridge was used; ``stacklevel`` counts from here
    (4: called from ``_fit``, under ``fit``)."""
    warnings.warn(
        f"{type(density).__name__}: {reason} Fitted with ridge={_AUTO_RIDGE:g}; "
        "set ridge explicitly (e.g. 1e-3) to choose the regularisation, or "
        "drop collinear or constant features.",
        SingularCovarianceWarning,
        stacklevel=stacklevel,
    )


def _penalty(S: np.ndarray, n: int, ridge: float) -> float:
    """The ridge penalty ``n/2 * ridge * tr(S^-1)`` (standardised scale)."""
    if ridge == 0:
        return 0.0
    factor = linalg.cho_factor(S, lower=True, check_finite=False)
    return 0.5 * n * ridge * float(np.trace(linalg.cho_solve(factor, np.eye(len(S)))))


def _check_singular(S: np.ndarray, iteration: int) -> None:
    eig = np.linalg.eigvalsh(S)
    if not eig[0] > _SINGULAR_RCOND * max(eig[-1], 0.0):
        raise _SingularCovarianceError(
            f"the covariance became singular at EM iteration {iteration} "
            f"(smallest/largest eigenvalue {eig[0] / eig[-1]:.1e}, in units of "
            "the observed variances): features are collinear or constant, or "
            "there are about as few rows as features."
        )


def _condition(
    Z0: np.ndarray,
    mask: np.ndarray,
    m: np.ndarray,
    S: np.ndarray,
    groups: list[_PatternGroup],
    fill: bool = True,
) -> tuple[np.ndarray | None, np.ndarray, list[np.ndarray]]:
    """Condition ``N(m, S)`` on the observed entries of every row.

    ``Z0`` holds the observed entries, zero where missing (``mask``); rows
    may be entirely missing. Works through the precision ``L = S^-1``: the
    missing block ``J`` of a row is ``N(m_J - L_JJ^-1 L_JO r_O, L_JJ^-1)``.

    Returns
    -------
    filled : ndarray of shape (n, d) or None
        Rows with missing entries replaced by their conditional means
        (None when ``fill=False``).
    logpdf : ndarray of shape (n,)
        ``log N(x_O; m_O, S_OO)`` of each row (0 for an empty ``O``).
    inv_blocks : list of ndarray
        Per group, the conditional covariances ``L_JJ^-1`` of its patterns.
    """
    n, d = Z0.shape
    chol = linalg.cholesky(S, lower=True, check_finite=False)
    precision = linalg.cho_solve((chol, True), np.eye(d), check_finite=False)
    precision = 0.5 * (precision + precision.T)
    logdet_S = 2.0 * float(np.sum(np.log(np.diag(chol))))
    # Residuals, zero on missing entries, so that G[i, J] = L_JO (x_O - m_O).
    resid = np.where(mask, 0.0, Z0 - m)
    G = resid @ precision
    quad = np.einsum("ij,ij->i", G, resid)
    logdet = np.full(n, logdet_S)
    inv_list = []
    for g in groups:
        J = g.missing_idx
        blocks = precision[J[:, :, None], J[:, None, :]]
        # log |S_OO| = log |S| + log |L_JJ| (Schur complement of the precision).
        logdet_blocks = np.linalg.slogdet(blocks)[1]
        inv_blocks = np.linalg.inv(blocks)
        inv_blocks = 0.5 * (inv_blocks + np.swapaxes(inv_blocks, 1, 2))
        inv_list.append(inv_blocks)
        logdet[g.rows] += logdet_blocks[g.pattern_of_row]
        for start in range(0, len(g.rows), _CHUNK):
            rows = g.rows[start : start + _CHUNK]
            pat = g.pattern_of_row[start : start + _CHUNK]
            idx = J[pat]
            gJ = G[rows[:, None], idx]
            delta = -np.einsum("nij,nj->ni", inv_blocks[pat], gJ)
            # The conditional mean minimises the quadratic form over x_J:
            # r_O' S_OO^-1 r_O = r0' L r0 - g_J' L_JJ^-1 g_J.
            quad[rows] += np.einsum("ni,ni->n", gJ, delta)
            if fill:
                resid[rows[:, None], idx] = delta
    n_obs = d - mask.sum(axis=1)
    logpdf = -0.5 * (n_obs * _LOG_2PI + logdet + quad)
    # A fully missing row has log |S_OO| = log |S| + log |L| = 0 up to rounding.
    logpdf[n_obs == 0] = 0.0
    return (resid + m if fill else None), logpdf, inv_list


def _pattern_cov_sum(
    groups: list[_PatternGroup],
    inv_list: list[np.ndarray],
    d: int,
    row_weights: np.ndarray | None = None,
) -> np.ndarray:
    """Sum over rows of ``w_i A_i`` (conditional covariances embedded in d x d)."""
    cov_flat = np.zeros(d * d)
    for g, inv_blocks in zip(groups, inv_list, strict=True):
        J = g.missing_idx
        if row_weights is None:
            weights = g.counts.astype(float)
        else:
            weights = np.bincount(
                g.pattern_of_row, weights=row_weights[g.rows], minlength=len(J)
            )
        flat = (J[:, :, None] * d + J[:, None, :]).reshape(-1)
        values = (weights[:, None, None] * inv_blocks).reshape(-1)
        cov_flat += np.bincount(flat, weights=values, minlength=d * d)
    return cov_flat.reshape(d, d)
