"""Linear SVMs fitted from blockwise sufficient statistics (out of core).

The features route of the kernel SVMs needs a linear model on ``n x D``
expected kernel features. At millions of rows the feature matrix does not
fit in memory, but its ``D x D`` statistics do. :func:`fit_squared_hinge`
minimises LinearSVC's primal objective (L2-regularised squared hinge, the
intercept regularised as LinearSVC's ``intercept_scaling`` does)::

    1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i w^T x_i)^2

exactly, by the finite Newton method of Keerthi & DeCoste (2005): on the
rows in the margin (``y_i w^T x_i < 1``) the objective is a ridge problem,
solved from ``sum_I C_i x_i x_i^T`` and ``sum_I C_i y_i x_i``; an exact line
search on the piecewise quadratic joins it to the current point, from the
outputs ``w^T x_i`` kept per row (``n`` numbers, not ``n x D``). One pass
over the blocks gives the outputs at the Newton point and the statistics of
its margin, so a step whose line search goes the whole way costs one pass.
The active set changes finitely often, so it stops at the minimiser,
usually in 5 to 15 passes. Started from the least-squares
solution (the same statistics over all rows), which is
:func:`fit_least_squares`: the ridge regressor on ``y``, one pass.

Why not the hinge loss of the in-memory route: its statistics are not a
fixed-size sum (its dual needs every row), while the squared hinge's are
``D x D``; LinearSVC's default is this loss.

The data enter through an object of passes (:class:`Passes`): in memory,
:class:`BlockPasses` over an iterator of blocks of features; on dask,
:class:`DaskPasses`, whose workers compute each row block's features and
return only its sums (or its outputs), so that a pass holds one block of
features per worker and ``D x D`` numbers in the driver.

References
----------
.. [1] S. S. Keerthi and D. DeCoste, "A modified finite Newton method for fast
   solution of large scale linear SVMs", JMLR 6, 341-361, 2005.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy import linalg

__all__ = [
    "BlockPasses",
    "DaskPasses",
    "LinearFit",
    "Passes",
    "block_statistics",
    "fit_least_squares",
    "fit_squared_hinge",
]

Blocks = Callable[[], Iterator[tuple[np.ndarray, slice]]]


@dataclass
class LinearFit:
    """Coefficients ``coef`` (``(D,)``), ``intercept``, the passes over the
    rows it took, and whether the active set settled (converged)."""

    coef: np.ndarray
    intercept: float
    n_passes: int
    converged: bool


class Passes(Protocol):
    """Passes over the rows ``x_i`` (features, then the constant
    ``intercept_scaling`` if positive), labels or targets ``t_i`` and
    weights ``c_i``."""

    n_samples: int
    t: np.ndarray
    c: np.ndarray
    scaling: float

    def statistics(self, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``sum c_i x_i x_i^T`` and ``sum c_i t_i x_i`` over the rows with
        ``t_i w^T x_i < 1`` (the margin), or over every row if ``w`` is None."""
        ...

    def scan(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``w^T x_i`` for every row, in order, and :meth:`statistics` at
        ``w``, in one pass."""
        ...


def augmented(Z: np.ndarray, scaling: float) -> np.ndarray:
    """``[Z, scaling]``: the intercept as a regularised feature (LinearSVC)."""
    Zb = np.asarray(Z, dtype=np.float64)
    if scaling <= 0:
        return Zb
    return np.hstack([Zb, np.full((len(Zb), 1), float(scaling))])


def block_statistics(
    Z: np.ndarray, t: np.ndarray, c: np.ndarray, w: np.ndarray | None,
    scaling: float,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """:meth:`Passes.statistics` over one block of rows."""
    X = augmented(Z, scaling)
    if w is not None:
        c = c * (t * (X @ w) < 1.0)
    Xc = X * c[:, None]
    return Xc.T @ X, Xc.T @ t


def block_scan(
    Z: np.ndarray, t: np.ndarray, c: np.ndarray, w: np.ndarray, scaling: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`Passes.scan` over one block of rows."""
    X = augmented(Z, scaling)
    o = X @ w
    Xc = X * (c * (t * o < 1.0))[:, None]
    return o, Xc.T @ X, Xc.T @ t


class BlockPasses:
    """Passes over blocks of features held or made in this process:
    ``blocks()`` iterates over ``(Z_b, rows_b)``, the features of a block and
    the slice of rows it covers, in order."""

    def __init__(
        self, blocks: Blocks, t: np.ndarray, c: np.ndarray | None = None,
        intercept_scaling: float = 1.0,
    ) -> None:  # fmt: skip
        self.blocks = blocks
        self.t = np.asarray(t, dtype=np.float64)
        self.n_samples = len(self.t)
        self.c = np.ones(self.n_samples) if c is None else np.asarray(c, float)
        self.scaling = float(intercept_scaling)

    def statistics(self, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        H: np.ndarray | None = None
        b: np.ndarray | None = None
        for Z, rows in self.blocks():
            Hb, bb = block_statistics(Z, self.t[rows], self.c[rows], w, self.scaling)
            H, b = (Hb, bb) if H is None or b is None else (H + Hb, b + bb)
        if H is None or b is None:
            raise ValueError("The blocks of features are empty: no row to fit.")
        return H, b

    def scan(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = np.empty(self.n_samples)
        H: np.ndarray | None = None
        b: np.ndarray | None = None
        for Z, rows in self.blocks():
            o, Hb, bb = block_scan(Z, self.t[rows], self.c[rows], w, self.scaling)
            out[rows] = o
            H, b = (Hb, bb) if H is None or b is None else (H + Hb, b + bb)
        if H is None or b is None:
            raise ValueError("The blocks of features are empty: no row to fit.")
        return out, H, b


def _split_block(
    block: np.ndarray, transform: Callable[[np.ndarray], np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A dask block's features, targets and weights (its last two columns)."""
    rows = block[:, :-2]
    Z = rows if transform is None else transform(rows)
    return Z, block[:, -2], block[:, -1]


def _dask_block_statistics(
    block: np.ndarray, transform: Any, w: np.ndarray | None, scaling: float
) -> tuple[np.ndarray, np.ndarray]:
    Z, t, c = _split_block(block, transform)
    return block_statistics(Z, t, c, w, scaling)


def _dask_block_scan(
    block: np.ndarray, transform: Any, w: np.ndarray, scaling: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Z, t, c = _split_block(block, transform)
    return block_scan(Z, t, c, w, scaling)


def _tree_sum(parts: list[Any]) -> Any:
    """The sum of delayed tuples of arrays in a fixed binary tree: the same
    additions on any scheduler, few partial sums alive at once."""
    import dask

    add = dask.delayed(_add, pure=True)
    while len(parts) > 1:
        pairs = [add(a, b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _tail(part: tuple[Any, ...]) -> tuple[Any, ...]:
    return part[1:]


def _head(part: tuple[Any, ...]) -> Any:
    return part[0]


def _add(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple:
    return tuple(x + y for x, y in zip(a, b, strict=True))


class DaskPasses:
    """Passes over the row blocks of a dask array, computed where dask runs.

    Each worker computes its block's features (``transform`` of the rows,
    e.g. a fitted :class:`~missingkernels.ExpectedKernelFeatures`'s, or the
    rows themselves) and returns only the block's ``D x D`` sums, added in a
    fixed binary tree (the same result on any scheduler, and at most a few
    such matrices in memory at once), or its outputs (``n`` numbers in all).

    Parameters
    ----------
    X : dask Array of shape (n_samples, n_features)
        Row blocks of known sizes.
    t : array-like of shape (n_samples,)
        Targets (labels in {-1, +1} for :func:`fit_squared_hinge`).
    c : array-like of shape (n_samples,), optional
        Row weights (ones).
    transform : callable, optional
        Rows -> features, picklable; None: X holds the features.
    intercept_scaling : float, default=1.0
    """

    def __init__(
        self, X: Any, t: Any, c: Any = None,
        transform: Callable[[np.ndarray], np.ndarray] | None = None,
        intercept_scaling: float = 1.0,
    ) -> None:  # fmt: skip
        from .._dask_blocks import import_dask

        da = import_dask("missingkernels' out-of-core linear fit")
        if any(np.isnan(size) for size in X.chunks[0]):
            raise ValueError(
                "The row blocks have unknown sizes (a dask DataFrame's): call "
                "X.compute_chunk_sizes() first."
            )
        self.t = np.asarray(t, dtype=np.float64)
        self.n_samples = len(self.t)
        if X.shape[0] != self.n_samples:
            raise ValueError(
                f"X has {X.shape[0]} rows and the targets {self.n_samples}."
            )
        self.c = np.ones(self.n_samples) if c is None else np.asarray(c, float)
        self.scaling = float(intercept_scaling)
        self.transform = transform
        columns = [
            da.from_array(v, chunks=(X.chunks[0],))[:, None] for v in (self.t, self.c)
        ]
        self.blocks = da.concatenate([X.astype(np.float64), *columns], axis=1)
        self.blocks = self.blocks.rechunk({1: -1})

    def statistics(self, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        import dask

        part = dask.delayed(_dask_block_statistics, pure=True)
        blocks = self.blocks.to_delayed().ravel()
        root = _tree_sum([part(b, self.transform, w, self.scaling) for b in blocks])
        ((H, b),) = dask.compute(root)
        return H, b

    def scan(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        import dask

        part = dask.delayed(_dask_block_scan, pure=True)
        blocks = self.blocks.to_delayed().ravel()
        parts = [part(b, self.transform, w, self.scaling) for b in blocks]
        head, tail = dask.delayed(_head, pure=True), dask.delayed(_tail, pure=True)
        outputs, (H, b) = dask.compute([head(p) for p in parts], _tree_sum(
            [tail(p) for p in parts]
        ))  # fmt: skip
        return np.concatenate(outputs), H, b


def _solve(H: np.ndarray, b: np.ndarray, C: float) -> np.ndarray:
    """``(I + 2 C H) w = 2 C b``, the ridge step (H symmetric PSD: Cholesky)."""
    A = 2.0 * C * H
    A[np.diag_indices_from(A)] += 1.0
    return np.asarray(linalg.solve(A, 2.0 * C * b, assume_a="pos"))


def fit_least_squares(passes: Passes, *, C: float = 1.0) -> LinearFit:
    """Minimise ``1/2 ||w||^2 + C sum_i c_i (t_i - w^T x_i)^2`` in one pass.

    The ridge problem on the targets ``t_i`` of the passes, the intercept a
    regularised feature of value ``intercept_scaling`` (0: no intercept).
    """
    H, b = passes.statistics(None)
    w = _solve(H, b, C)
    return _split(w, _scaling(passes), n_passes=1, converged=True)


def _scaling(passes: Passes) -> float:
    return float(passes.scaling)


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
    passes: Passes, *, C: float = 1.0, max_passes: int = 50, tol: float = 1e-10
) -> LinearFit:
    """Minimise LinearSVC's primal objective over the passes' rows, whose
    targets are labels in {-1, +1}, out of core.

    Parameters
    ----------
    passes : Passes
        The rows (:class:`BlockPasses`, :class:`DaskPasses`); the weights
        ``c_i`` multiply ``C`` per row (LinearSVC's ``sample_weight``), and
        the intercept is the coefficient of a constant feature of value
        ``intercept_scaling``, regularised with the others (LinearSVC's).
    C : float > 0, default=1.0
    max_passes : int, default=50
        Passes over the rows at most: two to start, then one per Newton step
        whose line search takes the whole step, two otherwise.
    tol : float, default=1e-10
        Stop when the step moves the outputs by less than ``tol`` relative.

    Returns
    -------
    fit : LinearFit
    """
    y = np.asarray(passes.t, dtype=np.float64)
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("fit_squared_hinge needs labels in {-1, +1}.")
    c = np.asarray(passes.c, dtype=np.float64)
    # Start: least squares on all rows (every row in the margin at w = 0).
    H, b = passes.statistics(None)
    w = _solve(H, b, C)
    # Each scan gives the outputs at a point and the statistics of its
    # margin: when the line search takes the whole Newton step (the usual
    # case near the end), the next step needs no other pass.
    o, H, b = passes.scan(w)
    n_passes, converged = 2, False
    while n_passes < max_passes:
        w_new = _solve(H, b, C)
        o_new, H_new, b_new = passes.scan(w_new)
        n_passes += 1
        t = _line_search(w, w_new - w, o, o_new, y, c, C)
        moved = t * np.abs(o_new - o).max(initial=0.0)
        before = y * o < 1.0
        if t == 1.0:
            w, o, H, b = w_new, o_new, H_new, b_new
            if np.array_equal(y * o < 1.0, before):
                converged = True  # the Newton point of this active set is optimal
                break
        else:
            w = w + t * (w_new - w)
            o = o + t * (o_new - o)
        if moved <= tol * max(1.0, np.abs(o).max(initial=0.0)):
            converged = True
            break
        if t != 1.0:
            if n_passes >= max_passes:
                break
            H, b = passes.statistics(w)  # the margin at the line search's point
            n_passes += 1
    return _split(w, _scaling(passes), n_passes, converged)
