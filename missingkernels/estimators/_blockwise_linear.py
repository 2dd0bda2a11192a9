"""Linear SVMs fitted from blockwise sufficient statistics (out of core).

The features route of the kernel SVMs needs a linear model on ``n x D``
expected kernel features. At millions of rows the feature matrix does not
fit in memory, but its ``D x D`` statistics do. :func:`fit_squared_hinge`
minimises LinearSVC's primal objective (L2-regularised squared hinge, the
intercept regularised as LinearSVC's ``intercept_scaling`` does)::

    1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i w^T x_i)^2

exactly, by the finite Newton method of Keerthi & DeCoste (2005): on the
rows in the margin (``y_i w^T x_i < 1``) the objective is a ridge problem,
solved from ``sum_I C_i x_i x_i^T`` and ``sum_I C_i y_i x_i``, one pass over
the blocks; an exact line search on the piecewise quadratic joins it to the
current point, from the outputs ``w^T x_i`` kept per row (``n`` numbers, not
``n x D``). The active set changes finitely often, so it stops at the
minimiser, usually in 5 to 15 passes. Started from the least-squares
solution (the same statistics over all rows), which is
:func:`fit_least_squares`: the ridge regressor on ``y``, one pass.

Why not the hinge loss of the in-memory route: its statistics are not a
fixed-size sum (its dual needs every row), while the squared hinge's are
``D x D``; LinearSVC's default is this loss.

A *pass* is a callable ``blocks()`` returning an iterator of ``(Z_b, rows_b)``:
a block of features (any float dtype; accumulated in float64) and the
slice of rows it covers, in order, so that the per-row outputs line up.

References
----------
.. [1] S. S. Keerthi and D. DeCoste, "A modified finite Newton method for fast
   solution of large scale linear SVMs", JMLR 6, 341-361, 2005.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import linalg

__all__ = ["LinearFit", "fit_least_squares", "fit_squared_hinge"]

Blocks = Callable[[], Iterator[tuple[np.ndarray, slice]]]


@dataclass
class LinearFit:
    """Coefficients ``coef`` (``(D,)``), ``intercept``, the passes over the
    blocks it took, and whether the active set settled (converged)."""

    coef: np.ndarray
    intercept: float
    n_passes: int
    converged: bool


def _augmented(Z: np.ndarray, scaling: float) -> np.ndarray:
    """``[Z, scaling]``: the intercept as a regularised feature (LinearSVC)."""
    Zb = np.asarray(Z, dtype=np.float64)
    if scaling <= 0:
        return Zb
    return np.hstack([Zb, np.full((len(Zb), 1), float(scaling))])


def _statistics(
    blocks: Blocks, weights: np.ndarray, targets: np.ndarray, scaling: float,
    active: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``sum_I c_i x_i x_i^T`` and ``sum_I c_i t_i x_i`` over the active rows
    (all if None), ``x`` the augmented features: one pass."""
    H: np.ndarray | None = None
    b: np.ndarray | None = None
    for Z, rows in blocks():
        X = _augmented(Z, scaling)
        c = weights[rows] if active is None else weights[rows] * active[rows]
        Xc = X * c[:, None]
        if H is None:
            H = np.zeros((X.shape[1], X.shape[1]))
            b = np.zeros(X.shape[1])
        H += Xc.T @ X
        b += Xc.T @ targets[rows]
    if H is None or b is None:
        raise ValueError("The blocks of features are empty: no row to fit.")
    return H, b


def _outputs(blocks: Blocks, w: np.ndarray, n: int, scaling: float) -> np.ndarray:
    """``w^T x_i`` for every row: one pass (a matrix-vector product per block)."""
    out = np.empty(n)
    for Z, rows in blocks():
        out[rows] = _augmented(Z, scaling) @ w
    return out


def _solve(H: np.ndarray, b: np.ndarray, C: float) -> np.ndarray:
    """``(I + 2 C H) w = 2 C b``, the ridge step (H symmetric PSD: Cholesky)."""
    A = 2.0 * C * H
    A[np.diag_indices_from(A)] += 1.0
    return np.asarray(linalg.solve(A, 2.0 * C * b, assume_a="pos"))


def fit_least_squares(
    blocks: Blocks, y: np.ndarray, *, C: float = 1.0, sample_weight: np.ndarray
    | None = None, intercept_scaling: float = 1.0,
) -> LinearFit:  # fmt: skip
    """Minimise ``1/2 ||w||^2 + C sum_i s_i (y_i - w^T x_i)^2`` in one pass.

    The ridge problem with the intercept as a regularised feature of value
    ``intercept_scaling`` (0: no intercept); ``s_i`` the sample weights.
    """
    y = np.asarray(y, dtype=np.float64)
    weights = _weights(sample_weight, len(y))
    H, b = _statistics(blocks, weights, y, intercept_scaling, None)
    w = _solve(H, b, C)
    return _split(w, intercept_scaling, n_passes=1, converged=True)


def _weights(sample_weight: np.ndarray | None, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    return np.asarray(sample_weight, dtype=np.float64)


def _split(w: np.ndarray, scaling: float, n_passes: int, converged: bool) -> LinearFit:
    if scaling <= 0:
        return LinearFit(w, 0.0, n_passes, converged)
    return LinearFit(w[:-1], float(w[-1] * scaling), n_passes, converged)


def _line_search(
    w: np.ndarray, step: np.ndarray, o: np.ndarray, o_new: np.ndarray,
    y: np.ndarray, c: np.ndarray, C: float,
) -> float:  # fmt: skip
    """The exact minimiser over ``t`` in ``[0, 1]`` of the objective along
    ``w + t step`` (outputs ``o + t (o_new - o)``): the root of its derivative,
    continuous, piecewise linear and increasing in ``t``, by bisection."""
    delta = o_new - o
    a0, a1 = float(w @ step), float(step @ step)

    def slope(t: float) -> float:
        margin = 1.0 - y * (o + t * delta)
        inside = margin > 0
        return (
            a0
            + t * a1
            - 2.0
            * C
            * float(np.sum(c[inside] * y[inside] * delta[inside] * margin[inside]))
        )

    if slope(1.0) <= 0.0:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(60):  # 2^-60: the step is exact to rounding
        mid = 0.5 * (lo + hi)
        if slope(mid) > 0.0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def fit_squared_hinge(
    blocks: Blocks, y: np.ndarray, *, C: float = 1.0, sample_weight: np.ndarray
    | None = None, intercept_scaling: float = 1.0, max_passes: int = 50,
    tol: float = 1e-10,
) -> LinearFit:  # fmt: skip
    """Minimise LinearSVC's primal objective, ``y`` in {-1, +1}, out of core.

    Parameters
    ----------
    blocks : callable
        ``blocks()`` iterates over ``(Z_b, rows_b)``: the features of a block
        of rows and the slice of rows it covers; called once per pass.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    C : float > 0, default=1.0
    sample_weight : ndarray of shape (n_samples,), optional
        Multiplies ``C`` per row (as LinearSVC's).
    intercept_scaling : float >= 0, default=1.0
        The intercept is the coefficient of a constant feature of this
        value, regularised with the others (LinearSVC's); 0: no intercept.
    max_passes : int, default=50
        Passes over the blocks at most (each Newton step takes two).
    tol : float, default=1e-10
        Stop when the step moves the outputs by less than ``tol`` relative.

    Returns
    -------
    fit : LinearFit
    """
    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("fit_squared_hinge needs labels in {-1, +1}.")
    n = len(y)
    c = _weights(sample_weight, n)
    # Start: least squares on all rows (every row in the margin at w = 0).
    H, b = _statistics(blocks, c, y, intercept_scaling, None)
    w = _solve(H, b, C)
    o = _outputs(blocks, w, n, intercept_scaling)
    passes, converged = 2, False
    active = (y * o < 1.0).astype(np.float64)
    while passes + 2 <= max_passes:
        H, b = _statistics(blocks, c, y, intercept_scaling, active)
        w_new = _solve(H, b, C)
        o_new = _outputs(blocks, w_new, n, intercept_scaling)
        passes += 2
        t = _line_search(w, w_new - w, o, o_new, y, c, C)
        moved = t * np.abs(o_new - o).max(initial=0.0)
        w = w + t * (w_new - w)
        o = o + t * (o_new - o)
        new_active = (y * o < 1.0).astype(np.float64)
        if np.array_equal(new_active, active) and t == 1.0:
            converged = True  # the Newton point of this active set is optimal
            break
        active = new_active
        if moved <= tol * max(1.0, np.abs(o).max(initial=0.0)):
            converged = True
            break
    return _split(w, intercept_scaling, passes, converged)
