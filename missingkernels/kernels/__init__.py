"""Expected kernels for rows with missing entries.

Every kernel is a classical base kernel averaged over the conditional
distribution of the missing entries under a density fitted on the training
rows (DESIGN.md section 1). Build them by name with
:func:`missingkernels.get_kernel`.
"""

from ._base import BaseExpectedKernel
from ._kernels import (
    BelancheK1Kernel,
    BelancheK2Kernel,
    ExpectedLinearKernel,
    ExpectedRBFKernel,
    GenRBFKernel,
)

__all__ = [
    "BaseExpectedKernel",
    "BelancheK1Kernel",
    "BelancheK2Kernel",
    "ExpectedLinearKernel",
    "ExpectedRBFKernel",
    "GenRBFKernel",
]


def _builtin_kernels() -> dict:
    """Name -> factory of the built-in kernels (read by the registry hook)."""
    return {
        "belanche_k1": BelancheK1Kernel,
        "belanche_k2": BelancheK2Kernel,
        "expected_linear": ExpectedLinearKernel,
        "expected_rbf": ExpectedRBFKernel,
        "genrbf": GenRBFKernel,
    }
