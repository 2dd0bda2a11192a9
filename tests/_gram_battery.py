"""A fixed battery of Grams, variances and feature maps (issue 50).

The RBF family's refactor (moving it into a subpackage) must leave every
Gram equal bit for bit. :func:`battery` computes, with the public API only
(so that it survives module moves), every quantity the kernels expose on
small fixed tables with missing values, along every path a Gram call can
take (closed forms over Gaussian, mixture, factor and draws conditionals,
the draws fallback, the mixed and categorical kernels, the compiled loops
on one and several threads). ``tests/make_gram_battery.py`` stores it,
computed by the pre-refactor commit, in ``tests/data/gram_battery.npz``;
``tests/test_gram_battery.py`` recomputes it and compares.

Imported by both (``tests/`` is on ``sys.path``, see ``_helpers.py``).
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

# Arrays with more entries are stored as a strided sample plus the SHA-256 of
# the whole array (the file stays small; the exact mode compares the digest).
MAX_STORED = 4_096
SAMPLE = 512
DIGEST_SUFFIX = "#sha256"
SAMPLE_SUFFIX = "#sample"

# The compiled loops' thread count is set per case (it would otherwise be the
# machine's cores); BLAS is pinned to one thread while the battery runs.
THREADS_ENV = "MISSINGKERNELS_NUM_THREADS"
DEFAULT_THREADS = 2


# -- tables ---------------------------------------------------------------------


def _correlated(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    A = rng.normal(size=(d, d))
    S = A @ A.T / d + 0.5 * np.eye(d)
    return rng.normal(size=(n, d)) @ np.linalg.cholesky(S).T + rng.normal(size=d)


def _mcar(rng: np.random.Generator, X: np.ndarray, rate: float) -> np.ndarray:
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    return X


def _every_pattern(X: np.ndarray) -> np.ndarray:
    """The rows of X, row p with the missing pattern of the bits of p (every
    pattern once when ``len(X) == 2**d``, the fully missing one included)."""
    X = X.copy()
    d = X.shape[1]
    bits = (np.arange(len(X))[:, None] >> np.arange(d)) & 1
    X[bits.astype(bool)] = np.nan
    return X


def _train_table(rng: np.random.Generator, n: int, d: int, rate: float) -> np.ndarray:
    """MCAR at ``rate``; row 0 fully missing, row 1 complete."""
    X = _mcar(rng, _correlated(rng, n, d), rate)
    X[0] = np.nan
    X[1] = _correlated(rng, 1, d)[0]
    return X


def tables() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(training rows, other rows) of each table."""
    rng = np.random.default_rng(20261128)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    # small: 40 x 5 at 30% MCAR; other rows: one per pattern (32).
    out["small"] = (
        _train_table(rng, 40, 5, 0.3),
        _every_pattern(_correlated(rng, 32, 5)),
    )
    # collinear: features 0 and 1 nearly equal, so the conditional covariance
    # of rows missing both is ill-conditioned (the Euclidean shared-feature
    # row loop instead of the Schur one; the pattern-pair loop, Mahalanobis).
    Z = _correlated(rng, 72, 5)
    Z[:, 1] = Z[:, 0] + 1e-4 * rng.normal(size=len(Z))
    Z = _mcar(rng, Z, 0.3)
    Z[:10, :2] = np.nan
    out["collinear"] = (Z[:40], Z[40:])
    # lowrank: rank 2 plus noise 1e-3: the factors stand far above the noise,
    # so the factor cell hands its pairs to the Gaussian cell.
    L = rng.normal(size=(72, 2)) @ rng.normal(size=(2, 6))
    L = _mcar(rng, L + 1e-3 * rng.normal(size=L.shape), 0.25)
    L[0] = np.nan
    out["lowrank"] = (L[:40], L[40:])
    # big_few: 1100 x 5 (at most 32 patterns: the pattern-pair loop; 9 row
    # tiles of the factor loop; a Gram of 1.2e6 entries: two chunks of the
    # threaded exp); big_many: 600 x 10 at 30% (hundreds of patterns: the
    # row-pair loops, several tiles and lanes per thread).
    out["big_few"] = (_train_table(rng, 1100, 5, 0.3), _train_table(rng, 150, 5, 0.3))
    out["big_many"] = (_train_table(rng, 600, 10, 0.3), _train_table(rng, 150, 10, 0.3))
    # mixed: 3 numeric columns, 2 nominal (codes 0..2 and 0..3).
    M = _correlated(rng, 72, 5)
    M[:, 3] = rng.integers(0, 3, size=len(M))
    M[:, 4] = (M[:, 0] > 0) + 2 * rng.integers(0, 2, size=len(M))
    M = _mcar(rng, M, 0.3)
    M[0] = np.nan
    out["mixed"] = (M[:40], M[40:])
    # nominal: 4 nominal columns (codes), for Belanche's kernels.
    C = rng.integers(0, 3, size=(72, 4)).astype(float)
    C = _mcar(rng, C, 0.3)
    C[0] = np.nan
    out["nominal"] = (C[:40], C[40:])
    # binary: 4 presence/absence columns, for Belanche's K2.
    out["binary"] = (np.minimum(C[:40], 1.0), np.minimum(C[40:], 1.0))
    return out


# -- quantities -------------------------------------------------------------------


@contextmanager
def threads(n: int) -> Iterator[None]:
    """The compiled loops on ``n`` threads (the public environment variable)."""
    old = os.environ.get(THREADS_ENV)
    os.environ[THREADS_ENV] = str(n)
    try:
        yield
    finally:
        if old is None:
            del os.environ[THREADS_ENV]
        else:
            os.environ[THREADS_ENV] = old


def _kernel_quantities(kernel: Any, X: np.ndarray, Y: np.ndarray) -> dict[str, Any]:
    """Train Gram, cross Gram, Gram of other rows, its diagonal under the other
    diagonal convention, and the variances where the kernel has them."""
    kernel.fit(X)
    out: dict[str, Any] = {
        "gram": kernel(X),
        "cross": kernel(Y, X),
        "other": kernel(Y),
        # k(X, X): independent rows also on the diagonal (off it: the Gram)
        "pairs_diag": np.diag(kernel(X, X)).copy(),
    }
    other = "same_draw" if kernel.diagonal == "independent" else "independent"
    flipped = type(kernel)(**{**kernel.get_params(deep=False), "diagonal": other})
    flipped.fit(X)
    out["diag_" + other] = np.diag(flipped(X)).copy()
    if hasattr(kernel, "variance"):
        try:
            out["variance"] = kernel.variance(X)
            out["variance_cross"] = kernel.variance(Y, X)
            out["variance_" + other] = np.diag(flipped.variance(X)).copy()
        except (NotImplementedError, ValueError, TypeError) as exc:
            out["variance_error"] = f"{type(exc).__name__}"
    for name in ("gamma_", "metric_covariance_"):
        value = getattr(kernel, name, None)
        if value is not None:
            out[name] = value
    density = kernel.density_
    for name in ("covariance_", "mean_"):
        value = getattr(density, name, None)
        if isinstance(value, np.ndarray):
            out["density_" + name] = value
    return out


def _features(X: np.ndarray, Y: np.ndarray, **params: Any) -> dict[str, Any]:
    from missingkernels import ExpectedKernelFeatures

    f = ExpectedKernelFeatures(random_state=0, **params).fit(X)
    return {"train": f.transform(X), "other": f.transform(Y)}


def _cases() -> list[tuple[str, str, int, Callable[[], Any], str]]:
    """(case name, table, threads, kernel or features factory, kind)."""
    from missingkernels import densities as D
    from missingkernels import get_kernel
    from missingkernels import kernels as K

    def mixture() -> Any:
        return D.GaussianMixtureDensity(n_components=2, random_state=0)

    def factor() -> Any:
        return D.FactorAnalysisDensity(n_factors=2)

    def ml() -> Any:
        return D.GaussianEMDensity(prior_rows=0)

    def factor_ml() -> Any:
        return D.FactorAnalysisDensity(n_factors=2, noise_prior=0.0)

    def mice() -> Any:
        return D.MICEDensity(n_draws=3, max_iter=5, random_state=0)

    def iterative() -> Any:
        return D.IterativeImputerDensity(n_draws=2, random_state=0)

    T = DEFAULT_THREADS
    cases: list[tuple[str, str, int, Callable[[], Any], str]] = []

    def add(name: str, table: str, factory: Callable[[], Any], n: int = T) -> None:
        cases.append((name, table, n, factory, "kernel"))

    def feat(name: str, table: str, **params: Any) -> None:
        cases.append((name, table, T, lambda: params, "features"))

    for cls, tag in ((K.GenRBFKernel, "genrbf"), (K.ExpectedRBFKernel, "erbf")):
        for metric in ("euclidean", "mahalanobis"):
            m = "" if metric == "euclidean" else "_maha"
            add(f"{tag}_em{m}", "small", lambda c=cls, mt=metric: c(metric=mt))
            add(
                f"{tag}_em{m}_g03",
                "small",
                lambda c=cls, mt=metric: c(gamma=0.3, metric=mt),
            )
            add(
                f"{tag}_mixture{m}",
                "small",
                lambda c=cls, mt=metric: c(metric=mt, density=mixture()),
            )
            add(
                f"{tag}_factor{m}",
                "small",
                lambda c=cls, mt=metric: c(metric=mt, density=factor()),
            )
            add(
                f"{tag}_lowrank_factor{m}",
                "lowrank",
                lambda c=cls, mt=metric: c(metric=mt, density=factor_ml()),
            )
            add(
                f"{tag}_mice{m}",
                "small",
                lambda c=cls, mt=metric: c(metric=mt, density=mice()),
            )
            add(
                f"{tag}_collinear{m}",
                "collinear",
                lambda c=cls, mt=metric: c(gamma=0.5, metric=mt, density=ml()),
            )
        add(f"{tag}_iterative", "small", lambda c=cls: c(density=iterative()))
        add(f"{tag}_em_missingness", "small", lambda c=cls: c(missingness_weight=0.5))
        # gamma C above the row loops' range: the pattern-pair loop.
        add(f"{tag}_em_wide_gamma", "small", lambda c=cls: c(gamma=3e5))
        for n in (1, 2, 3):
            add(f"{tag}_big_few_t{n}", "big_few", lambda c=cls: c(gamma=0.2), n)
            add(f"{tag}_big_many_t{n}", "big_many", lambda c=cls: c(gamma=0.1), n)
        add(
            f"{tag}_big_few_mixture",
            "big_few",
            lambda c=cls: c(gamma=0.2, density=mixture()),
        )
        add(f"{tag}_big_few_maha", "big_few", lambda c=cls: c(metric="mahalanobis"))
        add(f"{tag}_big_many_maha", "big_many", lambda c=cls: c(metric="mahalanobis"))
        for n in (1, 2):
            add(
                f"{tag}_big_few_factor_t{n}",
                "big_few",
                lambda c=cls: c(gamma=0.2, density=factor()),
                n,
            )
        add(
            f"{tag}_big_few_factor_maha",
            "big_few",
            lambda c=cls: c(metric="mahalanobis", density=factor()),
        )
    add("genrbf_by_name", "small", lambda: get_kernel("genrbf", gamma=0.3))
    # mixed tables: the RBF x matching over latent classes.
    for name, tag in (("mixed_rbf", "mixed_rbf"), ("expected_mixed_rbf", "emixed")):
        add(tag, "mixed", lambda n=name: get_kernel(n, nominal_features=[3, 4]))
        add(
            f"{tag}_2classes",
            "mixed",
            lambda n=name: get_kernel(
                n,
                nominal_features=[3, 4],
                density=D.LatentClassDensity(n_components=2, random_state=0),
            ),
        )
    add(
        "emixed_product",
        "mixed",
        lambda: K.ExpectedMixedRBFKernel(
            nominal_features=[3, 4], nominal_combination="product"
        ),
    )
    # the other families
    add("linear_em", "small", lambda: K.ExpectedLinearKernel())
    add("linear_mixture", "small", lambda: K.ExpectedLinearKernel(density=mixture()))
    add("linear_mice", "small", lambda: K.ExpectedLinearKernel(density=mice()))
    add("poly2_em", "small", lambda: K.ExpectedPolynomialKernel(degree=2))
    add(
        "poly2_mixture",
        "small",
        lambda: K.ExpectedPolynomialKernel(degree=2, density=mixture()),
    )
    # no closed form: the average over pairs of draws
    add(
        "poly3_em_draws",
        "small",
        lambda: K.ExpectedPolynomialKernel(degree=3, n_draws=20, random_state=0),
    )
    add(
        "poly2_mice_draws",
        "small",
        lambda: K.ExpectedPolynomialKernel(degree=2, density=mice()),
    )
    add("belanche_k1", "nominal", lambda: K.BelancheK1Kernel())
    add("belanche_k2", "binary", lambda: K.BelancheK2Kernel())
    # feature maps (ExpectedKernelFeatures, fixed random_state)
    feat("features_genrbf", "small", kernel="genrbf", n_components=32)
    feat(
        "features_erbf_maha",
        "small",
        kernel="expected_rbf",
        metric="mahalanobis",
        n_components=32,
    )
    feat(
        "features_genrbf_mixture",
        "small",
        kernel="genrbf",
        density="gaussian_mixture",
        density_params={"n_components": 2, "random_state": 0},
        n_components=32,
    )
    feat(
        "features_genrbf_factor",
        "small",
        kernel="genrbf",
        density="factor_analysis",
        density_params={"n_factors": 2},
        n_components=32,
    )
    feat(
        "features_genrbf_mice",
        "small",
        kernel="genrbf",
        density="mice",
        density_params={"n_draws": 3, "max_iter": 5, "random_state": 0},
        n_components=32,
    )
    feat(
        "features_nystroem",
        "small",
        kernel="genrbf",
        method="nystroem",
        n_components=16,
    )
    feat(
        "features_missingness",
        "small",
        kernel="genrbf",
        kernel_params={"missingness_weight": 0.5},
        n_components=16,
    )
    feat("features_linear", "small", kernel="expected_linear")
    feat("features_mixed", "mixed", nominal_features=[3, 4], n_components=16)
    feat("features_big", "big_few", kernel="genrbf", n_components=32)
    return cases


def battery(only: Callable[[str], bool] | None = None) -> dict[str, np.ndarray]:
    """Every case's quantities as float64 arrays, ``"<case>/<quantity>"``."""
    import warnings

    from threadpoolctl import threadpool_limits

    data = tables()
    out: dict[str, np.ndarray] = {}
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, table, n, factory, kind in _cases():
            if only is not None and not only(name):
                continue
            X, Y = data[table]
            with threads(n):
                if kind == "kernel":
                    values = _kernel_quantities(factory(), X, Y)
                else:
                    values = _features(X, Y, **factory())
            for key, value in values.items():
                if isinstance(value, str):
                    continue  # a quantity the kernel refuses (recorded by its absence)
                out[f"{name}/{key}"] = np.ascontiguousarray(value, dtype=np.float64)
    return out


def case_names() -> list[str]:
    return [c[0] for c in _cases()]


def case_tables() -> dict[str, str]:
    """The table of each case."""
    return {c[0]: c[1] for c in _cases()}


# What decides a quantity on another BLAS kernel (the tolerance mode):
# - "draws": random draws or choices that a rounding difference can flip
#   (normal draws through an SVD whose signs depend on the BLAS, MICE's
#   predictive mean matching, Nystroem's eigenvectors): not comparable
#   across BLAS kernels, only bit for bit on the reference's;
# - "fit": a density fit stopped by its tolerance on a slowly converging EM
#   (the factor density on big_few: 430 steps, still 2e-4 from its limit),
#   so another rounding stops it elsewhere: compared at a fit's tolerance;
# - "rounding": everything else, at the bound of the rounding analysis.
_DRAWS_CASES = ("mice", "iterative", "poly3_em_draws", "poly2_mice_draws")
_NYSTROEM_CASES = ("features_nystroem", "features_missingness", "features_mixed")


def comparison_class(key: str) -> str:
    case, quantity = key.split("/", 1)
    if any(tag in case for tag in _DRAWS_CASES) or case in _NYSTROEM_CASES:
        return "draws"
    if case.startswith("poly") and quantity.startswith("variance"):
        return "draws"  # the polynomial's variance: the draws fallback
    if "big_few_factor" in case:
        return "fit"
    return "rounding"


# -- storage ----------------------------------------------------------------------


def digest(a: np.ndarray) -> np.ndarray:
    """SHA-256 of the array's shape and bytes, as 32 uint8."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    h = hashlib.sha256(repr(a.shape).encode() + a.tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8).copy()


def sample(a: np.ndarray) -> np.ndarray:
    """A fixed strided sample of the flattened array (first and last entry in)."""
    flat = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
    idx = np.unique(np.linspace(0, flat.size - 1, SAMPLE).astype(np.int64))
    return flat[idx].copy()


def stored_form(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What the npz holds: small arrays whole; larger ones as a sample and a
    digest."""
    out: dict[str, np.ndarray] = {}
    for key, a in arrays.items():
        if a.size <= MAX_STORED:
            out[key] = a
        else:
            out[key + SAMPLE_SUFFIX] = sample(a)
            out[key + DIGEST_SUFFIX] = digest(a)
    return out


# -- fingerprint of the floating-point environment -----------------------------------


def fingerprint() -> dict[str, Any]:
    """What decides the bits: the BLAS libraries (kernel, version, threads
    under the battery's pin), the numeric packages, the CPU that numba
    compiles for, and OPENBLAS_CORETYPE."""
    import llvmlite
    import llvmlite.binding
    import numba
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info, threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        info = threadpool_info()
    blas = sorted(
        (
            {
                "internal_api": i.get("internal_api"),
                "prefix": i.get("prefix"),
                "version": i.get("version"),
                "architecture": i.get("architecture") or i.get("corename"),
                "threading_layer": i.get("threading_layer"),
                "num_threads": i.get("num_threads"),
            }
            for i in info
            if i.get("user_api") == "blas"
        ),
        key=lambda b: (str(b["prefix"]), str(b["version"])),
    )
    return {
        "blas": blas,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "numba_cpu": os.environ.get("NUMBA_CPU_NAME")
        or llvmlite.binding.get_host_cpu_name(),
        "machine": platform.machine(),
        "kernel_threads": sorted({c[2] for c in _cases()}),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
    }


def fingerprint_differences(recorded: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """The fields of the fingerprint that differ (empty: the same environment).

    OPENBLAS_CORETYPE counts through the architecture it selects (forcing
    this CPU's own kernel changes nothing)."""
    keys = sorted((set(recorded) | set(now)) - {"OPENBLAS_CORETYPE"})
    return [
        f"{k}: {recorded.get(k)!r} -> {now.get(k)!r}"
        for k in keys
        if recorded.get(k) != now.get(k)
    ]


# -- comparison ----------------------------------------------------------------


def compare_exact(ref: np.ndarray, new: np.ndarray) -> str | None:
    """None if equal bit for bit (NaN where NaN, same bytes), else why not."""
    if ref.dtype != new.dtype or ref.shape != new.shape:
        return f"dtype/shape {ref.dtype}{ref.shape} vs {new.dtype}{new.shape}"
    if not np.array_equal(ref, new, equal_nan=ref.dtype.kind == "f"):
        diff = ref != new
        if ref.dtype.kind == "f":
            diff &= ~(np.isnan(ref) & np.isnan(new))
        n = int(diff.sum())
        i = np.unravel_index(int(np.argmax(diff)), ref.shape)
        return f"{n} entries differ, first at {i}: {ref[i]!r} vs {new[i]!r}"
    if ref.tobytes() != new.tobytes():
        # equal as numbers, not as bits: -0.0 against 0.0, or NaN payloads
        return "equal values but different bytes (signed zeros or NaN payloads)"
    return None


def compare_tolerance(ref: np.ndarray, new: np.ndarray, rtol: float) -> str | None:
    """None if ``max |new - ref| <= rtol * max |ref|`` (normwise) and NaN
    where NaN, else why not."""
    if ref.shape != new.shape:
        return f"shape {ref.shape} vs {new.shape}"
    if not np.array_equal(np.isnan(ref), np.isnan(new)):
        return "NaN at different places"
    ok = ~np.isnan(ref)
    if not ok.any():
        return None
    err = np.abs(new[ok] - ref[ok]).max()
    scale = np.abs(ref[ok]).max()
    if err > rtol * scale:
        return f"error {err:.3g} > {rtol:.3g} x max|ref| {scale:.3g}"
    return None
