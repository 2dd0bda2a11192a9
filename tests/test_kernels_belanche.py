"""Belanche et al. K1 (simple matching) and K2 (presence) on hand-computed tables."""

from __future__ import annotations

from fractions import Fraction as Fr
from typing import ClassVar

import numpy as np
import pytest
from _helpers import assert_psd

from missingkernels import get_density, get_kernel
from missingkernels.conditionals import SampleConditionals
from missingkernels.densities import BaseDensity

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

nan = np.nan

# Frequencies among observed entries:
#   feature 0: 1, 1, 0, 1     -> P(1) = 3/4, P(0) = 1/4
#   feature 1: 0, 1, 1, 1     -> P(1) = 3/4, P(0) = 1/4
#   feature 2: 1, 0, 0, 0     -> P(1) = 1/4, P(0) = 3/4
BINARY = np.array(
    [
        [1, 0, 1],
        [1, nan, 0],
        [0, 1, nan],
        [nan, 1, 0],
        [1, 1, 0],
    ]
)


def as_float(table):
    return np.array([[float(v) for v in row] for row in table])


def test_k1_binary_by_hand():
    K = get_kernel("belanche_k1").fit(BINARY)(BINARY)
    third = Fr(1, 3)
    expected = {
        # row0 [1,0,1] vs row1 [1,?,0]: 1 + P(0) + 0
        (0, 1): third * (1 + Fr(1, 4) + 0),
        # row1 [1,?,0] vs row2 [0,1,?]: 0 + P(1) + P(0)
        (1, 2): third * (0 + Fr(3, 4) + Fr(3, 4)),
        # row2 [0,1,?] vs row3 [?,1,0]: P(0) + 1 + P(0)
        (2, 3): third * (Fr(1, 4) + 1 + Fr(3, 4)),
        # row3 with an independent copy: sum P^2 + 1 + 1
        (3, 3): third * (Fr(9, 16) + Fr(1, 16) + 2),
        # row1 with an independent copy: 1 + (9/16 + 1/16) + 1
        (1, 1): third * (1 + Fr(10, 16) + 1),
        (0, 0): Fr(1),
        (0, 4): third * (1 + 0 + 0),
    }
    for (i, j), value in expected.items():
        assert K[i, j] == pytest.approx(float(value), rel=1e-14, abs=1e-15), (i, j)
        assert K[j, i] == pytest.approx(float(value), rel=1e-14, abs=1e-15), (j, i)
    assert_psd(K)


def test_k2_binary_by_hand():
    k = get_kernel("belanche_k2").fit(BINARY)
    K = k(BINARY)
    third = Fr(1, 3)
    expected = {
        (0, 1): third * (1 + 0 + 0),  # present in both only in feature 0
        (1, 2): third * (0 + Fr(3, 4) * 1 + 0),  # missing x present: P(1)
        (2, 3): third * (0 * Fr(3, 4) + 1 + 0),
        (3, 3): third * (Fr(9, 16) + 1 + 0),  # independent copies: P(1)^2
        (2, 2): third * (0 + 1 + Fr(1, 16)),
        (4, 4): third * 2,
    }
    for (i, j), value in expected.items():
        assert K[i, j] == pytest.approx(float(value), rel=1e-14, abs=1e-15), (i, j)
    # The same draw twice: E[x_v^2] = P(1) for a missing entry.
    k.set_params(diagonal="same_draw")
    Ks = k(BINARY)
    assert Ks[3, 3] == pytest.approx(float(third * (Fr(3, 4) + 1 + 0)), rel=1e-14)
    assert Ks[2, 2] == pytest.approx(float(third * (0 + 1 + Fr(1, 4))), rel=1e-14)
    off = ~np.eye(5, dtype=bool)
    assert np.array_equal(Ks[off], K[off])
    assert_psd(K)


def test_k1_categorical_with_three_values():
    # Feature 0 takes 0/1/2: observed 0, 2, 2, 1, 2 -> P = (1/5, 1/5, 3/5).
    X = np.array(
        [
            [0, 1],
            [2, nan],
            [nan, 0],
            [2, 1],
            [nan, 1],
            [1, 0],
            [2, 1],
        ]
    )
    # Feature 1: observed 1, 0, 1, 1, 0, 1 -> P(0) = 2/6, P(1) = 4/6.
    k = get_kernel("belanche_k1").fit(X)
    K = k(X)
    half = Fr(1, 2)
    expected = {
        (0, 1): half * (0 + Fr(4, 6)),  # 0 vs 2; 1 vs missing: P(1)
        (1, 2): half * (Fr(3, 5) + Fr(2, 6)),  # 2 vs missing: P(2); missing vs 0
        # both missing in feature 0: sum_c P(c)^2; 0 vs 1 in feature 1
        (2, 4): half * (Fr(1, 25) + Fr(1, 25) + Fr(9, 25) + 0),
        (1, 1): half * (1 + Fr(4, 36) + Fr(16, 36)),
        (0, 5): half * (0 + 0),
        (3, 6): Fr(1),
    }
    for (i, j), value in expected.items():
        assert K[i, j] == pytest.approx(float(value), rel=1e-14, abs=1e-15), (i, j)
    k.set_params(diagonal="same_draw")
    assert np.array_equal(np.diag(k(X)), np.ones(len(X)))
    assert_psd(K)
    # A value never seen in training (kept by handle_unknown="ignore").
    density = get_density("categorical", handle_unknown="ignore")
    k = get_kernel("belanche_k1", density=density).fit(X)
    new = np.array([[5, 1], [5, nan]])
    Kn = k(new, X)
    # 5 matches nothing in X; feature 1: 1 vs X rows.
    assert Kn[0, 0] == pytest.approx(float(half * (0 + 1)))
    assert Kn[1, 1] == pytest.approx(float(half * (0 + Fr(16, 36) + Fr(4, 36))))
    assert k(new)[0, 1] == pytest.approx(float(half * (1 + Fr(4, 6))))


def test_k2_rejects_non_binary_values():
    X = np.array([[0, 1], [2, 0], [1, nan]])
    with pytest.raises(ValueError, match="binary features coded 0"):
        get_kernel("belanche_k2").fit(X)(X)


class FixedCategoricalDraws(BaseDensity):
    """Three fixed completions of binary rows (test-local)."""

    representation: ClassVar[str] = "samples"

    def _fit(self, X):
        pass

    def _conditionals(self, X):
        missing = np.isnan(X)
        draws = [np.where(missing, fill, X) for fill in (0.0, 1.0, 1.0)]
        return SampleConditionals(samples=np.stack(draws), missing=missing)


@pytest.mark.parametrize("name", ["belanche_k1", "belanche_k2"])
def test_belanche_over_draws_is_the_average_over_draw_pairs(name):
    k = get_kernel(name, density=FixedCategoricalDraws()).fit(BINARY)
    c = k.density_.conditionals(BINARY)
    n = len(BINARY)
    expected = np.zeros((n, n))
    for xa in c.samples:
        for yb in c.samples:
            for i in range(n):
                for j in range(n):
                    if name == "belanche_k1":
                        expected[i, j] += np.mean(xa[i] == yb[j])
                    else:
                        expected[i, j] += np.mean(xa[i] * yb[j])
    expected /= c.n_draws**2
    assert np.allclose(k(BINARY), expected, rtol=1e-14, atol=1e-15)
    assert_psd(k(BINARY))


def test_belanche_has_no_variance():
    k = get_kernel("belanche_k1").fit(BINARY)
    assert not hasattr(k, "variance")
    assert hasattr(get_kernel("genrbf"), "variance")
