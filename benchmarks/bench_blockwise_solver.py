"""The out-of-core squared-hinge solver against LinearSVC, same features, 10^5 rows.

Issue 49, item 2: which solver fits the linear SVM of the features route out
of core, and how far is it from LinearSVC? The data are
``benchmarks/bench_scale.py``'s (its ``make_data``, imported: 20 correlated
features standardised, a nonlinear two-class target, 30% MCAR), ``--n``
training rows and ``--n-test`` test rows, labels in {-1, +1}. For each D,
``ExpectedKernelFeatures(kernel="genrbf", n_components=D, dtype="float32",
random_state=0)`` is fitted on the training rows (in memory) and transforms
both; then, on the SAME features and with MissingKernelSVC's default C = 1:

- ``svc_sq``: ``LinearSVC(loss="squared_hinge", dual=False, tol=1e-6,
  max_iter=10000)``, the reference (liblinear's primal trust-region Newton);
- ``blockwise``: ``fit_squared_hinge(BlockPasses(blocks of 8,192 rows))``,
  the finite Newton method on D x D block statistics (same objective);
- ``least_sq``: ``fit_least_squares``, the one-pass ridge on y in {-1, +1};
- ``svc_hinge``: ``LinearSVC(loss="hinge", dual=True)`` with the estimator's
  defaults (tol=1e-3, max_iter=10000), as ``MissingKernelSVC(route=
  "features")`` fits it today (``_make_linear``);
- ``svc_sq_tight``: ``svc_sq`` at ``--tight-tol`` (1e-10), to tell the
  reference's stopping error from ours.

Reported per D: wall and CPU time of each fit, and their ratio to
``svc_sq``'s in the same run (liblinear runs on one thread, the blockwise
solver's BLAS on all cores: the CPU ratio compares work); LinearSVC's primal
objective ``1/2 (||w||^2 + (b / intercept_scaling)^2) + C sum_i max(0, 1 -
y_i (w^T z_i + b))^2`` of each fit (one formula, blockwise) and its relative
difference to ``svc_sq``'s; the largest entry of the objective's gradient
(relative to ``1 + 2 C sum_i ||x_i||^2``, the scale of the Hessian); max |coef
difference| and |intercept difference| against ``svc_sq`` (and the tight
one); test accuracy; the passes the blockwise fit took and whether it
converged (LinearSVC: its ``n_iter_``, and whether it warned). Also
HistGradientBoostingClassifier (defaults, random_state=0) on the raw rows
with NaN, bench_scale's reference. Never asserts on times.

Memory: liblinear copies the features to float64 and then to its sparse
rows (16 bytes an entry), so LinearSVC at n x D needs about 24 n D bytes
beyond the float32 features: D = 4096 at 10^5 rows needs ~12 GB, beyond
this benchmark's 8 GB budget on the shared machine; the defaults are D =
1024 and 2048.

Run (from the repository root)::

    .venv/bin/python benchmarks/bench_blockwise_solver.py            # 10^5 rows
    .venv/bin/python benchmarks/bench_blockwise_solver.py --quick    # 10^4, D=512
    .venv/bin/python benchmarks/bench_blockwise_solver.py \\
        --out benchmarks/results_bench_blockwise_solver.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from bench_scale import C, make_data  # bench_scale's data and SVM C (1.0)

BLOCK = 8192
SCALING = 1.0  # intercept_scaling, LinearSVC's default and BlockPasses'


def _blocks(Z: np.ndarray, size: int = BLOCK) -> Callable[[], Iterator]:
    def blocks() -> Iterator[tuple[np.ndarray, slice]]:
        for s in range(0, len(Z), size):
            rows = slice(s, min(s + size, len(Z)))
            yield Z[rows], rows

    return blocks


def _outputs(Z: np.ndarray, coef: np.ndarray, intercept: float) -> np.ndarray:
    """``Z coef + intercept`` in float64, a block at a time (no n x D copy)."""
    out = np.empty(len(Z))
    for Zb, rows in _blocks(Z)():
        out[rows] = Zb.astype(np.float64) @ coef + intercept
    return out


def objective(Z, y, coef, intercept, C=C, scaling=SCALING) -> float:
    """LinearSVC's primal objective (squared hinge, intercept regularised)."""
    margin = np.maximum(0.0, 1.0 - y * _outputs(Z, coef, intercept))
    full = np.append(coef, intercept / scaling)
    return float(0.5 * full @ full + C * margin @ margin)


def gradient_max(Z, y, coef, intercept, C=C, scaling=SCALING) -> float:
    """max |gradient| of :func:`objective` over ``(coef, intercept / scaling)``,
    relative to ``1 + 2 C sum_i ||x_i||^2``: 0 at the minimiser, up to
    rounding."""
    m = np.maximum(0.0, 1.0 - y * _outputs(Z, coef, intercept)) * y
    g = np.append(coef, intercept / scaling)
    size = 0.0
    for Zb, rows in _blocks(Z)():
        Zb = Zb.astype(np.float64)
        g[:-1] -= 2.0 * C * (Zb.T @ m[rows])
        size += float(np.einsum("ij,ij->", Zb, Zb))
    g[-1] -= 2.0 * C * scaling * m.sum()
    size += len(Z) * scaling**2
    return float(np.abs(g).max() / (1.0 + 2.0 * C * size))


def accuracy(Z, y, coef, intercept) -> float:
    """Test accuracy of ``sign(Z coef + intercept)`` (0 -> -1, as sklearn)."""
    pred = np.where(_outputs(Z, coef, intercept) > 0, 1.0, -1.0)
    return float(np.mean(pred == y))


def timed(fit: Callable[[], Any]) -> tuple[Any, float, float, bool]:
    """The fit's result, wall and CPU seconds, and whether it warned of
    non-convergence."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        wall, cpu = time.perf_counter(), time.process_time()
        result = fit()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return result, wall, cpu, warned


def in_child(fit: Callable[[], Any], budget: float) -> tuple | None:
    """:func:`timed` of ``fit`` in a forked process (the features shared, not
    copied; liblinear's float64 and sparse copies freed with it), or None if
    it runs past ``budget`` seconds (then the child is ended)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)

    def child() -> None:
        send.send(timed(fit))

    process = context.Process(target=child)
    process.start()
    send.close()
    done = receive.recv() if receive.poll(budget) else None
    if done is None:
        process.terminate()
    process.join()
    return done


def _peak_gib() -> float:
    """The largest resident set of this process or any fit's child."""
    return (
        max(
            resource.getrusage(who).ru_maxrss
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        / 2**20
    )


def one_d(D: int, X, y, Xt, yt, args, say: Callable[[str], None]) -> dict:
    from sklearn.svm import LinearSVC

    from missingkernels import ExpectedKernelFeatures
    from missingkernels.estimators._blockwise_linear import (
        BlockPasses,
        fit_least_squares,
        fit_squared_hinge,
    )

    start = time.perf_counter()
    features = ExpectedKernelFeatures(
        kernel="genrbf", n_components=D, dtype="float32", random_state=0
    ).fit(X)
    Z, Zt = features.transform(X), features.transform(Xt)
    say(
        f"\n## D = {D} ({Z.shape[1]} features, {Z.dtype}; "
        f"{len(Z):,} training and {len(Zt):,} test rows): feature map fitted and "
        f"applied in {time.perf_counter() - start:.0f} s"
    )

    def svc(loss: str, dual: bool, tol: float) -> Callable[[], Any]:
        def fit() -> tuple[np.ndarray, float, int]:
            model = LinearSVC(
                C=C, loss=loss, dual=dual, tol=tol, max_iter=10000,
                intercept_scaling=SCALING, random_state=0,
            ).fit(Z, y)  # fmt: skip
            return model.coef_.ravel(), float(model.intercept_[0]), model.n_iter_

        return fit

    fits: dict[str, dict] = {}

    def record(name: str, coef, intercept, wall, cpu, passes, converged) -> None:
        fits[name] = {
            "coef": np.asarray(coef, dtype=np.float64).ravel(),
            "intercept": float(np.ravel(intercept)[0]),
            "wall": wall, "cpu": cpu, "passes": passes, "converged": converged,
        }  # fmt: skip
        f = fits[name]
        f["objective"] = objective(Z, y, f["coef"], f["intercept"])
        f["gradient"] = gradient_max(Z, y, f["coef"], f["intercept"])
        f["accuracy"] = accuracy(Zt, yt, f["coef"], f["intercept"])
        ref = fits.get("svc_sq", f)
        say(
            f"  {name:<13} {wall:8.1f} s wall ({wall / ref['wall']:6.2f}x)  "
            f"{cpu:8.1f} s CPU ({cpu / ref['cpu']:6.2f}x)  objective "
            f"{f['objective']:.10e}  |grad| {f['gradient']:.1e}  test accuracy "
            f"{f['accuracy']:.4f}  {passes}  peak {_peak_gib():.1f} GiB"
        )

    def liblinear(name: str, fit: Callable[[], Any], label: str = "") -> None:
        done = in_child(fit, args.budget)
        if done is None:
            say(f"  {name:<13} stopped after the budget of {args.budget:.0f} s")
            return
        (coef, intercept, n_iter), wall, cpu, warned = done
        record(name, coef, intercept, wall, cpu,
               f"n_iter_={n_iter}{label}{' (warned)' if warned else ''}",
               not warned)  # fmt: skip

    # (a) the reference: LinearSVC's primal, squared hinge
    liblinear("svc_sq", svc("squared_hinge", False, args.tol))
    if "svc_sq" not in fits:
        raise SystemExit("The reference LinearSVC did not finish: no comparison.")
    # (b) ours, out of core over blocks of 8,192 rows
    passes = BlockPasses(_blocks(Z), y, intercept_scaling=SCALING)
    fit, wall, cpu, _ = timed(lambda: fit_squared_hinge(passes, C=C))
    record("blockwise", fit.coef, fit.intercept, wall, cpu,
           f"passes={fit.n_passes} converged={fit.converged}",
           fit.converged)  # fmt: skip
    # (c) one-pass ridge on the labels
    fit, wall, cpu, _ = timed(lambda: fit_least_squares(passes, C=C))
    record("least_sq", fit.coef, fit.intercept, wall, cpu,
           f"passes={fit.n_passes}", True)  # fmt: skip
    # (d) what the in-memory features route fits today
    if not args.no_hinge:
        liblinear("svc_hinge", svc("hinge", True, 1e-3))
    # (a') the reference to a tight tolerance
    if args.tight_tol > 0:
        liblinear(
            "svc_sq_tight",
            svc("squared_hinge", False, args.tight_tol),
            f" tol={args.tight_tol:g}",
        )

    a, b = fits["svc_sq"], fits["blockwise"]
    out = {"D": D, "fits": fits}
    for ref in ("svc_sq", "svc_sq_tight"):
        if ref not in fits:
            continue
        r = fits[ref]
        out[ref] = {
            "rel_objective": (b["objective"] - r["objective"]) / r["objective"],
            "coef": float(np.abs(b["coef"] - r["coef"]).max()),
            "coef_rel": float(
                np.abs(b["coef"] - r["coef"]).max() / np.abs(r["coef"]).max()
            ),
            "intercept": abs(b["intercept"] - r["intercept"]),
        }
        o = out[ref]
        say(
            f"  blockwise vs {ref}: objective (ours - theirs) / theirs = "
            f"{o['rel_objective']:+.2e}; max |coef diff| = {o['coef']:.2e} "
            f"(max |coef| {np.abs(r['coef']).max():.3g}: {o['coef_rel']:.1e} "
            f"relative); |intercept diff| = {o['intercept']:.2e}"
        )
        if o["rel_objective"] > 1e-12:
            say(
                f"  !!! LinearSVC ({ref}) reaches a LOWER objective than the "
                f"blockwise solver, by {o['rel_objective']:.2e} relative: a bug "
                "in fit_squared_hinge, or its stop is early"
            )
    if not b["converged"]:
        say("  !!! fit_squared_hinge did NOT converge within max_passes=50")
    say(
        f"  blockwise time / svc_sq time: {b['wall'] / a['wall']:.2f} wall, "
        f"{b['cpu'] / a['cpu']:.2f} CPU"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**5, help="training rows")
    parser.add_argument("--n-test", type=int, default=2 * 10**4)
    parser.add_argument("--D", type=int, nargs="*", default=[1024, 2048])
    parser.add_argument("--tol", type=float, default=1e-6, help="svc_sq's tol")
    parser.add_argument("--tight-tol", type=float, default=1e-10,
                        help="svc_sq_tight's tol (0: skip it)")  # fmt: skip
    parser.add_argument("--no-hinge", action="store_true", help="skip svc_hinge")
    parser.add_argument("--budget", type=float, default=1200.0,
                        help="seconds a LinearSVC fit may take")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="10^4 rows, D=512")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args()
    if args.quick:
        args.n, args.n_test, args.D = 10**4, 2000, [512]

    started, t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.time()
    load0 = os.getloadavg()[0]
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    from sklearn.ensemble import HistGradientBoostingClassifier

    import missingkernels

    X_all, y01 = make_data(args.n + args.n_test)
    y_all = np.where(y01 == 1, 1.0, -1.0)
    X, y, Xt, yt = (
        X_all[: args.n], y_all[: args.n], X_all[args.n :], y_all[args.n :]
    )  # fmt: skip
    say(
        f"Data: bench_scale.make_data({args.n + args.n_test}): {args.n:,} training "
        f"rows, {args.n_test:,} test rows, {X.shape[1]} features, "
        f"{np.isnan(X).mean():.1%} missing, {np.mean(y > 0):.1%} positive; C = {C}"
    )
    hgb, wall, _, _ = timed(
        lambda: HistGradientBoostingClassifier(random_state=0).fit(X, y)
    )
    hgb_acc = float(hgb.score(Xt, yt))
    say(f"HistGradientBoostingClassifier (NaN native): test accuracy {hgb_acc:.4f} "
        f"({wall:.1f} s)")  # fmt: skip
    results = [one_d(D, X, y, Xt, yt, args, say) for D in args.D]

    seconds = time.time() - t0
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
        cwd=os.path.dirname(os.path.abspath(__file__)),
    ).stdout.strip()  # fmt: skip
    cpu_model = "?"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    say(
        f"\nTotal wall time {seconds:.0f} s; peak memory {_peak_gib():.1f} GiB; "
        f"load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    if not args.out:
        return
    header = [
        "# benchmarks/bench_blockwise_solver.py: the out-of-core squared-hinge "
        "solver against LinearSVC on the same features",
        "# Command: .venv/bin/python benchmarks/bench_blockwise_solver.py "
        + " ".join(sys.argv[1:]),
        f"# Run: {started}, wall time {seconds:.0f} s; commit {commit}; "
        f"missingkernels from {os.path.dirname(missingkernels.__file__)}",
        f"# Machine: {os.cpu_count()} cores ({cpu_model}), "
        f"{platform.machine()}, shared VM; python {platform.python_version()}",
        "",
        "Question (issue 49, item 2): which solver fits the features route's "
        "linear SVM out of core, and what is its error against LinearSVC on the "
        f"same features at {args.n:,} rows?",
        "",
        "Answer: fit_squared_hinge (finite Newton on D x D block statistics, "
        "LinearSVC's own primal objective):",
    ]
    for r in results:
        f, o = r["fits"], r["svc_sq"]
        tight = r.get("svc_sq_tight")
        to_tight = ""
        if tight:
            to_tight = f", {tight['rel_objective']:+.1e} to tol={args.tight_tol:g}"
        header.append(
            f"  D={r['D']}: objective {o['rel_objective']:+.1e} relative to "
            f"LinearSVC(tol={args.tol:g})"
            + to_tight
            + f"; max |coef diff| {o['coef']:.1e}, |intercept diff| "
            f"{o['intercept']:.1e}; {f['blockwise']['passes']}; test accuracy "
            + ", ".join(f"{k} {v['accuracy']:.4f}" for k, v in f.items())
            + f"; time {f['blockwise']['wall'] / f['svc_sq']['wall']:.2f}x "
            f"LinearSVC's (wall), {f['blockwise']['cpu'] / f['svc_sq']['cpu']:.2f}x "
            "(CPU)"
        )
    header.append(f"  HistGradientBoostingClassifier on the raw rows: {hgb_acc:.4f}")
    header.append("")
    with open(args.out, "w") as out:
        out.write("\n".join(header + lines) + "\n")


if __name__ == "__main__":
    main()
