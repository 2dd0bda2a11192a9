"""One lookup rule for every quantity of the expectation table (issue 36).

The Gram, the variance and the features each come from the first cell along
both class hierarchies that defines the quantity and applies, else from the
draws; the index of cells is built once per registry change. References are
written here: the linear kernel's variance per pair from Anderson & Gupta's
eq. (6), its expected features as the conditional means.
"""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import mcar

from missingkernels import list_expectations, register_plugin, unregister_plugin
from missingkernels.conditionals import GaussianConditionals, SampleConditionals
from missingkernels.densities import GaussianEMDensity
from missingkernels.hookspecs import hookimpl
from missingkernels.kernels import BaseKernel, Expectation, Linear
from missingkernels.kernels._expectation_table import (
    DRAWS_CELL,
    _cells,
    expected_features,
    expected_variance,
    lookup,
)
from missingkernels.kernels._linear import IdentityMap

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics


class ShiftedLinear(Linear):
    """A subclass of the linear kernel with a cell of its own for the Gram only."""

    name = "shifted linear"


def _means_gram(base, cx, cy, diagonal, normalised):
    other = cx if cy is None else cy
    return cx.first_moments() @ other.first_moments().T


GRAM_ONLY = Expectation(ShiftedLinear, GaussianConditionals, _means_gram)


class _GramOnlyPlugin:
    @hookimpl
    def missingkernels_register_expectations(self):
        return {"shifted_linear/gaussian": GRAM_ONLY}


@pytest.fixture
def gram_only_cell():
    name = register_plugin(_GramOnlyPlugin(), name="test-gram-only-cell")
    yield GRAM_ONLY
    unregister_plugin(name)


def _conditionals(n=12, d=3, rate=0.4, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    X = mcar(rng, rng.normal(size=(n, d)) @ A + rng.normal(size=d), rate)
    X[0] = np.nan  # a row with every entry missing
    return GaussianEMDensity().fit(X).conditionals(X)


def _row_covariance(c, i):
    """``A_i``: the pattern's covariance on the row's missing coordinates."""
    A = np.zeros((c.n_features, c.n_features))
    J = np.flatnonzero(c.patterns[c.pattern_index[i]])
    A[np.ix_(J, J)] = c.covariances[c.pattern_index[i]]
    return A


def test_each_quantity_comes_from_the_first_cell_that_defines_it(gram_only_cell):
    base = ShiftedLinear()
    linear = list_expectations()["linear/gaussian"].factory
    # The subclass's own cell gives the Gram; the variance and the features,
    # which it does not define, come from the next cell along the hierarchy
    # (the linear kernel's), not from draws.
    assert lookup(base, GaussianConditionals, "gram") is gram_only_cell
    assert lookup(base, GaussianConditionals, "variance") is linear
    assert lookup(base, GaussianConditionals, "features") is linear

    c = _conditionals()
    V = expected_variance(base, c, c, "independent")
    mu = c.means
    for i in range(c.n_samples):
        Ai = _row_covariance(c, i)
        for j in range(c.n_samples):
            Aj = _row_covariance(c, j)
            ref = np.trace(Ai @ Aj) + mu[j] @ Ai @ mu[j] + mu[i] @ Aj @ mu[i]
            np.testing.assert_allclose(V[i, j], ref, rtol=1e-10, atol=1e-12)
    Z = expected_features(base, c, IdentityMap(c.n_features))
    np.testing.assert_allclose(Z, c.means, rtol=0, atol=0)


def test_without_any_cell_every_quantity_comes_from_the_draws_cell():
    class Cubic(BaseKernel):
        def pairwise(self, A, B):
            return (A @ B.T) ** 3

    for quantity in ("gram", "variance", "features"):
        assert lookup(Cubic(), GaussianConditionals, quantity) is None
        assert lookup(Cubic(), SampleConditionals, quantity) is DRAWS_CELL
    with pytest.raises(ValueError, match="Unknown quantity"):
        lookup(Cubic(), GaussianConditionals, "mean")


def test_the_index_is_built_once_per_registry_change():
    first = _cells()
    assert _cells() is first  # not rebuilt on every lookup
    name = register_plugin(_GramOnlyPlugin(), name="test-gram-only-index")
    try:
        second = _cells()
        assert second is not first
        assert second.cells[ShiftedLinear, GaussianConditionals] is GRAM_ONLY
        assert _cells() is second
    finally:
        unregister_plugin(name)
    assert (ShiftedLinear, GaussianConditionals) not in _cells().cells
