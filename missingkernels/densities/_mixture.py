"""Gaussian mixture fitted to incomplete rows by EM."""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy.special import logsumexp
from sklearn.cluster import KMeans

from .._gaussian_conditioning import condition_gaussian
from .._missing_patterns import PatternGroups, pattern_groups
from .._numerics import integer_seeds
from .._sklearn_compat import Interval, StrOptions
from ..conditionals import MixtureConditionals
from ._base_em import (
    Params,
    _BaseEMDensity,
    _check_singular,
    _EMData,
    _on_simplex,
    _pattern_cov_sum,
    _recentre,
    _standardise,
)
from ._prior import DEFAULT_PRIOR_ROWS, dirichlet_log_prior, n_parameters
from ._select import _ComponentSearch

__all__ = ["GaussianMixtureDensity"]

# Smallest effective component size, as a fraction of the rows: keeps an
# emptied component's M-step finite (its weight is then ~0 anyway).
_MIN_RESP = 1e-10
# Rows of the k-means start of a fit out of core (gathered in the driver);
# above it, a uniform sample of about this many.
_START_ROWS = 100_000


def _mixture_sums(
    Z0: np.ndarray, groups: PatternGroups, params: Params, fill: bool
) -> tuple[Any, ...]:
    """The E-step's sums over the rows ``Z0``: the log-likelihood, then (when
    ``fill``) per component the summed posterior weights, the weighted sums
    of the filled rows, their weighted scatter about the current means and
    the weighted conditional covariances."""
    pi, m, S = params
    filled, resp, loglik, blocks = _mixture_e_step(Z0, groups, pi, m, S, fill=fill)
    if not fill:
        return (loglik,)
    K, d = m.shape
    weighted = np.einsum("nk,knd->kd", resp, filled)
    scatter = np.empty((K, d, d))
    cov_sum = np.empty((K, d, d))
    for k in range(K):
        centred = filled[k] - m[k]
        scatter[k] = (resp[:, k, None] * centred).T @ centred
        cov_sum[k] = _pattern_cov_sum(groups, blocks[k], d, resp[:, k])
    return loglik, resp.sum(axis=0), weighted, scatter, cov_sum


def _start_rows(data: _EMData, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The standardised rows (zero where missing) and their mask for the
    k-means start of a fit out of core.

    All the rows with an observed entry when there are at most
    ``_START_ROWS`` (the in-memory start, exactly), else about that many drawn
    uniformly, block by block, with a generator seeded by ``seed`` and the
    block's position.
    """
    from .._dask_blocks import block_map

    fraction = min(1.0, _START_ROWS / data.n)
    parts = block_map(
        data.source,
        _block_start_rows,
        data.center,
        data.scale,
        fraction,
        seed,
        pass_index=True,
    )
    Z0 = np.concatenate([p[0] for p in parts])
    mask = np.concatenate([p[1] for p in parts])
    return Z0, mask


def _block_start_rows(
    block: np.ndarray,
    index: int,
    center: np.ndarray,
    scale: np.ndarray,
    fraction: float,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    Z0, groups = _standardise(block, center, scale)
    if fraction < 1.0:
        keep = np.random.default_rng([seed, index]).random(len(Z0)) < fraction
        return Z0[keep], groups.missing[keep]
    return Z0, groups.missing


class GaussianMixtureDensity(_ComponentSearch, _BaseEMDensity):
    """Gaussian mixture fitted to incomplete rows by EM (Ghahramani & Jordan).

    Each EM iteration computes, for every row and component ``k``, the
    posterior weight of ``k`` given the observed entries and the conditional
    mean and covariance of the missing entries under component ``k``
    (Ghahramani & Jordan, 1994); rows are grouped by missing pattern, so an
    iteration costs ``O(K (n d^2 + sum_p |J_p|^3))``. The start is k-means on
    mean-imputed rows (seeded by ``random_state``), so the fit is
    deterministic given ``random_state``.

    Rows with every feature missing contribute nothing to the fit;
    :meth:`conditionals` gives them the prior weights and the components'
    marginals.

    Parameters
    ----------
    n_components : int, "bic" or (int, int), default=3
        Number of mixture components ``K``, or how to choose it: ``"bic"``
        fits ``K = 1, ..., 6`` and keeps the fit with the lowest BIC,
        ``-2 loglik_ + p log n`` (``p = K - 1 + K (d + d (d + 1) / 2)`` free
        parameters, ``n`` rows with an observed entry); a pair
        ``(low, high)`` fits ``K = low, ..., high``. Each count is fitted as
        a fixed one would be (same ``n_init`` and ``random_state``); counts
        too many for the rows are skipped.
    max_iter : int, default=500
        Maximum number of EM steps (passes over the rows) per
        initialisation.
    tol : float, default=1e-5
        Convergence threshold on the largest change of a weight, mean or
        covariance entry in one EM step (means and covariances in units
        of each feature's observed standard deviation and variance).
    tol_loglik : float or None, default=None
        When set, also stop when the objective changes by at most
        ``tol_loglik * |objective|`` between two accepted iterates (off by
        default, see :class:`GaussianEMDensity`).
    acceleration : {"squarem", "none"}, default="squarem"
        ``"squarem"``: SQUAREM extrapolation (Varadhan & Roland, 2008, as in
        :class:`GaussianEMDensity`); an extrapolation with a weight outside
        the simplex, a covariance not positive definite or a lower objective
        falls back to the plain EM step. ``"none"``: plain EM.
    ridge : float, default=1e-6
        Covariance floor. Adds ``(n / K) * ridge * D`` to each component's
        M-step scatter, with ``D`` the diagonal of the observed feature
        variances and ``n`` the rows with an observed entry: for a component
        holding its share ``n / K`` (and ``prior_rows=0``) this is
        ``S_ML + ridge * D``. It is the penalty
        ``- n * ridge / (2 K) * sum_k tr(D S_k^-1)``, the scale-only case of
        the prior below, which keeps the likelihood bounded when
        ``prior_rows=0`` (an unpenalised component can collapse onto a
        single row). With ``ridge=0``, ``prior_rows=0`` and a singular
        component the fit restarts with ``ridge=1e-6`` and a
        :class:`SingularCovarianceWarning`.
    prior_rows : float or "auto", default="auto"
        Strength of the prior (``"auto"``: ``max(10, d)`` for ``d``
        numeric features), in pseudo-rows shared evenly by the
        components (see :class:`GaussianEMDensity`): each component gets
        ``prior_rows / K`` pseudo-rows of scatter ``D_w``, so its M-step
        covariance is ``(A_k + prior_rows / K * D_w) / (N_k + prior_rows / K)``
        (``A_k``: expected scatter, ``N_k``: summed posterior weights), and
        its weight the Dirichlet pseudo-count ``prior_rows / K``:
        ``pi_k = (N_k + prior_rows / K) / (n + prior_rows)``. ``D_w`` is the
        diagonal of the pooled within-cluster variances of a k-means
        clustering of the mean-imputed rows (10 initialisations, fixed
        seed), at most the observed variances: centring on the whole table's
        variances would inflate well separated components. 0: maximum
        likelihood (with the ridge).
    n_init : int, default=1
        Number of k-means initialisations; the fit with the highest
        penalised log-likelihood is kept. With ``n_components="bic"`` a few
        (e.g. 3) make the comparison of the counts less dependent on one
        start's local maximum.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means initialisations.

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        Mixing proportions.
    means_ : ndarray of shape (n_components, n_features)
        Component means.
    covariances_ : ndarray of shape (n_components, n_features, n_features)
        Component covariances.
    n_iter_ : int
        EM steps of the kept initialisation.
    converged_ : bool
        Whether the kept initialisation met the stopping criterion (else a
        ``ConvergenceWarning`` names the slowest features).
    loglik_trace_ : ndarray of shape (n_accepted + 1,)
        The penalised objective (observed-data log-likelihood plus the log
        prior, minus the ridge penalty), at the start and at each accepted
        iterate (every EM step with ``acceleration="none"``); never
        decreases.
    loglik_ : float
        The observed-data log-likelihood at the returned estimate.
    n_components_ : int
        The number of components fitted (chosen, with ``"bic"`` or a range).
    bic_ : float
        BIC of the fit, ``-2 loglik_ + p log n``.
    bic_scores_ : dict
        With ``"bic"`` or a range only: count -> BIC of each count fitted.
    ridge_ : float
        The ridge used.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    GaussianEMDensity : The single-Gaussian case (``n_components=1``).

    References
    ----------
    .. [1] Z. Ghahramani and M. I. Jordan, "Supervised learning from
       incomplete data via an EM approach", Advances in Neural Information
       Processing Systems 6, 120-127, 1994.
    .. [2] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood
       from incomplete data via the EM algorithm", J. R. Stat. Soc. B 39(1),
       1-38, 1977.
    .. [3] R. Varadhan and C. Roland, "Simple and globally convergent
       methods for accelerating the convergence of any EM algorithm",
       Scand. J. Statist. 35(2), 335-353, 2008 (SQUAREM).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.densities import GaussianMixtureDensity
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-5, 1, (100, 2)), rng.normal(5, 1, (100, 2))])
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> density = GaussianMixtureDensity(n_components=2, random_state=0).fit(X)
    >>> np.sort(density.means_[:, 0]).round(0).tolist()
    [-5.0, 5.0]
    >>> cond = density.conditionals(np.array([[-5.0, np.nan]]))
    >>> cond.weights.round(3).tolist()
    [[1.0, 0.0]]
    """

    representation: ClassVar[str] = "mixture"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"bic"}),
            tuple,
            list,
        ],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "prior_rows": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "tol_loglik": [Interval(Real, 0, None, closed="left"), None],
        "acceleration": [StrOptions({"squarem", "none"})],
    }

    def __init__(
        self,
        n_components: int | str | tuple[int, int] = 3,
        max_iter: int = 500,
        tol: float = 1e-5,
        ridge: float = 1e-6,
        n_init: int = 1,
        random_state: Any = None,
        tol_loglik: float | None = None,
        acceleration: str = "squarem",
        prior_rows: float | str = DEFAULT_PRIOR_ROWS,
    ):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.ridge = ridge
        self.prior_rows = prior_rows
        self.n_init = n_init
        self.random_state = random_state
        self.tol_loglik = tol_loglik
        self.acceleration = acceleration

    _e_step = staticmethod(_mixture_sums)
    _singular_what: ClassVar[str] = "a component covariance"
    _singular_advice: ClassVar[str] = (
        "Increase prior_rows or ridge, or use fewer components."
    )

    # -- fitting (the loop is _BaseEMDensity's) ----------------------------
    def _check_n_rows(self, n_used: int) -> None:
        if n_used < max(2, self.n_components):
            raise ValueError(
                f"{type(self).__name__} with n_components={self.n_components} "
                f"needs at least {max(2, self.n_components)} rows with an "
                f"observed entry; got {n_used}. Use fewer components or more rows."
            )

    def _starts(self, data: _EMData) -> list[Any]:
        """k-means labels of the mean-imputed rows, one per initialisation,
        with the rows they label."""
        if data.source is None:
            assert data.Z0 is not None and data.groups is not None
            Z0, mask = data.Z0, data.groups.missing
            seeds = integer_seeds(self.random_state, self.n_init)
        else:
            seeds = integer_seeds(self.random_state, self.n_init + 1)
            Z0, mask = _start_rows(data, int(seeds[-1]))
            seeds = seeds[:-1]
        return [
            (
                Z0,
                mask,
                KMeans(self.n_components, n_init=1, random_state=int(seed)).fit_predict(
                    Z0
                ),
            )
            for seed in seeds
        ]

    def _centre_prior(self, data: _EMData, starts: list[Any]) -> _EMData:
        Z0, mask, _ = starts[0]
        return within_centre(data, Z0, mask, _centre_labels(Z0, int(self.n_components)))

    def _initial(self, data: _EMData, start: Any) -> Params:
        Z0, mask, labels = start
        return _initial_parameters(Z0, mask, labels, self.n_components)

    def _m_step(
        self, data: _EMData, params: Params, sums: tuple[Any, ...], iteration: int
    ) -> Params:
        m, S = params[1], params[2]
        R = sums[0]
        prior = data.prior.split(len(m))
        Nk = np.maximum(R, _MIN_RESP * data.n)
        pi_new = weights_mode(Nk, prior.rows)
        m_new, S_new = gaussian_m_step(prior, m, S, sums, Nk, iteration)
        return pi_new, m_new, S_new

    def _log_prior(self, data: _EMData, params: Params) -> float:
        # The covariances' prior, and each component's share of the
        # pseudo-rows as a Dirichlet pseudo-count of its weight.
        K = len(params[0])
        return super()._log_prior(data, params) + dirichlet_log_prior(
            params[0], data.prior_rows / K
        )

    def _valid_params(self, data: _EMData, params: Params) -> Params | None:
        # SQUAREM's extrapolation keeps the weights' sum (an affine
        # combination of points of the simplex) but not their sign.
        if not _on_simplex(params[0], floor=0.0):
            return None
        return super()._valid_params(data, params)

    def _n_parameters(self) -> int:
        return n_parameters(len(self.weights_), self.n_features_in_)

    def _store(self, data: _EMData, params: Params) -> None:
        pi, m, S = params
        self.weights_ = pi
        self.means_ = data.center + data.scale * m
        self.covariances_ = S * np.outer(data.scale, data.scale)

    def _conditionals(self, X: np.ndarray) -> MixtureConditionals:
        return mixture_conditionals(
            X, np.log(self.weights_), self.means_, self.covariances_
        )


def _centre_labels(features: np.ndarray, K: int) -> np.ndarray:
    """k-means labels (10 initialisations, fixed seed) of the start's rows,
    for :func:`within_centre`: a single k-means run may merge clusters,
    whose spread would then enter the prior."""
    if K == 1:
        return np.zeros(len(features), dtype=np.intp)
    return KMeans(K, n_init=10, random_state=0).fit_predict(features)


def within_centre(
    data: _EMData, Z0: np.ndarray, mask: np.ndarray, labels: np.ndarray
) -> _EMData:
    """``data`` with the prior centred on the pooled within-cluster variances
    of the start ``labels`` (observed entries of the standardised rows ``Z0``;
    features constant in the data keep their tiny centre).

    The components' variances, not the whole table's: between-cluster spread
    in the centre would inflate every component's covariance, the more so the
    fewer the components (each gets ``prior_rows / K`` pseudo-rows), and
    bias the BIC towards more components. With one cluster it is the
    observed variance (1 on this scale), as in :class:`GaussianEMDensity`.
    """
    if not len(labels) or labels.max() == 0:
        return data
    observed = ~mask
    K = int(labels.max()) + 1
    squares = np.zeros(Z0.shape[1])
    counts = np.zeros(Z0.shape[1])
    for k in range(K):
        rows = labels == k
        n_k = observed[rows].sum(axis=0)
        m_k = np.divide(
            (Z0[rows] * observed[rows]).sum(axis=0), n_k, out=np.zeros_like(squares),
            where=n_k > 0,
        )  # fmt: skip
        squares += (observed[rows] * (Z0[rows] - m_k) ** 2).sum(axis=0)
        counts += np.maximum(n_k - 1, 0)
    pooled = np.divide(squares, counts, out=np.ones_like(squares), where=counts > 0)
    # Never above the observed variance, nor vanishing (a cluster may hold
    # one value of a feature).
    pooled = np.clip(pooled, 1e-2, 1.0)
    base = np.ones_like(pooled) if data.centre is None else data.centre
    return replace(data, centre=np.where(base < 1.0, base, pooled))


def gaussian_m_step(
    prior: Any,
    m: np.ndarray,
    S: np.ndarray,
    sums: tuple[Any, ...],
    Nk: np.ndarray,
    iteration: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The M-step of Gaussian components (the mixture's, the latent classes'
    numeric block): each component's mean, and its covariance as the prior's
    mode of the scatter around the new mean plus the conditional covariances.

    ``sums`` = ``(R, weighted, scatter, cov_sum)`` of the E-step (posterior
    weight per component, weighted row sums, scatter around the old means,
    summed conditional covariances); ``prior`` split over the components;
    ``Nk`` the floored weights. A singular covariance is an error naming
    ``iteration``.
    """
    R, weighted, scatter, cov_sum = sums
    m_new = weighted / Nk[:, None]
    S_new = np.empty_like(S)
    for k in range(len(m)):
        around = _recentre(scatter[k], weighted[k], R[k], m[k], m_new[k])
        S_new[k] = prior.mode(around + cov_sum[k], Nk[k])
        _check_singular(S_new[k], iteration)
    return m_new, S_new


def weights_mode(counts: np.ndarray, pseudo_rows: float) -> np.ndarray:
    """Mixture weights maximising ``sum (counts_k + a) log pi_k`` on the
    simplex, ``a`` = ``pseudo_rows`` per component: the M-step's weights
    under the Dirichlet prior of the pseudo-rows."""
    total = counts + pseudo_rows
    return total / total.sum()


def mixture_conditionals(
    X: np.ndarray, log_prior: np.ndarray, means: np.ndarray, covariances: np.ndarray
) -> MixtureConditionals:
    """The conditionals of the rows ``X`` under Gaussian components.

    ``log_prior`` (shape ``(K,)``, or ``(n, K)`` for row-specific terms such
    as the likelihood of other observed columns) is added to each
    component's log-density of a row's observed entries before normalising
    into the row's posterior weights.
    """
    groups = pattern_groups(np.isnan(X))
    filled, logpdf, per_pattern = [], [], []
    for mean, cov in zip(means, covariances, strict=True):
        cond = condition_gaussian(X, groups, mean, cov, logpdf=True)
        assert cond.means is not None and cond.logpdf is not None
        filled.append(cond.means)
        logpdf.append(cond.logpdf)
        per_pattern.append(groups.per_pattern(cond.blocks))
    log_w = log_prior + np.column_stack(logpdf)
    weights = np.exp(log_w - logsumexp(log_w, axis=1, keepdims=True))
    return MixtureConditionals(
        weights=weights,
        means=np.stack(filled),
        missing=groups.missing,
        patterns=groups.patterns,
        pattern_index=groups.pattern_index,
        covariances=tuple(
            np.stack([covs[p] for covs in per_pattern])
            for p in range(groups.n_patterns)
        ),
        component_covariances=np.array(covariances, copy=True),
    )


def _initial_parameters(
    Z0: np.ndarray, mask: np.ndarray, labels: np.ndarray, K: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights, means and diagonal covariances of the k-means clusters."""
    n, d = Z0.shape
    observed = ~mask
    pi = np.bincount(labels, minlength=K) / n
    m = np.zeros((K, d))
    S = np.empty((K, d, d))
    for k in range(K):
        rows = labels == k
        counts = observed[rows].sum(axis=0)
        sums = Z0[rows].sum(axis=0)
        m[k] = np.divide(sums, counts, out=np.zeros(d), where=counts > 0)
        sq = (observed[rows] * (Z0[rows] - m[k]) ** 2).sum(axis=0)
        var = np.divide(sq, counts, out=np.ones(d), where=counts > 1)
        S[k] = np.diag(np.where(var > 1e-6, var, 1.0))
    return np.maximum(pi, 1.0 / n), m, S


def _mixture_e_step(
    Z0: np.ndarray,
    groups: PatternGroups,
    pi: np.ndarray,
    m: np.ndarray,
    S: np.ndarray,
    fill: bool = True,
) -> tuple[np.ndarray, np.ndarray, float, list[list[np.ndarray]]]:
    """Per-component filled rows, posterior weights, log-likelihood.

    Also returns, per component, the per-group conditional covariances that
    the M-step sums with the posterior weights.
    """
    K = len(pi)
    n, d = Z0.shape
    filled = np.empty((K, n, d)) if fill else np.empty((0, n, d))
    logpdf = np.empty((n, K))
    blocks = []
    for k in range(K):
        cond = condition_gaussian(Z0, groups, m[k], S[k], fill=fill, logpdf=True)
        assert cond.logpdf is not None
        logpdf[:, k] = cond.logpdf
        if cond.means is not None:
            filled[k] = cond.means
        blocks.append(cond.blocks)
    log_w = np.log(pi) + logpdf
    row_loglik = logsumexp(log_w, axis=1)
    resp = np.exp(log_w - row_loglik[:, None])
    return filled, resp, float(row_loglik.sum()), blocks
