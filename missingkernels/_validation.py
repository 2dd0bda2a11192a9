"""Input validation shared by densities, kernels and estimators."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

#: ``encode(estimator, X, reset=...)``: a table's coding, applied before the
#: numeric validation (see :func:`missingkernels._table_encoding.encode_table`).
Encoder = Callable[..., Any]


def feature_names(estimator: Any) -> np.ndarray | None:
    """The column names ``estimator`` knows, or None.

    Its own ``feature_names_in_`` (fitted on a DataFrame), else the names its
    parent passed down with :func:`pass_feature_names` (a kernel fitted by an
    SVM on the SVM's validated array, a density fitted by a kernel).

    Parameters
    ----------
    estimator : object
        Any object (a fitted or unfitted estimator, or None).

    Returns
    -------
    names : ndarray of str objects, or None

    Examples
    --------
    >>> import pandas as pd
    >>> from missingkernels import get_density
    >>> from missingkernels.utils import feature_names
    >>> X = pd.DataFrame({"age": [30.0, None, 50.0], "bmi": [21.0, 24.0, None]})
    >>> feature_names(get_density("gaussian_em").fit(X)).tolist()
    ['age', 'bmi']
    """
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        names = getattr(estimator, "_feature_names_hint", None)
    return None if names is None else np.asarray(names, dtype=object)


def pass_feature_names(parent: Any, child: Any) -> None:
    """Let ``child`` name the columns in its messages as ``parent`` does.

    For an estimator that fits ``child`` on its validated array (without the
    DataFrame's column names): the names are kept in a private attribute,
    which scikit-learn's feature-name checks do not read, so the child
    accepts arrays as before.
    """
    names = feature_names(parent)
    if names is not None:
        child._feature_names_hint = names
    elif hasattr(child, "_feature_names_hint"):
        del child._feature_names_hint


def describe_features(estimator: Any, indices: Any, *, limit: int = 8) -> str:
    """The columns ``indices`` as a message names them.

    By name when ``estimator`` knows the column names (see
    :func:`feature_names`): ``"feature 'age'"``, ``"features 'age', 'income'"``;
    else by position, saying that it counts from 0: ``"column 2 (0-based)"``,
    ``"columns 0, 2 (0-based)"``. At most ``limit`` are listed, then
    ``"and N more"``. Every message that names columns uses this helper (the
    R front end translates the positional form into R's column names).

    Parameters
    ----------
    estimator : object
        The estimator whose input the indices refer to, or None.
    indices : int or array-like of int
        0-based column indices.
    limit : int, default=8

    Returns
    -------
    label : str

    Examples
    --------
    >>> from missingkernels.utils import describe_features
    >>> describe_features(None, [0, 2])
    'columns 0, 2 (0-based)'
    """
    array = np.atleast_1d(np.asarray(indices))
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"indices must be column indices (ints), got {indices!r}.")
    idx = [int(j) for j in array.ravel()]
    names = feature_names(estimator)
    shown = idx[:limit]
    more = f" and {len(idx) - limit} more" if len(idx) > limit else ""
    plural = "s" if len(idx) != 1 else ""
    if names is not None and all(0 <= j < len(names) for j in idx):
        listed = ", ".join(repr(str(names[j])) for j in shown)
        return f"feature{plural} {listed}{more}"
    listed = ", ".join(str(j) for j in shown)
    return f"column{plural} {listed}{more} (0-based)"


# Kernels and densities square values and differences: keep both inside the
# normal float64 range (about 1e-308 .. 1e308) with room for sums over
# features and rows.
_LARGEST = 2.0**480  # about 3e144
_SMALLEST_SPREAD = 2.0**-480  # about 3e-145


def _check_range(estimator: Any, X: np.ndarray) -> None:
    """ValueError when a feature's values or spread leave float64's squares."""
    if X.size == 0:
        return
    missing = np.isnan(X)
    hi = np.where(missing, -np.inf, X).max(axis=0)
    lo = np.where(missing, np.inf, X).min(axis=0)
    check_range_summary(estimator, hi, lo)


#: What the range errors advise by default (the estimators' case).
_RESCALE = (
    "Rescale these features, e.g. with sklearn.preprocessing.StandardScaler in "
    "a Pipeline (fitted on the training rows only); gamma='scale' adapts to the "
    "new scale."
)


def check_range_summary(
    estimator: Any,
    hi: np.ndarray,
    lo: np.ndarray,
    *,
    name: str | None = None,
    who: str = "The kernels and densities",
    remedy: str = _RESCALE,
) -> None:
    """:func:`_check_range` from each feature's largest and smallest observed
    value (``-inf``/``inf`` for a feature never observed).

    What a blockwise (dask) validation reduces its blocks to. ``name`` (the
    estimator's class name by default) opens the message, ``who`` says what
    squares the values, ``remedy`` what to do.
    """
    size = np.maximum(
        np.where(np.isfinite(hi), np.abs(hi), 0.0),
        np.where(np.isfinite(lo), np.abs(lo), 0.0),
    )
    with np.errstate(invalid="ignore", over="ignore"):
        spread = np.where(hi > lo, hi - lo, 0.0)
    name = name or type(estimator).__name__
    large = np.flatnonzero(size > _LARGEST)
    if large.size:
        raise ValueError(
            f"{name}: values as large as {size[large].max():.3g} in absolute "
            f"value in {describe_features(estimator, large)}. {who} square "
            "values and differences, which overflows float64 above about "
            f"1e154 and loses the result. {remedy}"
        )
    tiny = np.flatnonzero((spread > 0) & (spread < _SMALLEST_SPREAD))
    if tiny.size:
        raise ValueError(
            f"{name}: the observed values of {describe_features(estimator, tiny)} "
            f"vary by at most {spread[tiny].max():.3g} (largest minus smallest). "
            f"{who} square differences, which underflow float64 below about "
            f"1e-154 and would make these features look constant. {remedy}"
        )


def check_observed_columns(estimator: Any, counts: np.ndarray, n_rows: int) -> None:
    """ValueError naming the features with no observed entry (``counts == 0``)
    among ``n_rows`` training rows."""
    empty = np.flatnonzero(np.asarray(counts) == 0)
    if empty.size:
        raise ValueError(
            f"{type(estimator).__name__}: no training row has a value for "
            f"{describe_features(estimator, empty)} (missing in every one of "
            f"the {n_rows} rows), so nothing can be learned about it. Drop "
            "such columns before fitting."
        )


#: Fewest training rows in which a feature must be observed to be used by a
#: kernel, its density or a baseline; sparser features are dropped at fit (see
#: :func:`sparse_features`). Two values are the fewest that carry a spread: a
#: feature observed once, or never, says nothing about how its values vary
#: or relate to the others (and in the inner folds of a grid search a feature
#: observed in a handful of rows is often observed in none).
MIN_OBSERVED = 2


class DroppedFeaturesWarning(UserWarning):
    """Training rows left features (almost) unobserved; they were dropped."""


class FeatureScaleWarning(UserWarning):
    """The numeric features' spreads differ so much that one RBF width cannot
    suit them all: standardise them."""


#: Largest ratio of two numeric features' standard deviations accepted
#: without a :class:`FeatureScaleWarning`.
SCALE_RATIO = 100.0


def warn_unscaled(estimator: Any, X: np.ndarray, nominal: Any = None) -> None:
    """Warn when the observed standard deviations of the numeric columns of
    the training rows ``X`` differ by more than :data:`SCALE_RATIO`."""
    columns = np.arange(X.shape[1])
    if nominal is not None:
        columns = columns[~np.asarray(nominal, dtype=bool)]
    if columns.size < 2:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        sd = np.nanstd(X[:, columns], axis=0)
    ok = np.isfinite(sd) & (sd > 0)
    if ok.sum() < 2:
        return
    cols, sd = columns[ok], sd[ok]
    hi, lo = int(np.argmax(sd)), int(np.argmin(sd))
    if sd[hi] <= SCALE_RATIO * sd[lo]:
        return
    warnings.warn(
        f"{type(estimator).__name__}: the numeric features' standard deviations "
        f"range from {sd[lo]:.3g} ({describe_features(estimator, cols[lo])}) to "
        f"{sd[hi]:.3g} ({describe_features(estimator, cols[hi])}); one RBF "
        "width cannot suit both, and the widest features decide the kernel. "
        "Standardise them on the training rows, e.g. "
        "make_pipeline(StandardScaler(), ...) (it keeps NaN as missing).",
        FeatureScaleWarning,
        stacklevel=4,
    )


def sparse_features(X: np.ndarray, min_observed: int = MIN_OBSERVED) -> np.ndarray:
    """The 0-based indices of the columns of ``X`` (NaN for missing) observed
    in fewer than ``min_observed`` rows."""
    counts = (~np.isnan(X)).sum(axis=0)
    return np.flatnonzero(counts < min_observed)


def drop_sparse_features(
    estimator: Any, X: np.ndarray, min_observed: int = MIN_OBSERVED
) -> tuple[np.ndarray, np.ndarray | None]:
    """Find the training columns too sparse to learn from, warn, record them.

    Sets ``estimator.dropped_features_`` (0-based indices into the columns
    the estimator was fitted on; ``feature_names_in_[dropped_features_]``
    names them) and warns once with a :class:`DroppedFeaturesWarning` naming
    them. ValueError when no column is left.

    Returns
    -------
    X_kept : ndarray
        ``X`` without the dropped columns (``X`` itself when none is dropped).
    kept : ndarray of int or None
        The indices of the kept columns; None when none is dropped.
    """
    dropped = sparse_features(X, min_observed)
    estimator.dropped_features_ = dropped
    if dropped.size == 0:
        return X, None
    counts = (~np.isnan(X[:, dropped])).sum(axis=0)
    warn_dropped_features(estimator, dropped, counts, X.shape, min_observed)
    kept = np.setdiff1d(np.arange(X.shape[1]), dropped)
    return np.ascontiguousarray(X[:, kept]), kept


def warn_dropped_features(
    estimator: Any,
    dropped: np.ndarray,
    counts: np.ndarray,
    shape: tuple[int, int],
    min_observed: int = MIN_OBSERVED,
    *,
    name: str | None = None,
) -> None:
    """The :class:`DroppedFeaturesWarning` of :func:`drop_sparse_features`
    (``counts``: the observed values of the ``dropped`` features among the
    ``shape[0]`` training rows), or its ValueError when every one of the
    ``shape[1]`` features is dropped. ``name``: the estimator's, by default
    its class name."""
    n_rows = shape[0]
    name = name or type(estimator).__name__
    if dropped.size == shape[1]:
        raise ValueError(
            f"{name}: no feature is observed in at least {min_observed} of the "
            f"{n_rows} training rows, so nothing can be learned from them "
            f"(observed values per feature: {counts.tolist()})."
        )
    import warnings

    warnings.warn(
        f"{name}: dropped {describe_features(estimator, dropped)}, observed in "
        f"fewer than {min_observed} of the {n_rows} training rows "
        f"(observed values: {', '.join(str(int(c)) for c in counts)}): they "
        "carry no information; the values of new rows in them are ignored. "
        "The fitted attribute dropped_features_ lists them.",
        DroppedFeaturesWarning,
        stacklevel=4,
    )


def dropped_features(fitted: Any) -> np.ndarray:
    """``fitted.dropped_features_``, or no index for an estimator (e.g. a
    plugin's kernel) that does not drop features."""
    dropped = getattr(fitted, "dropped_features_", None)
    return np.zeros(0, dtype=np.intp) if dropped is None else dropped


def subset_feature_names(parent: Any, child: Any, kept: np.ndarray | None) -> None:
    """:func:`pass_feature_names` for a child fitted on the columns ``kept``
    of the parent's input (all of them when None)."""
    pass_feature_names(parent, child)
    names = getattr(child, "_feature_names_hint", None)
    if names is not None and kept is not None:
        child._feature_names_hint = np.asarray(names, dtype=object)[kept]


def validate_missing_data(
    estimator: Any,
    X: Any,
    *,
    reset: bool,
    min_samples: int = 1,
    require_observed_columns: bool | None = None,
    encode: Encoder | None = None,
) -> np.ndarray:
    """Validate X with NaN for missing entries and return it as float64.

    Parameters
    ----------
    estimator : BaseEstimator
        Receives ``n_features_in_`` (and ``feature_names_in_``) when
        ``reset=True``; is checked against them otherwise.
    X : array-like of shape (n_samples, n_features)
        Numeric; NaN marks missing entries; inf is an error.
    reset : bool
        True at fit time, False when transforming or scoring new rows.
    min_samples : int, default=1
        Fewest rows accepted.
    require_observed_columns : bool, optional
        Reject features missing in every row. Defaults to ``reset`` (a density
        cannot learn a feature it never saw; new rows may be fully missing).
    encode : callable, optional
        ``encode(estimator, X, reset=reset)``, applied first: the estimators
        that take mixed-type tables pass
        :func:`missingkernels._table_encoding.encode_table`.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
    """
    return _validate(
        estimator, X, None, reset, min_samples, require_observed_columns,
        encode=encode,
    )  # fmt: skip


def validate_missing_data_xy(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    task: str,
    min_samples: int = 2,
    require_observed_columns: bool = True,
    encode: Encoder | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Validate training X (NaN allowed) and a finite 1D target y.

    Parameters
    ----------
    estimator : BaseEstimator
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        No NaN or inf.
    task : {"classification", "regression"}
        Classification needs at least two classes; regression a numeric y.
    min_samples : int, default=2
    require_observed_columns : bool, default=True
        Reject features missing in every row (False for an estimator whose
        kernel drops them, see :func:`drop_sparse_features`).
    encode : callable, optional
        As in :func:`validate_missing_data`.

    Returns
    -------
    X : ndarray of float64
    y : ndarray
    """
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, but the target y "
            "is None."
        )
    return _validate(
        estimator, X, y, True, min_samples, require_observed_columns,
        task=task, encode=encode,
    )  # fmt: skip


def _validate(
    estimator: Any,
    X: Any,
    y: Any,
    reset: bool,
    min_samples: int,
    require_observed_columns: bool | None,
    task: str | None = None,
    encode: Encoder | None = None,
) -> Any:
    if not reset:
        check_is_fitted(estimator)
    if require_observed_columns is None:
        require_observed_columns = reset
    if y is not None:
        check_target_missing(estimator, y)
    if y is not None and task == "regression":
        check_numeric_target(estimator, y)
    original = X
    if encode is not None:
        # A table's nominal columns become category codes first.
        X = encode(estimator, X, reset=reset)
    try:
        if y is None:
            X = validate_data(
                estimator,
                X,
                reset=reset,
                dtype=np.float64,
                ensure_all_finite="allow-nan",
                ensure_min_samples=min_samples,
            )
        else:
            X, y = validate_data(
                estimator,
                X,
                y,
                reset=reset,
                dtype=np.float64,
                ensure_all_finite="allow-nan",
                ensure_min_samples=min_samples,
                y_numeric=task == "regression",
            )
    except ValueError as exc:
        if "could not convert" in str(exc) or "Unable to convert" in str(exc):
            where = first_text_cell(estimator, original, reset)
            raise ValueError(
                f"{type(estimator).__name__} needs numeric X (NaN for missing "
                f"entries); {where or exc}. Nominal (string or categorical) "
                "columns are "
                "taken by the estimators with a nominal_features parameter "
                "(MissingKernelSVC, MissingKernelSVR, MissingKernelTransformer, "
                "the mixed kernels and the 'latent_class' density); otherwise "
                "encode them as numbers first (e.g. with "
                "sklearn.preprocessing.OneHotEncoder)."
            ) from exc
        if "infinity" in str(exc) and "Input y" not in str(exc):
            cell = _first_infinite_cell(X)
            raise ValueError(infinite_value_message(estimator, *cell)) from exc
        raise
    if require_observed_columns and X.shape[0] > 0:
        check_observed_columns(estimator, (~np.isnan(X)).sum(axis=0), X.shape[0])
    _check_range(estimator, X)
    if y is None:
        return X
    if task == "classification":
        check_classification_targets(y)
        n_classes = np.unique(y).size
        if n_classes < 2:
            raise ValueError(
                f"{type(estimator).__name__} needs at least 2 classes in y; got "
                f"{n_classes} class. Check the target column or the split."
            )
    return X, y


def check_sample_weight(estimator: Any, sample_weight: Any, n_rows: int) -> Any:
    """``sample_weight`` as float64 of shape ``(n_rows,)``, or None.

    ValueError, saying what was wrong, for a weight that is NaN, infinite or
    negative, a wrong length, or weights that are all zero (libsvm would
    otherwise drop or misuse such rows without a word).
    """
    if sample_weight is None:
        return None
    name = type(estimator).__name__
    if np.isscalar(sample_weight):
        sample_weight = np.full(n_rows, sample_weight)
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name}: sample_weight must be numbers, one per training row; {exc}."
        ) from exc
    if w.ndim != 1 or w.shape[0] != n_rows:
        raise ValueError(
            f"{name}: sample_weight has shape {w.shape}, but X has {n_rows} "
            f"rows: give one weight per row, shape ({n_rows},)."
        )
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise ValueError(
            f"{name}: sample_weight is NaN or infinite at row(s) "
            f"{bad[:8].tolist()}{' ...' if bad.size > 8 else ''} (0-based); "
            "every weight must be a finite number >= 0."
        )
    negative = np.flatnonzero(w < 0)
    if negative.size:
        raise ValueError(
            f"{name}: sample_weight is negative at row(s) "
            f"{negative[:8].tolist()}{' ...' if negative.size > 8 else ''} "
            f"(0-based; e.g. {w[negative[0]]:g}); weights must be >= 0 (0 "
            "leaves a row out of the loss)."
        )
    if n_rows and not np.any(w > 0):
        raise ValueError(
            f"{name}: every sample_weight is zero, so no row is left to learn from."
        )
    return w


def _missing_labels(y: Any) -> np.ndarray | None:
    """0-based positions of the missing entries (None, NaN, pandas' NA or
    NaT) of a 1-D target, or None for a target that is not 1-D (a column
    vector counts as 1-D): scikit-learn's validation reports its shape."""
    try:
        values = np.asarray(y)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            return None
        if values.dtype.kind in "fc":
            return np.flatnonzero(np.isnan(values))
        if values.dtype.kind != "O":  # integers, booleans, fixed-width text
            return np.zeros(0, dtype=np.intp)
    except Exception:  # an unusual container: the validation will say
        return None
    return np.flatnonzero(missing_objects(values, empty_string=False))


def missing_objects(values: np.ndarray, *, empty_string: bool) -> np.ndarray:
    """True for None, NaN, pandas' NA/NaT (and, with ``empty_string``, the
    empty string) in a 1-D object array: the missing entries of a text column
    or of a target."""
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        if v is None or (empty_string and isinstance(v, str) and v == ""):
            out[i] = True
            continue
        try:
            out[i] = bool(v != v)  # NaN, NaT
        except (TypeError, ValueError):  # pd.NA: its comparisons are ambiguous
            out[i] = True
    return out


def check_target_missing(estimator: Any, y: Any) -> None:
    """ValueError naming the rows where the target ``y`` is missing.

    scikit-learn says "Input contains NaN" for a text target with NaN, which
    reads as if X were at fault, and fails on ``None`` in an object target
    with a message about label types; neither says that the target has
    missing entries, nor where. The estimators model missing values in X
    only: a row without a target has nothing to learn from.
    """
    rows = _missing_labels(y)
    if rows is None or rows.size == 0:
        return
    n = rows.size
    shown = ", ".join(str(i) for i in rows[:8]) + (" ..." if n > 8 else "")
    what = "value" if n == 1 else "values"
    raise ValueError(
        f"{type(estimator).__name__}: the target y has {n} missing {what} "
        f"(None or NaN) among its {np.shape(y)[0]} rows, at "
        f"{'row' if n == 1 else 'rows'} {shown} (0-based). Missing values are "
        "modelled in X only: drop the rows without a target before fitting, "
        "e.g. keep = y.notna(); X, y = X[keep], y[keep] (pandas), or "
        "keep = ~pd.isna(y) for an array."
    )


def check_numeric_target(estimator: Any, y: Any) -> None:
    """ValueError naming the problem when a regression target is not numbers."""
    try:
        np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{type(estimator).__name__} needs a numeric target y; {exc}. For "
            "class labels use the classifier (MissingKernelSVC)."
        ) from exc


def first_text_cell(estimator: Any, X: Any, reset: bool) -> str | None:
    """Where the first value that is not a number sits in X, for messages:
    ``"feature 'b' holds 'q' (row 0, 0-based)"``; None if not found."""
    try:
        if hasattr(X, "iloc") and hasattr(X, "columns"):
            columns = [X.iloc[:, j].to_numpy(dtype=object) for j in range(X.shape[1])]
        else:
            A = np.asarray(X, dtype=object)
            if A.ndim != 2:
                return None
            columns = [A[:, j] for j in range(A.shape[1])]
    except Exception:  # an unusual container: the raw message will do
        return None
    for j, col in enumerate(columns):
        for i, v in enumerate(col):
            if v is None:
                continue
            try:
                float(v)
            except (TypeError, ValueError):
                nominal = getattr(estimator, "is_nominal_", None)
                was = ""
                if nominal is not None and j < len(nominal) and not nominal[j]:
                    was = (
                        ", a column declared numeric by nominal_features"
                        if reset
                        else ", a numeric column in the training rows"
                    )
                return (
                    f"{describe_features(estimator, j)} holds {v!r} (row {i}, "
                    f"0-based{was})"
                )
    return None


def _first_infinite_cell(X: Any) -> tuple[int, int] | tuple[()]:
    try:
        A = np.asarray(X, dtype=np.float64)
        i, j = (int(k[0]) for k in np.nonzero(np.isinf(A)))
    except Exception:
        return ()
    return i, j


def infinite_value_message(
    estimator: Any, row: int | None = None, column: int | None = None
) -> str:
    """The error for an infinite entry of X (at ``row``, ``column`` if known)."""
    where = "somewhere in X"
    if row is not None and column is not None:
        where = f"{describe_features(estimator, column)}, row {row} (0-based)"
    return (
        f"{type(estimator).__name__}: X holds an infinite value ({where}). NaN "
        "marks a missing entry; an infinity is neither missing nor a value a "
        "kernel can use: replace it by NaN or by a finite number."
    )


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first frame
    outside missingkernels, scikit-learn and joblib: the user's line (e.g.
    ``search.fit(X, y)``), not the package's internals. Call it in the
    function that calls :func:`warnings.warn`."""
    import os
    import sys

    import joblib
    import sklearn

    inside = tuple(
        os.path.dirname(os.path.abspath(str(m.__file__))) + os.sep
        for m in (sys.modules[__package__ or "missingkernels"], sklearn, joblib)
        if getattr(m, "__file__", None)
    )
    frame: Any = sys._getframe(1)  # the function calling warnings.warn
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
        inside
    ):
        frame = frame.f_back
        level += 1
    return level
