"""The nested cross-validation runner of the method comparisons.

:func:`run_comparison` plans the cells (dataset, mechanism, rate, draw, outer
fold, method), runs them (:mod:`._cv`), appends their rows to the results
file and resumes from it (:mod:`._results`). Methods are resolved by
:mod:`._methods`; tables and statistics are in :mod:`._report` and
:mod:`._stats`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._optional import import_optional
from ._cv import _TASK_METRICS, _Cell, _rate_key, _run_cell, _seed, _splitter
from ._methods import PAPER_C_GRID, PAPER_GAMMA_GRID, MethodSpec, resolve_method
from ._missingness import simulate_missing
from ._results import (
    RESULT_COLUMNS,
    _append,
    _check_config,
    _exclusive,
    _read_done,
)


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
