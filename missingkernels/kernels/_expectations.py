"""Base kernels and their expectations over each conditional representation.

A *base kernel* (RBF, linear, simple matching, presence) knows the
representations whose expectation it can take, in closed form (Gaussian,
Gaussian mixture, categorical) or as the average over draws (samples). The
public kernels of :mod:`._kernels` combine one base kernel with a density.

Conventions: ``gram(kernel, cx, cy, diagonal)`` with ``cy=None`` is the Gram of
the rows of ``cx`` with themselves, its diagonal set by ``diagonal``
(``"same_draw"`` or ``"independent"``); otherwise every pair is two
independent random rows. ``variance`` follows the same
conventions.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ..conditionals import (
    CategoricalConditionals,
    GaussianConditionals,
    MixtureConditionals,
    SampleConditionals,
)
from . import _rbf

#: Representation tag of each conditionals class.
REPRESENTATION_OF = {
    GaussianConditionals: "gaussian",
    MixtureConditionals: "mixture",
    SampleConditionals: "samples",
    CategoricalConditionals: "categorical",
}

# Rows per block when a computation needs (rows x d^2) temporaries.
_BLOCK_ELEMENTS = 1 << 22


def representation_of(c: Any) -> str:
    for cls, tag in REPRESENTATION_OF.items():
        if isinstance(c, cls):
            return tag
    raise TypeError(
        "A density's conditionals(X) must return one of GaussianConditionals, "
        "MixtureConditionals, SampleConditionals or CategoricalConditionals; got "
        f"{type(c).__name__}."
    )


def _set_diagonal(K: np.ndarray, values: np.ndarray) -> np.ndarray:
    K[np.diag_indices_from(K)] = values
    return K


class BaseKernelExpectation:
    """A base kernel with its expectations (one instance per public kernel class)."""

    #: Short name used in messages.
    name: str = ""
    #: Representations it supports.
    representations: ClassVar[tuple[str, ...]] = ()
    #: Whether the random kernel's variance is available.
    has_variance: ClassVar[bool] = False

    def fit(self, kernel: Any, X: np.ndarray, train: Any) -> None:
        """Set fitted attributes on ``kernel`` (after its density is fitted)."""

    def gram(self, kernel: Any, cx: Any, cy: Any | None, diagonal: str) -> np.ndarray:
        raise NotImplementedError

    def variance(
        self, kernel: Any, cx: Any, cy: Any | None, diagonal: str
    ) -> np.ndarray:
        raise NotImplementedError


# -- RBF ------------------------------------------------------------------------


def _first_moments(c: Any) -> np.ndarray:
    """``E[X_i]`` of every row."""
    if isinstance(c, GaussianConditionals):
        return c.means
    if isinstance(c, MixtureConditionals):
        return np.einsum("nk,knd->nd", c.weights, c.means)
    if isinstance(c, SampleConditionals):
        return c.samples.mean(axis=0)
    raise TypeError(f"no first moments for {type(c).__name__}")


def _embedded_pattern_covariances(c: Any) -> np.ndarray:
    """d x d conditional covariances per pattern (``(K, P, d, d)`` for mixtures)."""
    d = c.n_features
    lead = (c.n_components,) if isinstance(c, MixtureConditionals) else ()
    out = np.zeros((*lead, len(c.patterns), d, d))
    for p, cov in enumerate(c.covariances):
        J = np.flatnonzero(c.patterns[p])
        if J.size:
            out[..., p, J[:, None], J[None, :]] = cov
    return out


def implied_covariance(c: Any) -> np.ndarray:
    """Covariance of the rows under the density: ``mean_i E[X X^T] - m m^T``.

    The law of total covariance over the (training) rows: for a Gaussian EM
    fit this is the fitted covariance itself; for a mixture or for draws it is
    the covariance of the completed data the density implies.
    """
    m = _first_moments(c)
    n, d = m.shape
    mean = m.mean(axis=0)
    if isinstance(c, SampleConditionals):
        flat = c.samples.reshape(-1, d) - mean
        return flat.T @ flat / len(flat)
    covs = _embedded_pattern_covariances(c)
    if isinstance(c, MixtureConditionals):
        second = np.zeros((d, d))
        for k in range(c.n_components):
            wk = c.weights[:, k]
            centred = c.means[k] - mean
            second += (centred * wk[:, None]).T @ centred
            per_pattern = np.bincount(
                c.pattern_index, weights=wk, minlength=len(covs[k])
            )
            second += np.tensordot(per_pattern, covs[k], axes=1)
        return second / n
    centred = m - mean
    counts = np.bincount(c.pattern_index, minlength=len(covs)).astype(float)
    return (centred.T @ centred + np.tensordot(counts, covs, axes=1)) / n


class RBFExpectation(BaseKernelExpectation):
    """The RBF ``exp(-gamma ||x - y||^2)``: Gaussian, mixture and samples.

    ``normalised`` gives genRBF, ``E k(X_i, X_j) / sqrt(n_i n_j)`` with
    ``n_i = E k(X_i, X_i')`` (independent copies).
    """

    name = "RBF"
    representations = ("gaussian", "mixture", "samples")
    has_variance = True

    def __init__(self, normalised: bool) -> None:
        self.normalised = normalised

    # -- fitting ---------------------------------------------------------------
    def fit(self, kernel: Any, X: np.ndarray, train: Any) -> None:
        center = _first_moments(train).mean(axis=0)
        if kernel.metric == "mahalanobis":
            S = None
            if isinstance(train, GaussianConditionals):
                S = train.covariance
                if S is None:
                    S = getattr(kernel.density_, "covariance_", None)
            if S is None:
                S = implied_covariance(train)
            kernel.metric_covariance_ = np.array(S, dtype=np.float64)
            kernel._metric = _rbf.Metric.mahalanobis_from(center, S)
        else:
            kernel.metric_covariance_ = None
            kernel._metric = _rbf.Metric.euclidean(center)
        if isinstance(kernel.gamma, str):  # "scale"
            if kernel.metric == "mahalanobis":
                # Whitened rows have unit variance under the fitted density.
                kernel.gamma_ = 1.0 / X.shape[1]
            else:
                var = float(np.nanvar(X))
                kernel.gamma_ = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        else:
            kernel.gamma_ = float(kernel.gamma)

    # -- building blocks ---------------------------------------------------------
    @staticmethod
    def _sides(c: Any, metric: _rbf.Metric) -> tuple[bool, list[_rbf.Side]]:
        """``(is_gaussian, sides)``: one side, or one per component / draw."""
        if isinstance(c, GaussianConditionals):
            return True, [_rbf.gaussian_side(c, metric)]
        if isinstance(c, MixtureConditionals):
            return False, _rbf.mixture_sides(c, metric)
        return False, _rbf.sample_sides(c, metric)

    @staticmethod
    def _with_offsets(sides: list[_rbf.Side], off: np.ndarray) -> list[_rbf.Side]:
        return [s.with_offsets(off) for s in sides]

    @staticmethod
    def _self_log(
        gauss: bool, sides: list[_rbf.Side], gamma: float, metric: _rbf.Metric
    ) -> np.ndarray:
        if gauss:
            return _rbf.gaussian_self_log(sides[0], gamma, metric)
        return _rbf.accumulated_self_log(sides, gamma, metric)

    @staticmethod
    def _gram(
        gauss: bool,
        a: list[_rbf.Side],
        b: list[_rbf.Side] | None,
        gamma: float,
        metric: _rbf.Metric,
        log: bool,
    ) -> np.ndarray:
        """``E k`` (or its log) with the offsets of the sides inside the exponent."""
        if gauss:
            return _rbf.gaussian_gram(
                a[0], None if b is None else b[0], gamma, metric, log=log
            )
        K = _rbf.accumulated_gram(a, b, gamma, metric)
        if log:
            with np.errstate(divide="ignore"):
                np.log(K, out=K)
        return K

    def _prepare(
        self, kernel: Any, cx: Any, cy: Any | None, gamma: float
    ) -> tuple[
        bool, list[_rbf.Side], list[_rbf.Side] | None, np.ndarray, np.ndarray | None
    ]:
        """Sides of both arguments; with genRBF, offsets ``-1/2 log n_i`` set.

        Also returns the self log-similarities ``log n_i`` (independent copies).
        """
        metric = kernel._metric
        gauss, sx = self._sides(cx, metric)
        sy = None if cy is None else self._sides(cy, metric)[1]
        self_x = self._self_log(gauss, sx, gamma, metric)
        self_y = None if sy is None else self._self_log(gauss, sy, gamma, metric)
        if self.normalised:
            sx = self._with_offsets(sx, -0.5 * self_x)
            if sy is not None and self_y is not None:
                sy = self._with_offsets(sy, -0.5 * self_y)
        return gauss, sx, sy, self_x, self_y

    # -- public ---------------------------------------------------------------------
    def gram(self, kernel: Any, cx: Any, cy: Any | None, diagonal: str) -> np.ndarray:
        with np.errstate(under="ignore"):  # exp(-huge) = 0 is the answer
            return self._gram_impl(kernel, cx, cy, diagonal)

    def _gram_impl(
        self, kernel: Any, cx: Any, cy: Any | None, diagonal: str
    ) -> np.ndarray:
        gamma = kernel.gamma_
        gauss, sx, sy, self_x, _ = self._prepare(kernel, cx, cy, gamma)
        K = self._gram(gauss, sx, sy, gamma, kernel._metric, log=False)
        if cy is None:
            norm = -self_x if self.normalised else np.zeros_like(self_x)
            if diagonal == "same_draw":
                # k(x, x) = 1 for every draw; genRBF divides by n_i.
                _set_diagonal(K, np.exp(norm))
            else:
                _set_diagonal(K, np.exp(self_x + norm))
        return K

    def variance(
        self, kernel: Any, cx: Any, cy: Any | None, diagonal: str
    ) -> np.ndarray:
        """``Var k = E_{2 gamma} k - (E_gamma k)^2`` (k^2 is the RBF at 2 gamma)."""
        with np.errstate(under="ignore"):
            return self._variance_impl(kernel, cx, cy, diagonal)

    def _variance_impl(
        self, kernel: Any, cx: Any, cy: Any | None, diagonal: str
    ) -> np.ndarray:
        gamma = kernel.gamma_
        metric = kernel._metric
        gauss, sx, sy, self_x, self_y = self._prepare(kernel, cx, cy, gamma)
        # At 2 gamma, genRBF's variance divides by n_i n_j: offsets -log n_i.
        sx2 = self._sides(cx, metric)[1]
        sy2 = None if cy is None else self._sides(cy, metric)[1]
        if self.normalised:
            sx2 = self._with_offsets(sx2, -self_x)
            if sy2 is not None and self_y is not None:
                sy2 = self._with_offsets(sy2, -self_y)
        if gauss:
            L1 = self._gram(True, sx, sy, gamma, metric, log=True)
            V = self._gram(True, sx2, sy2, 2.0 * gamma, metric, log=True)
            # Var = E1^2 (exp(log E2 - 2 log E1) - 1), accurate when Var << E1^2.
            L1 *= 2.0
            V -= L1
            np.maximum(V, 0.0, out=V)
            np.expm1(V, out=V)
            _rbf.exp_inplace(L1)
            V *= L1
        else:
            E1 = self._gram(False, sx, sy, gamma, metric, log=False)
            V = self._gram(False, sx2, sy2, 2.0 * gamma, metric, log=False)
            V -= E1 * E1
            np.maximum(V, 0.0, out=V)
        if cy is None:
            if diagonal == "same_draw":
                _set_diagonal(V, np.zeros(len(V)))  # k(x, x) is constant
            else:
                norm = -2.0 * self_x if self.normalised else np.zeros_like(self_x)
                self2 = self._self_log(
                    gauss, self._sides(cx, metric)[1], 2.0 * gamma, metric
                )
                diag = np.exp(2.0 * self_x + norm) * np.expm1(
                    np.maximum(self2 - 2.0 * self_x, 0.0)
                )
                _set_diagonal(V, diag)
        return V


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


def _second_moment_vecs(
    c: Any, covs: np.ndarray | None, rows: slice, packed: tuple
) -> np.ndarray:
    """``vec(E[X_i X_i^T])`` for a block of rows (``covs`` from
    :func:`_embedded_pattern_covariances`, None for samples)."""
    if isinstance(c, SampleConditionals):
        draws = c.samples[:, rows]
        return np.mean(
            [_vec(np.einsum("ni,nj->nij", x, x), packed) for x in draws], axis=0
        )
    assert covs is not None
    if isinstance(c, MixtureConditionals):
        total = np.zeros((len(c.pattern_index[rows]), len(packed[0])))
        for k in range(c.n_components):
            mu = c.means[k, rows]
            M = covs[k][c.pattern_index[rows]] + np.einsum("ni,nj->nij", mu, mu)
            total += c.weights[rows, k][:, None] * _vec(M, packed)
        return total
    mu = c.means[rows]
    M = covs[c.pattern_index[rows]] + np.einsum("ni,nj->nij", mu, mu)
    return _vec(M, packed)


def _block_rows(d: int) -> int:
    return max(1, _BLOCK_ELEMENTS // max(1, d * (d + 1) // 2))


class LinearExpectation(BaseKernelExpectation):
    """The linear kernel ``x^T y``: Gaussian, mixture, samples (Anderson eqs. 2, 6)."""

    name = "linear"
    representations = ("gaussian", "mixture", "samples")
    has_variance = True

    @staticmethod
    def _same_draw_self(c: Any) -> np.ndarray:
        """``E ||X_i||^2`` (the same draw twice): ``||mu_i||^2 + tr C``."""
        if isinstance(c, SampleConditionals):
            return np.mean(np.einsum("mnd,mnd->mn", c.samples, c.samples), axis=0)
        P = len(c.covariances)
        traces = [np.trace(cov, axis1=-2, axis2=-1) for cov in c.covariances]
        if isinstance(c, MixtureConditionals):
            tr = np.reshape(np.asarray(traces, dtype=np.float64), (P, c.n_components))
            sq = np.einsum("knd,knd->nk", c.means, c.means)
            return np.sum(c.weights * (sq + tr[c.pattern_index]), axis=1)
        tr1 = np.asarray(traces, dtype=np.float64).reshape(P)
        return np.einsum("nd,nd->n", c.means, c.means) + tr1[c.pattern_index]

    def gram(self, kernel: Any, cx: Any, cy: Any | None, diagonal: str) -> np.ndarray:
        mx = _first_moments(cx)
        my = mx if cy is None else _first_moments(cy)
        K = mx @ my.T
        if cy is None:
            if diagonal == "same_draw":
                _set_diagonal(K, self._same_draw_self(cx))
            else:
                _set_diagonal(K, np.einsum("nd,nd->n", mx, mx))
        return K

    def variance(
        self, kernel: Any, cx: Any, cy: Any | None, diagonal: str
    ) -> np.ndarray:
        other = cx if cy is None else cy
        if isinstance(cx, GaussianConditionals):
            V = self._gaussian_variance(cx, other)
        else:
            V = self._second_moment(cx, other)
            E = _first_moments(cx) @ _first_moments(other).T
            V -= E * E
            np.maximum(V, 0.0, out=V)
        if cy is None:
            if diagonal == "same_draw":
                _set_diagonal(V, self._same_draw_variance(cx))
            # "independent": the pair formula at (i, i) is already right.
        return V

    @staticmethod
    def _second_moment(cx: Any, cy: Any) -> np.ndarray:
        """``E[(X_i^T Y_j)^2] = <E X X^T, E Y Y^T>_F`` for independent rows."""
        d = cx.n_features
        packed = _packed_index(d)
        block = _block_rows(d)

        def vecs(c: Any) -> list[np.ndarray]:
            covs = (
                None
                if isinstance(c, SampleConditionals)
                else _embedded_pattern_covariances(c)
            )
            return [
                _second_moment_vecs(c, covs, slice(s, s + block), packed)
                for s in range(0, c.n_samples, block)
            ]

        vy = vecs(cy)
        out = np.empty((cx.n_samples, cy.n_samples))
        for b, vx in enumerate(vecs(cx)):
            s = b * block
            col = 0
            for part in vy:
                out[s : s + len(vx), col : col + len(part)] = vx @ part.T
                col += len(part)
        return out

    @staticmethod
    def _gaussian_variance(
        cx: GaussianConditionals, cy: GaussianConditionals
    ) -> np.ndarray:
        """``tr(A_i A_j) + mu_j^T A_i mu_j + mu_i^T A_j mu_i`` (Anderson eq. 6).

        Pattern-level GEMMs: ``tr(A_p A_q)`` per pattern pair, then
        ``mu_j^T A_p mu_j`` per (pattern, row).
        """
        d = cx.n_features
        packed = _packed_index(d)
        ca = _vec(_embedded_pattern_covariances(cx), packed)  # (Px, D)
        cb = _vec(_embedded_pattern_covariances(cy), packed)  # (Py, D)
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

    @staticmethod
    def _same_draw_variance(c: Any) -> np.ndarray:
        """``Var ||X_i||^2``: ``2 tr(C^2) + 4 mu_J^T C mu_J`` per Gaussian (eq. 6)."""
        if isinstance(c, SampleConditionals):
            sq = np.einsum("mnd,mnd->mn", c.samples, c.samples)
            return np.maximum(np.mean(sq * sq, axis=0) - np.mean(sq, axis=0) ** 2, 0.0)

        def moments(
            means: np.ndarray, covs: list[np.ndarray]
        ) -> tuple[np.ndarray, np.ndarray]:
            """Mean and variance of ||X||^2 for one Gaussian per row."""
            mean = np.einsum("nd,nd->n", means, means)
            var = np.zeros(len(means))
            for p, cov in enumerate(covs):
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

        if isinstance(c, MixtureConditionals):
            first = np.zeros(c.n_samples)
            second = np.zeros(c.n_samples)
            for k in range(c.n_components):
                mean, var = moments(c.means[k], [cov[k] for cov in c.covariances])
                first += c.weights[:, k] * mean
                second += c.weights[:, k] * (var + mean * mean)
            return np.maximum(second - first * first, 0.0)
        return moments(c.means, list(c.covariances))[1]


# -- simple matching and presence (Belanche et al.) ---------------------------------


def _union_categories(cx: Any, cy: Any, v: int) -> np.ndarray:
    """Every value feature ``v`` can take in either argument."""
    parts = []
    for c in (cx, cy):
        if isinstance(c, CategoricalConditionals):
            parts.append(np.asarray(c.categories[v], dtype=np.float64))
            col = c.values[:, v]
            parts.append(col[~np.isnan(col)])
        else:
            parts.append(c.samples[:, :, v].ravel())
    return np.unique(np.concatenate(parts))


def _pmf_block(c: Any, v: int, cats: np.ndarray) -> np.ndarray:
    """``(n, len(cats))``: the distribution of feature ``v`` in every row."""
    n = c.n_samples
    out = np.zeros((n, len(cats)))
    if isinstance(c, CategoricalConditionals):
        col = c.values[:, v]
        miss = np.isnan(col)
        obs = np.flatnonzero(~miss)
        out[obs, np.searchsorted(cats, col[obs])] = 1.0
        prob = np.zeros(len(cats))
        prob[np.searchsorted(cats, np.asarray(c.categories[v], dtype=np.float64))] = (
            c.probabilities[v]
        )
        out[miss] = prob
        return out
    draws = c.samples[:, :, v]  # (m, n)
    codes = np.searchsorted(cats, draws)
    for a in range(c.n_draws):
        np.add.at(out, (np.arange(n), codes[a]), 1.0 / c.n_draws)
    return out


class MatchingExpectation(BaseKernelExpectation):
    """Simple matching ``1[x_v = y_v]`` (``presence=False``, Belanche K1) or
    presence ``1[x_v = 1] 1[y_v = 1]`` (``presence=True``, K2), averaged over
    features; categorical (closed form) and samples (average over draws).
    """

    representations = ("categorical", "samples")
    has_variance = False

    def __init__(self, presence: bool) -> None:
        self.presence = presence
        self.name = "presence" if presence else "simple matching"

    def _features(self, cx: Any, cy: Any) -> tuple[np.ndarray, np.ndarray]:
        """Per-row feature vectors whose inner products give the kernel times d."""
        d = cx.n_features
        fx, fy = [], []
        for v in range(d):
            cats = _union_categories(cx, cy, v)
            if self.presence:
                unexpected = cats[(cats != 0.0) & (cats != 1.0)]
                if unexpected.size:
                    raise ValueError(
                        "The presence kernel (belanche_k2) needs binary features "
                        f"coded 0 (absent) / 1 (present); feature {v} takes the "
                        f"value {float(unexpected[0])!r}. Recode it, or use "
                        "belanche_k1 (simple matching) for categorical features."
                    )
                one = int(np.searchsorted(cats, 1.0))
                if one < len(cats) and cats[one] == 1.0:
                    fx.append(_pmf_block(cx, v, cats)[:, one : one + 1])
                    fy.append(_pmf_block(cy, v, cats)[:, one : one + 1])
                continue
            fx.append(_pmf_block(cx, v, cats))
            fy.append(_pmf_block(cy, v, cats))
        if not fx:
            return np.zeros((cx.n_samples, 0)), np.zeros((cy.n_samples, 0))
        return np.hstack(fx), np.hstack(fy)

    def gram(self, kernel: Any, cx: Any, cy: Any | None, diagonal: str) -> np.ndarray:
        d = cx.n_features
        fx, fy = self._features(cx, cx if cy is None else cy)
        K = fx @ fy.T / d
        if cy is None and diagonal == "same_draw":
            # The same draw always matches itself; presence counts E[x_v] = P(x_v = 1).
            diag = fx.sum(axis=1) / d if self.presence else np.ones(cx.n_samples)
            _set_diagonal(K, diag)
        return K
