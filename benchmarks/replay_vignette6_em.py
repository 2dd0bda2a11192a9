"""Replay cells of vignette 6 with plain EM and with SQUAREM (issue 26).

With ``--compare prior``: with the committed configuration (plain EM, the
maximum-likelihood density) and with today's default density (SQUAREM, the
prior ``prior_rows="auto"``, issue 39).

The committed results of ``vignettes/06_real_missingness.py --full`` were
computed with plain EM. This script replays cells of the EM-based methods
(``genrbf``, ``expected_rbf``, ``em``, ``gmm``, ``socp``) on the same outer
split and seed as the runner, once with every EM density defaulting to
``acceleration="none"`` and once to ``"squarem"``, and prints per cell the
committed accuracy, both replayed accuracies and how many test predictions
changed, then a summary per method. By default the cell is refitted at its
committed (C, gamma) (no inner search); ``--full-grid`` reruns the inner grid
search too. It uses the runner's private helpers; the vignette's committed
files are only read.

Run::

    .venv/bin/python benchmarks/replay_vignette6_em.py genrbf,expected_rbf,em
    .venv/bin/python benchmarks/replay_vignette6_em.py gmm,socp --sample 25
    .venv/bin/python benchmarks/replay_vignette6_em.py genrbf,em \\
        --dataset horse_colic --full-grid
    .venv/bin/python benchmarks/replay_vignette6_em.py genrbf,expected_rbf,em \\
        --compare prior --output benchmarks/results_replay_vignette6_prior.csv
"""

from __future__ import annotations

import argparse
import contextlib
import json
import warnings
from collections.abc import Iterator

import numpy as np
import pandas as pd

import missingkernels.experiments._cv as cv
from missingkernels.datasets import load_dataset
from missingkernels.densities import GaussianEMDensity, GaussianMixtureDensity
from missingkernels.experiments import resolve_method

RESULTS = "vignettes/results/06_real_missingness/full/results.csv"
SOCP_GRID = {"C_grid": [1.0, 8.0, 64.0], "gamma_grid": [2.0**-5, 2.0**-3]}


@contextlib.contextmanager
def default_params(**values: object) -> Iterator[None]:
    """Every EM density built by name in the block uses these defaults."""
    saved = {}
    for cls in (GaussianEMDensity, GaussianMixtureDensity):
        init = cls.__init__
        names = init.__code__.co_varnames[1 : init.__code__.co_argcount]
        defaults = list(init.__defaults__ or ())
        for name, value in values.items():
            defaults[names.index(name) - (len(names) - len(defaults))] = value
        saved[cls] = init.__defaults__
        init.__defaults__ = tuple(defaults)
    try:
        yield
    finally:
        for cls, old in saved.items():
            cls.__init__.__defaults__ = old


# The two configurations each cell is replayed with, per --compare: the
# committed results used plain EM and the maximum-likelihood density.
SCHEMES = {
    "acceleration": {
        "none": {"acceleration": "none", "prior_rows": 0.0},
        "squarem": {"acceleration": "squarem", "prior_rows": 0.0},
    },
    "prior": {
        "none": {"acceleration": "none", "prior_rows": 0.0},
        "squarem": {"acceleration": "squarem", "prior_rows": "auto"},
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("methods", help="comma-separated method names")
    parser.add_argument("--sample", type=int, default=None, help="cells per method")
    parser.add_argument("--dataset", default=None)
    parser.add_argument("--full-grid", action="store_true")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output", default=None, help="a CSV of the cells")
    parser.add_argument(
        "--compare",
        choices=sorted(SCHEMES),
        default="acceleration",
        help="acceleration: plain EM vs SQUAREM (both maximum likelihood); "
        "prior: the committed configuration (plain EM, maximum likelihood) vs "
        "the default density (SQUAREM, prior_rows='auto'); the columns keep "
        "the names none and squarem",
    )
    args = parser.parse_args()

    predictions: list[np.ndarray] = []
    fit_predict = cv._fit_predict

    def capture(*a, **k):  # type: ignore[no-untyped-def]
        pred = fit_predict(*a, **k)
        predictions.append(pred)
        return pred

    cv._fit_predict = capture
    results = pd.read_csv(RESULTS)
    chosen = results[
        (results.metric == "accuracy")
        & results.method.isin(args.methods.split(","))
        & (results.dataset == args.dataset if args.dataset else True)
    ]
    data: dict[str, tuple] = {}
    rows = []
    for method, group in chosen.groupby("method", sort=False):
        if args.sample is not None and len(group) > args.sample:
            group = group.sample(args.sample, random_state=0)
        for _, cell in group.sort_values(["dataset", "draw", "fold"]).iterrows():
            if cell.dataset not in data:
                ds = load_dataset(cell.dataset, data_dir=args.data_dir)
                X = np.asarray(ds.X, dtype=np.float64)
                data[cell.dataset] = (X, np.asarray(ds.y), ds.task)
            X, y, task = data[cell.dataset]
            where = ("none", cv._rate_key(float(np.isnan(X).mean())), int(cell.draw))
            split = cv._seed(0, "outer", cell.dataset, *where)
            train, test = list(cv._splitter(task, 5, split).split(X, y))[cell.fold]
            seed = cv._seed(
                0,
                "fit",
                cell.dataset,
                *where,
                int(cell.fold),
                cv._SEED_NAMES.get(method, method),
            )
            grid = dict(SOCP_GRID) if method == "socp" else {}
            if not args.full_grid:
                params = json.loads(cell.params)
                grid = {"C_grid": [params["C"]]}
                if "gamma" in params:
                    grid["gamma_grid"] = [params["gamma"]]
            spec = resolve_method(method, **grid)
            row = {
                "method": method,
                "dataset": cell.dataset,
                "draw": int(cell.draw),
                "fold": int(cell.fold),
                "committed": cell.score,
            }
            preds = {}
            for scheme in ("none", "squarem"):
                with (
                    default_params(**SCHEMES[args.compare][scheme]),
                    warnings.catch_warnings(),
                ):
                    warnings.simplefilter("ignore")
                    best, scores, _ = cv._select_and_score(
                        spec, task, X[train], y[train], X[test], y[test], 5, seed,
                        "accuracy",
                    )  # fmt: skip
                row[scheme] = scores["accuracy"]
                row[f"params_{scheme}"] = json.dumps(best)
                preds[scheme] = predictions[-1]
            row["changed_predictions"] = int(np.sum(preds["none"] != preds["squarem"]))
            row["n_test"] = len(test)
            rows.append(row)
            print(json.dumps(row), flush=True)
    table = pd.DataFrame(rows)
    if args.output:
        table.to_csv(args.output, index=False)
    table["gain"] = table.squarem - table.none
    summary = table.groupby("method").agg(
        cells=("gain", "size"),
        plain_reproduces_committed=(
            "committed",
            lambda s: int(np.isclose(s, table.loc[s.index, "none"]).sum()),
        ),
        cells_changed=("gain", lambda s: int((s != 0).sum())),
        mean_acc_plain=("none", "mean"),
        mean_acc_squarem=("squarem", "mean"),
        changed_predictions=("changed_predictions", "sum"),
        test_predictions=("n_test", "sum"),
    )
    print(summary.to_string())


if __name__ == "__main__":
    main()
