"""Factor analysis (and probabilistic PCA) fitted to incomplete rows by EM."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from .._missing_patterns import PatternGroups
from .._sklearn_compat import Interval, StrOptions
from ..conditionals import FactorConditionals
from ..conditionals._factor_conditionals import factor_posterior
from ._base_em import (
    Params,
    SingularCovarianceWarning,
    _BaseEMDensity,
    _em_sums,
    _EMData,
)
from ._gaussian_em import GaussianEMDensity

__all__ = ["FactorAnalysisDensity"]

_LOG_2PI = float(np.log(2.0 * np.pi))

# -- the prior on the noise variances (kept apart: one small piece) -----------
#
# Each noise variance psi_k (standardised scale) has an inverse-gamma prior
# with density proportional to psi^-(nu/2) exp(-nu s0 / (2 psi)): ``nu``
# pseudo-observations of residual variance ``s0``. The M-step's maximiser is
# ``(SSE_k + nu s0) / (n_k + nu)``, so psi_k stays above ``nu s0 / (n_k + nu)``
# (no Heywood case at zero); ``nu = 0`` is maximum likelihood.
_NOISE_PRIOR_SCALE = 0.1


def _noise_map(sse: np.ndarray, counts: np.ndarray, nu: float) -> np.ndarray:
    """The noise variances maximising the penalised M-step objective."""
    return (sse + nu * _NOISE_PRIOR_SCALE) / (counts + nu)


def _noise_log_prior(psi: np.ndarray, nu: float) -> float:
    """The log prior of the noise variances (up to a constant)."""
    if nu == 0:
        return 0.0
    return float(-0.5 * nu * np.sum(np.log(psi) + _NOISE_PRIOR_SCALE / psi))


# -- the E-step -------------------------------------------------------------------


def _factor_e_step(
    Z0: np.ndarray, groups: PatternGroups, params: Params, fill: bool
) -> tuple[Any, ...]:
    """Sums over the rows ``Z0`` (standardised, zero where missing): the
    log-likelihood, then (when ``fill``), per feature ``k`` over the rows
    where it is observed, ``sum E[z~ z~^T]`` (``z~ = (z, 1)``),
    ``sum x_k E[z~]`` and ``sum x_k^2`` (Ilin & Raiko, 2010, sec. 3.2: the
    factors are the only latent variables; missing entries are integrated
    out, never imputed)."""
    mu, W, psi = params
    q = W.shape[1]
    observed = ~groups.missing
    obs = observed.astype(np.float64)
    chol, root = factor_posterior(observed, W, psi)
    R = np.where(observed, Z0 - mu, 0.0)
    T = (R / psi) @ W  # W_O^T Psi_O^-1 r_O
    u = np.einsum("nkl,nk->nl", root, T)  # R^-1 T: m = S T, T^T m = |u|^2
    m = np.einsum("nkl,nl->nk", root, u)
    n_obs = obs.sum(axis=1)
    logdet = obs @ np.log(psi) + 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(
        axis=1
    )
    quad = (R * R / psi).sum(axis=1) - (u * u).sum(axis=1)
    loglik = -0.5 * (n_obs * _LOG_2PI + logdet + quad)
    loglik[n_obs == 0] = 0.0
    total = float(loglik.sum())
    if not fill:
        return (total,)
    n = len(Z0)
    second = np.empty((n, q + 1, q + 1))
    second[:, :q, :q] = root @ np.swapaxes(root, 1, 2) + m[:, :, None] * m[:, None, :]
    second[:, :q, q] = m
    second[:, q, :q] = m
    second[:, q, q] = 1.0
    zz = obs.T @ second.reshape(n, -1)  # (d, (q+1)^2)
    Zo = np.where(observed, Z0, 0.0)
    mt = np.hstack([m, np.ones((n, 1))])
    xz = Zo.T @ mt  # (d, q+1)
    xx = (Zo * Zo).sum(axis=0)
    return total, zz, xz, xx


def _init_sums(
    Z0: np.ndarray, groups: PatternGroups, *args: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Sums of products of observed entries and their counts (pairwise)."""
    obs = (~groups.missing).astype(np.float64)
    return Z0.T @ Z0, obs.T @ obs


class FactorAnalysisDensity(_BaseEMDensity):
    """Factor analysis fitted to incomplete rows by (MAP) EM.

    The model ``x = mu + W z + e`` with ``z ~ N(0, I_q)`` and
    ``e ~ N(0, Psi)``: a Gaussian with covariance ``W W^T + Psi`` and
    ``d (q + 2) - q (q - 1) / 2`` free parameters instead of
    ``d (d + 3) / 2``. ``Psi`` is diagonal (factor analysis) or
    ``sigma^2 I`` (probabilistic PCA, ``noise="isotropic"``). EM treats the
    factors as the latent variables and integrates the missing entries out
    (Ghahramani & Hinton, 1996; Tipping & Bishop, 1999; Ilin & Raiko, 2010):
    each iteration costs ``O(n d q^2 + n q^3)``. The conditionals are
    :class:`~missingkernels.conditionals.FactorConditionals`, whose
    covariance blocks are diagonal plus rank ``q``: the RBF kernels then cost
    ``O(d + (|J_i| + |J_j|) q + |J_i & J_j| q^2 + q^3)`` per pair instead of
    a factorisation of size ``|J|``.

    Parameters
    ----------
    n_factors : int or "bic", default="bic"
        The number of factors ``q``; ``"bic"`` fits ``q = 1 ..
        max_factors`` and keeps the fit of smallest BIC
        (``-2 loglik + p log n``, ``p`` the free parameters).
    noise : {"diagonal", "isotropic"}, default="diagonal"
        ``Psi`` diagonal, or ``sigma^2 I`` in the units of ``X``.
    max_factors : int or None, default=None
        The largest ``q`` tried by ``"bic"``; None: ``min(10, q_L)`` with
        ``q_L`` the largest ``q`` with at most as many parameters as the
        full covariance (Ledermann's bound).
    noise_prior : float >= 0, default=1.0
        Weight, in pseudo-rows, of an inverse-gamma prior on each noise
        variance (on the scale of the feature's observed variance, with
        residual variance 0.1): the M-step returns
        ``(SSE_k + 0.1 * noise_prior) / (n_k + noise_prior)``, keeping the
        noise variances away from zero (a Heywood case) when a feature is
        nearly explained by the factors. 0 is maximum likelihood.
    max_iter : int, default=1000
        Maximum number of EM steps per fit.
    tol : float, default=1e-5
        Convergence threshold on the largest change of a parameter in one
        EM step, in units of the features' observed standard deviations.
    tol_loglik : float or None, default=None
        As in :class:`GaussianEMDensity`.
    acceleration : {"squarem", "none"}, default="squarem"
        As in :class:`GaussianEMDensity`.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
    loadings_ : ndarray of shape (n_features, n_factors_)
        ``W``, in the units of ``X`` (determined up to a rotation).
    noise_variance_ : ndarray of shape (n_features,)
        The diagonal of ``Psi``.
    covariance_ : ndarray of shape (n_features, n_features)
        ``W W^T + Psi``.
    n_factors_ : int
        The ``q`` fitted (chosen by BIC when ``n_factors="bic"``).
    bic_ : dict
        ``q -> BIC`` of every ``q`` fitted.
    loglik_ : float
        The penalised log-likelihood at the estimate (``loglik_trace_[-1]``).
    loglik_trace_ : ndarray
        As in :class:`GaussianEMDensity` (of the chosen fit).
    n_iter_, converged_, n_patterns_, n_features_in_
        As in :class:`GaussianEMDensity` (of the chosen fit).

    See Also
    --------
    GaussianEMDensity : The full covariance.

    References
    ----------
    .. [1] Z. Ghahramani and G. E. Hinton, "The EM algorithm for mixtures of
       factor analyzers", Technical Report CRG-TR-96-1, University of
       Toronto, 1996.
    .. [2] M. E. Tipping and C. M. Bishop, "Probabilistic principal component
       analysis", J. R. Stat. Soc. B 61(3), 611-622, 1999.
    .. [3] A. Ilin and T. Raiko, "Practical approaches to principal component
       analysis in the presence of missing values", J. Mach. Learn. Res. 11,
       1957-2000, 2010.
    .. [4] R. Varadhan and C. Roland, "Simple and globally convergent
       methods for accelerating the convergence of any EM algorithm",
       Scand. J. Statist. 35(2), 335-353, 2008 (SQUAREM).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.densities import FactorAnalysisDensity
    >>> rng = np.random.default_rng(0)
    >>> W = rng.normal(size=(6, 2))
    >>> X = rng.normal(size=(300, 2)) @ W.T + 0.3 * rng.normal(size=(300, 6))
    >>> X[rng.random(X.shape) < 0.3] = np.nan
    >>> density = FactorAnalysisDensity(n_factors=2).fit(X)
    >>> density.loadings_.shape, bool(density.converged_)
    ((6, 2), True)
    >>> cond = density.conditionals(X[:3])
    >>> type(cond).__name__
    'FactorConditionals'
    """

    representation: ClassVar[str] = "factor"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_factors": [Interval(Integral, 1, None, closed="left"), StrOptions({"bic"})],
        "noise": [StrOptions({"diagonal", "isotropic"})],
        "max_factors": [Interval(Integral, 1, None, closed="left"), None],
        "noise_prior": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "tol_loglik": [Interval(Real, 0, None, closed="left"), None],
        "acceleration": [StrOptions({"squarem", "none"})],
    }

    # The EM loop reads a ridge (covariance floor) it never needs here.
    ridge: float = 0.0

    def __init__(
        self,
        n_factors: int | str = "bic",
        noise: str = "diagonal",
        max_factors: int | None = None,
        noise_prior: float = 1.0,
        max_iter: int = 1000,
        tol: float = 1e-5,
        tol_loglik: float | None = None,
        acceleration: str = "squarem",
    ):
        self.n_factors = n_factors
        self.noise = noise
        self.max_factors = max_factors
        self.noise_prior = noise_prior
        self.max_iter = max_iter
        self.tol = tol
        self.tol_loglik = tol_loglik
        self.acceleration = acceleration

    _e_step = staticmethod(_factor_e_step)
    _singular_what: ClassVar[str] = "the noise variances"
    _singular_advice: ClassVar[str] = "Increase noise_prior."

    # -- fitting ---------------------------------------------------------------
    # At least two rows with an observed entry, as the Gaussian EM.
    _check_n_rows = GaussianEMDensity._check_n_rows

    def _fit(self, X: np.ndarray) -> None:
        # A feature constant on its observed entries makes a full covariance
        # singular (the EM loop then warns and adds a ridge); here its noise
        # variance sits at the prior's floor and nothing is singular.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=SingularCovarianceWarning)
            super()._fit(X)

    def _fit_dask(self, X: Any) -> None:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=SingularCovarianceWarning)
            super()._fit_dask(X)

    def _candidates(self, d: int) -> list[int]:
        if self.n_factors != "bic":
            q = int(self.n_factors)
            if q >= d:
                raise ValueError(
                    f"n_factors={q} must be smaller than the number of features "
                    f"({d}); use GaussianEMDensity for a full covariance."
                )
            return [q]
        # Ledermann's bound: (d - q)^2 >= d + q, so that p <= d (d + 3) / 2.
        bound = max(1, int(np.floor((2 * d + 1 - np.sqrt(8 * d + 1)) / 2)))
        top = min(10, bound) if self.max_factors is None else int(self.max_factors)
        return list(range(1, max(1, min(top, d - 1)) + 1))

    def _fit_em(self, data: _EMData, counts: np.ndarray) -> None:
        d = len(data.center)
        if d < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 features; got {d}."
            )
        self._counts = counts.astype(np.float64)
        self._products: Any = None
        fits: dict[int, dict[str, Any]] = {}
        bic: dict[int, float] = {}
        for q in self._candidates(d):
            self._q = q
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                super()._fit_em(data, counts)
            state = {k: v for k, v in vars(self).items() if k.endswith("_")}
            fits[q] = {"state": state, "warnings": caught}
            n_params = (
                d * (q + 1) - q * (q - 1) / 2 + (d if self.noise == "diagonal" else 1)
            )
            bic[q] = float(-2.0 * self.loglik_ + n_params * np.log(data.n))
        best = min(bic, key=lambda q: bic[q])
        for k, v in fits[best]["state"].items():
            setattr(self, k, v)
        for w in fits[best]["warnings"]:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        self.n_factors_ = best
        self.bic_ = bic
        del self._q, self._counts, self._products

    def _starts(self, data: _EMData) -> list[Any]:
        return [None]

    def _initial(self, data: _EMData, start: Any) -> Params:
        """Principal axes of the pairwise-available correlation matrix."""
        d, q = len(data.center), self._q
        if self._products is None:
            self._products = _em_sums(data, _init_sums)
        products, pairs = self._products
        R = products / np.maximum(pairs, 1.0)
        R[np.diag_indices(d)] = 1.0
        values, vectors = np.linalg.eigh(0.5 * (R + R.T))
        values, vectors = values[::-1][:q], vectors[:, ::-1][:, :q]
        # A sign per axis that does not depend on rounding (eigh's does):
        # in memory and out of core, EM then follows the same path.
        big = np.argmax(np.abs(vectors), axis=0)
        vectors = vectors * np.sign(vectors[big, np.arange(q)])
        rest = (
            max(float(np.mean(np.linalg.eigvalsh(R)[: d - q])), 0.1) if d > q else 0.1
        )
        W = vectors * np.sqrt(np.maximum(values - rest, 1e-2))
        psi = np.clip(1.0 - (W * W).sum(axis=1), 0.1, 1.0)
        if self.noise == "isotropic":
            psi = self._isotropic(data, np.full(d, float(np.mean(psi * data.scale**2))))
        return np.zeros(d), W, psi

    def _isotropic(self, data: _EMData, raw: np.ndarray) -> np.ndarray:
        """``sigma^2`` in the units of ``X`` on the standardised scale."""
        return raw / data.scale**2

    def _m_step(
        self, data: _EMData, params: Params, sums: tuple[Any, ...], iteration: int
    ) -> Params:
        zz, xz, xx = sums
        d, q1 = xz.shape
        A = zz.reshape(d, q1, q1)
        A = 0.5 * (A + np.swapaxes(A, 1, 2))
        coef = np.linalg.solve(A, xz[:, :, None])[:, :, 0]  # (d, q + 1)
        sse = np.maximum(xx - (coef * xz).sum(axis=1), 0.0)
        counts = self._counts
        nu = float(self.noise_prior)
        if self.noise == "isotropic":
            s2 = data.scale**2
            # sigma^2 = sum_k s_k^2 SSE_k / sum_k n_k (plus the prior, on the
            # average observed variance), psi_k = sigma^2 / s_k^2.
            sigma2 = float(
                (np.sum(s2 * sse) + nu * _NOISE_PRIOR_SCALE * float(np.mean(s2)))
                / (np.sum(counts) + nu)
            )
            psi = self._isotropic(data, np.full(d, sigma2))
        else:
            psi = _noise_map(sse, counts, nu)
        psi = np.maximum(psi, 1e-12)
        return coef[:, q1 - 1].copy(), np.ascontiguousarray(coef[:, : q1 - 1]), psi

    def _log_prior(self, data: _EMData, params: Params) -> float:
        # The noise variances' own prior replaces the shared covariance prior
        # (the factor model has no full covariance to put it on).
        psi = params[-1]
        nu = float(self.noise_prior)
        if self.noise == "isotropic":
            sigma2 = float(psi[0] * data.scale[0] ** 2)
            return _noise_log_prior(
                np.array([sigma2 / float(np.mean(data.scale**2))]), nu
            )
        return _noise_log_prior(psi, nu)

    def _valid_params(self, data: _EMData, params: Params) -> Params | None:
        if not all(np.all(np.isfinite(a)) for a in params):
            return None
        if not np.all(params[-1] > 1e-10):
            return None
        return params

    def _feature_changes(self, data: _EMData, change: Params) -> np.ndarray:
        dm, dW, dpsi = change
        return np.sqrt(dm**2 + (dW**2).sum(axis=1) + dpsi**2)

    def _not_converged_message(self, data: _EMData, run: Any) -> str:
        message = super()._not_converged_message(data, run)
        return message.replace(
            "mean and covariance still moved most", "parameters still moved most"
        ).replace(
            "set ridge (e.g. 1e-2) if it is nearly collinear with others",
            "raise noise_prior if a feature is nearly explained by the factors",
        )

    def _store(self, data: _EMData, params: Params) -> None:
        mu, W, psi = params
        self.mean_ = data.center + data.scale * mu
        self.loadings_ = W * data.scale[:, None]
        self.noise_variance_ = psi * data.scale**2
        self.covariance_ = self.loadings_ @ self.loadings_.T + np.diag(
            self.noise_variance_
        )
        self.n_patterns_ = data.n_patterns

    # -- conditionals ------------------------------------------------------
    def _conditionals(self, X: np.ndarray) -> FactorConditionals:
        return FactorConditionals.from_factors(
            X, self.mean_, self.loadings_, self.noise_variance_
        )
