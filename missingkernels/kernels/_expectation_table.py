"""The expectation table: ``E k(X, Y)`` per (base kernel, representation).

A *cell* (:class:`Expectation`) is the closed form of one base kernel class
over one conditionals class. Cells are registered through the plugin hook
``missingkernels_register_expectations`` (the built-in cells too). One rule
finds the cell of every quantity (Gram, variance, features): the first cell
along both class hierarchies that defines it and applies (:func:`lookup`).
When none does, any representation that can ``sample`` falls back to the
average over pairs of draws, provided the base kernel's ``domains`` include
the representation's ``domain`` (an RBF over category codes, or simple
matching over continuous draws, is refused rather than silently computed).

Conventions, for every cell: ``gram(base, cx, cy, diagonal)`` with
``cy=None`` is the Gram of the rows of ``cx`` with themselves, its diagonal
set by ``diagonal`` (``"same_draw"``: the same random row twice;
``"independent"``: the row against an independent copy); otherwise every
pair is two independent random rows. ``variance`` follows the same
conventions. With ``normalised=True`` the kernel is
``E k(X_i, Y_j) / sqrt(E k(X_i, X_i') E k(Y_j, Y_j'))`` (independent copies).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._registry import RegistryEntry, RegistryError, registry_view, set_entry_check
from ..conditionals import BaseConditionals, SampleConditionals
from ..hookspecs import hookimpl
from ._base_kernel import BaseKernel

__all__ = ["Expectation", "expected_features", "find_expectation", "supported"]

# Elements per block of the draws average (bounds its temporaries to ~128 MB).
_DRAWS_BLOCK = 1 << 24


@dataclass(frozen=True)
class Expectation:
    """One cell of the expectation table.

    Parameters
    ----------
    base_kernel : type
        A :class:`~missingkernels.kernels.BaseKernel` subclass; the cell also
        serves its subclasses.
    conditionals : type
        A :class:`~missingkernels.conditionals.BaseConditionals` subclass;
        the cell also serves its subclasses.
    gram : callable
        ``gram(base, cx, cy, diagonal, normalised) -> ndarray``, with the
        conventions of this module; ``base`` is the fitted base kernel.
    variance : callable, optional
        ``variance(base, cx, cy, diagonal, normalised) -> ndarray``, the
        elementwise variance of the random kernel. Without it the variance
        comes from the next cell that defines one, else from draws.
    normalises : bool, default=False
        Whether ``gram``/``variance`` handle ``normalised=True`` themselves;
        otherwise the table divides by the self-similarities.
    applies : callable, optional
        ``applies(base) -> bool``: whether the cell covers this instance (e.g.
        a closed form for some polynomial degrees only), for every quantity;
        else the next cell or the draws are used.
    variance_applies : callable, optional
        ``variance_applies(base) -> bool``: whether ``variance`` covers this
        instance; else the variance comes from the next cell, or draws.
    applies_to : callable, optional
        ``applies_to(base, cx, cy) -> bool``: whether the cell's form holds
        for these arguments (``cy`` None for the rows of ``cx`` with
        themselves), e.g. a low-rank form that needs both sides to share one
        density and loses digits outside a range; else the next cell along
        the chains computes the Gram and the variance of these arguments.
    description : str, default=""
        One line for listings.
    features : callable, optional
        ``features(base, c, feature_map, normalised) -> ndarray`` of shape
        ``(n_samples, n_components)``: expected features of the rows of ``c``
        (their inner products are, or average over the feature map's
        randomness to, ``E k`` between independent rows), given the base
        kernel's :meth:`~missingkernels.kernels.BaseKernel.feature_map`.
        Without it the features come from the next cell that defines them,
        else the map's average over draws.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.conditionals import GaussianConditionals
    >>> from missingkernels.kernels import Expectation, Linear
    >>> def mean_products(base, cx, cy, diagonal, normalised):
    ...     other = cx if cy is None else cy
    ...     return cx.first_moments() @ other.first_moments().T
    >>> cell = Expectation(Linear, GaussianConditionals, mean_products)
    >>> cell.base_kernel.__name__, cell.conditionals.__name__
    ('Linear', 'GaussianConditionals')
    """

    base_kernel: type
    conditionals: type
    gram: Callable[..., np.ndarray]
    variance: Callable[..., np.ndarray] | None = None
    normalises: bool = False
    applies: Callable[[Any], bool] | None = None
    variance_applies: Callable[[Any], bool] | None = None
    description: str = ""
    features: Callable[..., np.ndarray] | None = None
    applies_to: Callable[[Any, Any, Any], bool] | None = None

    def __post_init__(self) -> None:
        if not (
            isinstance(self.base_kernel, type)
            and issubclass(self.base_kernel, BaseKernel)
        ):
            raise TypeError(
                "Expectation.base_kernel must be a subclass of "
                f"missingkernels.kernels.BaseKernel, got {self.base_kernel!r}."
            )
        if not (
            isinstance(self.conditionals, type)
            and issubclass(self.conditionals, BaseConditionals)
        ):
            raise TypeError(
                "Expectation.conditionals must be a subclass of "
                "missingkernels.conditionals.BaseConditionals, got "
                f"{self.conditionals!r}."
            )
        if not callable(self.gram):
            raise TypeError("Expectation.gram must be callable.")


# The registry lists only entries that pass this check (others are reported
# as a plugin error naming what a cell must be).
set_entry_check(
    "expectation",
    lambda value: isinstance(value, Expectation),
    "missingkernels.kernels.Expectation cells",
)


class _Index:
    """The registered cells by (base kernel class, conditionals class), and
    per pair of classes the cells that may serve it, most specific first
    (filled on demand). Built once per registry change (:func:`_index`)."""

    def __init__(self, cells: dict[tuple[type, type], Expectation]) -> None:
        self.cells = cells
        self._chains: dict[tuple[type, type], tuple[Expectation, ...]] = {}

    def chain(self, base: type, conditionals: type) -> tuple[Expectation, ...]:
        """The cells along both method resolution orders: the base kernel's
        classes outside, the conditionals' inside."""
        key = (base, conditionals)
        if key not in self._chains:
            self._chains[key] = tuple(
                self.cells[b, c]
                for b in base.__mro__
                for c in conditionals.__mro__
                if (b, c) in self.cells
            )
        return self._chains[key]


def _index(entries: dict[str, RegistryEntry]) -> _Index:
    """Index the registry's cells; two cells for one pair of classes are an
    error naming both."""
    table: dict[tuple[type, type], Expectation] = {}
    owner: dict[tuple[type, type], str] = {}
    for name, entry in entries.items():
        cell: Expectation = entry.factory  # type: ignore[assignment]
        key = (cell.base_kernel, cell.conditionals)
        if key in table:
            raise RegistryError(
                f"Two expectation cells for ({key[0].__name__}, {key[1].__name__}): "
                f"{owner[key]!r} and {name!r} (plugin {entry.plugin!r}). "
                "Uninstall or rename one of them."
            )
        table[key] = cell
        owner[key] = name
    return _Index(table)


def _cells() -> _Index:
    """The registered cells, indexed once per registry change."""
    index: _Index = registry_view("expectation", _index)
    return index


def _can_sample(conditionals: type) -> bool:
    return getattr(conditionals, "sample", None) is not BaseConditionals.sample


def _domain_ok(base: Any, conditionals: type, domain: str | None = None) -> bool:
    own = getattr(conditionals, "domain", None)
    effective = own if own is not None else domain
    return effective is None or effective in getattr(base, "domains", ("numeric",))


def find_expectation(
    base: Any, conditionals: type, domain: str | None = None
) -> Expectation | None:
    """The cell for a base kernel instance and a conditionals class, if any.

    The most specific base kernel class wins, then the most specific
    conditionals class (both along their method resolution orders). No cell
    applies when the values the conditionals describe are of a domain the
    base kernel does not declare: the representation's ``domain``, else
    ``domain`` (what the density's draws are, e.g. ``"numeric"`` for
    regression imputations), else unknown (allowed).

    Parameters
    ----------
    base : BaseKernel
    conditionals : type
    domain : {"numeric", "nominal"} or None, default=None
        The domain of a representation that does not fix one (draws).

    Returns
    -------
    cell : Expectation or None
    """
    return lookup(base, conditionals, "gram", domain)


#: The quantities a cell may define (its fields of the same names).
QUANTITIES = ("gram", "variance", "features")


def serves(cell: Expectation, base: Any, quantity: str) -> bool:
    """Whether ``cell`` defines ``quantity`` and applies to ``base``."""
    if getattr(cell, quantity) is None:
        return False
    if cell.applies is not None and not cell.applies(base):
        return False
    return not (
        quantity == "variance"
        and cell.variance_applies is not None
        and not cell.variance_applies(base)
    )


def lookup(
    base: Any,
    conditionals: type,
    quantity: str,
    domain: str | None = None,
    rows: tuple[Any, Any] | None = None,
) -> Expectation | None:
    """The cell that computes ``quantity`` (``"gram"``, ``"variance"`` or
    ``"features"``) for a base kernel instance over a conditionals class.

    One rule for every quantity: the first cell along both class hierarchies
    (the base kernel's method resolution order outside, the conditionals'
    inside) that defines the quantity and applies to the instance; None if
    there is none, or if the domain of the values does not match the base
    kernel's (see :func:`find_expectation`). Where this gives None the
    quantity is computed over draws: the same rule over
    :class:`~missingkernels.conditionals.SampleConditionals`, whose last cell
    (any base kernel over draws) defines every quantity. With ``rows``, the
    arguments ``(cx, cy)`` of a Gram or a variance, a cell whose
    ``applies_to`` says its form does not hold for them is passed over.
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"Unknown quantity {quantity!r}; known: {QUANTITIES}.")
    if not _domain_ok(base, conditionals, domain):
        return None
    for cell in _cells().chain(type(base), conditionals):
        if not serves(cell, base, quantity):
            continue
        if (
            rows is not None
            and quantity != "features"
            and cell.applies_to is not None
            and not cell.applies_to(base, *rows)
        ):
            continue
        return cell
    return None


def supported(base: Any, conditionals: type, domain: str | None = None) -> str | None:
    """How ``E k`` is computed: ``"closed form"``, ``"draws"`` or None.

    ``domain`` is as in :func:`find_expectation`.
    """
    if find_expectation(base, conditionals, domain) is not None:
        return "closed form"
    if _can_sample(conditionals) and _domain_ok(base, conditionals, domain):
        return "draws"
    return None


# -- evaluation -------------------------------------------------------------------


def set_diagonal(K: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Set the diagonal of a cell's square ``K`` (``cy=None``) in place."""
    K[np.diag_indices_from(K)] = values
    return K


def times_missingness_factor(
    M: np.ndarray, base: Any, cx: Any, cy: Any | None, power: int = 1
) -> np.ndarray:
    """A cell's Gram (``power=1``) or variance (``power=2``) times the base
    kernel's factor on the rows' masks (:meth:`BaseKernel.missingness_factor`)
    to that power, in place; unchanged when the kernel has none.

    The masks are observed, so the factor is a constant of each pair: it
    multiplies the expectation as it is, and the variance by its square. It
    is 1 for equal masks, so a normalisation by the diagonal is unchanged.
    """
    factor_of = getattr(base, "missingness_factor", None)
    if factor_of is None:
        return M
    factor = factor_of(cx.missing, (cx if cy is None else cy).missing)
    if factor is not None:
        M *= factor if power == 1 else factor**power
    return M


@dataclass(frozen=True)
class DrawOptions:
    """How the fallback draws: ``n_draws`` per row, seeded by ``random_state``."""

    n_draws: int = 100
    random_state: Any = 0


def _as_draws(c: Any, options: DrawOptions) -> SampleConditionals:
    if isinstance(c, SampleConditionals):
        return c
    return c.sample(options.n_draws, options.random_state)


def _resolve(
    base: Any, cx: Any, cy: Any | None, options: DrawOptions, quantity: str
) -> tuple[Expectation, Any, Any | None]:
    """The cell computing ``quantity`` and the arguments it takes: ``cx`` and
    ``cy`` themselves, or their draws when no cell over their representation
    serves (:func:`lookup`)."""
    if cy is not None and type(cy) is not type(cx):
        raise TypeError(
            "Both arguments of an expected kernel must have the same "
            f"representation; got {type(cx).__name__} and {type(cy).__name__}."
        )
    cell = lookup(base, type(cx), quantity, rows=(cx, cy))
    if cell is not None:
        return cell, cx, cy
    if supported(base, type(cx)) is None:
        raise TypeError(
            f"No expectation of the {type(base).kernel_name()} base kernel over "
            f"{type(cx).__name__}: no cell is registered and the draws fallback "
            "does not apply (the representation cannot sample, or its domain "
            "does not match the kernel's)."
        )
    sx = _as_draws(cx, options)
    sy = None if cy is None else _as_draws(cy, options)
    cell = lookup(base, SampleConditionals, quantity) or DRAWS_CELL
    return cell, sx, sy


def _self_similarity(cell: Expectation, base: Any, c: Any) -> np.ndarray:
    """``E k(X_i, X_i')`` for independent copies (the diagonal of the Gram)."""
    return np.diag(cell.gram(base, c, None, "independent", False)).copy()


def _evaluate(
    compute: Callable[..., np.ndarray],
    cell: Expectation,
    base: Any,
    cx: Any,
    cy: Any | None,
    diagonal: str,
    normalised: bool,
    power: int,
) -> np.ndarray:
    """``compute`` (a cell's gram or variance), normalised by the table if the
    cell does not normalise itself: the Gram divides by ``sqrt(s_i s_j)``, the
    variance (``power=2``) by ``s_i s_j``."""
    if not normalised or cell.normalises:
        return compute(base, cx, cy, diagonal, normalised)
    M = compute(base, cx, cy, diagonal, False)
    sx = _self_similarity(cell, base, cx)
    sy = sx if cy is None else _self_similarity(cell, base, cy)
    M /= np.outer(sx, sy) ** (power / 2)
    return M


def expected(
    quantity: str,
    base: Any,
    cx: Any,
    cy: Any | None,
    diagonal: str,
    *,
    normalised: bool = False,
    options: DrawOptions | None = None,
) -> np.ndarray:
    """``E k`` (``quantity="gram"``) or ``Var k`` (``"variance"``) through the
    table: the cell :func:`lookup` finds, else over draws."""
    if quantity not in ("gram", "variance"):
        raise ValueError(f"quantity must be 'gram' or 'variance', got {quantity!r}.")
    cell, rx, ry = _resolve(base, cx, cy, options or DrawOptions(), quantity)
    compute = getattr(cell, quantity)
    power = 1 if quantity == "gram" else 2
    return _evaluate(compute, cell, base, rx, ry, diagonal, normalised, power)


#: ``E k`` and ``Var k`` through the table (:func:`expected`).
expected_gram = functools.partial(expected, "gram")
expected_variance = functools.partial(expected, "variance")


def expected_features(
    base: Any,
    c: Any,
    feature_map: Any,
    *,
    normalised: bool = False,
    options: DrawOptions | None = None,
) -> np.ndarray:
    """Expected features of the rows of ``c`` through the table (a cell's
    ``features``, or the average of ``feature_map`` over draws).

    Raises NotImplementedError when the base kernel has no feature map, or
    the draws cannot give them (normalised): use Nystroem.
    """
    if feature_map is None:
        raise NotImplementedError(
            f"No expected features of the {type(base).kernel_name()} base kernel "
            f"over {type(c).__name__}: it has no feature map."
        )
    options = options or DrawOptions()
    cell, c, _ = _resolve(base, c, None, options, "features")
    assert cell.features is not None
    return cell.features(base, c, feature_map, normalised)


# -- the draws cell: any base kernel over pairs of draws ------------------------------


def _pair_moments(
    base: Any, sx: SampleConditionals, sy: SampleConditionals, power: int
) -> np.ndarray:
    """``mean_{a, b} k(x_i^a, y_j^b)^power`` over every pair of draws."""
    mx, n, d = sx.samples.shape
    my, ny = sy.samples.shape[0], sy.n_samples
    # Blocks of rows, columns and draws of x keep each call to ``pairwise``
    # (and the temporaries of a broadcasting one) near _DRAWS_BLOCK pairs.
    rows = max(1, _DRAWS_BLOCK // max(1, mx * my * ny))
    cols = ny if rows > 1 else max(1, min(ny, _DRAWS_BLOCK // max(1, mx * my)))
    xdraws = mx if cols > 1 or rows > 1 else max(1, _DRAWS_BLOCK // max(1, my))
    out = np.zeros((n, ny))
    for c in range(0, ny, cols):
        Y = sy.samples[:, c : c + cols]  # (my, q, d)
        q = Y.shape[1]
        Y = Y.reshape(my * q, d)
        for s in range(0, n, rows):
            for a in range(0, mx, xdraws):
                block = sx.samples[a : a + xdraws, s : s + rows]  # (p, r, d)
                p, r = block.shape[:2]
                K = np.asarray(base.pairwise(block.reshape(p * r, d), Y), np.float64)
                if power != 1:
                    K = K**power
                out[s : s + r, c : c + q] += K.reshape(p, r, my, q).sum(axis=(0, 2))
    out /= mx * my
    return out


def _same_draw_moments(base: Any, s: SampleConditionals, power: int) -> np.ndarray:
    """``mean_a k(x_i^a, x_i^a)^power``."""
    diag = np.stack([np.asarray(base.diagonal(draw)) for draw in s.samples])
    return (diag**power).mean(axis=0)


def _draws_gram(
    base: Any, sx: Any, sy: Any | None, diagonal: str, normalised: bool
) -> np.ndarray:
    K = _pair_moments(base, sx, sx if sy is None else sy, 1)
    if sy is None:
        K = 0.5 * (K + K.T)
        if diagonal == "same_draw":
            np.fill_diagonal(K, _same_draw_moments(base, sx, 1))
    # (pairwise above without the masks: the factor is applied once, here)
    return times_missingness_factor(K, base, sx, sy)


def _draws_variance(
    base: Any, sx: Any, sy: Any | None, diagonal: str, normalised: bool
) -> np.ndarray:
    other = sx if sy is None else sy
    E1 = _pair_moments(base, sx, other, 1)
    V = _pair_moments(base, sx, other, 2) - E1 * E1
    if sy is None:
        V = 0.5 * (V + V.T)
        if diagonal == "same_draw":
            m1 = _same_draw_moments(base, sx, 1)
            np.fill_diagonal(V, _same_draw_moments(base, sx, 2) - m1 * m1)
    return times_missingness_factor(np.maximum(V, 0.0), base, sx, sy, power=2)


def draws_average(c: SampleConditionals, fmap: Any) -> np.ndarray:
    """The features of the draws, averaged (any complete-row map)."""
    out = np.zeros((c.n_samples, fmap.n_components))
    for draw in c.samples:
        out += fmap.transform(draw)
    out /= c.n_draws
    return out


def _draws_features(
    base: Any, s: SampleConditionals, feature_map: Any, normalised: bool
) -> np.ndarray:
    if normalised:
        raise NotImplementedError(
            "Normalised expected features over draws have no exact form here."
        )
    return draws_average(s, feature_map)


DRAWS_CELL = Expectation(
    BaseKernel,
    SampleConditionals,
    _draws_gram,
    _draws_variance,
    description="Any base kernel over draws: the average over pairs of draws",
    features=_draws_features,
)


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    return {"any/samples": DRAWS_CELL}
