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
  sample falls back to the average over pairs of draws (one lookup rule
  for the Gram, the variance and the features);
- presets (:class:`BaseExpectedKernel` subclasses such as
  :class:`GenRBFKernel`), a base kernel with a default density and a
  normalisation, registered by name; :func:`make_expected_kernel` makes one
  for any base kernel.

Each family has one home holding its base kernel, cells and presets, and
registers them through the plugin hooks as a third-party plugin does: a
module (``_linear``, ``_matching``, ``_polynomial``, ``_mixed``), or for the
fast RBF family the subpackage ``rbf`` (its compiled engine in
``rbf.engine``, the factor-analytic cell in ``rbf.factor``). Build them by
name with :func:`missingkernels.get_kernel`.
"""

from ._base_kernel import BaseKernel
from ._expectation_table import Expectation, find_expectation, supported
from ._expected_kernel import BaseExpectedKernel, make_expected_kernel
from ._linear import ExpectedLinearKernel, Linear
from ._matching import BelancheK1Kernel, BelancheK2Kernel, Presence, SimpleMatching
from ._mixed import ExpectedMixedRBFKernel, MixedRBFKernel, RBFMatching
from ._polynomial import ExpectedPolynomialKernel, Polynomial
from .rbf import RBF, ExpectedRBFKernel, GenRBFKernel

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
