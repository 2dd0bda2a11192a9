"""The ``missingkernels compare`` command."""

from __future__ import annotations

import os

import numpy as np
import pytest

from missingkernels.cli import main

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")


@pytest.fixture
def csv_path(tmp_path, rng):
    X = rng.normal(size=(72, 4))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["label"] = y
    path = tmp_path / "mine.csv"
    frame.to_csv(path, index=False)
    return path


def test_compare_quick_on_a_csv_writes_results_table_and_figures(
    csv_path, tmp_path, capsys
):
    out = tmp_path / "out"
    args = [
        "compare", "--csv", str(csv_path), "--target", "label", "--quick",
        "--methods", "zero,mean,knn", "--rate", "0.1", "--rate", "0.3",
        "--output-dir", str(out), "--no-progress",
    ]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert (
        "| method | mine mar 10% accuracy | mine mar 10% balanced_accuracy | "
        "mine mar 30% accuracy | mine mar 30% balanced_accuracy |"
    ) in printed
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    # 2 rates x 1 draw x 3 folds x 3 methods x 2 metrics
    assert len(res) == 2 * 3 * 3 * 2
    assert (res["error"] == "").all()
    assert set(res["mechanism"]) == {"mar"}
    for name in ("table.md", "rate_curves.png", "critical_difference.png"):
        assert (out / name).stat().st_size > 0
    # A second run resumes: nothing is recomputed.
    lines = (out / "results.csv").read_text()
    assert main(args) == 0
    assert (out / "results.csv").read_text() == lines


def test_compare_refuses_to_simulate_on_incomplete_data(tmp_path, capsys):
    path = tmp_path / "holes.csv"
    path.write_text("a,b,target\n1,,0\n2,3,1\n3,1,0\n4,2,1\n")
    code = main(["compare", "--csv", str(path), "--mechanism", "mar",
                 "--output-dir", str(tmp_path / "o")])  # fmt: skip
    assert code == 2
    assert "--mechanism none" in capsys.readouterr().err


def test_compare_needs_a_dataset(capsys):
    assert main(["compare"]) == 2
    assert "dataset name or --csv" in capsys.readouterr().err


# Issue 19: each of these gets one line on stderr, saying what is wrong and
# what to do, and exit code 2 (1 for an interruption).


def _one_line_error(capsys):
    err = capsys.readouterr().err.strip()
    assert err.startswith("compare: ") and "\n" not in err, err
    assert "Traceback" not in err
    return err


def _compare(csv_path, out, *extra):
    return main(
        ["compare", "--csv", str(csv_path), "--target", "label", "--quick",
         "--methods", "mean", "--output-dir", str(out), "--no-progress", *extra]
    )  # fmt: skip


def test_output_dir_that_is_a_file_is_refused(csv_path, tmp_path, capsys):
    out = tmp_path / "taken"
    out.write_text("not a directory")
    assert _compare(csv_path, out) == 2
    assert "is an existing file, not a directory" in _one_line_error(capsys)
    assert out.read_text() == "not a directory"


def test_output_dir_below_a_file_is_refused(csv_path, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert _compare(csv_path, tmp_path / "file" / "out") == 2
    assert "cannot write to --output-dir" in _one_line_error(capsys)


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="permissions do not bind root",
)
def test_unwritable_output_dir_is_refused(csv_path, tmp_path, capsys):
    out = tmp_path / "locked"
    out.mkdir()
    out.chmod(0o500)
    try:
        assert _compare(csv_path, out) == 2
    finally:
        out.chmod(0o700)
    err = _one_line_error(capsys)
    assert "cannot write to --output-dir" in err and "Permission denied" in err


def test_unwritable_results_file_is_refused(csv_path, tmp_path, capsys, monkeypatch):
    # Root ignores permission bits: make the probe's write fail instead.
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    assert _compare(csv_path, tmp_path / "out") == 2
    err = _one_line_error(capsys)
    assert "cannot write to --output-dir" in err and "Permission denied" in err


def test_a_concurrent_run_on_the_output_dir_is_refused(csv_path, tmp_path, capsys):
    fcntl = pytest.importorskip("fcntl")
    out = tmp_path / "out"
    out.mkdir()
    with (out / "results.csv.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a run in progress
        assert _compare(csv_path, out) == 2
    err = _one_line_error(capsys)
    assert "another run is writing to" in err and "another --output-dir" in err
    assert not (out / "results.csv").exists()


def test_two_processes_on_one_output_dir(csv_path, tmp_path):
    # The real thing: the second process finds the first one's lock. The
    # first one's cells wait for the file "release", so it holds the lock
    # until the second has finished, however slowly the processes start.
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    release = tmp_path / "release"
    blocking = (
        "import pathlib, sys, time\n"
        "import missingkernels.experiments._runner as runner\n"
        "from missingkernels.cli import main\n"
        "run = runner._run_cell\n"
        "def wait_then_run(*a, **k):\n"
        "    deadline = time.monotonic() + 120\n"
        f"    while not pathlib.Path({str(release)!r}).exists():\n"
        "        assert time.monotonic() < deadline\n"
        "        time.sleep(0.05)\n"
        "    return run(*a, **k)\n"
        "runner._run_cell = wait_then_run\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    args = ["compare", "--csv", str(csv_path), "--target", "label", "--quick",
            "--methods", "mean", "--output-dir", str(out),
            "--no-progress"]  # fmt: skip
    first = subprocess.Popen([sys.executable, "-c", blocking, *args])
    try:
        deadline = time.monotonic() + 120
        while not (out / "results.csv.config.json").exists():  # written locked
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        second = subprocess.run(
            [sys.executable, "-m", "missingkernels", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        release.touch()
        assert first.wait(timeout=120) == 0
    assert second.returncode == 2
    assert second.stderr.strip().count("\n") == 0
    assert "another run is writing to" in second.stderr


def test_single_class_target_is_refused(tmp_path, capsys):
    path = tmp_path / "one.csv"
    X = np.random.default_rng(0).normal(size=(30, 2))
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": 1}).to_csv(path, index=False)
    assert _compare(path, tmp_path / "out") == 2
    err = _one_line_error(capsys)
    assert "column 'label' of one has a single class (1)" in err
    assert "--target" in err


def test_header_only_csv_is_refused(tmp_path, capsys):
    path = tmp_path / "empty.csv"
    path.write_text("a,b,label\n")
    assert _compare(path, tmp_path / "out") == 2
    err = _one_line_error(capsys)
    assert "no data rows" in err and "not numeric" not in err


def test_empty_csv_is_refused(tmp_path, capsys):
    path = tmp_path / "void.csv"
    path.write_text("")
    assert _compare(path, tmp_path / "out") == 2
    assert "is empty" in _one_line_error(capsys)


def test_string_target_of_a_regression_is_refused(csv_path, tmp_path, capsys):
    assert _compare(csv_path, tmp_path / "out", "--task", "regression") == 2
    err = _one_line_error(capsys)
    assert "target column 'label' is not numeric" in err
    assert "--task classification" in err


def test_ctrl_c_says_rerun_to_resume(csv_path, tmp_path, capsys, monkeypatch):
    import missingkernels.experiments as mke

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(mke, "run_comparison", interrupted)
    assert _compare(csv_path, tmp_path / "out") == 1
    err = _one_line_error(capsys)
    assert "interrupted" in err and "rerun the same command to resume" in err


@pytest.fixture
def collinear_csv(tmp_path, rng):
    X = rng.normal(size=(72, 3))
    X = np.c_[X, X[:, 0] + X[:, 1]]  # a singular covariance for EM
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["label"] = np.where(X[:, 0] > 0, "yes", "no")
    path = tmp_path / "col.csv"
    frame.to_csv(path, index=False)
    return path


def test_warnings_are_summarised_once_with_the_remedy(collinear_csv, tmp_path, capsys):
    # Issue 19: each EM fit printed its own SingularCovarianceWarning (of the
    # maximum-likelihood density: the default prior keeps it regular).
    args = ["compare", "--csv", str(collinear_csv), "--target", "label",
            "--quick", "--methods", "genrbf,mean", "--no-progress",
            "--density-params", "prior_rows=0", "--mechanism", "mcar",
            "--output-dir", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    assert err.count("SingularCovarianceWarning") == 1, err
    assert "cells" in err and "raised" in err
    assert "what to do: rerun with --ridge 1e-3" in err


def test_ridge_reaches_the_expected_kernel_methods(collinear_csv, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["compare", "--csv", str(collinear_csv), "--target", "label",
            "--quick", "--methods", "genrbf,mean", "--no-progress",
            "--ridge", "1e-3", "--output-dir", str(out)]  # fmt: skip
    assert main(args) == 0
    assert "SingularCovarianceWarning" not in capsys.readouterr().err
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(res["method"]) == {"genrbf[ridge=0.001]", "mean"}
    assert (res["error"] == "").all()


def test_density_params_reach_the_densities_that_take_them(
    collinear_csv, tmp_path, capsys
):
    out = tmp_path / "out"
    args = ["compare", "--csv", str(collinear_csv), "--target", "label",
            "--quick", "--methods", "genrbf,mean", "--no-progress",
            "--density-params", "prior_rows=3", "--output-dir", str(out)]  # fmt: skip
    assert main(args) == 0
    assert "SingularCovarianceWarning" not in capsys.readouterr().err
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(res["method"]) == {"genrbf[prior_rows=3]", "mean"}
    assert (res["error"] == "").all()


def test_density_params_parse_ranges_and_names():
    from missingkernels._density_options import (
        _parse_density_params,
        _with_density_params,
    )

    assert _parse_density_params("n_components=(1, 4),prior_rows=0") == {
        "n_components": (1, 4),
        "prior_rows": 0,
    }
    assert _parse_density_params("n_components=bic") == {"n_components": "bic"}
    specs = _with_density_params(
        ["mixed_rbf", "genrbf", "mean"], {"n_components": "bic"}, (1.0,), (0.1,)
    )
    # Only latent_class (mixed_rbf's density) has n_components.
    assert specs[0].name == "mixed_rbf[n_components=bic]"
    assert specs[1:] == ["genrbf", "mean"]


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("n_components=bic", "no method of genrbf has a density with n_components"),
        ("prior_rows", "KEY=VALUE pairs"),
        ("prior_rows=-1", "prior_rows"),
    ],
)
def test_bad_density_params_are_refused(csv_path, tmp_path, capsys, value, match):
    args = ["compare", "--csv", str(csv_path), "--target", "label", "--quick",
            "--methods", "genrbf", "--density-params", value,
            "--output-dir", str(tmp_path / "o")]  # fmt: skip
    assert main(args) == 2
    assert match in _one_line_error(capsys)


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--methods", "mean,knn"], "--ridge applies to the expected-kernel methods"),
        (["--ridge", "0"], "--ridge must be a positive finite number"),
    ],
)
def test_ridge_without_a_use_is_refused(csv_path, tmp_path, capsys, extra, match):
    args = ["compare", "--csv", str(csv_path), "--target", "label", "--quick",
            "--ridge", "1e-3", "--output-dir", str(tmp_path / "o"), *extra]  # fmt: skip
    assert main(args) == 2
    assert match in _one_line_error(capsys)


# Issue 26: compare on natural missingness.


@pytest.fixture
def holes_csv(tmp_path, rng):
    X = rng.normal(size=(72, 4))
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    X[rng.random(X.shape) < 0.1] = np.nan
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["label"] = y
    path = tmp_path / "holes.csv"
    frame.to_csv(path, index=False)
    return path


def _banner(capsys):
    return capsys.readouterr().out.splitlines()[0]


def test_banner_says_auto_simulated_mar_on_complete_data(csv_path, tmp_path, capsys):
    assert _compare(csv_path, tmp_path / "out") == 0
    banner = _banner(capsys)
    assert "no missing value" in banner
    assert "simulated mar missingness at rate 0.3" in banner
    assert "--mechanism auto" in banner
    assert "1 missingness draw(s)" in banner


def test_banner_says_natural_missingness_and_cv_repetitions(
    holes_csv, tmp_path, capsys
):
    assert _compare(holes_csv, tmp_path / "out", "--repetitions", "2") == 0
    out = capsys.readouterr().out
    banner = out.splitlines()[0]
    assert "the data's own missingness" in banner
    assert "% of entries" in banner
    assert "2 repetition(s) of the CV splits" in banner
    assert "draw" not in banner
    assert "over repetitions of the CV splits" in out


def test_repetitions_help_names_both_meanings(capsys):
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "with the data's own missingness, repeated CV splits" in out


def test_table_shows_balanced_accuracy_beside_accuracy(csv_path, tmp_path, capsys):
    out = tmp_path / "out"
    assert _compare(csv_path, out) == 0
    printed = capsys.readouterr().out
    header = "| method | mine accuracy | mine balanced_accuracy |"
    assert "accuracy and balanced_accuracy (mean ± std" in printed
    assert header in printed
    assert (out / "table.md").read_text().startswith(header)


def test_selection_metric_and_class_weight_reach_the_run(csv_path, tmp_path, capsys):
    import json

    out = tmp_path / "out"
    extra = ["--selection-metric", "balanced_accuracy", "--class-weight", "balanced"]
    assert _compare(csv_path, out, *extra) == 0
    banner = _banner(capsys)
    assert "selecting by balanced_accuracy, class_weight balanced" in banner
    config = json.loads((out / "results.csv.config.json").read_text())
    assert config["selection_metric"] == "balanced_accuracy"
    assert config["class_weight"] == "balanced"
    # Another class weight does not resume these results.
    assert _compare(csv_path, out, "--selection-metric", "balanced_accuracy") == 2
    assert "class_weight" in _one_line_error(capsys)


def test_methods_without_class_weight_are_named(csv_path, tmp_path, capsys):
    args = ["--methods", "mean,geom", "--class-weight", "balanced"]
    assert main(["compare", "--csv", str(csv_path), "--target", "label",
                 "--quick", "--no-progress", "--output-dir",
                 str(tmp_path / "out"), *args]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "(class_weight not supported, ignored by: geom)" in out


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--class-weight", "balanced"], "is a regression task"),
        (["--selection-metric", "accuracy"], "does not fit the regression task"),
    ],
)
def test_classification_options_on_a_regression_are_refused(
    tmp_path, rng, capsys, extra, match
):
    path = tmp_path / "reg.csv"
    X = rng.normal(size=(40, 2))
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": X.sum(1)}).to_csv(
        path, index=False
    )
    assert _compare(path, tmp_path / "out", *extra) == 2
    assert match in _one_line_error(capsys)


@pytest.fixture
def three_csv(tmp_path, rng):
    X = rng.normal(size=(60, 3))
    y = np.repeat(["a", "b", "c"], 20)
    X[:, 0] += 2.0 * (y == "b") + 4.0 * (y == "c")
    frame = pd.DataFrame(X, columns=list("xyz"))
    frame["label"] = y
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    return path


def test_binary_only_methods_on_multiclass_data_run_one_vs_rest(
    three_csv, tmp_path, capsys
):
    out = tmp_path / "out"
    assert _compare(three_csv, out, "--methods", "mean,geom", "--folds", "2") == 0
    printed = capsys.readouterr().out
    assert "(geom: binary-only, fitted one-vs-rest on the 3 classes)" in printed
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(res["method"]) == {"mean", "geom"}
    assert (res["error"] == "").all()


def test_binary_only_methods_declared_skip_are_left_out_with_a_reason(
    three_csv, tmp_path, capsys, monkeypatch
):
    from missingkernels.experiments import _baselines

    monkeypatch.setattr(_baselines.geom_svm, "multiclass", "skip")
    out = tmp_path / "out"
    assert _compare(three_csv, out, "--methods", "mean,geom", "--folds", "2") == 0
    printed = capsys.readouterr().out
    line = "(skipped geom: a binary-only classifier, and three has 3 classes)"
    assert line in printed.splitlines()
    assert "geom" not in printed.splitlines()[0]
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(res["method"]) == {"mean"}
    assert _compare(three_csv, tmp_path / "o2", "--methods", "geom") == 2
    assert "every method given is binary-only" in _one_line_error(capsys)


def test_methods_below_the_majority_class_are_flagged(tmp_path, rng, capsys):
    # Noise features, 75% of one class: balanced class weights trade accuracy
    # for the minority class and fall below always predicting "no".
    path = tmp_path / "skewed.csv"
    X = rng.normal(size=(80, 3))
    frame = pd.DataFrame(X, columns=list("abc"))
    frame["label"] = np.where(np.arange(80) < 60, "no", "yes")
    frame.to_csv(path, index=False)
    out = tmp_path / "out"
    assert _compare(path, out, "--class-weight", "balanced") == 0
    printed = capsys.readouterr().out
    footnote = (
        "† below the majority-class predictor: accuracy 0.750, "
        "balanced_accuracy 0.500 on skewed."
    )
    assert footnote in printed.splitlines()
    (row,) = [line for line in printed.splitlines() if line.startswith("| mean |")]
    assert row.split(" | ")[1].endswith("†")
    assert footnote in (out / "table.md").read_text()


@pytest.fixture
def rare_level_csv(tmp_path, rng):
    # Category codes; feature "b" has the level 7 in one row only: when that
    # row is a test row, its level was not seen when the density was fitted.
    X = rng.integers(0, 3, size=(48, 3)).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[5, 1] = 7.0
    frame = pd.DataFrame(X, columns=list("abc"))
    frame["label"] = np.where(np.nan_to_num(X[:, 0]) > 0, "yes", "no")
    path = tmp_path / "rare.csv"
    frame.to_csv(path, index=False)
    return path


def _compare_rare(path, out, *extra):
    return main(
        ["compare", "--csv", str(path), "--target", "label", "--quick",
         "--methods", "belanche_k1,mean", "--output-dir", str(out),
         "--no-progress", *extra]
    )  # fmt: skip


def test_a_level_seen_only_at_test_time_fails_with_the_remedy(
    rare_level_csv, tmp_path, capsys
):
    assert _compare_rare(rare_level_csv, tmp_path / "out") == 0
    out = capsys.readouterr().out
    assert "belanche_k1: ValueError: CategoricalDensity" in out
    assert "what to do: rerun with --handle-unknown missing" in out
    assert "or --handle-unknown ignore" in out


def test_handle_unknown_reaches_the_matching_kernels(rare_level_csv, tmp_path, capsys):
    out = tmp_path / "out"
    assert _compare_rare(rare_level_csv, out, "--handle-unknown", "ignore") == 0
    assert "failed in some cells" not in capsys.readouterr().out
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(res["method"]) == {"belanche_k1[handle_unknown=ignore]", "mean"}
    assert (res["error"] == "").all()


def test_handle_unknown_without_a_matching_kernel_is_refused(
    csv_path, tmp_path, capsys
):
    assert _compare(csv_path, tmp_path / "out", "--handle-unknown", "ignore") == 2
    assert "--handle-unknown ignore applies to the matching-kernel methods" in (
        _one_line_error(capsys)
    )
    assert _compare(csv_path, tmp_path / "out", "--handle-unknown", "missing") == 2
    assert "--handle-unknown applies to the matching-kernel methods" in (
        _one_line_error(capsys)
    )


@pytest.fixture
def mixed_csv(tmp_path, rng):
    """A table with a text column, a coded column (1/2) and missing values."""
    n = 60
    frame = pd.DataFrame(
        {
            "age": rng.normal(50.0, 10.0, n),
            "smoker": rng.choice(["yes", "no"], n).astype(object),
            "stage": rng.choice([1, 2], n).astype(float),
            "weight": rng.normal(70.0, 8.0, n),
        }
    )
    frame["target"] = np.where(
        (frame["age"] > 50) ^ (frame["smoker"] == "yes"), "ill", "well"
    )
    for col in ("age", "smoker", "stage"):
        frame.loc[rng.random(n) < 0.15, col] = np.nan
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    return path


def test_compare_on_a_mixed_csv_lists_every_method(mixed_csv, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["compare", "--csv", str(mixed_csv), "--nominal", "stage", "--quick",
            "--output-dir", str(out), "--no-progress"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    # The banner: the nominal columns, the natural missingness, the methods.
    assert "4 features (2 nominal)" in printed
    assert "nominal columns: smoker, stage" in printed
    assert "the data's own missingness" in printed and "nothing simulated" in printed
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    methods = {"zero", "mean", "knn", "mixed_rbf", "hgb"}
    assert set(res["method"]) == methods
    assert (res["error"] == "").all(), res["error"].unique()
    table = printed.split("balanced_accuracy (mean")[1]
    assert "| method | mixed accuracy | mixed balanced_accuracy |" in table
    for method in methods:
        assert f"| {method} |" in table


def test_nominal_columns_reach_the_methods_by_name(mixed_csv, tmp_path, capsys):
    # --drop leaves a column out; genrbf (no nominal support) is one-hot coded.
    out = tmp_path / "out"
    args = ["compare", "--csv", str(mixed_csv), "--nominal", "stage",
            "--drop", "weight", "--methods", "genrbf,hgb", "--quick",
            "--output-dir", str(out), "--no-progress"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "3 features (2 nominal)" in printed
    assert "genrbf see them one-hot coded" in printed
    assert "hgb take them as nominal" in printed


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--nominal", "nope"], "nominal columns ['nope'] are not features"),
        (["--drop", "nope"], "--drop names ['nope']"),
    ],
)
def test_unknown_nominal_or_dropped_columns_are_refused(
    mixed_csv, tmp_path, capsys, extra, match
):
    args = ["compare", "--csv", str(mixed_csv), "--quick", *extra,
            "--output-dir", str(tmp_path / "o")]  # fmt: skip
    assert main(args) == 2
    assert match in capsys.readouterr().err


def test_quick_searches_a_small_hgb_grid():
    """--quick: hgb searches 2 points (its full grid has 9: most of a quick
    run's time on a nominal table), under its own name."""
    from missingkernels.cli._compare import _with_quick_grids
    from missingkernels.experiments import resolve_method

    full = resolve_method("hgb")
    assert np.prod([len(v) for v in full.grid.values()]) == 9
    quick = _with_quick_grids(["mean", "hgb"], (1.0,), (0.1,))
    assert quick[0] == "mean"
    assert quick[1].name == "hgb"
    assert np.prod([len(v) for v in quick[1].grid.values()]) == 2
