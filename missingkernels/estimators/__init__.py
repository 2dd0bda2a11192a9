"""Scikit-learn estimators on expected kernels: X may contain NaN."""

from ._features import ExpectedKernelFeatures
from ._geom import GeomSVC
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
]
