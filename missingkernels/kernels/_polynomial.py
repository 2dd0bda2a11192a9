"""The expected polynomial kernel: base kernel, its cells and its preset.

This module is the whole of the polynomial kernel, registered as a built-in
plugin through the same hooks a third-party plugin uses.

For independent ``X ~ N(a, A)``, ``Y ~ N(b, B)`` (``docs/theory.rst``,
"Expected polynomial kernel")::

    E[X^T Y] = a^T b,
    E[(X^T Y)^2] = (a^T b)^2 + a^T B a + b^T A b + tr(A B),

so ``E[(g X^T Y + c)^2] = g^2 E[(X^T Y)^2] + 2 g c a^T b + c^2``; the
variance term ``a^T B a + b^T A b + tr(A B)`` is the linear kernel's
(Anderson & Gupta eq. (6)). Mixtures are the weighted sum over component
pairs; degrees above 2, and other representations, average over draws.
"""

from __future__ import annotations

from dataclasses import replace
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from .._numerics import scale_gamma
from .._sklearn_compat import Interval, StrOptions
from ..conditionals import GaussianConditionals, MixtureConditionals
from ..hookspecs import hookimpl
from ._base_kernel import BaseKernel
from ._expectation_table import Expectation
from ._expected_kernel import BaseExpectedKernel
from ._linear import gaussian_product_variance, gaussian_squared_norm_moments

__all__ = ["ExpectedPolynomialKernel", "Polynomial"]


class Polynomial(BaseKernel):
    """The polynomial kernel ``(gamma x^T y + coef0)^degree``.

    Parameters
    ----------
    degree : int >= 1, default=2
    gamma : float > 0 or "scale", default="scale"
        ``"scale"``: ``1 / (n_features * v)``, ``v`` the variance of the
        observed training entries (scikit-learn's rule, over observed entries).
    coef0 : float, default=0.0

    Attributes
    ----------
    gamma_ : float
    """

    name = "polynomial"
    _parameter_constraints: ClassVar[dict] = {
        "degree": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"scale"})],
        "coef0": [Interval(Real, None, None, closed="neither")],
    }

    def __init__(
        self, degree: int = 2, gamma: float | str = "scale", coef0: float = 0.0
    ):
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0

    def fit(self, X: np.ndarray, train: Any, density: Any = None) -> Polynomial:
        self.gamma_ = (
            scale_gamma(X) if isinstance(self.gamma, str) else float(self.gamma)
        )
        return self

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return (self.gamma_ * (A @ B.T) + self.coef0) ** self.degree

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return (self.gamma_ * np.einsum("nd,nd->n", A, A) + self.coef0) ** self.degree

    def fitted_attributes(self) -> dict[str, Any]:
        return {"gamma_": self.gamma_}


def _scaled(c: GaussianConditionals, g: float) -> GaussianConditionals:
    """The conditionals of ``sqrt(g) X``: ``g X^T Y`` then stays near 1 when
    ``g`` is the ``"scale"`` gamma, whatever the scale of the data (the
    squared products of the closed form would overflow first)."""
    root = float(np.sqrt(g))
    return replace(
        c,
        means=root * c.means,
        covariances=tuple(g * C for C in c.covariances),
        covariance=None if c.covariance is None else g * c.covariance,
    )


def _gaussian_terms(
    base: Polynomial, cx: GaussianConditionals, cy: GaussianConditionals
) -> np.ndarray:
    """``E (g X_i^T Y_j + c)^degree`` for independent rows, degree 1 or 2."""
    g, c = base.gamma_, float(base.coef0)
    sx = _scaled(cx, g)
    sy = sx if cy is cx else _scaled(cy, g)
    mean = sx.means @ sy.means.T
    if base.degree == 1:
        return mean + c
    second = mean * mean + gaussian_product_variance(sx, sy)
    return second + 2.0 * c * mean + c * c


def _gaussian_same_draw(base: Polynomial, c: GaussianConditionals) -> np.ndarray:
    """``E (g ||X_i||^2 + c)^degree`` (the same draw twice), degree 1 or 2."""
    c0 = float(base.coef0)
    mean, var = gaussian_squared_norm_moments(_scaled(c, base.gamma_))
    if base.degree == 1:
        return mean + c0
    return var + mean * mean + 2.0 * c0 * mean + c0 * c0


def _gaussian_gram(
    base: Polynomial, cx: Any, cy: Any | None, diagonal: str, normalised: bool
) -> np.ndarray:
    K = _gaussian_terms(base, cx, cx if cy is None else cy)
    if cy is None and diagonal == "same_draw":
        np.fill_diagonal(K, _gaussian_same_draw(base, cx))
    return K


def _gaussian_variance(
    base: Polynomial, cx: Any, cy: Any | None, diagonal: str, normalised: bool
) -> np.ndarray:
    """Degree 1: ``g^2 Var(X^T Y)`` (Anderson & Gupta eq. (6))."""
    sx = _scaled(cx, base.gamma_)
    V = gaussian_product_variance(sx, sx if cy is None else _scaled(cy, base.gamma_))
    if cy is None and diagonal == "same_draw":
        np.fill_diagonal(V, gaussian_squared_norm_moments(sx)[1])
    return V


def _mixture_gram(
    base: Polynomial, cx: Any, cy: Any | None, diagonal: str, normalised: bool
) -> np.ndarray:
    """``sum_kl w_ik w_jl E_kl``: the Gaussian closed form per component pair."""
    other = cx if cy is None else cy
    K = np.zeros((cx.n_samples, other.n_samples))
    for k in range(cx.n_components):
        ck = cx.component(k)
        for m in range(other.n_components):
            E = _gaussian_terms(base, ck, other.component(m))
            K += cx.weights[:, k][:, None] * E * other.weights[:, m][None, :]
    if cy is None:
        K = 0.5 * (K + K.T)
        if diagonal == "same_draw":
            diag = sum(
                cx.weights[:, k] * _gaussian_same_draw(base, cx.component(k))
                for k in range(cx.n_components)
            )
            np.fill_diagonal(K, diag)
    return K


def _closed_form(base: Polynomial) -> bool:
    return int(base.degree) <= 2


def _variance_closed_form(base: Polynomial) -> bool:
    return int(base.degree) == 1


class ExpectedPolynomialKernel(BaseExpectedKernel):
    """Expected polynomial kernel ``E (gamma X^T Y + coef0)^degree``.

    The polynomial kernel averaged over the conditionals of the missing
    entries. Closed form for Gaussian conditionals and Gaussian mixtures at
    degrees 1 and 2 (for ``X ~ N(a, A)``, ``Y ~ N(b, B)``:
    ``E[(X^T Y)^2] = (a^T b)^2 + a^T B a + b^T A b + tr(A B)``); other
    degrees and representations average over ``n_draws`` draws per row.
    The variance is closed form at degree 1, over draws otherwise.

    Parameters
    ----------
    degree : int >= 1, default=2
        Unlike scikit-learn's default (3), 2, the largest degree with a
        closed form here, so that the default is exact.
    gamma : float > 0 or "scale", default="scale"
        ``"scale"``: ``1 / (n_features * v)`` with ``v`` the variance of the
        observed training entries.
    coef0 : float, default=0.0
    density : str or density estimator, default="gaussian_em"
        A registry name or an unfitted density object (cloned at fit).
    diagonal : {"same_draw", "independent"}, default="same_draw"
        The diagonal of ``k(X)``: the same draw twice,
        ``E (gamma ||X_i||^2 + coef0)^degree``, or an independent copy.
        ``k(X, Y)`` is not affected.
    n_draws : int, default=100
        Draws per row where there is no closed form.
    random_state : int, RandomState instance or None, default=0
        Seeds those draws.

    Attributes
    ----------
    density_ : density estimator
        The density fitted on the training rows.
    base_kernel_ : Polynomial
        The fitted base kernel.
    gamma_ : float
        The ``gamma`` used.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    ExpectedLinearKernel : Degree 1 with ``gamma=1``, ``coef0=0``.

    References
    ----------
    .. [1] H. S. Anderson and M. R. Gupta, "Expected kernel for missing
       features in support vector machines", IEEE Statistical Signal
       Processing Workshop, 2011 (the expected kernel; eq. (6) for the
       second moment of ``X^T Y``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import polynomial_kernel
    >>> from missingkernels import get_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.5], [0.5, 0.0]])
    >>> k = get_kernel("expected_polynomial", degree=2, gamma=0.5, coef0=1.0).fit(X)
    >>> bool(np.allclose(k(X), polynomial_kernel(X, degree=2, gamma=0.5, coef0=1.0)))
    True
    >>> X_missing = np.array([[0.0, np.nan], [1.0, 3.0]])
    >>> k(X_missing, X).shape
    (2, 4)
    """

    _base_kernel_class: ClassVar = Polynomial
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **BaseExpectedKernel._parameter_constraints,
        **Polynomial._parameter_constraints,
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        degree: int = 2,
        gamma: float | str = "scale",
        coef0: float = 0.0,
        density: Any = "gaussian_em",
        diagonal: str = "same_draw",
        n_draws: int = 100,
        random_state: Any = 0,
    ):
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.density = density
        self.diagonal = diagonal
        self.n_draws = n_draws
        self.random_state = random_state


@hookimpl
def missingkernels_register_kernels():  # type: ignore[no-untyped-def]
    return {"expected_polynomial": ExpectedPolynomialKernel}


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    return {
        "polynomial/gaussian": Expectation(
            Polynomial,
            GaussianConditionals,
            _gaussian_gram,
            _gaussian_variance,
            applies=_closed_form,
            variance_applies=_variance_closed_form,
            description="polynomial (degree <= 2) over GaussianConditionals",
        ),
        "polynomial/mixture": Expectation(
            Polynomial,
            MixtureConditionals,
            _mixture_gram,
            applies=_closed_form,
            description="polynomial (degree <= 2) over MixtureConditionals",
        ),
    }
