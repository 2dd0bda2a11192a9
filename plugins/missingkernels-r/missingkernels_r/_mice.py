"""``r_mice``: multiple imputation draws of R's mice as conditionals."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np

from missingkernels.conditionals import (
    GaussianConditionals,
    SampleConditionals,
    group_patterns,
)
from missingkernels.densities import BaseDensity
from missingkernels.utils import (
    Interval,
    RowStreams,
    describe_features,
    integer_seeds,
    row_keys,
)

from ._session import (
    RError,
    call_r,
    feature_names,
    name_features,
    require_r_package,
    to_r_matrix,
)

__all__ = ["RMiceDensity"]

# Fixed R source; user values enter only as arguments. ``complete`` is taken
# from mice's namespace (importr("mice") does not expose it).
#
# The fit: one mice run on the training rows ``x``, whose m completed data
# sets are returned.
_MICE_FIT_SOURCE = """
function(x, labels, m, maxit, method, seed) {
  if (utils::packageVersion("mice") < "3.0.0") {
    stop("mice >= 3.0 is needed; installed: ",
         as.character(utils::packageVersion("mice")))
  }
  x[is.na(x)] <- NA_real_
  colnames(x) <- labels
  imp <- mice::mice(
    as.data.frame(x), m = m, maxit = maxit, method = method, seed = seed,
    printFlag = FALSE
  )
  logged <- character(0)
  events <- imp$loggedEvents
  if (!is.null(events) && nrow(events) > 0L) {
    logged <- unique(apply(events, 1L, function(r)
      paste(names(r), trimws(r), sep = "=", collapse = " ")))
  }
  draws <- vapply(
    seq_len(m), function(i) data.matrix(mice::complete(imp, i)),
    matrix(0, nrow(x), ncol(x))
  )
  list(draws = array(draws, c(nrow(x), ncol(x), m)), logged = logged)
}
"""

# New rows: each row's own chained equations, with the models of the fitted
# chains. For imputation i, the model of column j is fitted by mice's own
# method (``mice.impute.<method>``) on the training rows where j is observed,
# their other columns as completed by the fit's imputation i (``draws``), as
# mice's ``ignore`` argument fits it; it imputes the row's entry j from the
# row's other columns, current values; the row's missing entries start at
# observed training values picked at random (mice's default start) and are
# swept ``maxit`` times (once when only one is missing: the others never
# change, so more sweeps would only redraw). Each row runs on its own seed and
# touches nothing of the others: its draws are a function of the row, the fit
# and the seed only, in any batch. R's random state is put back afterwards.
_MICE_ROWS_SOURCE = """
function(x, draws, rows, labels, m, maxit, method, seeds) {
  x[is.na(x)] <- NA_real_
  rows[is.na(rows)] <- NA_real_
  n <- nrow(x)
  d <- ncol(x)
  draws <- array(draws, c(n, d, m))
  methods <- rep_len(method, d)
  observed <- !is.na(x)
  had_seed <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (had_seed) saved <- get(".Random.seed", envir = globalenv())
  on.exit(if (had_seed) {
    assign(".Random.seed", saved, envir = globalenv())
  } else if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) {
    rm(".Random.seed", envir = globalenv())
  })
  impute <- lapply(methods, function(name) {
    # Where mice itself finds it: its namespace, then the search path.
    if (identical(name, "")) NULL else
      get(paste0("mice.impute.", name), envir = asNamespace("mice"), mode = "function")
  })
  completed <- lapply(seq_len(m), function(i) matrix(draws[, , i], n, d))
  wy <- c(rep(FALSE, n), TRUE)
  # mice's default "norm" (Bayesian linear regression; van Buuren, FIMD,
  # algorithm 3.1) without refitting: its least-squares fit depends on the
  # imputation and column only, so it is computed once per (i, j) as mice's
  # estimator computes it; each draw then takes the same random numbers in
  # the same order as mice.impute.norm (sigma from rchisq, beta from rnorm,
  # the value's noise from rnorm), hence the same value.
  norm_fits <- new.env()
  norm_fit <- function(i, j) {
    key <- paste(i, j)
    fit <- norm_fits[[key]]
    if (is.null(fit)) {
      seen <- observed[, j]
      design <- cbind(1, completed[[i]][seen, -j, drop = FALSE])
      ls <- stats::lm.fit(x = design, y = x[seen, j])
      xtx <- as.matrix(crossprod(qr.R(ls$qr)))
      v <- tryCatch(solve(xtx), error = function(e) {
        solve(xtx + diag(diag(xtx) * 1e-05)) # mice's ridge, as it does
      })
      fit <- list(
        coef = ls$coefficients, rss = sum(ls$residuals^2),
        df = max(sum(seen) - ncol(design), 1), root = t(chol((v + t(v)) / 2))
      )
      norm_fits[[key]] <- fit
    }
    fit
  }
  draw_norm <- function(i, j, values) {
    fit <- norm_fit(i, j)
    sigma <- sqrt(fit$rss / stats::rchisq(1L, fit$df))
    beta <- fit$coef + (fit$root %*% stats::rnorm(length(fit$coef))) * sigma
    beta[is.na(beta)] <- 0
    sum(c(1, values) * beta) + stats::rnorm(1L) * sigma
  }
  fast <- methods == "norm"
  out <- array(0, c(nrow(rows), d, m))
  for (r in seq_len(nrow(rows))) {
    set.seed(seeds[r])
    row <- rows[r, ]
    J <- which(is.na(row))
    unimputed <- J[vapply(impute[J], is.null, logical(1L))]
    if (length(unimputed)) {
      # Left NA, to be named in the error raised on the Python side.
      out[r, , ] <- replace(row, setdiff(J, unimputed), 0)
      next
    }
    sweeps <- if (length(J) == 1L) 1L else maxit
    for (i in seq_len(m)) {
      current <- row
      for (j in J) {
        pool <- x[observed[, j], j]
        current[j] <- if (length(pool)) {
          pool[sample.int(length(pool), 1L)]
        } else {
          stats::rnorm(1L)
        }
      }
      for (t in seq_len(sweeps)) {
        for (j in J) {
          if (fast[j]) {
            current[j] <- draw_norm(i, j, current[-j])
            next
          }
          predictors <- rbind(completed[[i]][, -j, drop = FALSE], current[-j])
          colnames(predictors) <- labels[-j]
          current[j] <- impute[[j]](
            y = c(x[, j], NA_real_), ry = c(observed[, j], FALSE),
            x = predictors, wy = wy
          )
        }
      }
      out[r, , i] <- current
    }
  }
  list(draws = out)
}
"""


class _Representation:
    """The ``representation`` tag: "samples", or "gaussian" if moment matched."""

    def __get__(self, obj: Any, objtype: Any = None) -> str:
        if obj is not None and obj.moment_match:
            return "gaussian"
        return "samples"


# mice's methods for factors: their draws are category codes.
_NOMINAL_METHODS = frozenset({"logreg", "logreg.boot", "polyreg", "polr", "lda"})


class _Domain:
    """The ``domain``: "nominal" when every column uses a method for factors."""

    def __get__(self, obj: Any, objtype: Any = None) -> str:
        method = "norm" if obj is None else obj.method
        methods = [method] if isinstance(method, str) else list(method)
        if methods and all(m in _NOMINAL_METHODS for m in methods):
            return "nominal"
        return "numeric"


class RMiceDensity(BaseDensity):
    """Multiple-imputation draws of R's mice as the conditionals of rows.

    Runs ``mice::mice`` (chained equations) on the training rows: the ``m``
    completed data sets are the draws of a
    :class:`~missingkernels.conditionals.SampleConditionals` for those rows.
    Rows passed later to :meth:`conditionals` are imputed with the models of
    the fitted chains, never refitted on them: for imputation ``i``, the
    model of column ``j`` is mice's own method (``mice.impute.<method>``)
    fitted on the training rows where ``j`` is observed, their other columns
    as completed by the fit's imputation ``i``, which is what mice's
    ``ignore`` argument does for rows stacked under the training rows. The
    new row's missing entries start at observed training values picked at
    random (mice's start) and are swept ``maxit`` times, each entry drawn
    from its model given the row's current values (one sweep when a single
    entry is missing: nothing it depends on changes). The training rows'
    draws are the ones of :meth:`fit`, and later calls never change them; a
    row identical to a training row (same values, same missing entries)
    gets that row's draws.

    A new row's draws are a function of the row, the fit and the seed only,
    whatever other rows are passed with it: each distinct incomplete new row
    runs its chain on its own seed, derived from ``seed_`` and the row, and
    its draws are cached on the fitted object. (Rows run through one more
    mice call would share mice's random stream, so each row's draws would
    depend on the others.) The cost is ``m`` chains of ``maxit`` sweeps over
    the row's missing entries, each draw one call of the method on the
    training rows, all rows in one call to R: in ``benchmarks/
    bench_r_mice_predict.py`` (300 training rows of 8 columns, 100 new rows
    of which 48 incomplete) predict takes a few times what it takes with
    ``density="mice"``, where one mice run per row took 200 times as long.

    With ``moment_match=True`` the draws are summarised as
    :class:`~missingkernels.conditionals.GaussianConditionals`: each row's
    mean is the average of its draws, and each missing pattern gets the
    within-row covariance of the draws pooled over the training rows of that
    pattern (exact for a Gaussian model, where the conditional covariance
    depends on the pattern only); a pattern no training row has (or too few
    for the pooled covariance) is pooled over the rows of that pattern in the
    call.

    Needs R with the package ``mice`` (>= 3.0) and the Python package
    ``rpy2``; when one is missing, :meth:`fit` raises
    :class:`~missingkernels_r.RDependencyError` saying what to install.

    Parameters
    ----------
    m : int, default=5
        Number of imputations (draws per row).
    maxit : int, default=5
        Number of iterations of the chained equations.
    method : str or list of str, default="norm"
        mice's imputation method, for every incomplete column (str) or per
        column (list of length n_features, "" for columns not to impute).
        The default, Bayesian linear regression, draws from a predictive
        distribution, as a density needs; so do ``"pmm"``, ``"midastouch"``,
        ``"cart"``, ``"rf"``. Deterministic methods such as ``"mean"`` or
        ``"norm.predict"`` give draws without spread.
    seed : int or None, default=None
        mice's ``seed``. None draws one from NumPy's global random state at
        fit time (``seed_``), so that later calls to :meth:`conditionals` are
        reproducible for a fitted object.
    moment_match : bool, default=False
        Return Gaussian conditionals matching the draws' moments instead of
        the draws. Needs ``n_p * (m - 1) >= k`` for a pattern with ``k``
        missing features seen in ``n_p`` rows (else a ValueError says so).
    verbose : bool, default=False
        Print R's console output; it is captured and discarded otherwise.

    Attributes
    ----------
    samples_ : ndarray of shape (m, n_samples, n_features)
        The completed training rows, one per imputation.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training rows, NaN where missing: mice imputes a new row by
        running again on them with that row added, and a training row (a
        support vector) keeps its training draws (found by its values). The
        fitted density, and a model that pickles it, therefore hold the
        training table.
    seed_ : int
        The seed passed to mice.
    mean_ : ndarray of shape (n_features,)
        Mean of the completed training rows over all draws.
    covariance_ : ndarray of shape (n_features, n_features)
        Covariance (divisor n) of the completed training rows, averaged over
        draws; given to the Gaussian conditionals as the joint covariance.
    logged_events_ : list of str
        mice's ``loggedEvents`` of the training fit (e.g. removed collinear
        predictors).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    RAmeliaDensity : A single Gaussian fitted by Amelia's EM.

    References
    ----------
    .. [1] S. van Buuren and K. Groothuis-Oudshoorn, "mice: Multivariate
       Imputation by Chained Equations in R", Journal of Statistical Software
       45(3), 2011.
    .. [2] D. B. Rubin, "Multiple Imputation for Nonresponse in Surveys",
       Wiley, 1987.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels_r import RMiceDensity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.multivariate_normal([0, 5, 1], np.eye(3) + 0.5, size=100)
    >>> X[rng.random((100, 3)) < 0.2] = np.nan
    >>> density = RMiceDensity(m=4, seed=1).fit(X)
    >>> density.conditionals(X).samples.shape
    (4, 100, 3)
    >>> density.conditionals(np.array([[0.0, np.nan, 1.0]])).samples.shape
    (4, 1, 3)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "m": [Interval(Integral, 1, None, closed="left")],
        "maxit": [Interval(Integral, 1, None, closed="left")],
        "method": [str, list, tuple],
        "seed": [Interval(Integral, 0, 2**31 - 1, closed="both"), None],
        "moment_match": ["boolean"],
        "verbose": ["boolean"],
    }

    def __init__(
        self,
        m: int = 5,
        maxit: int = 5,
        method: str | list[str] = "norm",
        seed: int | None = None,
        moment_match: bool = False,
        verbose: bool = False,
    ):
        self.m = m
        self.maxit = maxit
        self.method = method
        self.seed = seed
        self.moment_match = moment_match
        self.verbose = verbose

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.seed is None
        return tags

    # The tag depends on ``moment_match``; on the class it is the default's.
    representation = _Representation()  # type: ignore[assignment]
    domain = _Domain()  # type: ignore[assignment]

    def _method(self, d: int) -> str | list[str]:
        name = type(self).__name__
        method = self.method
        if isinstance(method, str):
            if not method:
                raise ValueError(f"{name}: method must be a non-empty string.")
            return method
        method = list(method)
        if len(method) != d or not all(isinstance(v, str) for v in method):
            raise ValueError(
                f"{name}: method must be a str or a list of {d} str (one per "
                f"feature, '' for columns not to impute); got {self.method!r}."
            )
        return method

    def _run_mice(self, X: np.ndarray, rows: np.ndarray | None = None) -> Any:
        """mice's draws, shape (m, n, d): of the training rows ``X`` (``rows``
        None: one mice run), or of each of ``rows`` imputed alone by the
        models of the fitted chains (``X`` the training rows, the draws those
        of the fit) with a seed derived from the row (:meth:`_row_seeds`)."""
        target = X if rows is None else rows
        common = {
            "x": to_r_matrix(X),
            "labels": feature_names(X.shape[1]).tolist(),
            "m": int(self.m),
            "maxit": int(self.maxit),
            "method": self._method(X.shape[1]),
        }
        if rows is None:
            key, source = "mice_fit", _MICE_FIT_SOURCE
            args = {**common, "seed": int(self.seed_)}
        else:
            key, source = "mice_rows", _MICE_ROWS_SOURCE
            # (m, n, d) -> R's n x d x m array, as a vector in R's order.
            fitted = np.moveaxis(self.samples_, 0, 2).ravel(order="F")
            args = {
                **common,
                "draws": np.ascontiguousarray(fitted, dtype=np.float64),
                "rows": to_r_matrix(rows),
                "seeds": np.asarray(self._row_seeds(rows), dtype=np.int32),
            }
        result = call_r(
            key,
            source,
            args,
            what=f"{type(self).__name__} (mice::mice)",
            verbose=self.verbose,
            estimator=self,
        )
        draws = np.asarray(result["draws"], dtype=np.float64)
        draws = draws.reshape(*target.shape, int(self.m), order="F")
        samples = np.ascontiguousarray(np.moveaxis(draws, 2, 0))
        logged = [
            name_features(str(v), self) for v in np.atleast_1d(result.get("logged", []))
        ]
        left = ~np.isfinite(samples)
        if left.any():
            cols = np.flatnonzero(left.any(axis=(0, 1)))
            raise RError(
                f"{type(self).__name__}: mice left {describe_features(self, cols)} "
                "unimputed, usually because it found them constant or collinear "
                "and removed them, or their method is ''. mice's logged events: "
                f"{logged or 'none'}. Drop or decorrelate these features, or "
                "choose another method."
            )
        observed = ~np.isnan(target)
        if not np.array_equal(
            samples[:, observed],
            np.broadcast_to(target[observed], (int(self.m), int(observed.sum()))),
        ):
            raise RError(
                f"{type(self).__name__}: mice changed observed entries; the "
                "R package's output is not the one this plugin expects."
            )
        return samples, logged

    def _row_seeds(self, rows: np.ndarray) -> np.ndarray:
        """mice's seed for each row: a function of ``seed_`` and of the row
        (its values and missing entries) only."""
        streams = RowStreams(row_keys(rows, np.isnan(rows)), int(self.seed_))
        u = streams.uniform(draw=0, size=1)[:, 0]
        return 1 + (u * (2**31 - 2)).astype(np.int64)

    def _fit(self, X: np.ndarray) -> None:
        require_r_package("mice", type(self).__name__)
        self._method(X.shape[1])
        self.seed_ = (
            int(self.seed) if self.seed is not None else int(integer_seeds(None, 1)[0])
        )
        if np.isnan(X).any():
            samples, logged = self._run_mice(X)
        else:
            samples, logged = np.broadcast_to(X, (int(self.m), *X.shape)).copy(), []
        self.X_fit_ = X.copy()
        self._row_draws: dict[bytes, np.ndarray] = {}
        self._pattern_covariances: dict[bytes, np.ndarray] | None = None
        self.samples_ = samples
        self.logged_events_ = logged
        flat = samples.reshape(-1, X.shape[1])
        self.mean_ = flat.mean(axis=0)
        centred = samples - samples.mean(axis=1, keepdims=True)
        self.covariance_ = np.einsum("anj,ank->jk", centred, centred) / (
            samples.shape[0] * samples.shape[1]
        )

    def _samples(self, X: np.ndarray) -> np.ndarray:
        samples = np.broadcast_to(X, (int(self.m), *X.shape)).copy()
        # Rows identical to a training row (e.g. support vectors at predict
        # time) keep that row's training draws, so the kernel between them and
        # new rows uses the draws the model was trained on.
        lookup: dict[bytes, int] = {}
        for i, key in enumerate(_row_keys(self.X_fit_)):
            lookup.setdefault(key, i)
        row_keys_ = _row_keys(X)
        known = np.array([lookup.get(key, -1) for key in row_keys_], dtype=np.intp)
        hit = np.flatnonzero(known >= 0)
        samples[:, hit] = self.samples_[:, known[hit]]
        rows = np.flatnonzero((known < 0) & np.isnan(X).any(axis=1))
        if not rows.size:
            return samples
        # Other incomplete rows: each distinct one imputed alone (see
        # _MICE_ROWS_SOURCE), once per fitted density.
        cache: dict[bytes, np.ndarray] = self.__dict__.setdefault("_row_draws", {})
        keys = [row_keys_[r] for r in rows.tolist()]
        todo: dict[bytes, int] = {}
        for r, key in zip(rows.tolist(), keys, strict=True):
            if key not in cache:
                todo.setdefault(key, r)
        if todo:
            new, _ = self._run_mice(self.X_fit_, X[list(todo.values())])
            for k, key in enumerate(todo):
                cache[key] = new[:, k]
        for r, key in zip(rows.tolist(), keys, strict=True):
            samples[:, r] = cache[key]
        return samples

    def _conditionals(self, X: np.ndarray) -> Any:
        samples = self._samples(X)
        missing = np.isnan(X)
        if not self.moment_match:
            return SampleConditionals(samples=samples, missing=missing)
        return self._moment_matched(samples, missing)

    def _moment_matched(
        self, samples: np.ndarray, missing: np.ndarray
    ) -> GaussianConditionals:
        means = np.where(missing, samples.mean(axis=0), samples[0])
        patterns, index = group_patterns(missing)
        fitted = self._training_covariances()
        covs = []
        for p, pattern in enumerate(patterns):
            known = fitted.get(pattern.tobytes())
            if known is not None:
                covs.append(known)
                continue
            rows = np.flatnonzero(index == p)
            covs.append(self._pooled_covariance(samples, means, rows, pattern))
        return GaussianConditionals(
            means=means,
            missing=missing,
            patterns=patterns,
            pattern_index=index,
            covariances=tuple(covs),
            covariance=self.covariance_,
        )

    def _training_covariances(self) -> dict[bytes, np.ndarray]:
        """The covariance of each missing pattern of the training rows, pooled
        over them (computed once): a new row with such a pattern gets it, so
        its conditionals do not depend on the other rows of the batch.
        Patterns with too few training rows for it are left out."""
        table = self.__dict__.get("_pattern_covariances")
        if table is None:
            table = {}
            missing = np.isnan(self.X_fit_)
            means = np.where(missing, self.samples_.mean(axis=0), self.X_fit_)
            patterns, index = group_patterns(missing)
            for p, pattern in enumerate(patterns):
                rows = np.flatnonzero(index == p)
                if rows.size * (int(self.m) - 1) >= pattern.sum():
                    table[pattern.tobytes()] = self._pooled_covariance(
                        self.samples_, means, rows, pattern
                    )
            self._pattern_covariances = table
        return table

    def _pooled_covariance(
        self, samples: np.ndarray, means: np.ndarray, rows: np.ndarray, pattern: Any
    ) -> np.ndarray:
        """The within-row covariance of the draws of ``rows`` on the missing
        entries of ``pattern``, pooled over the rows."""
        m = samples.shape[0]
        J = np.flatnonzero(pattern)
        if J.size == 0:
            return np.zeros((0, 0))
        dof = rows.size * (m - 1)
        if dof < J.size:
            raise ValueError(
                f"{type(self).__name__}: moment matching needs at least "
                f"{J.size} degrees of freedom for a pattern with {J.size} "
                f"missing features, but its {rows.size} row(s) with m={m} "
                f"draws give {rows.size} * (m - 1) = {dof}. Increase m to at "
                f"least {-(-J.size // rows.size) + 1}, or use "
                "moment_match=False (the draws themselves)."
            )
        dev = samples[:, rows][:, :, J] - means[rows][:, J]
        C = np.einsum("anj,ank->jk", dev, dev) / dof
        return np.asarray(0.5 * (C + C.T))


def _row_keys(X: np.ndarray) -> list[bytes]:
    """Hashable keys of rows: equal values and equal missing entries."""
    canonical = np.where(np.isnan(X), np.nan, X + 0.0)  # one NaN, no -0.0
    return [row.tobytes() for row in np.ascontiguousarray(canonical)]
