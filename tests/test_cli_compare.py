"""The ``missingkernels compare`` command."""

from __future__ import annotations

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
    assert "| method | mine mar 10% | mine mar 30% |" in printed
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
