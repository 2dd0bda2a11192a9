"""What the Notes of RBFMatching say about C on all-nominal tables (issue 46,
item 6): the SVM sees only C * nominal_weight, and the kernel's mean spread
1 - K between training rows is nominal_weight times the mean Gini impurity
of the nominal columns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from missingkernels import MissingKernelSVC
from missingkernels.kernels import MixedRBFKernel


def _nominal_table(rng, n=120, q=12):
    y = rng.integers(0, 3, n)
    cols = {}
    for v in range(q):
        # Sparse binary columns, one in three tied to the class.
        p = np.where(y == v % 3, 0.6, 0.08) if v % 3 == 0 else np.full(n, 0.15)
        cols[f"c{v}"] = np.where(rng.uniform(size=n) < p, "t", "f").astype(object)
    return pd.DataFrame(cols), y


def test_only_c_times_nominal_weight_matters_on_an_all_nominal_table(rng):
    X, y = _nominal_table(rng)
    y = y == 0  # binary: one decision value per row (no vote ties)
    # libsvm stops on an absolute tolerance of the gradient, which scales
    # with the kernel: solved to near machine precision, both are one problem.
    a = MissingKernelSVC(C=1.0, tol=1e-10, kernel_params={"nominal_weight": 0.9})
    b = MissingKernelSVC(C=2.0, tol=1e-10, kernel_params={"nominal_weight": 0.45})
    fa, fb = a.fit(X, y).decision_function(X), b.fit(X, y).decision_function(X)
    np.testing.assert_allclose(fa, fb, atol=1e-6)


def test_the_mean_spread_is_nominal_weight_times_the_gini_impurity(rng):
    X, _ = _nominal_table(rng)
    K = MixedRBFKernel(nominal_weight=0.9).fit(X)(X)
    n = len(K)
    spread = 1.0 - K[~np.eye(n, dtype=bool)].mean()
    # Two distinct rows differ on column v with probability G_v * n / (n - 1)
    # (sampling without replacement); G averages over the columns.
    gini = np.mean([1 - (X[c].value_counts(normalize=True) ** 2).sum() for c in X])
    np.testing.assert_allclose(spread, 0.9 * gini * n / (n - 1), rtol=1e-10)
