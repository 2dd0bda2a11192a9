"""Choosing a mixture's number of components by BIC.

:class:`_ComponentSearch` lets a mixture density take ``n_components="bic"``
or a range ``(low, high)``: ``fit`` then fits every count in the range with
the same starts (same ``random_state`` and ``n_init``) and keeps the fit with
the lowest BIC of the observed-data log-likelihood (:func:`._prior.bic`).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from sklearn.base import clone

from ._prior import bic

__all__: list[str] = []

#: The counts ``n_components="bic"`` tries.
BIC_RANGE = (1, 6)


def candidate_counts(n_components: Any, name: str) -> list[int] | None:
    """The counts to try for ``n_components``, or None for a fixed count.

    ``"bic"``: :data:`BIC_RANGE`; a pair ``(low, high)`` of integers with
    ``1 <= low <= high``: ``low, ..., high``. Anything else raises a
    ValueError saying what is accepted.
    """
    if isinstance(n_components, Integral) and not isinstance(n_components, bool):
        return None
    if isinstance(n_components, str) and n_components == "bic":
        low, high = BIC_RANGE
        return list(range(low, high + 1))
    pair = n_components
    if (
        isinstance(pair, tuple | list)
        and len(pair) == 2
        and all(isinstance(v, Integral) and not isinstance(v, bool) for v in pair)
        and 1 <= pair[0] <= pair[1]
    ):
        return list(range(int(pair[0]), int(pair[1]) + 1))
    raise ValueError(
        f"{name}: n_components must be a positive integer, 'bic' (BIC over "
        f"{BIC_RANGE[0]}..{BIC_RANGE[1]} components) or a range (low, high) of "
        f"integers with 1 <= low <= high; got {n_components!r}."
    )


class _ComponentSearch:
    """Mixin of the mixture densities: ``n_components`` fixed or chosen by
    BIC. A subclass implements :meth:`_n_parameters` and its EM fit sets
    ``_n_used`` (the rows with an observed entry)."""

    n_components: Any

    def fit(self, X: Any, y: Any = None) -> Any:
        counts = candidate_counts(self.n_components, type(self).__name__)
        if counts is None:
            super().fit(X, y)  # type: ignore[misc]
            self._set_bic()
            return self
        scores: dict[int, float] = {}
        best: Any = None
        for K in counts:
            candidate = clone(self).set_params(n_components=K)  # type: ignore[arg-type]
            try:
                candidate.fit(X)
            except ValueError:
                # Too few rows for K components: the larger counts neither.
                if K == counts[0]:
                    raise
                break
            scores[K] = candidate.bic_
            if best is None or candidate.bic_ < best.bic_:
                best = candidate
        fitted = {k: v for k, v in vars(best).items() if k.endswith("_")}
        vars(self).update(fitted)
        self._n_used = best._n_used
        self.bic_scores_ = scores
        return self

    def _set_bic(self) -> None:
        self.n_components_ = int(self.n_components)
        self.bic_ = bic(self.loglik_, self._n_parameters(), self._n_used)  # type: ignore[attr-defined]

    def _n_parameters(self) -> int:
        """Free parameters of the fitted model."""
        raise NotImplementedError  # pragma: no cover - abstract

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:
        text = super().__repr__(N_CHAR_MAX)  # type: ignore[misc,call-arg]
        if not isinstance(self.n_components, Integral) and hasattr(
            self, "n_components_"
        ):
            text += f" with n_components_={self.n_components_}"
        return text
