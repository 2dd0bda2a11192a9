"""The conjugate prior of the EM densities and the BIC of their fits.

Small functions that any EM density can reuse (the Gaussian ones, the
latent-class one, a factor-analytic one):

- :class:`CovariancePrior`: an inverse-Wishart-type prior on a covariance,
  ``log p(S) = -rows/2 log det S - 1/2 tr(diag(scale) S^-1)`` (up to a
  constant). With the expected scatter ``A`` of ``N`` (weighted) rows about
  the mean, the M-step's maximiser is ``(A + diag(scale)) / (N + rows)``
  (:meth:`CovariancePrior.mode`). ``rows = m`` and ``scale = m * c`` is ``m``
  pseudo-rows whose scatter is ``diag(c)``: the covariance then moves from
  the data's towards ``diag(c)`` by the weight ``m / (N + m)`` (correlations
  shrink, variances stay when ``c`` holds the observed variances). It is
  the inverse-Wishart ``IW(nu0, Lambda0)`` of the multiple-imputation
  literature with ``nu0 = m - d - 1`` and ``Lambda0 = m diag(c)`` (proper
  when ``m > 2d``; improper but with a proper posterior below that).
  ``rows = 0`` and ``scale = n * r`` is the ridge ``S_ML + r I``.
- :func:`dirichlet_log_prior`: ``sum alpha log p``, the log density (up to a
  constant) of a Dirichlet with parameters ``alpha + 1``, whose mode adds
  ``alpha`` to the counts.
- :func:`bic` and :func:`n_parameters`: the Bayesian information criterion
  of an observed-data log-likelihood and the free parameters of a Gaussian
  or latent-class mixture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg

__all__ = [
    "DEFAULT_PRIOR_ROWS",
    "CovariancePrior",
    "auto_prior_rows",
    "bic",
    "dirichlet_log_prior",
    "n_parameters",
    "resolve_prior_rows",
]

#: The default strength of the prior of the EM densities: ``"auto"``, that
#: is :func:`auto_prior_rows` pseudo-rows.
DEFAULT_PRIOR_ROWS = "auto"


def auto_prior_rows(n_features: int) -> float:
    """``max(10, n_features)``: the strength of ``prior_rows="auto"``.

    Chosen by simulation (``benchmarks/bench_prior.py``): 10 pseudo-rows did
    best or near best up to 8 features, 30 at 40 features.
    """
    return float(max(10, int(n_features)))


def resolve_prior_rows(prior_rows: float | str, n_features: int) -> float:
    """The pseudo-rows of a ``prior_rows`` parameter (a number or "auto")."""
    if isinstance(prior_rows, str):
        return auto_prior_rows(n_features)
    return float(prior_rows)


@dataclass(frozen=True, eq=False)
class CovariancePrior:
    """``log p(S) = -rows/2 log det S - 1/2 tr(diag(scale) S^-1)``.

    Parameters
    ----------
    rows : float
        Pseudo-rows (the weight of ``log det S``); 0 for a ridge alone.
    scale : ndarray of shape (d,)
        The diagonal prior scatter added to the M-step's scatter.
    """

    rows: float
    scale: np.ndarray

    @classmethod
    def of(
        cls, prior_rows: float, ridge: float, n: float, centre: np.ndarray
    ) -> CovariancePrior:
        """``prior_rows`` pseudo-rows of scatter ``diag(centre)``, plus the
        ridge ``ridge * I`` of a fit on ``n`` rows (``n * ridge`` added to
        the scatter's diagonal)."""
        centre = np.asarray(centre, dtype=np.float64)
        return cls(
            float(prior_rows), float(prior_rows) * centre + float(n) * float(ridge)
        )

    @property
    def active(self) -> bool:
        """Whether the prior changes anything (else maximum likelihood)."""
        return bool(self.rows > 0 or np.any(self.scale > 0))

    def split(self, K: int) -> CovariancePrior:
        """The prior of one of ``K`` components sharing this one evenly."""
        return CovariancePrior(self.rows / K, self.scale / K)

    def mode(self, scatter: np.ndarray, weight: float) -> np.ndarray:
        """The covariance maximising ``-weight/2 log det S - 1/2 tr(S^-1
        scatter) + log p(S)``: ``(scatter + diag(scale)) / (weight + rows)``,
        symmetrised."""
        S = np.array(scatter, dtype=np.float64, copy=True)
        S[np.diag_indices(len(S))] += self.scale
        S /= weight + self.rows
        return 0.5 * (S + S.T)

    def log_density(self, covariances: np.ndarray) -> float:
        """``log p`` summed over ``covariances`` ((d, d) or (K, d, d)), up to a
        constant; ``-inf`` if one is not positive definite."""
        if not self.active:
            return 0.0
        covariances = np.asarray(covariances)
        if covariances.ndim == 2:
            covariances = covariances[None]
        total = 0.0
        for S in covariances:
            try:
                factor = linalg.cho_factor(S, lower=True, check_finite=False)
            except linalg.LinAlgError:
                return -np.inf
            logdet = 2.0 * float(np.sum(np.log(np.diag(factor[0]))))
            inverse_diag = np.diag(linalg.cho_solve(factor, np.eye(len(S))))
            total -= 0.5 * (self.rows * logdet + float(self.scale @ inverse_diag))
        return total


def dirichlet_log_prior(p: np.ndarray, alpha: np.ndarray | float) -> float:
    """``sum alpha * log p`` over the entries with ``alpha > 0`` (``-inf``
    where such a ``p`` is 0): the log density, up to a constant, of a
    Dirichlet with parameters ``alpha + 1``."""
    p, alpha = np.broadcast_arrays(np.asarray(p, float), np.asarray(alpha, float))
    used = alpha > 0
    if not used.any():
        return 0.0
    with np.errstate(divide="ignore"):
        return float(np.sum(alpha[used] * np.log(p[used])))


def n_parameters(n_components: int, n_numeric: int, levels: Sequence[int] = ()) -> int:
    """Free parameters of a mixture of ``n_components`` classes, each with a
    mean and a full covariance on ``n_numeric`` columns and a PMF on every
    nominal column (``levels``: its number of categories).

    ``K - 1`` weights, ``K d`` means, ``K d (d + 1) / 2`` covariances and
    ``K (C_v - 1)`` probabilities per nominal column.
    """
    K, d = int(n_components), int(n_numeric)
    per_class = d + d * (d + 1) // 2 + sum(int(c) - 1 for c in levels)
    return K - 1 + K * per_class


def bic(loglik: float, n_params: int, n_rows: int) -> float:
    """``-2 loglik + n_params log n_rows`` (Schwarz, 1978): lower is better."""
    return -2.0 * float(loglik) + float(n_params) * float(np.log(n_rows))
