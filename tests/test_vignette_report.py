"""The vignettes' shared report writer (vignettes/_common.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from missingkernels.experiments import ComparisonData

VIGNETTES = Path(__file__).resolve().parent.parent / "vignettes"


@pytest.fixture
def common(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(VIGNETTES))
    sys.modules.pop("_common", None)
    import _common

    monkeypatch.setattr(_common, "RESULTS", tmp_path)
    yield _common
    sys.modules.pop("_common", None)


def _config(quick):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    X[rng.random(X.shape) < 0.15] = np.nan
    return dict(
        datasets={"toy": ComparisonData(X, y, "classification")},
        metric="accuracy",
        methods=["zero", "mean", "genrbf"],
        mechanisms=["none"],
        n_draws=2,
        outer_folds=2,
        inner_folds=2,
        C_grid=[1.0],
        gamma_grid=[0.5],
    )


def test_report_counts_cells_and_their_time_once(common, tmp_path):
    assert common.main("toy", "Toy", _config, argv=["--quick"]) == 0
    out = tmp_path / "toy" / "quick"
    results = pd.read_csv(out / "results.csv")
    # Classification writes two metric rows per cell, each with the cell's time.
    assert set(results["metric"]) == {"accuracy", "balanced_accuracy"}
    cells = results[results["metric"] == "accuracy"]
    assert len(cells) == 3 * 2 * 2
    assert "Status: **complete**" in (out / "README.md").read_text()

    # Each cell took 30 s (say): the report sums 12 cells, not 24 rows.
    results["cell_seconds"] = 30.0
    results.to_csv(out / "results.csv", index=False)
    assert common.main("toy", "Toy", _config, argv=["--quick", "--report-only"]) == 0
    report = (out / "README.md").read_text()
    assert "Compute time: 6.0 min summed over cells" in report
    assert "Status: **complete**" in report
