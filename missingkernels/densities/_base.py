"""The density-estimator protocol shared by every density in the registry."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from .._dask_blocks import as_row_blocks, is_dask_collection
from .._validation import Encoder, validate_missing_data

#: The conditional representations a density may return, by tag.
REPRESENTATIONS = (
    "gaussian",
    "mixture",
    "samples",
    "categorical",
    "mixed",
    "factor",
)


class BaseDensity(BaseEstimator):
    """Base class of density estimators for rows with missing entries.

    Subclasses set the class attribute ``representation`` (one of
    ``"gaussian"``, ``"mixture"``, ``"samples"``, ``"categorical"``), implement
    ``_fit(X)`` on validated float64 rows with NaN, and ``_conditionals(X)``
    returning the matching representation of
    :mod:`missingkernels.conditionals`, computed from fitted parameters only.

    A density whose representation does not fix what its values are (draws)
    says it with the class attribute ``domain``: ``"numeric"`` for draws from
    regressions (they are not category codes, so matching kernels refuse
    them), ``"nominal"`` for draws of category codes, None if either.
    """

    representation: ClassVar[str] = ""
    domain: ClassVar[str | None] = None
    _parameter_constraints: ClassVar[dict] = {}
    #: The coding of a mixed-type table's nominal columns, applied before the
    #: validation (``staticmethod(encode_table)`` for the densities that take
    #: tables); None for numeric input only.
    _encode: ClassVar[Encoder | None] = None

    def fit(self, X: Any, y: Any = None) -> BaseDensity:
        """Fit the density on training rows (NaN marks missing entries).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            At least two rows; every feature observed at least once. The EM
            densities also take a dask array or DataFrame, and fit it out of
            core from per-block sums (the same fit as in memory); other
            densities read it into memory.
        y : None
            Ignored; present for scikit-learn compatibility.

        Returns
        -------
        self : object
        """
        self._validate_params()
        # The time of the fit, for the estimators' verbose output.
        started = time.perf_counter()
        if is_dask_collection(X) and hasattr(self, "_fit_dask"):
            # Out of core: the density reduces per-block sums (the EM densities).
            self._fit_dask(
                as_row_blocks(self, X, reset=True, purpose=f"{type(self).__name__}.fit")
            )
        else:
            X = validate_missing_data(
                self, X, reset=True, min_samples=2, encode=self._encode
            )
            self._fit(X)
        self._fit_seconds = time.perf_counter() - started
        return self

    def conditionals(self, X: Any) -> Any:
        """Return the conditional distribution of the missing entries of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training or new rows; rows may be entirely missing.

        Returns
        -------
        conditionals : GaussianConditionals, MixtureConditionals, SampleConditionals or CategoricalConditionals
        """  # noqa: E501
        X = validate_missing_data(
            self, X, reset=False, min_samples=0, encode=self._encode
        )
        return self._conditionals(X)

    def _fit(self, X: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _conditionals(self, X: np.ndarray) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.requires_fit = True
        return tags
