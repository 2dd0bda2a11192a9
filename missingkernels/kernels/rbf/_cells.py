"""The cells of the RBF: its Gram, variance and features, written once.

:class:`RBFCell` holds the rules every representation of the conditionals
shares: genRBF's normalisation as offsets ``-1/2 log n_i`` inside the
exponent (``n_i = E k(X_i, X_i')``), the two conventions of the diagonal,
``Var k = E_{2 gamma} k - (E_gamma k)^2`` (``k^2`` is the RBF at ``2
gamma``), the factor on the missingness masks, and genRBF's scaling of the
features. A representation supplies only its sums (an :class:`RBFSums`):
``log n_i``, the pair sums ``E k`` with offsets, and the expected Fourier
features; where its form holds only for some arguments, the table decides
(``applies_to`` of the cell). Here, those of Gaussian conditionals (one
closed form per pair of rows, exact in log space) and of mixtures and
draws (weighted sums over components or draws); :mod:`.factor` adds those
of factor conditionals.
Conventions of the cells as in :mod:`missingkernels.kernels._expectation_table`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from ...conditionals import (
    GaussianConditionals,
    MixtureConditionals,
    SampleConditionals,
)
from .._expectation_table import (
    Expectation,
    draws_average,
    lookup,
    set_diagonal,
    times_missingness_factor,
)
from . import _fourier, engine
from ._kernel import RBF

__all__ = ["GAUSSIAN_CELL", "MIXTURE_CELL", "SAMPLES_CELL", "RBFCell", "RBFSums"]


class RBFSums(Protocol):
    """What a representation of the conditionals supplies to :class:`RBFCell`.

    ``in_log_space`` says how its pair sums are exact: as logs (one closed
    form per pair of rows: the variance is then taken from the logs, with
    no cancellation) or as values (weighted sums of such terms over mixture
    components or draws).
    """

    in_log_space: bool

    def self_log(self, base: RBF, c: Any, gamma: float) -> np.ndarray:
        """``log E_gamma k(X_i, X_i')`` for independent copies (a new array)."""
        ...

    def pair_sums(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float,
        off_x: np.ndarray | None, off_y: np.ndarray | None, *, log: bool,
        clip: bool,
    ) -> np.ndarray:  # fmt: skip
        """``E_gamma k(X_i, Y_j) exp(off_x[i] + off_y[j])`` (no offsets where
        None), or its log; ``cy=None``: the rows of ``cx`` with themselves, a
        row paired with an independent copy. With ``clip``, at most 1."""
        ...

    def features(self, c: Any, feature_map: Any) -> np.ndarray:
        """The expected Fourier features of the rows of ``c``."""
        ...


class RBFCell:
    """The Gram, variance and features of the RBF over one representation."""

    def __init__(
        self,
        sums: RBFSums,
        applies_to: Callable[[Any, Any, Any], bool] | None = None,
    ) -> None:
        self.sums = sums
        self.applies_to = applies_to

    def _elsewhere(
        self, quantity: str, base: RBF, cx: Any, cy: Any | None
    ) -> Expectation | None:
        """The cell the table gives these arguments to when this cell's form
        does not hold for them (None: it holds), for callers that reach the
        cell without the table (e.g. ``check_expectation``)."""
        if self.applies_to is None or self.applies_to(base, cx, cy):
            return None
        other = lookup(base, type(cx), quantity, rows=(cx, cy))
        assert other is not None
        return other

    def _offsets(
        self, self_x: np.ndarray, self_y: np.ndarray | None, power: float,
        normalised: bool,
    ) -> tuple[np.ndarray | None, np.ndarray | None]:  # fmt: skip
        """genRBF's offsets ``-power/2 log n_i`` (``power`` 2 at ``2 gamma``)."""
        if not normalised:
            return None, None
        return -0.5 * power * self_x, None if self_y is None else (
            -0.5 * power * self_y
        )

    def _self_logs(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float
    ) -> tuple[np.ndarray, np.ndarray | None]:
        self_x = self.sums.self_log(base, cx, gamma)
        return self_x, None if cy is None else self.sums.self_log(base, cy, gamma)

    def gram(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        other = self._elsewhere("gram", base, cx, cy)
        if other is not None:
            return other.gram(base, cx, cy, diagonal, normalised)
        with np.errstate(under="ignore"):  # exp(-huge) = 0 is the answer
            gamma = base.gamma_
            self_x, self_y = self._self_logs(base, cx, cy, gamma)
            off_x, off_y = self._offsets(self_x, self_y, 1.0, normalised)
            # Normalised: |E k(X_i, Y_j)| <= sqrt(n_i n_j) (Cauchy-Schwarz),
            # which rounding may exceed by an ulp for identical rows.
            K = self.sums.pair_sums(
                base, cx, cy, gamma, off_x, off_y, log=False, clip=normalised
            )
            times_missingness_factor(K, base, cx, cy)
            if cy is None:
                norm = -self_x if normalised else np.zeros_like(self_x)
                if diagonal == "same_draw":
                    # k(x, x) = 1 for every draw; genRBF divides by n_i.
                    set_diagonal(K, np.exp(norm))
                else:
                    set_diagonal(K, np.exp(self_x + norm))
            return K

    def variance(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        """``Var k = E_{2 gamma} k - (E_gamma k)^2``, times the square of the
        factor on the masks (a constant per pair)."""
        other = self._elsewhere("variance", base, cx, cy)
        if other is not None and other.variance is not None:
            return other.variance(base, cx, cy, diagonal, normalised)
        with np.errstate(under="ignore"):
            V = self._variance(base, cx, cy, diagonal, normalised)
        return times_missingness_factor(V, base, cx, cy, power=2)

    def _variance(
        self, base: RBF, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        gamma = base.gamma_
        sums = self.sums
        self_x, self_y = self._self_logs(base, cx, cy, gamma)
        off_x, off_y = self._offsets(self_x, self_y, 1.0, normalised)
        # At 2 gamma genRBF's variance divides by n_i n_j: offsets -log n_i.
        off2_x, off2_y = self._offsets(self_x, self_y, 2.0, normalised)
        log = sums.in_log_space
        E1 = sums.pair_sums(base, cx, cy, gamma, off_x, off_y, log=log, clip=False)
        V = sums.pair_sums(
            base, cx, cy, 2.0 * gamma, off2_x, off2_y, log=log, clip=False
        )
        if log:
            # Var = E2 (1 - exp(2 log E1 - log E2)): accurate when Var << E1^2,
            # no overflow when both terms underflow (the factor is in [0, 1];
            # E1^2 <= E2, clipped against rounding).
            E1 *= 2.0
            E1 -= V
            np.minimum(E1, 0.0, out=E1)
            np.expm1(E1, out=E1)
            E1 *= -1.0
            engine.exp_inplace(V)
            V *= E1
        else:
            V -= E1 * E1
            np.maximum(V, 0.0, out=V)
        if cy is None:
            if diagonal == "same_draw":
                set_diagonal(V, np.zeros(len(V)))  # k(x, x) is constant
            else:
                norm = -2.0 * self_x if normalised else np.zeros_like(self_x)
                self2 = sums.self_log(base, cx, 2.0 * gamma)
                diag = -np.exp(self2 + norm) * np.expm1(
                    np.minimum(2.0 * self_x - self2, 0.0)
                )
                set_diagonal(V, diag)
        return V

    def features(
        self, base: RBF, c: Any, feature_map: Any, normalised: bool
    ) -> np.ndarray:
        """Expected Fourier features; genRBF divides row i by ``sqrt(n_i)``."""
        psi = self.sums.features(c, feature_map)
        if normalised:
            with np.errstate(under="ignore"):
                if isinstance(self.sums, GaussianSums):
                    # one closed form per pattern, not the Gram's row-pair
                    # machinery (the same value to rounding; 20x faster at
                    # one row per pattern)
                    precision = base.metric_.precision
                    log_n = _fourier.gaussian_self_log(c, base.gamma_, precision)
                else:
                    log_n = self.sums.self_log(base, c, base.gamma_)
            # (the factor in the features' dtype: float32 features are scaled
            # in place by a float32 loop, without casting buffers)
            psi *= np.exp(-0.5 * log_n).astype(psi.dtype, copy=False)[:, None]
        return psi

    def expectation(self, conditionals: type, description: str) -> Expectation:
        """This cell as the table's entry for ``(RBF, conditionals)``; its
        ``applies_to`` says where its sums' form holds (else the table takes
        the next cell)."""
        return Expectation(
            RBF,
            conditionals,
            self.gram,
            self.variance,
            normalises=True,
            description=description,
            features=self.features,
            applies_to=self.applies_to,
        )


def _with_offsets(
    sides: list[engine.Side], off: np.ndarray | None
) -> list[engine.Side]:
    return sides if off is None else [s.with_offsets(off) for s in sides]


class GaussianSums:
    """Gaussian conditionals: one closed form per pair of rows, in log space."""

    in_log_space = True

    def self_log(self, base: RBF, c: Any, gamma: float) -> np.ndarray:
        side = engine.gaussian_side(c, base.metric_)
        return engine.gaussian_self_log(side, gamma, base.metric_)

    def pair_sums(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float,
        off_x: np.ndarray | None, off_y: np.ndarray | None, *, log: bool,
        clip: bool,
    ) -> np.ndarray:  # fmt: skip
        metric = base.metric_
        (a,) = _with_offsets([engine.gaussian_side(cx, metric)], off_x)
        b = None
        if cy is not None:
            (b,) = _with_offsets([engine.gaussian_side(cy, metric)], off_y)
        upper = 0.0 if clip else None
        return engine.gaussian_gram(a, b, gamma, metric, log=log, upper=upper)

    def features(self, c: Any, feature_map: Any) -> np.ndarray:
        return _fourier.gaussian_fourier(c, feature_map)


class WeightedSums:
    """Mixtures (one side per component, weighted by the posteriors) and
    draws (one side per draw, weighted ``1 / m``): sums of closed forms."""

    in_log_space = False

    def __init__(
        self,
        sides: Callable[[Any, engine.Metric], list[engine.Side]],
        features: Callable[[Any, Any], np.ndarray],
    ) -> None:
        self.sides = sides
        self._features = features

    def self_log(self, base: RBF, c: Any, gamma: float) -> np.ndarray:
        return engine.accumulated_self_log(
            self.sides(c, base.metric_), gamma, base.metric_
        )

    def pair_sums(
        self, base: RBF, cx: Any, cy: Any | None, gamma: float,
        off_x: np.ndarray | None, off_y: np.ndarray | None, *, log: bool,
        clip: bool,
    ) -> np.ndarray:  # fmt: skip
        metric = base.metric_
        a = _with_offsets(self.sides(cx, metric), off_x)
        b = None if cy is None else _with_offsets(self.sides(cy, metric), off_y)
        K = engine.accumulated_gram(a, b, gamma, metric)
        if clip:
            np.minimum(K, 1.0, out=K)
        if log:
            with np.errstate(divide="ignore"):
                np.log(K, out=K)
        return K

    def features(self, c: Any, feature_map: Any) -> np.ndarray:
        return self._features(c, feature_map)


GAUSSIAN_CELL = RBFCell(GaussianSums()).expectation(
    GaussianConditionals, "RBF over GaussianConditionals: closed form, compiled"
)
MIXTURE_CELL = RBFCell(
    WeightedSums(engine.mixture_sides, _fourier.mixture_fourier)
).expectation(
    MixtureConditionals, "RBF over MixtureConditionals: closed form, compiled"
)
SAMPLES_CELL = RBFCell(WeightedSums(engine.sample_sides, draws_average)).expectation(
    SampleConditionals, "RBF over SampleConditionals: closed form, compiled"
)
