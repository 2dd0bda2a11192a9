"""Utilities for developers of kernels, densities and plugins.

:mod:`missingkernels.utils.estimator_checks` holds the contract checks every
registered kernel and density passes.
"""

__all__: list[str] = []
