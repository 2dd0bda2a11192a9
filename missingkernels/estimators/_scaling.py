"""Standardising the numeric columns inside the estimators (missing stays missing).

The RBF kernels use one width for every numeric column, so columns on raw
scales (a count in thousands next to a ratio near 1) let the widest column
decide the kernel. The estimators therefore standardise the numeric columns
by default, as e1071's ``svm`` (``scale = TRUE``) and kernlab's ``ksvm``
(``scaled = TRUE``) do: each numeric column is centred on the mean of its
observed training entries and divided by their standard deviation (the
population one, ``ddof=0``, as :class:`sklearn.preprocessing.StandardScaler`;
a constant or unobserved column is divided by 1). Missing entries stay NaN and
nominal columns (category codes) pass unchanged. The density of the missing
entries is then fitted on the standardised rows; the Gaussian densities are
affine equivariant, so it is the raw rows' density standardised.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def fit_standardization(
    X: np.ndarray, nominal: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """Centre and scale of each column of the training rows ``X`` (NaN missing).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training rows, float64, NaN where missing.
    nominal : array-like of bool of shape (n_features,), optional
        Columns left unchanged (centre 0, scale 1): category codes.

    Returns
    -------
    center : ndarray of shape (n_features,)
        Mean of the observed entries of each numeric column (0 for a column
        with no observed entry and for nominal columns).
    scale : ndarray of shape (n_features,)
        Population standard deviation of the observed entries (1 where it is
        0, not finite, or the column is nominal).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        center = np.nanmean(X, axis=0) if X.shape[0] else np.zeros(X.shape[1])
        scale = np.nanstd(X, axis=0) if X.shape[0] else np.ones(X.shape[1])
    center = np.where(np.isfinite(center), center, 0.0)
    return _finished(center, scale, nominal)


def _finished(
    center: np.ndarray, scale: np.ndarray, nominal: Any
) -> tuple[np.ndarray, np.ndarray]:
    """The standardisation from the columns' means and standard deviations:
    a spread at rounding level (a constant column stored with noise) counts
    as none, as StandardScaler does; the ``nominal`` columns (category
    codes) are left as they are (centre 0, scale 1)."""
    tiny = 10 * np.finfo(np.float64).eps * np.maximum(np.abs(center), 1.0)
    scale = np.where(np.isfinite(scale) & (scale > tiny), scale, 1.0)
    if nominal is None:
        return center, scale
    mask = np.asarray(nominal, dtype=bool)
    return np.where(mask, 0.0, center), np.where(mask, 1.0, scale)


def apply_standardization(
    X: np.ndarray, center: np.ndarray | None, scale: np.ndarray | None
) -> np.ndarray:
    """``(X - center) / scale`` as a new array (NaN stays NaN); a copy of
    ``X`` when ``center`` is None (standardisation off): the estimators never
    keep a reference to the caller's array."""
    if center is None or scale is None:
        return np.array(X, dtype=np.float64, copy=True)
    return (X - center) / scale


def fit_target_standardization(y: np.ndarray) -> tuple[float, float]:
    """Mean and population standard deviation of a regression target (scale
    1 for a constant target)."""
    y = np.asarray(y, dtype=np.float64)
    center = float(np.mean(y))
    scale = float(np.std(y))
    if not np.isfinite(scale) or scale <= 10 * np.finfo(np.float64).eps * max(
        abs(center), 1.0
    ):
        scale = 1.0
    return center, scale


def _squared_deviations(block: np.ndarray, center: np.ndarray) -> tuple[np.ndarray]:
    """Per column, the sum of squared deviations of a block's observed entries."""
    deviations = np.where(np.isnan(block), 0.0, block - center)
    return ((deviations * deviations).sum(axis=0),)


def fit_standardization_blocks(
    estimator: Any, X: Any, nominal: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fit_standardization` on the row blocks of a dask array (numbers;
    the ``nominal`` columns, category codes, left unchanged): one pass checks
    the rows and sums the observed entries, a second their squared
    deviations from the mean (two passes, as ``np.nanmean`` then
    ``np.nanstd``; the same values up to the order of the additions)."""
    from .._dask_blocks import block_sums, summarise_columns

    summary = summarise_columns(
        estimator, X, min_samples=2, require_observed_columns=False
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        center = summary.sums / summary.counts
        center = np.where(np.isfinite(center), center, 0.0)
        (squares,) = block_sums(X, _squared_deviations, center)
        scale = np.sqrt(squares / summary.counts)
    return _finished(center, scale, nominal)
