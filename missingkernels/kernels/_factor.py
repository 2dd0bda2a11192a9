"""The RBF cells over factor conditionals (diagonal plus low rank).

This module is the whole of the factor-analytic RBF closed form, registered
as a built-in plugin through the same hook a third-party plugin uses: the
cell ``(RBF, FactorConditionals)`` of the expectation table, for the
Euclidean metric. Its Gram, variance and expected Fourier features cost
``O(d + (|J_i| + |J_j|) q + |J_i & J_j| q^2 + q^3)`` per pair of rows
(:mod:`._factor_compiled`) instead of a factorisation of size ``|J|``. In the
Mahalanobis metric the whitened conditional covariances are no longer
diagonal plus low rank on the missing features, and the Gaussian cell (over
the same conditionals, exactly) is used.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..conditionals import FactorConditionals, GaussianConditionals
from ..hookspecs import hookimpl
from . import _rbf
from ._base_kernels import RBF
from ._table import Expectation, find_expectation

__all__: list[str] = []


@functools.cache
def _loops() -> Any:
    from .._numba_notice import notice_if_compiling
    from . import _factor_compiled

    notice_if_compiling(_factor_compiled, "the factor RBF loop")
    return _factor_compiled


@dataclass(frozen=True)
class _Features:
    """Per-feature constants at one ``gamma`` (``t = 2 gamma psi``)."""

    inv1: np.ndarray  # 1 / (1 + t)
    inv2: np.ndarray  # 1 / (1 + 2 t)
    cc: np.ndarray  # inv2 - inv1
    a1: np.ndarray  # inv1 - 1
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
            ldc=l2 - 2.0 * l1,
            l1=l1,
            l2=l2,
        )


@dataclass(frozen=True)
class _Side:
    """The rows of one argument at one ``gamma``, as the loop takes them."""

    x: np.ndarray  # (n, d) centred filled means
    Jidx: np.ndarray  # (n, kmax)
    nJ: np.ndarray  # (n,)
    Oidx: np.ndarray  # (n, d)
    nO: np.ndarray  # (n,)
    Ua: np.ndarray  # (n, kmax, q)
    K0: np.ndarray  # (n, q, q)
    ld0: np.ndarray  # (n,)
    self_log: np.ndarray  # (n,) log E k(X_i, X_i'), independent copies
    xg: np.ndarray  # (G, d, L)
    mg: np.ndarray  # (G, d, L)
    Ug: np.ndarray  # (G, d, q, L)
    K0g: np.ndarray  # (G, q, q, L)
    ld0g: np.ndarray  # (G, L)

    @property
    def n(self) -> int:
        return int(self.x.shape[0])


def _lanes(a: np.ndarray, L: int) -> np.ndarray:
    """``(n, ...)`` -> ``(G, ..., L)``: rows by groups of ``L`` (the last
    padded with its final row), the row index last."""
    n = a.shape[0]
    G = max(1, -(-n // L))
    idx = np.minimum(np.arange(G * L), max(n - 1, 0))
    b = a[idx] if n else np.zeros((G * L, *a.shape[1:]))
    b = b.reshape(G, L, *a.shape[1:])
    return np.ascontiguousarray(np.moveaxis(b, 1, -1))


def _build(c: FactorConditionals, center: np.ndarray, gamma: float) -> _Side:
    f = _Features.at(c.noise, gamma)
    missing = c.missing
    d = missing.shape[1]
    q = c.n_factors
    x = np.ascontiguousarray(c.means - center, dtype=np.float64)
    nJ = missing.sum(axis=1).astype(np.int64)
    kmax = max(1, int(nJ.max(initial=0)))
    # Stable argsort puts each row's missing features first, in order.
    order = np.argsort(~missing, axis=1, kind="stable").astype(np.int64)
    Jidx = np.ascontiguousarray(order[:, :kmax])
    Oidx = np.ascontiguousarray(np.argsort(missing, axis=1, kind="stable"), np.int64)
    nO = d - nJ
    # Dense U (n, d, q): sqrt(2 gamma) W R_p on the missing features.
    U = c._row_factors(slice(None)) * np.sqrt(2.0 * gamma)
    Ua = np.take_along_axis(U, Jidx[:, :, None], axis=1)
    Ua *= (np.arange(kmax)[None, :] < nJ[:, None])[:, :, None]
    Ua = np.ascontiguousarray(Ua)
    K0 = np.einsum("ndq,ndr->nqr", U * f.inv1[None, :, None], U)
    K0 += np.eye(q)
    ld0 = missing @ f.l1
    # Independent copies: A = I + 4 gamma C_i = (1 + 2 t) on J_i + 2 U U^T.
    K2 = 2.0 * np.einsum("ndq,ndr->nqr", U * f.inv2[None, :, None], U) + np.eye(q)
    chol = np.linalg.cholesky(K2)
    logdet = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
    self_log = -0.5 * (missing @ f.l2 + logdet)
    L = _loops()._L
    return _Side(
        x=x, Jidx=Jidx, nJ=nJ, Oidx=Oidx, nO=nO.astype(np.int64), Ua=Ua,
        K0=np.ascontiguousarray(K0), ld0=np.ascontiguousarray(ld0),
        self_log=self_log, xg=_lanes(x, L), mg=_lanes(missing.astype(np.float64), L),
        Ug=_lanes(U, L), K0g=_lanes(K0, L), ld0g=_lanes(ld0, L),
    )  # fmt: skip


# The sides of each conditionals object at the last gammas used (a kernel
# keeps its training rows' conditionals: the training side is built once).
_SIDES: weakref.WeakKeyDictionary[Any, dict[tuple, _Side]] = weakref.WeakKeyDictionary()


def _side(c: FactorConditionals, metric: Any, gamma: float) -> _Side:
    key = (id(metric), float(gamma))
    with _rbf._LOCK:
        memo = _SIDES.setdefault(c, {})
        side = memo.get(key)
    if side is None:
        side = _build(c, metric.center, gamma)
        with _rbf._LOCK:
            for old in list(memo)[:-1]:
                del memo[old]
            memo[key] = side
    return side


def _log_gram(
    a: _Side,
    b: _Side | None,
    noise: np.ndarray,
    gamma: float,
    off_a: np.ndarray,
    off_b: np.ndarray | None,
) -> np.ndarray:
    """``log E k(X_i, Y_j) + off_a[i] + off_b[j]`` (``b=None``: the rows of
    ``a`` with themselves, a row paired with an independent copy)."""
    loops = _loops()
    symmetric = b is None
    other = a if b is None else b
    ob = off_a if off_b is None else off_b
    f = _Features.at(noise, gamma)
    out = np.empty((a.n, other.n))
    if a.n == 0 or other.n == 0:
        return out
    offg = _lanes(np.ascontiguousarray(ob, dtype=np.float64), loops._L)
    offa = np.ascontiguousarray(off_a, dtype=np.float64)
    T = max(1, min(_rbf.n_threads(), a.n))
    row_lists = _rbf._deal(np.arange(a.n, dtype=np.int64), T, symmetric)

    def task(rows: np.ndarray) -> Any:
        return lambda: loops.factor_rbf_rows(
            rows, a.x, a.Jidx, a.nJ, a.Oidx, a.nO, a.Ua, a.K0, a.ld0, offa,
            other.xg, other.mg, other.Ug, other.K0g, other.ld0g, offg, other.n,
            f.inv1, f.inv2, f.cc, f.a1, f.ldc, float(gamma), bool(symmetric), out,
        )  # fmt: skip

    codes = _rbf._run([task(r) for r in row_lists])
    for code in codes:
        if code:
            raise ValueError(
                "The factor density's conditionals give a matrix that is not "
                f"positive definite (row {int(code) - 1}), so the expected RBF is "  # type: ignore[call-overload]
                "undefined: its noise variances or loadings are not finite."
            )
    if symmetric:
        starts = np.arange(0, a.n, 64, dtype=np.int64)
        _rbf._run(
            [
                functools.partial(loops.mirror_lower, out, starts[t::T])
                for t in range(min(T, len(starts)))
            ]
        )
    return out


def _same_density(cx: FactorConditionals, cy: FactorConditionals | None) -> bool:
    if cy is None or cy is cx:
        return True
    return bool(
        np.array_equal(cx.loadings, cy.loadings) and np.array_equal(cx.noise, cy.noise)
    )


def _gaussian_cell(base: RBF) -> Expectation:
    cell = find_expectation(base, GaussianConditionals)
    assert cell is not None
    return cell


class _FactorRBFCell:
    """Gram, variance and features of the RBF over factor conditionals."""

    @staticmethod
    def _sides(
        base: RBF, cx: Any, cy: Any | None, gamma: float
    ) -> tuple[_Side, _Side | None]:
        metric = base._metric
        return _side(cx, metric, gamma), None if cy is None else _side(
            cy, metric, gamma
        )

    def _logs(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float, power: float,
        normalised: bool, self_x: np.ndarray, self_y: np.ndarray | None,
    ) -> np.ndarray:  # fmt: skip
        """``log E_gamma k`` with genRBF's offsets ``-power/2 log n_i``."""
        a, b = self._sides(base, cx, cy, gamma)
        off_a = -0.5 * power * self_x if normalised else np.zeros(a.n)
        off_b = None
        if b is not None:
            assert self_y is not None
            off_b = -0.5 * power * self_y if normalised else np.zeros(b.n)
        return _log_gram(a, b, cx.noise, gamma, off_a, off_b)

    def _self(self, base: RBF, c: Any, gamma: float) -> np.ndarray:
        return _side(c, base._metric, gamma).self_log.copy()

    def gram(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        if not _same_density(cx, cy):
            return _gaussian_cell(base).gram(base, cx, cy, diagonal, normalised)
        with np.errstate(under="ignore"):
            gamma = base.gamma_
            self_x = self._self(base, cx, gamma)
            self_y = None if cy is None else self._self(base, cy, gamma)
            K = self._logs(base, cx, cy, gamma, 1.0, normalised, self_x, self_y)
            _rbf.exp_inplace(K)
            if cy is None:
                if diagonal == "same_draw":
                    diag = np.exp(-self_x) if normalised else np.ones(len(K))
                else:
                    diag = np.ones(len(K)) if normalised else np.exp(self_x)
                K[np.diag_indices_from(K)] = diag
            return K

    def variance(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        """``Var k = E_{2 gamma} k - (E_gamma k)^2`` (k^2 is the RBF at 2 gamma)."""
        if not _same_density(cx, cy):
            variance = _gaussian_cell(base).variance
            assert variance is not None
            return variance(base, cx, cy, diagonal, normalised)
        with np.errstate(under="ignore"):
            gamma = base.gamma_
            self_x = self._self(base, cx, gamma)
            self_y = None if cy is None else self._self(base, cy, gamma)
            L1 = self._logs(base, cx, cy, gamma, 1.0, normalised, self_x, self_y)
            V = self._logs(base, cx, cy, 2.0 * gamma, 2.0, normalised, self_x, self_y)
            # Var = E1^2 (exp(log E2 - 2 log E1) - 1), accurate when Var << E1^2.
            L1 *= 2.0
            V -= L1
            np.maximum(V, 0.0, out=V)
            np.expm1(V, out=V)
            _rbf.exp_inplace(L1)
            V *= L1
            if cy is None:
                if diagonal == "same_draw":
                    diag = np.zeros(len(V))  # k(x, x) is constant
                else:
                    norm = -2.0 * self_x if normalised else np.zeros_like(self_x)
                    self2 = self._self(base, cx, 2.0 * gamma)
                    diag = np.exp(2.0 * self_x + norm) * np.expm1(
                        np.maximum(self2 - 2.0 * self_x, 0.0)
                    )
                V[np.diag_indices_from(V)] = diag
            return V

    def features(
        self, base: RBF, c: Any, feature_map: Any, normalised: bool
    ) -> np.ndarray:
        """Expected Fourier features, damped by ``exp(-1/2 w^T C_J w)`` with
        ``w^T C_J w = sum_J psi w^2 + |R_p^T W_J^T w_J|^2``; genRBF divides
        row i by ``sqrt(n_i)``."""
        psi = fourier_features(c, feature_map)
        if normalised:
            with np.errstate(under="ignore"):
                log_n = self._self(base, c, base.gamma_)
            psi *= np.exp(-0.5 * log_n)[:, None]
        return psi


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


def _euclidean(base: Any) -> bool:
    return getattr(base, "metric", "euclidean") == "euclidean"


_CELL = _FactorRBFCell()


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    return {
        "rbf/factor": Expectation(
            RBF,
            FactorConditionals,
            _CELL.gram,
            _CELL.variance,
            normalises=True,
            applies=_euclidean,
            description=(
                "RBF (Euclidean) over FactorConditionals: closed form, low rank, "
                "compiled"
            ),
            features=_CELL.features,
        ),
    }
