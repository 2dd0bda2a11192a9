"""Tests of CategoricalDensity against hand counts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from missingkernels import get_density
from missingkernels._sklearn_compat import InvalidParameterError
from missingkernels.conditionals import CategoricalConditionals
from missingkernels.densities import CategoricalDensity

NAN = np.nan
X = np.array(
    [
        [0, 2, 1],
        [1, 2, NAN],
        [1, NAN, 0],
        [NAN, 5, 1],
        [1, 2, 1],
        [NAN, NAN, NAN],
    ]
)


def test_matches_hand_counts():
    density = CategoricalDensity().fit(X)
    # Feature 0: observed 0, 1, 1, 1 -> P(0) = 1/4, P(1) = 3/4.
    # Feature 1: observed 2, 2, 5, 2 -> P(2) = 3/4, P(5) = 1/4.
    # Feature 2: observed 1, 0, 1, 1 -> P(0) = 1/4, P(1) = 3/4.
    expected_categories = [[0, 1], [2, 5], [0, 1]]
    expected_counts = [[1, 3], [3, 1], [1, 3]]
    expected_probabilities = [[0.25, 0.75], [0.75, 0.25], [0.25, 0.75]]
    for v in range(3):
        assert density.categories_[v].tolist() == expected_categories[v]
        assert density.counts_[v].tolist() == expected_counts[v]
        np.testing.assert_allclose(density.probabilities_[v], expected_probabilities[v])


def test_laplace_smoothing_by_hand():
    density = CategoricalDensity(alpha=1.0).fit(X)
    # (count + 1) / (4 + 1 * 2)
    np.testing.assert_allclose(density.probabilities_[0], [2 / 6, 4 / 6])
    np.testing.assert_allclose(density.probabilities_[1], [4 / 6, 2 / 6])
    three = np.array([[0.0], [1.0], [2.0], [2.0], [NAN]])
    density = CategoricalDensity(alpha=0.5).fit(three)
    np.testing.assert_allclose(density.probabilities_[0], [1.5, 1.5, 2.5] / np.r_[5.5])


def test_conditionals_representation():
    density = CategoricalDensity().fit(X)
    new = np.array([[1, NAN, 0], [NAN, NAN, NAN]])
    cond = density.conditionals(new)
    assert isinstance(cond, CategoricalConditionals)
    np.testing.assert_array_equal(cond.missing, np.isnan(new))
    np.testing.assert_array_equal(cond.values[~cond.missing], new[~np.isnan(new)])
    for v in range(3):
        np.testing.assert_array_equal(cond.categories[v], density.categories_[v])
        np.testing.assert_allclose(cond.probabilities[v].sum(), 1.0)


def test_registry_and_params():
    density = get_density("categorical", alpha=1.0)
    assert isinstance(density, CategoricalDensity) and density.alpha == 1.0
    assert CategoricalDensity.representation == "categorical"
    assert clone(density).get_params()["alpha"] == 1.0


def test_rejects_non_discrete_input():
    continuous = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match=r"integers; column 0 \(0-based\) has the"):
        CategoricalDensity().fit(continuous)
    many = np.arange(300.0).reshape(150, 2)
    with pytest.raises(ValueError, match="max_categories=100; it looks continuous"):
        CategoricalDensity().fit(many)
    CategoricalDensity(max_categories=200).fit(many)


def test_unknown_categories():
    density = CategoricalDensity().fit(X)
    new = np.array([[3.0, 2.0, 1.0]])
    with pytest.raises(ValueError, match=r"column 0 \(0-based\) has the value 3\.0"):
        density.conditionals(new)
    cond = density.set_params(handle_unknown="ignore").conditionals(new)
    assert cond.values[0, 0] == 3.0
    with pytest.raises(ValueError, match="integers"):
        density.conditionals(np.array([[0.5, 2.0, 1.0]]))


def test_bad_input():
    with pytest.raises(ValueError, match=r"[Ii]nf"):
        CategoricalDensity().fit(np.array([[0.0, np.inf], [1.0, 0.0]]))
    bad = X.copy()
    bad[:, 2] = NAN
    with pytest.raises(ValueError, match=r"column 2 \(0-based\) \(missing in every"):
        CategoricalDensity().fit(bad)
    with pytest.raises(ValueError, match="minimum of 2"):
        CategoricalDensity().fit(X[:1])
    with pytest.raises(ValueError, match="features"):
        CategoricalDensity().fit(X).conditionals(X[:, :2])
    with pytest.raises(InvalidParameterError, match="alpha"):
        CategoricalDensity(alpha=-1).fit(X)
