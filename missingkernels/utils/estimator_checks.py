"""Contract checks for expected kernels and density estimators.

Run them on your own kernel presets and densities (a plugin's tests, say), as
scikit-learn's ``check_estimator`` is run on estimators:

- :func:`check_kernel`: the Gram matrices of a kernel are float64, finite,
  symmetric and positive semi-definite, ``k(X)`` equals ``k(X, X)`` off the
  diagonal, and on complete rows the kernel is its base kernel (normalised
  when the preset is).
- :func:`check_density`: ``conditionals`` returns the representation the
  density declares, leaves observed entries untouched, and does not refit.
- :func:`check_expectation`: a cell of the expectation table (closed-form
  Gram, variance, features) agrees with the average of its base kernel over
  draws of the rows, within four standard errors.

Each check raises AssertionError with what failed and returns None when the
contract holds.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any, cast

import numpy as np
from sklearn.base import clone

from ..conditionals import BaseConditionals
from ._expectation_checks import check_expectation

__all__ = ["check_density", "check_expectation", "check_kernel"]


def _example_rows(domain: str, random_state: int) -> np.ndarray:
    """Rows with about 25% of entries missing at random, every column observed."""
    rng = np.random.default_rng(random_state)
    n, d = 40, 4
    if domain == "nominal":
        # 0/1 codes: valid for every nominal kernel (presence needs binary).
        X = rng.integers(0, 2, size=(n, d)).astype(np.float64)
    else:
        L = np.tril(rng.normal(size=(d, d))) + 2.0 * np.eye(d)
        X = rng.normal(size=(n, d)) @ L.T + rng.normal(size=d)
    mask = rng.random(X.shape) < 0.25
    mask[:8] = False  # complete rows, for the reduction to the base kernel
    mask[8] = True  # one fully missing row
    X[mask] = np.nan
    return X


def _domain_of(kernel: Any) -> str:
    """The domain of the default rows: the density's, if the kernel takes it."""
    from .._registry import list_densities
    from ..kernels._expected_kernel import _representation_class

    base = getattr(kernel, "_base_kernel_class", None)
    domains = getattr(base, "domains", ("numeric",))
    density = getattr(kernel, "density", None)
    if isinstance(density, str) and density in list_densities():
        density = list_densities()[density].factory
    declared = _representation_class(density)
    domain = getattr(declared, "domain", None)
    if domain in domains:
        return str(domain)
    return "numeric" if "numeric" in domains else domains[0]


def check_kernel(kernel: Any, X: Any = None, *, random_state: int = 0) -> None:
    """Check the contract of an expected-kernel preset.

    Parameters
    ----------
    kernel : BaseExpectedKernel
        Unfitted (it is cloned), with the density to check set.
    X : array-like of shape (n_samples, n_features), optional
        Rows with NaN where missing; the first ``n_complete`` complete rows
        are used for the reduction to the base kernel. Default: 40 rows of
        the kernel's domain (numeric, or 0/1 codes) with 25% of
        the entries missing, eight complete rows and one fully missing row.
    random_state : int, default=0
        Seeds the default rows.

    Raises
    ------
    AssertionError
        Naming the property that fails.

    Examples
    --------
    >>> from missingkernels import get_kernel
    >>> from missingkernels.utils.estimator_checks import check_kernel
    >>> check_kernel(get_kernel("genrbf", gamma=0.5))
    """
    name = f"{type(kernel).__name__}(density={getattr(kernel, 'density', None)!r})"
    if X is None:
        X = _example_rows(_domain_of(kernel), random_state)
    X = np.asarray(X, dtype=np.float64)
    k = clone(kernel).fit(X)
    K = k(X)
    C = k(X, X)
    n = len(X)
    for label, M in (("k(X)", K), ("k(X, X)", C)):
        assert M.dtype == np.float64, f"{name}: {label} is {M.dtype}, not float64."
        assert M.shape == (n, n), f"{name}: {label} has shape {M.shape}."
        assert np.all(np.isfinite(M)), f"{name}: {label} has NaN or inf entries."
        asym = np.abs(M - M.T).max()
        scale = max(1.0, np.abs(M).max())
        assert asym <= 1e-10 * scale, f"{name}: {label} is not symmetric ({asym})."
        low = np.linalg.eigvalsh(0.5 * (M + M.T)).min()
        assert low >= -1e-10 * n * scale, (
            f"{name}: {label} is not positive semi-definite (smallest "
            f"eigenvalue {low})."
        )
    off = ~np.eye(n, dtype=bool)
    gap = np.abs(K[off] - C[off]).max()
    assert gap <= 1e-10 * max(1.0, np.abs(K).max()), (
        f"{name}: k(X) and k(X, X) differ off the diagonal by {gap}."
    )
    complete = np.flatnonzero(~np.isnan(X).any(axis=1))
    if complete.size >= 2:
        Xc = X[complete]
        base = k.base_kernel_
        expected = np.asarray(base.pairwise(Xc, Xc), dtype=np.float64)
        if getattr(k, "_normalised", False):
            d = np.asarray(base.diagonal(Xc), dtype=np.float64)
            expected = expected / np.sqrt(np.outer(d, d))
        got = k(Xc, Xc)
        err = np.abs(got - expected).max()
        assert err <= 1e-9 * max(1.0, np.abs(expected).max()), (
            f"{name}: on complete rows the kernel differs from its base kernel "
            f"by {err}."
        )


def _fitted_state(density: Any) -> bytes:
    state = {k: v for k, v in vars(density).items() if k.endswith("_")}
    return pickle.dumps(state)


def check_density(density: Any, X: Any = None, *, random_state: int = 0) -> None:
    """Check the contract of a density estimator.

    Parameters
    ----------
    density : density estimator
        Unfitted (it is cloned).
    X : array-like of shape (n_samples, n_features), optional
        Training rows with NaN where missing. Default: 40 rows (numeric, or
        category codes for a density declaring ``"categorical"``) with 25% of
        the entries missing.
    random_state : int, default=0
        Seeds the default rows and the new rows.

    Raises
    ------
    AssertionError
        Naming the property that fails.

    Examples
    --------
    >>> from missingkernels import get_density
    >>> from missingkernels.utils.estimator_checks import check_density
    >>> check_density(get_density("gaussian_em"))
    """
    from .._registry import list_representations

    name = type(density).__name__
    tag = getattr(density, "representation", None)
    declared = tag if isinstance(tag, type) else None
    if isinstance(tag, str):
        entry = list_representations().get(tag)
        assert entry is not None, (
            f"{name} declares the representation {tag!r}, which is not "
            f"registered (known: {sorted(list_representations())})."
        )
        declared = cast(type, entry.factory)
    assert declared is not None, (
        f"{name} must declare its representation (class attribute "
        "'representation': a registered tag or a conditionals class)."
    )
    if X is None:
        nominal = getattr(declared, "domain", None) == "nominal"
        X = _example_rows("nominal" if nominal else "numeric", random_state)
    X = np.asarray(X, dtype=np.float64)
    fitted = clone(density).fit(X)
    before = _fitted_state(fitted)
    snapshot = copy.deepcopy(X)
    new = X[::-1].copy()
    for label, rows in (("training rows", X), ("new rows", new)):
        c = fitted.conditionals(rows)
        assert isinstance(c, BaseConditionals) and isinstance(c, declared), (
            f"{name}.conditionals returned {type(c).__name__} for {label}; it "
            f"declares {declared.__name__}."
        )
        assert c.n_samples == len(rows) and c.n_features == rows.shape[1], (
            f"{name}.conditionals describes {c.n_samples} x {c.n_features} "
            f"rows for {label} of shape {rows.shape}."
        )
        missing = np.isnan(rows)
        assert np.array_equal(np.asarray(c.missing, bool), missing), (
            f"{name}.conditionals: its missing mask differs from NaN in X."
        )
        means = np.asarray(c.first_moments(), dtype=np.float64)
        # Averages over components or draws may round the last bit.
        obs = rows[~missing]
        err = np.abs(means[~missing] - obs)
        assert np.all(err <= 1e-12 * np.maximum(1.0, np.abs(obs))), (
            f"{name}.conditionals changed observed entries of {label}."
        )
        assert np.all(np.isfinite(means)), (
            f"{name}.conditionals: the first moments of {label} are not finite."
        )
        draws = c.sample(3, random_state).samples
        assert np.all(draws[:, ~missing] == rows[~missing]), (
            f"{name}.conditionals: draws change observed entries of {label}."
        )
    assert np.array_equal(snapshot, X, equal_nan=True), (
        f"{name}: fit or conditionals modified the input array."
    )
    assert _fitted_state(fitted) == before, (
        f"{name}.conditionals changed fitted attributes: it must not refit."
    )
