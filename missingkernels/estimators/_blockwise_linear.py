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
.. [2] R.-E. Fan, K.-W. Chang, C.-J. Hsieh, X.-R. Wang and C.-J. Lin,
   "LIBLINEAR: a library for large linear classification", JMLR 9,
   1871-1874, 2008 (the stopping rule of its primal solvers, ``-e``).
"""

from __future__ import annotations

import copy
import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy import linalg

from .._config import arrays_bytes

__all__ = [
    "BlockPasses",
    "DaskPasses",
    "LinearFit",
    "Passes",
    "block_statistics",
    "fit_least_squares",
    "SquaredLoss",
    "fit_squared_epsilon_insensitive",
    "fit_squared_hinge",
]

Blocks = Callable[[], Iterator[tuple[np.ndarray, slice]]]

# Rows per chunk of a block's float64 work (outputs, gradient): 32 MB at most.
_CHUNK_BYTES = 2**25


@dataclass
class LinearFit:
    """Coefficients ``coef`` (``(D,)``), ``intercept``, the passes over the
    rows it took, and whether it converged (a zero gradient to ``tol``)."""

    coef: np.ndarray
    intercept: float
    n_passes: int
    converged: bool


@dataclass(frozen=True)
class SquaredLoss:
    """A row's loss ``max(0, e_i)^2`` as a function of its output ``o_i``:
    the squared hinge (``epsilon`` None; labels ``t_i`` in {-1, +1},
    ``e_i = 1 - t_i o_i``) or the squared epsilon-insensitive loss
    (``e_i = |t_i - o_i| - epsilon``). Where ``e_i > 0`` (the row is
    *active*: in the margin, or outside the tube) the loss is
    ``(o_i - tau_i)^2`` with ``tau_i`` :meth:`target`, so that the objective
    is a ridge problem on the active rows."""

    epsilon: float | None = None

    def active(self, t: np.ndarray, o: np.ndarray) -> np.ndarray:
        if self.epsilon is None:
            return np.asarray(t * o < 1.0)
        return np.asarray(np.abs(t - o) > self.epsilon)

    def target(self, t: np.ndarray, o: np.ndarray) -> np.ndarray:
        """``tau_i``: ``t_i`` (the hinge: ``t_i^2 = 1``), or the edge of the
        tube on the row's side, ``t_i - epsilon sign(t_i - o_i)``."""
        if self.epsilon is None:
            return t
        return np.asarray(t - self.epsilon * np.sign(t - o))


HINGE = SquaredLoss()


@dataclass
class Scan:
    """One pass at a point ``w``: the outputs ``o_i = w^T x_i`` of every row,
    ``gradient_sum = sum_M c_i (o_i - tau_i) x_i`` over the active rows
    ``M`` (:class:`SquaredLoss`), and ``hessian_change``, the upper triangle
    of ``sum_{M - held} c_i x_i x_i^T - sum_{held - M} c_i x_i x_i^T``: what
    turns the statistics of the rows ``held`` into those of ``M``, from the
    rows that changed side only (``changed`` of them); ``target_sum``, the
    same sum as ``-gradient_sum`` at ``w = 0`` (``sum_i c_i t_i x_i`` for the
    hinge), to scale the stopping rule."""

    outputs: np.ndarray
    gradient_sum: np.ndarray
    hessian_change: np.ndarray
    changed: int
    target_sum: np.ndarray


class Passes(Protocol):
    """Passes over the rows ``x_i`` (features, then the constant
    ``intercept_scaling`` if positive), labels or targets ``t_i`` and
    weights ``c_i``."""

    n_samples: int
    t: np.ndarray
    c: np.ndarray
    scaling: float

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        """``sum c_i x_i x_i^T`` and ``sum c_i t_i x_i`` over every row."""
        ...

    def scan(
        self, w: np.ndarray | None, held: np.ndarray | None,
        loss: SquaredLoss = HINGE,
    ) -> Scan:  # fmt: skip
        """The :class:`Scan` at ``w`` (None: zero) for ``loss``, ``held`` the
        rows whose statistics the caller holds (None: none)."""
        ...


def _chunk_rows(n_columns: int) -> int:
    return max(1, _CHUNK_BYTES // (8 * max(1, n_columns)))


def block_statistics(
    Z: np.ndarray, t: np.ndarray, c: np.ndarray, scaling: float
) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Passes.statistics` over one block of rows (full matrices)."""
    H = np.triu(_weighted_gram(Z, c, scaling))
    H = H + np.triu(H, 1).T
    b = np.zeros(len(H))
    step = _chunk_rows(Z.shape[1])
    for s in range(0, len(Z), step):
        ct = c[s : s + step] * t[s : s + step]
        b[: Z.shape[1]] += np.asarray(Z[s : s + step], dtype=np.float64).T @ ct
    if scaling > 0:
        b[-1] = scaling * float(np.sum(c * t))
    return H, b


def _syrk_rows(Z: np.ndarray) -> int:
    """Rows per rank-k update: 32 MB of ``Z``'s rows (weighted copy)."""
    return max(256, _CHUNK_BYTES // (Z.itemsize * max(1, Z.shape[1])))


def _weighted_gram(
    Z: np.ndarray, c: np.ndarray, scaling: float, out: np.ndarray | None = None
) -> np.ndarray:
    """The upper triangle of ``sum c_i x_i x_i^T`` (``x_i = [z_i, scaling]``),
    in float64, added to ``out`` if given (its upper triangle); ``c`` may be
    negative. The ``D x D`` products run in ``Z``'s precision (float32
    features: half the time of float64, each chunk's sum rounded to float32
    before it is added in float64), two symmetric rank-k updates (positive
    and negative weights) per chunk."""
    from scipy.linalg import blas

    n, d = Z.shape
    size = d + 1 if scaling > 0 else d
    H = np.zeros((size, size)) if out is None else out
    single = Z.dtype == np.float32
    syrk = blas.ssyrk if single else blas.dsyrk
    step = _syrk_rows(Z)
    for s in range(0, n, step):
        Zs, cs = Z[s : s + step], c[s : s + step]
        for sign, keep in ((1.0, cs > 0), (-1.0, cs < 0)):
            if not keep.any():
                continue
            root = np.sqrt(np.abs(cs[keep])).astype(Z.dtype)
            A = Zs[keep] * root[:, None]
            # A^T A from the transposed (Fortran-ordered) view: no copy; its
            # lower triangle is zero.
            H[:d, :d] += sign * np.asarray(syrk(1.0, A.T, trans=0, lower=0), float)
    if scaling > 0:
        step = _chunk_rows(d)
        for s in range(0, n, step):
            Zs = np.asarray(Z[s : s + step], dtype=np.float64)
            H[:d, d] += scaling * (Zs.T @ c[s : s + step])
        H[d, d] += scaling**2 * float(np.sum(c))
    return H


class _GramBuffer:
    """``sum c_i x_i x_i^T`` over rows given a few at a time (the rows of
    each piece that changed side): kept until they fill a rank-k update, so
    that a block of many small pieces costs the updates of its rows, not one
    ``D x D`` matrix per piece."""

    def __init__(self, scaling: float) -> None:
        self.scaling = scaling
        self.rows: list[np.ndarray] = []
        self.weights: list[np.ndarray] = []
        self.count = 0
        self.H: np.ndarray | None = None

    def add(self, Z: np.ndarray, c: np.ndarray) -> None:
        if self.H is None:
            size = Z.shape[1] + (1 if self.scaling > 0 else 0)
            self.H = np.zeros((size, size))
        if len(Z):
            self.rows.append(Z)
            self.weights.append(c)
            self.count += len(Z)
            if self.count >= _syrk_rows(Z):
                self.flush()

    def flush(self) -> None:
        if self.count:
            Z = np.concatenate(self.rows) if len(self.rows) > 1 else self.rows[0]
            c = np.concatenate(self.weights)
            self.H = _weighted_gram(Z, c, self.scaling, out=self.H)
        self.rows, self.weights, self.count = [], [], 0

    def result(self) -> np.ndarray:
        self.flush()
        assert self.H is not None, "no rows were added"
        return self.H


def _outputs_and_sums(
    Z: np.ndarray, t: np.ndarray, c: np.ndarray, w: np.ndarray | None,
    scaling: float, loss: SquaredLoss,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The outputs at ``w`` (None: zero) of a block's rows, the sum over its
    active rows of ``c_i (o_i - tau_i) x_i`` and the same at zero, negated
    (:attr:`Scan.target_sum`)."""
    n, d = Z.shape
    size = d + 1 if scaling > 0 else d
    o = np.zeros(n)
    g = np.zeros(size)
    b = np.zeros(size)
    step = _chunk_rows(d)
    for s in range(0, n, step):
        Zs = np.asarray(Z[s : s + step], dtype=np.float64)
        if w is not None:
            o[s : s + step] = Zs @ w[:d]
            if scaling > 0:
                o[s : s + step] += w[d] * scaling
        t_s, o_s, c_s = t[s : s + step], o[s : s + step], c[s : s + step]
        r = c_s * (o_s - loss.target(t_s, o_s))
        r[~loss.active(t_s, o_s)] = 0.0
        zero = np.zeros(len(t_s))
        ct = c_s * loss.target(t_s, zero)
        ct[~loss.active(t_s, zero)] = 0.0
        # the rows' two sums in one product
        both = Zs.T @ np.stack([r, ct], axis=1)
        g[:d] += both[:, 0]
        b[:d] += both[:, 1]
        if scaling > 0:
            g[d] += scaling * float(r.sum())
            b[d] += scaling * float(ct.sum())
    return o, g, b


def _side_changes(
    t: np.ndarray, o: np.ndarray, c: np.ndarray, held: np.ndarray | None,
    loss: SquaredLoss,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The rows whose side of the margin differs from ``held`` (None: the
    active rows), and their signed weights (+: entered)."""
    margin = loss.active(t, o)
    changed = margin if held is None else margin != held
    return changed, np.where(margin, c, -c)[changed]


def block_scan(
    Z: np.ndarray, t: np.ndarray, c: np.ndarray, w: np.ndarray | None,
    scaling: float, held: np.ndarray | None, loss: SquaredLoss = HINGE,
) -> Scan:  # fmt: skip
    """:meth:`Passes.scan` over one block of rows."""
    o, g, b = _outputs_and_sums(Z, t, c, w, scaling, loss)
    changed, signed = _side_changes(t, o, c, held, loss)
    H = np.triu(_weighted_gram(Z[changed], signed, scaling))
    return Scan(o, g, H, int(changed.sum()), b)


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

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        parts = [
            block_statistics(Z, self.t[rows], self.c[rows], self.scaling)
            for Z, rows in self.blocks()
        ]
        if not parts:
            raise ValueError("The blocks of features are empty: no row to fit.")
        return _add_all(parts)

    def scan(
        self, w: np.ndarray | None, held: np.ndarray | None,
        loss: SquaredLoss = HINGE,
    ) -> Scan:  # fmt: skip
        out = np.empty(self.n_samples)
        parts = []
        for Z, rows in self.blocks():
            part = block_scan(
                Z, self.t[rows], self.c[rows], w, self.scaling,
                None if held is None else held[rows], loss,
            )  # fmt: skip
            out[rows] = part.outputs
            parts.append(_sums(part))
        if not parts:
            raise ValueError("The blocks of features are empty: no row to fit.")
        return Scan(out, *_add_all(parts))


def _add_all(parts: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    total = parts[0]
    for part in parts[1:]:
        total = _add(total, part)
    return total


def _sums(part: Scan) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """What a scan adds over blocks: all but the outputs."""
    return part.gradient_sum, part.hessian_change, part.changed, part.target_sum


@dataclass
class _Prepared:
    """A row block made ready for the passes: ``pieces[k]``, what
    ``prepare`` made of the rows ``bounds[k]:bounds[k + 1]`` of the block."""

    pieces: list[Any]
    bounds: np.ndarray


def _piece_bounds(n: int, piece_rows: int | None) -> np.ndarray:
    step = n if piece_rows is None else max(1, piece_rows)
    return np.unique(np.r_[np.arange(0, n, step), n])


def _prepare_block(
    block: np.ndarray, prepare: Callable[[np.ndarray], Any], piece_rows: int | None
) -> _Prepared:
    bounds = _piece_bounds(len(block), piece_rows)
    pieces = [prepare(block[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
    return _Prepared(pieces, bounds)


def _prepare_and_transform(
    prepare: Callable[[np.ndarray], Any], transform: Callable[[Any], np.ndarray],
    rows: np.ndarray,
) -> np.ndarray:  # fmt: skip
    return transform(prepare(rows))


def _register_sizeof() -> None:
    """Tell dask the memory of a kept block (it counts objects it does not
    know as a few bytes, and a worker would not spill them)."""
    from dask.sizeof import sizeof

    sizeof.register(_Prepared)(lambda block: arrays_bytes(block.pieces))


def _features_by_piece(
    block: Any, transform: Callable[[Any], np.ndarray] | None,
    piece_rows: int | None,
) -> Iterator[tuple[slice, np.ndarray]]:  # fmt: skip
    """The features of a block (rows, or :class:`_Prepared`) piece by piece,
    with the rows of the block each covers: one piece's features in memory
    at a time, whatever the size of the block."""
    if isinstance(block, _Prepared):
        bounds, pieces = block.bounds, block.pieces
    else:
        bounds = _piece_bounds(len(block), piece_rows)
        pieces = [block[lo:hi] for lo, hi in itertools.pairwise(bounds)]
    for lo, hi, piece in zip(bounds[:-1], bounds[1:], pieces, strict=True):
        yield slice(lo, hi), piece if transform is None else transform(piece)


def _dask_block_statistics(
    block: Any, t: np.ndarray, c: np.ndarray, transform: Any, scaling: float,
    piece_rows: int | None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    return _add_all([
        block_statistics(Z, t[rows], c[rows], scaling)
        for rows, Z in _features_by_piece(block, transform, piece_rows)
    ])  # fmt: skip


def _dask_block_scan(
    block: Any, t: np.ndarray, c: np.ndarray, transform: Any,
    w: np.ndarray | None, scaling: float, held: np.ndarray | None,
    piece_rows: int | None, loss: SquaredLoss,
) -> tuple[np.ndarray, tuple[Any, ...]]:  # fmt: skip
    outputs, gradients, targets, changes = [], [], [], 0
    gram = _GramBuffer(scaling)
    for rows, Z in _features_by_piece(block, transform, piece_rows):
        o, g, b = _outputs_and_sums(Z, t[rows], c[rows], w, scaling, loss)
        changed, signed = _side_changes(
            t[rows], o, c[rows], None if held is None else held[rows], loss
        )
        gram.add(Z[changed], signed)
        outputs.append(o)
        gradients.append(g)
        targets.append(b)
        changes += int(changed.sum())
    sums = (np.sum(gradients, 0), gram.result(), changes, np.sum(targets, 0))
    return np.concatenate(outputs), sums


def _tree_sum(parts: list[Any]) -> Any:
    """The sum of delayed tuples of arrays in a fixed binary tree: the same
    additions on any scheduler, few partial sums alive at once."""
    import dask

    add = dask.delayed(_add, pure=True)
    while len(parts) > 1:
        pairs = [add(a, b) for a, b in zip(parts[::2], parts[1::2], strict=False)]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def _tail(part: tuple[Any, ...]) -> Any:
    return part[1]


def _head(part: tuple[Any, ...]) -> Any:
    return part[0]


def _add(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple:
    return tuple(x + y for x, y in zip(a, b, strict=True))


class DaskPasses:
    """Passes over the row blocks of a dask array, computed where dask runs.

    Each worker computes its block's features (``transform`` of the rows,
    e.g. a fitted :class:`~missingkernels.ExpectedKernelFeatures`'s, or the
    rows themselves) piece by piece and returns only its outputs (``n``
    numbers in all) and the block's sums, ``D x D`` at most, added in a
    fixed binary tree (the same result on any scheduler, and at most a few
    such matrices in memory at once). The targets and weights stay in this
    process and go to each block's task as slices.

    Parameters
    ----------
    X : dask Array of shape (n_samples, n_features)
        Row blocks of known sizes.
    t : array-like of shape (n_samples,)
        Targets (labels in {-1, +1} for :func:`fit_squared_hinge`).
    c : array-like of shape (n_samples,), optional
        Row weights (ones).
    transform : callable, optional
        Rows (or what ``prepare`` made of them) -> features, picklable;
        None: X holds the features.
    intercept_scaling : float, default=1.0
    prepare : callable, optional
        Rows -> what ``transform`` takes instead of the rows, computed once
        per piece and kept (persisted) for every pass: the part of the
        features that does not depend on the pass (e.g. the conditionals
        of the rows).
    piece_rows : int, optional
        Rows whose features a worker makes at once (None: a whole block):
        bounds the memory of a pass whatever the size of the blocks.
    keep_rows : int, optional
        With ``prepare``: the blocks whose prepared rows are kept, the first
        ones up to this many rows (None: all); the others are prepared again
        at each pass (the memory of the kept ones against the time of
        preparing again).
    """

    def __init__(
        self, X: Any, t: Any, c: Any = None,
        transform: Callable[[Any], np.ndarray] | None = None,
        intercept_scaling: float = 1.0,
        prepare: Callable[[np.ndarray], Any] | None = None,
        piece_rows: int | None = None,
        keep_rows: int | None = None,
    ) -> None:  # fmt: skip
        from .._dask_blocks import import_dask

        import_dask("missingkernels' out-of-core linear fit")
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
        if self.c.shape != self.t.shape:
            raise ValueError(f"{self.n_samples} weights needed, got {self.c.shape}.")
        self.scaling = float(intercept_scaling)
        self.piece_rows = piece_rows
        self.bounds = np.cumsum((0, *X.chunks[0]))
        self.parts = list(X.rechunk({1: -1}).to_delayed().ravel())
        # Each block's transform: of its kept prepared rows, else of its rows.
        self.transforms: list[Any] = [transform] * len(self.parts)
        n_kept = 0
        if prepare is not None:
            import dask

            if transform is None:
                raise ValueError("prepare needs a transform of what it makes.")
            _register_sizeof()
            n_kept = len(self.parts)
            if keep_rows is not None:
                n_kept = int(np.searchsorted(self.bounds[1:], keep_rows, "right"))
            part = dask.delayed(_prepare_block, pure=True)
            kept = dask.persist(
                *[part(b, prepare, piece_rows) for b in self.parts[:n_kept]]
            )
            self.parts[:n_kept] = kept
            again = functools.partial(_prepare_and_transform, prepare, transform)
            self.transforms[n_kept:] = [again] * (len(self.parts) - n_kept)
        #: Rows whose prepared form is kept.
        self.kept_rows = int(self.bounds[n_kept])

    def with_targets(self, t: Any) -> DaskPasses:
        """These passes (and their kept blocks) with other targets ``t``."""
        other = copy.copy(self)
        other.t = np.asarray(t, dtype=np.float64)
        if other.t.shape != self.t.shape:
            raise ValueError(f"{self.n_samples} targets needed, got {other.t.shape}.")
        return other

    def _slices(self) -> Iterator[tuple[Any, slice, Any]]:
        bounds = zip(self.bounds[:-1], self.bounds[1:], strict=True)
        for part, (lo, hi), transform in zip(
            self.parts, bounds, self.transforms, strict=True
        ):
            yield part, slice(lo, hi), transform

    def statistics(self) -> tuple[np.ndarray, np.ndarray]:
        import dask

        part = dask.delayed(_dask_block_statistics, pure=True)
        root = _tree_sum([
            part(b, self.t[rows], self.c[rows], transform, self.scaling,
                 self.piece_rows)
            for b, rows, transform in self._slices()
        ])  # fmt: skip
        ((H, b),) = dask.compute(root)
        return H, b

    def scan(
        self, w: np.ndarray | None, held: np.ndarray | None,
        loss: SquaredLoss = HINGE,
    ) -> Scan:  # fmt: skip
        import dask

        part = dask.delayed(_dask_block_scan, pure=True)
        parts = [
            part(
                b,
                self.t[rows],
                self.c[rows],
                transform,
                w,
                self.scaling,
                None if held is None else held[rows],
                self.piece_rows,
                loss,
            )
            for b, rows, transform in self._slices()
        ]
        head, tail = dask.delayed(_head, pure=True), dask.delayed(_tail, pure=True)
        outputs, sums = dask.compute(
            [head(p) for p in parts], _tree_sum([tail(p) for p in parts])
        )
        return Scan(np.concatenate(outputs), *sums)


def _solve(H: np.ndarray, b: np.ndarray, C: float) -> np.ndarray:
    """``(I + 2 C H) x = b`` for ``H`` symmetric PSD given by its upper
    triangle (Cholesky)."""
    A = 2.0 * C * np.triu(H)
    A[np.diag_indices_from(A)] += 1.0
    factor = linalg.cho_factor(A, lower=False, check_finite=False)
    return np.asarray(linalg.cho_solve(factor, b, check_finite=False))


def fit_least_squares(passes: Passes, *, C: float = 1.0) -> LinearFit:
    """Minimise ``1/2 ||w||^2 + C sum_i c_i (t_i - w^T x_i)^2`` in one pass.

    The ridge problem on the targets ``t_i`` of the passes, the intercept a
    regularised feature of value ``intercept_scaling`` (0: no intercept).
    """
    H, b = passes.statistics()
    w = _solve(H, 2.0 * C * b, C)
    return _split(w, _scaling(passes), n_passes=1, converged=True)


def _scaling(passes: Passes) -> float:
    return float(passes.scaling)


def _split(w: np.ndarray, scaling: float, n_passes: int, converged: bool) -> LinearFit:
    if scaling <= 0:
        return LinearFit(w, 0.0, n_passes, converged)
    return LinearFit(w[:-1], float(w[-1] * scaling), n_passes, converged)


def _line_search(
    w: np.ndarray, step: np.ndarray, o: np.ndarray, o_new: np.ndarray,
    y: np.ndarray, c: np.ndarray, C: float, loss: SquaredLoss,
) -> float:  # fmt: skip
    """The exact minimiser over ``t`` in ``[0, 1]`` of the objective along
    ``w + t step`` (outputs ``o + t (o_new - o)``): the root of its derivative,
    continuous, piecewise linear and increasing in ``t``, by bisection."""
    delta = o_new - o
    a0, a1 = float(w @ step), float(step @ step)

    def slope(t: float) -> float:
        at = o + t * delta
        on = loss.active(y, at)
        r = at[on] - loss.target(y[on], at[on])
        return a0 + t * a1 + 2.0 * C * float(np.sum(c[on] * delta[on] * r))

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


def _start(passes: Passes, coef: np.ndarray | None, intercept: float) -> Any:
    """``w0`` in the augmented coordinates (None: zero)."""
    if coef is None:
        return None
    w0 = np.asarray(coef, dtype=np.float64).ravel()
    if passes.scaling > 0:
        w0 = np.append(w0, intercept / passes.scaling)
    return w0


Progress = Callable[[int, float, int], None]


def fit_squared_hinge(
    passes: Passes, *, C: float = 1.0, max_passes: int = 50, tol: float = 1e-10,
    coef_init: np.ndarray | None = None, intercept_init: float = 0.0,
    progress: Progress | None = None,
) -> LinearFit:  # fmt: skip
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
        Passes over the rows at most: one to start, then one per Newton step
        whose line search takes the whole step, two otherwise.
    tol : float, default=1e-10
        LIBLINEAR's stopping rule for this objective ([2] of the module; that
        of ``LinearSVC(dual=False, tol=tol)``): stop when the gradient's norm
        is at most ``tol * max(min(n_pos, n_neg), 1) / n`` times its norm at
        zero, ``n_pos`` and ``n_neg`` the rows of each label. Also when a
        step moves the outputs by less than ``tol`` relative, or when a step
        that changed no row's side did not halve the gradient (its rounding
        floor: sums of ``n`` terms).
    coef_init, intercept_init : optional
        Where to start (e.g. the fit on a sample of the rows: fewer rows
        change side, and each pass costs less); zero by default.
    progress : callable, optional
        Called after each pass with the passes so far, the gradient's norm
        divided by the norm at which the passes stop (below 1: done) and the
        rows that changed side.

    Returns
    -------
    fit : LinearFit
    """
    y = np.asarray(passes.t, dtype=np.float64)
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("fit_squared_hinge needs labels in {-1, +1}.")
    fraction = tol * max(int(min(np.sum(y > 0), np.sum(y < 0))), 1) / len(y)
    return _finite_newton(
        passes, HINGE, C=C, max_passes=max_passes, tol=tol, fraction=fraction,
        coef_init=coef_init, intercept_init=intercept_init, progress=progress,
    )  # fmt: skip


def fit_squared_epsilon_insensitive(
    passes: Passes, *, C: float = 1.0, epsilon: float = 0.0,
    max_passes: int = 50, tol: float = 1e-10,
    coef_init: np.ndarray | None = None, intercept_init: float = 0.0,
    progress: Progress | None = None,
) -> LinearFit:  # fmt: skip
    """Minimise LinearSVR's primal objective with the squared
    epsilon-insensitive loss, out of core::

        1/2 ||w||^2 + sum_i C_i max(0, |t_i - w^T x_i| - epsilon)^2

    The same finite Newton method as :func:`fit_squared_hinge`, on the rows
    outside the tube; ``tol`` is LIBLINEAR's rule for this objective (that of
    ``LinearSVR(loss="squared_epsilon_insensitive", dual=False, tol=tol)``):
    stop when the gradient's norm is at most ``tol`` times its norm at zero.
    The other parameters are :func:`fit_squared_hinge`'s; ``epsilon >= 0``
    is the half-width of the tube, in the units of the targets.

    Returns
    -------
    fit : LinearFit
    """
    if not (np.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0; got {epsilon!r}.")
    if not np.all(np.isfinite(passes.t)):
        raise ValueError("fit_squared_epsilon_insensitive needs finite targets.")
    return _finite_newton(
        passes, SquaredLoss(float(epsilon)), C=C, max_passes=max_passes,
        tol=tol, fraction=tol, coef_init=coef_init,
        intercept_init=intercept_init, progress=progress,
    )  # fmt: skip


def _finite_newton(
    passes: Passes, loss: SquaredLoss, *, C: float, max_passes: int,
    tol: float, fraction: float, coef_init: np.ndarray | None,
    intercept_init: float, progress: Progress | None,
) -> LinearFit:  # fmt: skip
    """The finite Newton method of the module on ``loss``; stops when the
    gradient's norm is at most ``fraction`` times its norm at zero (or at
    the floors :func:`fit_squared_hinge` describes)."""
    y = np.asarray(passes.t, dtype=np.float64)
    c = np.asarray(passes.c, dtype=np.float64)
    w = _start(passes, coef_init, intercept_init)
    n_passes = 0
    # The gradient at zero is -2 C target_sum (the rows active at zero).
    stop = 0.0

    def scan_at(point: np.ndarray | None, held: np.ndarray | None) -> Scan:
        nonlocal n_passes, stop
        scan = passes.scan(point, held, loss)
        n_passes += 1
        if n_passes == 1:
            stop = fraction * 2.0 * C * float(np.linalg.norm(scan.target_sum))
        if progress is not None:
            at = 0.0 if point is None else point
            g = at + 2.0 * C * scan.gradient_sum
            progress(
                n_passes, float(np.linalg.norm(g)) / max(stop, 1e-300), scan.changed
            )
        return scan

    scan = scan_at(w, None)
    w = np.zeros(len(scan.gradient_sum)) if w is None else w
    # H: the statistics of the active rows, kept up to date from the rows
    # that change side; the gradient comes exact from each pass, so rounding
    # in H (float32 features) slows the Newton steps, not where they stop.
    H, o = scan.hessian_change, scan.outputs
    held = loss.active(y, o)
    g = w + 2.0 * C * scan.gradient_sum
    converged = bool(np.linalg.norm(g) <= stop)
    while not converged and n_passes < max_passes:
        step = -_solve(H, g, C)
        scan = scan_at(w + step, held)
        # No row changed side (nor crossed the tube): the objective is one
        # quadratic along the step (outputs are linear in it) and the Newton
        # step its minimiser, to the rounding the line search would only see
        # as noise.
        same = scan.changed == 0 and _same_sides(loss, y, o, scan.outputs)
        t = 1.0 if same else _line_search(w, step, o, scan.outputs, y, c, C, loss)
        moved = t * np.abs(scan.outputs - o).max(initial=0.0)
        if t == 1.0:
            w, o = w + step, scan.outputs
        else:
            if n_passes >= max_passes:
                break
            w = w + t * step  # the margin at the line search's point: a pass
            scan = scan_at(w, held)
            o = scan.outputs
        H = H + scan.hessian_change
        held = loss.active(y, o)
        g, g_before = w + 2.0 * C * scan.gradient_sum, g
        # With the margin fixed the steps contract the gradient (by the
        # relative error of H, 1e-3 or less); one that does not halve it has
        # reached its rounding floor.
        floor = same and np.abs(g).max() > 0.5 * np.abs(g_before).max()
        converged = (
            bool(np.linalg.norm(g) <= stop)
            or floor
            or moved <= tol * max(1.0, np.abs(o).max(initial=0.0))
        )
    return _split(w, _scaling(passes), n_passes, converged)


def _same_sides(
    loss: SquaredLoss, y: np.ndarray, o: np.ndarray, o_new: np.ndarray
) -> bool:
    """Whether no active row went from one side of the tube to the other
    (never, for the hinge: it has one side)."""
    if loss.epsilon is None:
        return True
    both = loss.active(y, o) & loss.active(y, o_new)
    return bool(np.all(np.sign(y - o)[both] == np.sign(y - o_new)[both]))
