"""The cells of the RBF over Gaussian, mixture and draws conditionals.

Each cell computes ``E k`` (Gram), ``Var k`` and the expected Fourier
features of the RBF over one representation of the conditionals, through
the engine's compiled loops (:mod:`.engine`). With ``normalised`` (genRBF)
the offsets ``-1/2 log n_i``, ``n_i = E k(X_i, X_i')``, go inside the
exponent. Conventions of the cells as in
:mod:`missingkernels.kernels._expectation_table`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...conditionals import (
    GaussianConditionals,
    MixtureConditionals,
    SampleConditionals,
)
from .._expectation_table import (
    Expectation,
    draws_average,
    set_diagonal,
    times_missingness_factor,
)
from . import _fourier, engine
from ._kernel import RBF

__all__ = ["GAUSSIAN_CELL", "MIXTURE_CELL", "SAMPLES_CELL"]


class _RBFCell:
    """The RBF over one representation: its sides (one, or one per component
    or draw) feed the compiled loops; with ``normalised`` (genRBF), offsets
    ``-1/2 log n_i`` inside the exponent, ``n_i = E k(X_i, X_i')``."""

    def __init__(
        self,
        sides: Callable[[Any, engine.Metric], list[engine.Side]],
        gaussian: bool,
        fourier: Callable[[Any, Any], np.ndarray],
    ) -> None:
        self.sides = sides
        self.gaussian = gaussian
        self.fourier = fourier

    @staticmethod
    def _with_offsets(sides: list[engine.Side], off: np.ndarray) -> list[engine.Side]:
        return [s.with_offsets(off) for s in sides]

    def _self_log(
        self, sides: list[engine.Side], gamma: float, metric: engine.Metric
    ) -> np.ndarray:
        if self.gaussian:
            return engine.gaussian_self_log(sides[0], gamma, metric)
        return engine.accumulated_self_log(sides, gamma, metric)

    def _gram(
        self,
        a: list[engine.Side],
        b: list[engine.Side] | None,
        gamma: float,
        metric: engine.Metric,
        log: bool,
        clip: bool = False,
    ) -> np.ndarray:
        """``E k`` (or its log) with the offsets of the sides inside the
        exponent; with ``clip``, at most 1 (normalised kernels: ``|E k(X_i,
        Y_j)| <= sqrt(n_i n_j)`` by Cauchy-Schwarz, which rounding can
        exceed by an ulp for identical rows)."""
        if self.gaussian:
            return engine.gaussian_gram(
                a[0], None if b is None else b[0], gamma, metric, log=log,
                upper=0.0 if clip else None,
            )  # fmt: skip
        K = engine.accumulated_gram(a, b, gamma, metric)
        if clip:
            np.minimum(K, 1.0, out=K)
        if log:
            with np.errstate(divide="ignore"):
                np.log(K, out=K)
        return K

    def _prepare(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float, normalised: bool
    ) -> tuple[
        list[engine.Side], list[engine.Side] | None, np.ndarray, np.ndarray | None
    ]:
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
            times_missingness_factor(K, base, cx, cy)
            if cy is None:
                norm = -self_x if normalised else np.zeros_like(self_x)
                if diagonal == "same_draw":
                    # k(x, x) = 1 for every draw; genRBF divides by n_i.
                    set_diagonal(K, np.exp(norm))
                else:
                    set_diagonal(K, np.exp(self_x + norm))
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
        """``Var k = E_{2 gamma} k - (E_gamma k)^2`` (k^2 is the RBF at 2 gamma),
        times the square of the factor on the masks (a constant per pair)."""
        with np.errstate(under="ignore"):
            V = self._variance(base, cx, cy, diagonal, normalised)
        return times_missingness_factor(V, base, cx, cy, power=2)

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
            engine.exp_inplace(V)
            V *= L1
        else:
            E1 = self._gram(sx, sy, gamma, metric, log=False)
            V = self._gram(sx2, sy2, 2.0 * gamma, metric, log=False)
            V -= E1 * E1
            np.maximum(V, 0.0, out=V)
        if cy is None:
            if diagonal == "same_draw":
                set_diagonal(V, np.zeros(len(V)))  # k(x, x) is constant
            else:
                norm = -2.0 * self_x if normalised else np.zeros_like(self_x)
                self2 = self._self_log(self.sides(cx, metric), 2.0 * gamma, metric)
                diag = -np.exp(self2 + norm) * np.expm1(
                    np.minimum(2.0 * self_x - self2, 0.0)
                )
                set_diagonal(V, diag)
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


def _gaussian_sides(c: Any, metric: engine.Metric) -> list[engine.Side]:
    return [engine.gaussian_side(c, metric)]


GAUSSIAN_CELL = _rbf_cell(
    GaussianConditionals, _gaussian_sides, True, _fourier.gaussian_fourier
)
MIXTURE_CELL = _rbf_cell(
    MixtureConditionals, engine.mixture_sides, False, _fourier.mixture_fourier
)
SAMPLES_CELL = _rbf_cell(SampleConditionals, engine.sample_sides, False, draws_average)
