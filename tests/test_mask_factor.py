"""The factor on the missingness masks of the RBF family (``missingness_weight``).

``K_u(x, y) = K(x, y) * ((1 - u) + u * share of features missing in both rows
or observed in both)``: checked against a per-pair loop over the masks, the
average over draws (the kernel averaged takes the masks), the estimators, and
bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

from missingkernels import ExpectedKernelFeatures, MissingKernelSVC
from missingkernels.densities import (
    FactorAnalysisDensity,
    GaussianMixtureDensity,
    IterativeImputerDensity,
)
from missingkernels.kernels import RBF, ExpectedRBFKernel, GenRBFKernel
from missingkernels.utils.estimator_checks import check_expectation, check_kernel

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics


def _rows(rng: np.random.Generator, n: int, d: int, rate: float) -> np.ndarray:
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    X[rng.random(X.shape) < rate] = np.nan
    empty = np.isnan(X).all(axis=1)
    X[empty, 0] = rng.normal(size=empty.sum())  # every row keeps an entry
    return X


def _factor_per_pair(A: np.ndarray, B: np.ndarray, u: float) -> np.ndarray:
    """Reference: one pair at a time, counting the features whose
    missingness agrees."""
    out = np.empty((len(A), len(B)))
    for i, a in enumerate(A):
        for j, b in enumerate(B):
            agree = sum(np.isnan(a[v]) == np.isnan(b[v]) for v in range(len(a)))
            out[i, j] = (1.0 - u) + u * agree / len(a)
    return out


_DENSITIES = {
    "gaussian_em": "gaussian_em",
    "mixture": GaussianMixtureDensity(2, random_state=0),
    "factor": FactorAnalysisDensity(n_factors=2),
    "draws": IterativeImputerDensity(n_draws=5, random_state=0),
}


@pytest.mark.parametrize("density", sorted(_DENSITIES))
@pytest.mark.parametrize("kernel_class", [GenRBFKernel, ExpectedRBFKernel])
@pytest.mark.parametrize("rate", [0.3, 0.9])
def test_gram_is_the_kernel_times_the_mask_factor(rng, kernel_class, rate, density):
    # Every representation's cell (Gaussian, mixture, factor-analytic,
    # draws). 90% missing: almost every row has its own mask, and the factor
    # varies most.
    X = _rows(rng, 40, 5, rate)
    Y = _rows(rng, 7, 5, rate)
    kw = dict(gamma=0.3, density=_DENSITIES[density])
    plain = kernel_class(**kw).fit(X)
    masked = kernel_class(missingness_weight=0.4, **kw).fit(X)
    np.testing.assert_allclose(
        masked(X), plain(X) * _factor_per_pair(X, X, 0.4), rtol=1e-12
    )
    np.testing.assert_allclose(
        masked(Y, X), plain(Y, X) * _factor_per_pair(Y, X, 0.4), rtol=1e-12
    )
    np.testing.assert_allclose(np.diag(masked(X)), np.diag(plain(X)), rtol=1e-12)
    V0, V = plain.variance(Y, X), masked.variance(Y, X)
    np.testing.assert_allclose(V, V0 * _factor_per_pair(Y, X, 0.4) ** 2, rtol=1e-12)


def test_weight_zero_is_the_kernel_without_the_factor(rng):
    X = _rows(rng, 30, 4, 0.4)
    np.testing.assert_array_equal(
        GenRBFKernel(gamma=0.5, missingness_weight=0.0).fit(X)(X),
        GenRBFKernel(gamma=0.5).fit(X)(X),
    )


def test_weight_one_on_complementary_masks_is_zero():
    # u = 1 and no feature whose missingness agrees: the factor is 0.
    X = np.array([[1.0, np.nan], [np.nan, 2.0], [0.5, 1.5], [0.0, 0.3]])
    K = GenRBFKernel(gamma=0.5, missingness_weight=1.0).fit(X)(X)
    assert K[0, 1] == 0.0
    assert K[0, 2] > 0.0  # one feature agrees: factor 1/2


@pytest.mark.parametrize(
    "cell", ["rbf/gaussian", "rbf/mixture", "rbf/samples", "any/samples"]
)
def test_each_cell_is_the_average_of_pairwise_with_the_masks(cell):
    # The closed forms against RBF.pairwise averaged over draws, the masks
    # passed to pairwise: the factor is applied where the kernel is.
    check_expectation(cell, RBF(gamma=0.4, missingness_weight=0.5), n_draws=800)


def test_pairwise_applies_the_factor_to_the_masks_given(rng):
    X = _rows(rng, 10, 3, 0.4)
    M = np.isnan(X)
    A = np.nan_to_num(X)
    dummy = GenRBFKernel(gamma=0.5).fit(X)
    _, train = dummy._conditionals(X)
    plain = RBF(gamma=0.5).fit(X, train)
    base = RBF(gamma=0.5, missingness_weight=0.3).fit(X, train)
    np.testing.assert_allclose(
        base.pairwise(A, A, M, M), plain.pairwise(A, A) * _factor_per_pair(X, X, 0.3)
    )
    np.testing.assert_allclose(base.pairwise(A, A), plain.pairwise(A, A))
    assert plain.missingness_factor(M, M) is None


@pytest.mark.parametrize("seed", range(3))
def test_gram_with_the_factor_is_psd(seed):
    rng = np.random.default_rng(seed)
    check_kernel(
        GenRBFKernel(gamma=0.5, missingness_weight=0.7), _rows(rng, 50, 4, 0.6)
    )


def test_svc_takes_the_weight_and_grid_search_tunes_it(rng):
    # Self-masking: large values of feature 0 go missing, and the class is
    # the sign of feature 0: the mask carries the label.
    n = 120
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    X[(X[:, 0] > 0.3) & (rng.random(n) < 0.8), 0] = np.nan
    svc = MissingKernelSVC(kernel="genrbf", kernel_params={"missingness_weight": 0.5})
    svc.fit(X, y)
    assert svc.kernel_.missingness_weight == 0.5
    grid = GridSearchCV(
        MissingKernelSVC(kernel="genrbf"),
        {"kernel_params__missingness_weight": [0.0, 0.5]},
        cv=3,
    ).fit(X, y)
    assert grid.best_params_["kernel_params__missingness_weight"] in (0.0, 0.5)


def test_features_use_nystroem_with_the_factor(rng):
    X = _rows(rng, 60, 3, 0.3)
    y = (np.nan_to_num(X[:, 1]) > 0).astype(int)
    kw = dict(kernel="genrbf", kernel_params={"missingness_weight": 0.5})
    feats = ExpectedKernelFeatures(n_components=20, random_state=0, **kw).fit(X, y)
    assert feats.method_ == "nystroem"
    with pytest.raises(
        ValueError, match=r"missingness_weight=0\.5 > 0 has no.*kernel\)\.$"
    ):
        ExpectedKernelFeatures(method="expected", n_components=20, **kw).fit(X, y)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "half"])
def test_bad_weight_is_explained(rng, bad):
    X = _rows(rng, 20, 3, 0.3)
    with pytest.raises(ValueError, match="missingness_weight"):
        GenRBFKernel(missingness_weight=bad).fit(X)
