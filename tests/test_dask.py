"""Out of core on dask: EM fits from per-block sums equal the in-memory fits."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from missingkernels.densities import (
    GaussianEMDensity,
    GaussianMixtureDensity,
    SingularCovarianceWarning,
)

da = pytest.importorskip("dask.array")


def _data(seed=0, n=600, d=4, rate=0.3):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    # Far from zero and of different scales: the standardisation matters.
    X = rng.normal(size=(n, d)) @ A * np.arange(1, d + 1) + 10.0 * np.arange(d)
    X[rng.random(X.shape) < rate] = np.nan
    X[[3, 17]] = np.nan  # rows with nothing observed are left out of the fit
    return X


def _assert_same_fit(a, b, names, atol=1e-8):
    for name in names:
        expected, actual = getattr(a, name), getattr(b, name)
        np.testing.assert_allclose(actual, expected, rtol=0, atol=atol, err_msg=name)
    assert a.n_iter_ == b.n_iter_
    assert a.converged_ == b.converged_
    assert a.ridge_ == b.ridge_
    assert a.n_features_in_ == b.n_features_in_


GAUSSIAN = ("mean_", "covariance_", "loglik_trace_", "n_patterns_")
MIXTURE = ("weights_", "means_", "covariances_", "loglik_trace_")


@pytest.mark.parametrize(
    "chunks",
    [(100, 4), (37, 2), (600, 4), (5, 4)],
    ids=["rows", "rows-and-columns", "one-block", "tiny-blocks"],
)
def test_gaussian_em_on_dask_equals_in_memory(chunks):
    X = _data()
    X[:5] = np.nan  # a block of the tiny chunking has no observed entry
    expected = GaussianEMDensity().fit(X)
    fitted = GaussianEMDensity().fit(da.from_array(X, chunks=chunks))
    _assert_same_fit(expected, fitted, GAUSSIAN)
    # The fit is not trivially at its start.
    assert expected.n_iter_ > 5 and expected.n_patterns_ > 5


def test_gaussian_em_on_dask_with_ridge_and_float32_blocks():
    X = _data(seed=1).astype(np.float32)
    expected = GaussianEMDensity(ridge=1e-2).fit(X)
    fitted = GaussianEMDensity(ridge=1e-2).fit(da.from_array(X, chunks=(128, 4)))
    _assert_same_fit(expected, fitted, GAUSSIAN)


def test_constant_feature_warns_and_fits_the_same_on_dask():
    X = _data(seed=2)
    X[~np.isnan(X[:, 1]), 1] = 5.0
    with pytest.warns(SingularCovarianceWarning, match="column 1") as record:
        fitted = GaussianEMDensity(prior_rows=0).fit(da.from_array(X, chunks=(100, 4)))
    # Reported at the caller's line, as in memory.
    assert record[0].filename == __file__
    with pytest.warns(SingularCovarianceWarning):
        expected = GaussianEMDensity(prior_rows=0).fit(X)
    _assert_same_fit(expected, fitted, GAUSSIAN)


def test_mixture_on_dask_equals_in_memory():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-3, 1, (300, 3)), rng.normal(3, 1.5, (300, 3))])
    X[rng.random(X.shape) < 0.25] = np.nan
    params = {"n_components": 2, "n_init": 2, "random_state": 0}
    expected = GaussianMixtureDensity(**params).fit(X)
    fitted = GaussianMixtureDensity(**params).fit(da.from_array(X, chunks=(90, 3)))
    _assert_same_fit(expected, fitted, MIXTURE)
    assert expected.n_iter_ > 3


def test_mixture_on_dask_starts_from_a_sample_of_many_rows(monkeypatch):
    from missingkernels.densities import _mixture

    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(-4, 1, (400, 2)), rng.normal(4, 1, (400, 2))])
    X[rng.random(X.shape) < 0.2] = np.nan
    monkeypatch.setattr(_mixture, "_START_ROWS", 100)
    dX = da.from_array(X, chunks=(150, 2))
    first = GaussianMixtureDensity(n_components=2, random_state=0).fit(dX)
    again = GaussianMixtureDensity(n_components=2, random_state=0).fit(dX)
    np.testing.assert_array_equal(first.means_, again.means_)
    np.testing.assert_allclose(np.sort(first.means_[:, 0]), [-4, 4], atol=0.3)
    assert np.all(np.diff(first.loglik_trace_) >= -1e-8)


def test_dask_dataframe_fits_with_its_column_names():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X = _data(seed=5)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    fitted = GaussianEMDensity().fit(dd.from_pandas(frame, npartitions=3))
    expected = GaussianEMDensity().fit(frame)
    _assert_same_fit(expected, fitted, GAUSSIAN)
    assert list(fitted.feature_names_in_) == ["a", "b", "c", "d"]
    # New rows are checked against the names, as after an in-memory fit.
    fitted.conditionals(frame.iloc[:3])


def _in_memory_error(density, X):
    with pytest.raises(ValueError) as info:
        density.fit(X)
    return str(info.value)


@pytest.mark.parametrize("case", ["empty-column", "infinity", "one-row", "huge"])
def test_dask_input_is_refused_as_in_memory(case):
    X = _data(seed=6, n=50)
    if case == "empty-column":
        X[:, 2] = np.nan
    elif case == "infinity":
        X[7, 1] = np.inf
    elif case == "one-row":
        X = X[:1]
    else:
        X[:, 0] *= 1e150
    message = _in_memory_error(GaussianEMDensity(), X)
    with pytest.raises(ValueError) as info:
        GaussianEMDensity().fit(da.from_array(X, chunks=(20, 4)))
    assert str(info.value) == message


def test_non_numeric_dask_array_is_refused():
    X = da.from_array(np.array([["a", "b"], ["c", "d"]], dtype=object), chunks=1)
    with pytest.raises(ValueError, match=r"reads numeric columns only.*one-hot"):
        GaussianEMDensity().fit(X)


def test_nominal_dask_columns_are_read_partition_by_partition():
    """An estimator that takes nominal columns in memory takes a dask
    DataFrame with such columns in transform / predict: each partition goes
    to its in-memory method as a pandas frame (categories encoded as
    fitted), giving the in-memory result; columns that differ from the
    fitted ones are refused before any partition runs."""
    import pandas as pd

    from missingkernels import ExpectedKernelFeatures, MissingKernelSVC
    from missingkernels.dask import expected_features

    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "x": rng.normal(size=60),
            "colour": rng.choice(["red", "blue", None], 60),
            "size": pd.Categorical(rng.choice(["S", "M", "L"], 60)),
        }
    )
    frame.loc[::7, "x"] = np.nan
    y = np.where(np.nan_to_num(frame["x"]) + (frame["colour"] == "red") > 0.5, 1, 0)
    est = ExpectedKernelFeatures(n_components=20, random_state=0).fit(frame)
    X = dd.from_pandas(frame, npartitions=3)
    for Z in (est.transform(X), expected_features(est, X)):
        assert hasattr(Z, "dask")
        np.testing.assert_allclose(Z.compute(), est.transform(frame), atol=1e-12)
    svc = MissingKernelSVC(random_state=0).fit(frame, y)
    pred = svc.predict(X)
    assert hasattr(pred, "dask")
    np.testing.assert_array_equal(pred.compute(), svc.predict(frame))
    np.testing.assert_allclose(
        svc.decision_function(X).compute(), svc.decision_function(frame), atol=1e-12
    )
    renamed = dd.from_pandas(frame.rename(columns={"size": "height"}), npartitions=3)
    with pytest.raises(ValueError, match="feature names"):
        est.transform(renamed)


def _mixed_frame(n=900, seed=0):
    """Numeric, text, categorical and boolean columns with missing entries;
    the classes depend on both kinds."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "x": rng.normal(size=n) * 3.0 + 1.0,
        "z": rng.normal(size=n),
        "colour": rng.choice(["red", "blue", "green"], n).astype(object),
        "size": pd.Categorical(rng.choice(["S", "M", "L"], n)),
        "flag": rng.random(n) < 0.3,
    })  # fmt: skip
    frame.loc[rng.random(n) < 0.3, "x"] = np.nan
    frame.loc[rng.random(n) < 0.2, "colour"] = None
    frame.loc[rng.random(n) < 0.1, "size"] = None
    signal = np.nan_to_num(frame["x"] - 1.0) / 3.0 + 1.5 * (frame["colour"] == "red")
    y = (signal + 0.5 * frame["z"] + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    return frame, np.asarray(y)


def test_the_coding_of_nominal_columns_is_fitted_out_of_core():
    """A dask DataFrame's (or object array's) nominal columns get the coding
    fitted in memory on the same rows (kinds, categories and codes), from
    one pass that gathers their distinct values, also when the partitions
    hold different categories; a column mixing numbers and text is refused
    as in memory."""
    import dask

    from missingkernels import MissingKernelSVC
    from missingkernels._dask_blocks import as_row_blocks
    from missingkernels._table_encoding import encode_table

    dd = pytest.importorskip("dask.dataframe")
    frame, _ = _mixed_frame(n=300)
    # categoricals of unknown categories in dask: each partition lists those
    # it holds, and the first holds no "L"
    frame["size"] = frame["size"].astype(object)
    frame.loc[:99, "size"] = frame.loc[:99, "size"].replace("L", "M")
    X = dd.from_pandas(frame, npartitions=3, sort=False)
    X = X.assign(size=X["size"].astype("category"))
    assert X.npartitions == 3 and not X["size"].cat.known
    whole = frame.assign(size=frame["size"].astype("category"))
    memory, blocks = MissingKernelSVC(), MissingKernelSVC()
    coded = encode_table(memory, whole, reset=True)
    rows = as_row_blocks(blocks, X, reset=True, purpose="test")
    np.testing.assert_array_equal(blocks.is_nominal_, memory.is_nominal_)
    for a, b in zip(
        blocks.nominal_categories_, memory.nominal_categories_, strict=True
    ):
        assert (a is None and b is None) or list(a) == list(b)
    np.testing.assert_array_equal(rows.compute(), np.asarray(coded))
    assert list(blocks.feature_names_in_) == list(frame.columns)
    # an object dask array: every column nominal, as in memory
    text = np.asarray(frame[["colour"]].fillna("none"), dtype=object)
    on_dask = MissingKernelSVC()
    as_row_blocks(on_dask, da.from_array(text, chunks=(70, 1)), reset=True, purpose="t")
    in_memory = MissingKernelSVC()
    encode_table(in_memory, text, reset=True)
    assert list(on_dask.nominal_categories_[0]) == list(
        in_memory.nominal_categories_[0]
    )
    mixed = frame.assign(colour=frame["colour"].where(frame.index % 50 != 7, 3.5))
    with (
        dask.config.set({"dataframe.convert-string": False}),  # (keep objects)
        pytest.raises(ValueError, match="mixes numbers and strings"),
    ):
        as_row_blocks(
            MissingKernelSVC(), dd.from_pandas(mixed, npartitions=3), reset=True,
            purpose="t",
        )  # fmt: skip


@pytest.mark.numerics
def test_latent_class_density_on_a_dask_frame_equals_in_memory():
    """LatentClassDensity on the blocks of a frame with nominal columns:
    the EM's iterates are the in-memory fit's (every row in the k-means
    start, at most _START_ROWS) up to the order of the additions, ~1e-16
    relative per pass. A slow EM (two overlapping classes) and SQUAREM's
    step lengths can carry that to ~1e-9 by the stopping rule at tol=1e-5;
    at tol=1e-10 both runs end within ~1e-10 / (1 - rate) of the same
    optimum: 1e-7 holds for rates up to 0.999. The log-likelihood is
    stationary there, so it differs to second order: at most n p eps^2 c
    (n = 600 rows, p ~ 30 parameters, eps = 1e-7, c <= 1e2 the curvature
    per row on this table), 2e-8; the runs may stop tens of iterations
    apart (220 and 211 under Haswell, 295 and 211 under Nehalem: 3.5e-9)."""
    from missingkernels.densities import LatentClassDensity

    dd = pytest.importorskip("dask.dataframe")
    frame, _ = _mixed_frame(n=600, seed=2)
    for K in (1, 2):
        memory = LatentClassDensity(n_components=K, tol=1e-10).fit(frame)
        blocks = LatentClassDensity(n_components=K, tol=1e-10).fit(
            dd.from_pandas(frame, npartitions=4)
        )
        assert memory.converged_ and blocks.converged_
        assert blocks.loglik_ == pytest.approx(memory.loglik_, rel=0, abs=2e-8)
        fitted = ["weights_", "means_", "covariances_", "category_probabilities_"]
        for name in fitted:
            for a, b in zip(getattr(blocks, name), getattr(memory, name), strict=True):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-7, err_msg=name)


@pytest.mark.numerics
@pytest.mark.parametrize(
    "n, missing, near_singular, partitions, prior_rows",
    [
        (400, 0.9, False, 4, "auto"),  # 90% of the entries missing
        (30, 0.3, False, 10, "auto"),  # tiny n: 3 rows a block, a pattern each
        (400, 0.6, True, 4, 0.0),  # two columns equal to 1e-6: cond ~1e6 (ridge)
    ],
    ids=["90pct-missing", "tiny-n", "ill-conditioned"],
)
def test_latent_class_density_on_dask_hard_cases(
    n, missing, near_singular, partitions, prior_rows
):
    """The hard cases out of core against the in-memory fit: parameters to
    1e-7 (the tol=1e-10 analysis above), covariances to 1e-7 of their
    scale; the log-likelihood to first order in the covariance's change,
    n ||S^-1|| max|dS| (its log-determinant moves by tr(S^-1 dS) per row),
    plus the 2e-8 of a flat optimum."""
    import pandas as pd

    from missingkernels.densities import LatentClassDensity

    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(11)
    a = 3.0 * rng.normal(size=n)
    frame = pd.DataFrame({
        "a": a,
        "b": a + (1e-6 if near_singular else 1.0) * rng.normal(size=n),
        "c": rng.choice(["x", "y", "z"], n).astype(object),
    })  # fmt: skip
    for name in ("a", "b", "c"):
        frame.loc[rng.random(n) < missing, name] = None if name == "c" else np.nan
    params = {"tol": 1e-10, "prior_rows": prior_rows}
    memory = LatentClassDensity(**params).fit(frame)
    blocks = LatentClassDensity(**params).fit(
        dd.from_pandas(frame, npartitions=partitions)
    )
    S = memory.covariances_[0]
    for name in ("weights_", "means_", "category_probabilities_"):
        for x, y in zip(getattr(blocks, name), getattr(memory, name), strict=True):
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-7, err_msg=name)
    dS = np.abs(blocks.covariances_ - memory.covariances_).max()
    assert dS <= 1e-7 * np.abs(S).max()
    bound = n * np.linalg.norm(np.linalg.inv(S), 2) * dS * S.size + 2e-8
    assert abs(blocks.loglik_ - memory.loglik_) <= bound


@pytest.mark.numerics
def test_latent_class_density_on_dask_starts_from_a_sample_of_many_rows(monkeypatch):
    """Beyond _START_ROWS rows the k-means start reads a uniform sample
    (here about 100 of 600); on two well-separated classes EM over all the
    blocks then reaches the in-memory fit's optimum, up to the prior: its
    centre is the within-cluster variance of the start's clusters, so the
    MAP optimum moves by about prior_rows / n times the centre's change
    (the likelihood by ~1e-6 relative, the class means by ~1e-2 on classes
    6 apart); the sample is drawn again the same way (the same fit twice)."""
    import pandas as pd

    from missingkernels.densities import LatentClassDensity, _latent_class

    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(6)
    k = rng.random(600) < 0.4
    frame = pd.DataFrame({
        "x": np.where(k, 3.0, -3.0) + rng.normal(size=600),
        "z": np.where(k, -2.0, 2.0) + rng.normal(size=600),
        "colour": np.where(k ^ (rng.random(600) < 0.1), "red", "blue").astype(object),
    })  # fmt: skip
    frame.loc[rng.random(600) < 0.3, "x"] = np.nan
    frame.loc[rng.random(600) < 0.2, "colour"] = None
    monkeypatch.setattr(_latent_class, "_START_ROWS", 100)
    params = {"n_components": 2, "tol": 1e-10}
    memory = LatentClassDensity(**params).fit(frame)
    X = dd.from_pandas(frame, npartitions=4)
    blocks = LatentClassDensity(**params).fit(X)
    assert blocks.loglik_ == pytest.approx(memory.loglik_, rel=1e-5)
    order = np.argsort(blocks.means_[:, 0]), np.argsort(memory.means_[:, 0])
    np.testing.assert_allclose(
        blocks.means_[order[0]], memory.means_[order[1]], rtol=0, atol=0.05
    )
    again = LatentClassDensity(**params).fit(X)
    np.testing.assert_array_equal(again.means_, blocks.means_)


@pytest.mark.numerics
def test_the_mixed_kernel_and_its_nystroem_features_fit_a_dask_frame():
    """The mixed kernel fitted on the blocks (density, the numeric columns'
    centre and gamma="scale") equals the in-memory kernel; its Nystroem
    features draw the same landmark rows (reading those alone), so the
    same feature Gram ``Z Z^T`` up to the conditioning of the landmarks'
    Gram (its inverse amplifies the kernel's rounding)."""
    from missingkernels import ExpectedKernelFeatures, get_kernel

    dd = pytest.importorskip("dask.dataframe")
    frame, _ = _mixed_frame(n=600, seed=3)
    X = dd.from_pandas(frame, npartitions=3)
    memory, blocks = get_kernel("mixed_rbf").fit(frame), get_kernel("mixed_rbf").fit(X)
    assert blocks.base_kernel_.gamma_ == pytest.approx(
        memory.base_kernel_.gamma_, rel=1e-12
    )
    K_mem = memory(frame.iloc[:80], frame.iloc[80:200])
    np.testing.assert_allclose(
        blocks(frame.iloc[:80], frame.iloc[80:200]), K_mem, rtol=0, atol=1e-12
    )
    f_mem = ExpectedKernelFeatures(n_components=40, random_state=0).fit(frame)
    f_dask = ExpectedKernelFeatures(n_components=40, random_state=0).fit(X)
    assert f_dask.method_ == f_mem.method_ == "nystroem"
    np.testing.assert_array_equal(f_dask.landmarks_, f_mem.landmarks_)
    L = f_mem.landmarks_
    eigenvalues = np.linalg.eigvalsh(f_mem.kernel_(L, L.copy()))
    kept = eigenvalues[eigenvalues > eigenvalues.max() * 1e-12]
    # |dK| <= 1e-12 entrywise; through the pseudo-inverse, times 1 / lambda_min
    tol = 40 * 1e-12 / kept.min()
    Z_mem, Z_dask = f_mem.transform(frame), f_dask.transform(frame)
    np.testing.assert_allclose(Z_dask @ Z_dask.T, Z_mem @ Z_mem.T, rtol=0, atol=tol)


@pytest.mark.numerics
def test_svc_fits_a_dask_frame_with_nominal_columns_out_of_core():
    """MissingKernelSVC(route="features").fit on a dask DataFrame with
    nominal columns: the coding, standardisation (numeric columns only),
    latent-class density and Nystroem map as in memory, the squared hinge
    from blockwise statistics. Reference: LinearSVC (squared hinge, tol
    1e-10) on the fitted map's features of the coded rows in memory;
    predict on a dask frame returns a dask array equal to the in-memory
    predictions."""
    from sklearn.svm import LinearSVC

    from missingkernels import MissingKernelSVC
    from missingkernels._table_encoding import encode_table

    dd = pytest.importorskip("dask.dataframe")
    frame, y = _mixed_frame(n=900, seed=4)
    X = dd.from_pandas(frame, npartitions=3)
    params = {
        "route": "features", "n_kernel_features": 60, "random_state": 0, "tol": 1e-10
    }  # fmt: skip
    model = MissingKernelSVC(**params).fit(X, da.from_array(y, chunks=300))
    memory = MissingKernelSVC(**{**params, "tol": 1e-4}).fit(frame, y)
    np.testing.assert_array_equal(model.is_nominal_, memory.is_nominal_)
    np.testing.assert_allclose(model.x_center_, memory.x_center_, rtol=1e-12)
    np.testing.assert_allclose(model.x_scale_, memory.x_scale_, rtol=1e-12)
    assert type(model.kernel_).__name__ == "MixedRBFKernel"
    assert type(model.density_).__name__ == "LatentClassDensity"
    # the same landmark rows, standardised by sums added in another order
    np.testing.assert_allclose(
        model.features_.landmarks_, memory.features_.landmarks_, rtol=0, atol=1e-12
    )
    coded = np.asarray(encode_table(memory, frame, reset=False), dtype=float)
    Z = model.features_.transform((coded - model.x_center_) / model.x_scale_)
    linear = LinearSVC(C=1.0, loss="squared_hinge", dual=False, tol=1e-10).fit(Z, y)
    np.testing.assert_allclose(
        model.decision_function(frame), linear.decision_function(Z), atol=1e-4
    )
    pred = model.predict(X)
    assert hasattr(pred, "dask")
    np.testing.assert_array_equal(pred.compute(), model.predict(frame))
    assert np.mean(model.predict(frame) == y) > 0.8


def test_too_few_used_rows_on_dask():
    X = np.array([[1.0, 2.0], [np.nan, np.nan], [np.nan, np.nan]])
    message = _in_memory_error(GaussianEMDensity(), X)
    with pytest.raises(ValueError) as info:
        GaussianEMDensity().fit(da.from_array(X, chunks=(1, 2)))
    assert str(info.value) == message


def test_numpy_users_never_import_dask():
    code = (
        "import sys, numpy as np\n"
        "from missingkernels.densities import GaussianEMDensity\n"
        "X = np.random.default_rng(0).normal(size=(50, 3))\n"
        "X[::4, 1] = np.nan\n"
        "GaussianEMDensity().fit(X).conditionals(X)\n"
        "assert 'dask' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_dask_the_error_names_the_extra(monkeypatch):
    X = da.from_array(_data(seed=7, n=20))
    monkeypatch.setitem(sys.modules, "dask.array", None)
    with pytest.raises(ImportError, match=r"GaussianEMDensity.fit needs dask\.array"):
        GaussianEMDensity().fit(X)


def test_gaussian_em_on_a_local_cluster_equals_in_memory():
    distributed = pytest.importorskip("distributed")
    X = _data(seed=8)
    expected = GaussianEMDensity().fit(X)
    with (
        warnings.catch_warnings(),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster),
    ):
        fitted = GaussianEMDensity().fit(da.from_array(X, chunks=(150, 4)))
    _assert_same_fit(expected, fitted, GAUSSIAN)


# -- blockwise conditionals and features ----------------------------------


def _classification(seed=0, n=1200, d=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    return X, y


def test_conditional_means_are_blockwise_the_in_memory_ones():
    from missingkernels.dask import conditional_means

    X = _data(seed=9)
    for density in (
        GaussianEMDensity().fit(X),
        GaussianMixtureDensity(n_components=2, random_state=0).fit(X),
    ):
        means = conditional_means(density, da.from_array(X, chunks=(70, 4)))
        assert means.chunks[0] == da.from_array(X, chunks=(70, 4)).chunks[0]
        expected = density.conditionals(X).first_moments()
        np.testing.assert_allclose(means.compute(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kernel", ["genrbf", "expected_linear"])
def test_expected_features_are_blockwise_the_in_memory_ones(kernel):
    from missingkernels import ExpectedKernelFeatures
    from missingkernels.dask import expected_features

    X, _ = _classification(seed=10, n=500)
    features = ExpectedKernelFeatures(
        kernel=kernel, n_components=64, dtype="float32", random_state=0
    ).fit(X)
    Z = expected_features(features, da.from_array(X, chunks=(120, 2)))
    expected = features.transform(X)
    assert Z.dtype == expected.dtype and Z.shape == expected.shape
    np.testing.assert_array_equal(Z.compute(), expected)


def test_expected_features_of_a_dask_dataframe_check_the_names():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    from missingkernels import ExpectedKernelFeatures
    from missingkernels.dask import expected_features

    X, _ = _classification(seed=11, n=300)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    features = ExpectedKernelFeatures(n_components=20, random_state=0).fit(frame)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no per-block feature-name warning
        Z = expected_features(features, dd.from_pandas(frame, npartitions=2))
        np.testing.assert_array_equal(Z.compute(), features.transform(frame))
    renamed = dd.from_pandas(frame.rename(columns={"a": "z"}), npartitions=2)
    with pytest.raises(ValueError, match="feature names"):
        expected_features(features, renamed)


def test_blockwise_helpers_refuse_what_they_cannot_do():
    from sklearn.naive_bayes import GaussianNB
    from sklearn.svm import LinearSVC

    from missingkernels.dask import conditional_means, partial_fit

    X = _data(seed=12, n=40)
    density = GaussianEMDensity().fit(X)
    with pytest.raises(TypeError, match="takes a dask Array or DataFrame"):
        conditional_means(density, X)
    dX = da.from_array(np.nan_to_num(X), chunks=10)
    with pytest.raises(TypeError, match="has no partial_fit"):
        partial_fit(LinearSVC(), dX, da.zeros(40, chunks=10))
    with pytest.raises(ValueError, match="4 row blocks and y 2"):
        partial_fit(GaussianNB(), dX, da.zeros(40, chunks=20))
    with pytest.raises(ValueError, match="chunk y like X"):
        partial_fit(GaussianNB(), dX, da.zeros(40, chunks=(5, 15, 10, 10)))


# -- a linear model trained block by block ---------------------------------


def _in_memory_route(X, y, X_test, block):
    """The same deterministic steps as the dask route, on numpy arrays."""
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import SGDClassifier

    from missingkernels import ExpectedKernelFeatures

    density = GaussianEMDensity().fit(X)
    features = ExpectedKernelFeatures(
        gamma=0.5, n_components=100, random_state=0, density=FrozenEstimator(density)
    ).fit(X[:block])
    Z = features.transform(X)
    model = SGDClassifier(alpha=1e-3, random_state=0)
    for _ in range(3):
        for s in range(0, len(Z), block):
            model.partial_fit(Z[s : s + block], y[s : s + block], classes=[0, 1])
    return model, model.predict(features.transform(X_test))


def test_pipeline_on_a_local_cluster_predicts_as_in_memory():
    distributed = pytest.importorskip("distributed")
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import SGDClassifier

    from missingkernels import ExpectedKernelFeatures
    from missingkernels.dask import expected_features, partial_fit

    X, y = _classification(seed=13, n=1500)
    X, y, X_test, y_test = X[:1200], y[:1200], X[1200:], y[1200:]
    expected_model, expected = _in_memory_route(X, y, X_test, block=300)

    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        dX = da.from_array(X, chunks=(300, 4))
        dy = da.from_array(y, chunks=300)
        density = GaussianEMDensity().fit(dX)
        features = ExpectedKernelFeatures(
            gamma=0.5,
            n_components=100,
            random_state=0,
            density=FrozenEstimator(density),
        ).fit(dX[:300].compute())
        model = SGDClassifier(alpha=1e-3, random_state=0)
        partial_fit(model, expected_features(features, dX), dy, n_epochs=3)
        Z_test = expected_features(features, da.from_array(X_test, chunks=(100, 4)))
        predicted = Z_test.map_blocks(model.predict, drop_axis=1, dtype=int).compute()

    np.testing.assert_allclose(model.coef_, expected_model.coef_, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(predicted, expected)
    # It learned the XOR-like labels, which no linear model of X separates.
    assert np.mean(predicted == y_test) > 0.65


def _blockwise(method, X, size):
    """The in-memory method over the same row blocks, stacked."""
    return np.concatenate([method(X[i : i + size]) for i in range(0, len(X), size)])


@pytest.mark.parametrize("route", ["exact", "features"])
def test_estimators_predict_a_dask_collection_block_by_block(route):
    """Issue 49, item 1 (prediction side): the estimators' row-wise methods
    take a dask Array or DataFrame and return lazy dask arrays whose blocks
    are the in-memory results of the same rows: bit for bit against the
    same blocks in memory. Against one in-memory call on all rows they
    differ by the kernels' rounding, which depends on the batch: each Gram
    entry carries a relative error of a few eps, so a decision value one of
    about (sum of |dual coefficients| + |intercept|) x 1e-15; 1e-12 of that
    scale leaves a factor of 1000."""
    from missingkernels import (
        ExpectedKernelFeatures,
        MissingKernelSVC,
        MissingKernelSVR,
        MissingKernelTransformer,
    )

    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    target = X[:, 2] + 0.1 * rng.normal(size=300)
    labels = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    X[rng.random(X.shape) < 0.25] = np.nan
    dX = da.from_array(X, chunks=(70, 4))
    svc = MissingKernelSVC(route=route, probability=True, random_state=0)
    svc.fit(X, labels)
    svr = MissingKernelSVR(route=route, random_state=0).fit(X, target)
    cases = [
        (svc, "predict"),
        (svc, "decision_function"),
        (svc, "predict_proba"),
        (svc, "predict_log_proba"),
        (svr, "predict"),
        (MissingKernelTransformer().fit(X), "transform"),
        (ExpectedKernelFeatures(n_components=40, random_state=0).fit(X), "transform"),
    ]
    for estimator, name in cases:
        method = getattr(estimator, name)
        out = method(dX)
        assert isinstance(out, da.Array), (name, type(out))
        assert out.chunks[0] == dX.chunks[0]
        computed = out.compute()
        np.testing.assert_array_equal(computed, _blockwise(method, X, 70), err_msg=name)
        whole = method(X)
        assert computed.dtype == whole.dtype and computed.shape == whole.shape
        if whole.dtype.kind == "f":
            scale = np.abs(whole).max() + 1.0
            np.testing.assert_allclose(computed, whole, rtol=0, atol=1e-12 * scale)
        else:
            np.testing.assert_array_equal(computed, whole)
    # A DataFrame: its column names are checked against the fit's, lazily.
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    named = MissingKernelSVC(route=route, random_state=0).fit(frame, labels)
    parts = dd.from_pandas(frame, npartitions=3)
    np.testing.assert_array_equal(named.predict(parts).compute(), named.predict(frame))
    with pytest.raises(ValueError, match="feature names"):
        named.predict(dd.from_pandas(frame.rename(columns={"a": "z"}), npartitions=3))


def test_dask_prediction_checks_before_any_block_runs():
    from sklearn.exceptions import NotFittedError

    from missingkernels import MissingKernelSVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(NotFittedError):
        MissingKernelSVC().predict(da.from_array(X, chunks=20))
    model = MissingKernelSVC().fit(X, y)
    with pytest.raises(ValueError, match="4 features"):
        model.predict(da.from_array(np.zeros((10, 4)), chunks=5))
    with pytest.raises(ValueError, match="numeric"):
        model.predict(da.from_array(np.array([["a", "b", "c"]] * 4), chunks=2))


# -- kernels fitted out of core (issue 49) ----------------------------------------


@pytest.mark.parametrize(
    "kernel, params",
    [
        ("genrbf", {}),
        ("expected_rbf", {"metric": "mahalanobis"}),
        ("genrbf", {"gamma": 0.3, "diagonal": "same_draw"}),
    ],
)
def test_rbf_kernels_fit_on_dask_as_in_memory(kernel, params):
    """The density by map-reduce, the center and the spread of the observed
    entries from block sums: the fitted kernel is the in-memory one, up to
    the order of the additions (n = 1500 terms: ~n u = 2e-13 relative in each
    sum, amplified by the EM's contraction to the 1e-12 seen here)."""
    from missingkernels import get_kernel

    X = _data(seed=5, n=1500, d=5)
    X[:, 2] += 40.0  # a shifted column: the spread is taken about the mean
    expected = get_kernel(kernel, **params).fit(X)
    fitted = get_kernel(kernel, **params).fit(da.from_array(X, chunks=(400, 5)))
    assert fitted.gamma_ == pytest.approx(expected.gamma_, rel=1e-12)
    np.testing.assert_allclose(
        fitted.base_kernel_.metric_.center,
        expected.base_kernel_.metric_.center,
        rtol=1e-12,
    )
    np.testing.assert_allclose(fitted(X[:60], X), expected(X[:60], X), atol=1e-10)
    assert not hasattr(fitted, "_train_cache")  # no training rows kept


def test_a_kernel_fitted_on_dask_takes_any_density_fitted_on_it():
    """Over a density fitted on the same blocks (frozen), the out-of-core
    kernel is the kernel fitted in memory over that density: its own state
    (center, gamma) is the in-memory one."""
    from sklearn.frozen import FrozenEstimator

    from missingkernels.kernels import GenRBFKernel

    X = _data(seed=6, n=900, d=4)
    dX = da.from_array(X, chunks=(250, 4))
    density = GaussianMixtureDensity(n_components=2, random_state=0).fit(dX)
    fitted = GenRBFKernel(density=FrozenEstimator(density)).fit(dX)
    expected = GenRBFKernel(density=FrozenEstimator(density)).fit(X)
    assert fitted.gamma_ == pytest.approx(expected.gamma_, rel=1e-12)
    np.testing.assert_allclose(fitted(X[:40]), expected(X[:40]), atol=1e-12)


def test_kernels_on_dask_drop_sparse_columns_and_refuse_what_they_cannot():
    from missingkernels import DroppedFeaturesWarning
    from missingkernels.kernels import (
        ExpectedRBFKernel,
        GenRBFKernel,
        Polynomial,
        make_expected_kernel,
    )

    X = _data(seed=7, n=400, d=4)
    X[:, 1] = np.nan
    X[5, 1] = 1.0  # observed once: dropped, as in memory
    dX = da.from_array(X, chunks=(150, 4))
    with pytest.warns(DroppedFeaturesWarning, match="column 1"):
        fitted = GenRBFKernel().fit(dX)
    assert fitted.dropped_features_.tolist() == [1]
    with pytest.warns(DroppedFeaturesWarning):
        expected = GenRBFKernel().fit(X)
    np.testing.assert_allclose(fitted(X[:30]), expected(X[:30]), atol=1e-10)
    # A mixture has no single covariance for the Mahalanobis metric.
    with pytest.raises(NotImplementedError, match="Gaussian density"):
        ExpectedRBFKernel(metric="mahalanobis", density="gaussian_mixture").fit(
            da.from_array(_data(seed=8, n=300, d=3), chunks=(100, 3))
        )
    # A base kernel with fitted state but no out-of-core fit reads the rows
    # in memory (as before), and its fit_blocks says what to do.
    Poly = make_expected_kernel(Polynomial, "PolyForTest", n_draws=5)
    assert (
        not Polynomial.fits_blocks() and GenRBFKernel._base_kernel_class.fits_blocks()
    )
    rows = _data(seed=9, n=300, d=3)
    loaded = Poly().fit(da.from_array(rows, chunks=(100, 3)))
    assert loaded.gamma_ == Poly().fit(rows).gamma_
    with pytest.raises(NotImplementedError, match="load the rows in memory"):
        Polynomial().fit_blocks(da.from_array(rows, chunks=(100, 3)), None)


def test_expected_features_fit_on_dask_out_of_core():
    """ExpectedKernelFeatures.fit on a dask array: the kernel fitted on the
    blocks, the same frequencies drawn (same random_state): features equal to
    the in-memory fit's to the rounding of the kernel's state (1e-10);
    fit_transform returns them lazily. Nystroem reads only its landmark
    rows, the ones the in-memory fit draws, and gives its map."""
    from missingkernels import ExpectedKernelFeatures

    X = _data(seed=10, n=1200, d=4)
    dX = da.from_array(X, chunks=(300, 4))
    params = {"n_components": 64, "random_state": 0}
    expected = ExpectedKernelFeatures(**params).fit(X)
    fitted = ExpectedKernelFeatures(**params).fit(dX)
    assert fitted.method_ == "fourier"
    np.testing.assert_allclose(
        fitted.transform(X[:200]), expected.transform(X[:200]), atol=1e-10
    )
    Z = ExpectedKernelFeatures(**params).fit_transform(dX)
    assert hasattr(Z, "dask") and Z.shape == (1200, 64)
    np.testing.assert_allclose(
        Z[:100].compute(), expected.transform(X[:100]), atol=1e-10
    )
    nystroem = {"method": "nystroem", "n_components": 30, "random_state": 0}
    on_dask = ExpectedKernelFeatures(**nystroem).fit(dX)
    in_memory = ExpectedKernelFeatures(**nystroem).fit(X)
    np.testing.assert_array_equal(on_dask.landmarks_, in_memory.landmarks_)
    # The kernels agree to ~1e-16 relative (sums in another order); the
    # landmarks' inverse Gram amplifies that by up to 1 / lambda_min.
    L = in_memory.landmarks_
    eigenvalues = np.linalg.eigvalsh(in_memory.kernel_(L, L.copy()))
    tol = 30 * 1e-15 / eigenvalues[eigenvalues > eigenvalues.max() * 1e-12].min()
    Z, Z_ref = on_dask.transform(X[:50]), in_memory.transform(X[:50])
    np.testing.assert_allclose(Z @ Z.T, Z_ref @ Z_ref.T, rtol=0, atol=tol)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_svc_features_route_fits_a_dask_collection_out_of_core(n_classes):
    """MissingKernelSVC(route="features").fit(dask X, dask y): the
    standardisation, the density and the map from block sums, each class's
    linear SVM (LinearSVC's squared hinge, one-vs-rest) from blockwise
    statistics with the features made on the workers. Reference: the same
    features in memory and LinearSVC on them (objective within 1e-6 of its
    tolerance, so the decisions to 1e-4), with ``tol=1e-10``; at the default
    ``tol`` (LIBLINEAR's rule) each class's coefficients are within the
    stopping norm of those (the objective is 1-strongly convex: |w - w*| <=
    |g|); predict on dask returns a dask array equal to predict in memory."""
    from sklearn.svm import LinearSVC

    from missingkernels import MissingKernelSVC

    rng = np.random.default_rng(12)
    X = _data(seed=12, n=900, d=4)
    score = np.nan_to_num(X[:, 0] - X[:, 1]) + 0.3 * rng.normal(size=900)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    y = np.array(["a", "b", "c"])[y]
    w = rng.uniform(0.5, 2.0, size=900)
    dX, dy = da.from_array(X, chunks=(250, 4)), da.from_array(y, chunks=250)
    params = {
        "route": "features", "n_kernel_features": 64, "random_state": 0, "tol": 1e-10
    }  # fmt: skip
    model = MissingKernelSVC(C=2.0, class_weight="balanced", **params)
    model.fit(dX, dy, sample_weight=da.from_array(w, chunks=250))
    assert model.route_ == "features" and list(model.classes_) == sorted(set(y))
    # the same map fitted in memory on the same standardised rows
    reference = MissingKernelSVC(**params).fit(X, y)
    np.testing.assert_allclose(model.x_center_, reference.x_center_, rtol=1e-12)
    np.testing.assert_allclose(model.x_scale_, reference.x_scale_, rtol=1e-12)
    Z = reference.features_.transform((X - reference.x_center_) / reference.x_scale_)
    from sklearn.utils.class_weight import compute_class_weight

    classes = np.unique(y)
    cw = compute_class_weight("balanced", classes=classes, y=y)
    linear = LinearSVC(C=2.0, loss="squared_hinge", dual=False, tol=1e-10)
    linear.fit(Z, y, sample_weight=w * cw[np.searchsorted(classes, y)])
    decision = model.decision_function(X)
    np.testing.assert_allclose(decision, linear.decision_function(Z), atol=1e-4)
    pred = model.predict(dX)
    assert hasattr(pred, "dask")
    np.testing.assert_array_equal(pred.compute(), model.predict(X))
    # no weights at all (the default): every row's C is C
    plain = MissingKernelSVC(**params).fit(dX, y)
    linear = LinearSVC(C=1.0, loss="squared_hinge", dual=False, tol=1e-10).fit(Z, y)
    np.testing.assert_allclose(
        plain.decision_function(X), linear.decision_function(Z), atol=1e-4
    )
    loose = MissingKernelSVC(**{**params, "tol": 1e-3}).fit(dX, y)
    X1 = np.hstack([Z, np.ones((len(Z), 1))])
    problems = classes[1:] if n_classes == 2 else classes
    for k, positive in enumerate(problems):
        t = np.where(y == positive, 1.0, -1.0)
        g0 = 2.0 * X1.T @ t  # the gradient's norm at zero (C = 1)
        stop = 1e-3 * min(np.sum(t > 0), np.sum(t < 0)) / len(t) * np.linalg.norm(g0)
        gap = np.append(loose.svm_.coef_[k], loose.svm_.intercept_[k]) - np.append(
            plain.svm_.coef_[k], plain.svm_.intercept_[k]
        )
        assert np.linalg.norm(gap) <= stop
    assert loose.n_iter_ < plain.n_iter_


def test_svr_features_route_fits_a_dask_collection_out_of_core():
    """MissingKernelSVR(route="features").fit(dask X, dask y): the same out-of-
    core fit with LinearSVR's squared epsilon-insensitive loss, on the target
    standardised as in memory. Reference: LinearSVR on the in-memory route's
    features (tol 1e-10; predictions to 1e-4 standard deviations of y);
    predict on dask returns a dask array; a target with NaN is refused
    naming the rows."""
    from sklearn.svm import LinearSVR

    from missingkernels import MissingKernelSVR

    rng = np.random.default_rng(8)
    X = _data(seed=8, n=900, d=4)
    y = 100.0 + 5.0 * np.nan_to_num(X[:, 0] - X[:, 1]) ** 2 / 100
    y = y + rng.standard_t(df=3, size=900)
    w = rng.uniform(0.5, 2.0, size=900)
    dX, dy = da.from_array(X, chunks=(250, 4)), da.from_array(y, chunks=250)
    params = {
        "route": "features", "n_kernel_features": 64, "random_state": 0,
        "tol": 1e-10, "C": 3.0, "epsilon": 0.3,
    }  # fmt: skip
    model = MissingKernelSVR(**params)
    model.fit(dX, dy, sample_weight=da.from_array(w, chunks=250))
    assert model.route_ == "features"
    assert model.svm_.loss == "squared_epsilon_insensitive"
    reference = MissingKernelSVR(**params).fit(X, y)
    for name in ("x_center_", "x_scale_", "y_center_", "y_scale_"):
        np.testing.assert_allclose(
            getattr(model, name), getattr(reference, name), rtol=1e-12
        )
    Z = reference.features_.transform((X - reference.x_center_) / reference.x_scale_)
    ys = (y - reference.y_center_) / reference.y_scale_
    linear = LinearSVR(
        C=3.0, epsilon=0.3, loss="squared_epsilon_insensitive", dual=False,
        tol=1e-10, max_iter=100_000,
    ).fit(Z, ys, sample_weight=w)  # fmt: skip
    ours = (model.predict(X) - model.y_center_) / model.y_scale_
    np.testing.assert_allclose(ours, linear.predict(Z), rtol=0, atol=1e-4)
    pred = model.predict(dX)
    assert hasattr(pred, "dask")
    # each block's products of 64 features may be summed in another order
    np.testing.assert_allclose(
        pred.compute(), model.predict(X), rtol=0, atol=64 * 2.2e-16 * np.abs(y).max()
    )
    bad = y.copy()
    bad[[5, 9]] = np.nan
    with pytest.raises(ValueError, match=r"2 missing values.*rows 5, 9"):
        MissingKernelSVR(**params).fit(dX, da.from_array(bad, chunks=250))


def test_svc_out_of_core_warm_start_reaches_the_same_fit(monkeypatch, capsys):
    """From the fit on a random sample (C scaled to the rows' number) the
    Newton steps reach the minimiser reached from zero: decisions equal to
    the solver's tolerance (1e-10 on the gradient, times cond(I + 2CH) <~
    1e3 on the coefficients); each pass is reported under verbose."""
    from missingkernels import MissingKernelSVC
    from missingkernels.estimators import _out_of_core

    rng = np.random.default_rng(5)
    X = _data(seed=5, n=1200, d=4)
    y = np.where(
        np.nan_to_num(X[:, 0] * X[:, 1]) + 0.3 * rng.normal(size=1200) > 0, 1, 0
    )
    dX, dy = da.from_array(X, chunks=(300, 4)), da.from_array(y, chunks=300)
    params = {
        "route": "features", "n_kernel_features": 64, "random_state": 0, "tol": 1e-10
    }  # fmt: skip
    cold = MissingKernelSVC(**params).fit(dX, dy)
    monkeypatch.setattr(_out_of_core, "WARM_ROWS", 300)
    warm = MissingKernelSVC(verbose=True, **params).fit(dX, dy)
    out = capsys.readouterr().out + capsys.readouterr().err
    assert "start: the fit on 300 rows" in out and "pass 1:" in out
    # the density's EM out of core: each pass over the 4 blocks, as it ends
    assert "kernel fit: pass 1 over 4 blocks of rows" in out
    np.testing.assert_allclose(
        warm.decision_function(X), cold.decision_function(X), rtol=0, atol=1e-7
    )


@pytest.mark.parametrize("fraction", [0.0, 0.4])
def test_out_of_core_fits_keep_the_conditionals_that_fit_the_budget(
    monkeypatch, capsys, fraction
):
    """Conditionals beyond the memory budget are computed again at each
    pass instead of kept: the same features (the same rows and arithmetic),
    so the same fit to the bit, on dask and on rows in memory in blocks;
    the verbose report says how many rows were kept and within what."""
    from missingkernels import MissingKernelSVC
    from missingkernels.estimators import _out_of_core

    X = _data(seed=9, n=1200, d=4)
    y = (np.nan_to_num(X[:, 0] * X[:, 1]) > 0).astype(int)
    dX = da.from_array(X, chunks=(300, 4))
    params = {"route": "features", "n_kernel_features": 64, "random_state": 0}
    everything = MissingKernelSVC(**params).fit(dX, y)
    quiet = everything.features_
    Xs = (X - everything.x_center_) / everything.x_scale_
    per_row = quiet._prepared_bytes(quiet._prepare(Xs)) / len(X)
    budget = int(fraction * per_row * len(X))
    monkeypatch.setattr(_out_of_core, "keep_budget", lambda: (budget, "a test"))
    part = MissingKernelSVC(verbose=True, **params).fit(dX, y)
    out = capsys.readouterr().out
    kept = int(budget // per_row) if budget else 0
    assert f"those of the first {kept} rows kept" in out and "a test" in out
    np.testing.assert_array_equal(part.svm_.coef_, everything.svm_.coef_)
    np.testing.assert_array_equal(part.svm_.intercept_, everything.svm_.intercept_)
    # rows in memory whose features go in blocks: the same choice
    monkeypatch.setattr(_out_of_core, "BLOCK_ROWS", 250)
    ref = _out_of_core.fit_svm_in_blocks(MissingKernelSVC(**params), Xs, y, None)
    monkeypatch.setattr(_out_of_core, "keep_budget", lambda: (budget, "a test"))
    fit = _out_of_core.fit_svm_in_blocks(MissingKernelSVC(**params), Xs, y, None)
    np.testing.assert_array_equal(fit.svm_.coef_, ref.svm_.coef_)


def test_the_keep_budget_is_40_percent_of_the_workers_memory_on_a_cluster():
    """On a ``dask.distributed`` client the conditionals may take 40% of the
    workers' memory limits (they spill from 60%; the rest for features,
    sums and dask); without one, the package's memory limit (the process
    holds them)."""
    distributed = pytest.importorskip("distributed")
    from missingkernels import config_context
    from missingkernels.estimators._out_of_core import keep_budget

    with config_context(max_gram_memory=3 * 2**30):
        assert keep_budget()[0] == 3 * 2**30
    with (
        warnings.catch_warnings(),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False,
            dashboard_address=None, memory_limit="1GiB",
        ) as cluster,
        distributed.Client(cluster),
    ):  # fmt: skip
        budget, source = keep_budget()
    assert budget == int(0.4 * 2**31) and "workers" in source
