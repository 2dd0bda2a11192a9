"""The built-in cells of the expectation table (closed forms).

RBF over Gaussian, mixture and draws (the compiled pattern-pair loops of
:mod:`._rbf`), linear over any representation with first and second moments
(Anderson & Gupta's eqs. (2) and (6) for Gaussians), simple matching and
presence (Belanche et al.) over categorical PMFs and draws. Conventions as in
:mod:`._table`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import describe_features
from ..conditionals import (
    BaseConditionals,
    CategoricalConditionals,
    GaussianConditionals,
    MixtureConditionals,
    SampleConditionals,
)
from ..conditionals._base import BLOCK_ELEMENTS as _BLOCK_ELEMENTS
from . import _features, _rbf
from ._base_kernels import RBF, BaseKernel, Linear, Presence, SimpleMatching
from ._mixed import MIXED_CELL
from ._table import DRAWS_CELL, Expectation


def _set_diagonal(K: np.ndarray, values: np.ndarray) -> np.ndarray:
    K[np.diag_indices_from(K)] = values
    return K


# -- RBF ------------------------------------------------------------------------


class _RBFCell:
    """The RBF over one representation: its sides (one, or one per component
    or draw) feed the compiled loops; with ``normalised`` (genRBF), offsets
    ``-1/2 log n_i`` inside the exponent, ``n_i = E k(X_i, X_i')``."""

    def __init__(
        self,
        sides: Callable[[Any, _rbf.Metric], list[_rbf.Side]],
        gaussian: bool,
        fourier: Callable[[Any, Any], np.ndarray],
    ) -> None:
        self.sides = sides
        self.gaussian = gaussian
        self.fourier = fourier

    @staticmethod
    def _with_offsets(sides: list[_rbf.Side], off: np.ndarray) -> list[_rbf.Side]:
        return [s.with_offsets(off) for s in sides]

    def _self_log(
        self, sides: list[_rbf.Side], gamma: float, metric: _rbf.Metric
    ) -> np.ndarray:
        if self.gaussian:
            return _rbf.gaussian_self_log(sides[0], gamma, metric)
        return _rbf.accumulated_self_log(sides, gamma, metric)

    def _gram(
        self,
        a: list[_rbf.Side],
        b: list[_rbf.Side] | None,
        gamma: float,
        metric: _rbf.Metric,
        log: bool,
        clip: bool = False,
    ) -> np.ndarray:
        """``E k`` (or its log) with the offsets of the sides inside the
        exponent; with ``clip``, at most 1 (normalised kernels: ``|E k(X_i,
        Y_j)| <= sqrt(n_i n_j)`` by Cauchy-Schwarz, which rounding can
        exceed by an ulp for identical rows)."""
        if self.gaussian:
            return _rbf.gaussian_gram(
                a[0], None if b is None else b[0], gamma, metric, log=log,
                upper=0.0 if clip else None,
            )  # fmt: skip
        K = _rbf.accumulated_gram(a, b, gamma, metric)
        if clip:
            np.minimum(K, 1.0, out=K)
        if log:
            with np.errstate(divide="ignore"):
                np.log(K, out=K)
        return K

    def _prepare(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float, normalised: bool
    ) -> tuple[list[_rbf.Side], list[_rbf.Side] | None, np.ndarray, np.ndarray | None]:
        """Sides of both arguments (offsets set for genRBF) and ``log n_i``."""
        metric = base._metric
        sx = self.sides(cx, metric)
        sy = None if cy is None else self.sides(cy, metric)
        self_x = self._self_log(sx, gamma, metric)
        self_y = None if sy is None else self._self_log(sy, gamma, metric)
        if normalised:
            sx = self._with_offsets(sx, -0.5 * self_x)
            if sy is not None and self_y is not None:
                sy = self._with_offsets(sy, -0.5 * self_y)
        return sx, sy, self_x, self_y

    def gram(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        with np.errstate(under="ignore"):  # exp(-huge) = 0 is the answer
            gamma = base.gamma_
            sx, sy, self_x, _ = self._prepare(base, cx, cy, gamma, normalised)
            K = self._gram(sx, sy, gamma, base._metric, log=False, clip=normalised)
            if cy is None:
                norm = -self_x if normalised else np.zeros_like(self_x)
                if diagonal == "same_draw":
                    # k(x, x) = 1 for every draw; genRBF divides by n_i.
                    _set_diagonal(K, np.exp(norm))
                else:
                    _set_diagonal(K, np.exp(self_x + norm))
            return K

    def features(
        self, base: RBF, c: Any, feature_map: Any, normalised: bool
    ) -> np.ndarray:
        """Expected Fourier features; genRBF divides row i by ``sqrt(n_i)``."""
        psi = self.fourier(c, feature_map)
        if normalised:
            with np.errstate(under="ignore"):
                log_n = self._self_log(
                    self.sides(c, base._metric), base.gamma_, base._metric
                )
            psi *= np.exp(-0.5 * log_n)[:, None]
        return psi

    def variance(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        """``Var k = E_{2 gamma} k - (E_gamma k)^2`` (k^2 is the RBF at 2 gamma)."""
        with np.errstate(under="ignore"):
            return self._variance(base, cx, cy, diagonal, normalised)

    def _variance(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        gamma = base.gamma_
        metric = base._metric
        sx, sy, self_x, self_y = self._prepare(base, cx, cy, gamma, normalised)
        # At 2 gamma, genRBF's variance divides by n_i n_j: offsets -log n_i.
        sx2 = self.sides(cx, metric)
        sy2 = None if cy is None else self.sides(cy, metric)
        if normalised:
            sx2 = self._with_offsets(sx2, -self_x)
            if sy2 is not None and self_y is not None:
                sy2 = self._with_offsets(sy2, -self_y)
        if self.gaussian:
            L1 = self._gram(sx, sy, gamma, metric, log=True)
            V = self._gram(sx2, sy2, 2.0 * gamma, metric, log=True)
            # Var = E2 (1 - exp(2 log E1 - log E2)), accurate when Var << E1^2,
            # and no overflow when both terms underflow (the factor is in
            # [0, 1]; E1^2 <= E2, clipped against rounding).
            L1 *= 2.0
            L1 -= V
            np.minimum(L1, 0.0, out=L1)
            np.expm1(L1, out=L1)
            L1 *= -1.0
            _rbf.exp_inplace(V)
            V *= L1
        else:
            E1 = self._gram(sx, sy, gamma, metric, log=False)
            V = self._gram(sx2, sy2, 2.0 * gamma, metric, log=False)
            V -= E1 * E1
            np.maximum(V, 0.0, out=V)
        if cy is None:
            if diagonal == "same_draw":
                _set_diagonal(V, np.zeros(len(V)))  # k(x, x) is constant
            else:
                norm = -2.0 * self_x if normalised else np.zeros_like(self_x)
                self2 = self._self_log(self.sides(cx, metric), 2.0 * gamma, metric)
                diag = -np.exp(self2 + norm) * np.expm1(
                    np.minimum(2.0 * self_x - self2, 0.0)
                )
                _set_diagonal(V, diag)
        return V


def _rbf_cell(
    conditionals: type, sides: Callable, gaussian: bool, fourier: Callable
) -> Expectation:
    cell = _RBFCell(sides, gaussian, fourier)
    return Expectation(
        RBF,
        conditionals,
        cell.gram,
        cell.variance,
        normalises=True,
        description=f"RBF over {conditionals.__name__}: closed form, compiled",
        features=cell.features,
    )


# -- linear -------------------------------------------------------------------------


def _packed_index(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Upper-triangle indices and weights so that ``vec(A) . vec(B) = <A, B>_F``."""
    iu, ju = np.triu_indices(d)
    weights = np.where(iu == ju, 1.0, np.sqrt(2.0))
    return iu, ju, weights


def _vec(
    M: np.ndarray, packed: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> np.ndarray:
    iu, ju, w = packed
    return M[..., iu, ju] * w


def _block_rows(d: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(1, d * (d + 1) // 2))


def _second_moment_vecs(c: Any, packed: tuple) -> list[np.ndarray]:
    """``vec(E[X_i X_i^T])`` by blocks of rows."""
    block = _block_rows(c.n_features)
    return [
        _vec(c.second_moments(slice(s, s + block)), packed)
        for s in range(0, c.n_samples, block)
    ]


def _same_draw_self(c: Any) -> np.ndarray:
    """``E ||X_i||^2`` (the same draw twice): the trace of the second moment."""
    block = _block_rows(c.n_features)
    return np.concatenate(
        [
            np.trace(c.second_moments(slice(s, s + block)), axis1=1, axis2=2)
            for s in range(0, c.n_samples, block)
        ]
        or [np.zeros(0)]
    )


def _linear_gram(
    base: Any, cx: Any, cy: Any | None, diagonal: str, normalised: bool
) -> np.ndarray:
    """``E[X_i^T Y_j] = m_i^T m_j`` for independent rows (any density)."""
    mx = cx.first_moments()
    my = mx if cy is None else cy.first_moments()
    K = mx @ my.T
    if cy is None:
        if diagonal == "same_draw":
            _set_diagonal(K, _same_draw_self(cx))
        else:
            _set_diagonal(K, np.einsum("nd,nd->n", mx, mx))
    return K


def _second_moment_products(cx: Any, cy: Any) -> np.ndarray:
    """``E[(X_i^T Y_j)^2] = <E X X^T, E Y Y^T>_F`` for independent rows."""
    packed = _packed_index(cx.n_features)
    vy = _second_moment_vecs(cy, packed)
    out = np.empty((cx.n_samples, cy.n_samples))
    block = _block_rows(cx.n_features)
    for b, vx in enumerate(_second_moment_vecs(cx, packed)):
        s = b * block
        col = 0
        for part in vy:
            out[s : s + len(vx), col : col + len(part)] = vx @ part.T
            col += len(part)
    return out


def gaussian_product_variance(
    cx: GaussianConditionals, cy: GaussianConditionals
) -> np.ndarray:
    """``Var X_i^T Y_j = tr(A_i A_j) + mu_j^T A_i mu_j + mu_i^T A_j mu_i``
    (Anderson & Gupta eq. (6)), for independent Gaussian rows.

    Pattern-level GEMMs: ``tr(A_p A_q)`` per pattern pair, then
    ``mu_j^T A_p mu_j`` per (pattern, row).
    """
    d = cx.n_features
    packed = _packed_index(d)
    ca = _vec(cx.embedded_covariances(), packed)  # (Px, D)
    cb = _vec(cy.embedded_covariances(), packed)  # (Py, D)
    block = _block_rows(d)

    def quad(covs: np.ndarray, mu: np.ndarray) -> np.ndarray:
        # (P, n): mu_j^T A_p mu_j = vec(A_p) . vec(mu_j mu_j^T)
        parts = [
            covs
            @ _vec(
                np.einsum("ni,nj->nij", mu[s : s + block], mu[s : s + block]),
                packed,
            ).T
            for s in range(0, len(mu), block)
        ]
        return np.concatenate(parts, axis=1) if parts else np.zeros((len(covs), 0))

    tr = ca @ cb.T  # (Px, Py)
    qa = quad(ca, cy.means)  # (Px, ny): mu_j^T A_i mu_j
    qb = quad(cb, cx.means)  # (Py, nx): mu_i^T A_j mu_i
    pa, pb = cx.pattern_index, cy.pattern_index
    out = np.empty((cx.n_samples, cy.n_samples))
    rows = max(1, _BLOCK_ELEMENTS // max(1, cy.n_samples))
    for s in range(0, cx.n_samples, rows):
        r = slice(s, s + rows)
        out[r] = tr[pa[r]][:, pb] + qa[pa[r]] + qb[pb][:, r].T
    return out


def gaussian_squared_norm_moments(
    c: GaussianConditionals,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``||X_i||^2`` per row:
    ``||mu||^2 + tr C`` and ``2 tr(C^2) + 4 mu_J^T C mu_J``."""
    means = c.means
    mean = np.einsum("nd,nd->n", means, means)
    var = np.zeros(len(means))
    for p, cov in enumerate(c.covariances):
        rows = np.flatnonzero(c.pattern_index == p)
        J = np.flatnonzero(c.patterns[p])
        if not J.size or not rows.size:
            continue
        muJ = means[np.ix_(rows, J)]
        mean[rows] += np.trace(cov)
        var[rows] = 2.0 * np.sum(cov * cov) + 4.0 * np.einsum(
            "ni,ij,nj->n", muJ, cov, muJ
        )
    return mean, var


def _gaussian_same_draw_variance(c: GaussianConditionals) -> np.ndarray:
    return gaussian_squared_norm_moments(c)[1]


def _mixture_same_draw_variance(c: MixtureConditionals) -> np.ndarray:
    first = np.zeros(c.n_samples)
    second = np.zeros(c.n_samples)
    for k in range(c.n_components):
        mean, var = gaussian_squared_norm_moments(c.component(k))
        first += c.weights[:, k] * mean
        second += c.weights[:, k] * (var + mean * mean)
    return np.maximum(second - first * first, 0.0)


def _samples_same_draw_variance(c: SampleConditionals) -> np.ndarray:
    sq = np.einsum("mnd,mnd->mn", c.samples, c.samples)
    return np.maximum(np.mean(sq * sq, axis=0) - np.mean(sq, axis=0) ** 2, 0.0)


def _moment_variance(cx: Any, cy: Any) -> np.ndarray:
    """``Var X_i^T Y_j = E[(X_i^T Y_j)^2] - (m_i^T m_j)^2`` from the moments."""
    V = _second_moment_products(cx, cy)
    E = cx.first_moments() @ cy.first_moments().T
    V -= E * E
    np.maximum(V, 0.0, out=V)
    return V


def _first_moment_features(
    base: Any, c: Any, feature_map: Any, normalised: bool
) -> np.ndarray:
    """The expected linear kernel's exact map: ``E[X_i]``."""
    return np.asarray(c.first_moments(), dtype=np.float64)


def _category_features(
    base: Any, c: Any, feature_map: Any, normalised: bool
) -> np.ndarray:
    return _features.matching_features(c, feature_map)


def _linear_cell(
    conditionals: type,
    same_draw_variance: Callable[[Any], np.ndarray],
    pair_variance: Callable[[Any, Any], np.ndarray] = _moment_variance,
) -> Expectation:
    """The linear kernel over a representation (Anderson & Gupta eqs. 2, 6)."""

    def variance(
        base: Any, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        other = cx if cy is None else cy
        V = pair_variance(cx, other)
        if cy is None and diagonal == "same_draw":
            _set_diagonal(V, same_draw_variance(cx))
        # "independent": the pair formula at (i, i) is already right.
        return V

    return Expectation(
        Linear,
        conditionals,
        _linear_gram,
        variance,
        description=f"linear over {conditionals.__name__}: closed form",
        features=_first_moment_features,
    )


# -- simple matching and presence (Belanche et al.) ---------------------------------


def _matching_features(
    base: Any, cx: Any, cy: Any, presence: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row vectors whose inner products are ``d`` times the kernel: per
    feature the row's PMF over the values either argument takes (matching),
    or its probability of the value 1 (presence)."""
    fx, fy = [], []
    for v in range(cx.n_features):
        cats = np.union1d(cx.feature_values(v), cy.feature_values(v))
        if presence:
            unexpected = cats[(cats != 0.0) & (cats != 1.0)]
            if unexpected.size:
                raise ValueError(
                    "The presence kernel (belanche_k2) needs binary features "
                    f"coded 0 (absent) / 1 (present); {describe_features(base, v)} "
                    f"takes the value {float(unexpected[0])!r}. Recode it, or use "
                    "belanche_k1 (simple matching) for categorical features."
                )
            one = int(np.searchsorted(cats, 1.0))
            if one < len(cats) and cats[one] == 1.0:
                fx.append(cx.pmf(v, cats)[:, one : one + 1])
                fy.append(cy.pmf(v, cats)[:, one : one + 1])
            continue
        fx.append(cx.pmf(v, cats))
        fy.append(cy.pmf(v, cats))
    if not fx:
        return np.zeros((cx.n_samples, 0)), np.zeros((cy.n_samples, 0))
    return np.hstack(fx), np.hstack(fy)


def _matching_cell(base_kernel: type[BaseKernel], conditionals: type) -> Expectation:
    """Simple matching (Belanche K1) or presence (K2) over per-feature PMFs."""
    presence = base_kernel is Presence

    def gram(
        base: Any, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        d = cx.n_features
        fx, fy = _matching_features(base, cx, cx if cy is None else cy, presence)
        K = fx @ fy.T / d
        if cy is None and diagonal == "same_draw":
            # The same draw always matches itself; presence counts P(x_v = 1).
            diag = fx.sum(axis=1) / d if presence else np.ones(cx.n_samples)
            _set_diagonal(K, diag)
        return K

    return Expectation(
        base_kernel,
        conditionals,
        gram,
        description=(
            f"{base_kernel.kernel_name()} over {conditionals.__name__}: "
            "closed form per feature"
        ),
        features=_category_features,
    )


def _gaussian_sides(c: Any, metric: _rbf.Metric) -> list[_rbf.Side]:
    return [_rbf.gaussian_side(c, metric)]


def _builtin_expectations() -> dict[str, Expectation]:
    """Name -> cell of the built-in closed forms (read by the registry hook)."""
    return {
        "rbf/gaussian": _rbf_cell(
            GaussianConditionals, _gaussian_sides, True, _features.gaussian_fourier
        ),
        "rbf/mixture": _rbf_cell(
            MixtureConditionals, _rbf.mixture_sides, False, _features.mixture_fourier
        ),
        "rbf/samples": _rbf_cell(
            SampleConditionals, _rbf.sample_sides, False, _features.draws_average
        ),
        "linear/gaussian": _linear_cell(
            GaussianConditionals,
            _gaussian_same_draw_variance,
            gaussian_product_variance,
        ),
        "linear/mixture": _linear_cell(
            MixtureConditionals, _mixture_same_draw_variance
        ),
        "linear/samples": _linear_cell(SampleConditionals, _samples_same_draw_variance),
        "linear/any": Expectation(
            Linear,
            BaseConditionals,
            _linear_gram,
            description="linear over any representation: its first moments",
            features=_first_moment_features,
        ),
        "matching/categorical": _matching_cell(SimpleMatching, CategoricalConditionals),
        "matching/samples": _matching_cell(SimpleMatching, SampleConditionals),
        "presence/categorical": _matching_cell(Presence, CategoricalConditionals),
        "presence/samples": _matching_cell(Presence, SampleConditionals),
        "any/samples": DRAWS_CELL,
        "rbf_matching/mixed": MIXED_CELL,
    }
