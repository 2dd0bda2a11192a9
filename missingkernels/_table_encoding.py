"""Mixed-type tables: which columns are nominal, and their category codes.

An estimator with the parameters ``nominal_features`` and ``handle_unknown``
(the SVMs, the transformer, the feature map, the mixed kernels and the
latent-class density) accepts tables whose columns are numeric, boolean,
categorical, string or object. At fit, :func:`encode_table` decides which
columns are nominal and records their categories (:class:`TableEncoding`);
every call then replaces each nominal value by its category code ``0 .. C-1``
(NaN where missing) before the usual validation, so the rest of the package
sees float64 rows with NaN. Numeric columns pass unchanged; ordered
categoricals are numeric, coded by the rank of their level.
"""

from __future__ import annotations

import re
import sys
import warnings
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from ._validation import describe_features, missing_objects, user_stacklevel

__all__ = [
    "TableEncoding",
    "UnknownCategoryWarning",
    "distinct_rows",
    "encode_table",
    "merge_distinct_rows",
    "nominal_candidates",
]


class UnknownCategoryWarning(UserWarning):
    """New rows hold a category of a nominal column that training never saw;
    with ``handle_unknown="missing"`` the entry is treated as missing.

    Under Python's default warning filters it is shown once per distinct
    (estimator, column, value) and line of the caller, also across the fits
    of a grid search (whose parallel tasks reset Python's own memory of the
    warnings shown); with ``warnings.simplefilter("always")`` every
    occurrence is shown, and an ``"error"`` filter raises every time."""


#: What ``nominal_features`` takes besides a list of columns.
FROM_DTYPE = "from_dtype"


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _missing_mask(values: np.ndarray) -> np.ndarray:
    """True for None, NaN, pandas' NA/NaT and the empty string."""
    return missing_objects(values, empty_string=True)


def _sort_labels(labels: list) -> np.ndarray:
    """Distinct labels in a deterministic order (numbers before strings)."""
    try:
        if len({isinstance(v, bool | np.bool_) for v in labels}) > 1:
            raise TypeError  # True == 1: keep booleans apart from numbers
        ordered = sorted(labels)
    except TypeError:  # mixed types
        ordered = sorted(labels, key=lambda v: (type(v).__name__, str(v)))
    out = np.empty(len(ordered), dtype=object)
    out[:] = ordered
    return out


@dataclass(frozen=True)
class _Column:
    """How one column is coded: ``kind`` is "numeric", "nominal" or
    "ordinal" (an ordered categorical, coded by rank and modelled as numeric);
    ``categories`` the labels of a nominal (or ordinal) column, in code order."""

    kind: str
    categories: np.ndarray | None = None


@dataclass(frozen=True)
class TableEncoding:
    """The coding of a table's columns, fitted on the training rows.

    Attributes
    ----------
    columns : tuple of _Column
    """

    columns: tuple[_Column, ...]

    @property
    def nominal(self) -> np.ndarray:
        """``(n_features,)`` bool: True for nominal columns."""
        return np.array([c.kind == "nominal" for c in self.columns], dtype=bool)

    @property
    def categories(self) -> list[np.ndarray | None]:
        """Per column, the labels of its codes (None for numeric columns)."""
        return [c.categories if c.kind == "nominal" else None for c in self.columns]

    @property
    def trivial(self) -> bool:
        """Whether every column passes unchanged (all numeric)."""
        return all(c.kind == "numeric" for c in self.columns)


def _columns_of(X: Any) -> tuple[list[Any], list[Any], list[str | None]]:
    """Per column: its values (an array), its name, and a dtype hint
    ("categorical", "ordered", "bool", "string", "numeric", "object")."""
    if _is_frame(X):
        values: list[Any] = []
        hints: list[str | None] = []
        for j in range(X.shape[1]):
            col = X.iloc[:, j]
            dtype = col.dtype
            name = getattr(dtype, "name", str(dtype))
            if name == "category":
                hints.append("ordered" if dtype.ordered else "categorical")
                values.append(col)
            elif name.startswith(("datetime", "timedelta", "period")):
                hints.append("datetime")
                values.append(col)
            elif name in ("bool", "boolean"):
                hints.append("bool")
                values.append(col.to_numpy(dtype=object))
            elif name in ("object", "string", "str") or name.startswith("string"):
                hints.append("string" if name != "object" else "object")
                values.append(col.to_numpy(dtype=object))
            else:
                hints.append("numeric")
                values.append(col)
        return values, [str(c) for c in X.columns], hints
    A = np.asarray(X)
    if A.ndim != 2:
        return [], [], []
    if A.dtype.kind == "b":
        return (
            [A[:, j] for j in range(A.shape[1])],
            [None] * A.shape[1],
            (["bool"] * A.shape[1]),
        )
    if A.dtype.kind in "mM":
        return (
            [A[:, j] for j in range(A.shape[1])],
            [None] * A.shape[1],
            ["datetime"] * A.shape[1],
        )
    if A.dtype.kind in "OUS":
        return (
            [A[:, j].astype(object) for j in range(A.shape[1])],
            [None] * A.shape[1],
            ["object"] * A.shape[1],
        )
    return [None] * A.shape[1], [None] * A.shape[1], ["numeric"] * A.shape[1]


def _wanted_nominal(
    estimator: Any, spec: Any, names: list[Any], hints: list[str | None]
) -> np.ndarray | None:
    """The columns ``nominal_features`` names (a bool mask), or None for
    ``"from_dtype"``."""
    d = len(hints)
    where = type(estimator).__name__
    if isinstance(spec, str):
        if spec == FROM_DTYPE:
            return None
        spec = [spec]
    if spec is None:
        return np.zeros(d, dtype=bool)
    items = np.asarray(spec, dtype=object).ravel()
    mask = np.zeros(d, dtype=bool)
    if items.size and all(isinstance(v, bool | np.bool_) for v in items):
        if items.size != d:
            raise ValueError(
                f"{where}: nominal_features as a boolean mask needs one entry per "
                f"feature ({d}); got {items.size}."
            )
        return items.astype(bool)
    for item in items:
        if isinstance(item, str):
            known = [n for n in names if n is not None]
            if not known:
                raise ValueError(
                    f"{where}: nominal_features names the column {item!r}, but X "
                    "has no column names; pass a DataFrame or give 0-based "
                    "column indices."
                )
            if item not in names:
                raise ValueError(
                    f"{where}: nominal_features names {item!r}, which is not a "
                    f"column of X (columns: {', '.join(map(repr, known[:12]))}"
                    f"{' ...' if len(known) > 12 else ''})."
                )
            mask[names.index(item)] = True
        elif isinstance(item, Integral) and not isinstance(item, bool):
            if not -d <= int(item) < d:
                raise ValueError(
                    f"{where}: nominal_features holds the index {int(item)}, out of "
                    f"range for X with {d} features (0-based)."
                )
            mask[int(item)] = True
        else:
            raise TypeError(
                f"{where}: nominal_features must be 'from_dtype', None, column "
                "names, 0-based column indices or a boolean mask; got an entry "
                f"{item!r}."
            )
    return mask


def _fit_column(
    values: Any,
    hint: str | None,
    nominal: bool | None,
    where: str = "",
    name: Any = None,
) -> _Column:
    """The coding of one training column; ``nominal`` None: from its dtype.

    ``where`` names the column in the error raised for an object column that
    mixes numbers and strings (a typo in a numeric column, or a nominal
    column to declare); ``name`` is its DataFrame name, if any, for the
    remedy the messages spell out."""
    if hint == "datetime":
        raise ValueError(
            f"{where} holds dates or times ({getattr(values, 'dtype', '')}), "
            "which have no meaning as one number here. Convert it to the "
            "number you mean (e.g. days since a reference date: "
            "(col - col.min()).dt.days, or the month: col.dt.month) or drop "
            "it before fitting."
        )
    if hint in ("categorical", "ordered"):
        cats = values.cat.categories
        codes = values.cat.codes.to_numpy()
        seen = np.unique(codes[codes >= 0])
        if hint == "ordered" and not nominal:
            labels = np.empty(len(cats), dtype=object)
            labels[:] = list(cats)
            return _Column("ordinal", labels)
        if nominal is False:
            if not _all_numbers(list(cats)):
                raise ValueError(
                    f"{where} is an unordered categorical with labels such as "
                    f"{list(cats[:3])!r}, declared numeric by nominal_features: "
                    "its codes would follow the arbitrary order of the levels. "
                    "Leave it nominal, make it ordered (pd.Categorical(..., "
                    "categories=[...], ordered=True): coded by rank) or convert "
                    "it to numbers."
                )
            # Numeric labels: the column is their values, not their codes.
            return _Column("numeric")
        labels = np.empty(len(seen), dtype=object)
        labels[:] = [cats[c] for c in seen]
        return _Column("nominal", labels)
    is_text = hint in ("bool", "string", "object")
    if nominal is None:
        if hint == "object":
            observed = values[~_missing_mask(values)]
            text = [isinstance(v, str | bool | np.bool_) for v in observed]
            nominal = bool(text) and all(text)
            if any(text) and not nominal:
                raise ValueError(
                    f"{where} mixes numbers and strings: "
                    f"{_listed_values(values, _is_text_entry)} (rows counted "
                    "from 0). If it is a "
                    "measurement, make the column numbers only, e.g. with "
                    f"pd.to_numeric({_column_ref(name)}, errors='coerce') (text "
                    "becomes a missing entry) or by replacing the text by the "
                    "number it stands for; if it is nominal, declare it with "
                    "nominal_features (its values are then categories)."
                )
        else:
            nominal = is_text
        if nominal and hint in ("string", "object"):
            _warn_numeric_strings(values, where, name)
    if not nominal:
        return _Column("numeric")
    raw = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    raw = np.asarray(raw, dtype=object)
    seen = raw[~_missing_mask(raw)]
    distinct = {_key(v): _label(v) for v in seen}
    return _Column("nominal", _sort_labels(list(distinct.values())))


def _label(v: Any) -> Any:
    """A hashable, comparable label (numpy scalars as Python scalars)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def _key(v: Any) -> Any:
    """The category a value stands for: its label, with booleans apart from
    the numbers they equal in Python (``True == 1``)."""
    v = _label(v)
    if isinstance(v, bool):
        return ("bool", v)
    return v


def _all_numbers(labels: list) -> bool:
    return bool(labels) and all(
        isinstance(v, int | float | np.integer | np.floating)
        and not isinstance(v, bool | np.bool_)
        for v in labels
    )


#: Distinct values above which a text column of numbers looks like a
#: measurement rather than category codes.
_MANY_CODES = 20


def _as_number(v: Any) -> float | None:
    """``v`` as a finite number if it is a string that reads as one, else None."""
    if not isinstance(v, str):
        return None
    try:
        number = float(v)
    except ValueError:
        return None
    return number if np.isfinite(number) else None


def _is_text_entry(v: Any) -> bool:
    """An observed entry of an object column that is a string or a boolean."""
    return isinstance(v, str | bool | np.bool_)


def _column_ref(name: Any) -> str:
    """How the remedy in a message refers to the column: ``X['crp']``."""
    return "column" if name is None else f"X[{str(name)!r}]"


def _listed_values(values: Any, offending: Any, limit: int = 5) -> str:
    """The distinct observed entries of a column for which ``offending(v)``
    holds, for a message: ``"'<1.0' (row 5), 'pending' (2 rows: 10, 11)"``
    with 0-based row positions; at most ``limit``, then how many more."""
    raw = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    raw = np.asarray(raw, dtype=object)
    rows: dict[Any, list[int]] = {}
    for i in np.flatnonzero(~_missing_mask(raw)):
        if offending(raw[i]):
            rows.setdefault(_key(raw[i]), []).append(int(i))
    shown = []
    for where in list(rows.values())[:limit]:
        value = raw[where[0]]
        at = f"row {where[0]}" if len(where) == 1 else f"{len(where)} rows: "
        if len(where) > 1:
            at += ", ".join(map(str, where[:3])) + (" ..." if len(where) > 3 else "")
        shown.append(f"{_label(value)!r} ({at})")
    more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
    return ", ".join(shown) + more


def _warn_numeric_strings(values: Any, where: str, name: Any = None) -> None:
    """Warn when a text column taken as nominal looks like a numeric column
    read as text: pandas reads a CSV column of numbers as text when one of
    its cells is not a number (a detection limit such as ``'<1.0'``, a note
    such as ``'pending'``), and every distinct value would become a category.

    The trigger: most of the observed entries (more than half) read as
    numbers, and those numbers look like measurements rather than category
    codes (some have decimals, or there are more than :data:`_MANY_CODES`
    distinct ones). Few integer codes, with or without a text level such as
    ``'unknown'``, are taken as categories without a word, as are text
    labels among which a few numbers occur. The warning lists the entries
    that are not numbers, with their rows.
    """
    raw = values.to_numpy() if hasattr(values, "to_numpy") else np.asarray(values)
    raw = np.asarray(raw, dtype=object)
    observed = raw[~_missing_mask(raw)]
    if not observed.size or not all(isinstance(v, str) for v in observed):
        return
    parsed = [_as_number(v) for v in observed]
    numbers = np.array([x for x in parsed if x is not None])
    if 2 * numbers.size <= observed.size:
        return
    fractional = bool(np.any(numbers != np.round(numbers)))
    texts = [v for v, x in zip(observed, parsed, strict=True) if x is not None]
    distinct = len(set(observed.tolist()))
    if not (fractional or len(set(texts)) > _MANY_CODES):
        return
    remedy = f"pd.to_numeric({_column_ref(name)}, errors='coerce')"
    if numbers.size == observed.size:
        message = (
            f"{where} holds only numbers written as text (e.g. {texts[0]!r}; "
            f"{distinct} distinct values), taken as nominal: every distinct "
            "value is a category. If they are measurements, convert the "
            f"column to numbers ({remedy}) or declare it numeric with "
            "nominal_features; if they are codes, declare them nominal to "
            "silence this warning."
        )
    else:
        message = (
            f"{where} holds numbers written as text in {numbers.size} of the "
            f"{observed.size} rows where it is observed (e.g. {texts[0]!r}), "
            "and text that is not a number: "
            f"{_listed_values(raw, lambda v: _as_number(v) is None)} (rows "
            "counted from 0). The "
            f"column is therefore taken as nominal, with {distinct} "
            "categories: its numbers lose their order and size. If it is a "
            f"measurement, make it numeric before fitting: {remedy} turns "
            "the text into missing entries (NaN), or replace the text by the "
            "number it stands for (e.g. a detection limit); if it is nominal, "
            "declare it with nominal_features to silence this warning."
        )
    warnings.warn(message, UserWarning, stacklevel=user_stacklevel())


def encode_table(estimator: Any, X: Any, *, reset: bool) -> Any:
    """Code the nominal columns of ``X`` as category codes (NaN if missing).

    At ``reset`` decides the columns' kinds from ``estimator.nominal_features``
    and records them (``estimator.is_nominal_``,
    ``estimator.nominal_categories_`` and a private :class:`TableEncoding`);
    otherwise applies the recorded coding, with ``estimator.handle_unknown``
    deciding what an unseen category becomes.

    Returns
    -------
    X : array-like
        ``X`` itself when no column needs coding; otherwise a float64 array,
        or a DataFrame of float64 columns with the same names when ``X`` was a
        DataFrame (so that scikit-learn's validation records the names).
    """
    if not reset:
        # Names first: the table's coding goes by position, so columns
        # reordered since fit must be reported as such, not as the values
        # of one column failing another's coding.
        from ._sklearn_compat import _check_feature_names

        _check_feature_names(estimator, X, reset=False)
    if reset:
        encoding = _fit_encoding(estimator, X)
        estimator._table_encoding = encoding
        if encoding is not None:
            estimator.is_nominal_ = encoding.nominal
            estimator.nominal_categories_ = encoding.categories
    encoding = getattr(estimator, "_table_encoding", None)
    if encoding is None or encoding.trivial:
        return X
    return _apply(estimator, encoding, X)


def nominal_candidates(estimator: Any, X: Any) -> np.ndarray:
    """Per column of ``X``, whether fitting the coding reads its values: a
    column not numeric by its dtype, or declared nominal by the estimator's
    ``nominal_features``. Reads the dtypes and names only (``X`` may hold no
    row, e.g. a dask DataFrame's empty meta)."""
    _, names, hints = _columns_of(X)
    candidates = np.array([hint != "numeric" for hint in hints], dtype=bool)
    wanted = _wanted_nominal(
        estimator, getattr(estimator, "nominal_features", FROM_DTYPE), names, hints
    )
    return candidates if wanted is None else candidates | wanted


def _first_occurrences(col: Any, hint: str | None) -> np.ndarray:
    """Positions of the first occurrence of each distinct observed value."""
    if hint in ("categorical", "ordered"):
        values = np.asarray(col.cat.codes.to_numpy())
        observed = np.flatnonzero(values >= 0)
    else:
        raw = col.to_numpy() if hasattr(col, "to_numpy") else np.asarray(col)
        if raw.dtype.kind in "biuf":
            values = raw.astype(np.float64)
            observed = np.flatnonzero(~np.isnan(values))
        else:
            raw = np.asarray(raw, dtype=object)
            observed = np.flatnonzero(~_missing_mask(raw))
            first: dict[Any, int] = {}
            for i in observed:
                first.setdefault(_key(raw[i]), int(i))
            return np.fromiter(first.values(), dtype=np.intp, count=len(first))
    _, where = np.unique(values[observed], return_index=True)
    return observed[np.sort(where)]


def distinct_rows(X: Any, candidates: np.ndarray) -> Any:
    """The rows of ``X`` (a pandas DataFrame or a 2-D array) that fitting
    the coding needs: in each candidate column (:func:`nominal_candidates`)
    its distinct observed values, in the others their first entry, each
    column's values repeated to the same length. The coding fitted on them
    is the one fitted on ``X``; so is the one fitted on the rows of several
    blocks' results stacked (:func:`merge_distinct_rows`)."""
    frame = _is_frame(X)
    values, _, hints = _columns_of(X if frame else X[:0])
    n = X.shape[0]
    positions = []
    for j, hint in enumerate(hints):
        col = values[j] if frame else X[:, j]
        found = _first_occurrences(col, hint) if candidates[j] else np.zeros(0)
        # (no value: the first entry, missing or not, keeps the dtype)
        positions.append(found if len(found) else np.zeros(min(n, 1), np.intp))
    length = max((len(p) for p in positions), default=0)
    if frame:
        import pandas as pd

        columns = [
            X.iloc[np.resize(p, length), j].reset_index(drop=True)
            for j, p in enumerate(positions)
        ]
        out = pd.concat(columns, axis=1) if columns else X.iloc[:0]
        out.columns = X.columns
        return out
    columns = [X[np.resize(p, length), j] for j, p in enumerate(positions)]
    return np.stack(columns, axis=1) if columns else X[:0]


def merge_distinct_rows(parts: list[Any], candidates: np.ndarray) -> Any:
    """:func:`distinct_rows` of the blocks' :func:`distinct_rows` stacked
    (pandas categoricals on the union of their blocks' categories: sorted
    when unordered, so that the order of the blocks does not matter)."""
    if not _is_frame(parts[0]):
        return distinct_rows(np.concatenate(parts, axis=0), candidates)
    import pandas as pd

    parts = [p.copy() for p in parts]
    for name in parts[0].columns:
        dtypes = [p[name].dtype for p in parts]
        if all(getattr(t, "name", "") == "category" for t in dtypes):
            union = list(dict.fromkeys(c for t in dtypes for c in t.categories))
            ordered = bool(dtypes[0].ordered)
            if not ordered and any(list(t.categories) != union for t in dtypes):
                union = list(_sort_labels(union))
            kind = pd.CategoricalDtype(union, ordered=ordered)
            for p in parts:
                p[name] = p[name].astype(kind)
    return distinct_rows(pd.concat(parts, ignore_index=True), candidates)


def _fit_encoding(estimator: Any, X: Any) -> TableEncoding | None:
    values, names, hints = _columns_of(X)
    if not hints:  # not 2-D: validation will say so
        return None
    wanted = _wanted_nominal(
        estimator, getattr(estimator, "nominal_features", FROM_DTYPE), names, hints
    )
    columns = []
    for j, (col, hint) in enumerate(zip(values, hints, strict=True)):
        nominal = None if wanted is None else bool(wanted[j])
        if col is None:  # a column of a numeric ndarray
            if nominal:
                raw = np.asarray(X)[:, j].astype(np.float64)
                labels = np.unique(raw[~np.isnan(raw)])
                cats = np.empty(len(labels), dtype=object)
                cats[:] = labels.tolist()
                columns.append(_Column("nominal", cats))
            else:
                columns.append(_Column("numeric"))
            continue
        where = f"{type(estimator).__name__}: " + describe_features(estimator, j)
        if names[j] is not None:
            where = f"{type(estimator).__name__}: feature {names[j]!r}"
        columns.append(_fit_column(col, hint, nominal, where, names[j]))
    return TableEncoding(tuple(columns))


def _apply(estimator: Any, encoding: TableEncoding, X: Any) -> Any:
    values, _, hints = _columns_of(X)
    d = len(encoding.columns)
    if len(hints) != d:
        return X  # the feature-count check of the validation reports it
    frame = _is_frame(X)
    out = np.empty((len(values[0]) if values[0] is not None else len(X), d))
    if not frame:
        A = np.asarray(X)
    for j, column in enumerate(encoding.columns):
        col = values[j] if values[j] is not None else A[:, j]
        if column.kind == "numeric":
            out[:, j] = _numeric(col, hints[j])
            continue
        assert column.categories is not None
        out[:, j] = _codes(estimator, j, column, col, hints[j])
    if frame:
        import pandas as pd

        return pd.DataFrame(out, columns=X.columns, index=X.index)
    return out


def _numeric(col: Any, hint: str | None) -> np.ndarray:
    if hint in ("categorical", "ordered"):
        # Numeric labels (checked at fit): their values, whatever the order
        # of the levels.
        return np.asarray(col.astype(np.float64).to_numpy(), dtype=np.float64)
    if hasattr(col, "to_numpy"):
        try:
            return np.asarray(col.to_numpy(dtype=np.float64, na_value=np.nan))
        except (TypeError, ValueError):
            col = col.to_numpy(dtype=object)
    arr = np.asarray(col)
    if arr.dtype.kind == "O":
        missing = _missing_mask(arr)
        result = np.full(len(arr), np.nan)
        # float() raises for what cannot be a number: validation reports it.
        result[~missing] = [float(v) for v in arr[~missing]]
        return result
    return arr.astype(np.float64)


def _codes(
    estimator: Any, j: int, column: _Column, col: Any, hint: str | None
) -> np.ndarray:
    """Category codes of a nominal column; unseen labels per handle_unknown."""
    assert column.categories is not None
    if hint in ("categorical", "ordered"):
        raw = np.asarray(col.astype(object).to_numpy(), dtype=object)
    elif hasattr(col, "to_numpy"):
        raw = np.asarray(col.to_numpy(dtype=object), dtype=object)
    else:
        raw = np.asarray(col, dtype=object)
    missing = _missing_mask(raw)
    lookup = {_key(v): c for c, v in enumerate(column.categories)}
    codes = np.full(len(raw), np.nan)
    unknown = []
    for i in np.flatnonzero(~missing):
        code = lookup.get(_key(raw[i]))
        if code is None:
            unknown.append(i)
        else:
            codes[i] = code
    if unknown:
        _unknown(estimator, j, column, raw[unknown])
    return codes


def _unknown(estimator: Any, j: int, column: _Column, values: np.ndarray) -> None:
    assert column.categories is not None
    seen = [_label(v) for v in column.categories]
    policy = getattr(estimator, "handle_unknown", "error")
    where = f"{type(estimator).__name__}: {describe_features(estimator, j)}"
    if policy == "missing":
        warn_unseen(where, list(values), seen)
        return
    raise ValueError(
        f"{_unseen_text(where, list(values), seen)}. Set handle_unknown="
        "'missing' to treat unseen categories as missing entries, or refit "
        "with rows that contain them."
    )


def _unseen_text(where: str, values: list, seen: list) -> str:
    shown = list(dict.fromkeys(_label(v) for v in values))[:5]
    more = " ..." if len(seen) > 10 else ""
    # No count of rows: the same unseen values give the same message in every
    # fold of a grid search.
    return (
        f"{where} holds value(s) not seen in the training rows ({shown}; "
        f"seen: {[_label(v) for v in seen[:10]]}{more})"
    )


#: The (column, value) pairs :func:`warn_unseen` has shown, by filter scope,
#: while warnings go to ``_SINK[0]`` (Python's functions that show or record
#: them: a new ``catch_warnings(record=True)``, as R's bridge and pytest open
#: per call, starts afresh).
_SHOWN: dict[tuple, None] = {}
_SINK: list[Any] = [None]


def warn_unseen(where: str, values: list, seen: list) -> None:
    """Warn that ``values`` of the column ``where`` (``"Estimator: feature
    'x'"``) were not seen in training and are treated as missing.

    Shown once per distinct (``where``, value) and place where Python's
    filters would show a warning once (the actions ``"default"``,
    ``"module"`` and ``"once"``): scikit-learn's parallel tasks reset
    Python's own memory of the warnings shown at every task, which repeated
    the warning for every fit of a grid search. The memory starts afresh
    when warnings go elsewhere (a new ``catch_warnings(record=True)``, as R's
    bridge opens for every call). Other actions (``"always"``, ``"error"``,
    ``"ignore"``) apply as usual.
    """
    level = user_stacklevel()

    def message(unseen: list) -> str:
        return (
            f"{_unseen_text(where, unseen, seen)}; they are treated as missing "
            "(handle_unknown='missing'): the kernel averages over the fitted "
            "distribution of the column."
        )

    text = message(values)
    frame: Any = sys._getframe(0)
    for _ in range(level - 1):  # to the line warnings.warn points at
        if frame.f_back is None:  # no caller outside the package
            break
        frame = frame.f_back
    action = _filter_action(UnknownCategoryWarning, text, frame)
    if action in ("default", "module", "once"):
        scope: tuple = (where,)
        if action == "default":
            scope += (frame.f_code.co_filename, frame.f_lineno)
        elif action == "module":
            scope += (frame.f_globals.get("__name__", ""),)
        sink = (warnings.showwarning, getattr(warnings, "_showwarnmsg_impl", None))
        last = _SINK[0]
        if last is None or any(a is not b for a, b in zip(sink, last, strict=True)):
            _SHOWN.clear()  # shown elsewhere: a recorder that is gone
            _SINK[0] = sink
        new = [v for v in dict.fromkeys(map(_key, values)) if (scope, v) not in _SHOWN]
        if not new:
            return
        if len(_SHOWN) > 10_000:  # a long session: forget rather than grow
            _SHOWN.clear()
        _SHOWN.update(dict.fromkeys((scope, v) for v in new))
        wanted = set(new)
        text = message([v for v in values if _key(v) in wanted])
    warnings.warn(text, UnknownCategoryWarning, stacklevel=level)


def _pattern(pattern: Any, flags: int) -> Any:
    """A filter's message or module pattern, compiled (filterwarnings
    compiles them; a filter set by hand may hold a string)."""
    return re.compile(pattern, flags) if isinstance(pattern, str) else pattern


def _filter_action(category: type[Warning], text: str, frame: Any) -> str:
    """The action of the first of Python's warning filters that matches a
    warning ``category`` with message ``text`` raised at ``frame``."""
    module = str(frame.f_globals.get("__name__", ""))
    for action, message, cat, mod, lineno in warnings.filters:
        if message is not None and not _pattern(message, re.I).match(text):
            continue
        if not issubclass(category, cat):
            continue
        if mod is not None and not _pattern(mod, 0).match(module):
            continue
        if lineno and lineno != frame.f_lineno:
            continue
        return str(action)
    return str(getattr(warnings, "defaultaction", "default"))
