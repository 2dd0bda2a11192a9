"""Gaussian mixture fitted to incomplete rows by EM."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy import linalg
from scipy.special import logsumexp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from .._sklearn_compat import Interval
from ..conditionals import GaussianConditionals, MixtureConditionals
from ._base import BaseDensity
from ._gaussian_em import (
    _AUTO_RIDGE,
    _check_singular,
    _condition,
    _pattern_cov_sum,
    _pattern_groups,
    _PatternGroup,
    _SingularCovarianceError,
    _starting_ridge,
    _warn_auto_ridge,
)

__all__ = ["GaussianMixtureDensity"]

# Smallest effective component size, as a fraction of the rows: keeps an
# emptied component's M-step finite (its weight is then ~0 anyway).
_MIN_RESP = 1e-10


class GaussianMixtureDensity(BaseDensity):
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
    n_components : int, default=3
        Number of mixture components ``K``.
    max_iter : int, default=500
        Maximum number of EM iterations per initialisation.
    tol : float, default=1e-5
        Convergence threshold on the largest change of a weight, mean or
        covariance entry between iterations (means and covariances in units
        of each feature's observed standard deviation and variance).
    ridge : float, default=1e-6
        Covariance floor. The M-step returns
        ``S_k = (scatter_k + (n / K) * ridge * D) / N_k``, with ``D`` the
        diagonal of the observed feature variances, ``N_k`` the summed
        posterior weights of component ``k`` and ``n`` the rows with an
        observed entry: for a component holding its share ``n / K`` this is
        ``S_ML + ridge * D``. It is the exact EM for the penalised
        log-likelihood ``loglik - n * ridge / (2 K) * sum_k tr(D S_k^-1)``,
        which keeps the likelihood bounded (an unpenalised component can
        collapse onto a single row). With ``ridge=0`` and a singular
        component the fit restarts with ``ridge=1e-6`` and a
        :class:`SingularCovarianceWarning`.
    n_init : int, default=1
        Number of k-means initialisations; the fit with the highest
        penalised log-likelihood is kept.
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
        EM iterations of the kept initialisation.
    converged_ : bool
        Whether the kept initialisation reached ``tol``.
    loglik_trace_ : ndarray of shape (n_iter_ + 1,)
        Observed-data log-likelihood minus the ridge penalty, at the start and
        after each iteration; never decreases.
    loglik_ : float
        ``loglik_trace_[-1]``.
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
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 3,
        max_iter: int = 500,
        tol: float = 1e-5,
        ridge: float = 1e-6,
        n_init: int = 1,
        random_state: Any = None,
    ):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.ridge = ridge
        self.n_init = n_init
        self.random_state = random_state

    def _fit(self, X: np.ndarray) -> None:
        name = type(self).__name__
        used = ~np.isnan(X).all(axis=1)
        n_used = int(used.sum())
        if n_used < max(2, self.n_components):
            raise ValueError(
                f"{name} with n_components={self.n_components} needs at least "
                f"{max(2, self.n_components)} rows with an observed entry; got "
                f"{n_used}. Use fewer components or more rows."
            )
        Xu = X[used]
        # Standardise by the observed moments (scale-free tol and ridge).
        center = np.nanmean(Xu, axis=0)
        scale = np.nanstd(Xu, axis=0)
        scale[~(scale > 0)] = 1.0
        Z = (Xu - center) / scale
        mask = np.isnan(Z)
        Z0 = np.where(mask, 0.0, Z)  # also the mean-imputed rows for k-means
        _, groups = _pattern_groups(mask)
        log_jacobian = float(np.sum((~mask) * np.log(scale)))

        rng = check_random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=self.n_init)
        labels_list = [
            KMeans(self.n_components, n_init=1, random_state=int(seed)).fit_predict(Z0)
            for seed in seeds
        ]
        ridge = _starting_ridge(self, Xu)
        try:
            results = [self._em(Z0, mask, groups, lab, ridge) for lab in labels_list]
        except _SingularCovarianceError as exc:
            if ridge > 0:
                raise ValueError(
                    f"{name}: a component covariance is singular even with "
                    f"ridge={ridge:g} ({exc}). Increase ridge or use fewer "
                    "components."
                ) from None
            ridge = _AUTO_RIDGE
            _warn_auto_ridge(self, f"{exc} The fit was restarted.")
            results = [self._em(Z0, mask, groups, lab, ridge) for lab in labels_list]
        best = max(results, key=lambda r: r[3][-1])
        pi, m, S, trace, n_iter, converged = best
        if not converged:
            warnings.warn(
                f"{name} did not converge in max_iter={self.max_iter} iterations "
                f"(largest parameter change still above tol={self.tol:g}); "
                "increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.weights_ = pi
        self.means_ = center + scale * m
        self.covariances_ = S * np.outer(scale, scale)
        self.loglik_trace_ = np.asarray(trace) - log_jacobian
        self.loglik_ = float(self.loglik_trace_[-1])
        self.n_iter_ = n_iter
        self.converged_ = converged
        self.ridge_ = ridge

    def _em(
        self,
        Z0: np.ndarray,
        mask: np.ndarray,
        groups: list[_PatternGroup],
        labels: np.ndarray,
        ridge: float,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[float], int, bool]:
        n, d = Z0.shape
        K = self.n_components
        pi, m, S = _initial_parameters(Z0, mask, labels, K)
        floor = (n / K) * ridge * np.eye(d)
        trace: list[float] = []
        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            filled, resp, loglik, inv = _mixture_e_step(Z0, mask, groups, pi, m, S)
            trace.append(loglik - _mixture_penalty(S, n, K, ridge))
            Nk = np.maximum(resp.sum(axis=0), _MIN_RESP * n)
            pi_new = Nk / Nk.sum()
            m_new = np.einsum("nk,knd->kd", resp, filled) / Nk[:, None]
            S_new = np.empty_like(S)
            for k in range(K):
                centred = filled[k] - m_new[k]
                scatter = (resp[:, k, None] * centred).T @ centred
                scatter += _pattern_cov_sum(groups, inv[k], d, resp[:, k])
                S_k = (scatter + floor) / Nk[k]
                S_new[k] = 0.5 * (S_k + S_k.T)
                _check_singular(S_new[k], n_iter)
            change = max(
                np.max(np.abs(pi_new - pi)),
                np.max(np.abs(m_new - m)),
                np.max(np.abs(S_new - S)),
            )
            pi, m, S = pi_new, m_new, S_new
            if change <= self.tol:
                converged = True
                break
        loglik = _mixture_e_step(Z0, mask, groups, pi, m, S, fill=False)[2]
        trace.append(loglik - _mixture_penalty(S, n, K, ridge))
        return pi, m, S, trace, n_iter, converged

    def _conditionals(self, X: np.ndarray) -> MixtureConditionals:
        K = self.n_components
        mask = np.isnan(X)
        X0 = np.where(mask, 0.0, X)
        _, groups = _pattern_groups(mask)
        per_component = [
            GaussianConditionals.from_moments(X, self.means_[k], self.covariances_[k])
            for k in range(K)
        ]
        logpdf = [
            _condition(X0, mask, mean, cov, groups, fill=False)[1]
            for mean, cov in zip(self.means_, self.covariances_, strict=True)
        ]
        log_w = np.log(self.weights_) + np.column_stack(logpdf)
        weights = np.exp(log_w - logsumexp(log_w, axis=1, keepdims=True))
        first = per_component[0]
        covariances = tuple(
            np.stack([c.covariances[p] for c in per_component])
            for p in range(len(first.patterns))
        )
        return MixtureConditionals(
            weights=weights,
            means=np.stack([c.means for c in per_component]),
            missing=first.missing,
            patterns=first.patterns,
            pattern_index=first.pattern_index,
            covariances=covariances,
            component_covariances=self.covariances_.copy(),
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
    mask: np.ndarray,
    groups: list[_PatternGroup],
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
    inv_all = []
    for k in range(K):
        f, logpdf[:, k], inv_list = _condition(Z0, mask, m[k], S[k], groups, fill)
        if fill:
            assert f is not None
            filled[k] = f
        inv_all.append(inv_list)
    log_w = np.log(pi) + logpdf
    row_loglik = logsumexp(log_w, axis=1)
    resp = np.exp(log_w - row_loglik[:, None])
    return filled, resp, float(row_loglik.sum()), inv_all


def _mixture_penalty(S: np.ndarray, n: int, K: int, ridge: float) -> float:
    if ridge == 0:
        return 0.0
    total = 0.0
    for S_k in S:
        factor = linalg.cho_factor(S_k, lower=True, check_finite=False)
        total += float(np.trace(linalg.cho_solve(factor, np.eye(len(S_k)))))
    return 0.5 * n / K * ridge * total
