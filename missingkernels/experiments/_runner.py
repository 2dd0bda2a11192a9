"""The nested cross-validation runner of the method comparisons.

:func:`run_comparison` plans the cells (dataset, mechanism, rate, draw, outer
fold, method), runs them (:mod:`._cv`), appends their rows to the results
file and resumes from it (:mod:`._results`). Methods are resolved by
:mod:`._methods`; tables and statistics are in :mod:`._report` and
:mod:`._stats`.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._optional import import_optional
from ._comparison_data import (
    ComparisonData,
    _check_data,
    _is_int,
    _is_real,
    _with_nominal_codes,
)
from ._cv import (
    _TASK_METRICS,
    _Cell,
    _Columns,
    _rate_key,
    _run_cell,
    _seed,
    _splitter,
    _tally_warnings,
    _WarningTally,
)
from ._methods import PAPER_C_GRID, PAPER_GAMMA_GRID, MethodSpec, resolve_method
from ._missingness import simulate_missing
from ._results import (
    RESULT_COLUMNS,
    _append,
    _check_config,
    _exclusive,
    _read_done,
)


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
    class_weight: str | dict | None = None,
    output: str | os.PathLike | None = None,
    n_jobs: int | None = 1,
    random_state: int = 0,
    progress: bool = False,
    draws: Sequence[int] | None = None,
    train_rate: float | None = None,
    train_size: int | None = None,
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
    mechanisms : sequence of {"mcar", "mar", "mnar", "self_masking", "none"}, \
default=("mar",)
        See :func:`simulate_missing`; ``"none"`` keeps the data's own NaN.
    rates : sequence of float, default=(0.3,)
        Missing rates (ignored, recorded as the data's own rate, for "none").
        With ``train_rate``, the rates of the test rows.
    n_draws : int, default=10
        Missingness draws (for "none": repetitions with new fold splits).
    outer_folds, inner_folds : int, default=5
    C_grid, gamma_grid : sequence of float
        The genRBF paper's grids by default.
    selection_metric : {"accuracy", "balanced_accuracy", "r2"} or None
        Inner-CV criterion; None: accuracy for classification, R^2 for
        regression.
    class_weight : "balanced", dict or None, default=None
        Class weights of the classifiers that take them (the SVM of every
        kernel and imputation method, estimators with a ``class_weight``
        parameter such as ``"hgb"``; others, e.g. ``"geom"``, ignore it);
        ignored for regression. Part of the resume configuration when set.
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
    train_rate : float in [0, 1) or None, default=None
        Missingness that differs between training and prediction: the outer
        training rows of a cell come from a draw at ``train_rate`` (0:
        complete), its test rows from the draw at the cell's ``rate``, both
        of the same mechanism on the whole data (with their own seeds).
        Missing values only at prediction time are ``train_rate=0``; a shift
        is e.g. ``train_rate=0.1, rates=[0.5]``. The ``rate`` column is then
        the test rows' rate (``missing_rate`` that of all rows). Not for
        ``"mnar"`` (its hidden columns differ between draws) or ``"none"``.
        None: training and test rows share one draw.
    train_size : int or None, default=None
        Fit on a subsample of this many outer training rows (stratified for
        classification, the same rows for every method of a cell); the test
        rows stay whole. For small-sample experiments. None: every
        training row.

    Returns
    -------
    results : pandas.DataFrame
        Long format, one row per cell and metric, columns
        :data:`RESULT_COLUMNS`.

    Raises
    ------
    ValueError
        Before any cell runs, for an argument no cell could use: an empty or
        non-positive ``C_grid``/``gamma_grid`` (or grid of a ``MethodSpec``),
        a string where a list is expected, a non-numeric ``y`` for a
        regression, a single class or missing labels for a classification,
        missing values in ``X`` with a simulated mechanism, and so on. The
        message names the argument or ``datasets[name]``. Errors of one
        method in one cell are recorded in the ``error`` column instead.
    RuntimeError
        If another run is appending to ``output`` (checked before the file
        is read).

    Warns
    -----
    Warning
        Each distinct warning raised while the cells ran (in this process or
        in joblib workers), once, after the run (also an interrupted one):
        its first text, then how often and in how many cells it was raised.
        Warnings differing only in numbers count as one. Nothing is
        silenced: filter a category with :func:`warnings.filterwarnings`.

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

    _check_args(
        datasets,
        methods,
        mechanisms,
        rates,
        n_draws,
        outer_folds,
        inner_folds,
        n_jobs,
        random_state,
    )
    _check_train_options(datasets, mechanisms, train_rate, train_size, inner_folds)
    for label, grid in (("C_grid", C_grid), ("gamma_grid", gamma_grid)):
        _check_grid(label, grid)
    run_draws = _checked_draws(draws, n_draws)
    specs = _resolved_specs(methods, C_grid, gamma_grid)
    _check_class_weight(class_weight)
    _check_selection_metric(datasets, selection_metric)
    path = Path(output) if output is not None else None
    config = _run_config(
        datasets,
        mechanisms,
        rates,
        n_draws,
        outer_folds,
        inner_folds,
        C_grid,
        gamma_grid,
        selection_metric,
        random_state,
        class_weight,
        train_rate,
        train_size,
    )
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)

    def plan(done: set) -> list[tuple]:
        return _plan(
            datasets,
            specs,
            mechanisms,
            rates,
            run_draws,
            outer_folds,
            inner_folds,
            selection_metric,
            random_state,
            done,
            class_weight,
            train_rate,
            train_size,
        )

    tallies: dict[tuple[str, str], _WarningTally] = {}
    jobs: list[tuple] = []
    try:
        previous, rows = _run_cells(path, config, plan, jobs, n_jobs, progress, tallies)
    finally:  # also when interrupted: the warnings of the cells that ran
        _warn_summary(tallies, len(jobs))
    return _results_frame(pd, previous, rows)


def _checked_draws(draws: Sequence[int] | None, n_draws: int) -> list[int]:
    """The draws to run: all ``n_draws``, or the valid ``draws`` sorted."""
    if draws is None:
        return list(range(n_draws))
    bad = [d for d in draws if not _is_int(d) or not 0 <= d < n_draws]
    if bad:
        raise ValueError(
            f"draws must be integers in [0, n_draws={n_draws}); got {bad!r} "
            f"in {list(draws)!r}."
        )
    return sorted({int(d) for d in draws})


def _resolved_specs(
    methods: Sequence[str | MethodSpec], C_grid: Any, gamma_grid: Any
) -> list[MethodSpec]:
    """The methods as specs, checked: at least one, distinct names, valid grids."""
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
    for spec in specs:
        _check_spec_grid(spec)
    return specs


def _check_class_weight(class_weight: Any) -> None:
    """Refuse a class_weight other than 'balanced', a mapping or None."""
    if class_weight is not None and not (
        class_weight == "balanced" or isinstance(class_weight, Mapping)
    ):
        raise ValueError(
            f"class_weight must be 'balanced', a dict of class -> weight or None, "
            f"got {class_weight!r}."
        )


def _check_selection_metric(
    datasets: Mapping[str, ComparisonData], selection_metric: str | None
) -> None:
    """Refuse a selection metric that does not fit a dataset's task."""
    for dname, data in datasets.items():
        metric = selection_metric or _TASK_METRICS[data.task][0]
        if metric not in _TASK_METRICS[data.task]:
            raise ValueError(
                f"selection_metric {metric!r} does not fit the {data.task} task of "
                f"{dname!r}; use one of {_TASK_METRICS[data.task]}."
            )


def _run_config(
    datasets: Mapping[str, ComparisonData],
    mechanisms: Sequence[str],
    rates: Sequence[float],
    n_draws: int,
    outer_folds: int,
    inner_folds: int,
    C_grid: Sequence[float],
    gamma_grid: Sequence[float],
    selection_metric: str | None,
    random_state: int,
    class_weight: str | dict | None,
    train_rate: float | None,
    train_size: int | None,
) -> dict[str, Any]:
    """The settings a results file records, which a resumed run must share."""
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
    if class_weight is not None:  # absent otherwise: older results resume
        config["class_weight"] = class_weight
    if train_rate is not None:  # likewise
        config["train_rate"] = _rate_key(train_rate)
    if train_size is not None:
        config["train_size"] = int(train_size)
    nominal = {
        name: np.flatnonzero(data.nominal_mask()).tolist()
        for name, data in sorted(datasets.items())
        if data.nominal_mask().any()
    }
    if nominal:  # absent for all-numeric tables: older results resume
        config["nominal"] = nominal
    return config


def _run_cells(
    path: Path | None,
    config: dict[str, Any],
    plan: Callable[[set], list[tuple]],
    jobs: list[tuple],
    n_jobs: int | None,
    progress: bool,
    tallies: dict[tuple[str, str], _WarningTally],
) -> tuple[Any, list[dict]]:
    """Run the cells not already in ``path``; return its earlier rows and the new.

    ``jobs`` is filled in place: the caller's warning summary counts the
    cells planned even when the run stops.
    """
    # The lock is held from before the results file is read (a concurrent
    # run could be appending to it) until the last row is written.
    with _exclusive(path):
        previous: Any = None
        done: set = set()
        if path is not None:
            _check_config(path, config)
            previous, done = _read_done(path)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            jobs.extend(plan(done))
        _merge_tallies(tallies, _tally_warnings(caught))
        rows = _execute(jobs, n_jobs, progress, path, tallies) if jobs else []
    return previous, rows


def _results_frame(pd: Any, previous: Any, rows: list[dict]) -> Any:
    """The earlier and the new rows in one frame, sorted by cell."""
    frames = [previous] if previous is not None else []
    if rows:
        frames.append(pd.DataFrame(rows, columns=list(RESULT_COLUMNS)))
    if not frames:
        return pd.DataFrame(columns=list(RESULT_COLUMNS))
    result = pd.concat(frames, ignore_index=True)
    order = ["dataset", "mechanism", "rate", "draw", "fold", "method", "metric"]
    return result.sort_values(order, kind="stable").reset_index(drop=True)


def _plan(
    datasets: Mapping[str, ComparisonData],
    specs: list[MethodSpec],
    mechanisms: Sequence[str],
    rates: Sequence[float],
    run_draws: list[int],
    outer_folds: int,
    inner_folds: int,
    selection_metric: str | None,
    random_state: int,
    done: set,
    class_weight: Any = None,
    train_rate: float | None = None,
    train_size: int | None = None,
) -> list[tuple]:
    """The arguments of :func:`._cv._run_cell` for every cell not ``done``."""
    # Draws outermost: an interrupted long run has every dataset covered by
    # its first draws rather than some datasets complete and others absent.
    plan: list[tuple] = []
    masks: dict[str, Any] = {}
    named: dict[str, _Columns | None] = {}
    for dname, data in datasets.items():
        data, masks[dname], named[dname] = _with_nominal_codes(data)
        task = data.task
        metric = selection_metric or _TASK_METRICS[task][0]
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
                if train_size is not None:
                    train = _subsample(
                        train,
                        y,
                        task,
                        train_size,
                        _seed(
                            random_state,
                            "subsample",
                            dname,
                            mech,
                            _rate_key(rate),
                            draw,
                            fold,
                        ),
                    )
                X_cell = None
                for spec in specs:
                    cell = _Cell(dname, mech, rate, draw, fold, spec.name)
                    if cell.key() in done:
                        continue
                    if X is None:
                        X = _missing_data(data, dname, mech, rate, draw, random_state)
                        if train_rate is not None:
                            X_train = _missing_data(
                                data, dname, mech, train_rate, draw, random_state
                            )
                    if X_cell is None:
                        X_cell = X
                        if train_rate is not None:
                            # The training rows from the draw at train_rate.
                            X_cell = X.copy()
                            X_cell[train] = X_train[train]
                    jobs.append(
                        (
                            cell,
                            spec,
                            X_cell,
                            y,
                            task,
                            train,
                            test,
                            inner_folds,
                            random_state,
                            metric,
                            class_weight,
                            masks[dname],
                            named[dname],
                        )
                    )
    return jobs


def _subsample(
    train: np.ndarray, y: np.ndarray, task: str, size: int, seed: int
) -> np.ndarray:
    """``size`` of the ``train`` indices (stratified for classification, every
    class kept), sorted; all of them if there are no more."""
    if train.size <= size:
        return train
    from sklearn.model_selection import train_test_split

    stratify = y[train] if task == "classification" else None
    keep, _ = train_test_split(
        train, train_size=size, stratify=stratify, random_state=seed % 2**32
    )
    return np.sort(keep)


def _check_train_options(
    datasets: Mapping[str, ComparisonData],
    mechanisms: Sequence[str],
    train_rate: Any,
    train_size: Any,
    inner_folds: int,
) -> None:
    """``train_rate`` and ``train_size`` of :func:`run_comparison`."""
    if train_rate is not None:
        if not _is_real(train_rate) or not 0.0 <= float(train_rate) < 1.0:
            raise ValueError(
                f"train_rate must be a missing rate in [0, 1) or None, got "
                f"{train_rate!r}."
            )
        bad = [m for m in mechanisms if m in ("mnar", "none")]
        if bad:
            raise ValueError(
                f"train_rate needs a mechanism that keeps every column "
                f"('mcar', 'mar', 'self_masking'), got {bad}: 'mnar' hides other "
                "columns in each draw, and 'none' has no rate to set."
            )
    if train_size is not None:
        if not _is_int(train_size) or train_size < 2 * inner_folds:
            raise ValueError(
                f"train_size must be an int >= 2 * inner_folds = {2 * inner_folds} "
                f"(rows to fit on), or None; got {train_size!r}."
            )
        for name, data in datasets.items():
            if data.task != "classification":
                continue
            _, counts = np.unique(np.asarray(data.y), return_counts=True)
            if train_size < counts.size * inner_folds:
                raise ValueError(
                    f"train_size={train_size} is too small for datasets[{name!r}]: "
                    f"its {counts.size} classes need at least inner_folds="
                    f"{inner_folds} training rows each; use train_size >= "
                    f"{counts.size * inner_folds}."
                )


def _merge_tallies(
    into: dict[tuple[str, str], _WarningTally], tallies: list[_WarningTally]
) -> None:
    for tally in tallies:
        key = tally.key()
        if key in into:
            into[key].merge(tally)
        else:
            into[key] = tally


def _warn_summary(tallies: dict[tuple[str, str], _WarningTally], n_cells: int) -> None:
    """Warn each distinct warning of a comparison once, with its count."""
    for tally in tallies.values():
        where = f" in {tally.cells} of {n_cells} cells" if tally.cells else ""
        first = "; the numbers are those of the first" if tally.varies else ""
        text = f"{tally.text} (raised {tally.count} times{where}{first})"
        try:
            message = tally.category(text)
        except Exception:  # a category that takes other arguments
            message = UserWarning(f"{tally.category.__name__}: {text}")
        warnings.warn(message, stacklevel=3)


def _execute(
    jobs: list,
    n_jobs: int | None,
    progress: bool,
    path: Path | None,
    tallies: dict[tuple[str, str], _WarningTally],
) -> list[dict]:
    """Run the cells; append their rows to ``path``, their warnings to
    ``tallies``."""
    from joblib import Parallel, delayed

    bar = None
    if progress:
        tqdm = import_optional(
            "tqdm.auto", "experiments", "run_comparison(progress=True)"
        ).tqdm

        bar = tqdm(total=len(jobs), unit="cell")
    rows: list[dict] = []
    results: Iterable[tuple[list[dict], list[_WarningTally]]]
    if n_jobs == 1:
        results = (_run_cell(*job) for job in jobs)
    else:
        results = Parallel(n_jobs=n_jobs, return_as="generator_unordered")(
            delayed(_run_cell)(*job) for job in jobs
        )
    try:
        for cell_rows, cell_warnings in results:
            if path is not None:
                _append(path, cell_rows)
            rows.extend(cell_rows)
            _merge_tallies(tallies, cell_warnings)
            if bar is not None:
                bar.update(1)
    finally:  # also on Ctrl-C: what follows starts on a fresh line
        if bar is not None:
            bar.close()
    return rows


def _check_args(
    datasets: Mapping[str, ComparisonData],
    methods: Any,
    mechanisms: Any,
    rates: Any,
    n_draws: int,
    outer_folds: int,
    inner_folds: int,
    n_jobs: int | None,
    random_state: Any,
) -> None:
    """Refuse bad arguments before any cell runs (not as NaN scores per cell)."""
    for label, value, example in (
        ("methods", methods, "['mean', 'genrbf']"),
        ("mechanisms", mechanisms, "['mar']"),
        ("rates", rates, "[0.3]"),
    ):
        if isinstance(value, str) or not isinstance(value, Iterable):
            raise ValueError(
                f"{label} must be a list, got {value!r}; e.g. {label}={example}."
            )
    if not datasets:
        raise ValueError("datasets is empty; pass at least one name -> ComparisonData.")
    for mech in mechanisms:
        if mech not in ("mcar", "mar", "mnar", "self_masking", "none"):
            raise ValueError(
                f"Unknown mechanism {mech!r}; use 'mcar', 'mar', 'mnar', "
                "'self_masking' or 'none' (the data's own missing values)."
            )
    if not list(mechanisms):
        raise ValueError("mechanisms is empty; e.g. mechanisms=['mar'].")
    simulated = any(m != "none" for m in mechanisms)
    for r in rates:
        if not _is_real(r) or not 0.0 <= float(r) < 1.0:
            raise ValueError(f"Missing rates must be in [0, 1), got {r!r}.")
    if simulated and not list(rates):
        raise ValueError(
            "rates is empty, so the simulated mechanisms would run nothing; "
            "e.g. rates=[0.3]."
        )
    keys = [_rate_key(r) for r in rates]
    if len(set(keys)) != len(keys):
        raise ValueError(f"rates must be distinct, got {list(rates)}.")
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
    if not _is_int(random_state):
        raise ValueError(
            f"random_state must be an int (the seed of everything), got "
            f"{random_state!r}."
        )
    for name, data in datasets.items():
        _check_data(name, data, simulated, outer_folds)


def _check_grid(label: str, grid: Any) -> None:
    """A grid of ``C`` or ``gamma``: a non-empty list of positive numbers."""
    if isinstance(grid, str) or not isinstance(grid, Iterable):
        raise ValueError(f"{label} must be a list of positive numbers, got {grid!r}.")
    values = list(grid)
    if not values:
        raise ValueError(
            f"{label} is empty; give at least one positive value, e.g. "
            f"{label}=[1.0] (the default is the genRBF paper's grid)."
        )
    bad = [v for v in values if not _is_real(v) or not 0.0 < float(v) < math.inf]
    if bad:
        raise ValueError(
            f"{label} must hold positive finite numbers; got {bad} in {values}."
        )


def _check_spec_grid(spec: MethodSpec) -> None:
    """The grid of a method: every list non-empty; C and gamma positive."""
    for key, values in spec.grid.items():
        label = f"the grid of method {spec.name!r}: {key}"
        if key == "gamma" and list(values) == [None]:
            continue  # a kernel without a width
        if key in ("C", "gamma"):
            _check_grid(label, values)
        elif isinstance(values, str) or not list(values):
            raise ValueError(f"{label} must be a non-empty list, got {values!r}.")
    if spec.kind in ("kernel", "pipeline") and "C" not in spec.grid:
        raise ValueError(
            f"Method {spec.name!r} of kind {spec.kind!r} needs a 'C' list in its grid."
        )
