"""Issue 38's CLI friction: the user's column names and category labels in
the messages of a run, and one vocabulary for ``handle_unknown``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from missingkernels.cli import main

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")


@pytest.fixture
def unseen_label_csv(tmp_path, rng):
    """A text column and a coded column (declared nominal), each with a level
    in one row only: in the fold that tests that row, training never saw it."""
    n = 48
    frame = pd.DataFrame(
        {
            "age": rng.normal(50.0, 10.0, n),
            "colour": rng.choice(["red", "white"], n).astype(object),
            "stage": rng.choice([1.0, 2.0], n),
        }
    )
    frame.loc[3, "colour"] = "blue"
    frame.loc[7, "stage"] = 3.0
    frame.loc[rng.random(n) < 0.1, "age"] = np.nan
    frame["label"] = np.where((frame["age"] > 50) ^ (frame["stage"] > 1), "a", "b")
    path = tmp_path / "unseen.csv"
    frame.to_csv(path, index=False)
    return path


def test_run_warnings_name_the_users_columns_and_labels(
    unseen_label_csv, tmp_path, capsys
):
    # Before: "MixedRBF...: column 1 (0-based) holds value(s) not seen in the
    # training rows ([2.0]; seen: [0.0, 1.0])" (the runner's float codes).
    args = ["compare", "--csv", str(unseen_label_csv), "--target", "label",
            "--nominal", "stage", "--methods", "mixed_rbf", "--quick",
            "--output-dir", str(tmp_path / "out"), "--no-progress"]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "UnknownCategoryWarning" in err, err
    assert "feature 'colour' holds value(s) not seen" in err, err
    assert "(['blue']; seen: ['red', 'white'])" in err, err
    assert "feature 'stage' holds value(s) not seen" in err, err
    assert "([3]; seen: [1, 2])" in err, err
    assert "(0-based)" not in err and "2.0" not in err, err


@pytest.fixture
def rare_code_csv(tmp_path, rng):
    X = rng.integers(0, 3, size=(48, 3)).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[5, 1] = 7.0
    frame = pd.DataFrame(X, columns=["fever", "cough", "rash"])
    frame["label"] = np.where(np.nan_to_num(X[:, 0]) > 0, "yes", "no")
    path = tmp_path / "rare.csv"
    frame.to_csv(path, index=False)
    return path


def test_run_errors_name_the_users_column(rare_code_csv, tmp_path, capsys):
    # Before: "CategoricalDensity: column 1 (0-based) has the value 7.0".
    args = ["compare", "--csv", str(rare_code_csv), "--target", "label",
            "--methods", "belanche_k1", "--quick", "--output-dir",
            str(tmp_path / "out"), "--no-progress"]  # fmt: skip
    main(args)
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "feature 'cough' has the value 7.0, not seen" in text, text
    assert "(0-based)" not in text


def test_the_estimator_methods_name_the_users_columns(tmp_path, rng, capsys):
    # geom and socp (fitted behind a scaler): "DropSparseFeatures: dropped
    # column 3 (0-based)", "GaussianEMDensity: ... in column 3 (0-based)".
    X = rng.normal(size=(60, 3))
    frame = pd.DataFrame(X, columns=["alpha", "beta", "gamma"])
    frame["rare"] = np.nan
    frame.loc[[4, 9, 30], "rare"] = 1.0
    frame.loc[rng.random(60) < 0.2, "beta"] = np.nan
    frame["label"] = np.where(X[:, 0] > 0, "y", "n")
    path = tmp_path / "sparse.csv"
    frame.to_csv(path, index=False)
    args = ["compare", "--csv", str(path), "--target", "label", "--methods",
            "geom,socp", "--quick", "--output-dir", str(tmp_path / "out"),
            "--no-progress"]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "dropped feature 'rare'" in err, err
    assert "(0-based)" not in err, err


def test_load_csv_keeps_the_labels_of_the_codes(unseen_label_csv):
    from missingkernels.datasets import load_csv

    ds = load_csv(unseen_label_csv, target="label", nominal=["stage"])
    assert ds.categories == {
        "colour": {0.0: "blue", 1.0: "red", 2.0: "white"},
        "stage": {1.0: 1, 2.0: 2, 3.0: 3},
    }


# -- one vocabulary for handle_unknown ----------------------------------------


def test_the_categorical_density_takes_missing_as_the_estimators_do():
    # "missing" means one thing everywhere: the unseen value is a missing
    # entry (here as in MissingKernelSVC); "ignore" keeps it as a value that
    # matches no training value (scikit-learn's OneHotEncoder's meaning).
    from missingkernels import UnknownCategoryWarning, get_kernel
    from missingkernels.densities import CategoricalDensity

    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(40, 3)).astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    new = np.array([[7.0, 1.0, 2.0], [0.0, np.nan, 1.0]])
    as_nan = new.copy()
    as_nan[0, 0] = np.nan
    density = CategoricalDensity(handle_unknown="missing").fit(X)
    with pytest.warns(UnknownCategoryWarning, match=r"column 0 \(0-based\).*\[7\.0\]"):
        cond = density.conditionals(new)
    assert cond.missing[0, 0] and np.isnan(cond.values[0, 0])
    np.testing.assert_array_equal(cond.missing, np.isnan(as_nan))
    kernels = {}
    for policy in ("missing", "ignore"):
        kernel = get_kernel(
            "belanche_k1", density=CategoricalDensity(handle_unknown=policy)
        ).fit(X)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnknownCategoryWarning)
            kernels[policy] = kernel(new, X)
    reference = get_kernel("belanche_k1").fit(X)(as_nan, X)
    np.testing.assert_allclose(kernels["missing"], reference)
    assert not np.allclose(kernels["ignore"][0], reference[0])


def _compare_codes(path, out, methods, *extra):
    return main(
        ["compare", "--csv", str(path), "--target", "label", "--quick",
         "--methods", methods, "--output-dir", str(out), "--no-progress",
         *extra]
    )  # fmt: skip


def test_handle_unknown_missing_reaches_every_method_that_takes_it(
    rare_code_csv, unseen_label_csv, tmp_path, capsys
):
    out = tmp_path / "codes"
    assert _compare_codes(rare_code_csv, out, "belanche_k1", "--handle-unknown",
                          "missing") == 0  # fmt: skip
    printed = capsys.readouterr()
    assert "failed in some cells" not in printed.out
    assert "feature 'cough' holds value(s) not seen in the training rows ([7.0]" in (
        printed.err
    )
    res = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(res["method"]) == {"belanche_k1[handle_unknown=missing]"}
    # The mixed kernel's own default is "missing": "error" makes it strict.
    out = tmp_path / "mixed"
    assert _compare_codes(unseen_label_csv, out, "mixed_rbf,mean",
                          "--handle-unknown", "error") == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "mixed_rbf[handle_unknown=error]: ValueError: MixedRBFKernel: feature " in (
        printed
    )
    assert "what to do: rerun with --handle-unknown missing" in printed


def test_handle_unknown_ignore_keeps_its_meaning_where_it_has_one(
    unseen_label_csv, tmp_path, capsys
):
    # The old spelling keeps working for the matching kernels (see
    # test_cli_compare.py); a kernel that cannot ignore a level says so.
    out = tmp_path / "mixed"
    assert _compare_codes(unseen_label_csv, out, "mixed_rbf", "--handle-unknown",
                          "ignore") == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "--handle-unknown ignore applies to the matching-kernel methods" in err
    assert "mixed_rbf" in err and "--handle-unknown missing" in err


def test_one_hot_columns_are_named_by_column_and_label():
    # genrbf and the other kernels without nominal columns see them one-hot
    # coded: their messages name e.g. "colour=red".
    from missingkernels.experiments import MixedTableImputer
    from missingkernels.experiments._cv import _Columns

    X = np.array([[1.0, 0.0, 5.0], [2.0, 2.0, np.nan], [np.nan, 1.0, 7.0]] * 3)
    X[:, 2] = np.nan  # observed in no row: dropped first
    with pytest.warns(UserWarning, match="dropped column 2"):
        prep = MixedTableImputer([1]).fit(X)
    columns = _Columns(("age", "colour", "gone"), {1: ("blue", "red", "white")})
    named = columns.one_hot(prep)
    assert named is not None
    assert named.names == ("age", "colour=blue", "colour=red", "colour=white")
    assert named.frame(prep.transform(X)).shape == (9, 4)
