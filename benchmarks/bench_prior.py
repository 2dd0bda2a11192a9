"""Simulation: the Gaussian EM density's prior against maximum likelihood and
fixed ridges, to choose the default ``prior_rows``.

Run (resumable: rows already in the CSV are skipped)::

    nice .venv/bin/python benchmarks/bench_prior.py \
        [--out benchmarks/results_bench_prior.csv] [--grid full|issue|smoke] \
        [--seeds 3] [--budget SECONDS]
    .venv/bin/python benchmarks/bench_prior.py --summary [--out ...]

Data: ``n`` training rows of ``N(0, Sigma)`` in ``d`` dimensions, ``Sigma``
with eigenvalues evenly spaced on a log scale from 1 to 15 (condition
number 15, as in the issue's table) in a random basis; entries removed by
:func:`missingkernels.experiments.simulate_missing` (``mcar``, or the genRBF
paper's ``mar``) at ``rate``. Each method fits
:class:`~missingkernels.densities.GaussianEMDensity` on the same rows:
``ml`` (``prior_rows=0``), ``prior=m`` (``prior_rows=m``), ``auto`` (the
default, ``max(10, d)`` pseudo-rows), ``ridge=r`` (``prior_rows=0,
ridge=r``). Recorded per fit: KL(truth || fit), the fitted
covariance's condition number (and the truth's), EM steps, convergence and
fit time; on the cases with ``--accuracy`` (small n) also the test accuracy
of :class:`~missingkernels.MissingKernelSVC` (genRBF, ``C=1``,
``gamma="scale"``, no tuning) on a two-class task (class means
``+-0.5 Sigma^(1/2) u``, ``u`` a random unit vector, shared ``Sigma``), trained on the
``n`` incomplete rows and tested on 400 rows with the same missingness.

``--summary`` prints, per case group, the median KL, condition-number ratio,
EM steps and accuracy of every method.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import time
import warnings
from pathlib import Path

import numpy as np

from missingkernels import MissingKernelSVC
from missingkernels.densities import GaussianEMDensity
from missingkernels.experiments import simulate_missing

FIELDS = [
    "grid", "n", "d", "rate", "mechanism", "seed", "method", "kl", "cond",
    "cond_true", "n_iter", "converged", "seconds", "accuracy",
]  # fmt: skip
METHODS = {
    "ml": {"prior_rows": 0.0},
    "prior=1": {"prior_rows": 1.0},
    "prior=3": {"prior_rows": 3.0},
    "prior=10": {"prior_rows": 10.0},
    "prior=30": {"prior_rows": 30.0},
    "auto": {"prior_rows": "auto"},  # the default, max(10, d)
    "ridge=0.01": {"prior_rows": 0.0, "ridge": 0.01},
    "ridge=0.1": {"prior_rows": 0.0, "ridge": 0.1},
}
N_TEST = 400


def cases(grid: str) -> list[tuple[int, int, float, str, bool]]:
    """(n, d, rate, mechanism, with accuracy) of a grid."""
    if grid == "smoke":
        return [(60, 4, 0.5, "mcar", True)]
    if grid == "issue":
        # The table (MCAR).
        return [
            (60, 8, 0.5, "mcar", True),
            (200, 8, 0.7, "mcar", True),
            (200, 14, 0.5, "mcar", True),
            (60, 14, 0.7, "mcar", True),
            (1000, 14, 0.5, "mcar", False),
        ]
    out = []
    for n, d, rate, mech in itertools.product(
        (30, 200, 2000), (2, 8, 40), (0.1, 0.5, 0.8), ("mcar", "mar")
    ):
        if d == 40 and (n == 30 or (rate == 0.8 and n == 2000)):
            continue  # n < d, and the slowest EM cell (cut for time)
        out.append((n, d, rate, mech, n <= 200 and d <= 8))
    return out


def truth(d: int, rng: np.random.Generator) -> np.ndarray:
    """A covariance of condition number 15 in a random basis."""
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    eig = np.geomspace(1.0, 15.0, d) if d > 1 else np.ones(1)
    return (Q * eig) @ Q.T


def kl_gaussian(m0, S0, m1, S1) -> float:
    """KL(N(m0, S0) || N(m1, S1))."""
    d = len(m0)
    L = np.linalg.cholesky(S1)
    A = np.linalg.solve(L, S0)
    trace = float(np.trace(np.linalg.solve(L.T, A)))
    diff = np.linalg.solve(L, m1 - m0)
    logdet1 = 2 * np.sum(np.log(np.diag(L)))
    logdet0 = np.linalg.slogdet(S0)[1]
    return 0.5 * (trace + float(diff @ diff) - d + logdet1 - logdet0)


def run_case(n, d, rate, mech, accuracy, seed, methods, writer, done, grid):
    rng = np.random.default_rng([n, d, int(rate * 100), seed])
    S = truth(d, rng)
    root = np.linalg.cholesky(S)
    u = rng.normal(size=d)
    u /= np.linalg.norm(u)
    shift = root @ u  # class means +-shift: Mahalanobis distance 2
    n_all = n + (N_TEST if accuracy else 0)
    y = rng.integers(0, 2, size=n_all)
    X = rng.normal(size=(n_all, d)) @ root.T + np.where(y[:, None] == 1, shift, -shift)
    Xm = simulate_missing(X, mech, rate, random_state=int(rng.integers(2**31)))
    train, test = Xm[:n], Xm[n:]
    # The density sees the class mixture: its truth is the mixture's moments.
    m_true = np.zeros(d)
    S_true = S + np.outer(shift, shift)
    cond_true = float(np.linalg.cond(S_true))
    for method in methods:
        key = (grid, n, d, rate, mech, seed, method)
        if key in done:
            continue
        density = GaussianEMDensity(**METHODS[method])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            density.fit(train)
            seconds = time.perf_counter() - start
        kl = kl_gaussian(m_true, S_true, density.mean_, density.covariance_)
        acc = float("nan")
        if accuracy:
            clf = MissingKernelSVC(density=GaussianEMDensity(**METHODS[method]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clf.fit(train, y[:n])
                acc = float(np.mean(clf.predict(test) == y[n:]))
        row = {
            "grid": grid, "n": n, "d": d, "rate": rate, "mechanism": mech,
            "seed": seed, "method": method, "kl": f"{kl:.6g}",
            "cond": f"{np.linalg.cond(density.covariance_):.6g}",
            "cond_true": f"{cond_true:.6g}", "n_iter": density.n_iter_,
            "converged": int(density.converged_), "seconds": f"{seconds:.4f}",
            "accuracy": f"{acc:.4f}",
        }  # fmt: skip
        writer.writerow(row)


def summary(path: Path) -> None:
    import pandas as pd

    df = pd.read_csv(path)
    df["cond_ratio"] = df["cond"] / df["cond_true"]
    df["n_group"] = np.where(df["n"] < 200, "n<200", "n>=200")
    for grid, part in df.groupby("grid"):
        n_cases = len(part[["n", "d", "rate", "mechanism"]].drop_duplicates())
        print(f"\n== grid {grid}: {n_cases} cases, {part['seed'].nunique()} seeds")
        keys = ["n", "d", "rate"] if grid == "issue" else ["n_group", "d", "rate"]
        table = part.groupby([*keys, "method"]).agg(
            kl=("kl", "median"),
            kl_max=("kl", "max"),
            cond_ratio=("cond_ratio", "median"),
            cond_ratio_max=("cond_ratio", "max"),
            n_iter=("n_iter", "median"),
            accuracy=("accuracy", "mean"),
        )
        with pd.option_context("display.width", 200, "display.max_rows", 1000):
            print(table.to_string(float_format=lambda v: f"{v:.3g}"))
        overall = part.groupby("method").agg(
            kl_median=("kl", "median"),
            kl_p90=("kl", lambda s: s.quantile(0.9)),
            cond_ratio_p90=("cond_ratio", lambda s: s.quantile(0.9)),
            n_iter_mean=("n_iter", "mean"),
            accuracy=("accuracy", "mean"),
            seconds=("seconds", "sum"),
        )
        print(overall.to_string(float_format=lambda v: f"{v:.3g}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results_bench_prior.csv")
    parser.add_argument("--grid", default="full", choices=["full", "issue", "smoke"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--budget", type=float, default=float("inf"))
    parser.add_argument("--summary", action="store_true")
    args = parser.parse_args()
    path = Path(args.out)
    if args.summary:
        summary(path)
        return
    done = set()
    if path.exists():
        with path.open() as f:
            for row in csv.DictReader(f):
                done.add(
                    (row["grid"], int(row["n"]), int(row["d"]), float(row["rate"]),
                     row["mechanism"], int(row["seed"]), row["method"])
                )  # fmt: skip
    new = not path.exists()
    start = time.perf_counter()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        if new:
            writer.writeheader()
        for seed in range(args.seeds):
            for n, d, rate, mech, accuracy in cases(args.grid):
                if time.perf_counter() - start > args.budget:
                    print("budget reached; rerun to resume")
                    return
                run_case(
                    n, d, rate, mech, accuracy, seed, args.methods, writer, done,
                    args.grid,
                )  # fmt: skip
                f.flush()
                os.fsync(f.fileno())
    print(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
