"""The expectation table: registry-wide contracts, the polynomial kernel, and
a base kernel and a representation added from outside through the public API.

References are written here, independently of the package's code paths: the
polynomial kernel per pair from its moments, and the Laplacian kernel by
quadrature over the one missing coordinate.
"""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np
import pytest
from _helpers import FixedGaussian, mcar, random_gaussian
from scipy import integrate
from sklearn.metrics.pairwise import polynomial_kernel

import missingkernels as mk
from missingkernels import (
    MissingKernelSVC,
    RegistryError,
    get_density,
    get_kernel,
    list_densities,
    list_kernels,
    register_plugin,
    unregister_plugin,
)
from missingkernels.conditionals import (
    BaseConditionals,
    GaussianConditionals,
    SampleConditionals,
)
from missingkernels.densities import BaseDensity
from missingkernels.hookspecs import hookimpl
from missingkernels.kernels import (
    BaseKernel,
    Expectation,
    Polynomial,
    find_expectation,
    make_expected_kernel,
    supported,
)
from missingkernels.kernels._expected_kernel import (
    _density_domain,
    _representation_class,
)
from missingkernels.utils.estimator_checks import check_density, check_kernel

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

# Densities of the core (the R plugin's are checked in tests/plugins/).
CORE_DENSITIES = (
    "categorical",
    "factor_analysis",
    "gaussian_em",
    "gaussian_mixture",
    "iterative",
    "latent_class",
    "mice",
)
FAST_PARAMS = {
    "factor_analysis": {"n_factors": 1},
    "gaussian_mixture": {"n_components": 2, "random_state": 0},
    "iterative": {"n_draws": 3, "random_state": 0},
    "mice": {"n_draws": 3, "random_state": 0},
}


def _pairs():
    for kernel in sorted(list_kernels()):
        for density in CORE_DENSITIES:
            base = get_kernel(kernel)._make_base_kernel()
            factory = list_densities()[density].factory
            cls = _representation_class(factory)
            if supported(base, cls, _density_domain(factory)) is not None:
                yield kernel, density


def _density(name):
    return get_density(name, **FAST_PARAMS.get(name, {}))


@pytest.mark.parametrize("kernel,density", list(_pairs()))
def test_every_registered_kernel_and_compatible_density(kernel, density):
    k = get_kernel(kernel, density=_density(density))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*did not converge.*")
        check_kernel(k)


def test_the_registry_wide_pairs_cover_every_kernel():
    kernels = {k for k, _ in _pairs()}
    assert kernels == set(list_kernels())
    assert ("genrbf", "categorical") not in set(_pairs())
    assert ("belanche_k1", "gaussian_em") not in set(_pairs())


@pytest.mark.parametrize("kernel", ["belanche_k1", "belanche_k2"])
@pytest.mark.parametrize("density", ["iterative", "mice"])
def test_matching_kernels_refuse_regression_draws(kernel, density):
    """Regression imputations are not category codes: refused at fit, with the
    densities that would work, instead of matching non-codes."""
    X = np.array([[0.0, 1.0], [1.0, np.nan], [1.0, 0.0], [0.0, 0.0], [np.nan, 1.0]])
    with pytest.raises(ValueError, match="of numeric values") as info:
        get_kernel(kernel, density=_density(density)).fit(X)
    assert "Compatible densities: 'categorical'" in str(info.value)


@pytest.mark.parametrize("density", CORE_DENSITIES)
def test_every_core_density_keeps_its_contract(density):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*did not converge.*")
        check_density(_density(density))


def test_check_kernel_catches_a_broken_kernel():
    class NotPSD(BaseKernel):
        def pairwise(self, A, B):
            return -np.abs(A[:, None, :] - B[None]).sum(-1)

    Broken = make_expected_kernel(NotPSD, "BrokenKernel")
    with pytest.raises(AssertionError, match="positive semi-definite"):
        check_kernel(Broken(n_draws=5))


def test_check_density_catches_a_density_that_refits():
    class Refitting(FixedGaussian):
        def _conditionals(self, X):
            self.mean_ = self.mean_ + 1.0
            return super()._conditionals(X)

    mean, S = random_gaussian(np.random.default_rng(0), 4)
    with pytest.raises(AssertionError, match="must not refit"):
        check_density(Refitting(mean, S))


# -- the expected polynomial kernel --------------------------------------------------


def _naive_polynomial(c: GaussianConditionals, d: GaussianConditionals, g, c0):
    """E (g X^T Y + c0)^2 per pair from the moments of X ~ N(a, A), Y ~ N(b, B)."""
    out = np.empty((c.n_samples, d.n_samples))
    for i in range(c.n_samples):
        a, A = c.means[i], c.row_covariance(i)
        for j in range(d.n_samples):
            b, B = d.means[j], d.row_covariance(j)
            second = (a @ b) ** 2 + a @ B @ a + b @ A @ b + np.trace(A @ B)
            out[i, j] = g * g * second + 2 * g * c0 * (a @ b) + c0 * c0
    return out


def _naive_polynomial_same_draw(c: GaussianConditionals, g, c0):
    """E (g ||X||^2 + c0)^2 with E||X||^4 = (m2)^2 + 2 tr(A^2) + 4 a^T A a."""
    out = np.empty(c.n_samples)
    for i in range(c.n_samples):
        a, A = c.means[i], c.row_covariance(i)
        m2 = a @ a + np.trace(A)
        m4 = m2**2 + 2 * np.trace(A @ A) + 4 * a @ A @ a
        out[i] = g * g * m4 + 2 * g * c0 * m2 + c0 * c0
    return out


@pytest.fixture
def gaussian_rows():
    rng = np.random.default_rng(7)
    mean, S = random_gaussian(rng, 4)
    X = rng.multivariate_normal(mean, S, size=25)
    return mean, S, mcar(rng, X, 0.35)


def _rel(actual, expected):
    return np.abs(actual - expected).max() / max(1.0, np.abs(expected).max())


@pytest.mark.parametrize("diagonal", ["same_draw", "independent"])
def test_polynomial_matches_the_naive_reference(gaussian_rows, diagonal):
    mean, S, X = gaussian_rows
    g, c0 = 0.7, 0.4
    k = get_kernel(
        "expected_polynomial",
        degree=2,
        gamma=g,
        coef0=c0,
        density=FixedGaussian(mean, S),
        diagonal=diagonal,
    ).fit(X)
    c = GaussianConditionals.from_moments(X, mean, S)
    naive = _naive_polynomial(c, c, g, c0)
    if diagonal == "same_draw":
        np.fill_diagonal(naive, _naive_polynomial_same_draw(c, g, c0))
    assert _rel(k(X), naive) < 1e-10
    Y = X[:7][::-1]
    cy = GaussianConditionals.from_moments(Y, mean, S)
    assert _rel(k(X, Y), _naive_polynomial(c, cy, g, c0)) < 1e-10


def test_polynomial_degree_one_is_the_affine_linear_kernel(gaussian_rows):
    mean, S, X = gaussian_rows
    density = FixedGaussian(mean, S)
    p = get_kernel("expected_polynomial", degree=1, gamma=2.0, coef0=0.5)
    p.set_params(density=density).fit(X)
    lin = get_kernel("expected_linear", density=density).fit(X)
    assert _rel(p(X), 2.0 * lin(X) + 0.5) < 1e-12
    assert _rel(p.variance(X), 4.0 * lin.variance(X)) < 1e-12


def test_polynomial_mixture_is_the_weighted_sum(gaussian_rows):
    _, _, X = gaussian_rows
    density = get_density("gaussian_mixture", n_components=2, random_state=0)
    k = get_kernel("expected_polynomial", gamma=0.5, coef0=1.0, density=density)
    k.fit(X)
    c = k.density_.conditionals(X)
    naive = np.zeros((len(X), len(X)))
    for a in range(2):
        for b in range(2):
            E = _naive_polynomial(c.component(a), c.component(b), 0.5, 1.0)
            naive += c.weights[:, a][:, None] * E * c.weights[:, b][None]
    off = ~np.eye(len(X), dtype=bool)
    assert _rel(k(X)[off], naive[off]) < 1e-10


def test_polynomial_by_monte_carlo_within_four_standard_errors(gaussian_rows):
    mean, S, X = gaussian_rows
    g, c0 = 0.5, 1.0
    k = get_kernel(
        "expected_polynomial", gamma=g, coef0=c0, density=FixedGaussian(mean, S)
    ).fit(X)
    rows = X[:6]
    K = k(rows, rows)
    c = GaussianConditionals.from_moments(rows, mean, S)
    rng = np.random.default_rng(11)
    m = 40000

    def draws(i):
        return rng.multivariate_normal(c.means[i], c.row_covariance(i), size=m)

    for i in range(len(rows)):
        Xi = draws(i)
        for j in range(len(rows)):
            values = (g * np.einsum("md,md->m", Xi, draws(j)) + c0) ** 2
            se = values.std() / np.sqrt(m)
            assert abs(K[i, j] - values.mean()) <= 4 * se + 1e-12


def test_polynomial_on_complete_rows_is_sklearns():
    X = np.random.default_rng(3).normal(size=(12, 3))
    for degree in (1, 2, 3):
        k = get_kernel("expected_polynomial", degree=degree, gamma=0.3, coef0=1.5)
        expected = polynomial_kernel(X, degree=degree, gamma=0.3, coef0=1.5)
        assert _rel(k.fit(X)(X), expected) < 1e-12


def test_polynomial_cells_cover_degrees_one_and_two_only():
    assert find_expectation(Polynomial(degree=2), GaussianConditionals) is not None
    assert find_expectation(Polynomial(degree=3), GaussianConditionals) is None
    assert supported(Polynomial(degree=3), GaussianConditionals) == "draws"


def test_polynomial_degree_three_averages_draws(gaussian_rows):
    mean, S, X = gaussian_rows
    k = get_kernel(
        "expected_polynomial",
        degree=3,
        gamma=0.5,
        coef0=1.0,
        density=FixedGaussian(mean, S),
        n_draws=4000,
        random_state=0,
    ).fit(X)
    rows = X[:3]
    K = k(rows, rows)
    c = GaussianConditionals.from_moments(rows, mean, S)
    rng = np.random.default_rng(5)
    m = 4000
    for i in range(3):
        for j in range(3):
            xi = rng.multivariate_normal(c.means[i], c.row_covariance(i), size=m)
            yj = rng.multivariate_normal(c.means[j], c.row_covariance(j), size=m)
            values = (0.5 * np.einsum("md,md->m", xi, yj) + 1.0) ** 3
            # Two independent estimates, each with about this standard error;
            # numpy's sampler adds rounding noise for complete (singular) rows.
            se = values.std() / np.sqrt(m)
            assert abs(K[i, j] - values.mean()) <= 6 * se + 1e-9 * abs(K[i, j])


# -- a base kernel from outside: the Laplacian ------------------------------------


class Laplacian(BaseKernel):
    """exp(-gamma ||x - y||_1), defined outside the package."""

    name = "Laplacian"
    domains = ("numeric", "nominal")

    def __init__(self, gamma=1.0):
        self.gamma = gamma

    def pairwise(self, A, B):
        return np.exp(-self.gamma * np.abs(A[:, None, :] - B[None]).sum(-1))


ExpectedLaplacianKernel = make_expected_kernel(
    Laplacian, "ExpectedLaplacianKernel", n_draws=200
)


class LaplacianPlugin:
    @hookimpl
    def missingkernels_register_kernels(self):
        return {"expected_laplacian": ExpectedLaplacianKernel}


@pytest.fixture
def laplacian_plugin():
    name = register_plugin(LaplacianPlugin(), name="test-laplacian")
    yield name
    unregister_plugin(name)


def test_laplacian_is_registered_and_has_sklearn_params(laplacian_plugin):
    assert list_kernels()["expected_laplacian"].plugin == "test-laplacian"
    k = get_kernel("expected_laplacian", gamma=0.3)
    assert k.get_params() == {
        "gamma": 0.3,
        "density": "gaussian_em",
        "diagonal": "same_draw",
        "n_draws": 200,
        "random_state": 0,
    }
    with pytest.raises(TypeError, match="unexpected keyword"):
        ExpectedLaplacianKernel(width=2)


# Every density but the mixed-type one (the plugin's kernel takes numeric or
# nominal values, not mixed rows: refused, as tested below).
@pytest.mark.parametrize("density", [d for d in CORE_DENSITIES if d != "latent_class"])
def test_laplacian_works_with_every_density(laplacian_plugin, density):
    k = get_kernel("expected_laplacian", gamma=0.4, n_draws=30)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*did not converge.*")
        check_kernel(k.set_params(density=_density(density)))


def test_laplacian_refuses_mixed_rows(laplacian_plugin):
    k = get_kernel("expected_laplacian", density="latent_class")
    with pytest.raises(ValueError, match="of mixed values"):
        k.fit(np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 0.5], [0.5, 0.0]]))


def test_laplacian_inside_the_svm(laplacian_plugin):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    Xm = mcar(rng, X, 0.2)
    svc = MissingKernelSVC(kernel="expected_laplacian", gamma=0.5)
    svc.set_params(kernel_params={"n_draws": 20}).fit(Xm, y)
    assert svc.kernel_.gamma == 0.5
    assert svc.score(Xm, y) > 0.8


def test_laplacian_agrees_with_quadrature():
    """One complete row against rows missing their second coordinate:
    E exp(-g |x1 - y1| - g |x2 - Y2|), Y2 ~ N(mu, s^2), by quadrature."""
    rng = np.random.default_rng(2)
    mean, S = random_gaussian(rng, 2)
    g = 0.8
    # (the last row: the second feature observed twice, so not dropped)
    X = np.array([[0.3, -0.2], [1.0, np.nan], [-0.5, np.nan], [0.1, 0.4]])
    m = 2000
    k = ExpectedLaplacianKernel(
        gamma=g, density=FixedGaussian(mean, S), n_draws=m, random_state=3
    ).fit(X)
    K = k(X[:1], X[1:])
    c = GaussianConditionals.from_moments(X, mean, S)
    for j in (1, 2):
        mu, sd = c.means[j, 1], np.sqrt(c.covariances[c.pattern_index[j]][0, 0])

        def integrand(t, j=j, mu=mu, sd=sd):
            density = np.exp(-0.5 * ((t - mu) / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
            return np.exp(-g * abs(X[0, 0] - X[j, 0]) - g * abs(X[0, 1] - t)) * density

        exact = integrate.quad(integrand, mu - 12 * sd, mu + 12 * sd, points=[X[0, 1]])
        values = np.exp(
            -g * abs(X[0, 0] - X[j, 0])
            - g * np.abs(X[0, 1] - rng.normal(mu, sd, size=m))
        )
        se = values.std() / np.sqrt(m)
        assert abs(K[0, j - 1] - exact[0]) <= 4 * se


def test_a_cell_from_a_plugin_replaces_the_draws(laplacian_plugin):
    calls = []

    def first_order(base, cx, cy, diagonal, normalised):
        calls.append(diagonal)
        other = cx if cy is None else cy
        return base.pairwise(cx.first_moments(), other.first_moments())

    cell = Expectation(Laplacian, GaussianConditionals, first_order)

    class CellPlugin:
        @hookimpl
        def missingkernels_register_expectations(self):
            return {"laplacian/gaussian": cell}

    X = mcar(
        np.random.default_rng(4), np.random.default_rng(4).normal(size=(9, 2)), 0.3
    )
    name = register_plugin(CellPlugin(), name="test-laplacian-cell")
    try:
        assert find_expectation(Laplacian(), GaussianConditionals) is cell
        assert supported(Laplacian(), GaussianConditionals) == "closed form"
        k = get_kernel("expected_laplacian", gamma=1.0).fit(X)
        c = k.density_.conditionals(X)
        expected = Laplacian(1.0).pairwise(c.means, c.means)
        np.testing.assert_allclose(k(X, X), expected, rtol=1e-12)
        assert calls

        # A second cell for the same pair is an error naming both.
        class TwinPlugin:
            @hookimpl
            def missingkernels_register_expectations(self):
                return {"laplacian/gaussian-twin": cell}

        register_plugin(TwinPlugin(), name="test-laplacian-cell-twin")
        try:
            with pytest.raises(RegistryError, match="Two expectation cells"):
                find_expectation(Laplacian(), GaussianConditionals)
        finally:
            unregister_plugin("test-laplacian-cell-twin")
    finally:
        unregister_plugin(name)
    assert supported(Laplacian(), GaussianConditionals) == "draws"


# -- a representation from outside: independent uniforms ---------------------------


class UniformConditionals(BaseConditionals):
    """Each missing entry uniform on its feature's training range, independently."""

    domain: ClassVar[str | None] = "numeric"

    def __init__(self, X, low, high):
        self.values = np.asarray(X, dtype=float)
        self.missing = np.isnan(self.values)
        self.low, self.high = low, high

    @property
    def n_samples(self):
        return self.values.shape[0]

    @property
    def n_features(self):
        return self.values.shape[1]

    def first_moments(self):
        return np.where(self.missing, 0.5 * (self.low + self.high), self.values)

    def second_moments(self, rows=None):
        rows = slice(None) if rows is None else rows
        m = self.first_moments()[rows]
        out = np.einsum("ni,nj->nij", m, m)
        var = (self.high - self.low) ** 2 / 12.0
        miss = self.missing[rows]
        for v in range(self.n_features):
            out[miss[:, v], v, v] += var[v]
        return out

    def sample(self, n_draws, random_state=None):
        rng = np.random.default_rng(random_state)
        u = rng.uniform(self.low, self.high, size=(n_draws, *self.values.shape))
        draws = np.where(self.missing, u, self.values)
        return SampleConditionals(samples=draws, missing=self.missing)


class UniformDensity(BaseDensity):
    """Independent uniforms on the observed range of each feature."""

    representation: ClassVar[str] = "test_uniform"

    def _fit(self, X):
        self.low_, self.high_ = np.nanmin(X, axis=0), np.nanmax(X, axis=0)

    def _conditionals(self, X):
        return UniformConditionals(X, self.low_, self.high_)


class UniformPlugin:
    @hookimpl
    def missingkernels_register_representations(self):
        return {"test_uniform": UniformConditionals}

    @hookimpl
    def missingkernels_register_densities(self):
        return {"test_uniform": UniformDensity}


def test_a_representation_from_a_plugin_works_with_every_numeric_kernel():
    name = register_plugin(UniformPlugin(), name="test-uniform")
    try:
        assert mk.list_representations()["test_uniform"].factory is UniformConditionals
        check_density(UniformDensity())
        for kernel in (
            "genrbf",
            "expected_rbf",
            "expected_linear",
            "expected_polynomial",
        ):
            check_kernel(get_kernel(kernel, density="test_uniform"))
        with pytest.raises(ValueError, match="'test_uniform'"):
            get_kernel("belanche_k1", density="test_uniform").fit(np.eye(3))
        # The expected linear kernel has a closed form over any moments: the
        # diagonal E||X||^2 adds the uniform's variance 1/12 per missing entry.
        X = np.array([[0.0, 1.0], [1.0, np.nan], [0.5, 0.0]])
        K = get_kernel("expected_linear", density="test_uniform").fit(X)(X)
        assert K[1, 1] == pytest.approx(1.0 + 0.5**2 + 1.0 / 12.0, rel=1e-12)
    finally:
        unregister_plugin(name)


def test_the_draws_average_is_blocked_and_exact(monkeypatch):
    """Many draws of few rows stay within the block; blocking changes no value."""
    from missingkernels.kernels import _expectation_table

    sizes = []

    class Counting(Laplacian):
        def pairwise(self, A, B):
            sizes.append(len(A) * len(B))
            return super().pairwise(A, B)

    rng = np.random.default_rng(8)
    sx = SampleConditionals(rng.normal(size=(30, 3, 2)), np.ones((3, 2), bool))
    sy = SampleConditionals(rng.normal(size=(20, 4, 2)), np.ones((4, 2), bool))
    base = Counting(0.7)
    naive = np.empty((3, 4))
    for i in range(3):
        for j in range(4):
            naive[i, j] = base.pairwise(sx.samples[:, i], sy.samples[:, j]).mean()
    for block in (1 << 24, 200, 1):
        sizes.clear()
        monkeypatch.setattr(_expectation_table, "_DRAWS_BLOCK", block)
        got = _expectation_table._pair_moments(base, sx, sy, 1)
        np.testing.assert_allclose(got, naive, rtol=1e-13)
        assert max(sizes) <= max(block, 20)
