"""The RBF family: base kernel, presets, cells and the engine that computes them.

- :class:`RBF`, the base kernel ``exp(-gamma ||x - y||^2)`` (Euclidean or
  Mahalanobis), and the presets :class:`GenRBFKernel` (Smieja et al.) and
  :class:`ExpectedRBFKernel` (Anderson & Gupta) (:mod:`._kernel`);
- the cells of the expectation table: the RBF over Gaussian, mixture and
  draws conditionals (:mod:`._cells`), and over factor conditionals
  (:mod:`.factor`); their expected Fourier features (:mod:`._fourier`);
- :mod:`.engine`: sides of rows, the choice of compiled loop per pair of
  sides, threads; the API the cells and the mixed kernel use.

The family registers itself here, in one place, through the same hooks a
third-party plugin uses.
"""

from ...hookspecs import hookimpl
from ._cells import GAUSSIAN_CELL, MIXTURE_CELL, SAMPLES_CELL
from ._kernel import RBF, ExpectedRBFKernel, GenRBFKernel
from .factor import FACTOR_CELL

__all__ = ["RBF", "ExpectedRBFKernel", "GenRBFKernel"]


@hookimpl
def missingkernels_register_kernels():  # type: ignore[no-untyped-def]
    return {"expected_rbf": ExpectedRBFKernel, "genrbf": GenRBFKernel}


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    return {
        "rbf/gaussian": GAUSSIAN_CELL,
        "rbf/mixture": MIXTURE_CELL,
        "rbf/samples": SAMPLES_CELL,
        "rbf/factor": FACTOR_CELL,
    }
