"""A fitted model keeps the training rows its predictions read, and no more.

A pickled SVM of clinical data must not give the training table back: it keeps
its support vectors (``sum_i dual_coef_i K(x, sv_i) + intercept_`` reads only
them) and the density's parameters. The rows are looked for in the pickle
itself: a row is recoverable when every one of its observed values (raw or
standardised, as the eight bytes of a float64) occurs in the pickled bytes.
The values are drawn from a continuous distribution, so a non-support row's
values occur there only if the model kept that row.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from _helpers import mcar

from missingkernels import MissingKernelSVC, MissingKernelSVR
from missingkernels._fit_cache import rows_digest
from missingkernels.estimators import ExpectedKernelFeatures, GeomSVC


def _data(rng, n=157, d=4):
    X = rng.normal(size=(n, d)) @ rng.normal(size=(d, d))
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return mcar(rng, X, 0.2), y


def _recoverable(blob: bytes, X: np.ndarray, model, rows) -> int:
    """How many of ``rows`` of X (those with an observed value) have all
    their observed values in ``blob``, raw or standardised as the estimator
    does (``(X - x_center_) / x_scale_``)."""
    center = getattr(model, "x_center_", None)
    tables = [X] if center is None else [X, (X - center) / model.x_scale_]
    found = 0
    for i in rows:
        observed = ~np.isnan(X[i])
        if observed.any() and any(
            all(Z[i, j].tobytes() in blob for j in np.flatnonzero(observed))
            for Z in tables
        ):
            found += 1
    return found


def _arrays(obj, seen=None):
    """Every numeric array reachable from ``obj`` (attributes, containers)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        if obj.dtype != object:
            yield obj
            return
        items = list(obj.flat)
    elif isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, list | tuple | set):
        items = list(obj)
    else:
        items = list(getattr(obj, "__dict__", {}).values())
    for item in items:
        yield from _arrays(item, seen)


def _fit(Estimator, X, y, **params):
    if Estimator is MissingKernelSVR:
        y = y + np.nan_to_num(X[:, 0])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*[Cc]onverge.*")
        return Estimator(random_state=0, **params).fit(X, y)


@pytest.mark.parametrize("density", ["gaussian_em", "iterative"])
@pytest.mark.parametrize("Estimator", [MissingKernelSVC, MissingKernelSVR])
def test_a_pickled_svm_holds_no_training_row_but_its_support_vectors(
    Estimator, density, rng
):
    X, y = _data(rng)
    params = {"density_params": {"n_draws": 3}} if density == "iterative" else {}
    model = _fit(Estimator, X, y, density=density, **params)
    model.predict(X)  # scoring the training rows keeps nothing of them either
    blob = pickle.dumps(model)
    others = np.setdiff1d(np.arange(len(X)), model.support_)
    assert others.size >= 20
    assert _recoverable(blob, X, model, others) == 0
    # The search finds the rows the model does keep.
    support = model.support_
    with_values = int((~np.isnan(X[support])).any(axis=1).sum())
    assert _recoverable(blob, X, model, support) == with_values


def test_the_pickle_grows_with_the_support_vectors_not_with_the_rows(rng):
    X, y = _data(rng, n=400)
    model = _fit(MissingKernelSVC, X, y)
    n_sv, d = model.support_vectors_.shape
    assert n_sv < 0.8 * len(X)
    restored = pickle.loads(pickle.dumps(model))
    held = sum(a.nbytes for a in _arrays(restored))
    # Per support vector: its row (d floats), its dual coefficient (twice:
    # libsvm's copy), its index (twice, int32) and its diagonal entry: under
    # d + 5 float64. The density: a mean and a covariance, (d + 1)^2 floats;
    # the rest (intercept, scaling, class labels) a few dozen numbers.
    bound = 8 * (n_sv * (d + 5) + (d + 1) ** 2 + 64)
    assert held <= bound
    for a in _arrays(restored):
        assert len(X) not in a.shape, a.shape


def _old_layout(model, Z):
    """``model`` as pickled before it stopped keeping its training rows: the
    standardised training rows ``Z`` as ``X_fit_``, the kernel's training
    conditionals kept, none of the new attributes."""
    state = model.__dict__
    state["X_fit_"] = Z
    del state["shape_fit_"]
    state.pop("_fit_digest", None)  # the exact route's
    kernel = model.kernel_
    kernel._train_cache = (rows_digest(Z), kernel.density_.conditionals(Z))
    return pickle.dumps(model)


@pytest.mark.parametrize("route", ["exact", "features"])
@pytest.mark.parametrize("Estimator", [MissingKernelSVC, MissingKernelSVR])
def test_a_model_pickled_with_its_training_rows_loads_and_predicts_the_same(
    Estimator, route, rng
):
    X, y = _data(rng)
    T = mcar(rng, rng.normal(size=(30, X.shape[1])), 0.2)
    model = _fit(Estimator, X, y, route=route, n_kernel_features=50)
    methods = [m for m in ("predict", "decision_function") if hasattr(model, m)]
    before = {m: (getattr(model, m)(T), getattr(model, m)(X)) for m in methods}
    Z = (X - model.x_center_) / model.x_scale_
    old = pickle.loads(_old_layout(model, Z))
    for m in methods:
        np.testing.assert_array_equal(getattr(old, m)(T), before[m][0])
        np.testing.assert_array_equal(getattr(old, m)(X), before[m][1])
    # Loaded, it keeps no more than a model fitted today.
    blob = pickle.dumps(old)
    support = getattr(old, "support_", [])
    others = np.setdiff1d(np.arange(len(X)), support)
    assert _recoverable(blob, X, old, others) == 0
    assert old.shape_fit_ == X.shape


def test_socp_linear_form_keeps_no_training_row(rng):
    pytest.importorskip("cvxpy", reason="cvxpy (the socp extra) is not installed")
    from missingkernels.estimators import SOCPSVC

    X, y = _data(rng)
    model = SOCPSVC(form="linear", kappa=0.7).fit(X, y)
    scores = model.decision_function(X)
    assert not hasattr(model, "X_fit_") and model.shape_fit_ == X.shape
    assert _recoverable(pickle.dumps(model), X, model, range(len(X))) == 0
    # Pickled when it kept X_fit_: loads without it and scores the same.
    model.__dict__["X_fit_"] = X.copy()
    old = pickle.loads(pickle.dumps(model))
    assert "X_fit_" not in vars(old)
    np.testing.assert_array_equal(old.decision_function(X), scores)


def test_X_fit_says_what_replaced_it(rng):
    X, y = _data(rng, n=60)
    for model in (_fit(MissingKernelSVC, X, y), GeomSVC().fit(X, y)):
        with pytest.raises(AttributeError, match="support_vectors_"):
            model.X_fit_  # noqa: B018
        assert not hasattr(model, "X_fit_")
    assert MissingKernelSVC().fit(X, y).shape_fit_ == X.shape


def test_decision_values_are_the_support_vector_formula(rng):
    X, y = _data(rng)
    T = mcar(rng, rng.normal(size=(40, X.shape[1])), 0.2)
    model = _fit(MissingKernelSVC, X, y)
    Z = (X - model.x_center_) / model.x_scale_
    T_std = (T - model.x_center_) / model.x_scale_
    np.testing.assert_array_equal(model.support_vectors_, Z[model.support_])
    # As libsvm scores them: a column per training row, the support columns
    # computed (what the estimator did when it kept every row).
    K = np.zeros((len(T), len(X)))
    K[:, model.support_] = model.kernel_(T_std, Z[model.support_])
    np.testing.assert_array_equal(
        model.decision_function(T), model.svm_.decision_function(K)
    )
    # And the formula itself: libsvm sums the n_SV terms in its own order; each
    # |K| <= 1 (a normalised RBF), so the sums differ by at most about
    # n_SV * eps * sum |dual_coef_|.
    coef = model.dual_coef_[0]
    formula = model.kernel_(T_std, model.support_vectors_) @ coef + model.intercept_
    atol = len(coef) * np.finfo(float).eps * np.abs(coef).sum()
    np.testing.assert_allclose(model.decision_function(T), formula, rtol=0, atol=atol)


def test_the_features_route_keeps_no_training_row(rng):
    X, y = _data(rng)
    model = _fit(MissingKernelSVC, X, y, route="features", n_kernel_features=50)
    assert model.features_.method_ == "fourier"
    blob = pickle.dumps(model)
    assert _recoverable(blob, X, model, range(len(X))) == 0


def test_expected_kernel_features_keep_only_their_landmarks(rng):
    X, _ = _data(rng)
    fourier = ExpectedKernelFeatures(n_components=50, random_state=0)
    Z = fourier.fit_transform(X)
    np.testing.assert_array_equal(Z, fourier.transform(X))
    assert _recoverable(pickle.dumps(fourier), X, fourier, range(len(X))) == 0
    nystroem = ExpectedKernelFeatures(method="nystroem", n_components=20)
    nystroem.set_params(random_state=0).fit(X)
    blob = pickle.dumps(nystroem)
    landmarks = [i for i in range(len(X)) if any(np.array_equal(
        X[i], row, equal_nan=True) for row in nystroem.landmarks_)]  # fmt: skip
    assert len(landmarks) == 20
    others = np.setdiff1d(np.arange(len(X)), landmarks)
    assert _recoverable(blob, X, nystroem, others) == 0


def test_geom_svc_keeps_its_support_vectors_only(rng):
    X, y = _data(rng)
    model = GeomSVC(C=1.0, gamma=0.3).fit(X, y)
    scores = model.decision_function(X)
    blob = pickle.dumps(model)
    others = np.setdiff1d(np.arange(len(X)), model.support_)
    assert others.size >= 20
    assert _recoverable(blob, X, model, others) == 0
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])
    # A model pickled with X_fit_ (before) loads and scores the same.
    state = model.__dict__
    state["X_fit_"] = X.copy()
    del state["support_vectors_"]
    old = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(old.decision_function(X), scores)
    assert "X_fit_" not in vars(old)


def test_the_training_rows_are_recognised_by_value_as_before(rng):
    # The digest that replaced X_fit_ compares values, as np.array_equal with
    # equal_nan did: -0.0 is 0.0, and a NaN of any payload is missing.
    X, y = _data(rng, n=80)
    X[::7, 2] = 0.0
    # expected_rbf's training diagonal is k of a row with itself (1), not
    # with an independent copy of it (below 1 where the row has a NaN).
    model = _fit(MissingKernelSVC, X, y, kernel="expected_rbf", standardize=False)
    assert np.isnan(model.support_vectors_).any()
    trained = model.decision_function(X)
    same = np.where(X == 0.0, -0.0, X)
    payload = np.array([0x7FF8000000000123], dtype=np.uint64).view(np.float64)[0]
    same[np.isnan(X)] = payload
    assert np.signbit(same[::7, 2]).all() and same.tobytes() != X.tobytes()
    np.testing.assert_array_equal(model.decision_function(same), trained)
    # A support vector scored as an independent copy of its row differs: the
    # shortcut is what makes the training rows score as trained.
    other = X.copy()
    other[0, 0] = np.nextafter(other[0, 0], np.inf)
    assert not np.array_equal(model.decision_function(other)[1:], trained[1:])
