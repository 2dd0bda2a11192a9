"""Scikit-learn estimators on expected kernels: X may contain NaN."""

from ._features import ExpectedKernelFeatures
from ._geom import GeomSVC
from ._missing_cost import (
    plausible_values,
    uncertainty_from_missing,
    value_of_measuring,
)
from ._socp import SOCPSVC, cone_weight
from ._svm import MissingKernelSVC
from ._svr import MissingKernelSVR
from ._transformer import MissingKernelTransformer

__all__ = [
    "ExpectedKernelFeatures",
    "GeomSVC",
    "MissingKernelSVC",
    "MissingKernelSVR",
    "MissingKernelTransformer",
    "SOCPSVC",
    "cone_weight",
    "plausible_values",
    "uncertainty_from_missing",
    "value_of_measuring",
]
