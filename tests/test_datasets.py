"""missingkernels.datasets: the shared CSV format, data directory, user CSV."""

from __future__ import annotations

import json

import numpy as np
import pytest

from missingkernels.datasets import (
    DATA_DIR_ENV,
    get_data_dir,
    list_datasets,
    load_csv,
    load_dataset,
)

pytest.importorskip("pandas")


def test_every_shared_dataset_loads_with_the_manifest_shape(shared_data_dir):
    manifest = {
        m["name"]: m
        for m in json.loads((shared_data_dir / "manifest.json").read_text())
    }
    for name, task in list_datasets().items():
        if name.startswith("sklearn_"):
            continue
        ds = load_dataset(name, data_dir=shared_data_dir, download=False)
        m = manifest[name]
        assert ds.task == m["task"] == task
        n, d = m["rows"], m["features"]
        dropped = {"horse_colic": 1, "mammographic_masses": 1}.get(name, 0)
        added = 2 if name == "abalone" else 0  # sex (M/F/I) -> 3 columns
        assert ds.X.shape == (n, d - dropped + added), name
        if name not in ("horse_colic", "mammographic_masses"):
            assert int(np.isnan(ds.X).sum()) == m["missing_cells"], name


def test_targets_follow_the_documented_conventions(shared_data_dir):
    cleveland = load_dataset("cleveland_heart_disease", data_dir=shared_data_dir)
    assert set(np.unique(cleveland.y)) == {0, 1}
    assert int(cleveland.y.sum()) == 139  # README: num > 0 in 139 of 303
    horse = load_dataset("horse_colic", data_dir=shared_data_dir)
    assert "outcome" not in horse.feature_names
    assert load_dataset("abalone", data_dir=shared_data_dir).y.dtype == np.float64


def test_data_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    assert get_data_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match=DATA_DIR_ENV):
        load_dataset("australian", download=False)


def test_sklearn_datasets_need_no_files():
    ds = load_dataset("sklearn_breast_cancer")
    assert ds.X.shape == (569, 30) and ds.missing_rate == 0.0
    assert load_dataset("sklearn_diabetes").task == "regression"


def test_unknown_name_suggests():
    with pytest.raises(ValueError, match="Did you mean 'ionosphere'"):
        load_dataset("ionosphre")


def test_user_csv(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("a,b,label\n1,,x\n2,3.5,y\n,1,x\n")
    ds = load_csv(path, target="label")
    assert ds.task == "classification"
    np.testing.assert_array_equal(np.isnan(ds.X), [[0, 1], [0, 0], [1, 0]])
    with pytest.raises(ValueError, match="no target column"):
        load_csv(path)
    path.write_text("a,b,target\n1,q,1\n2,3,0\n")
    with pytest.raises(ValueError, match="not numeric"):
        load_csv(path)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_semicolon_or_tab_separated_file_is_read_with_its_separator(tmp_path, sep):
    path = tmp_path / "t.csv"
    rows = [["a", "b", "target"], ["1.5", "x", "0"], ["", "y", "1"], ["2", "x", "1"]]
    path.write_text("\n".join(sep.join(r) for r in rows) + "\n")
    ds = load_csv(path)
    assert ds.feature_names == ["a", "b"]
    np.testing.assert_array_equal(ds.y, [0, 1, 1])
    assert np.isnan(ds.X[1, 0]) and ds.X[0, 0] == 1.5
