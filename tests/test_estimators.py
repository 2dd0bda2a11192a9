"""MissingKernelSVC / SVR / Transformer: contract, equivalences, no leakage."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.decomposition import KernelPCA
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR
from sklearn.utils.estimator_checks import parametrize_with_checks

from missingkernels.densities import GaussianEMDensity, SingularCovarianceWarning
from missingkernels.estimators import (
    MissingKernelSVC,
    MissingKernelSVR,
    MissingKernelTransformer,
)


def _classification(rng, n=120, d=4, rate=0.2):
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 2] > 0).astype(int)
    Xm = X.copy()
    Xm[rng.random(X.shape) < rate] = np.nan
    return X, Xm, y


def _expected_failed_checks(estimator):
    if isinstance(estimator, (MissingKernelSVC, MissingKernelSVR)):
        return {
            "check_sample_weight_equivalence_on_dense_data": (
                "sample_weight weights the SVM's loss only: the density and "
                "gamma='scale' are fitted on the distinct rows, so a row of "
                "weight 2 is not the same as the row twice"
            )
        }
    return {}


@parametrize_with_checks(
    [MissingKernelSVC(), MissingKernelSVR(), MissingKernelTransformer()],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    # The sample_weight checks fit on a handful of rows, where the density
    # says its covariance is singular: expected there.
    with warnings.catch_warnings():
        if "sample_weight" in check.func.__name__:
            warnings.simplefilter("ignore", SingularCovarianceWarning)
        check(estimator)


def test_sample_weight_reaches_the_svm(rng):
    """On complete rows the SVMs are scikit-learn's RBF SVMs, weights included."""
    X, _, y = _classification(rng, n=80)
    w = rng.uniform(0.1, 3.0, size=80)
    ours = MissingKernelSVC(gamma=0.5, C=2.0, standardize=False).fit(
        X, y, sample_weight=w
    )
    ref = SVC(kernel="rbf", gamma=0.5, C=2.0).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(
        ours.decision_function(X), ref.decision_function(X), atol=1e-6
    )
    unweighted = MissingKernelSVC(gamma=0.5, C=2.0, standardize=False).fit(X, y)
    assert not np.allclose(ours.decision_function(X), unweighted.decision_function(X))
    target = np.sin(X[:, 0]) + X[:, 1]
    reg = MissingKernelSVR(gamma=0.4, C=3.0, standardize=False)
    reg.fit(X, target, sample_weight=w)
    ref_reg = SVR(kernel="rbf", gamma=0.4, C=3.0).fit(X, target, sample_weight=w)
    np.testing.assert_allclose(reg.predict(X), ref_reg.predict(X), atol=1e-6)
    with pytest.raises(ValueError, match="sample_weight"):
        MissingKernelSVC().fit(X, y, sample_weight=w[:10])


def test_sample_weight_on_the_feature_route(rng):
    _, Xm, y = _classification(rng, n=80)
    w = rng.uniform(0.1, 3.0, size=80)
    clf = MissingKernelSVC(
        route="features", n_kernel_features=40, random_state=0, standardize=False
    )
    clf.fit(Xm, y, sample_weight=w)
    Z = clf.features_.transform(Xm)
    ref = clone(clf.svm_).fit(Z, y, sample_weight=w)
    np.testing.assert_allclose(clf.svm_.coef_, ref.coef_, atol=1e-10)
    unweighted = clone(clf).fit(Xm, y)
    assert not np.allclose(clf.svm_.coef_, unweighted.svm_.coef_)


@pytest.mark.parametrize("gamma", [0.05, 0.5, 3.0])
def test_svc_on_complete_rows_is_sklearn_rbf_svc(rng, gamma):
    X, _, y = _classification(rng)
    ours = MissingKernelSVC(gamma=gamma, C=2.0, standardize=False)
    ours.fit(X[:90], y[:90])
    ref = SVC(kernel="rbf", gamma=gamma, C=2.0).fit(X[:90], y[:90])
    np.testing.assert_allclose(
        ours.decision_function(X[90:]), ref.decision_function(X[90:]), atol=1e-6
    )
    np.testing.assert_array_equal(ours.support_, ref.support_)


def test_svr_on_complete_rows_is_sklearn_rbf_svr(rng):
    X = rng.normal(size=(100, 3))
    y = np.sin(X[:, 0]) + X[:, 1]
    ours = MissingKernelSVR(gamma=0.4, C=3.0, epsilon=0.05, standardize=False)
    ours.fit(X[:70], y[:70])
    ref = SVR(kernel="rbf", gamma=0.4, C=3.0, epsilon=0.05).fit(X[:70], y[:70])
    np.testing.assert_allclose(ours.predict(X[70:]), ref.predict(X[70:]), atol=1e-6)


def test_prediction_uses_the_full_cross_gram(rng):
    """Computing only the support columns changes nothing."""
    _, Xm, y = _classification(rng)
    clf = MissingKernelSVC(gamma=0.3, C=5.0, standardize=False)
    clf.fit(Xm[:90], y[:90])
    K_full = clf.kernel_(Xm[90:], Xm[:90])
    np.testing.assert_allclose(
        clf.decision_function(Xm[90:]), clf.svm_.decision_function(K_full), atol=1e-12
    )
    assert clf.support_.size < 90


def test_gamma_scale_uses_observed_entries(rng):
    _, Xm, y = _classification(rng)
    clf = MissingKernelSVC(standardize=False).fit(Xm, y)
    expected = 1.0 / (Xm.shape[1] * np.nanvar(Xm))
    assert clf.kernel_.gamma_ == pytest.approx(expected)


class _RecordingDensity(GaussianEMDensity):
    """Gaussian EM that records every training set it is fitted on."""

    seen: list = []  # noqa: RUF012  (shared on purpose: clones must record too)

    def _fit(self, X):
        type(self).seen.append(X.copy())
        super()._fit(X)


def test_density_never_sees_scored_rows(rng):
    _, Xm, y = _classification(rng, n=90)
    ids = np.arange(len(y), dtype=float)
    # An always-observed id column tells which rows each fit saw.
    Xid = np.column_stack([Xm, ids])
    _RecordingDensity.seen = []
    cv = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        MissingKernelSVC(density=_RecordingDensity(), gamma=0.2, standardize=False),
        {"C": [0.5, 2.0]},
        cv=KFold(2, shuffle=True, random_state=1),
    )
    cross_val_score(search, Xid, y, cv=cv)
    outer_train = [set(train) for train, _ in cv.split(Xid)]
    # One fit per inner fold and one refit per outer fold: the fit cache
    # shares a fold's density between the two values of C.
    assert len(_RecordingDensity.seen) == 3 * (2 + 1)
    for seen in _RecordingDensity.seen:
        rows = set(seen[:, -1].astype(int))
        # Every fit uses a subset of one outer training fold, never its test rows.
        assert any(rows <= train for train in outer_train)


# max_iter=5 is one of the grid's values on purpose: it stops before convergence.
@pytest.mark.filterwarnings("ignore:GaussianEMDensity did not converge")
def test_grid_search_over_kernel_and_density_params(rng):
    _, Xm, y = _classification(rng, n=80)
    search = GridSearchCV(
        MissingKernelSVC(density=GaussianEMDensity()),
        {
            "kernel": ["genrbf", "expected_rbf"],
            "density__max_iter": [5, 100],
            "C": [1.0],
        },
        cv=2,
    ).fit(Xm, y)
    assert set(search.cv_results_["param_kernel"]) == {"genrbf", "expected_rbf"}
    assert search.best_estimator_.density_.max_iter in (5, 100)


def test_pipeline_pandas_and_pickle(rng):
    pd = pytest.importorskip("pandas")
    _, Xm, y = _classification(rng)
    df = pd.DataFrame(Xm, columns=[f"f{i}" for i in range(Xm.shape[1])])
    clf = MissingKernelSVC(gamma=0.5).fit(df, y)
    np.testing.assert_array_equal(clf.feature_names_in_, df.columns)
    pipe = make_pipeline(StandardScaler(), MissingKernelSVC()).fit(df, y)
    restored = pickle.loads(pickle.dumps(pipe))
    np.testing.assert_array_equal(restored.predict(df), pipe.predict(df))
    np.testing.assert_allclose(
        restored.decision_function(df), pipe.decision_function(df), atol=0
    )


def test_fully_missing_rows_are_fitted_and_predicted(rng):
    _, Xm, y = _classification(rng)
    Xm[:5] = np.nan
    clf = MissingKernelSVC().fit(Xm, y)
    new = np.full((3, Xm.shape[1]), np.nan)
    pred = clf.predict(new)
    assert pred.shape == (3,) and set(pred) <= set(clf.classes_)
    # All three rows have the same conditional: the same prediction.
    assert len(set(pred)) == 1


@pytest.mark.parametrize(
    "X_bad, y_bad, match",
    [
        ("y_nan", None, r"target y has 1 missing value .* row 3"),
        ("y_inf", None, "Input y contains infinity"),
        ("one_class", None, "at least 2 classes"),
        ("string", None, r"column 1 \(0-based\) mixes numbers and strings"),
        ("empty", None, "0 sample"),
        ("inf_x", None, "infinity"),
    ],
)
def test_bad_training_input(rng, X_bad, y_bad, match):
    _, Xm, y = _classification(rng, n=30)
    y = y.astype(float)
    if X_bad == "y_nan":
        y[3] = np.nan
    elif X_bad == "y_inf":
        y[3] = np.inf
    elif X_bad == "one_class":
        y[:] = 1
    elif X_bad == "string":
        Xm = Xm.astype(object)
        Xm[2, 1] = "high"
    elif X_bad == "empty":
        Xm, y = Xm[:0], y[:0]
    elif X_bad == "inf_x":
        Xm[1, 1] = np.inf
    with pytest.raises(ValueError, match=match):
        MissingKernelSVC().fit(Xm, y)


def test_wrong_number_of_features_at_predict(rng):
    _, Xm, y = _classification(rng, n=40)
    clf = MissingKernelSVC().fit(Xm, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(Xm[:, :-1])


def test_kernel_params_errors(rng):
    _, Xm, y = _classification(rng, n=40)
    with pytest.raises(ValueError, match="not parameters of the kernel"):
        MissingKernelSVC(kernel_params={"nonsense": 1}).fit(Xm, y)
    with pytest.raises(ValueError, match="Unknown kernel"):
        MissingKernelSVC(kernel="genrfb").fit(Xm, y)


def test_transformer_with_kernel_ridge_and_kernel_pca(rng):
    X = rng.normal(size=(120, 3))
    y = X[:, 0] ** 2 + X[:, 1]
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.2] = np.nan

    def model():
        return make_pipeline(
            MissingKernelTransformer(gamma=0.3, standardize=False),
            KernelRidge(kernel="precomputed", alpha=0.1),
        )

    # Complete rows: exactly scikit-learn's RBF kernel ridge.
    ref = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1).fit(X[:90], y[:90])
    np.testing.assert_allclose(
        model().fit(X[:90], y[:90]).predict(X[90:]), ref.predict(X[90:]), atol=1e-8
    )
    # Incomplete rows: the ridge solution on the expected kernel's Gram matrices.
    fitted = model().fit(Xm[:90], y[:90])
    k = fitted[0].kernel_
    dual = np.linalg.solve(k(Xm[:90]) + 0.1 * np.eye(90), y[:90])
    np.testing.assert_allclose(
        fitted.predict(Xm[90:]), k(Xm[90:], Xm[:90]) @ dual, atol=1e-8
    )
    trans = MissingKernelTransformer(gamma=0.3).fit(Xm[:90])
    K = trans.fit_transform(Xm[:90])
    np.testing.assert_allclose(K, K.T, atol=1e-12)
    emb = KernelPCA(n_components=2, kernel="precomputed").fit_transform(K)
    assert emb.shape == (90, 2) and np.all(np.isfinite(emb))
    assert trans.transform(Xm[90:]).shape == (30, 90)
    assert len(trans.get_feature_names_out()) == 90


def test_clone_keeps_density_object_unfitted(rng):
    _, Xm, y = _classification(rng, n=40)
    dens = GaussianEMDensity(max_iter=400)
    clf = MissingKernelSVC(density=dens).fit(Xm, y)
    assert not hasattr(dens, "mean_")  # the user's object is not fitted in place
    assert clf.density_.max_iter == 400 and hasattr(clf.density_, "mean_")
    assert clone(clf).get_params()["density"].max_iter == 400


@pytest.mark.parametrize("Estimator", [MissingKernelSVC, MissingKernelSVR])
def test_prediction_in_row_chunks_within_working_memory(rng, monkeypatch, Estimator):
    import sklearn

    from missingkernels.estimators import _svm_base

    _, Xm, y = _classification(rng, n=150)
    model = Estimator(gamma=0.3).fit(Xm[:90], y[:90])
    methods = [m for m in ("predict", "decision_function") if hasattr(model, m)]
    whole = [getattr(model, m)(Xm[90:]) for m in methods]
    chunks: list[int] = []
    real = _svm_base.cross_gram_on_support

    def recording(kernel, X, *rest):
        chunks.append(X.shape[0])
        return real(kernel, X, *rest)

    monkeypatch.setattr(_svm_base, "cross_gram_on_support", recording)
    # Room for 7 rows of a 90-column float64 Gram: 60 rows in 9 chunks.
    with sklearn.config_context(working_memory=7 * 8 * 90 / 2**20):
        parts = [getattr(model, m)(Xm[90:]) for m in methods]
    assert chunks == ([7] * 8 + [4]) * len(methods)
    for got, expected in zip(parts, whole, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_support_vectors_conditioned_once_across_prediction_chunks(rng):
    """Predicting in chunks conditions the support vectors once (the kernel
    keeps them, and their factors), not once per chunk; the predictions are
    those of a model that conditions them afresh."""
    import sklearn

    _, Xm, y = _classification(rng, n=150)
    model = MissingKernelSVC(gamma=0.3).fit(Xm[:90], y[:90])
    fresh = clone(model).fit(Xm[:90], y[:90])
    density = model.kernel_.density_
    sizes: list[int] = []
    real = density.conditionals

    def recording(X):
        sizes.append(len(X))
        return real(X)

    density.conditionals = recording
    with sklearn.config_context(working_memory=7 * 8 * 90 / 2**20):
        got = model.decision_function(Xm[90:])
        again = model.decision_function(Xm[90:])
    n_support = len(model.support_)
    assert n_support not in (7, 4)
    assert sizes.count(n_support) == 1
    assert sorted(set(sizes) - {n_support}) == [4, 7]
    np.testing.assert_array_equal(got, again)
    np.testing.assert_allclose(got, fresh.decision_function(Xm[90:]), rtol=1e-12)


@pytest.mark.parametrize("route", ["exact", "features"])
def test_a_weight_of_two_is_the_row_twice_with_the_density_held_fixed(route):
    """With the density and gamma fixed (nothing fitted from the rows but the
    SVM), weighting a complete row by 2 is duplicating it."""
    from _helpers import FixedGaussian, mcar, random_gaussian

    rng = np.random.default_rng(12)
    mean, S = random_gaussian(rng, 3)
    X = rng.multivariate_normal(mean, S, size=60)
    y = (X[:, 0] - X[:, 1] > mean[0] - mean[1]).astype(int)
    X = mcar(rng, X, 0.25)
    X[0] = rng.multivariate_normal(mean, S)  # a complete row, weighted below
    params = dict(
        density=FixedGaussian(mean, S), gamma=0.3, C=2.0, tol=1e-8, route=route,
        n_kernel_features=400, random_state=0, standardize=False,
    )  # fmt: skip
    weights = np.ones(len(X))
    weights[0] = 2.0
    weighted = MissingKernelSVC(**params).fit(X, y, sample_weight=weights)
    twice = MissingKernelSVC(**params).fit(np.vstack([X[:1], X]), np.r_[y[:1], y])
    T = mcar(rng, rng.multivariate_normal(mean, S, size=30), 0.25)
    np.testing.assert_allclose(
        weighted.decision_function(T), twice.decision_function(T), atol=1e-3
    )


def test_a_regressor_pickled_before_the_module_split_still_loads(rng):
    # MissingKernelSVR lived in estimators._svm; saved models name that module.
    import pickle

    X = rng.normal(size=(30, 2))
    model = MissingKernelSVR().fit(X, X[:, 0])
    new = pickle.dumps(model)
    old = new.replace(
        b"missingkernels.estimators._svr", b"missingkernels.estimators._svm"
    )
    assert old != new
    np.testing.assert_array_equal(pickle.loads(old).predict(X), model.predict(X))
