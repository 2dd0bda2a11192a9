"""The data of a comparison: :class:`ComparisonData`, the codes of its
nominal columns, and the checks of a dataset before any cell runs (shapes,
a target that fits the task, enough rows, names and category labels)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._cv import _TASK_METRICS, _Columns


@dataclass
class ComparisonData:
    """A dataset entering a comparison.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Features; complete when missingness is simulated, NaN where missing
        for ``mechanism="none"``.
    y : ndarray of shape (n_samples,)
    task : {"classification", "regression"}
    nominal : array-like of int or bool mask, default=None
        The nominal columns of ``X`` (0-based indices or a mask): category
        codes, NaN where missing, never standardised. Each method meets them
        as its :class:`MethodSpec` says (``nominal``): the mixed kernels and
        ``"hgb"`` take them as nominal, the imputation baselines one-hot code
        them (mode imputation where they impute by the mean), the other
        methods see them one-hot coded. None: every column is numeric.
    feature_names : sequence of str, default=None
        The columns' names, one per column of ``X``: the kernel methods'
        warnings and errors then name the columns as the user does (e.g.
        ``feature 'pain'`` rather than ``column 8 (0-based)``). None: by
        0-based position.
    categories : mapping, default=None
        Per nominal column (its name in ``feature_names``, or its 0-based
        index), a mapping from its codes in ``X`` to the labels they stand
        for (e.g. ``{0.0: "no", 1.0: "yes"}``, as
        :attr:`missingkernels.datasets.Dataset.categories`): the messages of
        the kernels that take nominal columns then show the labels instead of
        the codes. A code without a label is shown as itself.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.experiments import ComparisonData
    >>> X = np.array([[0.5, 1.0], [1.5, 2.0], [np.nan, 1.0], [2.0, np.nan]])
    >>> data = ComparisonData(X, np.array([0, 1, 0, 1]), "classification", [1])
    >>> data.nominal_mask().tolist()
    [False, True]
    """

    X: np.ndarray
    y: np.ndarray
    task: str
    nominal: Any = None
    feature_names: Sequence[str] | None = None
    categories: Mapping[Any, Mapping[float, Any]] | None = None

    def nominal_mask(self) -> np.ndarray:
        """``(n_features,)`` bool: True for the nominal columns.

        Returns
        -------
        mask : ndarray of bool

        Raises
        ------
        ValueError
            If ``nominal`` is neither column indices of ``X`` nor a mask.
        """
        from ._imputation import nominal_mask as _nominal_mask

        return _nominal_mask(self.nominal, np.shape(self.X)[1])


def _with_nominal_codes(
    data: ComparisonData,
) -> tuple[ComparisonData, Any, _Columns | None]:
    """``data`` with its nominal columns relabelled ``0 .. k-1`` (the sorted
    distinct values of all rows; a bijection, no label is used), their mask
    (None for an all-numeric table) and the columns' names and labels (None
    without ``feature_names``).

    Matching kernels and one-hot codes only compare codes, so the relabelling
    changes no model; it lets histogram gradient boosting take any codes
    (its categories must be integers below ``max_bins``).
    """
    mask = data.nominal_mask()
    names = data.feature_names
    given = {} if data.categories is None else dict(data.categories)
    if names is not None:
        given = {
            (list(names).index(k) if isinstance(k, str) else int(k)): v
            for k, v in given.items()
        }
    labels: dict[int, tuple] = {}
    if not mask.any():
        columns = None if names is None else _Columns(tuple(map(str, names)))
        return data, None, columns
    X = np.array(data.X, dtype=np.float64)
    for j in np.flatnonzero(mask):
        observed = ~np.isnan(X[:, j])
        values, X[observed, j] = np.unique(X[observed, j], return_inverse=True)
        own = given.get(int(j), {})
        shown = tuple(own.get(float(v), _as_label(v)) for v in values)
        if len({(type(v).__name__, str(v)) for v in shown}) < len(shown):
            shown = tuple(map(_as_label, values))  # clashing labels: the codes
        labels[int(j)] = shown
    columns = None if names is None else _Columns(tuple(map(str, names)), labels)
    coded = ComparisonData(X, data.y, data.task, data.nominal)
    return coded, mask, columns


def _as_label(value: float) -> Any:
    """A code shown as itself: ``3`` for ``3.0``."""
    return int(value) if float(value).is_integer() else float(value)


def _check_data(
    name: str, data: ComparisonData, simulated: bool, outer_folds: int
) -> None:
    """One dataset: shapes, a target that fits the task, enough rows."""
    where = f"datasets[{name!r}]"
    if not isinstance(data, ComparisonData):
        raise TypeError(f"{where} must be a ComparisonData, got {type(data).__name__}.")
    if data.task not in _TASK_METRICS:
        raise ValueError(
            f"{where}.task must be 'classification' or 'regression', got {data.task!r}."
        )
    try:
        X = np.asarray(data.X, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{where}.X must be numeric; encode non-numeric features (e.g. "
            "one-hot) first."
        ) from None
    if X.ndim != 2:
        raise ValueError(
            f"{where}.X must be 2-d (rows x features), got shape {X.shape}."
        )
    y = np.asarray(data.y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(
            f"{where}: y must be 1-d with one value per row of X; got X of "
            f"shape {X.shape} and y of shape {y.shape}."
        )
    try:
        data.nominal_mask()
    except (ValueError, TypeError, IndexError) as exc:
        raise ValueError(f"{where}.nominal: {exc}") from None
    _check_names(data, where, X.shape[1])
    if X.shape[0] < outer_folds:
        raise ValueError(
            f"{where} has {X.shape[0]} rows, fewer than outer_folds={outer_folds}."
        )
    infinite = np.isinf(X)
    if infinite.any():
        # Where, as the estimators say it: the R front end numbers the rows of
        # the user's data from the 0-based row and names the column.
        i, j = (int(k[0]) for k in np.nonzero(infinite))
        names = data.feature_names
        column = f"column {j} (0-based)" if names is None else f"column {names[j]!r}"
        raise ValueError(
            f"{where}.X holds {int(infinite.sum())} infinite value(s), the first "
            f"in {column}, row {i} (0-based). NaN marks a missing entry; an "
            "infinity is neither missing nor a value a kernel can use: replace "
            "the infinities by NaN or by finite numbers."
        )
    if simulated and np.isnan(X).any():
        raise ValueError(
            f"{where}.X has missing values, but the simulated mechanisms need "
            "complete data; use mechanisms=['none'] for the data's own missing "
            "values, or drop or impute them first."
        )
    if data.task == "regression":
        try:
            y_num = y.astype(np.float64)
        except (TypeError, ValueError):
            example = next((v for v in y.tolist() if not _is_real(v)), y.tolist()[0])
            raise ValueError(
                f"{where}.y must be numeric for task='regression', but it holds "
                f"labels such as {example!r}; use task='classification' for "
                "class labels, or encode y as numbers."
            ) from None
        if not np.all(np.isfinite(y_num)):
            raise ValueError(
                f"{where}.y has {int(np.sum(~np.isfinite(y_num)))} missing or "
                "non-finite values; drop those rows first."
            )
        return
    missing = [v for v in y.tolist() if v is None or (_is_real(v) and math.isnan(v))]
    if missing:
        raise ValueError(
            f"{where}.y has {len(missing)} missing labels; drop those rows first."
        )
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(
            f"{where}.y has a single class ({classes[0].item()!r}); a classification "
            "needs at least two. Check the target, or use task='regression' "
            "for a numeric target."
        )


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _check_names(data: ComparisonData, where: str, d: int) -> None:
    """``feature_names`` and ``categories`` of ``data`` (see
    :class:`ComparisonData`)."""
    names = data.feature_names
    if names is not None:
        names = list(names)
        if len(names) != d or len(set(map(str, names))) != d:
            raise ValueError(
                f"{where}.feature_names must give {d} distinct names, one per "
                f"column of X; got {len(names)} ({len(set(map(str, names)))} "
                "distinct)."
            )
    if not data.categories:
        return
    nominal = np.flatnonzero(data.nominal_mask()).tolist()
    for key, mapping in dict(data.categories).items():
        if isinstance(key, str):
            if names is None or key not in names:
                raise ValueError(
                    f"{where}.categories names the column {key!r}, which is not "
                    "in feature_names; key it by a name of feature_names or a "
                    "0-based column index."
                )
            key = names.index(key)
        if not isinstance(key, int | np.integer) or int(key) not in nominal:
            raise ValueError(
                f"{where}.categories has an entry for column {key!r}, which is "
                "not a nominal column; give labels for the columns of nominal "
                "only."
            )
        if not isinstance(mapping, Mapping):
            raise TypeError(
                f"{where}.categories[{key!r}] must map codes to labels, got "
                f"{type(mapping).__name__}."
            )
        labels = list(mapping.values())
        if len({(type(v).__name__, str(v)) for v in labels}) != len(labels):
            raise ValueError(
                f"{where}.categories[{key!r}] gives two codes the same label; "
                "each code needs its own."
            )
