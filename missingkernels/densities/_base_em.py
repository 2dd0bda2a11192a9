"""What the EM densities share: standardisation, the iteration loop, the prior.

:class:`_BaseEMDensity` fits on rows standardised by their observed moments,
runs EM from one or more starting points until the largest parameter change
of an EM step is at most ``tol`` (or, when ``tol_loglik`` is set, the
objective's relative change is at most ``tol_loglik``), and keeps the start
with the highest penalised log-likelihood (the log-likelihood plus the log
prior of :mod:`._prior`: MAP-EM). A maximum-likelihood fit (no prior) whose
covariance turns singular restarts with the smallest prior, a ridge. The loop
is plain EM or SQUAREM (Varadhan & Roland, 2008), chosen by the density's
``acceleration``. A subclass supplies the starts, one EM step and the fitted
attributes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._missing_patterns import PatternGroups, pattern_groups
from .._numerics import constant_features
from .._validation import describe_features
from ._base import BaseDensity
from ._prior import CovariancePrior, resolve_prior_rows

__all__ = ["SingularCovarianceWarning"]

# Relative eigenvalue floor below which the (standardised) covariance is
# treated as singular: beyond this the conditionals lose most of their digits.
_SINGULAR_RCOND = 1e-12
# Ridge used, with a warning, when the covariance of a maximum-likelihood fit
# (no prior, ridge=0) is singular.
_AUTO_RIDGE = 1e-6
# Prior centre (standardised scale) of a feature constant on its observed
# entries: its fitted variance stays that small in its own units.
_CONSTANT_CENTRE = 1e-6

Params = tuple[np.ndarray, ...]


class SingularCovarianceWarning(UserWarning):
    """Warned when a fitted covariance is singular and a ridge had to be added."""


class _SingularCovarianceError(ArithmeticError):
    """Internal: the M-step produced a singular covariance."""


@dataclass(frozen=True, eq=False)
class _EMData:
    """The rows an EM run fits, on the standardised scale, and their prior.

    In memory, ``Z0`` and ``groups`` hold the rows. Out of core, ``source``
    holds the raw row blocks of a dask array; each pass standardises them
    block by block (:func:`_em_sums`).
    """

    Z0: np.ndarray | None  # (n, d) standardised rows, zero where missing
    groups: PatternGroups | None  # pattern_groups of the missing entries
    center: np.ndarray  # (d,) the standardisation: X = center + scale * Z
    scale: np.ndarray  # (d,)
    ridge: float
    n: int  # rows with an observed entry
    n_patterns: int  # distinct missing patterns among them
    source: Any = None  # dask array of row blocks, or None
    prior_rows: float = 0.0  # pseudo-rows of the covariance prior
    centre: np.ndarray | None = None  # (d,) its diagonal, standardised scale

    @property
    def prior(self) -> CovariancePrior:
        """The covariance prior: ``prior_rows`` pseudo-rows and the ridge,
        both of scatter ``diag(centre)``."""
        d = len(self.center)
        centre = np.ones(d) if self.centre is None else self.centre
        return CovariancePrior.of(self.prior_rows, self.ridge, self.n, centre)


def _standardise(
    X: np.ndarray, center: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, PatternGroups]:
    """Rows with an observed entry, standardised and zero where missing, and
    their pattern groups."""
    X = np.asarray(X, dtype=np.float64)
    used = ~np.isnan(X).all(axis=1)
    Z = (X[used] - center) / scale
    mask = np.isnan(Z)
    return np.where(mask, 0.0, Z), pattern_groups(mask)


def _standardised_sums(
    block: np.ndarray,
    center: np.ndarray,
    scale: np.ndarray,
    function: Callable[..., tuple[Any, ...]],
    *args: Any,
) -> tuple[Any, ...]:
    Z0, groups = _standardise(block, center, scale)
    return function(Z0, groups, *args)


def _em_sums(
    data: _EMData,
    function: Callable[..., tuple[Any, ...]],
    *args: Any,
    on_blocks: Callable[..., tuple[Any, ...]] | None = None,
) -> tuple[Any, ...]:
    """``function(Z0, groups, *args)`` (sums over rows) over all the rows.

    In memory one call; out of core one call per row block, the sums added
    in block order (the E-step is row-wise, so both give the same sums up to
    the order of the additions). ``on_blocks(block, center, scale, *args)``,
    when given, is ``function`` on a raw block, standardising it itself
    (sparing the pattern grouping of :func:`_standardise`).
    """
    if data.source is None:
        return function(data.Z0, data.groups, *args)
    from .._dask_blocks import block_sums

    if on_blocks is not None:
        return block_sums(data.source, on_blocks, data.center, data.scale, *args)
    return block_sums(
        data.source, _standardised_sums, data.center, data.scale, function, *args
    )


def _recentre(
    scatter: np.ndarray,
    weighted_sum: np.ndarray,
    weight: float,
    old: np.ndarray,
    new: np.ndarray,
) -> np.ndarray:
    """``sum w (x - new)(x - new)'`` from ``sum w (x - old)(x - old)'``,
    ``sum w x`` and ``sum w``.

    The E-step sums scatter about the current mean, known before the pass
    (one pass per iteration); the M-step moves it to the new mean. Both are
    close, so nothing cancels badly on the standardised scale.
    """
    a = weighted_sum - weight * old
    delta = new - old
    return (
        scatter
        - np.outer(a, delta)
        - np.outer(delta, a)
        + weight * np.outer(delta, delta)
    )


@dataclass
class _EMRun:
    """One EM run: final parameters (standardised scale) and its history.

    ``trace``: the objective at the start and at every accepted iterate
    (never decreasing); ``n_iter``: EM steps run (passes over the rows);
    ``last_change``: the last plain EM step's parameter changes, which name
    the slow features of a run that stopped at ``max_iter``.
    """

    params: Params
    trace: list[float]
    n_iter: int
    converged: bool
    last_change: Params | None = None


def _difference(a: Params, b: Params) -> Params:
    return tuple(x - y for x, y in zip(a, b, strict=True))


def _largest(change: Params) -> float:
    return max(float(np.max(np.abs(c))) if c.size else 0.0 for c in change)


def _norm(change: Params) -> float:
    return float(np.sqrt(sum(float(np.sum(c * c)) for c in change)))


def _on_simplex(p: np.ndarray, axis: int = -1, floor: float = 0.0) -> bool:
    """Whether the probabilities ``p`` are all above ``floor`` and sum to 1
    along ``axis`` (to rounding); for :meth:`_BaseEMDensity._valid_params`."""
    p = np.asarray(p)
    return bool(
        np.all(np.isfinite(p))
        and np.all(p > floor)
        and np.allclose(p.sum(axis=axis), 1.0, rtol=0, atol=1e-8)
    )


def _positive_definite(S: np.ndarray) -> bool:
    """Whether every covariance in ``S`` ((d, d) or (K, d, d)) is finite and
    positive definite well above the singularity floor of
    :func:`_check_singular`."""
    S = np.asarray(S)
    if S.ndim == 2:
        S = S[None]
    if not np.all(np.isfinite(S)):
        return False
    for cov in S:
        eig = np.linalg.eigvalsh(cov)
        if not eig[0] > _SINGULAR_RCOND * max(eig[-1], 0.0):
            return False
    return True


# SQUAREM's step length alpha (<= -1) is bounded below by -step_max; the bound
# starts at 1 (a plain EM cycle) and is multiplied by _STEP_FACTOR each time
# an extrapolation at the bound is accepted, divided by it after a rejection
# (the adaptive bound of Du & Varadhan, 2020, sec. 2).
_STEP_FACTOR = 4.0


class _BaseEMDensity(BaseDensity):
    """EM on standardised rows, with convergence and prior bookkeeping.

    Subclasses set ``max_iter``, ``tol`` and ``ridge`` (and, optionally,
    ``prior_rows``, ``acceleration`` and ``tol_loglik``: by default 0,
    ``"squarem"`` and None),
    the two class attributes naming what turned singular and what to do about
    it, and implement :meth:`_check_n_rows`, :meth:`_starts`,
    :meth:`_initial`, :meth:`_m_step` and :meth:`_store`. Parameters are
    tuples of arrays; convergence is on the largest absolute change of one EM
    step. SQUAREM extrapolates the tuple as a whole; a subclass whose
    parameters live on a constrained set (probabilities on a simplex...)
    overrides :meth:`_valid_params` to reject or project an extrapolation.
    By convention ``params[-1]`` holds the covariance(s) (used by the
    covariance prior and the default :meth:`_valid_params`) and ``params[-2]`` the
    mean(s) (used by the default :meth:`_feature_changes`).
    """

    max_iter: int
    tol: float
    ridge: float

    #: Subject of the error raised when even the prior leaves a singular fit.
    _singular_what: ClassVar[str] = "the covariance"
    #: Advice closing that error.
    _singular_advice: ClassVar[str] = ""

    def _fit(self, X: np.ndarray) -> None:
        used = ~np.isnan(X).all(axis=1)
        self._check_n_rows(int(used.sum()))
        Xu = X[used]
        # Work on features standardised by their observed moments: the
        # tolerance and the ridge are then scale free and the linear algebra
        # well conditioned.
        center = np.nanmean(Xu, axis=0)
        scale = np.nanstd(Xu, axis=0)
        constant = constant_features(Xu)
        scale[constant] = 1.0
        Z0, groups = _standardise(Xu, center, scale)
        counts = (~groups.missing).sum(axis=0)
        ridge, prior_rows, centre = _starting_prior(self, constant)
        data = _EMData(
            Z0,
            groups,
            center,
            scale,
            ridge,
            len(Z0),
            groups.n_patterns,
            prior_rows=prior_rows,
            centre=centre,
        )
        self._fit_em(data, counts)

    def _fit_dask(self, X: Any) -> None:
        """:meth:`_fit` on the row blocks of a dask array, out of core.

        A first pass validates the values and sums each feature's observed
        entries, a second their squared deviations from the mean (so the
        standardisation is ``np.nanmean``/``np.nanstd`` of all the rows, as in
        memory), then every EM iteration is one pass: the E-step's sums per
        block, the M-step in the driver. The iterates are those of the
        in-memory fit up to the order of floating-point additions.
        """
        from .._dask_blocks import block_map, summarise_columns

        summary = summarise_columns(
            self, X, min_samples=2, require_observed_columns=True
        )
        self._check_n_rows(summary.n_used)
        center = summary.mean
        parts = block_map(X, _deviations_and_patterns, center)
        squares = parts[0][0]
        for part in parts[1:]:
            squares = squares + part[0]
        n_patterns = len(np.unique(np.concatenate([part[1] for part in parts])))
        scale = np.sqrt(squares / summary.counts)
        scale[summary.constant] = 1.0
        ridge, prior_rows, centre = _starting_prior(self, summary.constant)
        data = _EMData(
            None,
            None,
            center,
            scale,
            ridge,
            summary.n_used,
            n_patterns,
            source=X,
            prior_rows=prior_rows,
            centre=centre,
        )
        self._fit_em(data, summary.counts)

    def _fit_em(self, data: _EMData, counts: np.ndarray) -> None:
        """EM from every start (restarting with a ridge if needed); store the
        best run. ``counts``: observed entries per feature."""
        # Jacobian of the standardisation, to report the log-likelihood of X.
        log_jacobian = float(np.sum(counts * np.log(data.scale)))
        starts = self._starts(data)
        data = self._centre_prior(data, starts)
        try:
            runs = [self._run(data, start) for start in starts]
        except _SingularCovarianceError as exc:
            if data.prior.active:
                raise ValueError(
                    f"{type(self).__name__}: {self._singular_what} is singular even "
                    f"with prior_rows={data.prior_rows:g} and ridge={data.ridge:g} "
                    f"({exc}). {self._singular_advice}"
                ) from None
            data = replace(data, ridge=_AUTO_RIDGE)
            _warn_auto_ridge(self, f"{exc} The fit was restarted.", stacklevel=5)
            runs = [self._run(data, start) for start in starts]
        best = max(runs, key=lambda run: run.trace[-1])
        if not best.converged:
            warnings.warn(
                self._not_converged_message(data, best),
                ConvergenceWarning,
                stacklevel=4,
            )
        self._store(data, best.params)
        self.loglik_trace_ = np.asarray(best.trace) - log_jacobian
        # The observed-data log-likelihood: the objective less the log prior.
        log_prior = self._log_prior(data, best.params)
        self.loglik_ = float(self.loglik_trace_[-1] - log_prior)
        self.n_iter_ = best.n_iter
        self.converged_ = best.converged
        self.ridge_ = data.ridge
        self._n_used = data.n

    def _centre_prior(self, data: _EMData, starts: list[Any]) -> _EMData:
        """``data`` with the covariance prior's centre for these ``starts``:
        by default the observed variances (1 on the standardised scale)."""
        return data

    def _acceleration(self) -> str:
        return str(getattr(self, "acceleration", "squarem"))

    def _converged(self, change: Params, trace: list[float]) -> bool:
        """Whether to stop, given the last EM step's parameter ``change`` and
        the objectives of the accepted iterates so far."""
        if _largest(change) <= self.tol:
            return True
        tol_loglik = getattr(self, "tol_loglik", None)
        if tol_loglik is None or len(trace) < 2:
            return False
        gain = trace[-1] - trace[-2]
        return bool(abs(gain) <= tol_loglik * abs(trace[-1]))

    def _run(self, data: _EMData, start: Any) -> _EMRun:
        """EM from ``start`` until :meth:`_converged` or ``max_iter`` steps."""
        params = self._initial(data, start)
        if self._acceleration() == "squarem":
            return self._run_squarem(data, params)
        trace: list[float] = []
        converged = False
        n_iter = 0
        change: Params | None = None
        for n_iter in range(1, self.max_iter + 1):
            objective, new = self._step(data, params, n_iter)
            trace.append(objective)
            change = _difference(new, params)
            params = new
            if self._converged(change, trace):
                converged = True
                break
        trace.append(self._objective(data, params))
        return _EMRun(params, trace, n_iter, converged, change)

    def _run_squarem(self, data: _EMData, params: Params) -> _EMRun:
        """SQUAREM (Varadhan & Roland, 2008, scheme S3) from ``params``.

        A cycle from the accepted iterate ``p0`` takes two EM steps,
        ``p1 = F(p0)`` and ``p2 = F(p1)``, with ``r = p1 - p0`` and
        ``v = p2 - 2 p1 + p0``, extrapolates to
        ``p' = p0 - 2 alpha r + alpha^2 v`` with ``alpha = -||r|| / ||v||``
        (kept in ``[-step_max, -1]``; ``alpha = -1`` gives ``p2``) and then
        takes a stabilising EM step, ``F(p')``, which is the next accepted
        iterate. ``alpha`` is moved halfway towards -1 while :meth:`_valid_params`
        rejects ``p'``; when the objective at ``p'`` (known from the
        stabilising step) is below that at ``p0``, or ``p'`` turns a
        covariance singular, the cycle falls back to ``p2``. Either way the
        accepted iterate's objective is at least that of ``p0`` (EM never
        decreases it), so the trace, which records the accepted iterates, never
        decreases. Convergence is tested on the plain steps ``p1 - p0`` and
        ``p2 - p1``, as in plain EM; ``n_iter`` counts EM steps.
        """
        max_iter = self.max_iter
        trace: list[float] = []
        converged = False
        n_iter = 0
        step_max = 1.0
        change: Params | None = None
        while n_iter < max_iter:
            n_iter += 1
            objective0, p1 = self._step(data, params, n_iter)
            trace.append(objective0)
            change = _difference(p1, params)
            if self._converged(change, trace):
                params, converged = p1, True
                break
            if n_iter == max_iter:
                params = p1
                break
            n_iter += 1
            _, p2 = self._step(data, p1, n_iter)
            # p2 - p1 is a plain EM step too: stop there as plain EM would
            # (tol_loglik compares accepted iterates only, p1 is not one).
            change2 = _difference(p2, p1)
            if _largest(change2) <= self.tol:
                params, converged, change = p2, True, change2
                break
            if n_iter == max_iter:
                params = p2
                break
            r = change
            v = tuple(c - 2.0 * b + a for a, b, c in zip(params, p1, p2, strict=True))
            norm_r, norm_v = _norm(r), _norm(v)
            alpha = -norm_r / norm_v if norm_v > 0 else -1.0
            alpha = max(min(alpha, -1.0), -step_max)
            at_bound = alpha <= -step_max
            candidate: Params | None = None
            while alpha < -1.0:
                extrapolated = tuple(
                    a - 2.0 * alpha * b + alpha * alpha * c
                    for a, b, c in zip(params, r, v, strict=True)
                )
                candidate = self._valid_params(data, extrapolated)
                if candidate is not None:
                    break
                at_bound = False
                alpha = 0.5 * (alpha - 1.0)
                if alpha > -1.0 - 1e-3:
                    alpha = -1.0
            n_iter += 1
            if candidate is None:
                # alpha = -1: the extrapolation is p2, a plain EM iterate.
                _, params = self._step(data, p2, n_iter)
                if at_bound:
                    step_max *= _STEP_FACTOR
                continue
            try:
                objective, stabilised = self._step(data, candidate, n_iter)
            except _SingularCovarianceError:
                objective, stabilised = -np.inf, candidate
            if objective >= objective0:
                if at_bound:
                    step_max *= _STEP_FACTOR
                params = stabilised
            else:
                step_max = max(1.0, step_max / _STEP_FACTOR)
                params = p2
        trace.append(self._objective(data, params))
        return _EMRun(params, trace, n_iter, converged, change)

    def _valid_params(self, data: _EMData, params: Params) -> Params | None:
        """An extrapolated ``params`` as SQUAREM may use it, or None.

        The default accepts ``params`` when every array is finite and every
        covariance (``params[-1]``, of shape (d, d) or (K, d, d)) is positive
        definite. A subclass with constrained parameters extends it, e.g.
        rejecting mixture weights or category probabilities off the simplex
        (see :func:`_on_simplex`), or returns a projection of ``params``
        onto the feasible set.
        """
        if not all(np.all(np.isfinite(a)) for a in params):
            return None
        if not _positive_definite(params[-1]):
            return None
        return params

    def _feature_changes(self, data: _EMData, change: Params) -> np.ndarray:
        """How much each feature's parameters moved in ``change`` (one EM
        step, standardised scale), shape (d,).

        The default reads ``params[-2]`` as means ((d,) or (K, d)) and
        ``params[-1]`` as covariances ((d, d) or (K, d, d)): feature ``j``
        scores ``sqrt(sum dm_j^2 + sum_k dS_jk^2)`` over components, so a
        slow feature, whose whole row of the covariance moves, outscores the
        others, which share only one entry with it.
        """
        dm = np.atleast_2d(change[-2])
        dS = change[-1]
        if dS.ndim == 2:
            dS = dS[None]
        return np.sqrt((dm**2).sum(axis=0) + (dS**2).sum(axis=(0, 2)))

    def _not_converged_message(self, data: _EMData, run: _EMRun) -> str:
        """The ConvergenceWarning of a run that stopped at ``max_iter``:
        naming the features that still moved most."""
        name = type(self).__name__
        message = f"{name} did not converge in max_iter={self.max_iter} EM steps"
        if run.last_change is None:
            return message + "; increase max_iter."
        largest = _largest(run.last_change)
        movement = self._feature_changes(data, run.last_change)
        order = np.argsort(-movement, kind="stable")
        # The slow feature's whole covariance row moves; a feature correlated
        # with it shares one entry, so it scores well below it.
        slow = [j for j in order[:3] if movement[j] >= 0.5 * movement[order[0]]]
        remedy = "increase max_iter"
        if self._acceleration() != "squarem":
            remedy += ", use acceleration='squarem'"
        return (
            f"{message} (the last EM step still changed a parameter by "
            f"{largest:.1e} > tol={self.tol:g}, in units of the feature's "
            f"standard deviation). Slowest: {describe_features(self, slow)}, whose "
            "mean and covariance still moved most. EM is slow for a feature "
            "missing in most rows or nearly collinear with others. To fix: "
            f"{remedy}, drop that feature if it is missing in most rows, or "
            "raise prior_rows if it is nearly collinear with others."
        )

    def _step(
        self, data: _EMData, params: Params, iteration: int
    ) -> tuple[float, Params]:
        """The penalised log-likelihood at ``params`` and the parameters after
        one EM step; raises :class:`_SingularCovarianceError` (see
        :func:`_check_singular`)."""
        sums = _em_sums(data, self._e_step, params, True, on_blocks=self._block_e_step)
        objective = float(sums[0]) + self._log_prior(data, params)
        return objective, self._m_step(data, params, sums[1:], iteration)

    def _objective(self, data: _EMData, params: Params) -> float:
        """The penalised log-likelihood at ``params``."""
        loglik = _em_sums(
            data, self._e_step, params, False, on_blocks=self._block_e_step
        )[0]
        return float(loglik) + self._log_prior(data, params)

    def _log_prior(self, data: _EMData, params: Params) -> float:
        """The log prior at ``params`` (up to a constant): the covariance
        prior shared evenly by the covariances ``params[-1]`` ((d, d) or
        (K, d, d)). A subclass adds the priors of its other parameters."""
        covariances = params[-1]
        if covariances.ndim == 2:
            covariances = covariances[None]
        if covariances.shape[-1] == 0:
            return 0.0
        return data.prior.split(len(covariances)).log_density(covariances)

    # -- what a subclass supplies ------------------------------------------
    #: ``e_step(Z0, groups, params, fill)``: a module-level function (shipped
    #: to dask workers) returning sums over the rows ``Z0``: the
    #: log-likelihood first, then, when ``fill``, what :meth:`_m_step` needs.
    _e_step: ClassVar[Callable[..., tuple[Any, ...]]]
    #: Optionally, ``block_e_step(block, center, scale, params, fill)``: the
    #: same sums over a raw row block of a dask array, standardised by the
    #: function itself (else :func:`_standardise` and ``_e_step``).
    _block_e_step: ClassVar[Callable[..., tuple[Any, ...]] | None] = None

    def _check_n_rows(self, n_used: int) -> None:
        """Raise ValueError when ``n_used`` rows with an observed entry are
        too few to fit."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _starts(self, data: _EMData) -> list[Any]:
        """The starting points, one EM run each."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _initial(self, data: _EMData, start: Any) -> Params:
        """The parameters at ``start``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _m_step(
        self, data: _EMData, params: Params, sums: tuple[Any, ...], iteration: int
    ) -> Params:
        """The parameters after one EM step from the E-step's ``sums`` (without
        the log-likelihood); raises :class:`_SingularCovarianceError`."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _store(self, data: _EMData, params: Params) -> None:
        """Set the fitted attributes from ``params`` (standardised scale)."""
        raise NotImplementedError  # pragma: no cover - abstract


def _deviations_and_patterns(
    block: np.ndarray, center: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per block: summed squared deviations of the observed entries from
    ``center``, and the distinct missing patterns of the rows with an observed
    entry (packed, as :func:`~missingkernels.conditionals.group_patterns`)."""
    block = np.asarray(block, dtype=np.float64)
    missing = np.isnan(block)
    squares = np.where(missing, 0.0, block - center) ** 2
    used = ~missing.all(axis=1)
    packed = np.packbits(missing[used], axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1])))
    return squares.sum(axis=0), np.unique(keys.ravel())


def _starting_prior(
    density: Any, constant: np.ndarray
) -> tuple[float, float, np.ndarray]:
    """The ridge, the prior's pseudo-rows and its centre (standardised scale)
    of a fit whose features ``constant`` (a mask) take a single value on
    their observed entries.

    The centre is 1 (the observed variance) except for such features (a tiny
    variance in their own units); they are named in a warning either way. A
    maximum-likelihood fit (``prior_rows=0`` and ``ridge=0``) with such a
    feature is singular for certain: it starts with the automatic ridge
    rather than finding out tens of EM iterations in and restarting (the
    restart gives the same fit).
    """
    ridge = float(density.ridge)
    prior_rows = resolve_prior_rows(getattr(density, "prior_rows", 0.0), len(constant))
    centre = np.where(constant, _CONSTANT_CENTRE, 1.0)
    constant = np.flatnonzero(constant)
    if not constant.size:
        return ridge, prior_rows, centre
    reason = (
        "the observed entries take a single value in "
        f"{describe_features(density, constant)}, so the covariance is singular."
    )
    if ridge == 0 and prior_rows == 0:
        ridge = _AUTO_RIDGE
        _warn_auto_ridge(density, reason, stacklevel=5)
    elif prior_rows > 0:
        warnings.warn(
            f"{type(density).__name__}: {reason} The prior gives "
            f"{'it' if constant.size == 1 else 'them'} a variance of about "
            f"{_CONSTANT_CENTRE:g} in "
            f"{'its' if constant.size == 1 else 'their'} own units (the "
            "kernels treat a missing entry there as that value); drop "
            f"{'it' if constant.size == 1 else 'them'} if "
            f"{'it carries' if constant.size == 1 else 'they carry'} no "
            "information.",
            SingularCovarianceWarning,
            stacklevel=5,
        )
    return ridge, prior_rows, centre


def _warn_auto_ridge(density: Any, reason: str, stacklevel: int = 4) -> None:
    """Warn that the automatic ridge was used; ``stacklevel`` counts from here
    (4: called from ``_fit``, under ``fit``)."""
    warnings.warn(
        f"{type(density).__name__}: {reason} Fitted with ridge={_AUTO_RIDGE:g}; "
        "set prior_rows > 0 (the default prior) or ridge (e.g. 1e-3) to choose "
        "the regularisation, or drop collinear or constant features.",
        SingularCovarianceWarning,
        stacklevel=stacklevel,
    )


def _check_singular(S: np.ndarray, iteration: int) -> None:
    """Raise :class:`_SingularCovarianceError` when ``S`` is numerically
    singular (relative eigenvalue below ``1e-12``)."""
    eig = np.linalg.eigvalsh(S)
    if not eig[0] > _SINGULAR_RCOND * max(eig[-1], 0.0):
        ratio = eig[0] / eig[-1] if eig[-1] > 0 else 0.0
        raise _SingularCovarianceError(
            f"the covariance became singular at EM iteration {iteration} "
            f"(smallest/largest eigenvalue {ratio:.1e}, in units of "
            "the observed variances): features are collinear or constant, or "
            "there are about as few rows as features."
        )


def _pattern_cov_sum(
    groups: PatternGroups,
    blocks: list[np.ndarray],
    d: int,
    row_weights: np.ndarray | None = None,
) -> np.ndarray:
    """Sum over rows of ``w_i A_i`` (conditional covariances embedded in d x d).

    ``blocks`` as in ``ConditionedGaussian.blocks`` (one stack per group).
    """
    cov_flat = np.zeros(d * d)
    for g, stack in zip(groups.groups, blocks, strict=True):
        J = g.missing_idx
        if row_weights is None:
            weights = g.counts.astype(float)
        else:
            weights = np.bincount(
                g.pattern_of_row, weights=row_weights[g.rows], minlength=len(J)
            )
        flat = (J[:, :, None] * d + J[:, None, :]).reshape(-1)
        values = (weights[:, None, None] * stack).reshape(-1)
        cov_flat += np.bincount(flat, weights=values, minlength=d * d)
    return cov_flat.reshape(d, d)
