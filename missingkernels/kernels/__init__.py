"""Expected kernels for rows with missing entries.

Every kernel is a classical base kernel averaged over the conditional
distribution of the missing entries under a density fitted on the training
rows (``docs/theory.rst``). Three parts compose them:

- base kernels (:class:`BaseKernel`: :class:`RBF`, :class:`Linear`,
  :class:`Polynomial`, :class:`SimpleMatching`, :class:`Presence`), small
  parameter objects evaluated on complete rows;
- the expectation table: closed forms per (base kernel, representation of
  the conditionals), registered as :class:`Expectation` cells through the
  hook ``missingkernels_register_expectations``; any representation that can
  sample falls back to the average over pairs of draws;
- presets (:class:`BaseExpectedKernel` subclasses such as
  :class:`GenRBFKernel`), a base kernel with a default density and a
  normalisation, registered by name; :func:`make_expected_kernel` makes one
  for any base kernel.

Build them by name with :func:`missingkernels.get_kernel`.
"""

from ._base import BaseExpectedKernel, make_expected_kernel
from ._base_kernels import RBF, BaseKernel, Linear, Presence, SimpleMatching
from ._kernels import (
    BelancheK1Kernel,
    BelancheK2Kernel,
    ExpectedLinearKernel,
    ExpectedRBFKernel,
    GenRBFKernel,
)
from ._mixed import ExpectedMixedRBFKernel, MixedRBFKernel, RBFMatching
from ._polynomial import ExpectedPolynomialKernel, Polynomial
from ._table import Expectation, find_expectation, supported

__all__ = [
    "RBF",
    "BaseExpectedKernel",
    "BaseKernel",
    "BelancheK1Kernel",
    "BelancheK2Kernel",
    "Expectation",
    "ExpectedLinearKernel",
    "ExpectedMixedRBFKernel",
    "ExpectedPolynomialKernel",
    "ExpectedRBFKernel",
    "GenRBFKernel",
    "Linear",
    "MixedRBFKernel",
    "Polynomial",
    "Presence",
    "RBFMatching",
    "SimpleMatching",
    "find_expectation",
    "make_expected_kernel",
    "supported",
]


def _builtin_kernels() -> dict:
    """Name -> factory of the built-in kernels (read by the registry hook)."""
    return {
        "belanche_k1": BelancheK1Kernel,
        "belanche_k2": BelancheK2Kernel,
        "expected_linear": ExpectedLinearKernel,
        "expected_mixed_rbf": ExpectedMixedRBFKernel,
        "expected_rbf": ExpectedRBFKernel,
        "genrbf": GenRBFKernel,
        "mixed_rbf": MixedRBFKernel,
    }
