"""A latent-class mixture for mixed numeric and nominal columns, fitted by EM."""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy.special import logsumexp
from sklearn.cluster import KMeans

from .._gaussian_conditioning import condition_gaussian
from .._missing_patterns import pattern_groups
from .._numerics import constant_features, integer_seeds
from .._sklearn_compat import Interval, StrOptions
from .._table_encoding import encode_table
from ..conditionals import MixedConditionals
from ..conditionals._mixed import category_blocks, one_hot_codes
from ._base_em import (
    Params,
    _BaseEMDensity,
    _EMData,
    _pattern_cov_sum,
    _positive_definite,
    _starting_prior,
)
from ._mixture import (
    _MIN_RESP,
    _START_ROWS,
    _centre_labels,
    _initial_parameters,
    gaussian_m_step,
    mixture_conditionals,
    weights_mode,
    within_centre,
)
from ._prior import DEFAULT_PRIOR_ROWS, dirichlet_log_prior, n_parameters
from ._select import _ComponentSearch

__all__ = ["LatentClassDensity"]

# Probabilities are floored here inside logarithms (a category a class never
# takes has probability 0; its log must stay finite for 0 * log p = 0).
_TINY = 1e-300


@dataclass(frozen=True, eq=False)
class _MixedEMData(_EMData):
    """:class:`_EMData` of the numeric columns plus the nominal ones.

    ``onehot`` holds the observed nominal entries (one block of ``C_v``
    columns per nominal column, zeros where missing); ``nominal_missing``
    marks the missing ones.
    """

    onehot: np.ndarray | None = None  # (n, sum C_v)
    nominal_missing: np.ndarray | None = None  # (n, q)
    sizes: tuple[int, ...] = ()  # C_v
    frequencies: np.ndarray | None = None  # (sum C_v,) observed, per column


def _class_log_likelihoods(
    Z0: np.ndarray,
    groups: Any,
    onehot: np.ndarray,
    params: Params,
    fill: bool,
) -> tuple[np.ndarray, list[Any]]:
    """``log pi_k + log p(x_obs | k)`` per row and class, and per class the
    numeric block conditioned on its observed entries."""
    pi, theta, m, S = params
    logp = np.log(pi)[None, :] + onehot @ np.log(np.maximum(theta, _TINY)).T
    conditioned = []
    if m.shape[1]:
        for k in range(len(pi)):
            cond = condition_gaussian(Z0, groups, m[k], S[k], fill=fill, logpdf=True)
            assert cond.logpdf is not None
            logp[:, k] += cond.logpdf
            conditioned.append(cond)
    return logp, conditioned


def _latent_class_sums(data: _MixedEMData, params: Params, fill: bool) -> tuple:
    """The E-step's sums: the log-likelihood, then (when ``fill``) the summed
    posteriors, the expected category counts per class, and per class the
    weighted sums, scatter and conditional covariances of the numeric block."""
    assert data.Z0 is not None and data.onehot is not None
    assert data.nominal_missing is not None
    theta, m = params[1], params[2]
    logp, conditioned = _class_log_likelihoods(
        data.Z0, data.groups, data.onehot, params, fill
    )
    row = logsumexp(logp, axis=1)
    if not fill:
        return (float(row.sum()),)
    resp = np.exp(logp - row[:, None])
    K, p = m.shape
    counts = resp.T @ data.onehot
    # A missing nominal entry is, within a class, distributed as the class PMF.
    for v, block in enumerate(category_blocks(data.sizes)):
        absent = resp.T @ data.nominal_missing[:, v].astype(np.float64)
        counts[:, block] += absent[:, None] * theta[:, block]
    weighted = np.zeros((K, p))
    scatter = np.zeros((K, p, p))
    cov_sum = np.zeros((K, p, p))
    for k, cond in enumerate(conditioned):
        assert cond.means is not None
        weighted[k] = resp[:, k] @ cond.means
        centred = cond.means - m[k]
        scatter[k] = (resp[:, k, None] * centred).T @ centred
        assert data.groups is not None
        cov_sum[k] = _pattern_cov_sum(data.groups, cond.blocks, p, resp[:, k])
    return float(row.sum()), resp.sum(axis=0), counts, weighted, scatter, cov_sum


def _mixed_rows(
    X: np.ndarray, nominal: np.ndarray, sizes: tuple[int, ...],
    center: np.ndarray, scale: np.ndarray,
) -> tuple[np.ndarray, Any, np.ndarray, np.ndarray]:  # fmt: skip
    """The rows with an observed entry as EM reads them: the numeric columns
    standardised (zero where missing) and their pattern groups (None without
    numeric columns), the nominal codes one-hot and their missing mask."""
    X = np.asarray(X, dtype=np.float64)
    X = X[~np.isnan(X).all(axis=1)]
    Xn, codes = X[:, ~nominal], X[:, nominal]
    mask = np.isnan(Xn)
    Z0 = np.where(mask, 0.0, (Xn - center) / scale)
    groups = pattern_groups(mask) if Xn.shape[1] else None
    return Z0, groups, one_hot_codes(codes, sizes), np.isnan(codes)


def _rows_data(
    X: np.ndarray, nominal: np.ndarray, sizes: tuple[int, ...], like: _MixedEMData
) -> _MixedEMData:
    """``like`` (its standardisation, prior and frequencies) on the rows
    ``X`` in memory."""
    Z0, groups, onehot, absent = _mixed_rows(X, nominal, sizes, like.center, like.scale)
    return replace(
        like, Z0=Z0, groups=groups, n=len(Z0), source=None, onehot=onehot,
        nominal_missing=absent,
        n_patterns=0 if groups is None else groups.n_patterns,
    )  # fmt: skip


def _block_sums(
    block: np.ndarray, nominal: np.ndarray, sizes: tuple[int, ...],
    center: np.ndarray, scale: np.ndarray, params: Params, fill: bool,
) -> tuple:  # fmt: skip
    """:func:`_latent_class_sums` of a raw row block."""
    Z0, groups, onehot, absent = _mixed_rows(block, nominal, sizes, center, scale)
    data = _MixedEMData(
        Z0, groups, center, scale, 0.0, len(Z0), 0, onehot=onehot,
        nominal_missing=absent, sizes=sizes,
    )  # fmt: skip
    return _latent_class_sums(data, params, fill)


def _block_moments(
    block: np.ndarray, nominal: np.ndarray, sizes: tuple[int, ...],
    center: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Per block, over the rows with an observed entry: the numeric columns'
    squared deviations from ``center``, their distinct missing patterns
    (packed), and the count of each category."""
    block = np.asarray(block, dtype=np.float64)
    block = block[~np.isnan(block).all(axis=1)]
    Xn = block[:, ~nominal]
    missing = np.isnan(Xn)
    squares = (np.where(missing, 0.0, Xn - center) ** 2).sum(axis=0)
    packed = np.packbits(missing, axis=1)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1])))
    counts = one_hot_codes(block[:, nominal], sizes).sum(axis=0)
    return squares, np.unique(keys.ravel()), counts


def _sample_block(block: np.ndarray, index: int, fraction: float, seed: int) -> Any:
    if fraction >= 1.0:
        return np.asarray(block)
    keep = np.random.default_rng([seed, index]).random(len(block)) < fraction
    return np.asarray(block)[keep]


class LatentClassDensity(_ComponentSearch, _BaseEMDensity):
    """Latent-class mixture for tables of numeric and nominal columns (EM).

    Given its latent class ``k`` (probability ``weights_[k]``), a row's
    numeric columns are Gaussian ``N(means_[k], covariances_[k])`` and each
    nominal column ``v`` is independent of everything else with the PMF
    ``category_probabilities_[v][k]``: Olkin and Tate's general location
    model with the nominal cells replaced by a latent class (Vermunt and
    Magidson's latent-class cluster model). With ``n_components=1`` it is a
    Gaussian on the numeric columns times independent categoricals on the
    nominal ones; without nominal columns, the Gaussian mixture of
    :class:`GaussianMixtureDensity`.

    EM handles missing entries in both blocks (MAP under MAR, with the
    prior of ``prior_rows``; maximum likelihood with ``prior_rows=0``): the
    posterior of the classes uses every observed entry of a row;
    within a class, the numeric block is conditioned on the observed numeric
    entries (grouped by missing pattern) and a missing nominal entry counts
    as its class PMF. Its conditionals (:class:`~missingkernels.conditionals
    .MixedConditionals`) are, per row, the posterior class weights, per class
    the Gaussian conditional of the missing numeric entries and the class
    PMFs of the missing nominal ones: what the mixed kernels
    (:class:`~missingkernels.kernels.MixedRBFKernel`) take in closed form.

    Parameters
    ----------
    n_components : int, "bic" or (int, int), default=1
        Number of latent classes ``K``. More classes let the nominal columns
        depend on each other and on the numeric ones. ``"bic"`` or a range
        ``(low, high)``: chosen by BIC as in
        :class:`GaussianMixtureDensity`, the free parameters counting, per
        class, ``C_v - 1`` probabilities for each nominal column.
    nominal_features : "from_dtype", None, array-like or bool mask, default="from_dtype"
        The nominal columns. ``"from_dtype"``: the string, object, boolean
        and (unordered) categorical columns of a DataFrame or of an object
        array; ordered categoricals are numeric, coded by their level's rank.
        Otherwise the columns named (by name, 0-based index or mask); their
        distinct values are the categories. None: every column is numeric.
    handle_unknown : {"missing", "error"}, default="missing"
        A category of a nominal column not seen in the training rows:
        treated as a missing entry (with an ``UnknownCategoryWarning``) or
        an error.
    alpha : float, default=0.0
        Additive smoothing of the class PMFs (a symmetric Dirichlet prior of
        ``alpha + 1``, on top of the pseudo-counts of ``prior_rows``).
    max_iter : int, default=500
        Maximum number of EM steps per initialisation.
    tol : float, default=1e-5
        Convergence threshold on the largest change of a class weight,
        category probability, mean or covariance entry in one EM step
        (numeric parameters in units of each feature's observed standard
        deviation).
    acceleration : {"squarem", "none"}, default="squarem"
        SQUAREM extrapolation of the EM steps, as in
        :class:`GaussianEMDensity` (extrapolated class weights must stay
        positive; category probabilities are clipped at 0 and renormalised),
        or plain EM.
    tol_loglik : float or None, default=None
        Also stop when the penalised log-likelihood's relative change is at
        most this (see :class:`GaussianEMDensity`).
    ridge : float, default=1e-6
        Covariance floor of the numeric block, as in
        :class:`GaussianMixtureDensity`.
    prior_rows : float or "auto", default="auto"
        Strength of the prior (``"auto"``: ``max(10, d)`` for ``d``
        numeric features), in pseudo-rows shared evenly by the classes:
        each class gets ``prior_rows / K`` pseudo-rows whose numeric scatter
        is the diagonal of the pooled within-cluster variances of a k-means
        start (the covariance prior of :class:`GaussianMixtureDensity`; with
        one class the observed variances) and whose nominal entries follow
        each column's observed frequencies (Dirichlet pseudo-counts
        ``prior_rows / K * f_vc`` added to the class's expected counts, on
        top of ``alpha``), and its weight the pseudo-count
        ``prior_rows / K``. A class PMF therefore never puts probability 0
        on a category seen in the data. 0: maximum likelihood (with the
        ridge and ``alpha``).
    n_init : int, default=1
        Number of k-means initialisations (on standardised numeric columns
        and one-hot codes, missing entries at their observed means); the fit
        with the highest penalised log-likelihood is kept.
    random_state : int, RandomState instance or None, default=0
        Seeds the initialisations (fixed by default: refits on the same rows,
        e.g. at every point of a grid search, are then one cached fit).

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
    means_ : ndarray of shape (n_components, n_numeric)
        Class means of the numeric columns (in their order).
    covariances_ : ndarray of shape (n_components, n_numeric, n_numeric)
    category_probabilities_ : list of ndarray
        Per nominal column (in their order), shape ``(n_components, C_v)``:
        the class PMFs over its codes ``0 .. C_v - 1``.
    is_nominal_ : ndarray of shape (n_features_in_,), dtype bool
    nominal_categories_ : list
        Per column, the labels of its codes (None for numeric columns).
    n_iter_, converged_, loglik_trace_, loglik_, ridge_
        As in :class:`GaussianMixtureDensity` (the log prior includes the
        class PMFs' Dirichlet pseudo-counts).
    n_components_, bic_, bic_scores_
        As in :class:`GaussianMixtureDensity`.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    GaussianMixtureDensity : The numeric-only case.
    CategoricalDensity : Independent categoricals (Belanche's kernels).

    References
    ----------
    .. [1] I. Olkin and R. F. Tate, "Multivariate correlation models with
       mixed discrete and continuous variables", Ann. Math. Statist. 32,
       448-465, 1961.
    .. [2] J. L. Schafer, "Analysis of Incomplete Multivariate Data",
       Chapman & Hall, 1997, ch. 9 (EM for the general location model).
    .. [3] J. K. Vermunt and J. Magidson, "Latent class cluster analysis",
       in Applied Latent Class Analysis, Cambridge University Press, 2002.
    .. [4] A. P. Dempster, N. M. Laird and D. B. Rubin, "Maximum likelihood
       from incomplete data via the EM algorithm", J. R. Stat. Soc. B 39(1),
       1-38, 1977.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from missingkernels.densities import LatentClassDensity
    >>> df = pd.DataFrame({
    ...     "age": [30.0, 45.0, np.nan, 52.0, 38.0, 61.0],
    ...     "smoker": ["no", "yes", "yes", None, "no", "yes"],
    ... })
    >>> density = LatentClassDensity().fit(df)
    >>> density.is_nominal_.tolist()
    [False, True]
    >>> density.category_probabilities_[0].round(2).tolist()
    [[0.4, 0.6]]
    >>> density.conditionals(df).weights.shape
    (6, 1)
    """

    representation: ClassVar[str] = "mixed"
    _encode = staticmethod(encode_table)

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"bic"}),
            tuple,
            list,
        ],
        "nominal_features": ["array-like", StrOptions({"from_dtype"}), None],
        "handle_unknown": [StrOptions({"missing", "error"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "acceleration": [StrOptions({"squarem", "none"})],
        "tol_loglik": [Interval(Real, 0, None, closed="left"), None],
        "ridge": [Interval(Real, 0, None, closed="left")],
        "prior_rows": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int | str | tuple[int, int] = 1,
        *,
        nominal_features: Any = "from_dtype",
        handle_unknown: str = "missing",
        alpha: float = 0.0,
        max_iter: int = 500,
        tol: float = 1e-5,
        acceleration: str = "squarem",
        tol_loglik: float | None = None,
        ridge: float = 1e-6,
        n_init: int = 1,
        random_state: Any = 0,
        prior_rows: float | str = DEFAULT_PRIOR_ROWS,
    ):
        self.n_components = n_components
        self.nominal_features = nominal_features
        self.handle_unknown = handle_unknown
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.acceleration = acceleration
        self.tol_loglik = tol_loglik
        self.ridge = ridge
        self.n_init = n_init
        self.random_state = random_state
        self.prior_rows = prior_rows

    _singular_what: ClassVar[str] = "a class covariance of the numeric columns"
    _singular_advice: ClassVar[str] = (
        "Increase prior_rows or ridge, or use fewer components."
    )

    # -- fitting -----------------------------------------------------------
    def _fit_dask(self, X: Any) -> None:
        """:meth:`_fit` on the row blocks of a dask array (nominal columns
        coded already), out of core: one pass checks the values and sums
        each column, a second sums the numeric columns' squared deviations
        and counts the categories, then every EM iteration is one pass (the
        E-step's sums per block, the M-step here). The k-means start reads
        at most ``_START_ROWS`` rows (all of them when there are no more: the
        iterates are then the in-memory fit's, up to the order of the
        additions; otherwise a uniform sample of about that many)."""
        from .._dask_blocks import block_map, summarise_columns

        if getattr(self, "nominal_categories_", None) is None:
            self.nominal_categories_: list[Any] = [None] * X.shape[1]
            self.is_nominal_ = np.zeros(X.shape[1], dtype=bool)
        nominal = self._nominal_mask()
        sizes = self._sizes()
        summary = summarise_columns(
            self, X, min_samples=2, require_observed_columns=True
        )
        self._check_n_rows(summary.n_used)
        center = summary.mean[~nominal]
        parts = block_map(X, _block_moments, nominal, sizes, center)
        squares = sum(part[0] for part in parts)
        n_patterns = len(np.unique(np.concatenate([part[1] for part in parts])))
        counts = sum(part[2] for part in parts)
        observed = summary.counts[~nominal]
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.sqrt(squares / observed)
        constant = summary.constant[~nominal]
        scale[constant] = 1.0
        ridge, prior_rows, centre = _starting_prior(self, constant)
        if not (~nominal).any():
            ridge = 0.0
        data = _MixedEMData(
            None, None, center, scale, ridge, summary.n_used, n_patterns,
            source=X, prior_rows=prior_rows, centre=centre, sizes=sizes,
            frequencies=self._normalise(np.asarray(counts)[None, :], sizes)[0],
        )  # fmt: skip
        self._fit_em(data, observed)

    def _split(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
        """Numeric columns, nominal codes, and each nominal column's size."""
        nominal = self._nominal_mask()
        return X[:, ~nominal], X[:, nominal], self._sizes()

    def _sizes(self) -> tuple[int, ...]:
        """The number of categories of each nominal column."""
        return tuple(
            len(c)
            for c, is_nom in zip(
                self.nominal_categories_, self._nominal_mask(), strict=True
            )
            if is_nom and c is not None
        )

    def _nominal_mask(self) -> np.ndarray:
        mask = getattr(self, "is_nominal_", None)
        if mask is None:
            return np.zeros(self.n_features_in_, dtype=bool)
        return np.asarray(mask, dtype=bool)

    def _check_n_rows(self, n_used: int) -> None:
        if n_used < max(2, self.n_components):
            raise ValueError(
                f"{type(self).__name__} with n_components={self.n_components} "
                f"needs at least {max(2, self.n_components)} rows with an "
                f"observed entry; got {n_used}. Use fewer components or more rows."
            )

    def _fit(self, X: np.ndarray) -> None:
        if getattr(self, "nominal_categories_", None) is None:
            self.nominal_categories_ = [None] * X.shape[1]
            self.is_nominal_ = np.zeros(X.shape[1], dtype=bool)
        Xn, _, sizes = self._split(X)
        used = ~np.isnan(X).all(axis=1)
        self._check_n_rows(int(used.sum()))
        Xn = Xn[used]
        center = np.nanmean(Xn, axis=0) if Xn.shape[1] else np.zeros(0)
        scale = np.nanstd(Xn, axis=0) if Xn.shape[1] else np.zeros(0)
        constant = constant_features(Xn) if Xn.shape[1] else np.zeros(0, bool)
        scale[constant] = 1.0
        ridge, prior_rows, centre = _starting_prior(self, constant)
        if not Xn.shape[1]:
            ridge = 0.0
        nominal = self._nominal_mask()
        Z0, groups, onehot, absent = _mixed_rows(X, nominal, sizes, center, scale)
        data = _MixedEMData(
            Z0, groups, center, scale, ridge, len(Z0),
            0 if groups is None else groups.n_patterns,
            prior_rows=prior_rows, centre=centre, onehot=onehot,
            nominal_missing=absent, sizes=sizes,
            frequencies=self._normalise(onehot.sum(axis=0)[None, :], sizes)[0],
        )  # fmt: skip
        self._fit_em(data, (~np.isnan(Xn)).sum(axis=0))

    def _step(
        self, data: _EMData, params: Params, iteration: int
    ) -> tuple[float, Params]:
        assert isinstance(data, _MixedEMData)
        sums = self._sums(data, params, True)
        objective = float(sums[0]) + self._log_prior(data, params)
        return objective, self._m_step(data, params, sums[1:], iteration)

    def _objective(self, data: _EMData, params: Params) -> float:
        assert isinstance(data, _MixedEMData)
        loglik = self._sums(data, params, False)[0]
        return float(loglik) + self._log_prior(data, params)

    def _sums(self, data: _MixedEMData, params: Params, fill: bool) -> tuple:
        """:func:`_latent_class_sums` over all the rows: in memory, or
        block by block (added in block order)."""
        if data.source is None:
            return _latent_class_sums(data, params, fill)
        from .._dask_blocks import block_sums

        return block_sums(
            data.source, _block_sums, self._nominal_mask(), data.sizes,
            data.center, data.scale, params, fill,
        )  # fmt: skip

    def _valid_params(self, data: _EMData, params: Params) -> Params | None:
        """An extrapolation SQUAREM may take: positive class weights summing
        to 1, category probabilities clipped at 0 and renormalised per column,
        positive definite class covariances."""
        assert isinstance(data, _MixedEMData)
        pi, theta, m, S = params
        if not all(np.all(np.isfinite(a)) for a in params):
            return None
        if np.any(pi <= 0) or not np.isclose(pi.sum(), 1.0, rtol=0, atol=1e-8):
            return None
        theta = self._normalise(np.maximum(theta, 0.0), data.sizes)
        if S.shape[-1] and not _positive_definite(S):
            return None
        return pi, theta, m, S

    def _feature_changes(self, data: _EMData, change: Params) -> np.ndarray:
        """Per column (numeric and nominal, in the density's column order):
        how much its parameters moved in one EM step."""
        assert isinstance(data, _MixedEMData)
        _, dtheta, dm, dS = change
        nominal = self._nominal_mask()
        out = np.zeros(len(nominal))
        if dm.shape[-1]:
            out[~nominal] = np.sqrt((dm**2).sum(axis=0) + (dS**2).sum(axis=(0, 2)))
        out[nominal] = [
            np.sqrt((dtheta[:, b] ** 2).sum()) for b in category_blocks(data.sizes)
        ]
        return out

    def _category_pseudo_counts(self, data: _MixedEMData, K: int) -> np.ndarray:
        """Dirichlet pseudo-counts of the class PMFs: ``alpha`` for every
        category, plus each class's share of the pseudo-rows spread as the
        observed frequencies of the column's categories."""
        assert data.frequencies is not None
        return float(self.alpha) + data.prior_rows / K * data.frequencies

    def _log_prior(self, data: _EMData, params: Params) -> float:
        # The covariances' prior (base class), the Dirichlet pseudo-counts of
        # the class weights (each class's share of the pseudo-rows) and of
        # the class PMFs.
        assert isinstance(data, _MixedEMData)
        pi, theta = params[0], params[1]
        K = len(pi)
        return (
            super()._log_prior(data, params)
            + dirichlet_log_prior(pi, data.prior_rows / K)
            + dirichlet_log_prior(theta, self._category_pseudo_counts(data, K))
        )

    def _starts(self, data: _EMData) -> list[Any]:
        """k-means labels of the rows (standardised numeric columns, one-hot
        nominal columns, missing entries at their means), one per start,
        with the rows they label (out of core, those of :meth:`_start_rows`)."""
        assert isinstance(data, _MixedEMData)
        K = self.n_components
        if data.source is None:
            rows = data
            seeds = integer_seeds(self.random_state, self.n_init)
        else:
            seeds = integer_seeds(self.random_state, self.n_init + 1)
            rows = self._start_rows(data, int(seeds[-1]))
            seeds = seeds[:-1]
        if K == 1:
            return [(rows, np.zeros(rows.n, dtype=np.intp))]
        features = self._start_features(rows)
        return [
            (rows, KMeans(K, n_init=1, random_state=int(seed)).fit_predict(features))
            for seed in seeds
        ]

    def _start_rows(self, data: _MixedEMData, seed: int) -> _MixedEMData:
        """The rows of the k-means start of a fit out of core, in memory:
        all of them when there are at most ``_START_ROWS``, else about that
        many drawn uniformly, block by block, with a generator seeded by
        ``seed`` and the block's position."""
        from .._dask_blocks import block_map

        fraction = min(1.0, _START_ROWS / data.n)
        parts = block_map(data.source, _sample_block, fraction, seed, pass_index=True)
        rows = np.concatenate(parts, axis=0)
        return _rows_data(rows, self._nominal_mask(), data.sizes, data)

    @staticmethod
    def _start_features(data: _MixedEMData) -> np.ndarray:
        """The standardised numeric columns and the one-hot nominal ones,
        missing entries at their means, for k-means."""
        assert data.onehot is not None
        assert data.Z0 is not None and data.nominal_missing is not None
        onehot = data.onehot.copy()
        for v, block in enumerate(category_blocks(data.sizes)):
            miss = data.nominal_missing[:, v]
            seen = onehot[~miss, block]
            onehot[np.ix_(miss, np.arange(block.start, block.stop))] = (
                seen.mean(axis=0) if len(seen) else 0.0
            )
        return np.hstack([data.Z0, onehot])

    def _centre_prior(self, data: _EMData, starts: list[Any]) -> _EMData:
        assert isinstance(data, _MixedEMData)
        rows = starts[0][0]
        if rows.Z0 is None or not rows.Z0.shape[1] or rows.groups is None:
            return data
        labels = _centre_labels(self._start_features(rows), int(self.n_components))
        return within_centre(data, rows.Z0, rows.groups.missing, labels)

    def _initial(self, data: _EMData, start: Any) -> Params:
        rows, labels = start
        assert isinstance(rows, _MixedEMData) and rows.onehot is not None
        assert rows.Z0 is not None
        K = self.n_components
        p = rows.Z0.shape[1]
        if p:
            assert rows.groups is not None
            pi, m, S = _initial_parameters(rows.Z0, rows.groups.missing, labels, K)
        else:
            pi = np.maximum(np.bincount(labels, minlength=K) / rows.n, 1.0 / rows.n)
            m, S = np.zeros((K, 0)), np.zeros((K, 0, 0))
        pi = pi / pi.sum()
        # Class PMFs of the start: the cluster's observed frequencies, with a
        # half count everywhere so that no category starts impossible.
        counts = np.zeros((K, rows.onehot.shape[1]))
        np.add.at(counts, labels, rows.onehot)
        theta = self._normalise(counts + 0.5, rows.sizes)
        return pi, theta, m, S

    @staticmethod
    def _normalise(counts: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
        theta = np.empty_like(counts)
        for block in category_blocks(sizes):
            part = counts[:, block]
            total = part.sum(axis=1, keepdims=True)
            width = block.stop - block.start
            theta[:, block] = np.divide(
                part, total, out=np.full_like(part, 1.0 / max(width, 1)),
                where=total > 0,
            )  # fmt: skip
        return theta

    def _m_step(
        self, data: _EMData, params: Params, sums: tuple[Any, ...], iteration: int
    ) -> Params:
        assert isinstance(data, _MixedEMData)
        m, S = params[2], params[3]
        R, counts, weighted, scatter, cov_sum = sums
        n, (K, p) = data.n, m.shape
        Nk = np.maximum(R, _MIN_RESP * n)
        pi_new = weights_mode(Nk, data.prior_rows / K)
        theta_new = self._normalise(
            counts + self._category_pseudo_counts(data, K), data.sizes
        )
        if not p:
            return pi_new, theta_new, m, S
        m_new, S_new = gaussian_m_step(
            data.prior.split(K), m, S, (R, weighted, scatter, cov_sum), Nk, iteration
        )
        return pi_new, theta_new, m_new, S_new

    def _n_parameters(self) -> int:
        nominal = self._nominal_mask()
        levels = [
            len(c)
            for c, is_nom in zip(self.nominal_categories_, nominal, strict=True)
            if is_nom and c is not None
        ]
        return n_parameters(len(self.weights_), int((~nominal).sum()), levels)

    def _store(self, data: _EMData, params: Params) -> None:
        assert isinstance(data, _MixedEMData)
        pi, theta, m, S = params
        self.weights_ = pi
        self.means_ = data.center + data.scale * m
        self.covariances_ = S * np.outer(data.scale, data.scale)
        self.category_probabilities_ = [
            theta[:, b].copy() for b in category_blocks(data.sizes)
        ]

    # -- conditionals ------------------------------------------------------
    def _conditionals(self, X: np.ndarray) -> MixedConditionals:
        nominal = self._nominal_mask()
        Xn, codes, sizes = self._split(X)
        K = len(self.weights_)
        theta = (
            np.hstack(self.category_probabilities_)
            if self.category_probabilities_
            else np.zeros((K, 0))
        )
        # The nominal entries' likelihood joins the prior of the classes.
        log_prior = (
            np.log(self.weights_)[None, :]
            + one_hot_codes(codes, sizes) @ np.log(np.maximum(theta, _TINY)).T
        )
        numeric = None
        if Xn.shape[1]:
            numeric = mixture_conditionals(
                Xn, log_prior, self.means_, self.covariances_
            )
            weights = numeric.weights
        else:
            weights = np.exp(log_prior - logsumexp(log_prior, axis=1, keepdims=True))
        return MixedConditionals(
            nominal=nominal,
            weights=weights,
            numeric=numeric,
            codes=codes,
            probabilities=tuple(self.category_probabilities_),
            missing=np.isnan(X),
        )
