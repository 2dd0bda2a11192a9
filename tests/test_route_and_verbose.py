"""route="auto" compares what each route needs; verbose says what a fit does.

The byte counts are worked out here from what each route allocates (float64
entries: the n x n Gram and one working copy; the n x m features and the m
frequency vectors of d + 1 numbers), not read back from the package.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import sklearn
from _helpers import mcar

from missingkernels import (
    ExpectedKernelFeatures,
    MissingKernelSVC,
    MissingKernelSVR,
    config_context,
)
from missingkernels._config import format_bytes
from missingkernels._sklearn_compat import InvalidParameterError


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(int)
    return mcar(rng, X, 0.1), y


def _gram_bytes(n):
    return 2 * 8 * n * n


def _feature_bytes(n, d, m):
    return m * (8 * n + 8 * (d + 1))


# -- item 2: the route and its memory ---------------------------------------------


@pytest.mark.parametrize("n", [40, 90])
def test_auto_refuses_once_naming_both_routes_when_neither_fits(n):
    """Wide rows (2,000 columns): the features need far more than the Gram
    the limit refused; auto says so instead of failing on the features."""
    X, y = _data(n, 2000)
    limit = _gram_bytes(n) - 1
    assert _feature_bytes(n, 2000, 2000) > _gram_bytes(n)
    with config_context(max_gram_memory=limit):
        with pytest.raises(ValueError, match="route='auto'") as info:
            MissingKernelSVC().fit(X, y)
    message = str(info.value)
    assert format_bytes(_gram_bytes(n)) in message
    assert format_bytes(_feature_bytes(n, 2000, 2000)) in message
    assert format_bytes(limit) in message
    assert "route='features'" not in message and "n_components" not in message
    assert "subsample" in message and "set_config(max_gram_memory" in message


def test_auto_takes_the_exact_route_whenever_the_gram_fits():
    # The Gram fits exactly: the exact route, even where the features fit too.
    X, y = _data(60, 3)
    with config_context(max_gram_memory=_gram_bytes(60)):
        assert MissingKernelSVC(n_kernel_features=4).fit(X, y).route_ == "exact"


def test_the_features_route_names_its_own_parameter_when_refused():
    X, y = _data(200, 3)
    limit = 1_000_000
    fits = limit // (8 * 200 + 8 * 4)  # features of one frequency vector
    for model in (MissingKernelSVC, MissingKernelSVR):
        with config_context(max_gram_memory=limit):
            with pytest.raises(ValueError, match="n_kernel_features=2000") as info:
                model(route="features").fit(X, y)
        message = str(info.value)
        assert format_bytes(_feature_bytes(200, 3, 2000)) in message
        assert f"at most {fits}" in message
        assert "route='features'" not in message and "n_components" not in message
        # What it advises works: the largest count that fits is accepted.
        with config_context(max_gram_memory=limit):
            model(route="features", n_kernel_features=fits).fit(X, y)


def test_the_transformer_keeps_its_own_parameter_name_when_refused():
    X, _ = _data(200, 3)
    with config_context(max_gram_memory=1_000_000):
        with pytest.raises(ValueError, match="n_components=2000") as info:
            ExpectedKernelFeatures(n_components=2000).fit(X)
    assert "n_kernel_features" not in str(info.value)


def test_a_nystroem_refusal_on_the_features_route_does_not_advise_that_route():
    """A kernel without a feature map takes Nystroem landmarks: its landmark
    Gram is refused with the route's own advice, not the exact route's."""
    X, y = _data(100, 3)
    # The Gram of the 100 landmarks (all rows) is above the limit, the
    # estimate of random features is not.
    limit = _gram_bytes(100) - 1
    assert _feature_bytes(100, 3, 100) <= limit
    with config_context(max_gram_memory=limit):
        with pytest.raises(ValueError, match="landmarks") as info:
            MissingKernelSVC(
                kernel="expected_polynomial", route="features", n_kernel_features=100
            ).fit(X, y)
    message = str(info.value)
    assert "n_kernel_features=100" in message
    assert "route='features'" not in message and "n_components" not in message


# -- item 3: verbose ---------------------------------------------------------------


@pytest.mark.parametrize("model", [MissingKernelSVC, MissingKernelSVR])
def test_verbose_is_a_validated_parameter_off_by_default(model):
    assert model().get_params()["verbose"] is False
    X, y = _data(30, 2)
    for bad in (-1, "yes", 1.5):
        with pytest.raises(InvalidParameterError, match="verbose"):
            model(verbose=bad).fit(X, y)


def test_verbose_says_the_route_and_why_and_the_density_fitted(capsys):
    X, y = _data(120, 3)
    svc = MissingKernelSVC(random_state=0, verbose=True).fit(X, y)
    out = capsys.readouterr().out
    assert "[MissingKernelSVC] route 'exact'" in out
    assert format_bytes(_gram_bytes(120)) in out  # why: what the Gram needs
    density = svc.density_
    name = type(density).__name__
    assert re.search(rf"density {name} fitted \({density.n_iter_} iterations", out)
    assert re.search(r"density .* in \d+\.\d+ s", out)
    assert f"{len(svc.support_)} support vectors" in out
    # Quiet by default; saying it changes nothing of the fit.
    quiet = MissingKernelSVC(random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
    np.testing.assert_array_equal(svc.decision_function(X), quiet.decision_function(X))
    # A fit the cache gives back (same rows, same parameters) says so.
    MissingKernelSVC(random_state=0, C=2.0, verbose=True).fit(X, y)
    assert "a copy from the fit cache" in capsys.readouterr().out


def test_verbose_says_when_auto_switches_to_the_approximate_route(capsys):
    X, y = _data(300, 3)
    limit = _gram_bytes(300) - 1
    with config_context(max_gram_memory=limit):
        MissingKernelSVC(n_kernel_features=50, random_state=0, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "[MissingKernelSVC] route 'features'" in out
    assert "approximate" in out
    assert format_bytes(_gram_bytes(300)) in out and format_bytes(limit) in out
    assert format_bytes(_feature_bytes(300, 3, 50)) in out


def _without_tqdm(monkeypatch):
    # None in sys.modules makes any import of the name raise ImportError.
    for name in ("tqdm", "tqdm.auto"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.mark.parametrize("has_tqdm", [True, False])
def test_verbose_shows_progress_of_feature_maps(monkeypatch, capsys, has_tqdm):
    if has_tqdm:
        pytest.importorskip("tqdm")
    else:
        _without_tqdm(monkeypatch)
    import missingkernels.estimators._features as features_module

    monkeypatch.setattr(features_module, "_ROWS", 64)  # four blocks of 250 rows
    X, _ = _data(250, 3)
    quiet = ExpectedKernelFeatures(n_components=20, random_state=0).fit(X)
    loud = ExpectedKernelFeatures(n_components=20, random_state=0, verbose=1).fit(X)
    Z = loud.transform(X)
    out = capsys.readouterr().out
    np.testing.assert_array_equal(Z, quiet.transform(X))
    if has_tqdm:
        assert "250/250" in out
    else:
        lines = [s for s in out.splitlines() if "feature map" in s]
        assert [s.split(": ")[-1] for s in lines] == [
            "64/250 rows",
            "128/250 rows",
            "192/250 rows",
            "250/250 rows",
        ]


@pytest.mark.parametrize("has_tqdm", [True, False])
def test_verbose_shows_progress_of_predictions(monkeypatch, capsys, has_tqdm):
    if has_tqdm:
        pytest.importorskip("tqdm")
    else:
        _without_tqdm(monkeypatch)
    X, y = _data(200, 3)
    svc = MissingKernelSVC(random_state=0, verbose=1).fit(X, y)
    quiet = MissingKernelSVC(random_state=0).fit(X, y)
    capsys.readouterr()
    # Rows in chunks whose Gram fits 16 rows: 13 chunks.
    with config_context(max_gram_memory=2 * 8 * 200 * 16):
        expected = quiet.decision_function(X)
        scores = svc.decision_function(X)
    out = capsys.readouterr().out
    np.testing.assert_array_equal(scores, expected)
    if has_tqdm:
        assert "200/200" in out
    else:
        lines = [s for s in out.splitlines() if "decision_function" in s]
        assert len(lines) == 13 and lines[-1].endswith("200/200 rows")


def test_verbose_reaches_libsvm_as_in_svc(capfd):
    X, y = _data(60, 2)
    MissingKernelSVC(verbose=True).fit(X, y)
    assert "optimization finished" in capfd.readouterr().out
    with sklearn.config_context(working_memory=1):
        MissingKernelSVC().fit(X, y)
    assert "optimization finished" not in capfd.readouterr().out


def test_nystroem_features_of_many_new_rows_are_computed_under_the_limit():
    """Rows to score are taken in blocks whose kernel against the landmarks
    fits the limit, not refused with the exact route's advice."""
    X, y = _data(100, 3)
    T, _ = _data(400, 3, seed=1)
    svc = MissingKernelSVC(
        kernel="expected_polynomial",
        route="features",
        n_kernel_features=20,
        random_state=0,
    )
    expected = svc.fit(X, y).decision_function(T)
    # 20 landmarks against 100 training rows fit; 400 rows at once would not.
    limit = _gram_bytes(1) * 20 * 100 + 1
    assert _gram_bytes(1) * 20 * 400 > limit
    with config_context(max_gram_memory=limit):
        fitted = svc.fit(X, y)
        np.testing.assert_allclose(
            fitted.decision_function(T), expected, rtol=1e-12, atol=1e-12
        )
