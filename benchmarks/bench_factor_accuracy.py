"""Accuracy: genRBF with the factor-analytic density against the full Gaussian.

On ionosphere (d=34) and climate_model_crashes (d=18) under MCAR at 50% and
70%, the SVM on genRBF with ``FactorAnalysisDensity()`` (diagonal noise,
``q`` chosen by its own BIC, ``q = 1 .. min(10, Ledermann)``) against genRBF
with the default density (``gaussian_em``, with its prior), with vignette 8's
protocol (``vignettes/08_rate_sweep_classification.py``): complete rows, 3
missingness draws x 5 outer folds, a 3-fold inner grid search over C in
{2^-3, 2^-1, 2^1, 2^3, 2^5} x gamma in {2^-5, 2^-3, 2^-1, 2^1, 2^3}, the
features standardised on the training rows. Both methods see the same draws
and folds (the cells of ``run_comparison``), so their differences are paired.

Run (resumable: rerun the same command after an interruption; ``--draws N``
runs only the first N draws now)::

    nice .venv/bin/python benchmarks/bench_factor_accuracy.py [--draws N]
    .venv/bin/python benchmarks/bench_factor_accuracy.py --summary

Writes ``benchmarks/results_bench_factor_accuracy.csv`` (the runner's long
format, one row per cell and metric); ``--summary`` prints the mean accuracy
per (dataset, rate) and method and the paired differences (factor minus
Gaussian) per draw and over the draw x fold cells.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results_bench_factor_accuracy.csv"
DATASETS = ["ionosphere", "climate_model_crashes"]
RATES = [0.5, 0.7]
C_GRID = [2.0**k for k in (-3, -1, 1, 3, 5)]
GAMMA_GRID = [2.0**k for k in (-5, -3, -1, 1, 3)]
GAUSSIAN, FACTOR = "genrbf_gaussian", "genrbf_factor"


def methods() -> list:
    from missingkernels.densities import FactorAnalysisDensity
    from missingkernels.experiments import resolve_method

    grids = {"C_grid": C_GRID, "gamma_grid": GAMMA_GRID}
    gaussian = dataclasses.replace(resolve_method("genrbf", **grids), name=GAUSSIAN)
    factor = dataclasses.replace(
        resolve_method(
            "genrbf",
            kernel_params={"density": FactorAnalysisDensity()},
            **grids,
        ),
        name=FACTOR,
    )
    return [gaussian, factor]


def run(draws: int | None, n_jobs: int) -> None:
    sys.path.insert(0, str(HERE.parent / "vignettes"))
    from _common import complete_rows, load

    from missingkernels.experiments import run_comparison

    datasets = {k: complete_rows(v) for k, v in load(DATASETS).items()}
    start = time.perf_counter()
    run_comparison(
        datasets,
        methods(),
        mechanisms=["mcar"],
        rates=RATES,
        n_draws=3,
        outer_folds=5,
        inner_folds=3,
        C_grid=C_GRID,
        gamma_grid=GAMMA_GRID,
        output=OUT,
        n_jobs=n_jobs,
        draws=None if draws is None else range(min(draws, 3)),
    )
    print(f"wall {time.perf_counter() - start:.1f} s")


def summary() -> None:
    import pandas as pd
    from scipy.stats import wilcoxon

    results = pd.read_csv(OUT)
    keys = ["dataset", "rate", "draw", "fold"]
    cells = results.drop_duplicates([*keys, "method"])
    print("cell seconds (sum, min):")
    print((cells.groupby("method")["cell_seconds"].sum() / 60).round(1).to_string())
    for metric in ("accuracy", "balanced_accuracy"):
        df = results[results["metric"] == metric]
        wide = df.pivot_table(index=keys, columns="method", values="score").dropna()
        wide["diff"] = wide[FACTOR] - wide[GAUSSIAN]
        print(f"\n{metric} (factor - gaussian, paired by draw and outer fold):")
        for (name, rate), part in wide.groupby(["dataset", "rate"]):
            per_draw = part.groupby("draw")["diff"].mean()
            d = part["diff"].to_numpy()
            p = wilcoxon(d).pvalue if np.any(d != 0) else 1.0
            print(
                f"{name} {rate:.0%}: gaussian {part[GAUSSIAN].mean():.4f} "
                f"factor {part[FACTOR].mean():.4f} diff {d.mean():+.4f} "
                f"(sd {d.std(ddof=1):.4f}, n={len(d)} cells, wins/ties/losses "
                f"{(d > 0).sum()}/{(d == 0).sum()}/{(d < 0).sum()}, "
                f"Wilcoxon p={p:.3g}); per draw "
                f"{', '.join(f'{v:+.4f}' for v in per_draw)}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=None)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    if args.summary:
        summary()
    else:
        run(args.draws, args.n_jobs)


if __name__ == "__main__":
    main()
