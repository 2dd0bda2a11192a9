"""Density estimators for rows with missing entries."""

from ._base import REPRESENTATIONS, BaseDensity
from ._categorical import CategoricalDensity
from ._factor_analysis import FactorAnalysisDensity
from ._gaussian_em import GaussianEMDensity, SingularCovarianceWarning
from ._latent_class import LatentClassDensity
from ._mixture import GaussianMixtureDensity
from ._samples import IterativeImputerDensity, MICEDensity

__all__ = [
    "REPRESENTATIONS",
    "BaseDensity",
    "CategoricalDensity",
    "FactorAnalysisDensity",
    "GaussianEMDensity",
    "GaussianMixtureDensity",
    "IterativeImputerDensity",
    "LatentClassDensity",
    "MICEDensity",
    "SingularCovarianceWarning",
]


def _builtin_densities() -> dict:
    """Name -> factory of the built-in densities (read by the registry hook)."""
    return {
        "categorical": CategoricalDensity,
        "factor_analysis": FactorAnalysisDensity,
        "gaussian_em": GaussianEMDensity,
        "gaussian_mixture": GaussianMixtureDensity,
        "iterative": IterativeImputerDensity,
        "latent_class": LatentClassDensity,
        "mice": MICEDensity,
    }
