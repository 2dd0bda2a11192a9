"""The matching family: simple matching and presence (Belanche et al.).

Base kernels on category codes, their closed forms over per-feature
categorical PMFs and over draws (one GEMM of the PMFs per feature), and the
presets Belanche K1 and K2, registered as a built-in plugin through the same
hooks a third-party plugin uses. Conventions of the cells as in
:mod:`._expectation_table`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import describe_features
from ..conditionals import CategoricalConditionals, SampleConditionals
from ..hookspecs import hookimpl
from ._base_kernel import BaseKernel
from ._expectation_table import Expectation, set_diagonal
from ._expected_kernel import BaseExpectedKernel

__all__ = ["BelancheK1Kernel", "BelancheK2Kernel", "Presence", "SimpleMatching"]

# Rows per block of the complete-row evaluations below.
_BLOCK = 2048


# -- base kernels -----------------------------------------------------------------


class SimpleMatching(BaseKernel):
    """Simple matching ``1/d sum_v 1[x_v = y_v]`` for categorical codes."""

    name = "simple matching"
    has_variance = False
    domains = ("nominal",)
    #: Whether only joint values 1 count (presence) rather than any match.
    _presence: ClassVar[bool] = False

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        out = np.empty((len(A), len(B)))
        for s in range(0, len(A), _BLOCK):
            a = A[s : s + _BLOCK]
            out[s : s + len(a)] = (a[:, None, :] == B[None]).mean(axis=-1)
        return out

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return np.ones(len(A))

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """The exact map: one-hot codes over the training codes, ``/ sqrt(d)``."""
        return _category_map(train, presence=self._presence)


class Presence(BaseKernel):
    """Presence ``1/d sum_v 1[x_v = 1] 1[y_v = 1]`` for 0/1 features."""

    name = "presence"
    has_variance = False
    domains = ("nominal",)
    _presence: ClassVar[bool] = True

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        a = (np.asarray(A) == 1.0).astype(np.float64)
        b = (np.asarray(B) == 1.0).astype(np.float64)
        return a @ b.T / A.shape[1]

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return (np.asarray(A) == 1.0).mean(axis=1)

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """The exact map: ``1[x_v = 1] / sqrt(d)`` (the probability if missing)."""
        return _category_map(train, presence=self._presence)


@dataclass(frozen=True)
class CategoryMap:
    """Exact map of simple matching (one-hot per feature, scaled by
    ``1/sqrt(d)``) or of presence (``1[x_v = 1] / sqrt(d)``).

    ``categories`` are the training codes per feature; a code not among them
    matches nothing (its one-hot block is zero).
    """

    categories: tuple[np.ndarray, ...]
    presence: bool

    @property
    def n_components(self) -> int:
        if self.presence:
            return int(sum(np.count_nonzero(c == 1.0) for c in self.categories))
        return int(sum(len(c) for c in self.categories))

    def transform(self, A: np.ndarray) -> np.ndarray:
        A = np.asarray(A, dtype=np.float64)
        d = A.shape[1]
        blocks = [
            (
                A[:, v : v + 1] == cats[None, cats == 1.0 if self.presence else ...]
            ).astype(np.float64)
            for v, cats in enumerate(self.categories)
        ]
        return np.hstack(blocks) / np.sqrt(d)


def matching_features(c: Any, fmap: CategoryMap) -> np.ndarray:
    """Simple matching or presence features of categorical conditionals or
    draws: per feature, the row's distribution over the training codes (a
    one-hot code when observed), scaled by ``1/sqrt(d)``."""
    d = c.n_features
    blocks = []
    for v in range(d):
        known = np.asarray(fmap.categories[v], dtype=np.float64)
        # pmf needs every value present; codes unseen in training are dropped.
        cats = np.union1d(known, c.feature_values(v))
        pmf = np.asarray(c.pmf(v, cats), dtype=np.float64)
        block = pmf[:, np.isin(cats, known)]
        if fmap.presence:
            block = block[:, known == 1.0]
        blocks.append(block)
    if not blocks:
        return np.zeros((c.n_samples, 0))
    return np.hstack(blocks) / np.sqrt(d)


def _category_map(train: Any, presence: bool) -> Any:
    cats = tuple(
        np.asarray(train.feature_values(v), dtype=np.float64)
        for v in range(train.n_features)
    )
    return CategoryMap(categories=cats, presence=presence)


# -- cells ----------------------------------------------------------------------


def _category_features(
    base: Any, c: Any, feature_map: Any, normalised: bool
) -> np.ndarray:
    return matching_features(c, feature_map)


def _matching_features(
    base: Any, cx: Any, cy: Any, presence: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row vectors whose inner products are ``d`` times the kernel: per
    feature the row's PMF over the values either argument takes (matching),
    or its probability of the value 1 (presence)."""
    fx, fy = [], []
    for v in range(cx.n_features):
        cats = np.union1d(cx.feature_values(v), cy.feature_values(v))
        if presence:
            unexpected = cats[(cats != 0.0) & (cats != 1.0)]
            if unexpected.size:
                raise ValueError(
                    "The presence kernel (belanche_k2) needs binary features "
                    f"coded 0 (absent) / 1 (present); {describe_features(base, v)} "
                    f"takes the value {float(unexpected[0])!r}. Recode it, or use "
                    "belanche_k1 (simple matching) for categorical features."
                )
            one = int(np.searchsorted(cats, 1.0))
            if one < len(cats) and cats[one] == 1.0:
                fx.append(cx.pmf(v, cats)[:, one : one + 1])
                fy.append(cy.pmf(v, cats)[:, one : one + 1])
            continue
        fx.append(cx.pmf(v, cats))
        fy.append(cy.pmf(v, cats))
    if not fx:
        return np.zeros((cx.n_samples, 0)), np.zeros((cy.n_samples, 0))
    return np.hstack(fx), np.hstack(fy)


def _matching_cell(
    base_kernel: type[SimpleMatching | Presence], conditionals: type
) -> Expectation:
    """Simple matching (Belanche K1) or presence (K2) over per-feature PMFs."""
    presence = base_kernel._presence

    def gram(
        base: Any, cx: Any, cy: Any | None, diagonal: str, normalised: bool
    ) -> np.ndarray:
        d = cx.n_features
        fx, fy = _matching_features(base, cx, cx if cy is None else cy, presence)
        K = fx @ fy.T / d
        if cy is None and diagonal == "same_draw":
            # The same draw always matches itself; presence counts P(x_v = 1).
            diag = fx.sum(axis=1) / d if presence else np.ones(cx.n_samples)
            set_diagonal(K, diag)
        return K

    return Expectation(
        base_kernel,
        conditionals,
        gram,
        description=(
            f"{base_kernel.kernel_name()} over {conditionals.__name__}: "
            "closed form per feature"
        ),
        features=_category_features,
    )


# -- presets ----------------------------------------------------------------------


class BelancheK1Kernel(BaseExpectedKernel):
    """Belanche K1: the expected simple matching kernel for categorical features.

    ``K1(x, y) = 1/d sum_v E 1[X_v = Y_v]``: per feature, 1[a = b] when both
    entries are observed, ``P_v(a)`` when one is missing, ``sum_c P_v(c)^2``
    when both are (eq. (2)); ``P_v`` the training frequencies of the fitted
    categorical density. Works for more than two values per feature.

    Parameters
    ----------
    density : str or density estimator, default="categorical"
        A registry name or an unfitted density object: per-feature
        categorical, or draws (the average over pairs of draws).
    diagonal : {"independent", "same_draw"}, default="independent"
        The diagonal of ``k(X)``: an independent copy (the paper, ``sum_c
        P_v(c)^2`` for a missing entry) or the same draw (1). ``k(X, Y)`` is
        not affected.

    Attributes
    ----------
    density_ : density estimator
        The density fitted on the training rows.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] L. A. Belanche, V. Kobayashi and T. Aluja, "Handling missing values
       in kernel methods with application to microbiology data",
       Neurocomputing 141, 110-116, 2014, eq. (2).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import BelancheK1Kernel
    >>> X = np.array([[1, 0], [1, np.nan], [0, 1], [1, 1]])
    >>> k = BelancheK1Kernel().fit(X)
    >>> k(X[:2]).round(3).tolist()
    [[1.0, 0.667], [0.667, 0.778]]
    """

    _base_kernel_class: ClassVar = SimpleMatching

    def __init__(self, density: Any = "categorical", diagonal: str = "independent"):
        self.density = density
        self.diagonal = diagonal


class BelancheK2Kernel(BaseExpectedKernel):
    """Belanche K2: the expected presence kernel for binary features.

    ``K2(x, y) = 1/d sum_v E[X_v Y_v]`` for features coded 0 (absent) / 1
    (present): only joint presences count. Per feature ``a b`` when both are
    observed, ``P_v(1) b`` when one is missing, ``P_v(1)^2`` when both are
    (eq. (3)).

    Parameters
    ----------
    density : str or density estimator, default="categorical"
        A registry name or an unfitted density object: per-feature
        categorical, or draws. Every value must be 0 or 1.
    diagonal : {"independent", "same_draw"}, default="independent"
        The diagonal of ``k(X)``: an independent copy (the paper, ``P_v(1)^2``
        for a missing entry) or the same draw (``P_v(1)``). ``k(X, Y)`` is not
        affected.

    Attributes
    ----------
    density_ : density estimator
        The density fitted on the training rows.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] L. A. Belanche, V. Kobayashi and T. Aluja, "Handling missing values
       in kernel methods with application to microbiology data",
       Neurocomputing 141, 110-116, 2014, eq. (3).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import BelancheK2Kernel
    >>> X = np.array([[1, 0], [1, np.nan], [0, 1], [1, 1]])
    >>> k = BelancheK2Kernel().fit(X)
    >>> k(X[:2]).round(3).tolist()
    [[0.5, 0.5], [0.5, 0.722]]
    """

    _base_kernel_class: ClassVar = Presence

    def __init__(self, density: Any = "categorical", diagonal: str = "independent"):
        self.density = density
        self.diagonal = diagonal


# -- registration ------------------------------------------------------------------


@hookimpl
def missingkernels_register_kernels():  # type: ignore[no-untyped-def]
    return {"belanche_k1": BelancheK1Kernel, "belanche_k2": BelancheK2Kernel}


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    return {
        "matching/categorical": _matching_cell(SimpleMatching, CategoricalConditionals),
        "matching/samples": _matching_cell(SimpleMatching, SampleConditionals),
        "presence/categorical": _matching_cell(Presence, CategoricalConditionals),
        "presence/samples": _matching_cell(Presence, SampleConditionals),
    }
