"""Nested cross-validation of one cell of the method comparisons.

One *cell* is (dataset, mechanism, rate, draw, outer fold, method). A cell
tunes the method's hyperparameters by an inner k-fold grid search on the
outer training rows, refits on all of them and scores the outer test rows.
Every scaler, imputer and density is fitted on the training rows of the fit
at hand (inner or outer); the Gram matrix of each (fit, gamma) is computed
once and reused for every value of C.
"""

from __future__ import annotations

import json
import math
import re
import time
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import accuracy_score, balanced_accuracy_score, r2_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from .._registry import _RENAMED
from ._imputation import DropSparseFeatures, MixedTableImputer
from ._methods import MethodSpec

_METRICS: dict[str, Callable[[Any, Any], float]] = {
    "accuracy": accuracy_score,
    "balanced_accuracy": balanced_accuracy_score,
    "r2": r2_score,
}
_TASK_METRICS = {
    "classification": ("accuracy", "balanced_accuracy"),
    "regression": ("r2",),
}


@dataclass
class _Cell:
    dataset: str
    mechanism: str
    rate: float
    draw: int
    fold: int
    method: str

    def key(self) -> tuple:
        return (
            self.dataset,
            self.mechanism,
            _rate_key(self.rate),
            self.draw,
            self.fold,
            self.method,
        )


@dataclass
class _Prepared:
    """A method fitted (up to the SVM) on training rows."""

    gram: Callable[[np.ndarray, Any], tuple[np.ndarray, np.ndarray]]


# A renamed method keeps the seeds of its old name, so that its results do not
# change with the name (e.g. the baseline "iterative", formerly "mice").
_SEED_NAMES = {new: old for (_, old), (new, _) in _RENAMED.items()}


def _rate_key(rate: float) -> str:
    return f"{float(rate):.6g}"


def _seed(random_state: int, *parts: Any) -> int:
    """A seed that depends only on ``random_state`` and the named parts."""
    tag = zlib.crc32("|".join(str(p) for p in parts).encode())
    return int(np.random.SeedSequence([int(random_state), tag]).generate_state(1)[0])


def _splitter(task: str, n_splits: int, seed: int) -> Any:
    cls = StratifiedKFold if task == "classification" else KFold
    return cls(n_splits=n_splits, shuffle=True, random_state=seed)


def _svm(task: str, C: float, class_weight: Any = None) -> Any:
    if task == "classification":
        return SVC(kernel="precomputed", C=C, class_weight=class_weight)
    return SVR(kernel="precomputed", C=C)


def _fit_predict(
    task: str,
    C: float,
    K_train: np.ndarray,
    y: np.ndarray,
    K_test: np.ndarray,
    class_weight: Any = None,
) -> np.ndarray:
    if task == "regression":
        # epsilon of SVR is relative to a unit-variance target.
        mu, sd = float(np.mean(y)), float(np.std(y)) or 1.0
        model = _svm(task, C).fit(K_train, (y - mu) / sd)
        return model.predict(K_test) * sd + mu
    return _svm(task, C, class_weight).fit(K_train, y).predict(K_test)


def accepts_class_weight(spec: MethodSpec, task: str) -> bool:
    """Whether ``spec``'s classifier takes ``class_weight``: the SVM of a kernel
    or pipeline method, an estimator with that parameter (e.g. ``"hgb"``)."""
    if task != "classification":
        return False
    if spec.kind in ("kernel", "pipeline"):
        return True
    model = spec.make(task, 0)
    params = model.get_params(deep=False) if hasattr(model, "get_params") else {}
    return "class_weight" in params


# -- warnings ----------------------------------------------------------------

# Numbers in a warning (an iteration, an eigenvalue, a count) do not make it
# another warning.
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass
class _WarningTally:
    """One distinct warning of a comparison and how often it was raised.

    Warnings are told apart by category and text with numbers masked;
    ``text`` is the first one raised.
    """

    category: type[Warning]
    text: str
    count: int = 1
    cells: int = 0
    varies: bool = False  # the numbers in the text differed between raises

    def key(self) -> tuple[str, str]:
        cat = self.category
        return f"{cat.__module__}.{cat.__qualname__}", _NUMBER.sub("#", self.text)

    def merge(self, other: _WarningTally) -> None:
        self.count += other.count
        self.cells += other.cells
        self.varies = self.varies or other.varies or other.text != self.text


def _tally_warnings(
    caught: Sequence[warnings.WarningMessage], cells: int = 0
) -> list[_WarningTally]:
    """Group recorded warnings into :class:`_WarningTally` (``cells`` each)."""
    tallies: dict[tuple[str, str], _WarningTally] = {}
    for record in caught:
        one = _WarningTally(record.category, str(record.message), 1, cells)
        key = one.key()
        if key in tallies:
            tallies[key].count += 1
            tallies[key].varies |= one.text != tallies[key].text
        else:
            tallies[key] = one
    return list(tallies.values())


# -- method preparation -----------------------------------------------------


@dataclass(frozen=True)
class _Columns:
    """The user's column names and, per nominal column (0-based index), the
    labels of its codes ``0 .. k-1`` (the runner's codes).

    The kernel methods get their rows as a DataFrame with these names (and,
    for a kernel that takes nominal columns, categorical columns with these
    labels), so that their warnings and errors name the user's columns and
    categories as they do for a user's DataFrame.
    """

    names: tuple[str, ...]
    labels: Mapping[int, tuple] = field(default_factory=dict)

    def frame(self, X: np.ndarray, *, labelled: bool = False) -> Any:
        """``X`` as a DataFrame; ``labelled``: nominal columns categorical."""
        import pandas as pd

        frame = pd.DataFrame(X, columns=list(self.names), copy=False)
        if labelled:
            for j, labels in self.labels.items():
                codes = np.where(np.isnan(X[:, j]), -1, X[:, j]).astype(np.int64)
                frame[self.names[j]] = pd.Categorical.from_codes(
                    codes, categories=list(labels)
                )
        return frame

    def one_hot(self, prep: MixedTableImputer) -> _Columns | None:
        """The names of ``prep``'s output columns: the numeric columns, then
        ``name=label`` per one-hot column (no indicators here); None if two
        would have the same name."""
        kept = list(self.names)
        if prep._kept is not None:
            kept = [kept[j] for j in prep._kept]
        index = (
            np.arange(len(self.names)) if prep._kept is None else np.asarray(prep._kept)
        )
        names = [kept[j] for j in prep._num]
        for col, codes in zip(prep._nom, prep.categories_, strict=True):
            labels = self.labels.get(int(index[col]))
            for code in codes:
                label = labels[int(code)] if labels is not None else code
                names.append(f"{kept[col]}={label}")
        return _Columns(tuple(names)) if len(set(names)) == len(names) else None


class _Holder:
    """Opaque box: ``clone`` deep-copies it rather than re-creating contents."""

    def __init__(self, density: Any, rows: np.ndarray) -> None:
        self.density = density
        self.rows = rows


class _FittedDensity(BaseEstimator):
    """A density already fitted on the rows a kernel is about to be fitted on.

    Lets the kernels of several gammas share one density fit. ``fit`` only
    checks that it gets the rows the density was fitted on.
    """

    def __init__(self, state: Any = None) -> None:
        self.state = state

    @property
    def representation(self) -> Any:
        return getattr(self.state.density, "representation", None)

    def fit(self, X: np.ndarray, y: Any = None) -> _FittedDensity:
        if not np.array_equal(np.asarray(X), self.state.rows, equal_nan=True):
            raise RuntimeError("internal: a shared density met other rows")
        return self

    def conditionals(self, X: Any) -> Any:
        return self.state.density.conditionals(X)


def _prepare_kernel(
    spec: MethodSpec,
    task: str,
    X: np.ndarray,
    seed: int,
    nominal: np.ndarray | None = None,
    columns: _Columns | None = None,
) -> _Prepared:
    if nominal is not None:
        return _prepare_mixed_kernel(spec, task, X, seed, nominal, columns)
    # A feature missing in every training row divides 0 by 0 in the scaler;
    # it stays NaN, and the kernel drops it (naming it).
    with np.errstate(invalid="ignore", divide="ignore"):
        scaler = StandardScaler().fit(X) if spec.scale else None
        Xs = scaler.transform(X) if scaler is not None else X
    shared: list[Any] = []

    def gram(X_new: np.ndarray, point: Any) -> tuple[np.ndarray, np.ndarray]:
        kernel = _make_kernel(spec, task, seed, point)
        accepted = (
            kernel.get_params(deep=False) if hasattr(kernel, "get_params") else {}
        )
        if shared and "density" in accepted:
            # The density does not depend on gamma: fit it once per fit.
            kernel.set_params(density=_FittedDensity(_Holder(*shared[0])))
        train = Xs if columns is None else columns.frame(Xs)
        kernel.fit(train)
        if not shared and hasattr(kernel, "density_"):
            # Fitted on the columns the kernel kept (dropped_features_ aside).
            shared.append((kernel.density_, _density_rows(kernel, Xs)))
        with np.errstate(invalid="ignore", divide="ignore"):
            Xn = scaler.transform(X_new) if scaler is not None else X_new
        new = Xn if columns is None else columns.frame(Xn)
        return kernel(train), kernel(new, train)

    return _Prepared(gram)


def _make_kernel(spec: MethodSpec, task: str, seed: int, point: dict) -> Any:
    """The kernel of a grid point: ``make(task, seed, gamma)``, the kernel's
    other grid parameters as keywords (``point`` may be a bare gamma)."""
    point = _as_point(point)
    others = {k: v for k, v in point.items() if k != "gamma"}
    return spec.make(task, seed, point.get("gamma"), **others)


class _NumericScaler(BaseEstimator):
    """Standardise the numeric columns (training mean and standard deviation
    of the observed entries, NaN ignored); nominal codes pass unchanged."""

    def __init__(self, nominal: Any = None) -> None:
        self.nominal = nominal

    def fit(self, X: np.ndarray, y: Any = None) -> _NumericScaler:
        X = np.asarray(X, dtype=np.float64)
        numeric = ~np.asarray(self.nominal, dtype=bool)
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            mean = np.nanmean(X, axis=0)
            scale = np.nanstd(X, axis=0)
        scale[~(scale > 0)] = 1.0  # constant columns, as StandardScaler
        self.mean_ = np.where(numeric, mean, 0.0)
        self.scale_ = np.where(numeric, scale, 1.0)
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return (np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_

    def fit_transform(self, X: np.ndarray, y: Any = None) -> np.ndarray:
        return self.fit(X).transform(X)


def _prepare_mixed_kernel(
    spec: MethodSpec,
    task: str,
    X: np.ndarray,
    seed: int,
    nominal: np.ndarray,
    columns: _Columns | None = None,
) -> _Prepared:
    """A kernel method on a table with nominal columns: a kernel that takes
    them (``nominal="native"``) gets them as codes, with the numeric columns
    standardised; any other sees them one-hot coded (missing: NaN in all of
    a column's 0/1 columns), the numeric columns standardised if it scales.
    With ``columns``, the rows go as a DataFrame with the user's names (and
    labels, for a kernel that takes the nominal columns)."""
    native = spec.nominal == "native"
    if native:
        prep: Any = _NumericScaler(nominal if spec.scale else np.ones_like(nominal))
        nominal_columns = np.flatnonzero(nominal).tolist()
    else:
        prep = MixedTableImputer(nominal, scale_numeric=spec.scale)
        nominal_columns = None
    Xs = prep.fit_transform(X)
    if columns is not None and not native:
        columns = columns.one_hot(prep)

    def rows(A: np.ndarray) -> Any:
        return A if columns is None else columns.frame(A, labelled=native)

    train = rows(Xs)

    def gram(X_new: np.ndarray, point: Any) -> tuple[np.ndarray, np.ndarray]:
        kernel = _make_kernel(spec, task, seed, point)
        if nominal_columns is not None:
            # The density is refitted per grid point from the fit cache
            # (same rows and parameters), not shared: the kernel codes the
            # nominal columns before its density sees them.
            kernel.set_params(nominal_features=nominal_columns)
        kernel.fit(train)
        return kernel(train), kernel(rows(prep.transform(X_new)), train)

    return _Prepared(gram)


def _prepare_pipeline(
    spec: MethodSpec,
    task: str,
    X: np.ndarray,
    seed: int,
    nominal: np.ndarray | None = None,
) -> _Prepared:
    pipe = _make(spec, task, seed, nominal)
    pre = Pipeline(pipe.steps[:-1]) if len(pipe.steps) > 1 else None
    Xt = pre.fit_transform(X) if pre is not None else X
    # The imputed new rows do not depend on gamma: impute them once (the
    # transform of missForest's forests was a third of its cells). A transform
    # that samples (IterativeImputer(sample_posterior=True)) gives a new draw
    # at each call; it keeps one draw per gamma, as the committed mice
    # results were computed.
    samples = pre is not None and any(
        getattr(step, "sample_posterior", False) for _, step in pre.steps
    )
    last: list[np.ndarray] = []  # [X_new, its transform]

    def rows(X_new: np.ndarray) -> np.ndarray:
        if pre is None:
            return X_new
        if samples:
            return pre.transform(X_new)
        if not last or last[0] is not X_new:
            last[:] = [X_new, pre.transform(X_new)]
        return last[1]

    def gram(X_new: np.ndarray, point: Any) -> tuple[np.ndarray, np.ndarray]:
        Xn = rows(X_new)
        gamma = _as_point(point).get("gamma")
        return rbf_kernel(Xt, gamma=gamma), rbf_kernel(Xn, Xt, gamma=gamma)

    return _Prepared(gram)


def _as_point(point: Any) -> dict:
    """A grid point of ``gram``: a dict, or a bare gamma (None: no width)."""
    return point if isinstance(point, dict) else {"gamma": point}


def _make(spec: MethodSpec, task: str, seed: int, nominal: Any = None) -> Any:
    """``spec.make(task, seed)``; on a table with nominal columns, a method
    that takes them gets ``nominal_features`` (their 0-based indices), any
    other is preceded by their one-hot coding (pipelines and estimators)."""
    if nominal is None:
        return spec.make(task, seed)
    if spec.nominal == "native":
        return spec.make(task, seed, nominal_features=np.flatnonzero(nominal).tolist())
    model = spec.make(task, seed)
    encode = MixedTableImputer(nominal, scale_numeric=False)
    if isinstance(model, Pipeline):
        return Pipeline([("one_hot", encode), *model.steps])
    return model


def _kernel_points(spec: MethodSpec) -> list[dict]:
    """The grid points of a kernel or pipeline method other than ``C``, in
    the order of the grid (gamma first: ties go to the smallest)."""
    others = {k: list(v) for k, v in spec.grid.items() if k not in ("C", "gamma")}
    gammas = list(spec.grid.get("gamma", [None]))
    if not others:
        return [{"gamma": g} for g in gammas]
    return [
        {"gamma": g, **rest}
        for g in gammas
        for rest in _grid_points(others)  # type: ignore[arg-type]
    ]


def _grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict]:
    from sklearn.model_selection import ParameterGrid

    return list(ParameterGrid({k: list(v) for k, v in grid.items()}))


def _select_and_score(
    spec: MethodSpec,
    task: str,
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    inner_folds: int,
    seed: int,
    selection_metric: str,
    class_weight: Any = None,
    nominal: np.ndarray | None = None,
    columns: _Columns | None = None,
) -> tuple[dict, dict[str, float], float]:
    """Inner grid search, refit on the training rows, score the test rows.

    ``class_weight`` reaches the classifiers that take it (see
    :func:`accepts_class_weight`); the others ignore it. ``nominal`` (a bool
    mask with a True, or None) marks the nominal columns of a mixed table;
    ``columns`` (or None) names the columns and labels the nominal codes for
    the messages of the kernel methods.
    """
    if task != "classification":
        class_weight = None
    select = _METRICS[selection_metric]
    inner = list(_splitter(task, inner_folds, seed).split(X_train, y_train))
    if spec.kind in ("kernel", "pipeline"):
        prepare: Callable[..., _Prepared] = (
            partial(_prepare_kernel, columns=columns)
            if spec.kind == "kernel"
            else _prepare_pipeline
        )
        points = _kernel_points(spec)
        Cs = list(spec.grid["C"])
        total = np.zeros((len(points), len(Cs)))
        # A single grid point needs no inner search.
        for tr, va in inner if total.size > 1 else []:
            prep = prepare(spec, task, X_train[tr], seed, nominal)
            X_va = X_train[va]  # one object for all gammas: see _prepare_pipeline
            for gi, point in enumerate(points):
                K_tr, K_va = prep.gram(X_va, point)
                for ci, C in enumerate(Cs):
                    pred = _fit_predict(task, C, K_tr, y_train[tr], K_va, class_weight)
                    total[gi, ci] += select(y_train[va], pred)
        # Ties go to the first grid point (smallest gamma, then smallest C).
        gi, ci = (int(i) for i in np.unravel_index(int(np.argmax(total)), total.shape))
        best = {"C": Cs[ci]}
        best.update({k: v for k, v in points[gi].items() if v is not None})
        start = time.perf_counter()
        prep = prepare(spec, task, X_train, seed, nominal)
        K_tr, K_te = prep.gram(X_test, points[gi])
        pred = _fit_predict(task, Cs[ci], K_tr, y_train, K_te, class_weight)
        fit_seconds = time.perf_counter() - start
    else:
        points = _grid_points(spec.grid) or [{}]
        totals = np.zeros(len(points))
        ovr = _one_vs_rest(spec, task, y_train)
        # Behind the scaler of an all-numeric table, the rows go as a
        # DataFrame with the user's names (the scaler keeps them).
        named = columns is not None and nominal is None and spec.scale

        def rows(A: np.ndarray) -> Any:
            return columns.frame(A) if named and columns is not None else A

        for tr, va in inner if len(points) > 1 else []:
            shared: dict[str, Any] = {}
            for pi, params in enumerate(points):
                model = _make_estimator(
                    spec,
                    task,
                    seed,
                    X_train[tr],
                    {**params, **shared},
                    class_weight,
                    ovr,
                    nominal,
                    named,
                )
                model.fit(rows(X_train[tr]), y_train[tr])
                if pi == 0 and set(spec.grid) <= {"C", "gamma"}:
                    shared = _density_to_share(model, rows(X_train[tr]))
                totals[pi] += select(y_train[va], model.predict(rows(X_train[va])))
        best = points[int(np.argmax(totals))]
        start = time.perf_counter()
        model = _make_estimator(
            spec, task, seed, X_train, best, class_weight, ovr, nominal, named
        )
        model.fit(rows(X_train), y_train)
        pred = model.predict(rows(X_test))
        fit_seconds = time.perf_counter() - start
    scores = {m: float(_METRICS[m](y_test, pred)) for m in _TASK_METRICS[task]}
    return best, scores, fit_seconds


def _one_vs_rest(spec: MethodSpec, task: str, y: np.ndarray) -> bool:
    """Whether to fit ``spec`` one-vs-rest: a binary-only classifier (its
    ``multiclass`` is ``"ovr"``) on training rows with more than two
    classes."""
    return (
        task == "classification"
        and spec.multiclass == "ovr"
        and np.unique(np.asarray(y)).size > 2
    )


def _density_to_share(model: Any, X: np.ndarray) -> dict[str, Any]:
    """``{"density": ...}`` reusing ``model``'s fitted density at the next grid
    points of the same inner fold, for an estimator that fits one (e.g.
    ``SOCPSVC``); empty for any other.

    The density depends on the training rows only, not on ``C`` or ``gamma``:
    the EM fit, which dominates SOCP fits on wide data, then runs once per
    inner fold instead of once per grid point, with the same result.
    """
    est = model[-1] if isinstance(model, Pipeline) else model
    if isinstance(est, OneVsRestClassifier):
        # Its binary estimators fitted the same density on the same rows.
        if "density" not in est.estimator.get_params(deep=False):
            return {}
        est = est.estimators_[0]
    if "density" not in est.get_params(deep=False):
        return {}
    try:
        fitted = est.density_
    except AttributeError:
        return {}
    rows = model[:-1].transform(X) if isinstance(model, Pipeline) else X
    # The kernel form's density: on the columns its kernel kept.
    rows = _density_rows(getattr(est, "kernel_", est), np.asarray(rows))
    return {"density": _FittedDensity(_Holder(fitted, rows))}


def _density_rows(fitted: Any, X: np.ndarray) -> np.ndarray:
    """The training rows as ``fitted``'s density saw them: without the
    columns it dropped as too sparse (``dropped_features_``)."""
    kept = getattr(fitted, "_kept_features", None)
    return X if kept is None else np.ascontiguousarray(X[:, kept])


def _make_estimator(
    spec: MethodSpec,
    task: str,
    seed: int,
    X: np.ndarray,
    params: dict,
    class_weight: Any = None,
    ovr: bool = False,
    nominal: np.ndarray | None = None,
    named: bool = False,
) -> Any:
    """The model of a grid point; ``named``: its scaling steps output
    DataFrames (for rows given as a DataFrame with the user's names)."""
    native = nominal is not None and spec.nominal == "native"
    model = clone(_make(spec, task, seed, nominal if native else None))
    model.set_params(**params)
    if class_weight is not None and "class_weight" in model.get_params(deep=False):
        model.set_params(class_weight=class_weight)
    if ovr:
        model = OneVsRestClassifier(model)
    if nominal is not None and native:
        # It takes the nominal columns as codes: standardise the others only
        # (the model drops too sparse features itself).
        if spec.scale:
            model = Pipeline([("scale", _NumericScaler(nominal)), ("model", model)])
    elif nominal is not None:
        # One-hot coded first (and the numeric columns standardised if the
        # method scales; the encoder drops the too sparse features).
        encode = MixedTableImputer(nominal, scale_numeric=spec.scale)
        model = Pipeline([("one_hot", encode), ("model", model)])
    elif spec.scale:
        # The sparse features go before the scaler, which would divide 0 by
        # 0 on a feature missing in every training row (the model drops
        # them too; with none to drop the step passes the rows through).
        model = Pipeline(
            [
                ("drop", DropSparseFeatures()),
                ("scale", StandardScaler()),
                ("model", model),
            ]
        )
        if named:
            model.set_output(transform="pandas")
    return model


def _run_cell(
    cell: _Cell,
    spec: MethodSpec,
    X: np.ndarray,
    y: np.ndarray,
    task: str,
    train: np.ndarray,
    test: np.ndarray,
    inner_folds: int,
    seed: int,
    selection_metric: str,
    class_weight: Any = None,
    nominal: np.ndarray | None = None,
    columns: _Columns | None = None,
) -> tuple[list[dict], list[_WarningTally]]:
    """Run one cell: its result rows and the warnings it raised (tallied).

    Warnings are recorded here, in the process that runs the cell (a joblib
    worker or the caller), and summarised by the caller, so that a long run
    shows each distinct warning once with a count instead of a flood.
    """
    start = time.perf_counter()
    base = {
        "dataset": cell.dataset,
        "task": task,
        "mechanism": cell.mechanism,
        "rate": float(cell.rate),
        "draw": cell.draw,
        "fold": cell.fold,
        "method": cell.method,
        "n_train": int(train.size),
        "n_test": int(test.size),
        "missing_rate": float(np.isnan(X).mean()),
    }
    *where, method = cell.key()
    cell_seed = _seed(seed, "fit", *where, _SEED_NAMES.get(method, method))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            best, scores, fit_seconds = _select_and_score(
                spec,
                task,
                X[train],
                y[train],
                X[test],
                y[test],
                inner_folds,
                cell_seed,
                selection_metric,
                class_weight,
                nominal,
                columns,
            )
        except Exception as exc:  # recorded, so a long run keeps going
            rows = [
                {
                    **base,
                    "params": "",
                    "metric": metric,
                    "score": math.nan,
                    "fit_seconds": math.nan,
                    "cell_seconds": time.perf_counter() - start,
                    "error": f"{type(exc).__name__}: {exc}"[:500],
                }
                for metric in _TASK_METRICS[task]
            ]
            return rows, _tally_warnings(caught, cells=1)
    elapsed = time.perf_counter() - start
    rows = [
        {
            **base,
            "params": json.dumps(best, sort_keys=True),
            "metric": metric,
            "score": score,
            "fit_seconds": fit_seconds,
            "cell_seconds": elapsed,
            "error": "",
        }
        for metric, score in scores.items()
    ]
    return rows, _tally_warnings(caught, cells=1)
