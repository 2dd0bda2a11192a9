"""A minimal third-party plugin: one kernel and one density."""

import numpy as np

from missingkernels.conditionals import GaussianConditionals
from missingkernels.densities import BaseDensity
from missingkernels.hookspecs import hookimpl


class StandardNormalDensity(BaseDensity):
    """Standard normal density with fixed parameters (example plugin)."""

    representation = "gaussian"

    def _fit(self, X):
        self.mean_ = np.zeros(X.shape[1])
        self.covariance_ = np.eye(X.shape[1])

    def _conditionals(self, X):
        return GaussianConditionals.from_moments(X, self.mean_, self.covariance_)


class CountObservedKernel:
    """Number of features observed in both rows (example plugin)."""

    def fit(self, X):
        return self

    def __call__(self, X, Y=None):
        A = ~np.isnan(np.asarray(X, float))
        B = A if Y is None else ~np.isnan(np.asarray(Y, float))
        return A.astype(float) @ B.T.astype(float)


@hookimpl
def missingkernels_register_kernels():
    return {"example_count_observed": CountObservedKernel}


@hookimpl
def missingkernels_register_densities():
    return {"example_standard_normal": StandardNormalDensity}
