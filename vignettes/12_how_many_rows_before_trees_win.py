"""Vignette 12: how many rows before trees win?

Gradient-boosted trees handle missing values natively and scale to millions
of rows; an SVM with an expected kernel averages over the missing entries
but its exact route needs an n x n Gram matrix. This vignette measures, on
synthetic data where the number of rows is the only thing that changes,
test accuracy and time against n for

- ``exact``: ``MissingKernelSVC(route="exact")``, genRBF over the Gaussian
  EM density, the exact Gram matrix (n <= 10^4);
- ``features``: ``MissingKernelSVC(route="features")`` in memory: expected
  random Fourier features and LinearSVC's hinge loss (n <= 10^5);
- ``dask``: the same estimator's ``fit`` on a dask array (out of core: the
  density, the feature map and the squared-hinge linear SVM from sums over
  blocks of 25,000 rows generated block by block, never all in memory;
  every n);
- ``hgb``: ``HistGradientBoostingClassifier`` at scikit-learn's defaults on
  the rows with NaN (every n);
- ``impute_svc``: the baseline ``iterative_mean`` of the other vignettes
  (scikit-learn's ``IterativeImputer`` at its defaults, conditional means,
  then an RBF ``SVC``; n <= 10^4).

Data: 20 correlated Gaussian features (a fixed mixing matrix, every column
of unit variance) and three binary targets of different kinds, each a
latent function ``f`` plus Gaussian noise (a third of ``f``'s standard
deviation) thresholded at ``f``'s median, so that no method reaches
accuracy 1: ``smooth`` (a smooth function of three linear projections),
``additive`` (a sum of eight smooth univariate functions) and
``interaction`` (products of pairs and an XOR of signs). 30% of the entries
are removed by one of two mechanisms: ``mcar`` (the package's
``simulate_missing``: exactly 30% of each block's entries, uniformly) and
``mar``, missing at random in Rubin's sense: the last five columns are
always observed, and each entry of the other fifteen is removed with
probability ``sigmoid(2 s + c)``, ``s`` a fixed unit-variance linear score
of the five observed columns (one per column), ``c`` calibrated once on
200,000 rows so that 40% of those entries (30% of all) go missing. (The
package's ``simulate_missing(..., "mar")`` is the genRBF paper's eq. 26,
which is not MAR in Rubin's sense: its own docstring.) Training rows for n
are the first n rows of one stream of blocks, so a smaller training set is
part of every larger one; the test set is a separate 10,000 rows of the
same distribution and mechanism, the same for every n.

Hyperparameters are fixed (no cross-validation at this scale): C = 1 and
gamma = 0.05 = 1 / 20, the value of gamma="scale" on standardised data with
20 features, for the kernel routes and the SVC; 2,048 kernel features for
both feature routes; the density is the estimators' default Gaussian EM.
The process's cache of fitted densities is off, so that no method reuses
another's density fit.

Each cell (target, mechanism, n, method, seed) is one row of
``results.csv`` with the test accuracy, fit and predict seconds and, for
cells of ``--subprocess-from`` (30,000) rows or more, run in their own
process, the peak resident memory. The report opens with the crossover
per target and mechanism: the smallest n from which HGB is more accurate
than the best kernel route that ran at that n at every larger n run.

Run from the repository root::

    python vignettes/12_how_many_rows_before_trees_win.py --quick   # CI
    python vignettes/12_how_many_rows_before_trees_win.py --full
    python vignettes/12_how_many_rows_before_trees_win.py --full --n-max 10000
    python vignettes/12_how_many_rows_before_trees_win.py --full \
        --targets smooth --methods dask,hgb

Rows are appended to ``results/12_how_many_rows_before_trees_win/<mode>/``
after each cell, so rerunning the same command resumes; ``--n-max``,
``--targets``, ``--mechanisms`` and ``--methods`` choose what runs now (the
report covers every finished cell and says PARTIAL until all planned cells
are done); ``--report-only`` rewrites the report.

Budget (full; 2 shared cores): cells up to 10^4 rows take seconds to about
a minute each; ``dask`` and ``hgb`` at 10^6 rows and ``features`` at 10^5
are expected to take many minutes each (``benchmarks/bench_scale.py``:
the out-of-core route took 474 s at 10^5 rows), so the rows above 3 x 10^4
are meant to be run piece by piece with ``--targets`` and ``--methods``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# A density fitted on the same rows by another method would be a cached copy
# (the fit cache): off, here and in dask's threads, so each method pays its own.
os.environ.setdefault("MISSINGKERNELS_FIT_CACHE_MEMORY", "0")
# One thread for every method (BLAS, OpenMP in HGB, numba, dask): on a shared
# machine, thread pools that spin on busy cores made HGB 50x slower at 10^3
# rows here, and one thread each keeps the times comparable.
for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "MISSINGKERNELS_NUM_THREADS",
):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import RESULTS, _exit_on_sigterm, _record_run, _runs_summary  # noqa: E402

import missingkernels  # noqa: E402
from missingkernels.experiments._tables import fit_tables  # noqa: E402

NAME = "12_how_many_rows_before_trees_win"
TITLE = "How many rows before trees win?"
QUESTION = (
    "With 30% of the entries missing (MCAR or MAR), from how many training "
    "rows does gradient boosting (HGB) classify more accurately than an SVM "
    "with an expected kernel, on the exact, in-memory feature or out-of-core "
    "route, and what does each cost in time?"
)
TARGETS = ("smooth", "additive", "interaction")
MECHANISMS = ("mcar", "mar")
METHODS = ("exact", "features", "dask", "hgb", "impute_svc")
KERNEL_ROUTES = ("exact", "features", "dask")
D = 20
RATE = 0.3
N_OBSERVED = 5  # always-observed columns under MAR (the last five)
GAMMA = 1.0 / D  # gamma="scale" on standardised data
C = 1.0
BLOCK = 25_000  # rows per generated block and per dask chunk
KEY = ["target", "mechanism", "n", "method", "seed"]


def settings(quick: bool) -> dict[str, Any]:
    if quick:
        # Every method at the smallest n, the cheap ones also at the next
        # (a crossover needs two sizes); about 40 cells of a second or two.
        return dict(
            sizes=[300, 600],
            caps=dict(exact=600, features=300, dask=300, hgb=600, impute_svc=300),
            seeds=[0],
            n_test=1000,
            n_features=256,
            subprocess_from=None,
        )
    return dict(
        sizes=[1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000],
        caps=dict(
            exact=10_000,
            features=100_000,
            dask=1_000_000,
            hgb=1_000_000,
            impute_svc=10_000,
        ),
        seeds=[0],
        n_test=10_000,
        n_features=2048,
        subprocess_from=30_000,
    )


def _seed(*key: Any) -> int:
    return zlib.crc32("|".join(map(str, key)).encode()) % (2**31)


# -- data ----------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _mixing() -> tuple[np.ndarray, np.ndarray]:
    """The mixing matrix (rows of X are z @ A / scale, z standard normal) and
    the correlation matrix of X; fixed, whatever the seed."""
    A = np.random.default_rng(1201).normal(size=(D, D)) / np.sqrt(D)
    scale = np.sqrt((A**2).sum(axis=0))  # the population std of z @ A
    A = A / scale
    return A, A.T @ A


def _unit_direction(rng: np.random.Generator, columns: Sequence[int]) -> np.ndarray:
    """A random direction over ``columns`` scaled so that X @ w has variance 1."""
    _, S = _mixing()
    w = np.zeros(D)
    w[list(columns)] = rng.normal(size=len(columns))
    return w / np.sqrt(w @ S @ w)


@functools.lru_cache(maxsize=1)
def _directions() -> np.ndarray:
    """The three projections of the smooth target (over all columns)."""
    rng = np.random.default_rng(1202)
    return np.stack([_unit_direction(rng, range(D)) for _ in range(3)], axis=1)


@functools.lru_cache(maxsize=1)
def _mar_scores() -> np.ndarray:
    """Per incomplete column, the unit-variance score of the observed ones
    that drives its missingness (a D x (D - N_OBSERVED) matrix)."""
    rng = np.random.default_rng(1203)
    observed = range(D - N_OBSERVED, D)
    return np.stack(
        [_unit_direction(rng, observed) for _ in range(D - N_OBSERVED)], axis=1
    )


def latent(target: str, X: np.ndarray) -> np.ndarray:
    """The noise-free latent function of a target."""
    if target == "smooth":
        u, v, w = (X @ _directions()).T
        return 1.5 * np.sin(1.5 * u) + 0.5 * (v**2 - 1) + np.tanh(2 * w)
    if target == "additive":
        x = X
        return (
            np.sin(2 * x[:, 0])
            + 0.5 * (x[:, 1] ** 2 - 1)
            + np.tanh(2 * x[:, 2])
            + np.abs(x[:, 3])
            + np.cos(1.5 * x[:, 4])
            + 0.5 * x[:, 5]
            - np.exp(-(x[:, 6] ** 2))
            + np.sin(x[:, 7]) * 0.8
        )
    if target == "interaction":
        x = X
        return (
            x[:, 0] * x[:, 1]
            - x[:, 2] * x[:, 3]
            + x[:, 4] * x[:, 5]
            + np.sign(x[:, 6] * x[:, 7])
            + 0.5 * x[:, 8] * x[:, 9]
        )
    raise ValueError(f"unknown target {target!r}; choose from {TARGETS}")


def _complete(n: int, rng: np.random.Generator) -> np.ndarray:
    A, _ = _mixing()
    return rng.normal(size=(n, D)) @ A


@functools.lru_cache(maxsize=8)
def _calibration(target: str) -> tuple[float, float, float]:
    """The target's threshold (the median of f), its noise scale (a third of
    f's std) and the MAR offset c, from 200,000 reference rows."""
    X = _complete(200_000, np.random.default_rng(1204))
    f = latent(target, X)
    s = X @ _mar_scores()
    share = RATE * D / (D - N_OBSERVED)  # the incomplete columns' rate
    low, high = -30.0, 30.0
    for _ in range(60):
        c = (low + high) / 2
        if np.mean(1 / (1 + np.exp(-(2 * s + c)))) < share:
            low = c
        else:
            high = c
    return float(np.median(f)), float(f.std() / 3), c


def block(
    target: str, mechanism: str, seed: int, part: str, b: int
) -> tuple[np.ndarray, np.ndarray]:
    """Block ``b`` (BLOCK rows) of the training or test stream: rows with
    NaN and labels. The rows depend on (seed, part, b) only, the labels'
    noise also on the target, the mask also on the mechanism."""
    from missingkernels.experiments import simulate_missing

    X = _complete(BLOCK, np.random.default_rng(_seed(seed, part, b)))
    median, noise, c = _calibration(target)
    eps = np.random.default_rng(_seed(target, seed, part, b)).normal(size=BLOCK)
    y = (latent(target, X) + noise * eps > median).astype(np.int64)
    mask_seed = _seed(mechanism, seed, part, b)
    if mechanism == "mcar":
        X = simulate_missing(X, "mcar", RATE, random_state=mask_seed)
    elif mechanism == "mar":
        p = 1 / (1 + np.exp(-(2 * (X @ _mar_scores()) + c)))
        drop = np.random.default_rng(mask_seed).random(p.shape) < p
        X[:, : D - N_OBSERVED][drop] = np.nan
    else:
        raise ValueError(f"unknown mechanism {mechanism!r}; choose from {MECHANISMS}")
    return X, y


def training_rows(
    target: str, mechanism: str, seed: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """The first n rows of the training stream, in memory."""
    parts = [block(target, mechanism, seed, "train", b) for b in range(-(-n // BLOCK))]
    X = np.concatenate([p[0] for p in parts])[:n]
    y = np.concatenate([p[1] for p in parts])[:n]
    return X, y


def training_dask(target: str, mechanism: str, seed: int, n: int) -> tuple[Any, Any]:
    """The same rows as a dask array of BLOCK-row chunks, each generated when
    a pass needs it (never all in memory)."""
    import dask
    import dask.array as da

    xs, ys = [], []
    for b in range(-(-n // BLOCK)):
        rows = min(BLOCK, n - b * BLOCK)
        one = dask.delayed(block)(target, mechanism, seed, "train", b)
        xs.append(da.from_delayed(one[0][:rows], (rows, D), dtype=np.float64))
        ys.append(da.from_delayed(one[1][:rows], (rows,), dtype=np.int64))
    return da.concatenate(xs), da.concatenate(ys)


def test_rows(
    target: str, mechanism: str, seed: int, n_test: int
) -> tuple[np.ndarray, np.ndarray]:
    X, y = block(target, mechanism, seed, "test", 0)
    return X[:n_test], y[:n_test]


# -- one cell ------------------------------------------------------------------


def run_cell(
    target: str, mechanism: str, n: int, method: str, seed: int, cfg: dict
) -> dict[str, Any]:
    """Fit one method on n training rows, score it on the test rows."""
    import dask

    from missingkernels import MissingKernelSVC

    dask.config.set(scheduler="synchronous")  # one thread, as every method
    Xt, yt = test_rows(target, mechanism, seed, cfg["n_test"])
    if method == "dask":
        import dask.array as da

        X, y = training_dask(target, mechanism, seed, n)
    else:
        X, y = training_rows(target, mechanism, seed, n)
    start = time.perf_counter()
    if method in KERNEL_ROUTES:
        model = MissingKernelSVC(
            gamma=GAMMA,
            C=C,
            route="exact" if method == "exact" else "features",
            n_kernel_features=cfg["n_features"],
            random_state=0,
        ).fit(X, y)
    elif method == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        model = HistGradientBoostingClassifier(random_state=0).fit(X, y)
    elif method == "impute_svc":
        from missingkernels import get_baseline

        model = get_baseline("iterative_mean", random_state=0)
        model.set_params(svm__C=C, svm__gamma=GAMMA).fit(X, y)
    else:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    fitted = time.perf_counter()
    if method == "dask":
        pred = model.predict(da.from_array(Xt, chunks=(BLOCK, D))).compute()
    else:
        pred = model.predict(Xt)
    done = time.perf_counter()
    return dict(
        accuracy=float(np.mean(pred == yt)),
        fit_seconds=fitted - start,
        predict_seconds=done - fitted,
    )


def _peak_gib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB


def _in_subprocess(cell: tuple, quick: bool) -> dict[str, Any]:
    """Run a cell in a new process, so that its peak memory is its own."""
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--quick" if quick else "--full",
            "--cell",
            json.dumps(list(cell)),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(done.stderr.strip()[-400:] or f"exit {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- planning and running ------------------------------------------------------


def planned(cfg: dict) -> list[tuple]:
    """Every cell of the protocol, smallest n first (a run stopped early
    leaves the small-n part complete)."""
    return [
        (t, m, n, method, s)
        for s in cfg["seeds"]
        for n in cfg["sizes"]
        for t in TARGETS
        for m in MECHANISMS
        for method in METHODS
        if n <= cfg["caps"][method]
    ]


def _done(path: Path) -> set[tuple]:
    if not path.is_file():
        return set()
    frame = pd.read_csv(path)
    return {
        (r.target, r.mechanism, int(r.n), r.method, int(r.seed))
        for r in frame.itertuples()
    }


def _tree() -> str:
    """The commit the cells ran at, '+dirty' if the package's sources differed."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args],
                capture_output=True,
                text=True,
                cwd=Path(__file__).resolve().parent,
            ).stdout.strip()
        except OSError:
            return ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--", "../missingkernels")
    return commit + ("+dirty" if dirty else "")


def run(out: Path, cfg: dict, args: argparse.Namespace, quick: bool) -> int:
    """Compute the planned cells not yet in results.csv; return how many."""
    path = out / "results.csv"
    done = _done(path)
    chosen = {
        "target": set(args.targets.split(",")) if args.targets else None,
        "mechanism": set(args.mechanisms.split(",")) if args.mechanisms else None,
        "method": set(args.methods.split(",")) if args.methods else None,
    }
    tree = _tree()
    added = 0
    for cell in planned(cfg):
        target, mechanism, n, method, _ = cell
        if cell in done or (args.n_max is not None and n > args.n_max):
            continue
        if any(
            sel is not None and value not in sel
            for sel, value in zip(
                chosen.values(), (target, mechanism, method), strict=True
            )
        ):
            continue
        start = time.perf_counter()
        row: dict[str, Any] = dict(zip(KEY, cell, strict=True))
        try:
            sub = cfg["subprocess_from"]
            if sub is not None and n >= sub:
                row.update(_in_subprocess(cell, quick))
            else:
                row.update(run_cell(*cell, cfg), peak_gib=np.nan)
            row["error"] = ""
        except Exception as exc:  # recorded, reported, not retried
            row.update(accuracy=np.nan, error=f"{type(exc).__name__}: {exc}"[:300])
        row.update(
            cell_seconds=time.perf_counter() - start,
            n_test=cfg["n_test"],
            n_features=cfg["n_features"],
            tree=tree,
        )
        frame = pd.DataFrame([row])
        frame.to_csv(
            path, mode="a", header=not path.is_file(), index=False, float_format="%.6g"
        )
        added += 1
        print(
            f"{target} {mechanism} n={n} {method}: accuracy "
            f"{row.get('accuracy', np.nan):.4f}, {row['cell_seconds']:.1f} s"
            + (f" ({row['error']})" if row["error"] else ""),
            file=sys.stderr,
            flush=True,
        )
    return added


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
            raise SystemExit(f"{self.path.parent} is being written by {pid}.") from None
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.path.unlink(missing_ok=True)


# -- report --------------------------------------------------------------------


def _n(n: int) -> str:
    """10^k and 3 x 10^k as such, other sizes as integers."""
    k = int(np.floor(np.log10(n)))
    if n == 10**k:
        return f"10^{k}"
    if n == 3 * 10**k:
        return f"3x10^{k}"
    return f"{n:,}"


def crossover(acc: pd.DataFrame) -> str:
    """``acc``: accuracy by n (rows) and method (columns) of one target and
    mechanism. The smallest n from which HGB beats the best kernel route at
    every n run, with the margins."""
    kernel = acc[[m for m in KERNEL_ROUTES if m in acc]].max(axis=1)
    if "hgb" not in acc or kernel.dropna().empty:
        return "not measured yet"
    both = pd.DataFrame({"hgb": acc["hgb"], "kernel": kernel}).dropna()
    if both.empty:
        return "not measured yet"
    ahead = both["hgb"] > both["kernel"]
    largest = _n(int(both.index.max()))
    if not ahead.iloc[-1]:
        gap = both["kernel"].iloc[-1] - both["hgb"].iloc[-1]
        return (
            f"not within {largest} (the best kernel route minus HGB there: {gap:+.3f})"
        )
    first = len(ahead)
    while first > 0 and ahead.iloc[first - 1]:
        first -= 1
    n0 = int(both.index[first])
    gap = both["hgb"].iloc[first] - both["kernel"].iloc[first]
    last = both["hgb"].iloc[-1] - both["kernel"].iloc[-1]
    if first == 0:
        text = f"HGB ahead from the smallest n run ({_n(n0)}, by {gap:+.3f})"
    else:
        text = f"n = {_n(n0)} (HGB {gap:+.3f} there)"
    return text + (f", {last:+.3f} at {largest}" if first < len(ahead) - 1 else "")


def _table(frame: pd.DataFrame, value: str, fmt: str) -> list[str]:
    """Markdown: rows (target, mechanism, n), one column per method."""
    wide = frame.pivot_table(
        index=["target", "mechanism", "n"], columns="method", values=value
    )
    cols = [m for m in METHODS if m in wide.columns]
    lines = [
        "| target | mechanism | n | " + " | ".join(cols) + " |",
        "|---|---|---|" + "---|" * len(cols),
    ]
    order = sorted(
        wide.index, key=lambda k: (TARGETS.index(k[0]), MECHANISMS.index(k[1]), k[2])
    )
    for t, m, n in order:
        row = wide.loc[(t, m, n)]
        cells = ["-" if np.isnan(row[c]) else format(row[c], fmt) for c in cols]
        lines.append(f"| {t} | {m} | {_n(int(n))} | " + " | ".join(cells) + " |")
    return lines


def _gaps(ok: pd.DataFrame) -> list[str]:
    """Markdown: HGB's accuracy minus the best kernel route's, by n."""
    acc = ok.pivot_table(
        index=["target", "mechanism", "n"], columns="method", values="accuracy"
    )
    routes = [m for m in KERNEL_ROUTES if m in acc.columns]
    if "hgb" not in acc.columns or not routes:
        return []
    gap = (acc["hgb"] - acc[routes].max(axis=1)).unstack("n")
    sizes = sorted(gap.columns)
    lines = [
        "| target | mechanism | " + " | ".join(_n(int(n)) for n in sizes) + " |",
        "|---|---|" + "---|" * len(sizes),
    ]
    for t in TARGETS:
        for m in MECHANISMS:
            if (t, m) not in gap.index:
                continue
            row = gap.loc[(t, m)]
            cells = ["-" if np.isnan(row[n]) else f"{row[n]:+.3f}" for n in sizes]
            lines.append(f"| {t} | {m} | " + " | ".join(cells) + " |")
    return lines


def figure(ok: pd.DataFrame, out: Path) -> str | None:
    """Accuracy against n, one panel per target and mechanism."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(
        len(MECHANISMS), len(TARGETS), figsize=(12, 6.5), sharex=True, squeeze=False
    )
    for i, mech in enumerate(MECHANISMS):
        for j, target in enumerate(TARGETS):
            ax = axes[i][j]
            sel = ok[(ok["target"] == target) & (ok["mechanism"] == mech)]
            for method in METHODS:
                line = sel[sel["method"] == method].groupby("n")["accuracy"].mean()
                if len(line):
                    ax.plot(line.index, line.values, marker="o", label=method)
            ax.set_xscale("log")
            ax.set_title(f"{target}, {mech}", fontsize=10)
            ax.grid(alpha=0.3)
            if j == 0:
                ax.set_ylabel("test accuracy")
            if i == len(MECHANISMS) - 1:
                ax.set_xlabel("training rows n")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    name = "accuracy_vs_n.png"
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


def report(out: Path, cfg: dict, quick: bool) -> str:
    path = out / "results.csv"
    results = pd.read_csv(path, keep_default_na=False, na_values=[""])
    results["error"] = [e if isinstance(e, str) else "" for e in results["error"]]
    ok = results[results["error"] == ""]
    plan = planned(cfg)
    have = {
        (r.target, r.mechanism, int(r.n), r.method, int(r.seed))
        for r in results.itertuples()
    }
    left = [c for c in plan if c not in have]
    status = (
        "complete"
        if not left
        else f"PARTIAL: {len(plan) - len(left)} of {len(plan)} cells finished"
    )
    mode = "quick" if quick else "full"
    acc = ok.groupby(["target", "mechanism", "n", "method"])["accuracy"].mean()
    answers = []
    for target in TARGETS:
        for mech in MECHANISMS:
            try:
                one = acc.loc[(target, mech)].unstack("method")
            except KeyError:
                answers.append(f"{target}, {mech}: not measured yet.")
                continue
            answers.append(f"{target}, {mech}: {crossover(one)}.")
    largest = int(ok["n"].max()) if len(ok) else 0
    headline = (
        "Smallest n from which HGB is more accurate than the best kernel "
        "route (exact, features or dask, whichever ran at that n) at every "
        f"larger n run (measured up to {_n(largest) if largest else '-'}"
        + ("" if largest >= max(cfg["sizes"]) else "; larger n not run yet")
        + "): "
        + " ".join(answers)
    )
    se = np.sqrt(0.25 / cfg["n_test"])
    seconds = ok.assign(seconds=ok["fit_seconds"] + ok["predict_seconds"])
    figures = [f for f in [figure(ok, out)] if f]
    body = [
        "## HGB minus the best kernel route",
        "",
        "HGB's test accuracy minus the best of the kernel routes that ran at "
        "that n (exact up to 10^4 rows, features up to 10^5, dask at every n); "
        "positive: the trees are ahead.",
        "",
        *_gaps(ok),
        "",
        "## Test accuracy against n",
        "",
        f"Test accuracy on {cfg['n_test']:,} rows (one seed; the binomial "
        f"standard error of one accuracy is at most {se:.4f}, the difference of "
        "two methods on the same test rows is paired and usually tighter). "
        "'-': not planned at that n (beyond the method's cap) or not run yet.",
        "",
        *_table(ok, "accuracy", ".4f"),
        "",
        "## Fit + predict seconds against n",
        "",
        "Wall seconds of fit and predict on the test rows, on a shared 2-core "
        "machine (other jobs running; the times are upper bounds and their "
        "ratios rough). Every method runs on one thread (BLAS, OpenMP, numba "
        "and dask's synchronous scheduler). The `dask` times include "
        "generating its training blocks at every pass over them, which the "
        "other methods get in memory before their clock starts.",
        "",
        *_table(seconds, "seconds", ".1f"),
    ]
    if ok["peak_gib"].notna().any():
        body += [
            "",
            "## Peak memory (GiB)",
            "",
            f"Peak resident memory of the cell's own process (cells of "
            f"{cfg['subprocess_from']:,} rows or more; it includes the "
            "generated training rows, except for `dask`, whose blocks are "
            "generated as its passes need them).",
            "",
            *_table(ok[ok["peak_gib"].notna()], "peak_gib", ".2f"),
        ]
    failed = results[results["error"] != ""]
    if len(failed):
        body += ["", f"Failed cells ({len(failed)}):", ""]
        body += [
            f"- {r.target}, {r.mechanism}, n = {int(r.n)}, {r.method}: {r.error}"
            for r in failed.itertuples()
        ]
    caps = ", ".join(f"{m} <= {_n(c)}" for m, c in cfg["caps"].items())
    trees = sorted(set(results["tree"].astype(str)))
    remaining = sorted({(c[2], c[3]) for c in left})
    provenance = [
        f"- Status: **{status}**.",
        f"- Command (from the repository root): `python vignettes/{NAME}.py "
        f"--{mode}`; a subset now: `--n-max N`, `--targets a,b`, "
        "`--mechanisms mcar`, `--methods dask,hgb`.",
        f"- missingkernels {missingkernels.__version__}; cells run at "
        f"{', '.join(trees)} ('+dirty': the package's sources had uncommitted "
        "changes when they ran).",
        f"- Compute time: {results['cell_seconds'].sum() / 60:.1f} min summed "
        f"over {len(results)} cells. " + _runs_summary(out / "runs.csv", len(results)),
        f"- Protocol: {', '.join(TARGETS)} x {', '.join(MECHANISMS)} at "
        f"{100 * RATE:g}%; n in {{{', '.join(_n(n) for n in cfg['sizes'])}}}; "
        f"methods {', '.join(METHODS)} with caps {caps}; C = {C:g}, gamma = "
        f"{GAMMA:g} (fixed, no CV), {cfg['n_features']} kernel features, "
        f"dask chunks of {BLOCK:,} rows; seeds {cfg['seeds']}; "
        f"{cfg['n_test']:,} test rows.",
        "- Share of entries missing in the first training block (25,000 "
        "rows, seed 0): "
        + ", ".join(
            f"{m} {np.isnan(block('smooth', m, 0, 'train', 0)[0]).mean():.3f}"
            for m in MECHANISMS
        )
        + ".",
        "- Files: `results.csv` (one row per cell: accuracy, fit and predict "
        "seconds, peak memory where measured, the commit), `runs.csv` (every "
        "run: its command, wall time and cells added).",
    ]
    if remaining:
        by_n: dict[int, list[str]] = {}
        for n, m in remaining:
            by_n.setdefault(n, []).append(m)
        provenance.append(
            "- Still to run: "
            + "; ".join(
                f"n = {_n(n)}: {', '.join(sorted(set(ms)))}"
                for n, ms in sorted(by_n.items())
            )
            + f" (rerun `python vignettes/{NAME}.py --{mode}`, or piece by "
            "piece with `--n-max`, `--targets`, `--methods`)."
        )
    lines = [
        f"# {TITLE} ({mode} mode)",
        "",
        f"**Question.** {QUESTION}",
        "",
        f"**Answer ({status}).** {headline}",
        "",
        *[x for f in figures for x in (f"![{f}]({f})", "")],
        *body,
        "",
        "## Provenance",
        "",
        *provenance,
    ]
    lines = fit_tables("\n".join(lines).split("\n"))
    text = "\n".join(lines) + "\n"
    (out / "README.md").write_text(text)
    return text


# -- driver --------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=TITLE)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true", help="small smoke run (CI)")
    mode.add_argument("--full", action="store_true", help="the full protocol")
    parser.add_argument("--n-max", type=int, help="run only cells of at most N rows")
    parser.add_argument("--targets", help="run only these targets now")
    parser.add_argument("--mechanisms", help="run only these mechanisms now")
    parser.add_argument("--methods", help="run only these methods now")
    parser.add_argument(
        "--report-only", action="store_true", help="only rewrite the report"
    )
    parser.add_argument("--cell", help=argparse.SUPPRESS)  # one cell, JSON out
    args = parser.parse_args(argv)
    quick = bool(args.quick)
    cfg = settings(quick)
    if args.cell:
        target, mechanism, n, method, seed = json.loads(args.cell)
        row = run_cell(target, mechanism, int(n), method, int(seed), cfg)
        print(json.dumps({**row, "peak_gib": _peak_gib()}))
        return 0
    out = RESULTS / NAME / ("quick" if quick else "full")
    out.mkdir(parents=True, exist_ok=True)
    script = os.path.relpath(sys.argv[0], Path(__file__).resolve().parent.parent)
    given = sys.argv[1:] if argv is None else list(argv)
    invocation = "python " + " ".join(shlex.quote(a) for a in [script, *given])
    if not args.report_only:
        with _Lock(out):
            start = time.perf_counter()
            before = len(_done(out / "results.csv"))
            status = "interrupted"
            previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
            try:
                run(out, cfg, args, quick)
                status = "finished"
            finally:
                signal.signal(signal.SIGTERM, previous)
                _record_run(
                    out / "runs.csv",
                    invocation,
                    status=status,
                    n_jobs=1,
                    wall=time.perf_counter() - start,
                    added=len(_done(out / "results.csv")) - before,
                )
    if not (out / "results.csv").is_file():
        raise SystemExit(f"No results yet in {out}.")
    print(report(out, cfg, quick))
    return 0


if __name__ == "__main__":
    sys.exit(main())
