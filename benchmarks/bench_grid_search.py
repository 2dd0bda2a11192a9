"""Grid search over C and gamma of MissingKernelSVC, with and without the fit cache.

``GridSearchCV(MissingKernelSVC(), {"C": [...], "gamma": [...]}, cv=5)``
fits the same density on the same training rows at every grid point, and the
same kernel (so the same training Gram) at every C. The fit cache
(``missingkernels.set_config(fit_cache_memory=...)``) keeps those fits. This
script times the same search with the cache off (``fit_cache_memory=0``, the
behaviour before the cache) and on, in one process, and checks that
``cv_results_`` scores are identical.

Run::

    .venv/bin/python benchmarks/bench_grid_search.py [--rate 0.3] [--mechanism mar]

Data: scikit-learn's breast cancer set (569 rows x 30 features, ``load_dataset
("sklearn_breast_cancer")``), standardised, with 30% of the entries removed
(MAR by default; ``--mechanism mcar`` too); a 3 x 3 grid, 5 folds, one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import StandardScaler

import missingkernels
from missingkernels import MissingKernelSVC
from missingkernels._fit_cache import clear_fit_cache, fit_cache_info
from missingkernels.datasets import load_dataset
from missingkernels.experiments import simulate_missing

GRID = {"C": [1.0, 8.0, 64.0], "gamma": [2.0**-7, 2.0**-5, 2.0**-3]}


def search(X: np.ndarray, y: np.ndarray, cache: bool) -> tuple[float, GridSearchCV]:
    clear_fit_cache()
    missingkernels.set_config(fit_cache_memory=None if cache else 0)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    gs = GridSearchCV(MissingKernelSVC(), GRID, cv=cv, n_jobs=1)
    start = time.perf_counter()
    gs.fit(X, y)
    return time.perf_counter() - start, gs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--mechanism", default="mar", choices=["mar", "mcar"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    data = load_dataset("sklearn_breast_cancer")
    X = StandardScaler().fit_transform(data.X)
    X = simulate_missing(X, args.mechanism, args.rate, random_state=args.seed)
    y = data.y
    print(
        f"{X.shape[0]} x {X.shape[1]}, {args.mechanism.upper()} "
        f"{np.isnan(X).mean():.1%} missing; grid {GRID}, cv=5"
    )
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EM convergence warnings, both runs
        # Compile numba's loops (or load them from its cache) before timing.
        MissingKernelSVC().fit(X[:60], y[:60])
        off, gs_off = search(X, y, cache=False)
        on, gs_on = search(X, y, cache=True)
        info = fit_cache_info()
    missingkernels.set_config(fit_cache_memory=None)
    keys = [
        k for k in gs_off.cv_results_ if k.startswith("split") or k == "mean_test_score"
    ]
    same = all(
        np.array_equal(gs_off.cv_results_[k], gs_on.cv_results_[k]) for k in keys
    )
    print(f"cache off: {off:7.1f} s")
    print(
        f"cache on:  {on:7.1f} s  ({off / on:.1f}x faster, {on / off:.0%} of the time; "
        f"{info['hits']} hits, {info['misses']} misses, "
        f"{info['bytes'] / 2**20:.1f} MiB held)"
    )
    print(f"identical cv_results_ test scores: {same}")
    print(f"best: {gs_on.best_params_}, score {gs_on.best_score_:.4f}")


if __name__ == "__main__":
    main()
