"""check_expectation: every registered cell of the expectation table against
the average of its base kernel over draws, on well- and ill-conditioned
densities; and it catches a cell 5% off."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from missingkernels import list_expectations
from missingkernels.conditionals import BaseConditionals
from missingkernels.utils.estimator_checks import check_expectation


class Opaque(BaseConditionals):
    """A representation check_expectation has no example rows of."""


CELLS = sorted(list_expectations())


@pytest.mark.parametrize("condition_number", [10.0, 1e10])
@pytest.mark.parametrize("name", CELLS)
def test_every_built_in_cell_agrees_with_its_draws(name, condition_number):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_expectation(name, condition_number=condition_number)


def test_a_cell_five_percent_off_is_caught():
    cell = list_expectations()["rbf/gaussian"].factory

    def wrong(*args):
        return 1.05 * cell.gram(*args)

    broken = dataclasses.replace(cell, gram=wrong, normalises=False)
    with pytest.raises(AssertionError, match="standard errors"):
        check_expectation(broken, n_draws=1000)


def test_a_variance_five_percent_off_is_caught():
    cell = list_expectations()["linear/gaussian"].factory
    assert cell.variance is not None

    def wrong(*args):
        return 1.05 * cell.variance(*args) + 0.05

    broken = dataclasses.replace(cell, variance=wrong)
    with pytest.raises(AssertionError, match="variance"):
        check_expectation(broken, n_draws=1000)


def test_inputs_are_validated():
    with pytest.raises(ValueError, match="registered cells"):
        check_expectation("no/such cell")
    with pytest.raises(ValueError, match="n_draws"):
        check_expectation("rbf/gaussian", n_draws=3)
    with pytest.raises(ValueError, match="no example rows"):
        check_expectation(
            dataclasses.replace(
                list_expectations()["rbf/gaussian"].factory, conditionals=Opaque
            )
        )


def test_own_inputs_are_used():
    from missingkernels.conditionals import GaussianConditionals
    from missingkernels.kernels import RBF

    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3))
    X[rng.random(X.shape) < 0.3] = np.nan
    c = GaussianConditionals.from_moments(X, np.zeros(3), np.eye(3))
    base = RBF(gamma=0.3).fit(X, c)
    check_expectation("rbf/gaussian", base, c, n_draws=500)
