"""Nested cross-validation runner of the method comparisons.

One *cell* is (dataset, mechanism, rate, draw, outer fold, method). A cell
tunes the method's hyperparameters by an inner k-fold grid search on the
outer training rows, refits on all of them and scores the outer test rows.
Every scaler, imputer and density is fitted on the training rows of the fit
at hand (inner or outer); the Gram matrix of each (fit, gamma) is computed
once and reused for every value of C.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, balanced_accuracy_score, r2_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from .._optional import import_optional
from .._registry import _RENAMED
from ._missingness import simulate_missing

#: C and gamma grids of the genRBF paper (sec. 5.1): 2^k, k = -5, -3, ..., 9
#: and k = -5, -3, ..., 11.
PAPER_C_GRID = tuple(2.0**k for k in range(-5, 10, 2))
PAPER_GAMMA_GRID = tuple(2.0**k for k in range(-5, 12, 2))

#: Columns of the long-format results, in file order.
RESULT_COLUMNS = (
    "dataset",
    "task",
    "mechanism",
    "rate",
    "draw",
    "fold",
    "method",
    "params",
    "metric",
    "score",
    "fit_seconds",
    "cell_seconds",
    "n_train",
    "n_test",
    "missing_rate",
    "error",
)

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
class ComparisonData:
    """A dataset entering a comparison.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Features; complete when missingness is simulated, NaN where missing
        for ``mechanism="none"``.
    y : ndarray of shape (n_samples,)
    task : {"classification", "regression"}
    """

    X: np.ndarray
    y: np.ndarray
    task: str


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


@dataclass
class MethodSpec:
    """How the runner fits one method.

    Parameters
    ----------
    name : str
        The method's name in the results.
    kind : {"kernel", "pipeline", "estimator"}
        ``"kernel"``: a registry kernel followed by a precomputed-kernel SVM;
        ``"pipeline"``: a baseline :class:`~sklearn.pipeline.Pipeline` whose
        last step is an RBF SVM; ``"estimator"``: any estimator, grid-searched
        point by point (no Gram reuse), e.g. SOCP.
    make : callable
        ``make(task, seed)`` returns the kernel (kind ``"kernel"``, called
        again per gamma as ``make(task, seed, gamma)``), the pipeline, or the
        estimator.
    grid : dict
        Hyperparameter grid. ``"C"`` and ``"gamma"`` for kernel and pipeline
        methods (``gamma`` may be ``[None]`` for kernels without a width);
        estimator parameter names for kind ``"estimator"``.
    scale : bool, default=True
        Standardise features on the training rows first (kernel and estimator
        methods; pipelines carry their own scaler). Declared by the method,
        not inferred from its parameters: :func:`resolve_method` sets it for
        every method except a kernel whose density models category codes
        (e.g. ``"belanche_k1"``, ``"belanche_k2"``).
    """

    name: str
    kind: str
    make: Callable[..., Any]
    grid: dict = field(default_factory=dict)
    scale: bool = True


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


def _svm(task: str, C: float) -> Any:
    if task == "classification":
        return SVC(kernel="precomputed", C=C)
    return SVR(kernel="precomputed", C=C)


def _fit_predict(
    task: str, C: float, K_train: np.ndarray, y: np.ndarray, K_test: np.ndarray
) -> np.ndarray:
    if task == "regression":
        # epsilon of SVR is relative to a unit-variance target.
        mu, sd = float(np.mean(y)), float(np.std(y)) or 1.0
        model = _svm(task, C).fit(K_train, (y - mu) / sd)
        return model.predict(K_test) * sd + mu
    return _svm(task, C).fit(K_train, y).predict(K_test)


# -- method preparation -----------------------------------------------------


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


def _prepare_kernel(spec: MethodSpec, task: str, X: np.ndarray, seed: int) -> _Prepared:
    scaler = StandardScaler().fit(X) if spec.scale else None
    Xs = scaler.transform(X) if scaler is not None else X
    shared: list[Any] = []

    def gram(X_new: np.ndarray, gamma: Any) -> tuple[np.ndarray, np.ndarray]:
        kernel = spec.make(task, seed, gamma)
        accepted = (
            kernel.get_params(deep=False) if hasattr(kernel, "get_params") else {}
        )
        if shared and "density" in accepted:
            # The density does not depend on gamma: fit it once per fit.
            kernel.set_params(density=_FittedDensity(_Holder(shared[0], Xs)))
        kernel.fit(Xs)
        if not shared and hasattr(kernel, "density_"):
            shared.append(kernel.density_)
        Xn = scaler.transform(X_new) if scaler is not None else X_new
        return kernel(Xs), kernel(Xn, Xs)

    return _Prepared(gram)


def _prepare_pipeline(
    spec: MethodSpec, task: str, X: np.ndarray, seed: int
) -> _Prepared:
    pipe = spec.make(task, seed)
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

    def gram(X_new: np.ndarray, gamma: Any) -> tuple[np.ndarray, np.ndarray]:
        Xn = rows(X_new)
        return rbf_kernel(Xt, gamma=gamma), rbf_kernel(Xn, Xt, gamma=gamma)

    return _Prepared(gram)


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
) -> tuple[dict, dict[str, float], float]:
    """Inner grid search, refit on the training rows, score the test rows."""
    select = _METRICS[selection_metric]
    inner = list(_splitter(task, inner_folds, seed).split(X_train, y_train))
    if spec.kind in ("kernel", "pipeline"):
        prepare = _prepare_kernel if spec.kind == "kernel" else _prepare_pipeline
        gammas = list(spec.grid.get("gamma", [None]))
        Cs = list(spec.grid["C"])
        total = np.zeros((len(gammas), len(Cs)))
        # A single grid point needs no inner search.
        for tr, va in inner if total.size > 1 else []:
            prep = prepare(spec, task, X_train[tr], seed)
            X_va = X_train[va]  # one object for all gammas: see _prepare_pipeline
            for gi, gamma in enumerate(gammas):
                K_tr, K_va = prep.gram(X_va, gamma)
                for ci, C in enumerate(Cs):
                    pred = _fit_predict(task, C, K_tr, y_train[tr], K_va)
                    total[gi, ci] += select(y_train[va], pred)
        # Ties go to the first grid point (smallest gamma, then smallest C).
        gi, ci = (int(i) for i in np.unravel_index(int(np.argmax(total)), total.shape))
        best = {"C": Cs[ci]}
        if gammas[gi] is not None:
            best["gamma"] = gammas[gi]
        start = time.perf_counter()
        prep = prepare(spec, task, X_train, seed)
        K_tr, K_te = prep.gram(X_test, gammas[gi])
        pred = _fit_predict(task, Cs[ci], K_tr, y_train, K_te)
        fit_seconds = time.perf_counter() - start
    else:
        points = _grid_points(spec.grid) or [{}]
        totals = np.zeros(len(points))
        for tr, va in inner if len(points) > 1 else []:
            shared: dict[str, Any] = {}
            for pi, params in enumerate(points):
                model = _make_estimator(
                    spec, task, seed, X_train[tr], {**params, **shared}
                )
                model.fit(X_train[tr], y_train[tr])
                if pi == 0 and set(spec.grid) <= {"C", "gamma"}:
                    shared = _density_to_share(model, X_train[tr])
                totals[pi] += select(y_train[va], model.predict(X_train[va]))
        best = points[int(np.argmax(totals))]
        start = time.perf_counter()
        model = _make_estimator(spec, task, seed, X_train, best)
        model.fit(X_train, y_train)
        pred = model.predict(X_test)
        fit_seconds = time.perf_counter() - start
    scores = {m: float(_METRICS[m](y_test, pred)) for m in _TASK_METRICS[task]}
    return best, scores, fit_seconds


def _density_to_share(model: Any, X: np.ndarray) -> dict[str, Any]:
    """``{"density": ...}`` reusing ``model``'s fitted density at the next grid
    points of the same inner fold, for an estimator that fits one (e.g.
    ``SOCPSVC``); empty for any other.

    The density depends on the training rows only, not on ``C`` or ``gamma``:
    the EM fit, which dominates SOCP fits on wide data, then runs once per
    inner fold instead of once per grid point, with the same result.
    """
    est = model[-1] if isinstance(model, Pipeline) else model
    if "density" not in est.get_params(deep=False):
        return {}
    try:
        fitted = est.density_
    except AttributeError:
        return {}
    rows = model[:-1].transform(X) if isinstance(model, Pipeline) else X
    return {"density": _FittedDensity(_Holder(fitted, np.asarray(rows)))}


def _make_estimator(
    spec: MethodSpec, task: str, seed: int, X: np.ndarray, params: dict
) -> Any:
    model = clone(spec.make(task, seed)).set_params(**params)
    if spec.scale:
        model = Pipeline([("scale", StandardScaler()), ("model", model)])
    return model


# -- resolving method names -------------------------------------------------


def _probe_baseline(name: str) -> Any:
    """The baseline built for either task (None if the factory refuses both)."""
    from .._registry import get_baseline

    for task in ("classification", "regression"):
        try:
            return get_baseline(name, task=task)
        except ValueError:
            continue
    return None


def _models_category_codes(density: Any) -> bool:
    """Whether a kernel's density (a registry name or an object) models its
    features as category codes (the representation ``"categorical"``).

    Standardising would change the codes (a 0/1 feature no longer 0/1), so a
    kernel on such a density sees the features as given.
    """
    if isinstance(density, str):
        from .._registry import list_densities

        entry = list_densities().get(density)
        density = entry.factory if entry is not None else None
    return getattr(density, "representation", None) == "categorical"


def resolve_method(
    name: str,
    *,
    C_grid: Sequence[float] = PAPER_C_GRID,
    gamma_grid: Sequence[float] = PAPER_GAMMA_GRID,
    kernel_params: Mapping[str, Any] | None = None,
) -> MethodSpec:
    """Turn a method name into a :class:`MethodSpec`.

    Parameters
    ----------
    name : str
        A registered baseline (:func:`missingkernels.list_baselines`) or a
        registered kernel (:func:`missingkernels.list_kernels`). A baseline
        whose factory returns a :class:`~sklearn.pipeline.Pipeline` is of kind
        ``"pipeline"``; any other (e.g. the peer ``"geom"`` or ``"socp"``) of
        kind ``"estimator"``, grid-searched over those of ``C`` and ``gamma``
        it has, after standardising the features.
    C_grid, gamma_grid : sequence of float
        The grids (the genRBF paper's by default).
    kernel_params : mapping, default=None
        Extra parameters of a registry kernel, or of a baseline's factory
        (e.g. ``{"density": ...}`` for ``"socp"``).

    Returns
    -------
    spec : MethodSpec

    Raises
    ------
    ValueError
        If the name is neither a baseline nor a kernel.

    Examples
    --------
    >>> from missingkernels.experiments import resolve_method
    >>> resolve_method("mean").kind
    'pipeline'
    >>> resolve_method("geom").kind
    'estimator'
    """
    from .._registry import get_baseline, get_kernel, list_baselines, list_kernels

    C_grid = list(C_grid)
    gamma_grid = list(gamma_grid)
    baselines = list_baselines()
    if name in baselines:
        import inspect

        factory = baselines[name].factory
        try:
            seeded = "random_state" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            seeded = False

        extra = dict(kernel_params or {})

        def make_baseline(task: str, seed: int) -> Any:
            if seeded:
                return get_baseline(name, task=task, random_state=seed, **extra)
            return get_baseline(name, task=task, **extra)

        probe = _probe_baseline(name)
        if probe is not None and not isinstance(probe, Pipeline):
            # An estimator taking NaN itself (a peer such as "geom"): grid over
            # its own C and gamma, on standardised features.
            accepted = (
                probe.get_params(deep=False) if hasattr(probe, "get_params") else {}
            )
            grid = {
                key: values
                for key, values in (("C", C_grid), ("gamma", gamma_grid))
                if key in accepted
            }
            return MethodSpec(name, "estimator", make_baseline, grid, scale=True)
        return MethodSpec(
            name, "pipeline", make_baseline, {"C": C_grid, "gamma": gamma_grid}
        )
    kernels = list_kernels()
    if name in kernels:
        probe = get_kernel(name)
        accepted = probe.get_params(deep=False) if hasattr(probe, "get_params") else {}
        has_gamma = "gamma" in accepted
        params = dict(kernel_params or {})

        def make_kernel(task: str, seed: int, gamma: Any = None) -> Any:
            extra = dict(params)
            if has_gamma and gamma is not None:
                extra["gamma"] = gamma
            if "random_state" in accepted and "random_state" not in extra:
                extra["random_state"] = seed
            return get_kernel(name, **extra)

        density = params.get("density", accepted.get("density"))
        return MethodSpec(
            name,
            "kernel",
            make_kernel,
            {"C": C_grid, "gamma": gamma_grid if has_gamma else [None]},
            scale=not _models_category_codes(density),
        )
    if ("baseline", name) in _RENAMED:
        get_baseline(name)  # raises, naming the new name
    raise ValueError(
        f"Unknown method {name!r}. Methods are the baselines "
        f"{sorted(baselines)} and the kernels {sorted(kernels)}."
    )


# -- the runner -------------------------------------------------------------


def _missing_data(
    data: ComparisonData,
    dataset: str,
    mechanism: str,
    rate: float,
    draw: int,
    seed: int,
) -> np.ndarray:
    if mechanism == "none":
        return np.asarray(data.X, dtype=np.float64)
    return simulate_missing(
        data.X,
        mechanism,
        rate,
        random_state=_seed(seed, "missing", dataset, mechanism, _rate_key(rate), draw),
    )


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
) -> list[dict]:
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
    try:
        with warnings.catch_warnings():
            # Imputers' convergence notes would flood long runs.
            warnings.simplefilter("ignore", ConvergenceWarning)
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
            )
    except Exception as exc:  # recorded, so a long run keeps going
        return [
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
    elapsed = time.perf_counter() - start
    return [
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


def _read_done(path: Path) -> tuple[Any, set]:
    pd = import_optional("pandas", "experiments", "run_comparison")

    if not path.exists() or path.stat().st_size == 0:
        return None, set()
    raw = path.read_bytes()
    if not raw.endswith(b"\n"):
        # A run killed while writing leaves a partial last line: drop it, the
        # cell is recomputed.
        path.write_bytes(raw[: raw.rfind(b"\n") + 1])
    text_columns = ("dataset", "task", "mechanism", "method", "params", "metric")
    frame = pd.read_csv(
        path,
        dtype={c: str for c in (*text_columns, "error")},
        keep_default_na=False,
        na_values={"score": [""], "fit_seconds": [""]},
    )
    done = {
        (r.dataset, r.mechanism, _rate_key(r.rate), int(r.draw), int(r.fold), r.method)
        for r in frame.itertuples()
    }
    return frame, done


def _append(path: Path, rows: list[dict]) -> None:
    import csv

    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=RESULT_COLUMNS, lineterminator="\n")
        if new:
            writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, "") for k in RESULT_COLUMNS})
        fh.flush()
        os.fsync(fh.fileno())


def run_comparison(
    datasets: Mapping[str, ComparisonData],
    methods: Sequence[str | MethodSpec],
    *,
    mechanisms: Sequence[str] = ("mar",),
    rates: Sequence[float] = (0.3,),
    n_draws: int = 10,
    outer_folds: int = 5,
    inner_folds: int = 5,
    C_grid: Sequence[float] = PAPER_C_GRID,
    gamma_grid: Sequence[float] = PAPER_GAMMA_GRID,
    selection_metric: str | None = None,
    output: str | os.PathLike | None = None,
    n_jobs: int | None = 1,
    random_state: int = 0,
    progress: bool = False,
    draws: Sequence[int] | None = None,
) -> Any:
    """Compare methods by nested cross-validation over missingness draws.

    For every dataset, mechanism, rate and draw, missing entries are removed
    from the complete data with :func:`simulate_missing` (``mechanism="none"``
    keeps the data's own NaN). The rows are split into ``outer_folds``
    (stratified for classification); on each outer training set an inner
    ``inner_folds`` grid search over ``C_grid`` x ``gamma_grid`` chooses the
    hyperparameters by ``selection_metric``, the method is refitted on the
    whole outer training set and scored on the outer test rows. Scalers,
    imputers and densities are fitted on the training rows of each fit only.

    Parameters
    ----------
    datasets : mapping of str to ComparisonData
        Name -> data.
    methods : sequence of str or MethodSpec
        Method names (see :func:`resolve_method`) or ready specs.
    mechanisms : sequence of {"mcar", "mar", "mnar", "none"}, default=("mar",)
    rates : sequence of float, default=(0.3,)
        Missing rates (ignored, recorded as the data's own rate, for "none").
    n_draws : int, default=10
        Missingness draws (for "none": repetitions with new fold splits).
    outer_folds, inner_folds : int, default=5
    C_grid, gamma_grid : sequence of float
        The genRBF paper's grids by default.
    selection_metric : {"accuracy", "balanced_accuracy", "r2"} or None
        Inner-CV criterion; None: accuracy for classification, R^2 for
        regression.
    output : path or None
        A CSV file the rows are appended to as cells finish. If it already
        holds rows of this configuration, those cells are skipped (resume); a
        sidecar ``<output>.config.json`` guards against resuming with another
        configuration.
    n_jobs : int or None, default=1
        Cells run in parallel with joblib: ``-1`` uses every core, ``None``
        takes the number of workers and the backend from an enclosing
        :func:`joblib.parallel_config` (for instance a dask cluster, see
        Notes). The results do not depend on ``n_jobs`` or the backend.
    random_state : int, default=0
        The seed of everything: a fixed value gives identical results.
    progress : bool, default=False
        Show a tqdm progress bar.
    draws : sequence of int or None, default=None
        Compute only these draws (indices in ``range(n_draws)``) now; the
        others stay part of the configuration and a later call with the same
        ``output`` computes them. A draw's data, splits and seeds do not
        depend on which draws run. None: all draws.

    Returns
    -------
    results : pandas.DataFrame
        Long format, one row per cell and metric, columns
        :data:`RESULT_COLUMNS`.

    Notes
    -----
    Cells are independent, so a long run can use the cores of several
    machines: with the ``dask`` extra, start a ``distributed.Client`` on the
    cluster and call ``run_comparison(..., n_jobs=-1)`` inside
    ``joblib.parallel_config(backend="dask")``. The rows are still appended
    to ``output`` by this process as cells finish, so resuming works the
    same way.

    References
    ----------
    .. [1] M. Śmieja, Ł. Struski, J. Tabor, M. Marzec. "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173 (2019),
       sec. 5.1 (protocol).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.experiments import ComparisonData, run_comparison
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> res = run_comparison({"toy": ComparisonData(X, y, "classification")},
    ...                      ["mean"], mechanisms=["mcar"], rates=[0.2],
    ...                      n_draws=1, outer_folds=2, inner_folds=2,
    ...                      C_grid=[1.0], gamma_grid=[0.5])
    >>> sorted(res["metric"].unique())
    ['accuracy', 'balanced_accuracy']
    """
    pd = import_optional("pandas", "experiments", "run_comparison")

    _check_args(datasets, mechanisms, rates, n_draws, outer_folds, inner_folds, n_jobs)
    if draws is None:
        run_draws = list(range(n_draws))
    else:
        bad = [d for d in draws if not _is_int(d) or not 0 <= d < n_draws]
        if bad:
            raise ValueError(
                f"draws must be integers in [0, n_draws={n_draws}); got {bad!r} "
                f"in {list(draws)!r}."
            )
        run_draws = sorted({int(d) for d in draws})
    specs = [
        m
        if isinstance(m, MethodSpec)
        else resolve_method(m, C_grid=C_grid, gamma_grid=gamma_grid)
        for m in methods
    ]
    names = [s.name for s in specs]
    if not names:
        raise ValueError(
            "methods is empty; pass at least one method name (see resolve_method) "
            "or MethodSpec."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"Method names must be distinct, got {names}.")
    path = Path(output) if output is not None else None
    config = {
        "datasets": sorted(datasets),
        "mechanisms": list(mechanisms),
        "rates": [_rate_key(r) for r in rates],
        "n_draws": n_draws,
        "outer_folds": outer_folds,
        "inner_folds": inner_folds,
        "C_grid": list(map(float, C_grid)),
        "gamma_grid": list(map(float, gamma_grid)),
        "selection_metric": selection_metric,
        "random_state": random_state,
    }
    previous: Any = None
    done: set = set()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        _check_config(path, config)
        previous, done = _read_done(path)

    # Draws outermost: an interrupted long run has every dataset covered by
    # its first draws rather than some datasets complete and others absent.
    plan: list[tuple] = []
    for dname, data in datasets.items():
        task = data.task
        metric = selection_metric or _TASK_METRICS[task][0]
        if metric not in _TASK_METRICS[task]:
            raise ValueError(
                f"selection_metric {metric!r} does not fit the {task} task of "
                f"{dname!r}; use one of {_TASK_METRICS[task]}."
            )
        for mech in mechanisms:
            mech_rates = [float(np.isnan(data.X).mean())] if mech == "none" else rates
            plan.extend((dname, data, task, metric, mech, r) for r in mech_rates)
    jobs = []
    for draw in run_draws:
        for dname, data, task, metric, mech, rate in plan:
            y = np.asarray(data.y)
            X = None
            split_seed = _seed(
                random_state, "outer", dname, mech, _rate_key(rate), draw
            )
            splits = _splitter(task, outer_folds, split_seed).split(data.X, y)
            for fold, (train, test) in enumerate(splits):
                for spec in specs:
                    cell = _Cell(dname, mech, rate, draw, fold, spec.name)
                    if cell.key() in done:
                        continue
                    if X is None:
                        X = _missing_data(data, dname, mech, rate, draw, random_state)
                    jobs.append(
                        (
                            cell,
                            spec,
                            X,
                            y,
                            task,
                            train,
                            test,
                            inner_folds,
                            random_state,
                            metric,
                        )
                    )

    rows: list[dict] = []
    if jobs:
        with _exclusive(path):
            rows = _execute(jobs, n_jobs, progress, path)
    frames = [previous] if previous is not None else []
    if rows:
        frames.append(pd.DataFrame(rows, columns=list(RESULT_COLUMNS)))
    if not frames:
        return pd.DataFrame(columns=list(RESULT_COLUMNS))
    result = pd.concat(frames, ignore_index=True)
    order = ["dataset", "mechanism", "rate", "draw", "fold", "method", "metric"]
    return result.sort_values(order, kind="stable").reset_index(drop=True)


def _execute(
    jobs: list, n_jobs: int | None, progress: bool, path: Path | None
) -> list[dict]:
    from joblib import Parallel, delayed

    bar = None
    if progress:
        tqdm = import_optional(
            "tqdm.auto", "experiments", "run_comparison(progress=True)"
        ).tqdm

        bar = tqdm(total=len(jobs), unit="cell")
    rows: list[dict] = []
    results: Iterable[list[dict]]
    if n_jobs == 1:
        results = (_run_cell(*job) for job in jobs)
    else:
        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(_run_cell)(*job) for job in jobs
        )
    for cell_rows in results:
        if path is not None:
            _append(path, cell_rows)
        rows.extend(cell_rows)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return rows


@contextlib.contextmanager
def _exclusive(path: Path | None) -> Iterator[None]:
    """Refuse a second run appending to the same results file at once."""
    if path is None:
        yield
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks
        yield
        return
    lock = path.with_name(path.name + ".lock").open("w")
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RuntimeError(
                f"Another run is appending to {path}; wait for it or choose "
                "another output file."
            ) from None
        yield
    finally:
        lock.close()  # closing releases the lock, also when the process dies


def _check_config(path: Path, config: dict) -> None:
    side = path.with_name(path.name + ".config.json")
    if side.exists():
        old = json.loads(side.read_text())
        if old != config:
            diff = sorted(k for k in config if old.get(k) != config[k])
            raise ValueError(
                f"{path} holds results of another configuration (differs in "
                f"{diff}); choose a new output file or delete it to start over."
            )
    elif path.exists() and path.stat().st_size > 0:
        raise ValueError(
            f"{path} exists without its {side.name}; cannot tell whether it is "
            "this configuration. Choose a new output file."
        )
    else:
        side.write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")


def _check_args(
    datasets: Mapping[str, ComparisonData],
    mechanisms: Sequence[str],
    rates: Sequence[float],
    n_draws: int,
    outer_folds: int,
    inner_folds: int,
    n_jobs: int | None,
) -> None:
    if not datasets:
        raise ValueError("datasets is empty; pass at least one name -> ComparisonData.")
    for name, data in datasets.items():
        if not isinstance(data, ComparisonData):
            raise TypeError(
                f"datasets[{name!r}] must be a ComparisonData, got "
                f"{type(data).__name__}."
            )
        if data.task not in _TASK_METRICS:
            raise ValueError(
                f"datasets[{name!r}].task must be 'classification' or "
                f"'regression', got {data.task!r}."
            )
        if np.asarray(data.X).shape[0] != np.asarray(data.y).shape[0]:
            raise ValueError(f"datasets[{name!r}]: X and y have different lengths.")
    for mech in mechanisms:
        if mech not in ("mcar", "mar", "mnar", "none"):
            raise ValueError(
                f"Unknown mechanism {mech!r}; use 'mcar', 'mar', 'mnar' or 'none' "
                "(the data's own missing values)."
            )
    for r in rates:
        if not 0.0 <= float(r) < 1.0:
            raise ValueError(f"Missing rates must be in [0, 1), got {r}.")
    for label, value, low in (
        ("n_draws", n_draws, 1),
        ("outer_folds", outer_folds, 2),
        ("inner_folds", inner_folds, 2),
    ):
        if not _is_int(value) or value < low:
            raise ValueError(f"{label} must be an int >= {low}, got {value!r}.")
    if n_jobs is not None and (not _is_int(n_jobs) or n_jobs == 0):
        raise ValueError(
            f"n_jobs must be a nonzero int (-1: every core) or None, got {n_jobs!r}."
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)
