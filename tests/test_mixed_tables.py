"""Mixed numeric/nominal tables: the latent-class density, the mixed kernel's
expectation against naive and Monte Carlo references, its reductions to
genRBF and Belanche K1, and DataFrame input end to end."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from missingkernels import MissingKernelSVC, MissingKernelSVR, get_kernel
from missingkernels._table_encoding import UnknownCategoryWarning
from missingkernels.conditionals import (
    CategoricalConditionals,
    GaussianConditionals,
    MixedConditionals,
)
from missingkernels.densities import LatentClassDensity
from missingkernels.kernels import (
    RBF,
    ExpectedMixedRBFKernel,
    MixedRBFKernel,
    RBFMatching,
    SimpleMatching,
)
from missingkernels.kernels._expectation_table import expected_gram
from missingkernels.utils.estimator_checks import check_density, check_kernel

# Compared with references at tight tolerances: scripts/test.sh reruns these
# tests under other OpenBLAS kernels (CONTRIBUTING: reproduce another machine).
pytestmark = pytest.mark.numerics

# -- simulated mixed tables -------------------------------------------------------


def _mixed_rows(rng, n=80, p=3, q=2, n_cats=(3, 2), rate=0.25):
    """Numeric columns first, then nominal codes; MCAR holes, some rows with
    every numeric or every nominal entry missing, one row fully missing, a
    few complete rows."""
    z = rng.random(n) < 0.5
    X = rng.normal(size=(n, p)) + np.where(z[:, None], 1.5, -1.0)
    codes = np.column_stack(
        [
            np.where(z, rng.integers(0, c, n), rng.integers(0, max(1, c - 1), n))
            for c in n_cats[:q]
        ]
    )
    T = np.hstack([X, codes.astype(float)])
    T[rng.random(T.shape) < rate] = np.nan
    T[:6] = np.hstack([rng.normal(size=(6, p)), rng.integers(0, 2, (6, q))])
    T[6, :p] = np.nan  # all numeric missing
    T[7, p:] = np.nan  # all nominal missing
    T[8] = np.nan  # everything missing
    return T, list(range(p, p + q))


def _naive_rbf(mu_a, A, mu_b, B, gamma):
    """E exp(-gamma ||X - Y||^2), X ~ N(mu_a, A), Y ~ N(mu_b, B) independent:
    a full determinant and solve (O(d^3) per pair)."""
    d = len(mu_a)
    if d == 0:
        return 1.0
    M = np.eye(d) + 2.0 * gamma * (A + B)
    diff = mu_a - mu_b
    quad = diff @ np.linalg.solve(A + B + np.eye(d) / (2.0 * gamma), diff)
    return np.linalg.det(M) ** -0.5 * np.exp(-0.5 * quad)


def _row_class(c: MixedConditionals, i: int, k: int):
    """Row i under class k: numeric mean and full covariance, nominal PMFs."""
    p = int((~c.nominal).sum())
    mu, A = np.zeros(p), np.zeros((p, p))
    if c.numeric is not None:
        num = c.numeric
        mu = num.means[k, i]
        pat = num.pattern_index[i]
        J = np.flatnonzero(num.patterns[pat])
        A[np.ix_(J, J)] = num.covariances[pat][k]
    pmfs = []
    for v, table in enumerate(c.probabilities):
        code = c.codes[i, v]
        if np.isnan(code):
            pmfs.append(table[k].copy())
        else:
            e = np.zeros(table.shape[1])
            e[int(code)] = 1.0
            pmfs.append(e)
    return mu, A, pmfs


def _naive_gram(cx, cy, gamma, w, normalised, combination="mean"):
    """The mixed kernel, pair by pair and class pair by class pair."""

    def entry(c1, i, c2, j):
        total = 0.0
        for a in range(c1.n_components):
            mu_a, A, pa = _row_class(c1, i, a)
            for b in range(c2.n_components):
                mu_b, B, pb = _row_class(c2, j, b)
                rbf = _naive_rbf(mu_a, A, mu_b, B, gamma)
                q = len(pa)
                match = 1.0
                if q and combination == "product":
                    for x, y in zip(pa, pb, strict=True):
                        match *= (1 - w) + w * (x @ y)
                elif q:
                    agree = sum(x @ y for x, y in zip(pa, pb, strict=True))
                    match = (1 - w) + w * agree / q
                total += c1.weights[i, a] * c2.weights[j, b] * rbf * match
        return total

    K = np.array(
        [
            [entry(cx, i, cy, j) for j in range(cy.n_samples)]
            for i in range(cx.n_samples)
        ]
    )
    if normalised:
        sx = np.array([entry(cx, i, cx, i) for i in range(cx.n_samples)])
        sy = np.array([entry(cy, j, cy, j) for j in range(cy.n_samples)])
        K /= np.sqrt(np.outer(sx, sy))
    return K


# -- the kernel against references ------------------------------------------------


@pytest.mark.parametrize("combination", ["mean", "product"])
@pytest.mark.parametrize("n_components", [1, 2])
@pytest.mark.parametrize("gamma", [0.05, 0.7, 4.0])
@pytest.mark.parametrize("cls", [MixedRBFKernel, ExpectedMixedRBFKernel])
def test_mixed_kernel_matches_naive_reference(
    rng, n_components, gamma, cls, combination
):
    T, nominal = _mixed_rows(rng, n=40)
    density = LatentClassDensity(n_components, n_init=2, random_state=0)
    k = cls(
        gamma=gamma,
        nominal_weight=0.7,
        nominal_combination=combination,
        nominal_features=nominal,
        density=density,
        diagonal="independent",
    ).fit(T)
    c = k.density_.conditionals(T)
    normalised = cls is MixedRBFKernel
    ref = _naive_gram(c, c, gamma, 0.7, normalised, combination)
    K = k(T)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(K, ref, rtol=1e-10, atol=1e-12 * scale)
    # The cross Gram (rows in other roles, other rows).
    new, _ = _mixed_rows(np.random.default_rng(7), n=15)
    cn = k.density_.conditionals(new)
    ref_cross = _naive_gram(cn, c, gamma, 0.7, normalised, combination)
    np.testing.assert_allclose(k(new, T), ref_cross, rtol=1e-10, atol=1e-12 * scale)
    # PSD and symmetric
    assert np.abs(K - K.T).max() <= 1e-12 * scale
    assert np.linalg.eigvalsh(K).min() >= -1e-10 * len(K) * scale


@pytest.mark.parametrize("combination", ["mean", "product"])
def test_mixed_kernel_is_the_draws_average(rng, combination):
    """The closed form against the average of the base kernel over
    independent draws of both rows, within 4 standard errors."""
    T, nominal = _mixed_rows(rng, n=12, rate=0.4)
    k = ExpectedMixedRBFKernel(
        gamma=0.4,
        nominal_weight=0.8,
        nominal_combination=combination,
        nominal_features=nominal,
        density=LatentClassDensity(2, random_state=0),
    ).fit(T)
    c = k.density_.conditionals(T)
    m = 4000
    dx = c.sample(m, random_state=1).samples
    dy = c.sample(m, random_state=2).samples
    base = k.base_kernel_
    values = np.stack([base.pairwise(dx[s], dy[s]) for s in range(m)])
    mean = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) / np.sqrt(m)
    K = k(T, T)
    off = ~np.eye(len(T), dtype=bool)
    gap = np.abs(K - mean)[off]
    assert np.all(gap <= 4 * se[off] + 1e-12), gap.max()
    # The test can fail: a kernel off by 5% is caught.
    assert np.mean(np.abs(1.05 * K - mean)[off] > 4 * se[off]) > 0.2


def test_all_numeric_table_reduces_to_genrbf(rng):
    X = rng.normal(size=(60, 4)) @ rng.normal(size=(4, 4))
    X[rng.random(X.shape) < 0.3] = np.nan
    X[:5] = rng.normal(size=(5, 4))
    k = MixedRBFKernel(gamma=0.3).fit(X)
    assert not k.is_nominal_.any()
    d = k.density_
    gc = GaussianConditionals.from_moments(X, d.means_[0], d.covariances_[0])
    base = RBF(gamma=0.3).fit(X, gc)
    ref = expected_gram(base, gc, None, "independent", normalised=True)
    np.testing.assert_allclose(k(X), ref, rtol=1e-10, atol=1e-13)
    new = rng.normal(size=(7, 4))
    new[rng.random(new.shape) < 0.4] = np.nan
    gn = GaussianConditionals.from_moments(new, d.means_[0], d.covariances_[0])
    ref_cross = expected_gram(base, gn, gc, "independent", normalised=True)
    np.testing.assert_allclose(k(new, X), ref_cross, rtol=1e-10, atol=1e-13)


def test_all_nominal_table_reduces_to_belanche_k1(rng):
    codes = rng.integers(0, 3, size=(50, 4)).astype(float)
    codes[rng.random(codes.shape) < 0.3] = np.nan
    codes[:4] = rng.integers(0, 3, size=(4, 4))
    k = ExpectedMixedRBFKernel(
        nominal_weight=1.0, nominal_features=[0, 1, 2, 3], diagonal="independent"
    ).fit(codes)
    mc = k.density_.conditionals(codes)
    # Belanche K1 over the same per-feature PMFs (one class).
    cc = CategoricalConditionals(
        values=codes,
        missing=np.isnan(codes),
        categories=tuple(np.arange(p.shape[1], dtype=float) for p in mc.probabilities),
        probabilities=tuple(p[0] for p in mc.probabilities),
    )
    ref = expected_gram(SimpleMatching(), cc, None, "independent")
    np.testing.assert_allclose(k(codes), ref, rtol=1e-10, atol=1e-13)
    # With alpha=0, one class and no numeric column, EM gives the observed
    # frequencies: K1 with the categorical density, to EM's tolerance.
    k1 = get_kernel("belanche_k1").fit(codes)
    np.testing.assert_allclose(k(codes), k1(codes), atol=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_mixed_gram_is_psd_with_missingness_factor(seed):
    rng = np.random.default_rng(seed)
    T, nominal = _mixed_rows(rng, n=50, rate=0.35)
    for u in (0.0, 0.6):
        k = MixedRBFKernel(
            gamma=1.0,
            missingness_weight=u,
            nominal_features=nominal,
            density=LatentClassDensity(2, random_state=seed),
        )
        check_kernel(k, T)


def test_missingness_factor_is_mask_matching(rng):
    T, nominal = _mixed_rows(rng, n=20)
    kw = dict(gamma=0.5, nominal_features=nominal, density=LatentClassDensity())
    K0 = ExpectedMixedRBFKernel(**kw).fit(T)(T, T)
    K1 = ExpectedMixedRBFKernel(missingness_weight=0.4, **kw).fit(T)(T, T)
    M = np.isnan(T)
    same = (M[:, None, :] == M[None, :, :]).mean(axis=2)
    np.testing.assert_allclose(K1, K0 * (0.6 + 0.4 * same), rtol=1e-12)


class _MixedDraws(LatentClassDensity):
    """Latent-class conditionals handed over as draws (a plugin's density)."""

    representation = "samples"
    domain = "mixed"

    def _conditionals(self, X):
        return super()._conditionals(X).sample(400, random_state=0)


def test_mixed_kernel_over_draws_and_the_missingness_factor(rng):
    T, nominal = _mixed_rows(rng, n=25)
    exact = ExpectedMixedRBFKernel(gamma=0.5, nominal_features=nominal).fit(T)
    draws = ExpectedMixedRBFKernel(
        gamma=0.5, nominal_features=nominal, density=_MixedDraws()
    ).fit(T)
    np.testing.assert_allclose(draws(T, T), exact(T, T), atol=0.05)
    k = ExpectedMixedRBFKernel(
        missingness_weight=0.5, nominal_features=nominal, density=_MixedDraws()
    )
    with pytest.raises(ValueError, match="missingness_weight > 0 needs"):
        k.fit(T)


# -- the density ---------------------------------------------------------------------


def _simulate_latent_class(rng, n):
    """Two well separated classes; MAR holes in both blocks: numeric column 1
    is missing more often when nominal column 0 is observed as 0, nominal
    column 1 when numeric column 0 is large."""
    pi = np.array([0.35, 0.65])
    means = np.array([[2.0, 1.0], [-1.0, -1.5]])
    covs = np.array([[[1.0, 0.5], [0.5, 1.0]], [[0.8, -0.3], [-0.3, 0.6]]])
    probs = [
        np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]),
        np.array([[0.85, 0.15], [0.2, 0.8]]),
    ]
    z = (rng.random(n) > pi[0]).astype(int)
    X = np.empty((n, 2))
    for k in range(2):
        rows = z == k
        X[rows] = rng.multivariate_normal(means[k], covs[k], size=rows.sum())
    codes = np.column_stack(
        [(rng.random((n, 1)) > np.cumsum(p[z], axis=1)).sum(axis=1) for p in probs]
    ).astype(float)
    T = np.hstack([X, codes])
    miss = np.zeros_like(T, dtype=bool)
    miss[:, 1] = rng.random(n) < np.where(codes[:, 0] == 0, 0.5, 0.1)
    miss[:, 3] = rng.random(n) < np.where(X[:, 0] > 1.0, 0.5, 0.1)
    miss[:, 0] = rng.random(n) < 0.1
    miss[:, 2] = (rng.random(n) < 0.1) & ~miss[:, 0]
    T[miss] = np.nan
    return T, (pi, means, covs, probs)


def test_latent_class_density_recovers_parameters_under_mar():
    rng = np.random.default_rng(20)
    n = 4000
    T, (pi, means, covs, probs) = _simulate_latent_class(rng, n)
    d = LatentClassDensity(2, nominal_features=[2, 3], n_init=3, random_state=0)
    d.fit(T)
    assert d.converged_
    order = np.argsort(-d.means_[:, 0])  # class 0 has the larger mean
    w = d.weights_[order]
    m = d.means_[order]
    S = d.covariances_[order]
    P = [p[order] for p in d.category_probabilities_]
    observed = ~np.isnan(T)
    for k in range(2):
        nk = pi[k] * n
        se_w = np.sqrt(pi[k] * (1 - pi[k]) / n)
        assert abs(w[k] - pi[k]) <= 3 * se_w
        for u in range(2):
            n_obs = nk * observed[:, u].mean()
            se_m = np.sqrt(covs[k][u, u] / n_obs)
            assert abs(m[k, u] - means[k, u]) <= 3 * se_m, (k, u)
            for v in range(2):
                n_uv = nk * (observed[:, u] & observed[:, v]).mean()
                se_s = np.sqrt(
                    (covs[k][u, u] * covs[k][v, v] + covs[k][u, v] ** 2) / n_uv
                )
                assert abs(S[k, u, v] - covs[k][u, v]) <= 3 * se_s, (k, u, v)
        for v in range(2):
            n_obs = nk * observed[:, 2 + v].mean()
            se_p = np.sqrt(probs[v][k] * (1 - probs[v][k]) / n_obs)
            assert np.all(np.abs(P[v][k] - probs[v][k]) <= 3 * se_p), (k, v)
    # The missingness is informative enough for a naive estimate to fail:
    # the frequencies of nominal column 1 among its observed entries are off.
    seen = T[~np.isnan(T[:, 3]), 3]
    naive = np.mean(seen == 0)
    truth = pi @ np.array([p[0] for p in probs[1]])
    assert abs(naive - truth) > 5 * np.sqrt(truth * (1 - truth) / len(seen))


def test_latent_class_posteriors_use_both_blocks(rng):
    T, _ = _simulate_latent_class(rng, 1500)
    d = LatentClassDensity(2, nominal_features=[2, 3], random_state=0).fit(T)
    c = d.conditionals(T)
    # Independent posterior: prior x Gaussian of observed numeric entries x PMFs.
    from scipy.stats import multivariate_normal

    i = int(np.flatnonzero(~np.isnan(T).any(axis=1))[0])
    logp = np.log(d.weights_).copy()
    for k in range(2):
        logp[k] += multivariate_normal(d.means_[k], d.covariances_[k]).logpdf(T[i, :2])
        for v in range(2):
            logp[k] += np.log(d.category_probabilities_[v][k, int(T[i, 2 + v])])
    np.testing.assert_allclose(c.weights[i], np.exp(logp - logsumexp(logp)), rtol=1e-9)


def test_latent_class_density_keeps_its_contract(rng):
    check_density(LatentClassDensity())
    T, nominal = _mixed_rows(rng, n=60)
    check_density(LatentClassDensity(2, nominal_features=nominal), T)


def test_mixed_conditionals_moments_match_draws(rng):
    T, nominal = _mixed_rows(rng, n=10, rate=0.4)
    d = LatentClassDensity(2, nominal_features=nominal, random_state=0).fit(T)
    c = d.conditionals(T)
    draws = c.sample(20000, random_state=3).samples
    m1 = draws.mean(axis=0)
    se = draws.std(axis=0) / np.sqrt(len(draws)) + 1e-12
    assert np.all(np.abs(c.first_moments() - m1) <= 4.5 * se + 1e-6)
    m2 = np.einsum("mni,mnj->nij", draws, draws) / len(draws)
    np.testing.assert_allclose(c.second_moments(), m2, atol=0.15)
    # Observed entries are kept in every draw.
    obs = ~np.isnan(T)
    assert np.all(draws[:, obs] == T[obs])


# -- tables in, predictions out -------------------------------------------------------


def _frame(rng, n=120):
    df = pd.DataFrame(
        {
            "age": rng.normal(50, 10, n),
            "dose": pd.array(rng.integers(0, 5, n), dtype="Int64"),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
            "smoker": rng.random(n) < 0.4,
            "city": pd.array(rng.choice(["a", "b", "c"], n), dtype="string"),
            "grade": pd.Categorical(
                rng.choice(["low", "mid", "high"], n),
                categories=["low", "mid", "high"],
                ordered=True,
            ),
        }
    )
    y = ((df.age > 50) ^ (df.colour == "red")).astype(int).to_numpy()
    df.loc[rng.random(n) < 0.2, "age"] = np.nan
    df.loc[rng.random(n) < 0.2, "dose"] = pd.NA
    df.loc[rng.random(n) < 0.2, "colour"] = np.nan
    df["smoker"] = df["smoker"].astype(object)
    df.loc[rng.random(n) < 0.1, "smoker"] = None
    df.loc[rng.random(n) < 0.2, "city"] = pd.NA
    return df, y


def _coded(df):
    """The same table coded by hand: nominal codes in sorted-label order,
    the ordered categorical by rank."""
    out = pd.DataFrame(index=df.index)
    out["age"] = df["age"]
    out["dose"] = df["dose"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    for col in ("colour", "smoker", "city"):
        values = df[col].astype(object)
        labels = sorted({v for v in values if not pd.isna(v)})
        lookup = {v: i for i, v in enumerate(labels)}
        out[col] = [np.nan if pd.isna(v) else lookup[v] for v in values]
    out["grade"] = df["grade"].cat.codes.replace(-1, np.nan).astype(float)
    return out.to_numpy(dtype=float)


def test_dataframe_fits_and_predicts_as_its_coded_array(rng):
    df, y = _frame(rng)
    clf = MissingKernelSVC(C=5.0).fit(df[:90], y[:90])
    assert clf.is_nominal_.tolist() == [False, False, True, True, True, False]
    assert type(clf.kernel_).__name__ == "MixedRBFKernel"
    assert list(clf.feature_names_in_) == list(df.columns)
    coded = _coded(df)
    ref = MissingKernelSVC(C=5.0, nominal_features=[2, 3, 4]).fit(coded[:90], y[:90])
    np.testing.assert_allclose(
        clf.decision_function(df[90:]), ref.decision_function(coded[90:]), rtol=1e-9
    )
    reg = MissingKernelSVR().fit(df, df["age"].fillna(50.0))
    assert np.all(np.isfinite(reg.predict(df[:5])))


def test_unknown_category_is_missing_or_an_error(rng):
    df, y = _frame(rng)
    clf = MissingKernelSVC().fit(df[:90], y[:90])
    new = df[90:95].copy()
    new["city"] = new["city"].astype(object)
    as_missing = new.copy()
    new.iloc[0, new.columns.get_loc("city")] = "zzz"
    as_missing.iloc[0, new.columns.get_loc("city")] = None
    with pytest.warns(UnknownCategoryWarning, match="feature 'city'.*zzz"):
        got = clf.decision_function(new)
    np.testing.assert_allclose(got, clf.decision_function(as_missing), rtol=1e-12)
    strict = MissingKernelSVC(handle_unknown="error").fit(df[:90], y[:90])
    with pytest.raises(ValueError, match=r"feature 'city'.*not seen"):
        strict.predict(new)


def test_numeric_only_kernel_refuses_nominal_columns(rng):
    df, y = _frame(rng)
    with pytest.raises(ValueError, match="'colour', 'smoker', 'city' are nominal"):
        MissingKernelSVC(kernel="genrbf").fit(df, y)
    # Declared numeric, the coded table goes to genRBF.
    coded = _coded(df)
    MissingKernelSVC(kernel="genrbf", nominal_features=None).fit(coded, y)


def test_nominal_features_errors(rng):
    df, y = _frame(rng, n=30)
    with pytest.raises(ValueError, match="'nope', which is not a column"):
        MissingKernelSVC(nominal_features=["nope"]).fit(df, y)
    with pytest.raises(ValueError, match="index 9, out of range"):
        MissingKernelSVC(nominal_features=[9]).fit(df, y)
    with pytest.raises(ValueError, match="no column names"):
        MissingKernelSVC(nominal_features=["age"]).fit(_coded(df), y)
    mixed = df.copy()
    mixed["age"] = mixed["age"].astype(object)
    mixed.loc[3, "age"] = "old"
    with pytest.raises(ValueError, match="feature 'age' mixes numbers and strings"):
        MissingKernelSVC().fit(mixed, y)


def test_density_refusing_nominal_columns_says_so(rng):
    df, _ = _frame(rng, n=40)
    with pytest.raises(ValueError, match="models numeric values"):
        get_kernel("mixed_rbf", density="gaussian_em").fit(df)


def test_grid_search_over_nominal_weight_on_a_frame(rng):
    from sklearn.model_selection import GridSearchCV

    df, y = _frame(rng, n=80)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownCategoryWarning)
        search = GridSearchCV(
            MissingKernelSVC(),
            {"kernel_params": [{"nominal_weight": 0.25}, {"nominal_weight": 1.0}]},
            cv=3,
            error_score="raise",
        ).fit(df, y)
    assert search.best_estimator_.kernel_.nominal_weight in (0.25, 1.0)


def test_unscaled_numeric_features_warn(rng):
    from missingkernels import FeatureScaleWarning

    X = rng.normal(size=(60, 3)) * [1.0, 1000.0, 1.0]
    y = (X[:, 0] > 0).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    with pytest.warns(
        FeatureScaleWarning, match=r"\(column [02] \(0-based\)\) to \S+ \(column 1 "
    ):
        MissingKernelSVC(standardize=False).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FeatureScaleWarning)
        MissingKernelSVC(standardize=False).fit(X / [1.0, 1000.0, 1.0], y)
        # Nominal codes do not count; the linear kernel has no width.
        MissingKernelSVC(kernel="expected_linear", standardize=False).fit(X, y)
        # Standardised inside (the default): nothing to warn about.
        MissingKernelSVC().fit(X, y)


def test_product_combination_is_the_rbf_on_one_hot_codes(rng):
    """On complete rows, w = 1 - exp(-2 gamma) per nominal column gives
    scikit-learn's RBF on the numeric columns and the one-hot codes."""
    from sklearn.metrics.pairwise import rbf_kernel

    T, nominal = _mixed_rows(rng, n=60)
    complete = T[~np.isnan(T).any(axis=1)]
    gamma = 0.3
    k = ExpectedMixedRBFKernel(
        gamma=gamma,
        nominal_weight=1.0 - np.exp(-2.0 * gamma),
        nominal_combination="product",
        nominal_features=nominal,
    ).fit(T)
    onehot = [
        (complete[:, [v]] == np.unique(T[:, v][~np.isnan(T[:, v])])).astype(float)
        for v in nominal
    ]
    coded = np.hstack([complete[:, :3], *onehot])
    np.testing.assert_allclose(
        k(complete, complete), rbf_kernel(coded, gamma=gamma), rtol=1e-12
    )


# -- the missingness factor belongs to the base kernel (issue 36) ------------------


def test_mixed_cell_is_the_average_of_pairwise_with_the_missingness_factor():
    # The cell's Gram (with the factor on the masks) against the average of
    # RBFMatching.pairwise over draws from the latent-class density: the
    # kernel averaged must carry the same factor.
    from missingkernels.utils.estimator_checks import check_expectation

    base = RBFMatching(gamma=0.4, missingness_weight=0.5)
    check_expectation("rbf_matching/mixed", base, n_draws=1000)


def test_rbf_matching_pairwise_applies_the_missingness_factor(rng):
    T, nominal = _mixed_rows(rng, n=12, rate=0.4)
    c = LatentClassDensity(random_state=0).set_params(nominal_features=nominal)
    c = c.fit(T).conditionals(T)
    A = c.sample(1, random_state=1).samples[0]
    plain = RBFMatching(gamma=0.5).fit(T, c)
    base = RBFMatching(gamma=0.5, missingness_weight=0.3).fit(T, c)
    M = np.isnan(T)
    same = (M[:, None, :] == M[None, :, :]).mean(axis=2)
    np.testing.assert_allclose(
        base.pairwise(A, A, M, M), plain.pairwise(A, A) * (0.7 + 0.3 * same)
    )
    assert plain.missingness_factor(M, M) is None
    np.testing.assert_allclose(plain.pairwise(A, A, M, M), plain.pairwise(A, A))
    # Rows without masks are complete: their factor is 1.
    np.testing.assert_allclose(base.pairwise(A, A), plain.pairwise(A, A))
    np.testing.assert_allclose(
        base.pairwise(A, A, M),
        plain.pairwise(A, A) * (0.7 + 0.3 * (~M).mean(1))[:, None],
    )


def test_a_plugin_kernel_of_one_width_gets_the_scale_warning(rng):
    """The scale warning follows the base kernel's one_width, not a list of
    built-in classes: a plugin's Laplacian kernel (one gamma for all columns)
    declares it and is warned about; without it, not (issue 50)."""
    from missingkernels import FeatureScaleWarning, register_plugin, unregister_plugin
    from missingkernels.hookspecs import hookimpl
    from missingkernels.kernels import BaseKernel, make_expected_kernel

    class Laplacian(BaseKernel):
        one_width = True

        def __init__(self, width=0.5):
            self.width = width

        def pairwise(self, A, B):
            return np.exp(-self.width * np.abs(A[:, None, :] - B[None]).sum(-1))

    class Unwidthed(Laplacian):
        one_width = False

    kernels = {
        "laplacian_one_width": make_expected_kernel(
            Laplacian, "LaplacianOneWidth", n_draws=5
        ),
        "laplacian_no_width": make_expected_kernel(
            Unwidthed, "LaplacianNoWidth", n_draws=5
        ),
    }

    class Plugin:
        @hookimpl
        def missingkernels_register_kernels(self):
            return kernels

    X = rng.normal(size=(40, 3)) * [1.0, 1000.0, 1.0]
    y = (X[:, 0] > 0).astype(int)
    X[rng.random(X.shape) < 0.1] = np.nan
    name = register_plugin(Plugin(), name="test-one-width")
    try:
        with pytest.warns(FeatureScaleWarning):
            MissingKernelSVC(kernel="laplacian_one_width", standardize=False).fit(X, y)
        with warnings.catch_warnings():
            warnings.simplefilter("error", FeatureScaleWarning)
            MissingKernelSVC(kernel="laplacian_no_width", standardize=False).fit(X, y)
    finally:
        unregister_plugin(name)
