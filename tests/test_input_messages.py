"""Bad input a new user meets first: each gets a message that says what was
wrong, where, and what to do (issue 46, item 6)."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from missingkernels import MissingKernelSVC, MissingKernelSVR
from missingkernels.experiments import simulate_missing


def _lab_table(rng, n=80):
    """A lab value read from a CSV in which one cell is a detection limit."""
    crp = rng.gamma(2.0, 3.0, n).round(2)
    y = (crp + rng.normal(0, 2, n) > 6).astype(int)
    lines = ["age,crp"] + [
        f"{a:.0f},{c}" for a, c in zip(rng.normal(60, 9, n), crp, strict=True)
    ]
    lines[6] = lines[6].split(",")[0] + ",<1.0"  # row 5
    return pd.read_csv(io.StringIO("\n".join(lines))), y


# -- a numeric column holding a few text values ---------------------------------


def test_a_text_value_in_a_numeric_column_warns_naming_it(rng):
    X, y = _lab_table(rng)
    assert not pd.api.types.is_numeric_dtype(X["crp"])  # what pandas made of it
    with pytest.warns(UserWarning, match=r"feature 'crp'") as record:
        clf = MissingKernelSVC().fit(X, y)
    text = str(record[0].message)
    assert "'<1.0'" in text and "row 5" in text
    assert "pd.to_numeric" in text and "errors='coerce'" in text
    assert "79 of the 80" in text  # how many are numbers
    # It is still taken as nominal (the warning does not change the fit).
    assert clf.is_nominal_.tolist() == [False, True]
    # Converted as the warning says: numeric, no warning.
    X["crp"] = pd.to_numeric(X["crp"], errors="coerce")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert MissingKernelSVC().fit(X, y).is_nominal_.tolist() == [False, False]


def test_several_text_values_are_listed_with_counts(rng):
    X, y = _lab_table(rng)
    X.loc[[10, 11, 40], "crp"] = ["pending", "pending", ">50"]
    with pytest.warns(UserWarning, match=r"feature 'crp'") as record:
        MissingKernelSVC().fit(X, y)
    text = str(record[0].message)
    assert "'pending' (2 rows" in text and "'>50'" in text and "'<1.0'" in text


def test_a_declared_nominal_column_or_true_categories_do_not_warn(rng):
    X, y = _lab_table(rng)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MissingKernelSVC(nominal_features=["crp"]).fit(X, y)
        # Category codes with one text level: categories, no warning.
        X["crp"] = rng.choice(["1", "2", "3", "unknown"], len(X))
        MissingKernelSVC().fit(X, y)
        # Text labels with a few numbers among them: nominal, no warning.
        X["crp"] = rng.choice(["red", "blue", "green", "2"], len(X))
        MissingKernelSVC().fit(X, y)


# -- the mixed-object-column message ---------------------------------------------


def test_mixed_numbers_and_strings_message_reads_correctly(rng):
    X, y = _lab_table(rng)
    col = pd.to_numeric(X["crp"], errors="coerce").astype(object)
    col[5] = "<1.0"
    X["crp"] = col
    with pytest.raises(ValueError, match="feature 'crp' mixes numbers and str") as e:
        MissingKernelSVC().fit(X, y)
    text = str(e.value)
    assert "numeric X there" not in text
    assert "'<1.0' (row 5" in text
    assert "pd.to_numeric" in text and "nominal_features" in text


# -- missing labels in the target ------------------------------------------------


@pytest.mark.parametrize("missing", [np.nan, None, pd.NA])
def test_a_missing_label_in_a_text_target_is_named(rng, missing):
    X, y = _lab_table(rng)
    X["crp"] = pd.to_numeric(X["crp"], errors="coerce")
    labels = np.where(y == 1, "high", "low").astype(object)
    labels[[3, 17]] = missing
    with pytest.raises(ValueError, match=r"target y has 2 missing") as e:
        MissingKernelSVC().fit(X, labels)
    text = str(e.value)
    assert "rows 3, 17 (0-based)" in text
    assert "Input contains NaN" not in text and "Unknown label" not in text
    # A pandas Series: the same words (positions, not the index labels).
    with pytest.raises(ValueError, match=r"target y has 2 missing"):
        MissingKernelSVC().fit(X, pd.Series(labels, index=np.arange(len(X)) + 100))


def test_a_missing_value_in_a_regression_target_is_named(rng):
    X, _ = _lab_table(rng)
    X["crp"] = pd.to_numeric(X["crp"], errors="coerce")
    target = rng.normal(size=len(X))
    target[7] = np.nan
    with pytest.raises(ValueError, match=r"target y has 1 missing value .*row 7"):
        MissingKernelSVR().fit(X, target)


# -- simulate_missing ------------------------------------------------------------


def test_simulate_missing_names_a_text_entry():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "colour": ["r", "g", "b", "r"]})
    with pytest.raises(ValueError, match=r"simulate_missing needs numeric X") as e:
        simulate_missing(X, "mcar", 0.2, random_state=0)
    assert "feature 'colour' holds 'r' (row 0" in str(e.value)
    A = np.array([["1", "x"], ["2", "y"], ["3", "z"]])
    with pytest.raises(ValueError, match=r"column 1 \(0-based\) holds 'x'"):
        simulate_missing(A, "mar", 0.2, random_state=0)


@pytest.mark.parametrize("mechanism", ["mar", "mnar", "self_masking"])
@pytest.mark.parametrize(
    "scale, match", [(1e300, "values as large"), (1e-300, "vary by at most")]
)
def test_simulate_missing_refuses_values_whose_squares_leave_float64(
    rng, mechanism, scale, match
):
    X = rng.normal(size=(40, 4)) * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning either
        with pytest.raises(ValueError, match=rf"simulate_missing.*{match}.*Rescale"):
            simulate_missing(X, mechanism, 0.2, random_state=0)
    # Rescaled, as the message says, it works.
    Z = simulate_missing(X / scale, mechanism, 0.2, random_state=0)
    assert np.isnan(Z).any()


def test_simulate_missing_mcar_needs_no_arithmetic_on_the_values(rng):
    # MCAR only chooses entries: large values are returned as they are.
    X = rng.normal(size=(40, 4)) * 1e300
    Z = simulate_missing(X, "mcar", 0.2, random_state=0)
    np.testing.assert_array_equal(Z[~np.isnan(Z)], X[~np.isnan(Z)])
