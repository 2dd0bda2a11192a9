"""The linear family: base kernel, cells of the expectation table, preset.

``E[X_i^T Y_j] = m_i^T m_j`` for independent rows under any density with
first moments, and the variance of Anderson & Gupta's eq. (6) from the
second moments (pattern-level GEMMs for Gaussians); registered as a built-in
plugin through the same hooks a third-party plugin uses. The moment helpers
serve the polynomial kernel too. Conventions of the cells as in
:mod:`._expectation_table`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..conditionals import (
    BaseConditionals,
    GaussianConditionals,
    MixtureConditionals,
    SampleConditionals,
)
from ..conditionals._base import BLOCK_ELEMENTS as _BLOCK_ELEMENTS
from ..hookspecs import hookimpl
from ._base_kernel import BaseKernel
from ._expectation_table import Expectation, set_diagonal
from ._expected_kernel import BaseExpectedKernel

__all__ = ["ExpectedLinearKernel", "Linear"]


# -- base kernel ------------------------------------------------------------------


class Linear(BaseKernel):
    """The linear kernel ``x^T y``."""

    name = "linear"

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return np.asarray(A @ B.T, dtype=np.float64)

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return np.einsum("nd,nd->n", A, A)

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """The exact map: the row itself."""
        return IdentityMap(train.n_features)


@dataclass(frozen=True)
class IdentityMap:
    """The linear kernel's exact map: the row itself."""

    n_features: int

    @property
    def n_components(self) -> int:
        return self.n_features

    def transform(self, A: np.ndarray) -> np.ndarray:
        return np.asarray(A, dtype=np.float64)


# -- cells ----------------------------------------------------------------------


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
            set_diagonal(K, _same_draw_self(cx))
        else:
            set_diagonal(K, np.einsum("nd,nd->n", mx, mx))
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
            set_diagonal(V, same_draw_variance(cx))
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


# -- preset ----------------------------------------------------------------------


class ExpectedLinearKernel(BaseExpectedKernel):
    """Expected linear kernel: ``E[X^T Y]`` over the missing entries (Anderson & Gupta).

    For independent rows ``E[X_i^T X_j] = m_i^T m_j`` (the conditional means,
    for any density); the same draw twice gives ``||m_i||^2 + tr C_i``
    (eq. (2)). :meth:`variance` gives eq. (6):
    ``tr(A_i A_j) + m_j^T A_i m_j + m_i^T A_j m_i`` for Gaussian conditionals,
    ``2 tr(A_i^2) + 4 m_i^T A_i m_i`` for the same draw.

    Parameters
    ----------
    density : str or density estimator, default="gaussian_em"
        A registry name or an unfitted density object (cloned at fit):
        Gaussian, mixture or draws.
    diagonal : {"same_draw", "independent"}, default="same_draw"
        The diagonal of ``k(X)``: ``E ||X_i||^2`` (the paper) or
        ``||m_i||^2`` (an independent copy). ``k(X, Y)`` is not affected.

    Attributes
    ----------
    density_ : density estimator
        The density fitted on the training rows.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] H. S. Anderson and M. R. Gupta, "Expected kernel for missing
       features in support vector machines", IEEE Statistical Signal
       Processing Workshop, 2011, eqs. (2) and (6).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import ExpectedLinearKernel
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.5], [0.5, 0.0]])
    >>> k = ExpectedLinearKernel().fit(X)
    >>> bool(np.allclose(k(X), X @ X.T))
    True
    >>> bool(np.all(k.variance(X) == 0.0))
    True
    """

    _base_kernel_class: ClassVar = Linear

    def __init__(self, density: Any = "gaussian_em", diagonal: str = "same_draw"):
        self.density = density
        self.diagonal = diagonal


# -- registration ------------------------------------------------------------------


@hookimpl
def missingkernels_register_kernels():  # type: ignore[no-untyped-def]
    return {"expected_linear": ExpectedLinearKernel}


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    return {
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
    }
