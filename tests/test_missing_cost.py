"""What the missing entries cost: uncertainty_from_missing, value_of_measuring,
plausible_values.

References: the mean of the completed decision equals the decision for the
kernels linear in a row's distribution (within its Monte Carlo error) and
follows ``b + (f - b) sqrt(E k(X, X'))`` for genRBF; the second moment of
the completed decision for the expected RBF with a Gaussian conditional in
closed form; brute force through plausible_values and ordinary predictions;
calibration of the flip probability against revealed truth.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV

from missingkernels.estimators import MissingKernelSVC, MissingKernelSVR

pytestmark = pytest.mark.numerics

UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2
# Monte Carlo checks: a mean within Z standard errors (two-sided 4.5 sigma:
# 7e-6 per comparison, so a few hundred comparisons fail by chance < 0.2%).
Z = 4.5


def _correlated(rng, n, d=4):
    A = rng.normal(size=(d, d))
    S = A @ A.T / d + 0.3 * np.eye(d)
    return rng.multivariate_normal(np.zeros(d), S, size=n)


def _classification(seed=0, n=160, d=4, rate=0.3):
    rng = np.random.default_rng(seed)
    X = _correlated(rng, n, d)
    y = (X[:, 0] + np.sin(2 * X[:, 1]) - 0.5 * X[:, 2] > 0).astype(int)
    Xm = X.copy()
    Xm[rng.random(X.shape) < rate] = np.nan
    return X, Xm, y


def _test_rows(seed=1, n=12, d=4, rate=0.4):
    rng = np.random.default_rng(seed)
    X = _correlated(np.random.default_rng(0), 400, d)[-n:]  # same law as training
    Xm = X.copy()
    Xm[rng.random(X.shape) < rate] = np.nan
    Xm[0] = X[0]  # one complete row
    return Xm


def _mc_close(mean, sd, expected, n_draws):
    """|mean - expected| within Z Monte Carlo standard errors (exact for sd 0)."""
    se = sd / np.sqrt(n_draws)
    bound = Z * se + 64 * UNIT_ROUNDOFF * (1 + np.abs(expected))
    assert np.all(np.abs(mean - expected) <= bound), np.c_[mean, expected, se]


# -- the mean of the completed decision ------------------------------------------


@pytest.mark.parametrize(
    "kernel, density, route",
    [
        ("expected_rbf", None, "exact"),
        ("expected_linear", None, "exact"),
        ("expected_polynomial", None, "exact"),
        ("expected_rbf", "gaussian_mixture", "exact"),
        ("expected_rbf", "factor_analysis", "exact"),
        ("expected_rbf", "mice", "exact"),
        ("expected_rbf", "iterative", "exact"),
        ("expected_rbf", None, "features"),
    ],
)
def test_completed_mean_is_the_decision_for_unnormalised_kernels(
    kernel, density, route
):
    _, Xm, y = _classification()
    params = {"n_components": 2} if density == "gaussian_mixture" else None
    model = MissingKernelSVC(
        kernel=kernel, density=density, density_params=params, route=route,
        random_state=0,
    ).fit(Xm, y)  # fmt: skip
    Xt = _test_rows()
    n_draws = 600
    u = model.uncertainty_from_missing(Xt, n_draws=n_draws, random_state=3)
    np.testing.assert_array_equal(u["decision"], model.decision_function(Xt))
    incomplete = np.isnan(Xt).any(axis=1)
    assert (u["completed_sd"].to_numpy() > 0).tolist() == incomplete.tolist()
    _mc_close(u["completed_mean"], u["completed_sd"], u["decision"], n_draws)


def test_completed_mean_for_the_mixed_kernel_and_latent_classes():
    rng = np.random.default_rng(5)
    X, Xm, y = _classification(seed=5, n=150, d=3)
    frame = pd.DataFrame(Xm, columns=["a", "b", "c"])
    colour = np.where(X[:, 0] + rng.normal(size=len(X)) > 0, "red", "blue")
    frame["colour"] = pd.Series(colour, dtype=object).where(
        rng.random(len(X)) > 0.3, None
    )
    model = MissingKernelSVC(
        kernel="expected_mixed_rbf", density="latent_class",
        density_params={"n_components": 2}, random_state=0,
    ).fit(frame, y)  # fmt: skip
    n_draws = 600
    u = model.uncertainty_from_missing(frame.iloc[:15], n_draws, random_state=1)
    _mc_close(u["completed_mean"], u["completed_sd"], u["decision"], n_draws)


def test_completed_mean_for_belanches_kernel_on_binary_answers():
    rng = np.random.default_rng(6)
    latent = rng.normal(size=(150, 1))
    X = (latent + rng.normal(size=(150, 5)) > 0).astype(float)
    y = (latent[:, 0] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    model = MissingKernelSVC(kernel="belanche_k1", random_state=0).fit(X, y)
    n_draws = 600
    u = model.uncertainty_from_missing(X[:20], n_draws, random_state=2)
    _mc_close(u["completed_mean"], u["completed_sd"], u["decision"], n_draws)
    copies = model.plausible_values(X[:20], n_draws=3, random_state=2)
    assert set(np.unique(copies[0])) <= {0.0, 1.0}


def _conditional_moments(model, rows):
    """Means and covariances of the rows' conditionals (standardised units)."""
    X = (rows - model.x_center_) / model.x_scale_
    _, cond = model.kernel_._conditionals(X)
    mu = cond.first_moments()
    A = cond.second_moments() - mu[:, :, None] * mu[:, None, :]
    return mu, A


@pytest.mark.parametrize("metric", ["euclidean", "mahalanobis"])
def test_genrbf_completed_mean_follows_the_normaliser(metric):
    _, Xm, y = _classification(seed=2)
    model = MissingKernelSVC(metric=metric, random_state=0).fit(Xm, y)
    Xt = _test_rows(seed=4)
    n_draws = 600
    u = model.uncertainty_from_missing(Xt, n_draws=n_draws, random_state=0)
    _, A = _conditional_moments(model, Xt)
    gamma = model.kernel_.gamma_
    M = model.kernel_.metric_covariance_ if metric == "mahalanobis" else None
    d = Xt.shape[1]
    Minv = np.eye(d) if M is None else np.linalg.inv(M)
    # E k(X, X') over independent copies: det(I + 4 gamma A M^-1)^(-1/2).
    logdet = np.array(
        [np.linalg.slogdet(np.eye(d) + 4 * gamma * a @ Minv)[1] for a in A]
    )
    b = model.intercept_[0]
    expected = b + (u["decision"] - b) * np.exp(-logdet / 4)
    _mc_close(u["completed_mean"], u["completed_sd"], expected, n_draws)
    # The relation is visible: incomplete rows' means move toward b.
    moved = np.abs(expected - u["decision"])[1:]
    assert moved.max() > 10 * (u["completed_sd"] / np.sqrt(n_draws)).max() / Z


# -- the second moment in closed form ----------------------------------------------


def _expected_rbf_to_point(x, mu, A, gamma):
    """E_S exp(-gamma ||x - S||^2), S ~ N(mu_i, A_i), for every support row i."""
    d = len(x)
    out = np.empty(len(mu))
    for i in range(len(mu)):
        P = A[i] + np.eye(d) / (2 * gamma)
        delta = x - mu[i]
        _, logdet = np.linalg.slogdet(np.eye(d) + 2 * gamma * A[i])
        out[i] = np.exp(-0.5 * logdet - 0.5 * delta @ np.linalg.solve(P, delta))
    return out


def _completed_moments(mu_x, A_x, mu, A, gamma, c, b):
    """E g and Var g for g(z) = sum_i c_i E_S k(x_z, S_i) + b, x_z ~ N(mu_x, A_x).

    ``E_S k(x, S_i) = a_i exp(-(x - mu_i)^T P_i (x - mu_i) / 2)`` with
    ``P_i = (A_i + I / (2 gamma))^-1``: a Gaussian function of x, so the mean
    and every product of two are Gaussian integrals over x = mu_x + B w,
    w ~ N(0, I): ``E exp(r^T w - w^T M w / 2) = det(I + M)^(-1/2)
    exp(r^T (I + M)^-1 r / 2)``.
    """
    d = len(mu_x)
    w, V = np.linalg.eigh(A_x)
    keep = w > 1e-12 * max(w.max(), 1.0)
    B = V[:, keep] * np.sqrt(w[keep])  # A_x = B B^T
    k = B.shape[1]
    n = len(mu)
    P = np.array([np.linalg.inv(A[i] + np.eye(d) / (2 * gamma)) for i in range(n)])
    a = np.array([np.linalg.slogdet(np.eye(d) + 2 * gamma * A[i])[1] for i in range(n)])
    a = np.exp(-0.5 * a)

    def gaussian_integral(Q, h, const):
        # E exp(-x^T Q x / 2 + h^T x - const / 2) over x = mu_x + B w.
        c0 = -0.5 * mu_x @ Q @ mu_x + h @ mu_x - 0.5 * const
        M = B.T @ Q @ B
        r = B.T @ (h - Q @ mu_x)
        IM = np.eye(k) + M
        return np.exp(
            c0 - 0.5 * np.linalg.slogdet(IM)[1] + 0.5 * r @ np.linalg.solve(IM, r)
        )

    first = np.array(
        [
            a[i] * gaussian_integral(P[i], P[i] @ mu[i], mu[i] @ P[i] @ mu[i])
            for i in range(n)
        ]
    )
    second = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            Q = P[i] + P[j]
            h = P[i] @ mu[i] + P[j] @ mu[j]
            const = mu[i] @ P[i] @ mu[i] + mu[j] @ P[j] @ mu[j]
            second[i, j] = second[j, i] = a[i] * a[j] * gaussian_integral(Q, h, const)
    mean = c @ first + b
    square = c @ second @ c + 2 * b * (c @ first) + b * b
    return mean, square - mean**2


def test_completed_variance_matches_the_closed_form_for_the_expected_rbf():
    _, Xm, y = _classification(seed=7, n=90, d=3)
    model = MissingKernelSVC(kernel="expected_rbf", random_state=0).fit(Xm, y)
    gamma = model.kernel_.gamma_
    mu, A = _conditional_moments(
        model, model.support_vectors_ * model.x_scale_ + model.x_center_
    )
    c, b = model.dual_coef_[0], model.intercept_[0]
    Xt = _test_rows(seed=8, n=6, d=3, rate=0.5)
    Xt[1, :2] = np.nan  # two missing entries in one row
    mu_x, A_x = _conditional_moments(model, Xt)
    # The reference's kernel reproduces the model's decision on a complete row.
    x0 = (Xt[0] - model.x_center_) / model.x_scale_
    f0 = c @ _expected_rbf_to_point(x0, mu, A, gamma) + b
    decision = model.decision_function(Xt)
    np.testing.assert_allclose(f0, decision[0], rtol=1e-9, atol=1e-12)
    n_draws = 4000
    u = model.uncertainty_from_missing(Xt, n_draws=n_draws, random_state=11)
    drawn = 0
    for r in np.flatnonzero(np.isnan(Xt).any(axis=1)):
        mean, var = _completed_moments(mu_x[r], A_x[r], mu, A, gamma, c, b)
        np.testing.assert_allclose(mean, decision[r], rtol=1e-8, atol=1e-10)
        # Monte Carlo variance against the closed form: its standard error is
        # sqrt((m4 - var^2) / n), m4 from the draws themselves.
        g = _completed_decisions(model, Xt[r : r + 1], n_draws, 11)
        np.testing.assert_allclose(g.std(ddof=1), u["completed_sd"].iloc[r], rtol=1e-12)
        m4 = np.mean((g - g.mean()) ** 4)
        se = np.sqrt(max(m4 - g.var() ** 2, 0.0) / n_draws)
        assert abs(g.var(ddof=1) - var) <= Z * se, (r, g.var(ddof=1), var, se)
        drawn += 1
    assert drawn >= 4


def _completed_decisions(model, row, n_draws, seed):
    """The completed decisions of one row, through plausible_values and
    ordinary decision_function calls (one completed row at a time)."""
    copies = model.plausible_values(row, n_draws=n_draws, random_state=seed)
    return model.decision_function(np.vstack(copies))


# -- brute force through plausible_values ---------------------------------------------


def _roundtrip_tolerance(model, rows, values):
    """Decision error from unstandardising the draws and standardising them
    again: each entry moves by at most 4u (|center / scale| + |z|), and the
    RBF moves by at most sqrt(2 gamma / e) per unit of ||dx||; a sum over
    support vectors adds n_sv u sum|c| of rounding."""
    c = np.abs(model.dual_coef_).sum()
    shift = (
        4
        * UNIT_ROUNDOFF
        * (
            np.abs(model.x_center_ / model.x_scale_).max()
            + np.nanmax(np.abs(rows))
            + 10
        )
    )
    lipschitz = np.sqrt(2 * model.kernel_.gamma_ / np.e) * np.sqrt(rows.shape[1])
    n_sv = model.dual_coef_.shape[1]
    return c * (lipschitz * shift + 4 * n_sv * UNIT_ROUNDOFF) + 4 * UNIT_ROUNDOFF * (
        1 + np.abs(values)
    )


def test_uncertainty_equals_brute_force_over_plausible_values():
    _, Xm, y = _classification(seed=3)
    model = MissingKernelSVC(random_state=0, probability=True).fit(Xm, y)
    Xt = _test_rows(seed=5)
    n_draws = 40
    u = model.uncertainty_from_missing(Xt, n_draws=n_draws, random_state=7)
    copies = model.plausible_values(Xt, n_draws=n_draws, random_state=7)
    g = np.column_stack([model.decision_function(c) for c in copies])
    labels = np.column_stack([model.predict(c) for c in copies])
    proba = np.stack([model.predict_proba(c) for c in copies], axis=1)
    tol = _roundtrip_tolerance(model, Xt, g)
    np.testing.assert_array_less(
        np.abs(g.mean(axis=1) - u["completed_mean"]), tol.max(axis=1)
    )
    np.testing.assert_allclose(
        g.std(axis=1, ddof=1), u["completed_sd"], atol=2 * tol.max()
    )
    np.testing.assert_allclose(
        np.quantile(g, 0.05, axis=1), u["completed_q05"], atol=tol.max()
    )
    np.testing.assert_allclose(
        np.quantile(g, 0.95, axis=1), u["completed_q95"], atol=tol.max()
    )
    flips = (labels != model.predict(Xt)[:, None]).mean(axis=1)
    np.testing.assert_array_equal(flips, u["flip_probability"])
    for k, label in enumerate(model.classes_):
        low = np.quantile(proba[:, :, k], 0.05, axis=1)
        np.testing.assert_allclose(low, u[f"proba_q05_{label}"], atol=1e-9)
        np.testing.assert_allclose(
            model.predict_proba(Xt)[:, k], u[f"proba_{label}"], rtol=0, atol=0
        )


def test_regression_uncertainty_and_value_equal_brute_force():
    rng = np.random.default_rng(9)
    X = _correlated(rng, 150)
    target = 30 * X[:, 0] + 10 * np.tanh(X[:, 1]) + 100
    Xm = X.copy()
    Xm[rng.random(X.shape) < 0.3] = np.nan
    model = MissingKernelSVR(C=10).fit(Xm, target)
    Xt = _test_rows(seed=6)
    n_draws = 30
    u = model.uncertainty_from_missing(Xt, n_draws=n_draws, random_state=2)
    copies = model.plausible_values(Xt, n_draws=n_draws, random_state=2)
    g = np.column_stack([model.predict(c) for c in copies])
    # The SVR's decision is in standardised target units: the tolerance scales.
    tol = _roundtrip_tolerance(model, Xt, g / model.y_scale_).max() * model.y_scale_
    np.testing.assert_array_equal(u["prediction"], model.predict(Xt))
    np.testing.assert_allclose(g.mean(axis=1), u["completed_mean"], atol=tol)
    np.testing.assert_allclose(
        np.quantile(g, 0.95, axis=1), u["completed_q95"], atol=tol
    )
    assert u["completed_sd"].iloc[0] == 0
    # value_of_measuring: each missing entry filled alone with the same draws.
    value = model.value_of_measuring(Xt, n_draws=n_draws, random_state=2)
    for r, j in np.argwhere(np.isnan(Xt))[:12]:
        filled = np.repeat(Xt[r : r + 1], n_draws, axis=0)
        filled[:, j] = [c[r, j] for c in copies]
        ref = model.predict(filled).std(ddof=1)
        np.testing.assert_allclose(value.iloc[r, j], ref, rtol=1e-6, atol=tol)
    assert value.isna().to_numpy().tolist() == (~np.isnan(Xt)).tolist()


def test_value_of_measuring_equals_brute_force_for_a_classifier():
    _, Xm, y = _classification(seed=4)
    model = MissingKernelSVC(random_state=0).fit(Xm, y)
    Xt = _test_rows(seed=2)
    n_draws = 25
    value = model.value_of_measuring(Xt, n_draws=n_draws, random_state=5)
    copies = model.plausible_values(Xt, n_draws=n_draws, random_state=5)
    today = model.predict(Xt)
    for r, j in np.argwhere(np.isnan(Xt)):
        filled = np.repeat(Xt[r : r + 1], n_draws, axis=0)
        filled[:, j] = [c[r, j] for c in copies]
        assert value.iloc[r, j] == np.mean(model.predict(filled) != today[r])


# -- rows, columns, and what complete rows cost ---------------------------------------


def test_complete_rows_cost_nothing_and_the_frame_keeps_the_index(monkeypatch):
    _, Xm, y = _classification(seed=6)
    frame = pd.DataFrame(Xm, columns=["age", "bmi", "glucose", "insulin"])
    model = MissingKernelSVC(random_state=0).fit(frame, y)
    test = pd.DataFrame(_test_rows(seed=3), columns=frame.columns)
    test.index = [f"patient{i}" for i in range(len(test))]
    scored = []
    original = MissingKernelSVC._score_standardized

    def counting(self, X, methods, label):
        scored.append(len(X))
        return original(self, X, methods, label)

    monkeypatch.setattr(MissingKernelSVC, "_score_standardized", counting)
    n_draws = 7
    u = model.uncertainty_from_missing(test, n_draws=n_draws, random_state=0)
    incomplete = int(test.isna().any(axis=1).sum())
    assert sum(scored) == len(test) + n_draws * incomplete
    assert list(u.index) == list(test.index)
    complete = ~test.isna().any(axis=1).to_numpy()
    assert complete.sum() >= 1
    assert (u.loc[complete, "completed_sd"] == 0).all()
    assert (u.loc[complete, "flip_probability"] == 0).all()
    assert (u.loc[complete, "completed_mean"] == u.loc[complete, "decision"]).all()
    np.testing.assert_array_equal(u["n_missing"], test.isna().sum(axis=1))
    value = model.value_of_measuring(test, n_draws=5, random_state=0)
    assert list(value.columns) == list(test.columns)
    assert list(value.index) == list(test.index)
    assert (value.isna().to_numpy() == test.notna().to_numpy()).all()
    assert ((value.fillna(0) >= 0) & (value.fillna(0) <= 1)).all().all()


def test_a_rows_draws_do_not_depend_on_the_other_rows():
    _, Xm, y = _classification(seed=8)
    model = MissingKernelSVC(random_state=0).fit(Xm, y)
    Xt = _test_rows(seed=9)
    together = model.uncertainty_from_missing(Xt, n_draws=20, random_state=4)
    for r in (1, 5):
        alone = model.uncertainty_from_missing(
            Xt[r : r + 1], n_draws=20, random_state=4
        )
        np.testing.assert_allclose(
            alone.iloc[0].to_numpy(float), together.iloc[r].to_numpy(float), rtol=1e-12
        )
    other = model.uncertainty_from_missing(Xt, n_draws=20, random_state=5)
    assert not np.allclose(other["completed_mean"], together["completed_mean"])


def test_plausible_values_come_back_in_the_users_units_and_codes():
    rng = np.random.default_rng(12)
    n = 200
    glucose = rng.normal(120, 30, n)
    insulin = 2.0 * glucose + rng.normal(0, 20, n)
    smoker = np.where(glucose + rng.normal(0, 30, n) > 120, "yes", "no")
    stage = pd.Categorical(
        np.where(glucose > 140, "late", np.where(glucose > 100, "mid", "early")),
        categories=["early", "mid", "late"], ordered=True,
    )  # fmt: skip
    frame = pd.DataFrame(
        {"glucose": glucose, "insulin": insulin, "smoker": smoker, "stage": stage}
    )
    y = (glucose > 125).astype(int)
    hidden = frame.copy()
    hidden.loc[rng.random(n) < 0.3, "insulin"] = np.nan
    hidden.loc[rng.random(n) < 0.2, "smoker"] = None
    hidden.loc[rng.random(n) < 0.2, "stage"] = np.nan
    model = MissingKernelSVC(
        density="latent_class", density_params={"n_components": 2}, random_state=0
    ).fit(hidden, y)
    copies = model.plausible_values(hidden, n_draws=3, random_state=0)
    assert len(copies) == 3
    for copy in copies:
        assert list(copy.index) == list(hidden.index)
        assert not copy.isna().any().any()
        observed = hidden.notna()
        for col in hidden.columns:
            np.testing.assert_array_equal(
                copy.loc[observed[col], col].to_numpy(), hidden.loc[observed[col], col]
            )
        assert set(copy["smoker"]) <= {"yes", "no"}
        assert copy["stage"].dtype == hidden["stage"].dtype
    # Insulin drawn on its own scale: near 2 x glucose, not standardised values.
    drawn = hidden["insulin"].isna()
    residual = np.concatenate(
        [(c.loc[drawn, "insulin"] - 2 * c.loc[drawn, "glucose"]) for c in copies]
    )
    assert abs(np.mean(residual)) < 15 and 5 < np.std(residual) < 80
    assert not copies[0].equals(copies[1])


# -- several classes, searches, validation ------------------------------------------


def test_several_classes_report_shares_and_the_change_probability():
    X, Xm, _ = _classification(seed=10)
    y = np.digitize(X[:, 0] + X[:, 1], [-0.7, 0.7])
    model = MissingKernelSVC(random_state=0, probability=True).fit(Xm, y)
    Xt = _test_rows(seed=10)
    u = model.uncertainty_from_missing(Xt, n_draws=30, random_state=0)
    shares = u[[f"completed_share_{c}" for c in model.classes_]].to_numpy()
    np.testing.assert_allclose(shares.sum(axis=1), 1.0, rtol=1e-12)
    own = shares[np.arange(len(Xt)), np.searchsorted(model.classes_, u["prediction"])]
    np.testing.assert_allclose(u["change_probability"], 1 - own, atol=1e-12)
    assert "flip_probability" not in u
    copies = model.plausible_values(Xt, n_draws=30, random_state=0)
    labels = np.column_stack([model.predict(c) for c in copies])
    np.testing.assert_array_equal(
        u["change_probability"], (labels != model.predict(Xt)[:, None]).mean(axis=1)
    )
    for c in model.classes_:
        assert (u[f"proba_q05_{c}"] <= u[f"proba_q95_{c}"]).all()
    assert (u["change_probability"] > 0).any()


def test_a_grid_searchs_best_estimator_exposes_it():
    _, Xm, y = _classification(seed=11, n=80)
    search = GridSearchCV(MissingKernelSVC(random_state=0), {"C": [0.5, 2.0]}, cv=3)
    search.fit(Xm, y)
    u = search.best_estimator_.uncertainty_from_missing(
        Xm[:5], n_draws=5, random_state=0
    )
    assert len(u) == 5


@pytest.mark.parametrize("n_draws", [1, 0, -3, 2.5, True, "10"])
def test_bad_n_draws_is_refused(n_draws):
    _, Xm, y = _classification(seed=12, n=60)
    model = MissingKernelSVC(random_state=0).fit(Xm, y)
    with pytest.raises((ValueError, TypeError), match="n_draws"):
        model.uncertainty_from_missing(Xm[:3], n_draws=n_draws)
    with pytest.raises((ValueError, TypeError), match="n_draws"):
        model.value_of_measuring(Xm[:3], n_draws=n_draws)


def test_unfitted_and_mismatched_input_are_refused():
    with pytest.raises(NotFittedError):
        MissingKernelSVC().uncertainty_from_missing(np.zeros((2, 3)))
    _, Xm, y = _classification(seed=12, n=60)
    model = MissingKernelSVC(random_state=0).fit(Xm, y)
    with pytest.raises(ValueError, match="features"):
        model.value_of_measuring(Xm[:3, :2])
    with pytest.raises(ValueError, match="n_draws"):
        model.plausible_values(Xm[:3], n_draws=0)


# -- calibration against revealed truth, and what to measure next -------------------


def _simulated(rng, n, kind):
    """Complete rows from a Gaussian or a two-component mixture, and labels."""
    d = 4
    A = np.random.default_rng(0).normal(size=(d, d))
    S = A @ A.T / d + 0.3 * np.eye(d)
    X = rng.multivariate_normal(np.zeros(d), S, size=n)
    if kind == "mixture":
        side = np.where(rng.random(n) < 0.5, 1.2, -1.2)[:, None]
        X = 0.7 * X + side * np.array([1.0, -1.0, 1.0, 0.5])
    y = (X[:, 0] + np.sin(2 * X[:, 1]) - 0.5 * X[:, 2] > 0).astype(int)
    return X, y


def _hidden(rng, X, mechanism, rate):
    """MCAR at ``rate``, or MAR: x0 always observed, the others hidden more
    often when x0 is large (probability 2 rate / (1 + exp(-2 x0)))."""
    Xm = X.copy()
    if mechanism == "mcar":
        Xm[rng.random(X.shape) < rate] = np.nan
        return Xm
    p = 2 * rate / (1 + np.exp(-2 * X[:, 0]))
    for j in range(1, X.shape[1]):
        Xm[rng.random(len(X)) < p, j] = np.nan
    return Xm


def _fitted(kind, mechanism, seed, n_test, test_rate):
    rng = np.random.default_rng(seed)
    X, y = _simulated(rng, 300, kind)
    density = "gaussian_mixture" if kind == "mixture" else None
    params = {"n_components": 2} if kind == "mixture" else None
    model = MissingKernelSVC(density=density, density_params=params, random_state=0)
    model.fit(_hidden(rng, X, mechanism, 0.3), y)
    truth, _ = _simulated(rng, n_test, kind)
    return model, truth, _hidden(rng, truth, mechanism, test_rate)


CASES = [(k, m) for k in ("gaussian", "mixture") for m in ("mcar", "mar")]


@pytest.mark.parametrize("kind, mechanism", CASES)
def test_flip_probability_is_calibrated_against_the_revealed_truth(kind, mechanism):
    model, truth, hidden = _fitted(kind, mechanism, seed=1, n_test=1000, test_rate=0.4)
    u = model.uncertainty_from_missing(hidden, n_draws=100, random_state=0)
    incomplete = np.isnan(hidden).any(axis=1)
    p = u["flip_probability"].to_numpy()[incomplete]
    flipped = (model.predict(truth) != model.predict(hidden))[incomplete].astype(float)
    # Calibration in the large: the flips counted against their binomial spread.
    z = (flipped.sum() - p.sum()) / np.sqrt(np.sum(p * (1 - p)))
    assert abs(z) <= 3, z
    # Reliability: each bin of predicted probability (above the lowest one,
    # where rows binned on a Monte Carlo p of 0 still flip at their true,
    # small rate) against its observed rate.
    for low, high in [(0.05, 0.2), (0.2, 0.5), (0.5, 1.01)]:
        rows = (p >= low) & (p < high)
        if rows.sum() >= 30:
            se = np.sqrt(np.mean(p[rows] * (1 - p[rows])) / rows.sum())
            assert abs(flipped[rows].mean() - p[rows].mean()) <= 3.5 * se
    # Brier score against the constant forecast (the observed flip rate),
    # one-sided, two standard errors of the paired difference.
    gain = (flipped.mean() - flipped) ** 2 - (p - flipped) ** 2
    assert gain.mean() > 2 * gain.std(ddof=1) / np.sqrt(len(gain))


@pytest.mark.parametrize("kind, mechanism", CASES)
def test_measuring_the_top_ranked_entry_resolves_more_flips(kind, mechanism):
    model, truth, hidden = _fitted(kind, mechanism, seed=2, n_test=3000, test_rate=0.5)
    final = model.predict(truth)
    today = model.predict(hidden)
    # Rows whose decision the missing entries flip, with a choice to make.
    rows = np.flatnonzero((np.isnan(hidden).sum(axis=1) >= 2) & (final != today))
    assert len(rows) >= 200
    value = model.value_of_measuring(hidden[rows], n_draws=50, random_state=0)
    cells = np.argwhere(np.isnan(hidden[rows]))  # (row in rows, column)
    revealed = hidden[rows][cells[:, 0]]
    revealed[np.arange(len(cells)), cells[:, 1]] = truth[rows[cells[:, 0]], cells[:, 1]]
    resolved = model.predict(revealed) == final[rows[cells[:, 0]]]
    top, chance = np.empty(len(rows)), np.empty(len(rows))
    for i in range(len(rows)):
        mine = cells[:, 0] == i
        worth = value.to_numpy()[i, cells[mine, 1]]
        top[i] = resolved[mine][np.argmax(worth)]
        chance[i] = resolved[mine].mean()  # a missing entry chosen at random
    gain = top - chance
    # One-sided, two standard errors of the paired difference.
    assert gain.mean() > 2 * gain.std(ddof=1) / np.sqrt(len(gain)), gain.mean()


# -- pipelines and searches ------------------------------------------------------------


def _log_array(X):
    return np.log(np.asarray(X, dtype=float))


def test_the_functions_reach_a_pipelines_last_step_and_a_searchs_best():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    import missingkernels as mk

    _, Xm, y = _classification(seed=13, n=100)
    frame = pd.DataFrame(np.exp(Xm), columns=list("abcd"), index=np.arange(100) + 500)
    # A step that returns an array (NaN kept, names and index lost).
    log = FunctionTransformer(_log_array)
    pipe = make_pipeline(log, MissingKernelSVC(random_state=0)).fit(frame, y)
    rows = frame.iloc[:8]
    u = mk.uncertainty_from_missing(pipe, rows, n_draws=10, random_state=0)
    direct = pipe[-1].uncertainty_from_missing(
        np.log(rows.to_numpy()), n_draws=10, random_state=0
    )
    assert list(u.index) == list(rows.index)
    np.testing.assert_array_equal(u.to_numpy(), direct.to_numpy())
    np.testing.assert_array_equal(u["prediction"], pipe.predict(rows))
    value = mk.value_of_measuring(pipe, rows, n_draws=5, random_state=0)
    assert list(value.index) == list(rows.index)
    copies = mk.plausible_values(pipe, rows, n_draws=2, random_state=0)
    assert len(copies) == 2 and not np.isnan(copies[0]).any()
    search = GridSearchCV(pipe, {"missingkernelsvc__C": [1.0, 3.0]}, cv=3).fit(frame, y)
    u = mk.uncertainty_from_missing(search, rows, n_draws=10, random_state=0)
    assert list(u.index) == list(rows.index)
    with pytest.raises(TypeError, match="MissingKernelSVC or MissingKernelSVR"):
        mk.uncertainty_from_missing(make_pipeline(log).fit(frame), rows)


def test_each_method_reports_progress_under_its_own_name(monkeypatch):
    """The progress bar of a long call names the method the user called (the
    regressor's uncertainty_from_missing said "value_of_measuring")."""
    from missingkernels import MissingKernelSVR

    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    X[rng.random(X.shape) < 0.2] = np.nan
    labels = []
    original = MissingKernelSVR._score_standardized

    def recording(self, X, methods, label):
        labels.append(label)
        return original(self, X, methods, label)

    model = MissingKernelSVR(random_state=0).fit(X, y)
    monkeypatch.setattr(MissingKernelSVR, "_score_standardized", recording)
    model.uncertainty_from_missing(X[:10], n_draws=3, random_state=0)
    assert labels and set(labels) == {"uncertainty_from_missing"}
    labels.clear()
    model.value_of_measuring(X[:10], n_draws=3, random_state=0)
    assert labels and set(labels) == {"value_of_measuring"}
