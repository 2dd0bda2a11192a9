"""Each closed form of the expectation table against the average over draws
(:func:`check_expectation`, re-exported by :mod:`.estimator_checks`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special

__all__ = ["check_expectation"]


# -- example inputs of the built-in classes -------------------------------------------


def _spectrum_covariance(
    rng: np.random.Generator, d: int, condition_number: float
) -> np.ndarray:
    """``Q diag(s) Q^T`` with ``s`` log-spaced from 1 down to ``1/cond``."""
    Q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    s = np.geomspace(1.0, 1.0 / condition_number, d)
    S = (Q * s) @ Q.T
    return 0.5 * (S + S.T)


def _numeric_rows(
    rng: np.random.Generator, n: int, S: np.ndarray, rate: float = 0.35
) -> np.ndarray:
    """Rows of ``N(0, S)`` with entries missing at ``rate``; two complete
    rows and one with a single observed entry."""
    X = rng.multivariate_normal(np.zeros(len(S)), S, size=n, method="cholesky")
    mask = rng.random(X.shape) < rate
    mask[:2] = False
    mask[2, 1:] = True
    X[mask] = np.nan
    return X


def _example_conditionals(
    cls: type, n: int, condition_number: float, seed: int, nominal: bool = False
) -> tuple[Any, Any, np.ndarray]:
    """``(conditionals, density or None, rows)`` of a built-in class (0/1
    codes for a nominal base kernel)."""
    from .. import get_density
    from ..conditionals import (
        BaseConditionals,
        CategoricalConditionals,
        FactorConditionals,
        GaussianConditionals,
        MixedConditionals,
        MixtureConditionals,
        SampleConditionals,
    )

    rng = np.random.default_rng(seed)
    d = 4
    S = _spectrum_covariance(rng, d, condition_number)
    if cls in (GaussianConditionals, BaseConditionals):
        X = _numeric_rows(rng, n, S)
        return GaussianConditionals.from_moments(X, np.zeros(d), S), None, X
    if cls is FactorConditionals:
        # W W^T + Psi with q = 2 < d: the noise sets the condition number.
        W = rng.normal(size=(d, 2))
        psi = np.full(d, np.linalg.eigvalsh(W @ W.T)[-1] / condition_number)
        X = _numeric_rows(rng, n, W @ W.T + np.diag(psi))
        return FactorConditionals.from_factors(X, np.zeros(d), W, psi), None, X
    if cls is SampleConditionals and nominal:
        c, density, X = _example_conditionals(
            CategoricalConditionals, n, condition_number, seed
        )
        return c.sample(5, random_state=seed), density, X
    if cls is SampleConditionals:
        X = _numeric_rows(rng, n, S)
        g = GaussianConditionals.from_moments(X, np.zeros(d), S)
        return g.sample(5, random_state=seed), None, X
    if cls is MixtureConditionals:
        train = _numeric_rows(rng, 200, S, rate=0.2)
        train[:100] += 3.0 * np.sqrt(np.diag(S))  # two clusters
        density = get_density("gaussian_mixture", n_components=2, random_state=0)
        density.fit(train)
        X = train[rng.permutation(200)[:n]]
        return density.conditionals(X), density, X
    if cls is CategoricalConditionals:
        codes = rng.integers(0, 2, size=(200, d)).astype(np.float64)
        codes[:, 1] = np.where(rng.random(200) < 0.8, codes[:, 0], codes[:, 1])
        codes[rng.random(codes.shape) < 0.3] = np.nan
        codes[:2] = rng.integers(0, 2, size=(2, d))
        density = get_density("categorical").fit(codes)
        X = codes[:n]
        return density.conditionals(X), density, X
    if cls is MixedConditionals:
        # Two numeric columns (correlated as S[:2, :2]) and two nominal ones
        # (codes 0 to 2) that depend on the first numeric column.
        T = np.empty((200, 4))
        T[:, :2] = rng.multivariate_normal(np.zeros(2), S[:2, :2], size=200)
        for v in (2, 3):
            T[:, v] = (T[:, 0] > 0) + (rng.random(200) < 0.3)
        mask = rng.random(T.shape) < 0.25
        mask[:2] = False
        T[mask] = np.nan
        density = get_density("latent_class", n_components=2, random_state=0)
        density.set_params(nominal_features=[2, 3]).fit(T)
        X = T[:n]
        return density.conditionals(X), density, X
    raise ValueError(
        f"check_expectation has no example rows for {cls.__name__}: pass "
        "`conditionals` (an instance that can sample) and a fitted `base`."
    )


def _example_base(cls: type, X: np.ndarray, c: Any, density: Any) -> Any:
    """A fitted instance of a built-in base kernel class."""
    from ..kernels import (
        RBF,
        BaseKernel,
        Linear,
        Polynomial,
        Presence,
        RBFMatching,
        SimpleMatching,
    )

    if cls in (RBF, BaseKernel):
        base: Any = RBF(gamma=0.4)
    elif cls is Linear:
        base = Linear()
    elif cls is Polynomial:
        base = Polynomial(degree=2, gamma=0.5, coef0=1.0)
    elif cls in (SimpleMatching, Presence):
        base = cls()
    elif cls is RBFMatching:
        base = RBFMatching(gamma=0.4)
    else:
        raise ValueError(
            f"check_expectation has no example of the base kernel {cls.__name__}: "
            "pass a fitted `base`."
        )
    return base.fit(X, c, density)


# -- the check -------------------------------------------------------------------------


def _compare(
    what: str,
    closed: np.ndarray,
    draws: np.ndarray,
    n_sigma: float,
    rtol: float = 0.0,
) -> None:
    """``closed`` against the mean over axis 0 of ``draws``, within
    ``n_sigma`` standard errors, plus ``rtol`` of each entry and ``3 / m`` of
    the largest: outcomes of probability below ``3 / m`` may be missing from
    ``m`` draws (the rule of three), and the standard error cannot see them
    (a nominal entry nearly certain, say)."""
    m = draws.shape[0]
    n_sigma_family = n_sigma
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(m)
    # n_sigma is the family's bound: each of the N entries gets the z whose
    # two-sided tail is 1/N of n_sigma's (Bonferroni), so that a correct cell
    # fails as rarely with a thousand entries as with one.
    tail = special.ndtr(-n_sigma) / max(mean.size, 1)
    n_sigma = max(n_sigma, float(-special.ndtri(tail)))
    closed = np.asarray(closed, dtype=np.float64)
    assert closed.shape == mean.shape, (
        f"{what}: the closed form has shape {closed.shape}, the draws {mean.shape}."
    )
    assert np.all(np.isfinite(closed)), f"{what}: the closed form is not finite."
    scale = float(np.abs(mean).max())
    slack = n_sigma * se + rtol * np.abs(closed) + 3.0 / m * scale
    z = np.abs(closed - mean) - slack
    worst = np.unravel_index(int(np.argmax(z)), z.shape)
    assert z[worst] <= 0.0, (
        f"{what}: the closed form is {closed[worst]:.6g} at {worst}, the average "
        f"of {m} draws {mean[worst]:.6g} with standard error {se[worst]:.3g} "
        f"(allowed: {n_sigma:.3g} standard errors, {n_sigma_family} for the "
        f"family of {mean.size} entries)."
    )


def check_expectation(
    cell: Any,
    base: Any = None,
    conditionals: Any = None,
    other: Any = None,
    *,
    n_draws: int = 2000,
    n_sigma: float = 4.0,
    condition_number: float = 10.0,
    random_state: int = 0,
) -> None:
    """Check a cell of the expectation table against the average over draws.

    The closed-form Gram of the cell (training Gram with independent copies
    on its diagonal, and the cross Gram), its variance and its expected
    features, where the cell has them, are compared entry by entry with the
    average of the base kernel (its square, its feature map) over
    ``n_draws`` independent draws of the rows, within ``n_sigma`` standard
    errors of that average for the family of entries of each comparison
    (Bonferroni: a table of ``N`` entries allows each the number of standard
    errors whose two-sided tail is ``1/N`` of ``n_sigma``'s), plus
    ``3 / n_draws`` of the largest entry for outcomes too rare to be drawn
    (and 10% more for the variance, whose average
    of squares converges slowly for heavy-tailed kernels), as analytic
    expectations are checked against quadrature in GPflow's tests. Cells
    that normalise themselves are also checked against their own
    unnormalised Gram divided by the self-similarities.

    Parameters
    ----------
    cell : Expectation or str
        The cell, or its name in :func:`~missingkernels.list_expectations`.
    base : BaseKernel, optional
        The fitted base kernel. Default: an example instance of the cell's
        base kernel class (built-in classes only), fitted on ``conditionals``.
    conditionals : BaseConditionals, optional
        Rows of the cell's representation, with ``sample``. Default: example
        rows of a built-in class (35% of the entries missing at random).
    other : BaseConditionals, optional
        The second argument of the cross Gram. Default: the example rows of
        another seed (``conditionals`` itself when it is given).
    n_draws : int, default=2000
    n_sigma : float, default=4.0
    condition_number : float, default=10.0
        Of the Gaussian covariance behind the default example rows.
    random_state : int, default=0
        Seeds the example rows and the draws.

    Raises
    ------
    AssertionError
        Naming the quantity, the entry and the size of the disagreement.
    ValueError
        If an input is missing and no example exists for its class.

    References
    ----------
    .. [1] A. G. de G. Matthews et al., "GPflow: A Gaussian process library
       using TensorFlow", JMLR 18(40), 2017 (kernel expectations tested
       against Gauss-Hermite quadrature).

    Examples
    --------
    >>> from missingkernels.utils.estimator_checks import check_expectation
    >>> check_expectation("rbf/gaussian", n_draws=500)
    """
    cell, name = _resolved_cell(cell)
    if not (isinstance(n_draws, int | np.integer) and n_draws >= 10):
        raise ValueError(f"n_draws must be an integer >= 10, got {n_draws!r}.")
    if not n_sigma > 0:
        raise ValueError(f"n_sigma must be positive, got {n_sigma!r}.")
    base, cx, cy = _fitted_inputs(
        cell, base, conditionals, other, condition_number, random_state
    )
    if cell.applies is not None and not cell.applies(base):
        raise ValueError(f"{name}: the cell does not apply to {base!r}.")
    _check_against_draws(cell, name, base, cx, cy, n_draws, n_sigma, random_state)
    if cell.normalises:
        _check_normalised_gram(cell, name, base, cx)


def _resolved_cell(cell: Any) -> tuple[Any, str]:
    """The cell's factory (looked up if ``cell`` is a name) and its name."""
    from .. import list_expectations

    name = cell if isinstance(cell, str) else None
    if isinstance(cell, str):
        table = list_expectations()
        if cell not in table:
            raise ValueError(
                f"No expectation cell named {cell!r}; the registered cells are "
                f"{sorted(table)}."
            )
        cell = table[cell].factory
    name = name or f"{cell.base_kernel.__name__}/{cell.conditionals.__name__}"
    return cell, name


def _fitted_inputs(
    cell: Any,
    base: Any,
    conditionals: Any,
    other: Any,
    condition_number: float,
    random_state: int,
) -> tuple[Any, Any, Any]:
    """The base kernel (fitted) and the conditionals of the rows and the others.

    Examples of the cell's classes stand in for those not given.
    """
    if conditionals is None:
        domains = getattr(cell.base_kernel, "domains", ("numeric",))
        nominal = "numeric" not in domains
        cx, density, X = _example_conditionals(
            cell.conditionals, 14, condition_number, random_state, nominal
        )
        cy = _example_conditionals(
            cell.conditionals, 9, condition_number, random_state + 1, nominal
        )[0]
    else:
        cx, density, X = conditionals, None, conditionals.first_moments()
        cy = conditionals if other is None else other
    if other is not None:
        cy = other
    if base is None:
        base = _example_base(cell.base_kernel, X, cx, density)
    elif conditionals is None:
        base = base.fit(X, cx, density)
    return base, cx, cy


def _check_against_draws(
    cell: Any,
    name: str,
    base: Any,
    cx: Any,
    cy: Any,
    n_draws: int,
    n_sigma: float,
    random_state: int,
) -> None:
    """The cell's Grams, variances and features against averages over draws."""
    rng = np.random.default_rng(random_state)
    seeds = rng.integers(0, 2**31 - 1, size=3)
    dx = cx.sample(n_draws, random_state=int(seeds[0])).samples
    dx2 = cx.sample(n_draws, random_state=int(seeds[1])).samples
    dy = cy.sample(n_draws, random_state=int(seeds[2])).samples

    # A kernel with a factor on the masks takes them in pairwise: the kernel
    # averaged is then the one whose expectation the cell gives.
    factor_of = getattr(base, "missingness_factor", None)
    masked = factor_of is not None and factor_of(cx.missing, cx.missing) is not None

    def kernel_draws(A: np.ndarray, B: np.ndarray, other: Any) -> np.ndarray:
        masks = (cx.missing, other.missing) if masked else ()
        pairs = zip(A, B, strict=True)
        return np.stack([np.asarray(base.pairwise(a, b, *masks)) for a, b in pairs])

    train, cross = kernel_draws(dx, dx2, cx), kernel_draws(dx, dy, cy)
    grams: list[tuple[str, Callable[..., np.ndarray], np.ndarray, Any]] = [
        ("Gram", cell.gram, train, None),
        ("cross Gram", cell.gram, cross, cy),
    ]
    for label, f, draws, y in grams:
        closed = f(base, cx, y, "independent", False)
        _compare(f"{name}: {label}", closed, draws, n_sigma)
    from ..kernels._expectation_table import serves

    if serves(cell, base, "variance"):
        for label, draws, y in (
            ("variance", train, None),
            ("cross variance", cross, cy),
        ):
            closed = cell.variance(base, cx, y, "independent", False)
            squares = (draws - draws.mean(axis=0)) ** 2 * (n_draws / (n_draws - 1))
            # (the average of squares converges slowly for heavy-tailed
            # kernels, whose standard error it underestimates: 10% allowed)
            _compare(f"{name}: {label}", closed, squares, n_sigma, 0.1)
    if cell.features is not None:
        try:
            fmap = base.feature_map(cx, 64, random_state)
        except NotImplementedError:  # none for these parameters
            fmap = None
        if fmap is not None:
            closed = cell.features(base, cx, fmap, False)
            feats = np.stack([np.asarray(fmap.transform(a), float) for a in dx])
            _compare(f"{name}: features", closed, feats, n_sigma)


def _check_normalised_gram(cell: Any, name: str, base: Any, cx: Any) -> None:
    """The normalised Gram is the Gram divided by the self-similarities."""
    plain = cell.gram(base, cx, None, "independent", False)
    norm = cell.gram(base, cx, None, "independent", True)
    n_i = np.diag(plain)
    expected = plain / np.sqrt(np.outer(n_i, n_i))
    err = np.abs(norm - expected).max()
    assert err <= 1e-9, (
        f"{name}: the normalised Gram differs from the Gram divided by the "
        f"self-similarities by {err:.3g}."
    )
