"""``r_amelia``: the EM estimate of R's Amelia II as a Gaussian density."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from missingkernels.utils import Interval

from ._gaussian import _RGaussianDensity
from ._session import RError, call_r, feature_names, require_r_package, to_r_matrix

__all__ = ["RAmeliaDensity"]

# Fixed R source; user values enter only as arguments. Amelia returns mu and
# covMatrices of its EM chain; ``boot.type`` is passed by its R name
# (rpy2's translated ``boot_type`` would be silently swallowed by ``...``).
_AMELIA_SOURCE = """
function(x, labels, tolerance, max_iter, empri, autopri) {
  x[is.na(x)] <- NA_real_
  colnames(x) <- labels
  out <- Amelia::amelia(
    x, m = 1L, p2s = 0L, boot.type = "none", tolerance = tolerance,
    emburn = c(0L, max_iter), empri = empri, autopri = autopri
  )
  if (!inherits(out, "amelia") || !identical(as.integer(out$code), 1L)) {
    return(list(code = as.integer(out$code), message = as.character(out$message)))
  }
  hist <- out$iterHist[[1]]
  if (!is.matrix(hist)) hist <- matrix(0, 0, 3)
  list(
    code = 1L, message = as.character(out$message),
    mu = as.numeric(out$mu[, 1]),
    covariance = matrix(out$covMatrices[, , 1], ncol(x), ncol(x)),
    history = hist
  )
}
"""


class RAmeliaDensity(_RGaussianDensity):
    """Multivariate normal fitted by the EM algorithm of R's Amelia II.

    Calls ``Amelia::amelia(x, m = 1, boot.type = "none")`` on the training rows
    and reads the mean and covariance of its EM chain. Amelia reports them on
    its internal scale: every feature standardised by the mean and standard
    deviation of its observed entries, and the columns reordered by increasing
    number of missing entries. They are transformed back to the original
    scale and column order here, giving ``mean_`` and ``covariance_`` of the
    maximum-likelihood normal (the same model as ``gaussian_em``), from which
    :meth:`conditionals` returns
    :class:`~missingkernels.conditionals.GaussianConditionals`.

    Needs R with the package ``Amelia`` and the Python package ``rpy2``; when
    one is missing, :meth:`fit` raises
    :class:`~missingkernels_r.RDependencyError` saying what to install.

    Parameters
    ----------
    tolerance : float, default=1e-4
        Amelia's ``tolerance``: EM stops when no mean or covariance entry
        (on the standardised scale) changes by more than this.
    max_iter : int, default=1000
        Maximum number of EM iterations (Amelia's ``emburn = c(0, max_iter)``).
        A :class:`~sklearn.exceptions.ConvergenceWarning` is issued when it is
        reached before ``tolerance``.
    empri : int, default=0
        Amelia's empirical (ridge) prior, in pseudo-observations; shrinks the
        correlations towards zero. Amelia's compiled EM truncates it to an
        integer, hence the integer type.
    autopri : float, default=0.0
        Amelia's ``autopri``: when the chain behaves non-monotonically, Amelia
        adds a ridge prior of up to ``autopri * n``. Amelia's own default is
        0.05; it is 0 here so the estimate stays the maximum-likelihood one
        unless asked otherwise.
    verbose : bool, default=False
        Print R's console output; it is captured and discarded otherwise.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Estimated mean, original scale and order.
    covariance_ : ndarray of shape (n_features, n_features)
        Estimated covariance, original scale and order (divisor n).
    n_iter_ : int
        Number of EM iterations Amelia ran (0 when no entry is missing).
    converged_ : bool
        Whether ``tolerance`` was reached within ``max_iter`` iterations.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    missingkernels.densities.GaussianEMDensity : The same estimate in Python.
    RNormDensity : The estimate of R's ``norm``.

    Notes
    -----
    Amelia refuses data without missing entries (its error code 39). The
    maximum-likelihood normal is then the sample mean and covariance (divisor
    ``n``), which are computed directly, without R, and ``n_iter_`` is 0.

    References
    ----------
    .. [1] J. Honaker, G. King and M. Blackwell, "Amelia II: A Program for
       Missing Data", Journal of Statistical Software 45(7), 2011.
    .. [2] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood
       from incomplete data via the EM algorithm", J. R. Stat. Soc. B 39(1),
       1-38, 1977.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels_r import RAmeliaDensity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.multivariate_normal([0, 5], [[1, 0.8], [0.8, 2]], size=200)
    >>> X[rng.random(200) < 0.3, 1] = np.nan
    >>> density = RAmeliaDensity(tolerance=1e-8).fit(X)
    >>> density.mean_.shape, density.covariance_.shape, bool(density.converged_)
    ((2,), (2, 2), True)
    >>> density.conditionals(np.array([[1.0, np.nan]])).covariances[0].shape
    (1, 1)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "tolerance": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "empri": [Interval(Integral, 0, None, closed="left")],
        "autopri": [Interval(Real, 0, 1, closed="both")],
        "verbose": ["boolean"],
    }

    def __init__(
        self,
        tolerance: float = 1e-4,
        max_iter: int = 1000,
        empri: int = 0,
        autopri: float = 0.0,
        verbose: bool = False,
    ):
        self.tolerance = tolerance
        self.max_iter = max_iter
        self.empri = empri
        self.autopri = autopri
        self.verbose = verbose

    def _fit(self, X: np.ndarray) -> None:
        name = type(self).__name__
        require_r_package("Amelia", name)
        Xu = self._informative_rows(X)
        d = Xu.shape[1]
        missing = np.isnan(Xu)
        if not missing.any():
            self._set_moments(Xu.mean(axis=0), np.cov(Xu, rowvar=False, bias=True))
            self.n_iter_, self.converged_ = 0, True
            return
        # Hand Amelia its own column order (fewest missing first, stable), so
        # its internal reordering is the identity and ours is explicit.
        order = np.argsort(missing.sum(axis=0), kind="stable")
        Xo = Xu[:, order]
        result = call_r(
            "amelia",
            _AMELIA_SOURCE,
            {
                "x": to_r_matrix(Xo),
                "labels": feature_names(d)[order].tolist(),
                "tolerance": float(self.tolerance),
                "max_iter": int(self.max_iter),
                "empri": int(self.empri),
                "autopri": float(self.autopri),
            },
            what=f"{name} (Amelia::amelia)",
            verbose=self.verbose,
            estimator=self,
        )
        code = int(np.asarray(result["code"]).reshape(-1)[0])
        message = " ".join(str(m) for m in np.atleast_1d(result["message"]))
        if code != 1:
            hint = (
                " Increase empri (a ridge prior, e.g. 1% of the rows) or drop "
                "collinear features."
                if code == 2
                else ""
            )
            raise RError(f"{name}: Amelia failed (code {code}): {message}{hint}")
        # Amelia's standardisation: observed mean and sd (divisor n - 1).
        center = np.nanmean(Xo, axis=0)
        scale = np.nanstd(Xo, axis=0, ddof=1)
        mean_o = center + scale * np.asarray(result["mu"], dtype=np.float64)
        cov_o = np.asarray(result["covariance"], dtype=np.float64) * np.outer(
            scale, scale
        )
        history = np.asarray(result["history"], dtype=np.float64).reshape(-1, 3)
        mean = np.empty(d)
        mean[order] = mean_o
        cov = np.empty((d, d))
        cov[np.ix_(order, order)] = cov_o
        self._set_moments(mean, cov)
        self.n_iter_ = int(history.shape[0])
        # Column 1 of Amelia's history: parameters still moving by > tolerance.
        self.converged_ = bool(history.shape[0] == 0 or history[-1, 0] == 0)
        if not self.converged_:
            warnings.warn(
                f"{name}: Amelia's EM did not converge in max_iter="
                f"{self.max_iter} iterations ({int(history[-1, 0])} parameters "
                f"still changed by more than tolerance={self.tolerance:g}); "
                "increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
