"""The mixed kernel's ``nominal_weight`` across tables: the evidence for its default.

Run::

    .venv/bin/python benchmarks/bench_nominal_weight.py [--data-dir DIR]
        [--weights 0.25,0.5,0.75,0.9,1] [--repeats 3] [--out FILE]

On the tables of ``bench_defaults.py`` (categorical columns read as text),
the stratified 5-fold accuracy of ``MissingKernelSVC()`` with every other
parameter at its default, for each ``nominal_weight`` (averaged over
``--repeats`` shufflings of the folds), beside the imputation + one-hot +
``StandardScaler`` + ``SVC()`` baseline of the same folds; the last line is
the mean over the tables.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from bench_defaults import TABLES, _baseline, _load
from sklearn.model_selection import StratifiedKFold, cross_val_score

from missingkernels import MissingKernelSVC


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default="/work/shared/data")
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--weights", default="0.25,0.5,0.75,0.9,1")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    header = f"{'table':<26}{'baseline':>9}" + "".join(f"{w:>8g}" for w in weights)
    lines = [header]
    print(header, flush=True)
    start = time.perf_counter()
    rows = []
    for name in args.tables.split(","):
        frame, y, nominal = _load(Path(args.data_dir), name)
        scores = np.zeros((args.repeats, len(weights) + 1))
        for seed in range(args.repeats):
            cv = StratifiedKFold(5, shuffle=True, random_state=seed)
            base = _baseline(frame, nominal)
            scores[seed, 0] = cross_val_score(base, frame, y, cv=cv).mean()
            for k, w in enumerate(weights):
                model = MissingKernelSVC(kernel_params={"nominal_weight": w})
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    scores[seed, k + 1] = cross_val_score(model, frame, y, cv=cv).mean()
        row = scores.mean(axis=0)
        rows.append(row)
        line = f"{name:<26}" + "".join(f"{v:>8.3f}" for v in row[:1]) + " "
        line += "".join(f"{v:>8.3f}" for v in row[1:])
        lines.append(line)
        print(line, flush=True)
    mean = np.mean(rows, axis=0)
    lines.append(
        f"{'mean':<26}{mean[0]:>8.3f} " + "".join(f"{v:>8.3f}" for v in mean[1:])
    )
    lines.append(f"total run time {time.perf_counter() - start:.0f} s")
    print("\n".join(lines[-2:]))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
