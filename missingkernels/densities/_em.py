"""What the EM densities share: standardisation, the iteration loop, ridges.

:class:`_BaseEMDensity` fits on rows standardised by their observed moments,
runs EM from one or more starting points until the largest parameter change
is at most ``tol``, restarts with an automatic ridge when a covariance turns
singular, and keeps the start with the highest penalised log-likelihood. A
subclass supplies the starts, one EM step and the fitted attributes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning

from .._numerics import constant_features
from .._validation import describe_features
from ..conditionals._patterns import PatternGroups, pattern_groups
from ._base import BaseDensity

__all__ = ["SingularCovarianceWarning"]

# Relative eigenvalue floor below which the (standardised) covariance is
# treated as singular: beyond this the conditionals lose most of their digits.
_SINGULAR_RCOND = 1e-12
# Ridge used, with a warning, when the covariance is singular and ridge=0.
_AUTO_RIDGE = 1e-6

Params = tuple[np.ndarray, ...]


class SingularCovarianceWarning(UserWarning):
    """Warned when a fitted covariance is singular and a ridge had to be added."""


class _SingularCovarianceError(ArithmeticError):
    """Internal: the M-step produced a singular covariance."""


@dataclass(frozen=True, eq=False)
class _EMData:
    """The rows an EM run fits, on the standardised scale, and its ridge."""

    Z0: np.ndarray  # (n, d) standardised rows, zero where missing
    groups: PatternGroups  # pattern_groups of the missing entries
    center: np.ndarray  # (d,) the standardisation: X = center + scale * Z
    scale: np.ndarray  # (d,)
    ridge: float


@dataclass
class _EMRun:
    """One EM run: final parameters (standardised scale) and its history."""

    params: Params
    trace: list[float]
    n_iter: int
    converged: bool


class _BaseEMDensity(BaseDensity):
    """EM on standardised rows, with convergence and ridge bookkeeping.

    Subclasses set ``max_iter``, ``tol`` and ``ridge``, the two class
    attributes naming what turned singular and what to do about it, and
    implement :meth:`_check_n_rows`, :meth:`_starts`, :meth:`_initial`,
    :meth:`_step`, :meth:`_objective` and :meth:`_store`. Parameters are
    tuples of arrays; convergence is on their largest absolute change.
    """

    max_iter: int
    tol: float
    ridge: float

    #: Subject of the error raised when even the ridge leaves a singular fit.
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
        scale[constant_features(Xu)] = 1.0
        Z = (Xu - center) / scale
        mask = np.isnan(Z)
        Z0 = np.where(mask, 0.0, Z)
        # Jacobian of the standardisation, to report the log-likelihood of X.
        log_jacobian = float(np.sum((~mask) * np.log(scale)))
        groups = pattern_groups(mask)

        starts = self._starts(Z0)
        data = _EMData(Z0, groups, center, scale, _starting_ridge(self, Xu))
        try:
            runs = [self._run(data, start) for start in starts]
        except _SingularCovarianceError as exc:
            if data.ridge > 0:
                raise ValueError(
                    f"{type(self).__name__}: {self._singular_what} is singular even "
                    f"with ridge={data.ridge:g} ({exc}). {self._singular_advice}"
                ) from None
            data = replace(data, ridge=_AUTO_RIDGE)
            _warn_auto_ridge(self, f"{exc} The fit was restarted.")
            runs = [self._run(data, start) for start in starts]
        best = max(runs, key=lambda run: run.trace[-1])
        if not best.converged:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter="
                f"{self.max_iter} iterations (largest parameter change still "
                f"above tol={self.tol:g}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self._store(data, best.params)
        self.loglik_trace_ = np.asarray(best.trace) - log_jacobian
        self.loglik_ = float(self.loglik_trace_[-1])
        self.n_iter_ = best.n_iter
        self.converged_ = best.converged
        self.ridge_ = data.ridge

    def _run(self, data: _EMData, start: Any) -> _EMRun:
        """EM from ``start`` until the largest parameter change is <= tol."""
        params = self._initial(data, start)
        trace: list[float] = []
        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            objective, new = self._step(data, params, n_iter)
            trace.append(objective)
            change = max(
                np.max(np.abs(a - b)) for a, b in zip(new, params, strict=True)
            )
            params = new
            if change <= self.tol:
                converged = True
                break
        trace.append(self._objective(data, params))
        return _EMRun(params, trace, n_iter, converged)

    # -- what a subclass supplies ------------------------------------------
    def _check_n_rows(self, n_used: int) -> None:
        """Raise ValueError when ``n_used`` rows with an observed entry are
        too few to fit."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _starts(self, Z0: np.ndarray) -> list[Any]:
        """The starting points, one EM run each (``Z0``: zero where missing)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _initial(self, data: _EMData, start: Any) -> Params:
        """The parameters at ``start``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _step(
        self, data: _EMData, params: Params, iteration: int
    ) -> tuple[float, Params]:
        """The penalised log-likelihood at ``params`` and the parameters after
        one EM step; raises :class:`_SingularCovarianceError` (see
        :func:`_check_singular`)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _objective(self, data: _EMData, params: Params) -> float:
        """The penalised log-likelihood at ``params``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _store(self, data: _EMData, params: Params) -> None:
        """Set the fitted attributes from ``params`` (standardised scale)."""
        raise NotImplementedError  # pragma: no cover - abstract


def _starting_ridge(density: Any, X: np.ndarray) -> float:
    """``density.ridge``, or the automatic ridge when it is 0 and a feature of
    ``X`` takes a single value on its observed entries.

    Such a feature makes the ML covariance singular for certain: starting with
    the ridge avoids finding out tens of EM iterations in and restarting (the
    restart gives the same fit).
    """
    ridge = float(density.ridge)
    constant = np.flatnonzero(constant_features(X))
    if ridge == 0 and constant.size:
        ridge = _AUTO_RIDGE
        _warn_auto_ridge(
            density,
            "the observed entries take a single value in "
            f"{describe_features(density, constant)}, so the covariance is "
            "singular.",
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


def _penalty(covariances: np.ndarray, n: int, ridge: float) -> float:
    """The ridge penalty ``n / (2 K) * ridge * sum_k tr(S_k^-1)``.

    ``covariances`` of shape (K, d, d), on the standardised scale.
    """
    if ridge == 0:
        return 0.0
    total = 0.0
    for S in covariances:
        factor = linalg.cho_factor(S, lower=True, check_finite=False)
        total += float(np.trace(linalg.cho_solve(factor, np.eye(len(S)))))
    return 0.5 * n / len(covariances) * ridge * total


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
