"""Shared part of the R densities that return Gaussian conditionals."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from missingkernels.conditionals import GaussianConditionals
from missingkernels.densities import BaseDensity
from missingkernels.utils import describe_features


class _RGaussianDensity(BaseDensity):
    """A multivariate normal fitted in R; conditionals by Schur complements."""

    representation: ClassVar[str] = "gaussian"

    mean_: np.ndarray
    covariance_: np.ndarray

    def _informative_rows(self, X: np.ndarray) -> np.ndarray:
        """Drop rows with every entry missing and check what R will need.

        Fully missing rows add nothing to the likelihood of a normal model
        under MAR; Amelia drops them itself (with console noise) and norm
        stores them for nothing.
        """
        name = type(self).__name__
        Xu = X[~np.isnan(X).all(axis=1)]
        if Xu.shape[0] < 2:
            raise ValueError(
                f"{name} needs at least 2 rows with an observed entry; got "
                f"{Xu.shape[0]} (rows with every feature missing carry no "
                "information)."
            )
        observed = ~np.isnan(Xu)
        spread = np.nanmax(Xu, axis=0) - np.nanmin(Xu, axis=0)
        flat = np.flatnonzero((observed.sum(axis=0) < 2) | ~(spread > 0))
        if flat.size:
            raise ValueError(
                f"{name}: fewer than two distinct values are observed in "
                f"{describe_features(self, flat)}, so the variance is zero or "
                "unknown and the normal model is degenerate. Drop such columns "
                "before fitting."
            )
        return Xu

    def _set_moments(self, mean: np.ndarray, covariance: np.ndarray) -> None:
        d = self.n_features_in_
        mean = np.asarray(mean, dtype=np.float64).reshape(-1)
        covariance = np.asarray(covariance, dtype=np.float64)
        if mean.shape != (d,) or covariance.shape != (d, d):
            raise RuntimeError(
                f"{type(self).__name__}: R returned a mean of shape {mean.shape} "
                f"and a covariance of shape {covariance.shape} for {d} features; "
                "the R package's output format is not the one this plugin "
                "expects. Please report this with your R package versions."
            )
        if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(covariance))):
            raise RuntimeError(
                f"{type(self).__name__}: R returned non-finite parameters; the "
                "fit failed (check for collinear features or too few rows)."
            )
        self.mean_ = mean
        self.covariance_ = 0.5 * (covariance + covariance.T)

    def _conditionals(self, X: np.ndarray) -> Any:
        return GaussianConditionals.from_moments(X, self.mean_, self.covariance_)
