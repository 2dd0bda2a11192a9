"""Cost of uncertainty_from_missing and value_of_measuring against predict.

Run::

    .venv/bin/python benchmarks/bench_missing_cost.py [--train 1000 2000]
        [--test 200] [--rate 0.3] [--repeats 2] [--seed 0] [--out FILE]

For each kernel (the default genRBF over ``gaussian_em`` on 8 numeric
columns; ``mixed_rbf`` over a latent-class density on a DataFrame of 5
numeric and 3 nominal columns) and each training size, fits
``MissingKernelSVC()`` on rows with ``--rate`` of their entries missing
completely at random, then times on the same ``--test`` new rows (same
missingness), in the same run:

- ``predict`` (median of 5 calls);
- ``uncertainty_from_missing(n_draws=200)`` and
  ``value_of_measuring(n_draws=100)`` (median of ``--repeats`` calls).

Printed are ratios to ``predict``, never seconds alone (they do not compare
across machines): the ratio of the calls, and the ratio *per scored row*.
``uncertainty_from_missing`` scores ``n_draws`` completed copies of each
incomplete row (complete rows are scored once, as by ``predict``);
``value_of_measuring`` scores ``n_draws`` copies of the row per missing
entry, each with that one entry filled in. Both stack their copies and pass
them through the support vectors' cross Gram in large batches, so each
scored copy should cost about what one row of ``predict`` costs (a completed
row is complete, which the kernels evaluate faster than an incomplete one).
Then the same calls on complete new rows (the same number), where both
methods have nothing to draw: their ratio to ``predict`` should be near 1.

Two to four minutes with the defaults on a shared 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import missingkernels
from missingkernels import MissingKernelSVC

ROOT = Path(__file__).resolve().parents[1]
N_DRAWS_UNCERTAINTY = 200
N_DRAWS_VALUE = 100


def _numeric(rng: np.random.Generator, n: int, d: int = 8):
    """Correlated Gaussian columns, a class boundary curved in two of them."""
    cov = 0.5 * np.eye(d) + 0.5
    X = rng.multivariate_normal(np.zeros(d), cov, size=n)
    noise = 0.5 * rng.normal(size=n)
    y = (X[:, 0] - X[:, 1] + 0.5 * X[:, 2] ** 2 - 0.5 + noise > 0).astype(int)
    return X, y


def _mixed(rng: np.random.Generator, n: int, p: int = 5, q: int = 3):
    """A DataFrame of p numeric and q nominal (categorical) columns."""
    z = rng.random(n) < 0.5
    num = rng.normal(size=(n, p)) + np.where(z[:, None], 0.6, -0.6)
    codes = np.where(z[:, None], rng.integers(0, 4, (n, q)), rng.integers(0, 2, (n, q)))
    frame = pd.DataFrame(num, columns=[f"x{j}" for j in range(p)])
    labels = np.array(["a", "b", "c", "d"])
    for j in range(q):
        frame[f"c{j}"] = pd.Categorical(labels[codes[:, j]], categories=labels)
    flip = rng.random(n) < 0.1
    return frame, np.where(flip, ~z, z).astype(int)


def _hide(X, rng: np.random.Generator, rate: float):
    """Entries missing completely at random (a copy)."""
    mask = rng.random(X.shape) < rate
    if isinstance(X, pd.DataFrame):
        return X.mask(mask)
    X = X.copy()
    X[mask] = np.nan
    return X


def _median_time(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _missing(X) -> np.ndarray:
    return np.asarray(pd.DataFrame(X).isna())


def _case(kind: str, n_train: int, args, rng: np.random.Generator) -> list[str]:
    make = _numeric if kind == "genrbf" else _mixed
    X, y = make(rng, n_train + args.test + args.complete)
    frame = isinstance(X, pd.DataFrame)
    rows = X.iloc if frame else X
    train = _hide(rows[:n_train], rng, args.rate)
    new = _hide(rows[n_train : n_train + args.test], rng, args.rate)
    full = rows[n_train + args.test :]  # complete new rows
    stack = pd.concat([new] * 10) if frame else np.vstack([new] * 10)
    model = MissingKernelSVC(random_state=0).fit(train, y[:n_train])
    kernel = type(model.kernel_).__name__
    seed = {"random_state": 0}
    # warm-up outside the timings: compiled loops (incomplete and complete rows)
    model.predict(new)
    model.uncertainty_from_missing(new[:5], n_draws=2, **seed)
    model.value_of_measuring(new[:5], n_draws=2, **seed)

    def uncertainty(rows):
        return model.uncertainty_from_missing(rows, n_draws=N_DRAWS_UNCERTAINTY, **seed)

    def value(rows):
        return model.value_of_measuring(rows, n_draws=N_DRAWS_VALUE, **seed)

    def draws():
        return model.plausible_values(new, n_draws=N_DRAWS_UNCERTAINTY, **seed)

    t_pred = _median_time(lambda: model.predict(new), 7)
    t_stack = _median_time(lambda: model.predict(stack), 3)
    t_unc = _median_time(lambda: uncertainty(new), args.repeats)
    t_draw = _median_time(draws, args.repeats)
    t_val = _median_time(lambda: value(new), args.repeats)
    missing = _missing(new)
    incomplete = int(missing.any(axis=1).sum())
    cells = int(missing.sum())
    per_pred = t_stack / len(stack)  # predict's fixed costs spread over 10x rows
    # rows scored: completed copies plus the rows themselves (scored once)
    unc_rows = incomplete * N_DRAWS_UNCERTAINTY + len(new)
    val_rows = cells * N_DRAWS_VALUE + len(new)
    # complete rows: nothing to draw
    c_pred = _median_time(lambda: model.predict(full), 7)
    c_unc = _median_time(lambda: uncertainty(full), 7)
    c_val = _median_time(lambda: value(full), 7)
    return [
        f"{kind:>6} {kernel:>14} {n_train:>5} {len(model.support_):>5} "
        f"{incomplete:>4} {cells:>5} {t_pred:>7.3f} "
        f"{t_unc:>6.2f} {t_unc / t_pred:>5.0f} {t_draw / t_unc:>5.0%} "
        f"{(t_unc / unc_rows) / per_pred:>5.2f} "
        f"{t_val:>6.2f} {t_val / t_pred:>5.0f} "
        f"{(t_val / val_rows) / per_pred:>5.2f} "
        f"{c_pred:>7.3f} {c_unc / c_pred:>5.2f} {c_val / c_pred:>5.2f}"
    ]


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--test", type=int, default=200)
    parser.add_argument("--complete", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=0.3, help="MCAR rate")
    parser.add_argument("--kernels", nargs="+", default=["genrbf", "mixed"])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    start = time.perf_counter()
    lines = [
        "                                          |  uncertainty (200 draws) |"
        "  value (100 draws) | complete rows",
        " table         kernel train   SVs inc. cells predict      s ratio draws"
        "  /row      s ratio  /row predict   unc value",
        "-" * 117,
    ]
    for kind in args.kernels:
        for n_train in args.train:
            rng = np.random.default_rng([args.seed, n_train])
            row = _case(kind, n_train, args, rng)
            lines += row
            print(row[0], flush=True)
    wall = time.perf_counter() - start
    command = " ".join(["benchmarks/bench_missing_cost.py", *sys.argv[1:]])
    header = [
        "# benchmarks/bench_missing_cost.py: uncertainty_from_missing and "
        "value_of_measuring against predict",
        f"# Command: .venv/bin/python {command}   (from the repository root)",
        f"# Run: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} "
        f"cores (shared), commit {_commit()}; wall time {wall:.0f} s",
        f"# missingkernels imported from {Path(missingkernels.__file__).parent}",
        f"# {args.test} new rows, {args.rate:.0%} MCAR in training and new rows; "
        f"uncertainty n_draws={N_DRAWS_UNCERTAINTY}, value n_draws={N_DRAWS_VALUE}, "
        "MissingKernelSVC() defaults",
        "# inc. = incomplete new rows, cells = their missing entries; predict and s = "
        "seconds (median);",
        "# ratio = the call's time / predict's on the same new rows (same run);",
        "# draws = plausible_values(n_draws=200) on the same rows / uncertainty (the "
        "same draws): the share of drawing, plus decoding into a DataFrame's dtypes;",
        "# /row = time per scored row / predict's per row on the new rows stacked "
        "10 times (its fixed costs spread):",
        "#   uncertainty scores inc. x 200 completed rows, value cells x 100 rows "
        "with one entry filled, both the rows once;",
        f"# complete rows = {args.complete} complete new rows: predict's time, and "
        "the calls' time / predict's (nothing to draw: near 1).",
        "",
    ]
    text = "\n".join(header + lines) + "\n"
    print()
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
