"""The RBF cells over factor conditionals (diagonal plus low rank).

This module is the whole of the factor-analytic RBF closed form: the cell
``(RBF, FactorConditionals)`` of the expectation table. In the
Euclidean metric its Gram, variance and expected Fourier features need, per
pair of rows, sums over features that are matrix products over tiles of
rows (``24 d`` multiply-adds at ``q = 5``: those with the entries), sums
over the features missing in both rows read from a table of subset sums
(``d / 8`` rows of ``q (q + 1) + 1`` values) and a factorisation of size
``2q`` (:mod:`._compiled`), instead of one of size ``|J|``. In the
Mahalanobis metric of the density (:mod:`._mahalanobis`) the same
holds with a system of size ``3q``. The Gaussian cell computes the pairs
from the covariance blocks (exactly, more slowly) when the Mahalanobis
metric is another covariance, when the factors stand far above the noise
(where the low-rank form would lose digits), or for conditionals given
explicit blocks.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....conditionals import FactorConditionals
from .. import engine
from .._cells import RBFCell
from .._fourier import gaussian_fourier
from .._kernel import RBF
from ._layouts import (
    COLS,
    ROWS,
    by_tiles,
    group_bits,
    lower_indices,
    mask_codes,
    pair_table,
    table_width,
)

__all__: list[str] = []


def _loops() -> Any:
    return engine.lazy_loops(f"{__package__}._compiled", "the factor RBF loop")


@dataclass(frozen=True)
class _Features:
    """Per-feature constants at one ``gamma`` (``t = 2 gamma psi``)."""

    inv1: np.ndarray  # 1 / (1 + t)
    inv2: np.ndarray  # 1 / (1 + 2 t)
    cc: np.ndarray  # inv2 - inv1
    a1: np.ndarray  # inv1 - 1
    e2: np.ndarray  # inv2 - 2 inv1 + 1
    ldc: np.ndarray  # log(1 + 2 t) - 2 log(1 + t)
    l1: np.ndarray  # log(1 + t)
    l2: np.ndarray  # log(1 + 2 t)

    @classmethod
    def at(cls, noise: np.ndarray, gamma: float) -> _Features:
        t = 2.0 * gamma * noise
        l1, l2 = np.log1p(t), np.log1p(2.0 * t)
        return cls(
            inv1=1.0 / (1.0 + t),
            inv2=1.0 / (1.0 + 2.0 * t),
            cc=-t / ((1.0 + t) * (1.0 + 2.0 * t)),
            a1=-t / (1.0 + t),
            e2=2.0 * t * t / ((1.0 + t) * (1.0 + 2.0 * t)),
            ldc=l2 - 2.0 * l1,
            l1=l1,
            l2=l2,
        )


class EuclideanFactorSide:
    """The rows of one argument at one ``gamma``: per-row sums and features.

    With ``w_k = sqrt(2 gamma) W[k]`` and ``t = 2 gamma psi``: ``P`` the
    posterior precision of the factors, ``I + sum_{k observed} w_k w_k^T /
    t_k``, and ``H = P + sum_{k missing} w_k w_k^T / (1 + t_k)``; ``ldP = log
    det P``; ``p = sum_{k missing} w_k x_k / (1 + t_k)``; ``cq = sum_k (1 +
    a1_k m_k) x_k^2``; ``ld0 = sum_{k missing} log(1 + t_k)``: the parts of
    the pair sums that depend on one row only. ``self_log`` is the log of
    ``E k(X_i, X_i')`` for independent copies.
    """

    def __init__(self, c: FactorConditionals, center: np.ndarray, gamma: float):
        f = _Features.at(c.noise, gamma)
        self.f = f
        q = self.q = c.n_factors
        self.x = np.ascontiguousarray(c.means - center, dtype=np.float64)
        self.m = m = c.missing.astype(np.float64)
        w = c.loadings * np.sqrt(2.0 * gamma)  # (d, q)
        self.w = w
        d = w.shape[0]
        outer = (w[:, :, None] * w[:, None, :]).reshape(d, q * q)
        t = 2.0 * gamma * c.noise
        P = ((1.0 - m) @ (outer / t[:, None])).reshape(-1, q, q) + np.eye(q)
        H = P + (m @ (outer * f.inv1[:, None])).reshape(-1, q, q)
        self.H = np.ascontiguousarray(0.5 * (H + np.swapaxes(H, 1, 2)))
        # log det P from the conditionals' roots (R R^T = P^-1).
        roots = c.roots[c.pattern_index]
        self.ldP = -2.0 * np.log(np.abs(np.diagonal(roots, axis1=1, axis2=2))).sum(1)
        self.p = (m * self.x * f.inv1) @ w
        self.ld0 = m @ f.l1
        self.cq = ((1.0 + f.a1 * m) * self.x * self.x).sum(axis=1)
        # Independent copies: A = I + 4 gamma C_i = (1 + 2 t) on J_i + 2 U U^T,
        # U = W_J R (R R^T = P^-1): K2 = I + 2 R^T (sum_J inv2 w w^T) R.
        Q = (m @ (outer * f.inv2[:, None])).reshape(-1, q, q)
        K2 = 2.0 * (np.swapaxes(roots, 1, 2) @ Q @ roots)
        K2 += np.eye(q)
        chol = np.linalg.cholesky(K2)
        logdet = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        self.self_log = -0.5 * (m @ f.l2 + logdet)
        self.bits = group_bits(d, q)
        self.codes = mask_codes(c.missing, self.bits)
        self._right: dict[str, np.ndarray] | None = None

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    def tile_rows(
        self,
        loops: Any,
        b: EuclideanFactorSide,
        tiles: np.ndarray,
        rows_per_tile: int,
        gamma: float,
        symmetric: bool,
        off_a: np.ndarray,
        off_b: np.ndarray,
        out: np.ndarray,
    ) -> int:
        """The pairs of the row tiles ``tiles`` with every column tile."""
        return _tile_rows(
            loops, self, b.right(), b.n, tiles, gamma, symmetric, off_a, off_b, out
        )

    def left(self, rows: slice) -> dict[str, np.ndarray]:
        """The row features of ``rows`` as the left factor of the products."""
        f = self.f
        x, m = self.x[rows], self.m[rows]
        alpha = 1.0 + f.a1 * m
        beta = f.a1 + f.e2 * m
        c = np.ascontiguousarray
        return {
            "m": c(m),
            "mx": c(m * x),
            "x": c(x),
            "quad": c(np.hstack([beta * x * x, -2.0 * alpha * x, -2.0 * beta * x])),
        }

    def right(self) -> dict[str, np.ndarray]:
        """The row features as the right factor, by tiles of ``COLS`` rows
        (kept: a training side is a right side again in every prediction).

        ``"m"`` blocks, per feature ``k``: ``(inv1_k x_k + c_k m_k x_k)
        w_k``, ``c_k m_k x_k w_k`` and ``beta_k x_k^2``. The sums over the
        features missing in both rows (``N``, ``N'``, the log determinant
        part) come from ``"table"``, indexed by the rows' ``codes``.
        """
        if self._right is None:
            f = self.f
            q = self.q
            B = COLS
            x, m, w = by_tiles(self.x, B), by_tiles(self.m, B), self.w  # (T, d, B)
            a, b = lower_indices(q)
            ww = w[:, a] * w[:, b]  # (d, s)
            T, d = x.shape[:2]
            P = table_width(q)
            values = np.zeros((d, P))
            values[:, : 2 * len(a) + 1] = np.hstack(
                [f.inv2[:, None] * ww, f.cc[:, None] * ww, f.ldc[:, None]]
            )
            # Built in place, block by block: no (n, d, blocks) temporaries.
            blocks = np.empty((T, d, 2 * q + 1, B))
            mc = m * f.cc[:, None]
            mcx = mc * x
            ix = x * f.inv1[:, None] + mcx
            cmw = np.empty((T, d, q, B))
            im_w = np.empty((T, d, q, B))
            for a_ in range(q):
                wa = w[:, a_, None]
                np.multiply(ix, wa, out=blocks[:, :, a_])
                np.multiply(mcx, wa, out=blocks[:, :, q + a_])
                np.multiply(mc, wa, out=cmw[:, :, a_])
                np.multiply(m * f.inv1[:, None], wa, out=im_w[:, :, a_])
            beta = f.a1[:, None] + f.e2[:, None] * m
            np.multiply(beta, x * x, out=blocks[:, :, 2 * q])
            n_pad = T * B - self.n
            self._right = {
                "table": pair_table(values, self.bits),
                "codes": _pad(self.codes, n_pad),
                "m": blocks,
                "mx": cmw,
                "x": im_w,
                "quad": np.ascontiguousarray(np.concatenate([m, x, m * x], axis=1)),
                # Row index last: the lanes of the compiled loop read along it.
                "H": np.ascontiguousarray(
                    _pad(self.H, n_pad, np.eye(q)).transpose(1, 2, 0)
                ),
                "ldP": _pad(self.ldP, n_pad),
                "p": np.ascontiguousarray(_pad(self.p, n_pad).T),
                "ld0": _pad(self.ld0, n_pad),
                "cq": _pad(self.cq, n_pad),
            }
        return self._right


def _pad(a: np.ndarray, n: int, fill: Any = 0) -> np.ndarray:
    """``a`` with ``n`` more rows of ``fill``: the padding lanes of the last
    column tile read them (and are not written out)."""
    pad = np.empty((n, *a.shape[1:]), dtype=a.dtype)
    pad[...] = fill
    return np.ascontiguousarray(np.concatenate([a, pad]))


# The sides of each conditionals object at the last gammas used (a kernel
# keeps its training rows' conditionals: the training side is built once).
_SIDES: weakref.WeakKeyDictionary[Any, dict[tuple, EuclideanFactorSide]] = (
    weakref.WeakKeyDictionary()
)


def _side(c: FactorConditionals, metric: Any, gamma: float) -> Any:
    key = (id(metric), float(gamma))
    with engine.LOCK:
        memo = _SIDES.setdefault(c, {})
        side: Any = memo.get(key)
    if side is None:
        if metric.mahalanobis:
            from ._mahalanobis import MahalanobisFactorSide

            side = MahalanobisFactorSide(c, metric.center, gamma, COLS)
        else:
            side = EuclideanFactorSide(c, metric.center, gamma)
        with engine.LOCK:
            for old in list(memo)[:-1]:
                del memo[old]
            memo[key] = side
    return side


def _tile_rows(
    loops: Any,
    a: EuclideanFactorSide,
    R: dict[str, np.ndarray],
    nb: int,
    tiles: np.ndarray,
    gamma: float,
    symmetric: bool,
    off_a: np.ndarray,
    off_b: np.ndarray,
    out: np.ndarray,
) -> int:
    """The pairs of the row tiles ``tiles`` of ``a`` with every column tile
    (``j <= i`` when ``symmetric``)."""
    q = a.q
    nblocks = 2 * q + 1
    B = COLS
    # The products' buffers, reused by every tile (fresh arrays of this size
    # would be mapped, and page-faulted, at every tile).
    bufs = [np.empty((ROWS, k * B)) for k in (nblocks, q, q, 1)]
    for t in tiles:
        i0 = int(t) * ROWS
        rows = slice(i0, min(i0 + ROWS, a.n))
        r = rows.stop - i0
        Lf = a.left(rows)
        for g in range(R["m"].shape[0]):
            j0 = g * B
            if symmetric and j0 > rows.stop - 1:
                break
            nbt = min(B, nb - j0)
            G1, G2, G3, G4 = (
                np.matmul(Lf[key], R[key][g].reshape(R[key].shape[1], -1), out=buf[:r])
                for key, buf in zip(("m", "mx", "x", "quad"), bufs, strict=True)
            )
            G1 = G1.reshape(r, nblocks, B)
            G2 = G2.reshape(r, q, B)
            G3 = G3.reshape(r, q, B)
            code = loops.finish_tile(
                i0, j0, nbt, G1, G2, G3, G4,
                a.H, a.ldP, a.p, a.cq, a.ld0, off_a,
                R["H"], R["ldP"], R["p"], R["cq"], R["ld0"], off_b,
                R["table"], a.codes, R["codes"], float(gamma), bool(symmetric), out,
            )  # fmt: skip
            if code:
                return int(code)
    return 0


def _log_gram(
    a: Any,
    b: Any,
    gamma: float,
    off_a: np.ndarray,
    off_b: np.ndarray | None,
) -> np.ndarray:
    """``log E k(X_i, Y_j) + off_a[i] + off_b[j]`` (``b=None``: the rows of
    ``a`` with themselves, a row paired with an independent copy)."""
    loops = _loops()
    symmetric = b is None
    other = a if b is None else b
    other.right()  # built once, before the threads share it
    ob = np.ascontiguousarray(off_a if off_b is None else off_b, dtype=np.float64)
    oa = np.ascontiguousarray(off_a, dtype=np.float64)
    out = np.empty((a.n, other.n))
    if a.n == 0 or other.n == 0:
        return out
    n_tiles = -(-a.n // ROWS)
    T = max(1, min(engine.n_threads(), n_tiles))
    tile_lists = engine.deal(np.arange(n_tiles, dtype=np.int64), T, symmetric)

    def task(tiles: np.ndarray) -> Any:
        return lambda: a.tile_rows(
            loops, other, tiles, ROWS, gamma, symmetric, oa, ob, out
        )

    for code in engine.run([task(tl) for tl in tile_lists]):
        if code:
            raise ValueError(
                "The factor density's conditionals give a matrix that is not "
                f"positive definite (row {int(code) - 1}), so the expected RBF is "  # type: ignore[call-overload]
                "undefined: its noise variances or loadings are not finite."
            )
    if symmetric:
        starts = np.arange(0, a.n, 64, dtype=np.int64)
        engine.run(
            [
                functools.partial(loops.mirror_lower, out, starts[t::T])
                for t in range(min(T, len(starts)))
            ]
        )
    return out


# In the Mahalanobis metric the low-rank form subtracts two terms of about
# lambda_max(W^T Psi^-1 W) times the result; above this the Gaussian cell
# (whitened, no such cancellation) keeps the kernel to ~1e-12.
_MAHALANOBIS_MAX_SNR = 1e4
# In the Euclidean metric the factors' precision P = I + sum_obs w w^T / t
# holds entries up to lambda = lambda_max(W^T Psi^-1 W) / (2 gamma), and the
# pair's corrections to it are O(1): the kernel loses about 4e-18 lambda
# relatively (measured: 9e-12 at lambda 1.4e6, 4e-10 at 1e8, 3e-8 at 8e9,
# q = 5). Above this the Gaussian cell computes the pairs (to ~1e-10).
_EUCLIDEAN_MAX_SNR = 1e7


def _signal_to_noise(c: FactorConditionals) -> float:
    """``lambda_max(W^T Psi^-1 W)``: how far the factors stand above the noise."""
    w = c.loadings / np.sqrt(c.noise)[:, None]
    return float(np.linalg.eigvalsh(w.T @ w)[-1])


def _same_density(
    cx: FactorConditionals, cy: FactorConditionals | None, base: Any = None
) -> bool:
    """Whether both arguments are described by the same factors, the
    factors do not stand so far above the noise that the low-rank form
    would lose digits and, in the Mahalanobis metric, the metric is the
    density's covariance (else the Gaussian cell computes the pair from the
    covariance blocks)."""
    if not cx.factored or (cy is not None and not cy.factored):
        return False
    if base is not None and not base.metric_.mahalanobis:
        if _signal_to_noise(cx) / (2.0 * float(base.gamma_)) > _EUCLIDEAN_MAX_SNR:
            return False
    if base is not None and base.metric_.mahalanobis:
        S = getattr(base, "metric_covariance_", None)
        if S is None or cx.covariance is None:
            return False
        if not np.allclose(S, cx.covariance, rtol=1e-12, atol=0.0):
            return False
        if _signal_to_noise(cx) > _MAHALANOBIS_MAX_SNR:
            return False
    if cy is None or cy is cx:
        return True
    return bool(
        np.array_equal(cx.loadings, cy.loadings) and np.array_equal(cx.noise, cy.noise)
    )


class FactorSums:
    """The sums of factor conditionals for :class:`~.._cells.RBFCell`: one
    closed form per pair of rows, in log space, low rank. Where that form
    does not hold (:func:`_same_density`, the cell's ``applies_to``), the
    table gives the pairs to the next cell, the Gaussian one, which computes
    them from the covariance blocks."""

    in_log_space = True

    def self_log(self, base: RBF, c: Any, gamma: float) -> np.ndarray:
        return np.asarray(_side(c, base.metric_, gamma).self_log.copy())

    def pair_sums(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float,
        off_x: np.ndarray | None, off_y: np.ndarray | None, *, log: bool,
        clip: bool,
    ) -> np.ndarray:  # fmt: skip
        metric = base.metric_
        a = _side(cx, metric, gamma)
        b = None if cy is None else _side(cy, metric, gamma)
        off_a = np.zeros(a.n) if off_x is None else off_x
        off_b = None
        if b is not None:
            off_b = np.zeros(b.n) if off_y is None else off_y
        L = _log_gram(a, b, gamma, off_a, off_b)
        upper = 0.0 if clip else None
        if not log:
            engine.exp_inplace(L, upper=upper)
        elif upper is not None:
            np.minimum(L, upper, out=L)
        return L

    def features(self, c: Any, feature_map: Any) -> np.ndarray:
        """Expected Fourier features, damped by ``exp(-1/2 w^T C_J w)`` with
        ``w^T C_J w = sum_J psi w^2 + |R_p^T W_J^T w_J|^2``."""
        if not c.factored:
            return gaussian_fourier(c, feature_map)
        return fourier_features(c, feature_map)


# Patterns per batch of the damping (bounds the (P, F, q) temporaries).
_PATTERN_BLOCK = 64


def fourier_features(c: FactorConditionals, fmap: Any) -> np.ndarray:
    """Fourier features of factor conditionals, damped per missing pattern
    from the factors (``O(P F d q)`` for ``P`` patterns, ``F`` frequencies)."""
    omega = fmap.omega  # (F, d)
    mask = c.patterns.astype(np.float64)
    quad = (mask * c.noise) @ (omega * omega).T  # (P, F)
    for s in range(0, len(mask), _PATTERN_BLOCK):
        m = mask[s : s + _PATTERN_BLOCK]
        WR = np.einsum("dk,pkl->pdl", c.loadings, c.roots[s : s + _PATTERN_BLOCK])
        B = np.einsum("fd,pdl->pfl", omega, WR * m[:, :, None])
        quad[s : s + _PATTERN_BLOCK] += np.einsum("pfl,pfl->pf", B, B)
    damping = np.exp(-0.5 * np.maximum(quad, 0.0))[c.pattern_index]
    return np.asarray(fmap.transform(c.means, damping))


#: The cell ``(RBF, FactorConditionals)`` of the expectation table
#: (registered by :mod:`missingkernels.kernels.rbf`).
FACTOR_CELL = RBFCell(
    FactorSums(), applies_to=lambda base, cx, cy: _same_density(cx, cy, base)
).expectation(
    FactorConditionals, "RBF over FactorConditionals: closed form, low rank, compiled"
)
