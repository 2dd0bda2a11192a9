"""Solve times of SOCPSVC per cvxpy solver, as ratios to ECOS.

Usage: python benchmarks/bench_socp.py [--form kernel|linear] [--sizes 100 200 300]
[--solvers ...]

Prints, per training size n, each solver's wall time for one whole fit (density,
kernel or conditional moments, and the cone program; every solver is warmed up
once on a small problem first), its ratio to ECOS measured in the same run, and
the largest difference of its decision values from ECOS's.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from missingkernels.estimators import SOCPSVC
from missingkernels.experiments import simulate_missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 300])
    parser.add_argument("--solvers", nargs="+", default=["ECOS", "SCS", "CLARABEL"])
    parser.add_argument("--kappa", type=float, default=0.8)
    parser.add_argument("--form", choices=["kernel", "linear"], default="kernel")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    solvers = ["ECOS", *[s for s in args.solvers if s != "ECOS"]]
    X = rng.normal(size=(30, 8))
    for solver in solvers:  # imports and first-call compilation, not timed
        SOCPSVC(kappa=args.kappa, form=args.form, solver=solver).fit(
            simulate_missing(X, "mcar", 0.2, random_state=0), X[:, 0] > 0
        )
    print(f"{'n':>5} {'solver':>9} {'seconds':>9} {'/ECOS':>7} {'max|f-f_ECOS|':>14}")
    for n in args.sizes:
        X = rng.normal(size=(n + 100, 8))
        y = X[:, 0] + X[:, 1] ** 2 - 1 + 0.3 * rng.normal(size=n + 100) > 0
        Xm = simulate_missing(X, "mcar", 0.2, random_state=0)
        train, test = slice(0, n), slice(n, None)
        ref_time, ref_scores = None, None
        for solver in solvers:
            model = SOCPSVC(
                C=1.0, kappa=args.kappa, gamma=0.1, form=args.form, solver=solver
            )
            start = time.perf_counter()
            model.fit(Xm[train], y[train])
            seconds = time.perf_counter() - start
            scores = model.decision_function(Xm[test])
            if ref_time is None:
                ref_time, ref_scores = seconds, scores
            print(
                f"{n:>5} {solver:>9} {seconds:>9.2f} {seconds / ref_time:>7.2f} "
                f"{np.abs(scores - ref_scores).max():>14.2e}"
            )


if __name__ == "__main__":
    main()
