"""Errors and warnings name columns (issue 19).

A DataFrame's column names reach every message, also of the kernel and the
density an SVM fits on its validated array; without names a message gives the
position and says that it counts from 0.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from missingkernels import (
    DroppedFeaturesWarning,
    MissingKernelSVC,
    MissingKernelTransformer,
    get_density,
)
from missingkernels._validation import describe_features
from missingkernels.densities import SingularCovarianceWarning

pd = pytest.importorskip("pandas")


def _frame(rng, n=30):
    X = rng.normal(size=(n, 3))
    X[:, 1] = 2.0  # constant: the Gaussian's covariance is singular
    X[rng.random((n, 3)) < 0.2] = np.nan
    y = np.arange(n) % 2
    return pd.DataFrame(X, columns=["age", "dose", "weight"]), y


def _codes(rng, n=30):
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    X[rng.random((n, 3)) < 0.2] = np.nan
    return pd.DataFrame(X, columns=["colour", "shape", "size"]), np.arange(n) % 2


class _Named:
    feature_names_in_ = np.array(["a", "b", "c"], dtype=object)


@pytest.mark.parametrize(
    ("source", "indices", "expected"),
    [
        (None, 2, "column 2 (0-based)"),
        (None, [0, 2], "columns 0, 2 (0-based)"),
        (_Named(), 1, "feature 'b'"),
        (_Named(), [0, 2], "features 'a', 'c'"),
        (None, list(range(10)), "columns 0, 1, 2, 3, 4, 5, 6, 7 and 2 more (0-based)"),
    ],
)
def test_describe_features(source, indices, expected):
    assert describe_features(source, indices) == expected


def _warning_texts(record):
    return [str(w.message) for w in record if w.category is SingularCovarianceWarning]


def test_density_warning_inside_svc_names_the_dataframe_column(rng):
    X, y = _frame(rng)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        MissingKernelSVC().fit(X, y)
    texts = _warning_texts(record)
    assert texts, "no SingularCovarianceWarning"
    assert all("feature 'dose'" in t for t in texts), texts
    assert not any("[1]" in t for t in texts), texts


def test_density_warning_on_arrays_says_0_based(rng):
    X, y = _frame(rng)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        MissingKernelSVC().fit(X.to_numpy(), y)
    texts = _warning_texts(record)
    assert texts and all("column 1 (0-based)" in t for t in texts), texts


def test_density_fitted_on_a_dataframe_names_the_column(rng):
    X, _ = _frame(rng)
    with pytest.warns(SingularCovarianceWarning, match="feature 'dose'"):
        get_density("gaussian_em").fit(X)


def test_transformer_passes_names_to_its_kernel(rng):
    X, _ = _frame(rng)
    with pytest.warns(SingularCovarianceWarning, match="feature 'dose'"):
        MissingKernelTransformer().fit(X)


def test_categorical_density_inside_svc_names_the_column(rng):
    X, y = _codes(rng)
    X.loc[3, "shape"] = 1.5
    message = r"feature 'shape' has the value 1\.5 in row 3 \(0-based\)"
    with pytest.raises(ValueError, match=message):
        MissingKernelSVC(kernel="belanche_k1").fit(X, y)


def test_unseen_category_at_predict_names_the_column(rng):
    X, y = _codes(rng)
    clf = MissingKernelSVC(kernel="belanche_k1").fit(X, y)
    new = X.iloc[:2].copy()
    new.loc[new.index[0], "size"] = 7.0
    with pytest.raises(ValueError, match=r"feature 'size' has the value 7\.0"):
        clf.predict(new)


def test_presence_kernel_names_the_non_binary_column(rng):
    X, y = _codes(rng)
    with pytest.raises(ValueError, match=r"feature 'colour' takes the value 2\.0"):
        MissingKernelSVC(kernel="belanche_k2").fit(X, y)


def test_column_missing_everywhere_is_named_or_0_based(rng):
    X, y = _frame(rng)
    X["weight"] = np.nan
    with pytest.warns(DroppedFeaturesWarning, match="dropped feature 'weight',"):
        MissingKernelSVC().fit(X, y)
    message = r"dropped column 2 \(0-based\), observed in fewer than 2"
    with pytest.warns(DroppedFeaturesWarning, match=message):
        MissingKernelSVC().fit(X.to_numpy(), y)


def test_range_error_names_the_column(rng):
    X, y = _frame(rng)
    X["age"] *= 1e200
    with pytest.raises(ValueError, match="in feature 'age'") as info:
        MissingKernelSVC().fit(X, y)
    assert "0 (" not in str(info.value)
