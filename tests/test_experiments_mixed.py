"""The comparison runner on mixed tables: nominal columns one-hot coded by the
baselines, never standardised, taken natively by the mixed kernels and hgb.

Every expectation is computed here independently (pandas one-hot coding,
numpy standardisation, scikit-learn's own imputers and boosting).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.experimental import enable_iterative_imputer  # noqa: F401
from sklearn.impute import IterativeImputer, KNNImputer
from sklearn.metrics.pairwise import rbf_kernel

import missingkernels
from missingkernels.experiments import (
    ComparisonData,
    MixedTableImputer,
    resolve_method,
    run_comparison,
)
from missingkernels.experiments._cv import (
    _make_estimator,
    _prepare_kernel,
    _prepare_pipeline,
)

pd = pytest.importorskip("pandas")

NOMINAL = [1, 3]


@pytest.fixture
def table(rng):
    """60 rows: numeric columns 0 and 2 (different scales), nominal columns
    1 (codes 3, 7, 9) and 3 (codes 0, 1); about 15% missing everywhere."""
    n = 60
    X = np.column_stack(
        [
            rng.normal(50.0, 10.0, n),
            rng.choice([3.0, 7.0, 9.0], n),
            rng.normal(-2.0, 0.1, n),
            rng.choice([0.0, 1.0], n),
        ]
    )
    y = ((X[:, 0] > 50) ^ (X[:, 1] == 7)).astype(int)
    X[rng.random(X.shape) < 0.15] = np.nan
    return X, y


def _reference(X_train, X_new, *, mode: bool):
    """Standardised numeric columns (observed training mean / std), then the
    nominal columns one-hot coded by pandas over the training categories;
    missing: mean (0) and the training mode if ``mode``, else NaN."""
    num = [j for j in range(X_train.shape[1]) if j not in NOMINAL]
    mu = np.nanmean(X_train[:, num], axis=0)
    sd = np.nanstd(X_train[:, num], axis=0)
    out = [(X_new[:, num] - mu) / sd]
    if mode:
        out[0] = np.nan_to_num(out[0], nan=0.0)
    for j in NOMINAL:
        train = pd.Series(X_train[:, j]).dropna()
        cats = sorted(train.unique())
        col = pd.Series(X_new[:, j])
        if mode:
            col = col.fillna(train.mode().min())
        hot = pd.get_dummies(pd.Categorical(col, categories=cats), dtype=float)
        hot = hot.to_numpy().copy()
        if not mode:
            hot[col.isna().to_numpy()] = np.nan
        out.append(hot)
    return np.hstack(out)


def test_mean_baseline_imputes_mode_and_one_hot_codes_the_nominal_columns(table):
    X, y = table
    pipe = missingkernels.get_baseline("mean", nominal_features=NOMINAL)
    pipe.set_params(svm__C=2.0, svm__gamma=0.3).fit(X[:40], y[:40])
    expected = _reference(X[:40], X[40:], mode=True)
    np.testing.assert_allclose(pipe[:-1].transform(X[40:]), expected, atol=1e-12)
    # The SVM sees exactly that table.
    ref = missingkernels.get_baseline("mean")[-1].set_params(C=2.0, gamma=0.3)
    ref.fit(_reference(X[:40], X[:40], mode=True), y[:40])
    np.testing.assert_array_equal(pipe.predict(X[40:]), ref.predict(expected))


def test_indicators_are_one_per_column_with_a_missing_training_entry(table):
    X, y = table
    pipe = missingkernels.get_baseline("mean_indicator", nominal_features=NOMINAL)
    pipe.fit(X[:40], y[:40])
    out = pipe[:-1].transform(X[40:])
    width = _reference(X[:40], X[40:], mode=True).shape[1]
    flagged = np.flatnonzero(np.isnan(X[:40]).any(axis=0))
    np.testing.assert_array_equal(out[:, width:], np.isnan(X[40:, flagged]))


@pytest.mark.parametrize(
    ("name", "imputer"),
    [
        ("knn", KNNImputer(n_neighbors=5)),
        ("iterative", IterativeImputer(sample_posterior=True, max_iter=10)),
    ],
)
def test_knn_and_iterative_impute_the_joint_one_hot_table(table, name, imputer):
    X, y = table
    pipe = missingkernels.get_baseline(
        name, nominal_features=NOMINAL, **({"random_state": 3} if name != "knn" else {})
    ).fit(X[:40], y[:40])
    joint = _reference(X[:40], X[:40], mode=False)
    assert np.isnan(joint).any()
    if name == "iterative":
        imputer.set_params(random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IterativeImputer convergence
        ref = imputer.fit(joint)
        got = pipe[:-1].transform(X[40:])
        want = ref.transform(_reference(X[:40], X[40:], mode=False))
    if name == "knn":
        np.testing.assert_allclose(got, want, atol=1e-12)
    else:  # a posterior draw: the observed entries and the shape agree
        observed = ~np.isnan(_reference(X[:40], X[40:], mode=False))
        np.testing.assert_allclose(got[observed], want[observed], atol=1e-12)
        assert got.shape == want.shape and not np.isnan(got).any()


def test_without_nominal_columns_the_baselines_are_unchanged(table):
    X, y = table
    X = X[:, [0, 2]]
    for name in ("mean", "knn", "mean_indicator"):
        a = missingkernels.get_baseline(name).fit(X[:40], y[:40])
        b = missingkernels.get_baseline(name, nominal_features=[]).fit(X[:40], y[:40])
        assert [s for s, _ in a.steps] == [s for s, _ in b.steps]
        np.testing.assert_array_equal(a.predict(X[40:]), b.predict(X[40:]))


def test_a_category_unseen_in_training_is_a_missing_entry(table):
    X, _ = table
    enc = MixedTableImputer(NOMINAL, nominal_fill="most_frequent").fit(X[:40])
    new = np.array([[50.0, 5.0, -2.0, 1.0], [50.0, np.nan, -2.0, 1.0]])
    out = enc.transform(new)  # 5 never occurs in column 1; NaN is missing
    np.testing.assert_array_equal(out[0], out[1])
    mode = pd.Series(X[:40, 1]).dropna().mode().min()
    cats = np.unique(X[:40, 1][~np.isnan(X[:40, 1])])
    np.testing.assert_array_equal(out[:, 2:5], np.tile(cats == mode, (2, 1)))


def test_mixed_kernel_gets_the_codes_unstandardised(table):
    X, _ = table
    spec = resolve_method("mixed_rbf", C_grid=[1.0], gamma_grid=[0.2])
    assert spec.nominal == "native"
    mask = np.isin(np.arange(4), NOMINAL)
    prep = _prepare_kernel(spec, "classification", X[:40], seed=0, nominal=mask)
    K_tr, K_te = prep.gram(X[40:], {"gamma": 0.2, "nominal_weight": 0.7})
    # Reference: numeric columns standardised here, nominal codes as given.
    num = ~mask
    mu = np.nanmean(X[:40, num], axis=0)
    sd = np.nanstd(X[:40, num], axis=0)
    tr, te = X[:40].copy(), X[40:].copy()
    tr[:, num] = (tr[:, num] - mu) / sd
    te[:, num] = (te[:, num] - mu) / sd
    kernel = missingkernels.get_kernel(
        "mixed_rbf", gamma=0.2, nominal_weight=0.7, nominal_features=NOMINAL
    ).fit(tr)
    np.testing.assert_allclose(K_tr, kernel(tr), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(K_te, kernel(te, tr), rtol=1e-10, atol=1e-12)
    # Taken as numbers (no nominal_features) it is another kernel.
    numeric = missingkernels.get_kernel("mixed_rbf", gamma=0.2, nominal_features=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not np.allclose(K_tr, numeric.fit(tr)(tr), atol=1e-3)


def test_the_numeric_scaler_leaves_the_codes_as_given(table):
    from missingkernels.experiments._cv import _NumericScaler

    X, _ = table
    mask = np.isin(np.arange(4), NOMINAL)
    out = _NumericScaler(mask).fit(X[:40]).transform(X[40:])
    np.testing.assert_array_equal(out[:, mask], X[40:, mask])
    num = ~mask
    want = (X[40:, num] - np.nanmean(X[:40, num], axis=0)) / np.nanstd(
        X[:40, num], axis=0
    )
    np.testing.assert_allclose(out[:, num], want, atol=1e-12)


def test_genrbf_sees_the_one_hot_codes(table):
    X, _ = table
    spec = resolve_method("genrbf", C_grid=[1.0], gamma_grid=[0.2])
    assert spec.nominal == "one_hot"
    mask = np.isin(np.arange(4), NOMINAL)
    prep = _prepare_kernel(spec, "classification", X[:40], seed=0, nominal=mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the one-hot columns' singular covariance
        K_tr, K_te = prep.gram(X[40:], 0.2)
        tr = _reference(X[:40], X[:40], mode=False)
        te = _reference(X[:40], X[40:], mode=False)
        kernel = missingkernels.get_kernel("genrbf", gamma=0.2).fit(tr)
        np.testing.assert_allclose(K_tr, kernel(tr), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(K_te, kernel(te, tr), rtol=1e-8, atol=1e-10)


def test_pipeline_gram_is_the_rbf_of_the_prepared_rows(table):
    X, _ = table
    spec = resolve_method("mean", C_grid=[1.0], gamma_grid=[0.2])
    mask = np.isin(np.arange(4), NOMINAL)
    K_tr, K_te = _prepare_pipeline(
        spec, "classification", X[:40], seed=0, nominal=mask
    ).gram(X[40:], 0.2)
    tr = _reference(X[:40], X[:40], mode=True)
    te = _reference(X[:40], X[40:], mode=True)
    np.testing.assert_allclose(K_tr, rbf_kernel(tr, gamma=0.2), atol=1e-12)
    np.testing.assert_allclose(K_te, rbf_kernel(te, tr, gamma=0.2), atol=1e-12)


def test_hgb_gets_the_nominal_columns_as_categorical_features(table):
    X, y = table
    spec = resolve_method("hgb")
    assert spec.nominal == "native" and not spec.scale
    mask = np.isin(np.arange(4), NOMINAL)
    codes = X.copy()  # the runner's relabelling: codes 0 .. k-1
    for j in NOMINAL:
        seen = ~np.isnan(codes[:, j])
        codes[seen, j] = np.unique(codes[seen, j], return_inverse=True)[1]
    params = {"learning_rate": 0.3, "max_leaf_nodes": 15}
    model = _make_estimator(spec, "classification", 7, codes[:40], params, nominal=mask)
    assert list(model.categorical_features) == NOMINAL
    model.fit(codes[:40], y[:40])
    ref = HistGradientBoostingClassifier(
        categorical_features=NOMINAL, random_state=7, **params
    ).fit(codes[:40], y[:40])
    np.testing.assert_array_equal(model.predict(codes[40:]), ref.predict(codes[40:]))
    # Unlike the same booster with the codes as numbers.
    numeric = HistGradientBoostingClassifier(random_state=7, **params)
    assert numeric.fit(codes[:40], y[:40]).get_params()["categorical_features"] in (
        None,
        "from_dtype",
    )


def test_run_comparison_on_a_mixed_table(table):
    X, y = table
    spec = resolve_method("mixed_rbf", C_grid=[1.0, 4.0], gamma_grid=[0.1])
    spec.grid["nominal_weight"] = [0.25, 1.0]
    methods = ["mean", "mean_indicator", "knn", "hgb", "genrbf", spec]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = run_comparison(
            {"mixed": ComparisonData(X, y, "classification", NOMINAL)},
            methods,
            mechanisms=["none"],
            n_draws=1,
            outer_folds=2,
            inner_folds=2,
            C_grid=[1.0, 4.0],
            gamma_grid=[0.1],
        )
    assert (res["error"] == "").all(), res["error"].unique()
    assert set(res["method"]) == {"mean", "mean_indicator", "knn", "hgb", "genrbf",
                                  "mixed_rbf"}  # fmt: skip
    chosen = res[res["method"] == "mixed_rbf"]["params"].str.extract(
        r'"nominal_weight": ([0-9.]+)'
    )[0]
    assert set(chosen.astype(float)) <= {0.25, 1.0}


def test_bad_nominal_columns_are_refused(table):
    X, y = table
    with pytest.raises(ValueError, match=r"datasets\['t'\]\.nominal"):
        run_comparison(
            {"t": ComparisonData(X, y, "classification", [4])},
            ["mean"],
            mechanisms=["none"],
            n_draws=1,
            outer_folds=2,
            inner_folds=2,
        )


def test_load_csv_codes_text_columns_and_named_columns_as_nominal(tmp_path):
    from missingkernels.datasets import load_csv

    path = tmp_path / "t.csv"
    path.write_text("x,colour,code,target\n1.5,red,3,0\n,blue,,1\n2.5,,4,1\n")
    ds = load_csv(path, nominal=["code"])
    assert ds.nominal == ["colour", "code"] and ds.nominal_indices == [1, 2]
    np.testing.assert_array_equal(ds.X[:, 1], [1.0, 0.0, np.nan])  # blue < red
    np.testing.assert_array_equal(ds.X[:, 2], [3.0, np.nan, 4.0])
    with pytest.raises(ValueError, match="not features"):
        load_csv(path, nominal=["nope"])


def test_catalogue_nominal_columns_are_features(shared_data_dir):
    from missingkernels.datasets import load_dataset

    for name in ("hepatitis", "horse_colic", "cleveland_heart_disease",
                 "mammographic_masses", "house_votes_84", "australian"):  # fmt: skip
        ds = load_dataset(name, data_dir=shared_data_dir)
        assert ds.nominal and set(ds.nominal) <= set(ds.feature_names)
        codes = ds.X[:, ds.nominal_indices]
        observed = codes[~np.isnan(codes)]
        assert np.array_equal(observed, np.round(observed))  # integer codes


def test_mixed_table_imputer_passes_the_scikit_learn_checks():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(MixedTableImputer(), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []
