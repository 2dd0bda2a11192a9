"""The exact kernel route refuses a Gram above the memory limit, before
allocating it, with advice; predictions are chunked under the same limit."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from _helpers import mcar

from missingkernels import (
    MissingKernelSVC,
    config_context,
    get_config,
    get_kernel,
    set_config,
)
from missingkernels._config import MAX_GRAM_MEMORY_ENV, max_gram_memory, parse_memory


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] > 0).astype(int)
    return mcar(rng, X, 0.2), y


def test_a_gram_above_the_limit_is_refused_before_allocation():
    X, y = _data(40000)
    tracemalloc.start()
    try:
        with config_context(max_gram_memory="4GiB"):
            with pytest.raises(ValueError, match="40000 x 40000 Gram") as info:
                MissingKernelSVC(route="exact").fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "23.8 GiB" in message and "4.0 GiB" in message
    assert "route='features'" in message and "ExpectedKernelFeatures" in message
    assert "set_config(max_gram_memory" in message and "subsample" in message
    assert peak < 200 * 2**20  # the density's fit, not the 12.8 GB Gram


def test_auto_takes_the_feature_route_above_the_limit():
    X, y = _data(3000)
    with config_context(max_gram_memory=16 * 3000 * 3000 - 1):
        svc = MissingKernelSVC(gamma=0.5, n_kernel_features=300, random_state=0)
        svc.fit(X, y)
        assert svc.route_ == "features"
        assert svc.features_.method_ == "fourier"
        assert not hasattr(svc, "support_")
        assert svc.score(X, y) > 0.9
    with config_context(max_gram_memory=16 * 3000 * 3000):
        assert MissingKernelSVC().fit(X, y).route_ == "exact"


def test_the_limit_counts_the_matrix_and_one_copy():
    X, _ = _data(100)
    k = get_kernel("genrbf").fit(X)
    with config_context(max_gram_memory=16 * 100 * 100):
        assert k(X).shape == (100, 100)
    with config_context(max_gram_memory=16 * 100 * 100 - 1):
        with pytest.raises(ValueError, match="above the limit"):
            k(X)


def test_predictions_are_chunked_under_the_limit():
    X, y = _data(300)
    svc = MissingKernelSVC().fit(X, y)
    expected = svc.decision_function(X[::-1])
    # Far below one 300 x 300 Gram, above one row's: predict still works.
    with config_context(max_gram_memory=16 * 300 * 20):
        np.testing.assert_allclose(svc.decision_function(X[::-1]), expected)


def test_the_limit_is_configured_by_set_config_or_the_environment(monkeypatch):
    monkeypatch.delenv(MAX_GRAM_MEMORY_ENV, raising=False)
    default, source = max_gram_memory()
    assert default > 0
    assert source in ("half the machine's memory", "the default")
    monkeypatch.setenv(MAX_GRAM_MEMORY_ENV, "512MiB")
    assert max_gram_memory() == (512 * 2**20, f"${MAX_GRAM_MEMORY_ENV}")
    set_config(max_gram_memory="2GB")
    try:
        assert get_config()["max_gram_memory"] == 2 * 10**9
        assert max_gram_memory()[0] == 2 * 10**9
    finally:
        set_config(max_gram_memory=None)
    assert get_config()["max_gram_memory"] is None


@pytest.mark.parametrize("bad", ["lots", "4 parsecs", -1, 0, "0GB"])
def test_bad_limits_say_what_is_expected(bad):
    with pytest.raises(ValueError, match="max_gram_memory must be"):
        parse_memory(bad)
    with pytest.raises(TypeError):
        parse_memory(True)


def test_socp_kernel_form_estimates_its_problem_before_building_it():
    pytest.importorskip("cvxpy")
    from missingkernels import SOCPSVC

    X, y = _data(500)
    with config_context(max_gram_memory="100MB"):
        with pytest.raises(ValueError, match="500 second-order cones") as info:
            SOCPSVC().fit(X, y)
        assert "form='linear'" in str(info.value)
        # The linear form's memory does not grow with n^2: it still fits.
        assert SOCPSVC(form="linear").fit(X, y).score(X, y) > 0.6


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (0.5, r"less than one byte.*'0.5GB'"),
        (float("inf"), "must be a finite number of bytes"),
        (float("nan"), "must be a finite number of bytes"),
    ],
)
def test_fractions_of_a_byte_and_infinity_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        set_config(max_gram_memory=bad)
    assert get_config()["max_gram_memory"] is None
    assert parse_memory(1.6) == 2
    assert parse_memory("1.5KB") == 1500


def test_the_limit_travels_to_joblib_worker_processes():
    """cross_validate with n_jobs=2 (loky processes) takes the same route as
    with n_jobs=1 under the thread's setting."""
    from sklearn.model_selection import GridSearchCV, cross_validate

    X, y = _data(80)
    svc = MissingKernelSVC(n_kernel_features=30, random_state=0)
    with config_context(max_gram_memory=16 * 40 * 40 - 1):
        serial = cross_validate(svc, X, y, cv=2, n_jobs=1, return_estimator=True)
        parallel = cross_validate(svc, X, y, cv=2, n_jobs=2, return_estimator=True)
        # A grid search inside the workers clones the estimator again there.
        search = GridSearchCV(svc, {"C": [1.0]}, cv=2)
        nested = cross_validate(search, X, y, cv=2, n_jobs=2, return_estimator=True)
    assert [e.route_ for e in serial["estimator"]] == ["features"] * 2
    assert [e.route_ for e in parallel["estimator"]] == ["features"] * 2
    assert [e.best_estimator_.route_ for e in nested["estimator"]] == ["features"] * 2
    np.testing.assert_allclose(parallel["test_score"], serial["test_score"])
    # In this process, the thread's own setting decides (none set here now).
    assert parallel["estimator"][0].fit(X[:40], y[:40]).route_ == "exact"


def test_a_huge_feature_count_is_refused_before_any_work():
    from missingkernels import ExpectedKernelFeatures

    X, y = _data(80)
    with config_context(max_gram_memory="1GB"):
        with pytest.raises(ValueError, match=r"=1000000000 features"):
            MissingKernelSVC(route="features", n_kernel_features=10**9).fit(X, y)
        with pytest.raises(ValueError, match="lower n_components"):
            ExpectedKernelFeatures(n_components=10**9).fit(X)
        # Nystroem keeps at most one feature per row: no limit to hit.
        nys = ExpectedKernelFeatures(n_components=10**9, method="nystroem")
        assert nys.fit(X).transform(X).shape[1] <= 80


def test_features_above_the_limit_are_made_in_blocks_of_the_rows(monkeypatch):
    """Rows in memory whose features exceed the limit: the features route
    makes them a block at a time (no dask) and fits LinearSVC's squared
    hinge from blockwise statistics; reference: LinearSVC on all the same
    features in memory (to its tolerance 1e-10: decisions to 1e-4)."""
    from sklearn.svm import LinearSVC

    from missingkernels.estimators import _out_of_core

    X, y = _data(3000)
    m = 200
    limit = 3000 * m * 8  # all the float64 features: just above
    monkeypatch.setattr(_out_of_core, "BLOCK_ROWS", 700)
    with config_context(max_gram_memory=limit):
        svc = MissingKernelSVC(
            gamma=0.5, n_kernel_features=m, random_state=0, tol=1e-10
        )
        svc.fit(X, y)
    assert svc.route_ == "features" and svc.svm_.loss == "squared_hinge"
    Xs = (X - svc.x_center_) / svc.x_scale_
    Z = svc.features_.transform(Xs)
    assert Z.dtype == np.float32
    ref = LinearSVC(C=1.0, loss="squared_hinge", dual=False, tol=1e-10).fit(Z, y)
    np.testing.assert_allclose(
        svc.decision_function(X), ref.decision_function(Z), rtol=0, atol=1e-4
    )
    # The route says so before it starts; the blocks themselves must fit.
    with config_context(max_gram_memory=limit):
        assert (
            "in blocks"
            in MissingKernelSVC(n_kernel_features=m)._choose_route(3000, 2)[2]
        )
    with config_context(max_gram_memory=1000):
        with pytest.raises(ValueError, match="neither route fits"):
            MissingKernelSVC(n_kernel_features=m)._choose_route(3000, 2)


def test_svr_features_above_the_limit_are_made_in_blocks_of_the_rows(monkeypatch):
    """The regressor takes the same route: LinearSVR's squared
    epsilon-insensitive loss from blockwise statistics, on the standardised
    target (epsilon in its standard deviations, as in memory). Reference:
    LinearSVR on all the same features in memory at tol 1e-10, predictions
    to 1e-4 standard deviations of y."""
    from sklearn.svm import LinearSVR

    from missingkernels import MissingKernelSVR
    from missingkernels.estimators import _out_of_core

    X, _ = _data(3000)
    rng = np.random.default_rng(3)
    y = 50.0 + 10.0 * np.nan_to_num(X[:, 0] * X[:, 1]) + rng.normal(size=3000)
    m = 200
    limit = 3000 * m * 8
    monkeypatch.setattr(_out_of_core, "BLOCK_ROWS", 700)
    with config_context(max_gram_memory=limit):
        svr = MissingKernelSVR(
            gamma=0.5, n_kernel_features=m, random_state=0, tol=1e-10, epsilon=0.2
        ).fit(X, y)
        assert "in blocks" in svr._choose_route(3000, 2)[2]
    assert svr.route_ == "features"
    assert svr.svm_.loss == "squared_epsilon_insensitive"
    assert svr.y_center_ == pytest.approx(np.mean(y), rel=1e-12)
    Z = svr.features_.transform((X - svr.x_center_) / svr.x_scale_)
    ref = LinearSVR(
        C=1.0,
        epsilon=0.2,
        loss="squared_epsilon_insensitive",
        dual=False,
        tol=1e-10,
        max_iter=100_000,
    ).fit(Z, (y - svr.y_center_) / svr.y_scale_)
    np.testing.assert_allclose(
        (svr.predict(X) - svr.y_center_) / svr.y_scale_, ref.predict(Z),
        rtol=0, atol=1e-4,
    )  # fmt: skip


def test_arrays_bytes_counts_every_array_once_through_containers_and_objects():
    """The bytes of the arrays an object holds, through tuples, lists,
    dicts and attributes, each array once (shared, or in a cycle)."""
    from missingkernels._config import arrays_bytes

    class Holder:
        pass

    a, b = np.zeros(10), np.zeros((3, 4), dtype=np.float32)
    h = Holder()
    h.a, h.more, h.me = a, {"b": b, "again": a, "n": 3}, None
    h.me = h  # a cycle
    assert arrays_bytes(h) == 80 + 48
    assert arrays_bytes([h, (a, [b])]) == 80 + 48
    assert arrays_bytes("text") == 0 and arrays_bytes(Holder) == 0


def test_a_table_with_nominal_columns_takes_the_blocks_too(monkeypatch):
    """Nominal columns (the mixed kernel, latent-class density, Nystroem
    landmarks) above the limit: the same blocks of rows as numeric tables,
    the coded rows' features made a block at a time. Reference: LinearSVC
    (squared hinge, tol 1e-10) on all the same features in memory:
    decisions to 1e-4 (both solvers' tolerance)."""
    import pandas as pd
    from sklearn.svm import LinearSVC

    from missingkernels._table_encoding import encode_table
    from missingkernels.estimators import _features, _out_of_core

    rng = np.random.default_rng(4)
    n, m = 1500, 60
    frame = pd.DataFrame({
        "x": rng.normal(size=n),
        "z": rng.normal(size=n),
        "colour": rng.choice(["red", "blue", "green"], n).astype(object),
    })  # fmt: skip
    frame.loc[rng.random(n) < 0.3, "x"] = np.nan
    frame.loc[rng.random(n) < 0.2, "colour"] = None
    signal = np.nan_to_num(frame["x"]) + 1.5 * (frame["colour"] == "red") + frame["z"]
    y = (signal + 0.3 * rng.normal(size=n) > 0.5).astype(int).to_numpy()
    monkeypatch.setattr(_out_of_core, "BLOCK_ROWS", 400)
    monkeypatch.setattr(_features, "_ROWS", 200)  # Nystroem's blocks fit too
    with config_context(max_gram_memory=n * m * 8):  # all the features: above
        svc = MissingKernelSVC(n_kernel_features=m, random_state=0, tol=1e-10)
        svc.fit(frame, y)
        assert "in blocks" in svc._choose_route(n, 3)[2]
    assert svc.route_ == "features" and svc.svm_.loss == "squared_hinge"
    assert svc.features_.method_ == "nystroem" and svc.is_nominal_.tolist() == [
        False, False, True,
    ]  # fmt: skip
    coded = np.asarray(encode_table(svc, frame, reset=False), dtype=float)
    Z = svc.features_.transform((coded - svc.x_center_) / svc.x_scale_)
    ref = LinearSVC(C=1.0, loss="squared_hinge", dual=False, tol=1e-10).fit(Z, y)
    np.testing.assert_allclose(
        svc.decision_function(frame), ref.decision_function(Z), rtol=0, atol=1e-4
    )
