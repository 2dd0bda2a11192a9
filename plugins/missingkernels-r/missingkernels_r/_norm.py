"""``r_norm``: the EM estimate of R's ``norm`` (Schafer) as a Gaussian density."""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from missingkernels.utils import Interval

from ._gaussian import _RGaussianDensity
from ._session import call_r, require_r_package, to_r_matrix

__all__ = ["NORM_MAX_FEATURES", "RNormDensity"]

#: R's ``norm`` gives silently wrong results above this many variables.
NORM_MAX_FEATURES = 30

# Fixed R source; user values enter only as arguments. ``fns`` is NULL in
# normal use (norm's own functions); tests substitute stand-ins to check the
# bridge where norm is not installed.
_NORM_SOURCE = """
function(x, maxits, criterion, tau, m, mu0, lambdainv, fns) {
  if (is.null(fns)) {
    fns <- list(prelim = norm::prelim.norm, em = norm::em.norm,
                getparam = norm::getparam.norm)
  }
  x[is.na(x)] <- NA_real_
  s <- fns$prelim(x)
  theta <- if (is.null(tau)) {
    fns$em(s, showits = FALSE, maxits = maxits, criterion = criterion)
  } else {
    fns$em(s, showits = FALSE, maxits = maxits, criterion = criterion,
           prior = list(tau, m, mu0, lambdainv))
  }
  p <- fns$getparam(s, theta, corr = FALSE)
  list(mu = as.numeric(p$mu), sigma = as.matrix(p$sigma))
}
"""

_PRIOR_KEYS = ("tau", "m", "mu0", "lambdainv")


class RNormDensity(_RGaussianDensity):
    """Multivariate normal fitted by the EM algorithm of R's ``norm``.

    Runs ``norm::prelim.norm``, ``norm::em.norm`` and
    ``norm::getparam.norm(corr = FALSE)`` on the training rows: the mean and
    covariance on the original scale, from which :meth:`conditionals` returns
    :class:`~missingkernels.conditionals.GaussianConditionals` (the same
    conditionals as ``gaussian_em``).

    ``norm`` gives silently wrong results above 30 variables, so wider data
    are refused before R is started; use ``r_amelia`` or ``gaussian_em``.
    Needs R with the package ``norm`` (not packaged by Debian: in R,
    ``install.packages("norm")``) and the Python package ``rpy2``; when one is
    missing, :meth:`fit` raises :class:`~missingkernels_r.RDependencyError`
    saying what to install.

    Parameters
    ----------
    maxits : int, default=1000
        ``em.norm``'s maximum number of EM iterations. ``norm`` does not
        report whether it converged.
    criterion : float, default=1e-4
        ``em.norm``'s convergence criterion: the largest relative change of a
        mean, variance or covariance between two iterations.
    prior : dict or None, default=None
        ``em.norm``'s ``prior``: None for the uniform prior (maximum
        likelihood), or the normal-inverted Wishart hyperparameters
        ``{"tau": float, "m": float, "mu0": array (n_features,),
        "lambdainv": array (n_features, n_features)}`` for a posterior mode.
        As in ``norm``, ``mu0`` and ``lambdainv`` refer to the data after
        each column is centred and scaled to unit variance.
    verbose : bool, default=False
        Print R's console output; it is captured and discarded otherwise.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Estimated mean.
    covariance_ : ndarray of shape (n_features, n_features)
        Estimated covariance (divisor n under the uniform prior).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    missingkernels.densities.GaussianEMDensity : The same estimate in Python.
    RAmeliaDensity : The estimate of R's Amelia II (no limit on features).

    References
    ----------
    .. [1] J. L. Schafer, "Analysis of Incomplete Multivariate Data", Chapman
       & Hall, 1997, ch. 5 (the algorithms of the R package ``norm``).
    .. [2] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood
       from incomplete data via the EM algorithm", J. R. Stat. Soc. B 39(1),
       1-38, 1977.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels_r import RNormDensity
    >>> density = RNormDensity(maxits=500, criterion=1e-6)
    >>> density.get_params()["maxits"]
    500
    >>> density.fit(np.ones((40, 31)))  # norm breaks silently above 30 features
    Traceback (most recent call last):
    ...
    ValueError: RNormDensity: R's norm gives silently wrong results above 30 ...
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "maxits": [Interval(Integral, 1, None, closed="left")],
        "criterion": [Interval(Real, 0, None, closed="neither")],
        "prior": [None, dict],
        "verbose": ["boolean"],
    }

    def __init__(
        self,
        maxits: int = 1000,
        criterion: float = 1e-4,
        prior: dict[str, Any] | None = None,
        verbose: bool = False,
    ):
        self.maxits = maxits
        self.criterion = criterion
        self.prior = prior
        self.verbose = verbose

    def _norm_functions(self) -> Any:
        """R functions to use instead of norm's (None: norm's own)."""
        return None

    def _fit(self, X: np.ndarray) -> None:
        name = type(self).__name__
        d = X.shape[1]
        # Refuse before touching R: norm's answer would be wrong, not an error.
        if d > NORM_MAX_FEATURES:
            raise ValueError(
                f"{name}: R's norm gives silently wrong results above "
                f"{NORM_MAX_FEATURES} variables, and X has {d} features. Use "
                "density='r_amelia' (R's Amelia II, same model) or "
                "density='gaussian_em' (the same EM in Python) instead."
            )
        prior = self._checked_prior(d)
        Xu = self._informative_rows(X)
        functions = self._norm_functions()
        if functions is None:
            require_r_package("norm", name)
        result = call_r(
            "norm",
            _NORM_SOURCE,
            {
                "x": to_r_matrix(Xu),
                "maxits": int(self.maxits),
                "criterion": float(self.criterion),
                **prior,
                "fns": functions,
            },
            what=f"{name} (norm::em.norm)",
            verbose=self.verbose,
        )
        self._set_moments(result["mu"], result["sigma"])

    def _checked_prior(self, d: int) -> dict[str, Any]:
        if self.prior is None:
            return dict.fromkeys(_PRIOR_KEYS)
        name = type(self).__name__
        if not isinstance(self.prior, Mapping) or set(self.prior) != set(_PRIOR_KEYS):
            got = sorted(self.prior) if isinstance(self.prior, Mapping) else None
            raise ValueError(
                f"{name}: prior must be None (uniform prior) or a dict with "
                f"exactly the keys {list(_PRIOR_KEYS)} (em.norm's normal-inverted "
                f"Wishart hyperparameters); got keys {got}."
            )
        out: dict[str, Any] = {}
        for key, shape in (
            ("tau", ()),
            ("m", ()),
            ("mu0", (d,)),
            ("lambdainv", (d, d)),
        ):
            value = np.asarray(self.prior[key], dtype=np.float64)
            if value.shape != shape or not np.all(np.isfinite(value)):
                raise ValueError(
                    f"{name}: prior[{key!r}] must be a finite array of shape "
                    f"{shape} for X with {d} features; got {self.prior[key]!r}."
                )
            out[key] = float(value) if shape == () else value
        if not out["tau"] > 0 or not out["m"] > 0:
            raise ValueError(
                f"{name}: prior['tau'] and prior['m'] must be positive; got "
                f"{out['tau']} and {out['m']}."
            )
        lam = out["lambdainv"]
        if not np.allclose(lam, lam.T):
            raise ValueError(f"{name}: prior['lambdainv'] must be symmetric.")
        return out
