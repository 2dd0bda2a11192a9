"""Density estimators for rows with missing entries."""

from ._base import REPRESENTATIONS, BaseDensity
from ._gaussian_em import GaussianEMDensity, SingularCovarianceWarning

__all__ = [
    "REPRESENTATIONS",
    "BaseDensity",
    "GaussianEMDensity",
    "SingularCovarianceWarning",
]


def _builtin_densities() -> dict:
    """Name -> factory of the built-in densities (read by the registry hook)."""
    return {
        "gaussian_em": GaussianEMDensity,
    }
