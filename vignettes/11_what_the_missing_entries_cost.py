"""Vignette 11: what the missing entries cost.

How uncertain is each prediction because of its missing entries, is that
uncertainty honest, and which entry should be measured next? The estimator's
``uncertainty_from_missing`` (the completed decisions over draws of the
missing entries from the fitted density, and the flip probability: the share
of completions whose predicted class differs from today's) and
``value_of_measuring`` (per missing entry, the chance that observing it alone
changes the predicted class), tested where they can fail:

- **natural**: tables with their own missing values (Pima's insulin and skin
  fold, hepatitis, horse colic; every column numeric, as in vignette 6):
  how many cross-validated test decisions are at risk (flip probability
  above 0.1, 0.2, 0.5), how accurate the risky decisions are, and which
  entry the value of measuring ranks first;
- **simulated**: complete tables (Pima's complete rows, breast cancer's
  complete rows, banknote, australian's six numeric columns, a Gaussian and
  a two-component mixture simulation) with entries hidden at 10, 30 and 50%
  in training and test rows alike, so that the truth is known, by three
  mechanisms: MCAR and the genRBF paper's "MAR" (eq. 26, ``simulate_missing``:
  an entry goes missing when its row is near a reference row, a distance
  that includes the entry itself, so the hidden values depend on being
  hidden: not missing at random in Rubin's sense) and ``mar_rubin``, missing
  at random in Rubin's sense (the first column always observed, each other
  entry hidden with probability ``sigmoid(2 z + c)``, ``z`` the standardised
  first column, ``c`` set so that the rate is met): (a) decisions at
  risk at each rate; (b) the reliability of the flip probability against the
  flips observed once the hidden entries are revealed, and its Brier score
  against a constant forecast; (c) a measurement policy: reveal each test
  row's missing entries one at a time in order of value (recomputed after
  each reveal, and ranked once), at random, and in a fixed order (the
  features' average value on the training rows), and follow the accuracy
  against the number of measurements, with the accuracy on the complete
  rows as the ceiling.

Run from the repository root::

    python vignettes/11_what_the_missing_entries_cost.py --quick   # CI
    python vignettes/11_what_the_missing_entries_cost.py --full

A cell is one outer fold of one (dataset, mechanism, rate, draw); its rows
are appended to the results files under
``results/11_what_the_missing_entries_cost/<mode>/`` when it finishes, so
rerunning the same command resumes. ``--parts natural,simulated``,
``--datasets a,b``, ``--mechanisms mcar``, ``--rates 0.3`` and ``--draws N``
choose what runs now (the report covers every finished cell and says PARTIAL
until all planned cells are done); ``--report-only`` rewrites the report.

Protocol (full): stratified 5-fold cross-validation (5 repeats on the natural
tables, 3 draws of the mask and folds on the simulated ones; ``--draws 1``
runs the first repeat and draw of every table, mechanism and rate before
any second one); on each training fold a ``MissingKernelSVC`` (genRBF over
the Gaussian EM density; the two-component mixture density for the mixture
simulation; gamma 'scale') with C chosen by a 3-fold grid search over
{0.5, 2, 8}; 200 draws for ``uncertainty_from_missing`` (Monte Carlo
standard error of a flip probability at most 0.035) and 50 per entry for
``value_of_measuring`` in the policies and the fixed order (100 for the
natural tables' ranking). Budget, measured on 2 shared cores (load 3-4):
a natural cell 1-3 s (Pima, hepatitis) to 16-20 s (horse colic), a
simulated cell 5-30 s (the recomputed-value policy and the mixture density
most of it); 75 natural and 540 simulated cells, about 2.5 hours in all, a
third of it for the first draw.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import platform
import shlex
import signal
import sys
import time
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import RESULTS, _exit_on_sigterm, _record_run, _runs_summary

import missingkernels
from missingkernels import MissingKernelSVC
from missingkernels.datasets import load_dataset
from missingkernels.experiments import simulate_missing
from missingkernels.experiments._tables import fit_tables

NAME = "11_what_the_missing_entries_cost"
TITLE = "What the missing entries cost"
QUESTION = (
    "How many predictions would change if their missing entries were "
    "observed, is the model's flip probability an honest forecast of that, "
    "and does measuring the entries the model ranks first recover the "
    "complete-data accuracy sooner than measuring at random or in a fixed "
    "order?"
)
THRESHOLDS = (0.1, 0.2, 0.5)
BINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0 + 1e-9)
POLICIES = ("value", "value_once", "fixed", "random")
POLICY_LABELS = {
    "value": "by value, recomputed after each reveal",
    "value_once": "by value, ranked once",
    "fixed": "fixed order (the features' average value on the fold's "
    "incomplete training rows, in-sample)",
    "random": "at random (mean of 5 orders)",
}
N_RANDOM_ORDERS = 5
#: Within this many points of the complete-row accuracy counts as reached.
REACHED = 0.005


# -- settings -------------------------------------------------------------------


def settings(quick: bool) -> dict[str, Any]:
    if quick:
        return dict(
            natural=["hepatitis"],
            simulated=["gaussian"],
            mechanisms=["mcar", "mar_rubin"],
            rates=[0.3],
            density_tables=[],
            density_mechanisms=[],
            density_components=4,
            natural_repeats=1,
            sim_draws=1,
            folds=2,
            C_grid=[1.0],
            inner_folds=0,
            n_uncertainty=50,
            n_value=20,
            n_value_natural=20,
            sim_rows=200,
            fixed_rows=40,
        )
    return dict(
        natural=["pima_indians_diabetes_na", "hepatitis", "horse_colic"],
        simulated=[
            "gaussian",
            "mixture",
            "pima_complete",
            "breast_cancer_complete",
            "banknote_authentication",
            "australian_numeric",
        ],
        mechanisms=["mcar", "mar", "mar_rubin"],
        rates=[0.3, 0.5, 0.1],
        density_tables=[
            "pima_complete",
            "breast_cancer_complete",
            "banknote_authentication",
            "australian_numeric",
        ],
        density_mechanisms=["mcar", "mar_rubin"],
        density_components=4,
        natural_repeats=5,
        sim_draws=3,
        folds=5,
        C_grid=[0.5, 2.0, 8.0],
        inner_folds=3,
        n_uncertainty=200,
        n_value=50,
        n_value_natural=100,
        sim_rows=600,
        fixed_rows=150,
    )


def _seed(*key: Any) -> int:
    return zlib.crc32("|".join(map(str, key)).encode()) % (2**31)


# -- data -----------------------------------------------------------------------


def _simulation(kind: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Complete rows of a correlated Gaussian (d = 6) or a two-component
    mixture of it, and a nonlinear label without noise."""
    d = 6
    A = np.random.default_rng(0).normal(size=(d, d))
    S = A @ A.T / d + 0.3 * np.eye(d)
    rng = np.random.default_rng(seed)
    X = rng.multivariate_normal(np.zeros(d), S, size=n)
    if kind == "mixture":
        side = np.where(rng.random(n) < 0.5, 1.2, -1.2)[:, None]
        X = 0.7 * X + side * np.array([1.0, -1.0, 1.0, 0.5, 0.0, -0.5])
    y = (X[:, 0] + np.sin(2 * X[:, 1]) - 0.5 * X[:, 2] + 0.3 * X[:, 3] > 0).astype(int)
    return X, y


def hide_mar_rubin(X: np.ndarray, rate: float, seed: int) -> np.ndarray:
    """Missing at random in Rubin's sense: the first column always observed,
    entry (i, j > 0) hidden with probability ``sigmoid(2 z_i + c)``, ``z`` the
    standardised first column and ``c`` chosen (bisection) so that the
    expected share of hidden entries over the whole table is ``rate``."""
    n, d = X.shape
    z = (X[:, 0] - X[:, 0].mean()) / X[:, 0].std()
    target = rate * d / (d - 1)  # the share of the other columns' entries
    low, high = -30.0, 30.0
    for _ in range(100):
        c = (low + high) / 2
        if np.mean(1 / (1 + np.exp(-(2 * z + c)))) < target:
            low = c
        else:
            high = c
    p = 1 / (1 + np.exp(-(2 * z + c)))
    hidden = X.astype(float)
    rng = np.random.default_rng(seed)
    drop = rng.random((n, d - 1)) < p[:, None]
    hidden[:, 1:][drop] = np.nan
    return hidden


def load_table(name: str, n_sim: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Rows, labels and feature names of a table of either part."""
    if name in ("gaussian", "mixture"):
        X, y = _simulation(name, n_sim)
        return X, y, [f"x{j}" for j in range(X.shape[1])]
    source = {
        "pima_complete": "pima_indians_diabetes_na",
        "breast_cancer_complete": "breast_cancer_wisconsin",
        "australian_numeric": "australian",
    }.get(name, name)
    ds = load_dataset(source)
    X, y, names = ds.X, np.asarray(ds.y), list(ds.feature_names)
    if name == "australian_numeric":
        keep = [j for j in range(X.shape[1]) if j not in set(ds.nominal_indices)]
        X, names = X[:, keep], [names[j] for j in keep]
    if name in ("pima_complete", "breast_cancer_complete"):
        complete = ~np.isnan(X).any(axis=1)
        X, y = X[complete], y[complete]
    return X, y, names


# -- the model ------------------------------------------------------------------


def fit_model(
    X: np.ndarray, y: np.ndarray, names: list[str], cfg: dict, mixture: bool, seed: int
) -> tuple[Any, float]:
    """A MissingKernelSVC on the training rows (C by an inner grid search)."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    base = MissingKernelSVC(
        density="gaussian_mixture" if mixture else None,
        density_params={"n_components": 2} if mixture else None,
        random_state=0,
    )
    frame = pd.DataFrame(X, columns=names)
    if cfg["inner_folds"] and len(cfg["C_grid"]) > 1:
        inner = StratifiedKFold(cfg["inner_folds"], shuffle=True, random_state=seed)
        search = GridSearchCV(base, {"C": cfg["C_grid"]}, cv=inner, n_jobs=1)
        search.fit(frame, y)
        model = search.best_estimator_
    else:
        model = base.set_params(C=cfg["C_grid"][0]).fit(frame, y)
    return model, float(model.C)


def _folds(y: np.ndarray, n_folds: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    from sklearn.model_selection import StratifiedKFold

    splitter = StratifiedKFold(n_folds, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(y)), y))


# -- cells ----------------------------------------------------------------------


def natural_cell(
    name: str, draw: int, fold: int, cfg: dict
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One outer fold of a table with its own missing values: the test
    rows' uncertainty and the value of measuring each missing entry."""
    X, y, names = load_table(name, cfg["sim_rows"])
    train, test = _folds(y, cfg["folds"], _seed(name, draw))[fold]
    seed = _seed(name, draw, fold)
    model, C = fit_model(X[train], y[train], names, cfg, False, seed)
    Xt = pd.DataFrame(X[test], columns=names)
    u = model.uncertainty_from_missing(
        Xt, n_draws=cfg["n_uncertainty"], random_state=seed
    )
    value = model.value_of_measuring(
        Xt, n_draws=cfg["n_value_natural"], random_state=seed
    ).to_numpy()
    missing = np.isnan(X[test])
    ranked = np.where(missing, value, -np.inf)
    top = ranked.argmax(axis=1)
    top_value = ranked.max(axis=1)
    rows = pd.DataFrame(
        {
            "dataset": name,
            "draw": draw,
            "fold": fold,
            "row": test,
            "label": y[test],
            "n_missing": u["n_missing"].to_numpy(),
            "prediction": u["prediction"].to_numpy(),
            "decision": u["decision"].to_numpy(),
            "completed_sd": u["completed_sd"].to_numpy(),
            "completed_q05": u["completed_q05"].to_numpy(),
            "completed_q95": u["completed_q95"].to_numpy(),
            "flip_probability": u["flip_probability"].to_numpy(),
            "missing_features": ["|".join(np.array(names)[m]) for m in missing],
            "top_feature": [
                names[t] if v > 0 else "" for t, v in zip(top, top_value, strict=True)
            ],
            "top_value": np.where(missing.any(axis=1), top_value, np.nan),
            "values": [
                "|".join(f"{names[j]}={value[i, j]:.3g}" for j in np.flatnonzero(m))
                for i, m in enumerate(missing)
            ],
        }
    )
    return rows, {"C": C}


def _priority_choice(
    priority: np.ndarray, miss: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    """For each of ``rows``, its still-missing column of highest priority."""
    p = np.where(miss[rows], priority[rows], -np.inf)
    return p.argmax(axis=1)


def _policy_curve(
    model: Any,
    hidden: np.ndarray,
    truth: np.ndarray,
    labels: np.ndarray,
    choose: Any,
    names: list[str],
) -> tuple[np.ndarray, np.ndarray]:
    """Counts after k = 0..d measurements per row (rows: correct, same as
    the complete-row decision, and the same among the rows whose decision
    the hidden entries change), revealing the column ``choose(k, rows,
    current, miss)`` of each still-incomplete row at step k."""
    d = hidden.shape[1]
    cur = hidden.copy()
    miss = np.isnan(cur)
    final = model.predict(pd.DataFrame(truth, columns=names))
    pred = model.predict(pd.DataFrame(cur, columns=names))
    flips = pred != final  # the decisions the hidden entries change
    counts = np.zeros((3, d + 1))
    for k in range(d + 1):
        if k:
            rows = np.flatnonzero(miss.any(axis=1))
            if len(rows):
                cols = choose(k, rows, cur, miss)
                cur[rows, cols] = truth[rows, cols]
                miss[rows, cols] = False
                pred[rows] = model.predict(pd.DataFrame(cur[rows], columns=names))
        same = pred == final
        counts[:, k] = (pred == labels).sum(), same.sum(), same[flips].sum()
    return counts


def hide(
    X: np.ndarray, name: str, mechanism: str, rate: float, draw: int
) -> tuple[np.ndarray, bool]:
    """The table with entries hidden (the same for every part), and whether
    MAR met its rate only through tied rows."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # MAR on tied rows: counted, reported
        if mechanism == "mar_rubin":
            hidden = hide_mar_rubin(X, rate, _seed(name, mechanism, rate, draw))
        else:
            hidden = simulate_missing(
                X, mechanism, rate, random_state=_seed(name, mechanism, rate, draw)
            )
    degenerate = any(
        type(w.message).__name__ == "DegenerateMissingnessWarning" for w in caught
    )
    return hidden, degenerate


def density_cell(
    name: str, mechanism: str, rate: float, draw: int, fold: int, cfg: dict
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The same masks and folds as the simulated cells, C fixed at 2: the
    flip probabilities under the Gaussian density and under a Gaussian
    mixture, against the revealed truth."""
    X, y, names = load_table(name, cfg["sim_rows"])
    hidden, _ = hide(X, name, mechanism, rate, draw)
    train, test = _folds(y, cfg["folds"], _seed(name, draw))[fold]
    seed = _seed(name, mechanism, rate, draw, fold)
    frames, seconds = [], {}
    for density in ("gaussian", "mixture"):
        start = time.perf_counter()
        model = MissingKernelSVC(
            C=2.0,
            density="gaussian_mixture" if density == "mixture" else None,
            density_params={"n_components": cfg["density_components"]}
            if density == "mixture"
            else None,
            random_state=0,
        ).fit(pd.DataFrame(hidden[train], columns=names), y[train])
        u = model.uncertainty_from_missing(
            pd.DataFrame(hidden[test], columns=names),
            n_draws=cfg["n_uncertainty"],
            random_state=seed,
        )
        frames.append(
            pd.DataFrame(
                {
                    "dataset": name,
                    "mechanism": mechanism,
                    "rate": rate,
                    "draw": draw,
                    "fold": fold,
                    "density": density,
                    "row": test,
                    "label": y[test],
                    "n_missing": u["n_missing"].to_numpy(),
                    "prediction": u["prediction"].to_numpy(),
                    "prediction_complete": model.predict(
                        pd.DataFrame(X[test], columns=names)
                    ),
                    "flip_probability": u["flip_probability"].to_numpy(),
                }
            )
        )
        seconds[f"seconds_{density}"] = time.perf_counter() - start
    return pd.concat(frames, ignore_index=True), seconds


def simulated_cell(
    name: str, mechanism: str, rate: float, draw: int, fold: int, cfg: dict
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """One outer fold of a complete table with entries hidden: flip
    probabilities against the revealed truth, and the measurement policies."""
    X, y, names = load_table(name, cfg["sim_rows"])
    hidden, degenerate = hide(X, name, mechanism, rate, draw)
    train, test = _folds(y, cfg["folds"], _seed(name, draw))[fold]
    seed = _seed(name, mechanism, rate, draw, fold)
    model, C = fit_model(hidden[train], y[train], names, cfg, name == "mixture", seed)
    Ht, Tt, yt = hidden[test], X[test], y[test]
    frame = pd.DataFrame(Ht, columns=names)
    u = model.uncertainty_from_missing(
        frame, n_draws=cfg["n_uncertainty"], random_state=seed
    )
    complete_prediction = model.predict(pd.DataFrame(Tt, columns=names))
    rows = pd.DataFrame(
        {
            "dataset": name,
            "mechanism": mechanism,
            "rate": rate,
            "draw": draw,
            "fold": fold,
            "row": test,
            "label": yt,
            "n_missing": u["n_missing"].to_numpy(),
            "prediction": u["prediction"].to_numpy(),
            "prediction_complete": complete_prediction,
            "decision": u["decision"].to_numpy(),
            "completed_sd": u["completed_sd"].to_numpy(),
            "flip_probability": u["flip_probability"].to_numpy(),
        }
    )
    # The fixed order: the features' average value of measuring over (at most
    # fixed_rows) incomplete training rows, where the entry is missing.
    rng = np.random.default_rng(seed)
    Htr = hidden[train]
    incomplete = np.flatnonzero(np.isnan(Htr).any(axis=1))
    pick = rng.choice(incomplete, min(len(incomplete), cfg["fixed_rows"]), False)
    train_value = model.value_of_measuring(
        pd.DataFrame(Htr[pick], columns=names),
        n_draws=cfg["n_value"],
        random_state=seed,
    ).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # never missing: NaN
        average = np.nan_to_num(np.nanmean(train_value, axis=0), nan=-1.0)
    order = np.argsort(-average, kind="stable")
    fixed = np.empty(len(names))
    fixed[order] = np.arange(len(names))[::-1] / len(names)  # in [0, 1)
    fixed_priority = np.broadcast_to(fixed, Ht.shape)
    n_value = cfg["n_value"]
    tie = 1e-3 / n_value  # values are multiples of 1 / n_value: ties only

    def value_now(k, r, cur, miss):
        v = model.value_of_measuring(
            pd.DataFrame(cur[r], columns=names), n_draws=n_value, random_state=seed
        ).to_numpy()
        return _priority_choice(
            np.nan_to_num(v) + tie * fixed_priority[r], miss[r], np.arange(len(r))
        )

    first = model.value_of_measuring(frame, n_draws=n_value, random_state=seed)
    once = np.nan_to_num(first.to_numpy()) + tie * fixed_priority
    curves = []
    for policy in POLICIES:
        if policy == "random":
            counts = np.zeros((3, len(names) + 1))
            for m in range(N_RANDOM_ORDERS):
                noise = np.random.default_rng(_seed(seed, "random", m)).random(Ht.shape)

                def at_random(k, r, cur, miss, p=noise):
                    return _priority_choice(p, miss, r)

                curve = _policy_curve(model, Ht, Tt, yt, at_random, names)
                counts += curve / N_RANDOM_ORDERS
        else:
            if policy == "value":
                choose = value_now
            else:
                priority = once if policy == "value_once" else fixed_priority

                def choose(k, r, cur, miss, p=priority):
                    return _priority_choice(p, miss, r)

            counts = _policy_curve(model, Ht, Tt, yt, choose, names)
        correct, agree, agree_flipped = counts
        for k in range(len(names) + 1):
            curves.append(
                {
                    "dataset": name,
                    "mechanism": mechanism,
                    "rate": rate,
                    "draw": draw,
                    "fold": fold,
                    "policy": policy,
                    "k": k,
                    "n_rows": len(test),
                    "n_incomplete": int(np.isnan(Ht).any(axis=1).sum()),
                    "correct": correct[k],
                    "agree": agree[k],
                    "n_flipped": int(
                        (u["prediction"].to_numpy() != complete_prediction).sum()
                    ),
                    "agree_flipped": agree_flipped[k],
                    "correct_complete": int((complete_prediction == yt).sum()),
                }
            )
    meta = {
        "C": C,
        "fixed_order": "|".join(names[j] for j in order),
        "missing_rate": float(np.isnan(hidden).mean()),
        "degenerate_mar": degenerate,
    }
    return rows, pd.DataFrame(curves), meta


# -- results files ------------------------------------------------------------------

NATURAL_KEY = ("dataset", "draw", "fold")
SIM_KEY = ("dataset", "mechanism", "rate", "draw", "fold")


def _append(path: Path, frame: pd.DataFrame) -> None:
    frame.to_csv(
        path, mode="a", header=not path.is_file(), index=False, float_format="%.6g"
    )


def _done(path: Path, key: Sequence[str]) -> set[tuple]:
    if not path.is_file():
        return set()
    cells = pd.read_csv(path)
    return {tuple(_norm(v) for v in row) for row in cells[list(key)].itertuples(False)}


def _norm(v: Any) -> Any:
    if isinstance(v, (float, np.floating)):
        return round(float(v), 6)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def _read(path: Path, cells: pd.DataFrame, key: Sequence[str]) -> pd.DataFrame:
    """The rows of a results file that belong to finished cells (a cell's
    rows are appended before its line in the cells file)."""
    if not path.is_file() or cells.empty:
        return pd.DataFrame()
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    for col in ("missing_features", "top_feature", "values"):
        if col in frame:
            frame[col] = frame[col].fillna("").astype(str)
    done = cells[list(key)].drop_duplicates()
    return frame.merge(done, on=list(key), how="inner")


class _Lock:
    """Refuses a second process writing the same results directory."""

    def __init__(self, out: Path):
        self.path = out / ".lock"

    def __enter__(self) -> _Lock:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pid = int(self.path.read_text() or 0)
            try:
                os.kill(pid, 0)
            except (ProcessLookupError, ValueError):
                self.path.unlink()  # stale: its process has ended
                return self.__enter__()
            raise SystemExit(
                f"{self.path.parent} is being written by process {pid}."
            ) from None
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.path.unlink(missing_ok=True)


def planned_cells(cfg: dict) -> tuple[list[tuple], list[tuple]]:
    natural = [
        (d, r, f)
        for d in cfg["natural"]
        for r in range(cfg["natural_repeats"])
        for f in range(cfg["folds"])
    ]
    # Draw-major: every (table, mechanism, rate) gets its first draw first.
    simulated = [
        (d, m, rate, r, f)
        for r in range(cfg["sim_draws"])
        for rate in cfg["rates"]
        for d in cfg["simulated"]
        for m in cfg["mechanisms"]
        for f in range(cfg["folds"])
    ]
    return natural, simulated


def planned_density(cfg: dict) -> list[tuple]:
    """The density check's cells: the real tables at 30%, first draw."""
    return [
        (d, m, 0.3, 0, f)
        for d in cfg["density_tables"]
        for m in cfg["density_mechanisms"]
        for f in range(cfg["folds"])
    ]


def run(out: Path, cfg: dict, args: argparse.Namespace) -> int:
    """Compute the cells not yet in the results files; return how many."""
    natural, simulated = planned_cells(cfg)
    parts = (
        set(args.parts.split(","))
        if args.parts
        else {"natural", "simulated", "density"}
    )
    only = set(args.datasets.split(",")) if args.datasets else None
    mechs = set(args.mechanisms.split(",")) if args.mechanisms else None
    rates = {round(float(r), 6) for r in args.rates.split(",")} if args.rates else None
    draws = args.draws
    added = 0
    if "natural" in parts:
        done = _done(out / "natural_cells.csv", NATURAL_KEY)
        for cell in natural:
            if cell in done or (only and cell[0] not in only):
                continue
            if draws is not None and cell[1] >= draws:
                continue
            start = time.perf_counter()
            rows, meta = natural_cell(*cell, cfg)
            seconds = time.perf_counter() - start
            _append(out / "natural_rows.csv", rows)
            _append(
                out / "natural_cells.csv",
                pd.DataFrame(
                    [dict(zip(NATURAL_KEY, cell, strict=True), **meta, seconds=seconds)]
                ),
            )
            added += 1
            print(f"natural {cell}: {seconds:.1f} s", file=sys.stderr)
    if "simulated" in parts:
        done = _done(out / "simulated_cells.csv", SIM_KEY)
        for cell in simulated:
            key = tuple(_norm(v) for v in cell)
            if key in done or (only and cell[0] not in only):
                continue
            if (mechs and cell[1] not in mechs) or (rates and key[2] not in rates):
                continue
            if draws is not None and cell[3] >= draws:
                continue
            start = time.perf_counter()
            rows, curves, meta = simulated_cell(*cell, cfg)
            seconds = time.perf_counter() - start
            _append(out / "simulated_rows.csv", rows)
            _append(out / "simulated_curves.csv", curves)
            _append(
                out / "simulated_cells.csv",
                pd.DataFrame(
                    [dict(zip(SIM_KEY, cell, strict=True), **meta, seconds=seconds)]
                ),
            )
            added += 1
            print(f"simulated {cell}: {seconds:.1f} s", file=sys.stderr)
    if "density" in parts:
        done = _done(out / "density_cells.csv", SIM_KEY)
        for cell in planned_density(cfg):
            key = tuple(_norm(v) for v in cell)
            if key in done or (only and cell[0] not in only):
                continue
            if mechs and cell[1] not in mechs:
                continue
            start = time.perf_counter()
            rows, meta = density_cell(*cell, cfg)
            seconds = time.perf_counter() - start
            _append(out / "density_rows.csv", rows)
            _append(
                out / "density_cells.csv",
                pd.DataFrame(
                    [dict(zip(SIM_KEY, cell, strict=True), **meta, seconds=seconds)]
                ),
            )
            added += 1
            print(f"density {cell}: {seconds:.1f} s", file=sys.stderr)
    return added


# -- analysis -----------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _ordered(frame: pd.DataFrame, cfg: dict) -> pd.DataFrame:
    """Rows sorted by rate, mechanism and table, in the settings' orders."""
    mechs = {m: i for i, m in enumerate(cfg["mechanisms"])}
    tables = {d: i for i, d in enumerate(cfg["simulated"])}
    keys = pd.DataFrame(
        {
            "r": frame["rate"],
            "m": frame["mechanism"].map(mechs),
            "d": frame["dataset"].map(tables),
        }
    )
    return frame.loc[keys.sort_values(["r", "m", "d"]).index].reset_index(drop=True)


def at_risk_table(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group: test rows, incomplete rows, and the share of all test
    decisions whose flip probability exceeds each threshold."""
    out = []
    for key, g in rows.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rec = dict(zip(by, key, strict=True))
        rec["test_rows"] = len(g)
        rec["incomplete"] = int((g["n_missing"] > 0).sum())
        for t in THRESHOLDS:
            rec[f"above_{t:g}"] = float((g["flip_probability"] > t).mean())
        rec["mean_flip_probability"] = float(g["flip_probability"].mean())
        out.append(rec)
    return pd.DataFrame(out)


def reliability(rows: pd.DataFrame) -> pd.DataFrame:
    """Bins of predicted flip probability (incomplete rows) against the
    observed flip rate once the hidden entries are revealed."""
    g = rows[rows["n_missing"] > 0]
    p = g["flip_probability"].to_numpy()
    flipped = (g["prediction"] != g["prediction_complete"]).to_numpy(float)
    out = []
    for low, high in itertools.pairwise(BINS):
        sel = (p >= low) & (p < high)
        n = int(sel.sum())
        if not n:
            out.append(
                dict(bin=f"[{low:g}, {min(high, 1):g}{']' if high > 1 else ')'}", n=0)
            )
            continue
        mean_p = p[sel].mean()
        observed = flipped[sel].mean()
        # Binomial standard error of the observed rate, were the forecast right.
        se = float(np.sqrt(np.mean(p[sel] * (1 - p[sel])) / n))
        out.append(
            dict(
                bin=f"[{low:g}, {min(high, 1):g}{']' if high > 1 else ')'}",
                n=n,
                predicted=mean_p,
                observed=observed,
                flips=int(flipped[sel].sum()),
                se=se,
                z=(observed - mean_p) / se if se > 0 else np.nan,
            )
        )
    return pd.DataFrame(out)


def brier(rows: pd.DataFrame) -> dict[str, float]:
    """Brier score of the flip probability and of the constant forecast (the
    group's own observed flip rate), over incomplete rows."""
    g = rows[rows["n_missing"] > 0]
    p = g["flip_probability"].to_numpy()
    f = (g["prediction"] != g["prediction_complete"]).to_numpy(float)
    if not len(f):
        return dict(n=0)
    const = f.mean()
    gain = (const - f) ** 2 - (p - f) ** 2
    b0 = float(np.mean((const - f) ** 2))
    b = float(np.mean((p - f) ** 2))
    return dict(
        n=len(f),
        flip_rate=float(const),
        predicted=float(p.mean()),
        brier=b,
        brier_constant=b0,
        skill=1 - b / b0 if b0 > 0 else np.nan,
        gain_se=float(gain.std(ddof=1) / np.sqrt(len(gain))) if len(f) > 1 else np.nan,
    )


SIMULATIONS = ("gaussian", "mixture")


def calibration_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per mechanism and kind of table (the simulations, whose density the
    model can fit, and the real tables): observed against predicted flip
    rate, the worst bin (at least 30 rows) and the Brier skill."""
    kind = np.where(rows["dataset"].isin(SIMULATIONS), "simulations", "real tables")
    out = []
    for (m, t), g in rows.groupby([rows["mechanism"], kind], sort=True):
        rel = reliability(g)
        big = rel[rel["n"] >= 30]
        b = brier(g)
        if not b["n"]:
            continue
        rec = dict(mechanism=m, tables=t, n=b["n"], observed=b["flip_rate"])
        rec.update(predicted=b["predicted"], brier=b["brier"])
        rec.update(brier_constant=b["brier_constant"], skill=b["skill"])
        if len(big):
            gap = (big["observed"] - big["predicted"]).abs()
            k = gap.idxmax()
            rec.update(worst_gap=gap.max(), worst_bin=big.loc[k, "bin"])
            rec.update(worst_z=big.loc[k, "z"])
        else:
            rec.update(worst_gap=np.nan, worst_bin="-", worst_z=np.nan)
        out.append(rec)
    return pd.DataFrame(out)


def policy_summary(curves: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (and agreement with the complete-row decision) per group,
    policy and k, pooled over folds and draws."""
    key = ["dataset", "mechanism", "rate", "policy", "k"]
    s = curves.groupby(key, sort=False)[
        [
            "n_rows",
            "n_incomplete",
            "correct",
            "agree",
            "correct_complete",
            "n_flipped",
            "agree_flipped",
        ]
    ].sum()
    s["accuracy"] = s["correct"] / s["n_rows"]
    s["ceiling"] = s["correct_complete"] / s["n_rows"]
    s["agreement"] = s["agree"] / s["n_rows"]
    # Among the rows whose decision the hidden entries change (resolved), and
    # among the others (kept: still their complete-row decision).
    s["resolved"] = s["agree_flipped"] / s["n_flipped"]
    s["kept"] = (s["agree"] - s["agree_flipped"]) / (s["n_rows"] - s["n_flipped"])
    return s.reset_index()


def k_to_reach(summary: pd.DataFrame) -> pd.DataFrame:
    """Per group and policy: the fewest measurements per row after which the
    accuracy is within REACHED of the ceiling, and the accuracy at k=0..2."""
    out = []
    for (d, m, r, p), g in summary.groupby(
        ["dataset", "mechanism", "rate", "policy"], sort=False
    ):
        g = g.sort_values("k")
        ok = g[g["accuracy"] >= g["ceiling"] - REACHED]
        rec = dict(dataset=d, mechanism=m, rate=r, policy=p)
        rec["k_reached"] = int(ok["k"].iloc[0]) if len(ok) else np.nan
        ok_agree = g[g["agreement"] >= 0.99]
        rec["k_agree99"] = int(ok_agree["k"].iloc[0]) if len(ok_agree) else np.nan
        for k in (1,):
            sel = g[g["k"] == k]
            rec["resolved_k1"] = float(sel["resolved"].iloc[0]) if len(sel) else np.nan
            rec["kept_k1"] = float(sel["kept"].iloc[0]) if len(sel) else np.nan
        for k in (0, 1, 2):
            sel = g[g["k"] == k]
            rec[f"accuracy_k{k}"] = (
                float(sel["accuracy"].iloc[0]) if len(sel) else np.nan
            )
            rec[f"agreement_k{k}"] = (
                float(sel["agreement"].iloc[0]) if len(sel) else np.nan
            )
        rec["ceiling"] = float(g["ceiling"].iloc[0])
        out.append(rec)
    return pd.DataFrame(out)


def _cell_test(curves: pd.DataFrame, rate: float, a: str, b: str) -> str:
    """Policy ``a`` against ``b``: the share of the decisions the hidden
    entries change that one measurement resolves, per cell (fold of a
    table, mechanism and draw) at ``rate``; cells where ``a`` resolves more /
    the same / fewer, and the two-sided Wilcoxon signed-rank p."""
    from scipy.stats import wilcoxon

    k1 = curves[(curves["k"] == 1) & np.isclose(curves["rate"], rate)]
    k1 = k1[k1["n_flipped"] > 0]
    share = k1.assign(r=k1["agree_flipped"] / k1["n_flipped"]).pivot_table(
        index=list(SIM_KEY), columns="policy", values="r"
    )
    if a not in share or b not in share:
        return "-"
    diff = (share[a] - share[b]).dropna()
    higher, same = int((diff > 1e-12).sum()), int((diff.abs() <= 1e-12).sum())
    p = wilcoxon(diff).pvalue if (diff.abs() > 1e-12).sum() >= 2 else np.nan
    return (
        f"{a} vs {b}: {higher}/{same}/{len(diff) - higher - same} cells "
        f"higher/same/lower, Wilcoxon p {p:.2g}"
    )


def _policy_tables(reach: pd.DataFrame) -> list[str]:
    """Markdown: per rate and mechanism (means over the tables), a column
    per policy, for the share of changed decisions resolved by one
    measurement, the accuracy after one, and the measurements per row
    until the accuracy is within REACHED of the ceiling; then the resolved
    share per table (means over mechanisms and rates). Every group's
    numbers are in policy_reach.csv."""
    lines: list[str] = []
    r = reach.assign(rate=reach["rate"].map(lambda v: f"{100 * v:g}%"))
    specs = [
        ("resolved_k1", "Share of the decisions the hidden entries change that "
         "one measurement per row resolves (mean over tables):", _pct),
        ("accuracy_k1", "Accuracy after one measurement per row (mean over "
         "tables; k0: none measured, ceiling: the complete rows):",
         lambda v: f"{v:.3f}"),
        ("k_reached", f"Measurements per row until the accuracy is within "
         f"{100 * REACHED:g} points of the complete rows' (mean over tables):",
         lambda v: f"{v:.2f}"),
    ]  # fmt: skip
    for column, text, fmt in specs:
        wide = r.pivot_table(
            index=["rate", "mechanism"], columns="policy", values=column, sort=False
        )[[p for p in POLICIES if p in set(r["policy"])]]
        if column == "accuracy_k1":
            base = r[r["policy"] == "value"].groupby(["rate", "mechanism"], sort=False)
            wide.insert(0, "k0", base["accuracy_k0"].mean())
            wide["ceiling"] = base["ceiling"].mean()
        lines += [text, "", *_md(wide.reset_index(), dict.fromkeys(wide, fmt)), ""]
    per_table = r.pivot_table(
        index="dataset", columns="policy", values="resolved_k1", sort=False
    )[[p for p in POLICIES if p in set(r["policy"])]]
    lines += [
        "Share of the changed decisions resolved by one measurement, per table "
        "(mean over mechanisms and rates):",
        "",
        *_md(per_table.reset_index(), dict.fromkeys(per_table, _pct)),
        "",
    ]
    return lines


def top_features(rows: pd.DataFrame) -> pd.DataFrame:
    """Per table and feature: how often it is missing in the test rows, how
    often the value of measuring ranks it first (rows where some entry has a
    positive value), and its mean value where missing."""
    out = []
    for d, g in rows.groupby("dataset", sort=False):
        ranked = g[g["top_feature"] != ""]
        values: dict[str, list[float]] = {}
        for text in g["values"]:
            for item in filter(None, text.split("|")):
                f, v = item.rsplit("=", 1)
                values.setdefault(f, []).append(float(v))
        counts = ranked["top_feature"].value_counts()
        for f, vals in values.items():
            out.append(
                dict(
                    dataset=d,
                    feature=f,
                    missing_rows=len(vals),
                    missing_share=len(vals) / len(g),
                    top=int(counts.get(f, 0)),
                    top_share=float(counts.get(f, 0)) / max(len(ranked), 1),
                    mean_value=float(np.mean(vals)),
                    rows_ranked=len(ranked),
                )
            )
    frame = pd.DataFrame(out)
    if frame.empty:
        return frame
    return frame.sort_values(
        ["dataset", "top", "mean_value"], ascending=[True, False, False]
    )


# -- figures --------------------------------------------------------------------------


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_at_risk(table: pd.DataFrame, out: Path) -> str | None:
    if table.empty:
        return None
    plt = _plt()
    mechs = list(dict.fromkeys(table["mechanism"]))
    fig, axes = plt.subplots(
        1, len(mechs), figsize=(5 * len(mechs), 3.6), squeeze=False
    )
    for ax, m in zip(axes[0], mechs, strict=True):
        for d, g in table[table["mechanism"] == m].groupby("dataset"):
            g = g.sort_values("rate")
            ax.plot(100 * g["rate"], 100 * g["above_0.2"], marker="o", label=d)
        ax.set_title(m)
        ax.set_xticks(sorted(100 * table["rate"].unique()))
        ax.set_xlabel("entries hidden (%)")
        ax.set_ylabel("test decisions with flip probability > 0.2 (%)")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    name = "at_risk.png"
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


def figure_reliability(rows: pd.DataFrame, out: Path) -> str | None:
    """Reliability diagrams: a row per kind of table (simulations, real
    tables), a column per mechanism, a line per rate."""
    if rows.empty:
        return None
    plt = _plt()
    mechs = list(dict.fromkeys(rows["mechanism"]))
    kind = np.where(rows["dataset"].isin(SIMULATIONS), "simulations", "real tables")
    kinds = [k for k in ("simulations", "real tables") if (kind == k).any()]
    fig, axes = plt.subplots(
        len(kinds), len(mechs), figsize=(4.2 * len(mechs), 4 * len(kinds)),
        squeeze=False,
    )  # fmt: skip
    for a, k in enumerate(kinds):
        for ax, m in zip(axes[a], mechs, strict=True):
            ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--")
            sel = rows[(rows["mechanism"] == m) & (kind == k)]
            for r, g in sel.groupby("rate"):
                t = reliability(g)
                t = t[t["n"] > 0]
                ax.errorbar(
                    t["predicted"], t["observed"], yerr=2 * t["se"], marker="o",
                    capsize=3, label=f"{100 * r:g}% hidden",
                )  # fmt: skip
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
            ax.set_title(f"{m}, {k}", fontsize=10)
            ax.set_xlabel("predicted flip probability (bin mean)", fontsize=8)
            ax.set_ylabel("observed flip rate (± 2 SE)", fontsize=8)
            ax.grid(alpha=0.3)
            if len(sel):
                ax.legend(fontsize=7)
    fig.tight_layout()
    name = "reliability.png"
    fig.savefig(out / name, dpi=100)
    plt.close(fig)
    return name


def figure_policy(summary: pd.DataFrame, out: Path) -> list[str]:
    """Accuracy against measurements per row: one figure per rate, a panel
    per (dataset, mechanism), the complete-row accuracy as a dashed line."""
    if summary.empty:
        return []
    plt = _plt()
    names = []
    for r, g in summary.groupby("rate"):
        panels = list(g.groupby(["dataset", "mechanism"], sort=False))
        ncol = min(4, len(panels))
        nrow = -(-len(panels) // ncol)
        fig, axes = plt.subplots(
            nrow, ncol, figsize=(3.4 * ncol, 2.8 * nrow), squeeze=False
        )
        for ax, ((d, m), h) in zip(axes.flat, panels, strict=False):
            for p in POLICIES:
                c = h[h["policy"] == p]
                ax.plot(c["k"], c["accuracy"], marker=".", label=p)
            ax.axhline(h["ceiling"].iloc[0], color="k", ls="--", lw=1)
            ax.set_title(f"{d}, {m}", fontsize=8)
            ax.set_xlabel("measurements per row", fontsize=8)
            ax.set_ylabel("accuracy", fontsize=8)
            ax.tick_params(labelsize=7)
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(panels) :]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=7)
        fig.suptitle(
            f"{100 * r:g}% hidden: accuracy against measurements "
            "(dashed: complete rows)",
            fontsize=9,
        )
        fig.tight_layout()
        name = f"policy_{round(100 * r)}.png"
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        names.append(name)
    return names


def _padded(summary: pd.DataFrame) -> pd.DataFrame:
    """The policy curves with every group extended to the largest k (a table
    with fewer features keeps its last value: all its entries revealed)."""
    kmax = int(summary["k"].max())
    out = []
    for _, g in summary.groupby(["dataset", "mechanism", "rate", "policy"]):
        g = g.set_index("k").reindex(range(kmax + 1)).ffill().reset_index()
        out.append(g)
    return pd.concat(out, ignore_index=True)


def figure_policy_pooled(summary: pd.DataFrame, out: Path) -> str | None:
    """Mean over (table, mechanism) groups: accuracy minus the complete-row
    accuracy, and the share of decisions equal to the complete-row decision,
    against measurements per row; a column per rate."""
    if summary.empty:
        return None
    plt = _plt()
    padded = _padded(summary)
    padded["gap"] = padded["accuracy"] - padded["ceiling"]
    rates = sorted(padded["rate"].unique())
    fig, axes = plt.subplots(
        2, len(rates), figsize=(3.8 * len(rates), 6), squeeze=False
    )
    for c, r in enumerate(rates):
        g = padded[padded["rate"] == r]
        n = g.groupby(["dataset", "mechanism"]).ngroups
        for p in POLICIES:
            h = g[g["policy"] == p].groupby("k")[["gap", "agreement"]].mean()
            axes[0][c].plot(h.index, 100 * h["gap"], marker=".", label=p)
            axes[1][c].plot(h.index, 100 * h["agreement"], marker=".", label=p)
        axes[0][c].axhline(0, color="k", ls="--", lw=1)
        axes[0][c].set_title(f"{100 * r:g}% hidden ({n} table x mechanism)", fontsize=9)
        axes[0][c].set_ylabel("accuracy - complete rows (points)", fontsize=8)
        axes[1][c].set_ylabel("same as complete-row decision (%)", fontsize=8)
        for ax in axes[:, c]:
            ax.set_xlabel("measurements per row", fontsize=8)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=7)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    name = "policy_pooled.png"
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


# -- report ----------------------------------------------------------------------------


def _md(frame: pd.DataFrame, formats: dict[str, Any]) -> list[str]:
    cols = list(frame.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in frame.iterrows():
        cells = []
        for c in cols:
            v = row[c]
            f = formats.get(c)
            if f is not None and not (isinstance(v, float) and np.isnan(v)):
                cells.append(f(v))
            elif isinstance(v, float):
                cells.append("-" if np.isnan(v) else f"{v:.3f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def report(out: Path, cfg: dict, quick: bool) -> str:
    natural_planned, sim_planned = planned_cells(cfg)
    nat_cells = (
        pd.read_csv(out / "natural_cells.csv")
        if (out / "natural_cells.csv").is_file()
        else pd.DataFrame(columns=[*NATURAL_KEY, "seconds"])
    )
    sim_cells = (
        pd.read_csv(out / "simulated_cells.csv")
        if (out / "simulated_cells.csv").is_file()
        else pd.DataFrame(columns=[*SIM_KEY, "seconds"])
    )
    den_cells = (
        pd.read_csv(out / "density_cells.csv")
        if (out / "density_cells.csv").is_file()
        else pd.DataFrame(columns=[*SIM_KEY, "seconds"])
    )
    den = _read(out / "density_rows.csv", den_cells, SIM_KEY)
    nat = _read(out / "natural_rows.csv", nat_cells, NATURAL_KEY)
    sim = _read(out / "simulated_rows.csv", sim_cells, SIM_KEY)
    curves = _read(out / "simulated_curves.csv", sim_cells, SIM_KEY)
    den_planned = planned_density(cfg)
    n_planned = len(natural_planned) + len(sim_planned) + len(den_planned)
    n_done = len(nat_cells) + len(sim_cells) + len(den_cells)
    status = (
        "complete"
        if n_done >= n_planned
        else f"PARTIAL: {n_done} of {n_planned} cells finished "
        f"({len(nat_cells)} of {len(natural_planned)} natural, {len(sim_cells)} "
        f"of {len(sim_planned)} simulated, {len(den_cells)} of "
        f"{len(den_planned)} density check)"
    )
    answer: list[str] = []  # the detailed answer, a paragraph per part
    headline: list[str] = []  # the short answer that opens the report
    body: list[str] = []
    figures: list[str] = []

    # -- natural missingness
    if not nat.empty:
        risk = at_risk_table(nat, ["dataset"])
        acc = []
        for d, g in nat.groupby("dataset", sort=False):
            risky = g["flip_probability"] > 0.2
            correct = g["prediction"] == g["label"]
            acc.append(
                dict(
                    dataset=d,
                    test_rows=len(g),
                    n_at_risk=int(risky.sum()),
                    n_complete=int((g["n_missing"] == 0).sum()),
                    accuracy=correct.mean(),
                    at_risk=correct[risky].mean() if risky.any() else np.nan,
                    not_at_risk=correct[~risky].mean(),
                    complete_rows=correct[g["n_missing"] == 0].mean()
                    if (g["n_missing"] == 0).any()
                    else np.nan,
                )
            )
        acc_frame = pd.DataFrame(acc)
        tops = top_features(nat)
        first = []
        for d, g in tops.groupby("dataset", sort=False):
            if g["rows_ranked"].iloc[0] and g["top"].iloc[0] > 0:
                first.append(
                    f"{g['feature'].iloc[0]} on {d} "
                    f"({_pct(g['top_share'].iloc[0])} of the "
                    f"{int(g['rows_ranked'].iloc[0])} rows where some entry "
                    "has a positive value)"
                )
        answer.append(
            "**Natural missingness** (cross-validated test decisions): "
            + "; ".join(
                f"{r.dataset} {_pct(r['above_0.2'])} at risk (flip probability "
                f"> 0.2; > 0.1: {_pct(r['above_0.1'])}, > 0.5: "
                f"{_pct(r['above_0.5'])}) of {int(r.test_rows)}"
                for _, r in risk.iterrows()
            )
            + ". Ranked first most often: "
            + ("; ".join(first) if first else "none has a positive value")
            + "."
        )
        headline.append(
            "On the tables with their own missing values, "
            + ", ".join(
                f"{_pct(r['above_0.2'])} ({r.dataset})" for _, r in risk.iterrows()
            )
            + " of the cross-validated test decisions are at risk (flip "
            "probability > 0.2), and they are right less often than the others ("
            + ", ".join(
                f"{r.at_risk:.2f} against {r.not_at_risk:.2f} on {r.dataset}"
                for r in acc_frame.itertuples()
            )
            + "). The value of measuring ranks first most often "
            + ("; ".join(first) if first else "no entry (all values 0)")
            + "."
        )
        pct = {c: _pct for c in risk.columns if c.startswith("above")}
        body += [
            "## Natural missingness: decisions at risk and what to measure",
            "",
            "Cross-validated test decisions (each row scored by the model "
            "fitted without its fold); a decision is at risk when its flip "
            "probability exceeds the threshold. Every column is treated as "
            "numeric (as in vignette 6), so the density draws nominal codes "
            "as real numbers. Here no truth is known; how well the Gaussian "
            "density's flip probabilities match revealed flips on real tables "
            "is measured in (b) and in the density check below.",
            "",
            *_md(risk, {**pct, "mean_flip_probability": lambda v: f"{v:.3f}"}),
            "",
            "Accuracy of the decisions at risk (flip probability > 0.2) and of "
            "the others, against the labels:",
            "",
            *_md(
                acc_frame,
                {
                    c: lambda v: str(int(v))
                    for c in ("test_rows", "n_at_risk", "n_complete")
                },
            ),
            "",
            "Which entry the value of measuring ranks first: per table and "
            "feature, the test rows where it is missing, how often it is the "
            "top-ranked entry of a row (among the rows where some entry has a "
            "positive value; ties at 0 leave a row unranked) and its mean "
            "value where missing.",
            "",
        ]
        for d, g in tops.groupby("dataset", sort=False):
            shown = g[
                [
                    "feature",
                    "missing_rows",
                    "missing_share",
                    "top",
                    "top_share",
                    "mean_value",
                ]
            ]
            body += [
                f"**{d}** ({int(g['rows_ranked'].iloc[0])} rows ranked):",
                "",
                *_md(
                    shown.head(12),
                    {
                        "missing_share": _pct,
                        "top_share": _pct,
                        "mean_value": lambda v: f"{v:.3f}",
                        "missing_rows": lambda v: str(int(v)),
                        "top": lambda v: str(int(v)),
                    },
                ),
                "",
            ]
            if len(g) > 12:
                body += [f"({len(g) - 12} more features in `top_features.csv`.)", ""]
        tops.to_csv(out / "top_features.csv", index=False)
        risk.to_csv(out / "at_risk_natural.csv", index=False)

    # -- simulated missingness
    if not sim.empty:
        risk = _ordered(at_risk_table(sim, ["dataset", "mechanism", "rate"]), cfg)
        risk.to_csv(out / "at_risk_simulated.csv", index=False)
        pooled = at_risk_table(sim, ["mechanism", "rate"])
        sentence = "; ".join(
            f"{_pct(r['above_0.2'])} at {100 * r.rate:g}% {r.mechanism}"
            for _, r in pooled.sort_values(["mechanism", "rate"]).iterrows()
        )
        answer.append(
            f"**Simulated missingness** ({', '.join(dict.fromkeys(sim['dataset']))}): "
            f"decisions at risk (flip probability > 0.2), pooled over the tables: "
            f"{sentence}."
        )
        mcar = pooled[pooled["mechanism"] == "mcar"].sort_values("rate")
        if len(mcar):
            headline.append(
                "With entries hidden MCAR from complete tables, the share of "
                "test decisions at risk is "
                + ", ".join(
                    f"{_pct(r['above_0.2'])} at {100 * r.rate:g}%"
                    for _, r in mcar.iterrows()
                )
                + " hidden (pooled over "
                f"{sim['dataset'].nunique()} tables; the other mechanisms in "
                "(a))."
            )
        rel = reliability(sim)
        rel.to_csv(out / "reliability.csv", index=False)
        big = rel[rel["n"] >= 30]
        worst = (big["observed"] - big["predicted"]).abs()
        b_all = brier(sim)
        by_group = []
        for key, g in sim.groupby(["dataset", "mechanism", "rate"], sort=False):
            by_group.append(
                dict(
                    zip(["dataset", "mechanism", "rate"], key, strict=True), **brier(g)
                )
            )
        b_frame = _ordered(pd.DataFrame(by_group), cfg)
        b_frame.to_csv(out / "brier.csv", index=False)
        beaten = int((b_frame["brier"] < b_frame["brier_constant"]).sum())
        calib = calibration_table(sim)
        calib.to_csv(out / "calibration.csv", index=False)
        if len(big):
            k = worst.idxmax()
            answer.append(
                "Calibration of the flip probability (incomplete test rows, "
                "observed flip rate once the hidden entries are revealed "
                "against the mean predicted; largest |observed - predicted| "
                "over the bins with at least 30 rows): "
                + "; ".join(
                    f"{r.mechanism} on {r.tables}: {r.observed:.3f} against "
                    f"{r.predicted:.3f} over {int(r.n)} rows, within "
                    f"{r.worst_gap:.3f} (bin {r.worst_bin}, z = {r.worst_z:+.1f}), "
                    f"Brier skill {r.skill:+.2f}"
                    for r in calib.itertuples()
                )
                + f". Pooled over everything: within {worst.max():.3f} (bin "
                f"{big.loc[k, 'bin']}, z = {big.loc[k, 'z']:+.1f}), Brier "
                f"{b_all['brier']:.4f} against {b_all['brier_constant']:.4f} "
                f"for the constant forecast; the flip probability beats the "
                f"constant in {beaten} of {len(b_frame)} (table, mechanism, "
                "rate) groups."
            )
        if len(calib):
            c = calib.set_index(["tables", "mechanism"])

            def said(t: str, m: str) -> str | None:
                if (t, m) not in c.index:
                    return None
                r = c.loc[(t, m)]
                return (
                    f"{r.observed:.3f} observed against {r.predicted:.3f} "
                    f"predicted under {m}"
                )

            good = [x for x in (said("simulations", "mcar"),
                                said("simulations", "mar_rubin")) if x]  # fmt: skip
            real = [x for x in (said("real tables", "mcar"),
                                said("real tables", "mar_rubin")) if x]  # fmt: skip
            paper = said("real tables", "mar")
            parts = []
            if good:
                parts.append(
                    "Where the model's density can fit the data's law (the "
                    "Gaussian and mixture simulations) and the entries are "
                    "missing at random, the flip probability matches the "
                    "flips observed once the hidden entries are revealed ("
                    + "; ".join(good)
                    + ")"
                )
            if real:
                parts.append(
                    "on the real tables it predicts more flips than happen ("
                    + "; ".join(real)
                    + ")"
                    + (
                        f", and more so under the genRBF paper's MAR, whose "
                        f"removal depends on the hidden values ({paper})"
                        if paper
                        else ""
                    )
                )
            headline.append(
                "; ".join(parts)
                + f". Its Brier score beats the constant forecast's in {beaten} "
                f"of {len(b_frame)} (table, mechanism, rate) groups."
            )
        summary = policy_summary(curves)
        summary.to_csv(out / "policy_curves.csv", index=False)
        reach = k_to_reach(summary)
        reach.to_csv(out / "policy_reach.csv", index=False)
        for rate in sorted(reach["rate"].unique()):
            sel = reach[reach["rate"] == rate]
            means = sel.groupby("policy")[
                [
                    "k_reached",
                    "agreement_k1",
                    "accuracy_k1",
                    "ceiling",
                    "accuracy_k0",
                    "resolved_k1",
                    "kept_k1",
                ]
            ].mean()
            if not set(POLICIES) <= set(means.index):
                continue
            n_groups = sel.groupby(["dataset", "mechanism"]).ngroups
            if np.isclose(rate, 0.3) or (
                np.isclose(rate, min(reach["rate"])) and 0.3 not in set(reach["rate"])
            ):
                headline.append(
                    f"At {100 * rate:g}% hidden, measuring the top-ranked entry "
                    "first resolves "
                    f"{_pct(means.loc['value', 'resolved_k1'])} of the decisions "
                    "the hidden entries change with one measurement, against "
                    f"{_pct(means.loc['random', 'resolved_k1'])} at random "
                    f"({_cell_test(curves, rate, 'value', 'random')}), but no "
                    "more than a fixed order of the features "
                    f"({_pct(means.loc['fixed', 'resolved_k1'])}; "
                    f"{_cell_test(curves, rate, 'value', 'fixed')}), and it "
                    "changes more of the other decisions, which the remaining "
                    "entries change back (it leaves "
                    f"{_pct(means.loc['value', 'kept_k1'])} of them at their "
                    f"complete-row decision against "
                    f"{_pct(means.loc['fixed', 'kept_k1'])} in the fixed order): "
                    "accuracy after one measurement "
                    f"{means.loc['value', 'accuracy_k1']:.3f} by value, "
                    f"{means.loc['fixed', 'accuracy_k1']:.3f} in the fixed "
                    f"order, {means.loc['random', 'accuracy_k1']:.3f} at random "
                    f"({means.loc['value', 'accuracy_k0']:.3f} before, "
                    f"{means.loc['value', 'ceiling']:.3f} on the complete "
                    "rows). Accuracy "
                    f"comes within {100 * REACHED:g} points of the complete "
                    f"rows' after {means.loc['value', 'k_reached']:.1f} "
                    f"measurements per row by value, "
                    f"{means.loc['random', 'k_reached']:.1f} at random and "
                    f"{means.loc['fixed', 'k_reached']:.1f} in the fixed order "
                    f"(means over {n_groups} table x mechanism groups)."
                )
            answer.append(
                f"At {100 * rate:g}% hidden (mean over {n_groups} table x "
                f"mechanism groups), one measurement per row ranked by value "
                f"brings {_pct(means.loc['value', 'agreement_k1'])} of the "
                f"decisions to their complete-data decision against "
                f"{_pct(means.loc['random', 'agreement_k1'])} at random and "
                f"{_pct(means.loc['fixed', 'agreement_k1'])} in the fixed order "
                f"(accuracy {means.loc['value', 'accuracy_k1']:.3f}, "
                f"{means.loc['random', 'accuracy_k1']:.3f}, "
                f"{means.loc['fixed', 'accuracy_k1']:.3f}; "
                f"{means.loc['value', 'accuracy_k0']:.3f} with none measured, "
                f"{means.loc['value', 'ceiling']:.3f} on the complete rows); "
                f"accuracy within {100 * REACHED:g} points of the complete rows "
                f"after {means.loc['value', 'k_reached']:.2f} measurements per "
                f"row by value (recomputed), "
                f"{means.loc['value_once', 'k_reached']:.2f} ranked once, "
                f"{means.loc['random', 'k_reached']:.2f} at random and "
                f"{means.loc['fixed', 'k_reached']:.2f} in the fixed order. "
                "Of the decisions the hidden entries change, one measurement "
                f"resolves {_pct(means.loc['value', 'resolved_k1'])} by value, "
                f"{_pct(means.loc['random', 'resolved_k1'])} at random and "
                f"{_pct(means.loc['fixed', 'resolved_k1'])} in the fixed order "
                f"({_cell_test(curves, rate, 'value', 'random')}; "
                f"{_cell_test(curves, rate, 'value', 'fixed')}); of the others "
                "it leaves "
                f"{_pct(means.loc['value', 'kept_k1'])}, "
                f"{_pct(means.loc['random', 'kept_k1'])} and "
                f"{_pct(means.loc['fixed', 'kept_k1'])} at their "
                "complete-row decision."
            )
        figures += [
            f for f in (figure_at_risk(risk, out), figure_reliability(sim, out)) if f
        ]
        pooled_figure = figure_policy_pooled(summary, out)
        figures += [pooled_figure] if pooled_figure else []
        figures += figure_policy(summary, out)
        pct = {c: _pct for c in risk.columns if c.startswith("above")}
        body += [
            "## Simulated missingness: (a) decisions at risk",
            "",
            "Complete tables, entries hidden MCAR, by the genRBF paper's MAR "
            "(eq. 26; `mar`) and missing at random in Rubin's sense "
            "(`mar_rubin`), at the same rate in training and test rows; the share "
            "of all test decisions (complete rows included) whose flip "
            "probability exceeds each threshold.",
            "",
            *_md(
                risk.assign(rate=risk["rate"].map(lambda r: f"{100 * r:g}%")),
                {**pct, "mean_flip_probability": lambda v: f"{v:.3f}"},
            ),
            "",
            "## (b) Is the flip probability honest?",
            "",
            "Incomplete test rows of every simulated table, mechanism and rate, "
            "binned by their predicted flip probability; observed: the share "
            "whose prediction changes when the hidden entries are revealed "
            "(the model's prediction on the complete row). se: the binomial "
            "standard error of the observed rate were the forecast right "
            "(sqrt(mean p(1 - p) / n)); z = (observed - predicted) / se. A "
            "Monte Carlo flip probability of 0 "
            f"({cfg['n_uncertainty']} draws) still flips at its "
            "true small rate, which the lowest bin shows.",
            "",
            *_md(
                rel,
                {
                    "n": lambda v: str(int(v)),
                    "flips": lambda v: str(int(v)),
                    "z": lambda v: f"{v:+.1f}",
                },
            ),
            "",
            "By mechanism and kind of table (the Gaussian and mixture "
            "simulations, whose law the model's density can fit, and the "
            "real tables, whose law it approximates):",
            "",
            *_md(
                calib,
                {
                    "n": lambda v: str(int(v)),
                    "brier": lambda v: f"{v:.4f}",
                    "brier_constant": lambda v: f"{v:.4f}",
                    "skill": lambda v: f"{v:+.2f}",
                    "worst_z": lambda v: f"{v:+.1f}",
                },
            ),
            "",
            "Brier score per (table, mechanism, rate), over the incomplete test "
            "rows, against the constant forecast equal to the group's own "
            "observed flip rate (a constant that knows the answer on average); "
            "skill = 1 - Brier / Brier(constant); gain_se: the standard error "
            "of the mean paired gain.",
            "",
            *_md(
                b_frame.assign(rate=b_frame["rate"].map(lambda r: f"{100 * r:g}%")),
                {
                    "n": lambda v: str(int(v)),
                    "brier": lambda v: f"{v:.4f}",
                    "brier_constant": lambda v: f"{v:.4f}",
                    "gain_se": lambda v: f"{v:.4f}",
                    "skill": lambda v: f"{v:+.2f}",
                },
            ),
            "",
            "Reliability per mechanism, rate and kind of table (bin, rows: "
            "observed vs predicted flip rate):",
            "",
        ]
        kinds = np.where(sim["dataset"].isin(SIMULATIONS), "simulations", "real tables")
        for (m, r, kind), g in sim.groupby([sim["mechanism"], sim["rate"], kinds]):
            t = reliability(g)
            t = t[t["n"] > 0]
            body += [
                f"**{m} {100 * r:g}%, {kind}**: "
                + "; ".join(
                    f"{row.bin} n={int(row.n)}: {row.observed:.3f} vs "
                    f"{row.predicted:.3f}"
                    for row in t.itertuples()
                ),
                "",
            ]
        body += [
            "## (c) What to measure next",
            "",
            "Each incomplete test row's hidden entries are revealed one at a "
            "time (k measurements per row; a row with fewer missing entries "
            "is complete after its last): "
            + "; ".join(f"**{p}**: {POLICY_LABELS[p]}" for p in POLICIES)
            + ". Ties in value (values are multiples of 1/n_draws; all 0 when "
            "no single entry can flip the decision) are broken by the fixed "
            "order. The ceiling is the accuracy of the same model on the "
            "complete test rows (its training rows keep their hidden "
            "entries). k_reached: measurements per row after which accuracy "
            f"is within {100 * REACHED:g} points of the ceiling; k_agree99: "
            "after which 99% of decisions equal the complete-row decision; "
            "agreement: the share of decisions equal to it; resolved_k1: "
            "among the decisions the hidden entries change (today's "
            "prediction differs from the complete row's), the share equal to "
            "the complete-row decision after one measurement; kept_k1: among "
            "the others, the share still equal to it (a measurement can flip "
            "a decision that the remaining entries flip back). The value of "
            "measuring ranks an entry by the chance that it alone changes "
            "today's decision, which is not the chance that it moves the "
            "decision to the complete-row one. Every (table, mechanism, rate) "
            "group's numbers, with the agreement and k_agree99, are in "
            "`policy_reach.csv`.",
            "",
        ]
        body += _policy_tables(reach)
        tied = sorted(
            set(sim_cells.loc[sim_cells["degenerate_mar"].astype(bool), "dataset"])
        )
        if tied:
            body += [
                "MAR could reach its rate only through rows tied with their "
                "reference rows (simulate_missing's DegenerateMissingnessWarning: "
                "a random subset of the tied entries removed) on: "
                + ", ".join(tied)
                + ".",
                "",
            ]
        fixed = sim_cells.groupby("dataset")["fixed_order"].agg(
            lambda s: s.value_counts().index[0]
        )
        body += [
            "The fixed order (the most frequent over the cells): "
            + "; ".join(f"{d}: {o.replace('|', ', ')}" for d, o in fixed.items())
            + ".",
            "",
        ]

    if not den.empty:
        table = []
        for key, g in den.groupby(["dataset", "mechanism", "density"], sort=True):
            table.append(
                dict(
                    zip(["dataset", "mechanism", "density"], key, strict=True),
                    **brier(g),
                )
            )
        for key, g in den.groupby(["mechanism", "density"], sort=True):
            table.append(
                dict(dataset="all four", mechanism=key[0], density=key[1], **brier(g))
            )
        dframe = pd.DataFrame(table)
        dframe.to_csv(out / "density_check.csv", index=False)
        pooled_den = dframe[dframe["dataset"] == "all four"].set_index(
            ["mechanism", "density"]
        )
        said = []
        for m in sorted(den["mechanism"].unique()):
            if (m, "gaussian") in pooled_den.index and (
                m,
                "mixture",
            ) in pooled_den.index:
                g_, x_ = pooled_den.loc[(m, "gaussian")], pooled_den.loc[(m, "mixture")]
                said.append(
                    f"{m}: {x_.predicted:.3f} predicted with the mixture and "
                    f"{g_.predicted:.3f} with the Gaussian against "
                    f"{x_.flip_rate:.3f} and {g_.flip_rate:.3f} observed, "
                    f"Brier skill {x_.skill:+.2f} against {g_.skill:+.2f}"
                )
        if said:
            gaps = {
                d: sum(
                    abs(
                        pooled_den.loc[(m, d), "predicted"]
                        - pooled_den.loc[(m, d), "flip_rate"]
                    )
                    for m in den["mechanism"].unique()
                    if (m, "gaussian") in pooled_den.index
                    and (m, "mixture") in pooled_den.index
                )
                for d in ("gaussian", "mixture")
            }
            verdict = (
                "closer to the observed flips"
                if gaps["mixture"] < gaps["gaussian"]
                else "no closer to the observed flips"
            )
            per = dframe[dframe["dataset"] != "all four"].set_index(
                ["dataset", "mechanism", "density"]
            )
            pairs = {(d, m) for d, m, _ in per.index}
            closer = sum(
                abs(
                    per.loc[(d, m, "mixture"), "predicted"]
                    - per.loc[(d, m, "mixture"), "flip_rate"]
                )
                < abs(
                    per.loc[(d, m, "gaussian"), "predicted"]
                    - per.loc[(d, m, "gaussian"), "flip_rate"]
                )
                for d, m in pairs
                if (d, m, "mixture") in per.index and (d, m, "gaussian") in per.index
            )
            said.append(f"closer in {closer} of {len(pairs)} (table, mechanism) pairs")
            headline.append(
                f"Over a {cfg['density_components']}-component Gaussian mixture "
                "instead of the Gaussian density (the real tables, same masks "
                f"and folds, C = 2, 30% hidden) the predicted flips are, pooled, "
                f"{verdict} "
                "(" + "; ".join(said) + ")."
            )
        body += [
            "## Density check: is the real tables' miscalibration the density's?",
            "",
            "The real tables at 30% hidden (first draw, the same masks and "
            "folds as above), the model fitted with C = 2 (no search) once "
            "over the Gaussian EM density and once over a "
            f"{cfg['density_components']}-component Gaussian mixture; "
            "observed against predicted flip rate over the incomplete test "
            "rows, and the Brier score against the constant forecast.",
            "",
            *_md(
                dframe,
                {
                    "n": lambda v: str(int(v)),
                    "brier": lambda v: f"{v:.4f}",
                    "brier_constant": lambda v: f"{v:.4f}",
                    "gain_se": lambda v: f"{v:.4f}",
                    "skill": lambda v: f"{v:+.2f}",
                },
            ),
            "",
        ]
    seconds = float(
        nat_cells["seconds"].sum()
        + sim_cells["seconds"].sum()
        + den_cells["seconds"].sum()
    )
    mode = "quick" if quick else "full"
    provenance = [
        f"- Status: **{status}**.",
        f"- Command (from the repository root): `python vignettes/{NAME}.py --{mode}`",
        f"- missingkernels {missingkernels.__version__}, Python "
        f"{platform.python_version()}, numpy {np.__version__}, pandas "
        f"{pd.__version__}, {dt.date.today().isoformat()}.",
        f"- Compute time: {seconds / 60:.1f} min summed over cells (natural "
        f"{nat_cells['seconds'].sum() / 60:.1f}, simulated "
        f"{sim_cells['seconds'].sum() / 60:.1f}, density check "
        f"{den_cells['seconds'].sum() / 60:.1f}; per cell "
        + (
            f"{sim_cells['seconds'].min():.0f}-{sim_cells['seconds'].max():.0f} s "
            "simulated"
            if len(sim_cells)
            else "-"
        )
        + "). "
        + _runs_summary(out / "runs.csv", n_done),
        f"- Protocol: stratified {cfg['folds']}-fold CV ({cfg['natural_repeats']} "
        f"repeat(s) on the natural tables: {', '.join(cfg['natural'])}; "
        f"{cfg['sim_draws']} draw(s) of the mask and folds on the simulated "
        f"ones: {', '.join(cfg['simulated'])}, {', '.join(cfg['mechanisms'])} at "
        f"{', '.join(f'{100 * r:g}%' for r in cfg['rates'])}); MissingKernelSVC "
        "(genRBF, Gaussian EM density; 2-component Gaussian mixture for "
        f"'mixture'; gamma 'scale'), C in {cfg['C_grid']}"
        + (
            f" by {cfg['inner_folds']}-fold inner grid search"
            if cfg["inner_folds"] and len(cfg["C_grid"]) > 1
            else ""
        )
        + f"; uncertainty_from_missing with {cfg['n_uncertainty']} draws, "
        f"value_of_measuring with {cfg['n_value']} draws per entry in the "
        f"policies and the fixed order ({cfg['fixed_rows']} incomplete "
        f"training rows at most), {cfg['n_value_natural']} for the natural "
        f"tables' ranking; simulations: {cfg['sim_rows']} rows, 6 correlated "
        "Gaussian features, label 1[x0 + sin(2 x1) - 0.5 x2 + 0.3 x3 > 0]; "
        "Pima and breast cancer: their complete rows; australian: its six "
        "numeric columns"
        + (
            f"; density check: {', '.join(cfg['density_tables'])} at 30% "
            f"({', '.join(cfg['density_mechanisms'])}), first draw, C = 2, the "
            f"Gaussian density against a {cfg['density_components']}-component "
            "mixture"
            if cfg["density_tables"]
            else ""
        )
        + ".",
        "- Files: `natural_rows.csv`, `simulated_rows.csv` (one row per test "
        "row and cell), `simulated_curves.csv` (per cell, policy and k), "
        "`density_rows.csv` (the density check, per test row and density), "
        "`*_cells.csv` (finished cells, chosen C, seconds), and the tables "
        "above as CSV.",
    ]
    heading = f"# {TITLE} ({mode} mode)"
    lines = [
        heading,
        "",
        f"**Question.** {QUESTION}",
        "",
        f"**Answer ({status}).** "
        + (" ".join(headline) if headline else "no cell finished yet."),
        "",
        *[x for f in figures for x in (f"![{f}]({f})", "")],
        "## The answer in numbers",
        "",
        *[x for a in answer for x in (f"- {a}", "")],
        *body,
        "## Provenance",
        "",
        *provenance,
    ]
    lines = fit_tables("\n".join(lines).split("\n"))
    text = "\n".join(lines) + "\n"
    (out / "README.md").write_text(text)
    return text


# -- driver ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=TITLE)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true", help="small smoke run (CI)")
    mode.add_argument("--full", action="store_true", help="the full protocol")
    parser.add_argument("--parts", help="natural,simulated,density (default all three)")
    parser.add_argument("--datasets", help="run only these tables now")
    parser.add_argument("--mechanisms", help="run only these mechanisms now")
    parser.add_argument("--rates", help="run only these rates now (e.g. 0.3)")
    parser.add_argument("--draws", type=int, help="run only the first N draws now")
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=1,
        help="accepted for symmetry; cells run serially",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="only rewrite the report"
    )
    args = parser.parse_args(argv)
    quick = bool(args.quick)
    cfg = settings(quick)
    out = RESULTS / NAME / ("quick" if quick else "full")
    out.mkdir(parents=True, exist_ok=True)
    script = os.path.relpath(sys.argv[0], Path(__file__).resolve().parent.parent)
    given = sys.argv[1:] if argv is None else list(argv)
    invocation = "python " + " ".join(shlex.quote(a) for a in [script, *given])
    if not args.report_only:
        with _Lock(out):
            start = time.perf_counter()
            added, status = 0, "interrupted"
            previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
            before = _n_cells(out)
            try:
                run(out, cfg, args)
                status = "finished"
            finally:
                signal.signal(signal.SIGTERM, previous)
                added = _n_cells(out) - before
                _record_run(
                    out / "runs.csv",
                    invocation,
                    status=status,
                    n_jobs=1,
                    wall=time.perf_counter() - start,
                    added=added,
                )
    print(report(out, cfg, quick))
    return 0


def _n_cells(out: Path) -> int:
    return sum(
        len(pd.read_csv(out / f))
        for f in ("natural_cells.csv", "simulated_cells.csv", "density_cells.csv")
        if (out / f).is_file()
    )


if __name__ == "__main__":
    sys.exit(main())
