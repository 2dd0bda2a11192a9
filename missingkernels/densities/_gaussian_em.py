"""Multivariate normal from incomplete rows, by (MAP-)EM."""

from __future__ import annotations

import functools
import importlib
from numbers import Integral, Real
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from scipy import linalg

from .._gaussian_conditioning import condition_gaussian
from .._missing_patterns import PatternGroups, group_patterns, pattern_groups
from .._numba_notice import notice_if_compiling
from .._sklearn_compat import Interval, StrOptions
from ..conditionals import GaussianConditionals
from ._base_em import (
    Params,
    SingularCovarianceWarning,
    _BaseEMDensity,
    _check_singular,
    _EMData,
    _pattern_cov_sum,
    _recentre,
    _standardised_sums,
)
from ._prior import DEFAULT_PRIOR_ROWS

__all__ = ["GaussianEMDensity", "SingularCovarianceWarning"]

_LOG_2PI = float(np.log(2.0 * np.pi))


@functools.cache
def _loops() -> ModuleType:
    """The compiled E-step loop, imported (and numba loaded) on first use."""
    module = importlib.import_module(f"{__package__}._gaussian_em_compiled")
    notice_if_compiling(module, "the Gaussian EM's E-step loop", seconds=5)
    return module


def _row_order(pattern_index: np.ndarray, n_patterns: int) -> np.ndarray:
    """The order of the E-step's loop: sorted by pattern (one factorisation
    per pattern), unless most rows have a pattern of their own, when memory
    order reads the rows faster and factorises about as often."""
    if 2 * n_patterns > len(pattern_index):
        return np.arange(len(pattern_index))
    return np.argsort(pattern_index, kind="stable")


def _compiled_sums(
    X: np.ndarray,
    missing: np.ndarray,
    pattern_index: np.ndarray,
    n_patterns: int,
    center: np.ndarray,
    scale: np.ndarray,
    params: Params,
    fill: bool,
) -> tuple[Any, ...] | None:
    """The sums of :func:`_gaussian_e_step` over the rows ``(X - center) /
    scale`` with an observed entry, by the compiled loop; None when a
    pattern's block of the precision is not positive definite to working
    precision (never for the covariances the M-step accepts)."""
    m, S = params
    d = X.shape[1]
    sd = np.sqrt(np.diag(S))
    if not np.all(sd > 0):
        raise linalg.LinAlgError("a feature has zero variance")
    # Through the correlation matrix, as condition_gaussian: a singular one
    # raises LinAlgError, as condition_gaussian does for log-densities.
    chol = linalg.cholesky(S / np.outer(sd, sd), lower=True, check_finite=False)
    precision = linalg.cho_solve((chol, True), np.eye(d), check_finite=False)
    precision = np.ascontiguousarray(0.5 * (precision + precision.T))
    out = np.zeros(2)
    total = np.zeros(d)
    scatter = np.zeros((d, d))
    cov_sum = np.zeros((d, d))
    failed = _loops().e_step_sums(
        X,
        missing,
        _row_order(pattern_index, n_patterns),
        pattern_index,
        center,
        scale,
        m,
        sd,
        precision,
        fill,
        out,
        total,
        scatter,
        cov_sum,
    )
    if failed >= 0:
        return None
    # The terms common to the rows: log |S_OO| = log |R| + log |L_JJ| +
    # 2 sum_O log sd (L_JJ^-1 is the Schur complement of R_OO in R).
    n_observed = float(np.count_nonzero(~missing))
    log_det_R = 2.0 * float(np.sum(np.log(np.diag(chol))))
    loglik = float(out[0]) - 0.5 * (n_observed * _LOG_2PI + out[1] * log_det_R)
    if not fill:
        return (loglik,)
    scatter = np.tril(scatter) + np.tril(scatter, -1).T
    return loglik, total, scatter, cov_sum


def _gaussian_e_step(
    Z0: np.ndarray, groups: PatternGroups, params: Params, fill: bool
) -> tuple[Any, ...]:
    """The E-step's sums over the rows ``Z0`` (those with an observed entry;
    the others are skipped): the log-likelihood, then (when ``fill``) the
    conditional means' sum, their scatter about the current mean and the
    summed conditional covariances.

    The conditioning of :func:`condition_gaussian` (through the precision of
    the correlation matrix) in one compiled loop over the rows: one
    factorisation per distinct pattern, ``O(d^2)`` per row, no temporaries
    of the rows' size. Falls back to :func:`condition_gaussian`'s batched
    route when a pattern's block of the precision is not positive definite to
    working precision.
    """
    d = Z0.shape[1]
    sums = _compiled_sums(
        Z0,
        groups.missing,
        groups.pattern_index,
        groups.n_patterns,
        np.zeros(d),
        np.ones(d),
        params,
        fill,
    )
    if sums is None:
        return _gaussian_e_step_batched(Z0, groups, params, fill)
    return sums


def _gaussian_block_e_step(
    block: np.ndarray,
    center: np.ndarray,
    scale: np.ndarray,
    params: Params,
    fill: bool,
) -> tuple[Any, ...]:
    """:func:`_gaussian_e_step` on a raw row block of a dask array: the rows
    standardised by ``center`` and ``scale`` inside the compiled loop, rows
    with no observed entry skipped, as the in-memory fit drops them."""
    block = np.asarray(block, dtype=np.float64)
    missing = np.isnan(block)
    patterns, pattern_index = group_patterns(missing)
    sums = _compiled_sums(
        block, missing, pattern_index, len(patterns), center, scale, params, fill
    )
    if sums is None:
        return _standardised_sums(
            block, center, scale, _gaussian_e_step_batched, params, fill
        )
    return sums


def _gaussian_e_step_batched(
    Z0: np.ndarray, groups: PatternGroups, params: Params, fill: bool
) -> tuple[Any, ...]:
    """:func:`_gaussian_e_step` through :func:`condition_gaussian`'s batched
    numpy route (whose per-pattern inverses do not need positive definite
    blocks)."""
    m, S = params
    keep = ~groups.missing.all(axis=1)
    if not keep.all():
        Z0, groups = Z0[keep], pattern_groups(groups.missing[keep])
    cond = condition_gaussian(Z0, groups, m, S, fill=fill, logpdf=True)
    assert cond.logpdf is not None
    loglik = float(cond.logpdf.sum())
    if not fill:
        return (loglik,)
    assert cond.means is not None
    centred = cond.means - m
    cov_sum = _pattern_cov_sum(groups, cond.blocks, Z0.shape[1])
    return loglik, cond.means.sum(axis=0), centred.T @ centred, cov_sum


class GaussianEMDensity(_BaseEMDensity):
    """Multivariate normal fitted to incomplete rows by EM, with a prior.

    The expectation-maximisation algorithm of Dempster, Laird & Rubin (1977)
    for the mean and covariance of a multivariate normal when entries are
    missing at random, as in R's ``norm::em.norm`` (Schafer, 1997). By
    default it is MAP-EM under a conjugate prior on the covariance worth
    ``prior_rows`` rows of data (see ``prior_rows``): with many entries
    missing and few rows, the maximum-likelihood covariance is nearly
    singular (condition numbers of 1e5-1e11 where the truth's is 15), and the
    kernels built on it overconfident. ``prior_rows=0`` gives the maximum
    likelihood fit. Rows are
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
        Maximum number of EM steps (each one pass over the rows, whatever the
        ``acceleration``).
    tol : float, default=1e-5
        Convergence threshold on the largest change of a parameter in one EM
        step, measured in units of each feature's observed standard
        deviation (mean entries) or variance (covariance entries); like the
        relative criterion of ``norm::em.norm``, but well defined at zero.
        It bounds what the kernels are computed from (the mean and
        covariance) directly. Near a fixed point where EM contracts at rate
        ``rho``, the returned estimate is within about
        ``tol * rho / (1 - rho)`` of it, so slowly converging fits (``rho``
        near 1) benefit most from ``acceleration="squarem"``, whose
        stopping point is the same plain EM step criterion.
    tol_loglik : float or None, default=None
        When set, also stop when the objective changes by at most
        ``tol_loglik * |objective|`` between two accepted iterates. The
        objective is that of the standardised rows (``loglik_trace_`` plus
        the log-Jacobian of the standardisation), so the criterion does not
        depend on the units of ``X``. Off by default: a small change of the
        log-likelihood does not bound the change of the parameters (what the
        kernels use) in directions where it is flat, which are those where
        EM is slow.
    acceleration : {"squarem", "none"}, default="squarem"
        ``"squarem"``: the SQUAREM extrapolation of Varadhan & Roland
        (2008, scheme S3, step length ``-||r|| / ||v||`` kept at most -1,
        each extrapolation followed by a stabilising EM step; an
        extrapolation that makes the covariance non positive definite or
        lowers the objective falls back to the plain EM step). It reaches
        the same fixed point as plain EM in several times fewer EM steps
        when EM is slow (much missing information). ``"none"``: plain EM.
    ridge : float, default=0.0
        Covariance floor: adds ``ridge * D`` to the M-step's covariance,
        where ``D`` is the diagonal matrix of the observed variances of the
        features (divisor = number of observed entries): with
        ``prior_rows=0`` the M-step returns ``S_ML + ridge * D``. It is the
        scale-only case of the prior below (a penalty
        ``- n/2 * ridge * tr(D S^-1)`` without the log-determinant term),
        kept for the fits and results computed with it; ``prior_rows`` is the
        better default. With ``prior_rows=0``, ``ridge=0`` and a singular
        covariance the fit is restarted with ``ridge=1e-6`` and a
        :class:`SingularCovarianceWarning` is issued (a feature constant on
        its observed entries makes it singular from the start, so that fit
        starts with ``ridge=1e-6`` directly); the ridge actually used is
        ``ridge_``.
    prior_rows : float or "auto", default="auto"
        Strength of the prior on the covariance, in pseudo-rows (as the
        ``empri`` of R's Amelia): the log prior
        ``-prior_rows/2 * (log det S + tr(D S^-1))`` is that of
        ``prior_rows`` rows whose scatter is ``D``, the diagonal of the
        observed variances (an inverse-Wishart with ``prior_rows - d - 1``
        degrees of freedom and scale ``prior_rows * D``; flat on the mean).
        The M-step returns ``(A + prior_rows * D) / (n + prior_rows)`` with
        ``A`` the expected scatter of the ``n`` rows: correlations shrink
        towards 0 and the variances stay, by the weight
        ``prior_rows / (n + prior_rows)``, which vanishes as ``n`` grows.
        The covariance is then never singular. ``"auto"``:
        ``max(10, n_features)``, chosen by simulation
        (``benchmarks/bench_prior.py``: n 30-2000, d 2-40, 10-80% MCAR and
        MAR; ``benchmarks/results_bench_prior.md``): against the
        maximum-likelihood fit it keeps the KL divergence to the truth and
        the condition number near the truth's where many entries are
        missing (ML: condition numbers up to 1e11 where the truth's is 15),
        costs nothing measurable at large ``n``, and needs fewer EM steps;
        10 did best up to 8 features, 30 better than 10 at 40 features.
        ``prior_rows=0``: maximum likelihood (the papers' protocol).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Estimated mean.
    covariance_ : ndarray of shape (n_features, n_features)
        Estimated covariance (posterior mode; with ``prior_rows=0`` and
        ``ridge=0`` maximum likelihood, divisor n).
    n_iter_ : int
        Number of EM steps run (passes over the rows; with SQUAREM a cycle
        is up to three steps).
    converged_ : bool
        Whether the stopping criterion was met within ``max_iter`` steps. A
        fit that stops at ``max_iter`` warns (``ConvergenceWarning``) naming
        the features whose parameters still moved most.
    loglik_trace_ : ndarray of shape (n_accepted + 1,)
        The objective EM maximises, the observed-data log-likelihood plus the
        log prior (up to a constant; with ``prior_rows=0`` minus the ridge
        penalty, and with no ridge the log-likelihood itself), at the
        starting point and at each accepted iterate (with
        ``acceleration="none"`` every EM step, so ``n_iter_ + 1`` values;
        with SQUAREM one per cycle plus the final estimate). It never
        decreases: EM guarantees it and SQUAREM only accepts iterates that
        keep it. The convergence tests use it.
    loglik_ : float
        The observed-data log-likelihood at the returned estimate (without
        the prior: ``loglik_trace_[-1]`` when there is none).
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
    .. [5] R. Varadhan and C. Roland, "Simple and globally convergent
       methods for accelerating the convergence of any EM algorithm",
       Scand. J. Statist. 35(2), 335-353, 2008 (SQUAREM).
    .. [6] Y. Du and R. Varadhan, "SQUAREM: An R package for off-the-shelf
       acceleration of EM, MM and other EM-like monotone algorithms",
       J. Stat. Softw. 92(7), 1-41, 2020 (the adaptive step-length bound).
    .. [7] J. Honaker, G. King and M. Blackwell, "Amelia II: A program for
       missing data", J. Stat. Softw. 45(7), 1-47, 2011 (the ridge prior
       ``empri``, in pseudo-observations).

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
        "prior_rows": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "tol_loglik": [Interval(Real, 0, None, closed="left"), None],
        "acceleration": [StrOptions({"squarem", "none"})],
    }

    def __init__(
        self,
        max_iter: int = 500,
        tol: float = 1e-5,
        ridge: float = 0.0,
        tol_loglik: float | None = None,
        acceleration: str = "squarem",
        prior_rows: float | str = DEFAULT_PRIOR_ROWS,
    ):
        self.max_iter = max_iter
        self.tol = tol
        self.ridge = ridge
        self.prior_rows = prior_rows
        self.tol_loglik = tol_loglik
        self.acceleration = acceleration

    _e_step = staticmethod(_gaussian_e_step)
    _block_e_step = staticmethod(_gaussian_block_e_step)
    _singular_what: ClassVar[str] = "the covariance"
    _singular_advice: ClassVar[str] = (
        "Increase prior_rows or ridge, or drop collinear or constant features."
    )

    # -- fitting (the loop is _BaseEMDensity's) ----------------------------
    def _check_n_rows(self, n_used: int) -> None:
        if n_used < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 rows with an observed "
                f"entry; got {n_used} (rows with every feature missing carry no "
                "information)."
            )

    def _starts(self, data: _EMData) -> list[Any]:
        return [None]

    def _initial(self, data: _EMData, start: Any) -> Params:
        # Observed means and variances, no correlation (standardised).
        d = len(data.center)
        return np.zeros(d), np.eye(d)

    def _m_step(
        self, data: _EMData, params: Params, sums: tuple[Any, ...], iteration: int
    ) -> Params:
        m = params[0]
        total, scatter, cov_sum = sums
        n = data.n
        m_new = total / n
        S_new = data.prior.mode(_recentre(scatter, total, n, m, m_new) + cov_sum, n)
        _check_singular(S_new, iteration)
        return m_new, S_new

    def _store(self, data: _EMData, params: Params) -> None:
        m, S = params
        self.mean_ = data.center + data.scale * m
        self.covariance_ = S * np.outer(data.scale, data.scale)
        self.n_patterns_ = data.n_patterns

    # -- conditionals ------------------------------------------------------
    def _conditionals(self, X: np.ndarray) -> GaussianConditionals:
        return GaussianConditionals.from_moments(X, self.mean_, self.covariance_)
