"""Multiple-imputation densities: m draws per row (MICE, IterativeImputer)."""

from __future__ import annotations

import inspect
from numbers import Integral
from typing import Any, ClassVar

import numpy as np

from .._numerics import RowStreams, integer_seeds, row_keys
from .._optional import import_optional
from .._sklearn_compat import Interval, StrOptions
from .._validation import describe_features
from ..conditionals import SampleConditionals
from ._base import BaseDensity

__all__ = ["IterativeImputerDensity", "MICEDensity"]


def _sample_conditionals(X: np.ndarray, draws: list[np.ndarray]) -> SampleConditionals:
    missing = np.isnan(X)
    samples = np.stack(draws)
    # Observed entries are the data, in every draw, bit for bit.
    samples[:, ~missing] = X[~missing]
    return SampleConditionals(samples=samples, missing=missing)


class IterativeImputerDensity(BaseDensity):
    """Draws from scikit-learn's IterativeImputer with posterior sampling.

    ``n_draws`` imputers ``IterativeImputer(sample_posterior=True)`` with
    different seeds are fitted on the training rows (chained equations with
    Bayesian ridge regressions, van Buuren & Groothuis-Oudshoorn 2011).
    :meth:`conditionals` imputes any rows with these fitted imputers only
    (``transform``, never refitting), giving ``n_draws`` completed copies of
    each row; observed entries are never changed. Draws are reproducible:
    the same rows give the same draws on every call.

    Parameters
    ----------
    n_draws : int, default=5
        Number of imputations ``m`` per row.
    max_iter : int, default=10
        Imputation rounds of each imputer (see ``IterativeImputer``).
    random_state : int, RandomState instance or None, default=None
        Seeds the imputers.

    Attributes
    ----------
    imputers_ : list of IterativeImputer
        The fitted imputers, one per draw.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] S. van Buuren and K. Groothuis-Oudshoorn, "mice: Multivariate
       Imputation by Chained Equations in R", Journal of Statistical Software
       45(3), 1-67, 2011.
    .. [2] M. Smieja, L. Struski, J. Tabor and M. Marzec, "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173, 150-162,
       2019 (the multiple-imputation baseline).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.densities import IterativeImputerDensity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3))
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> density = IterativeImputerDensity(n_draws=4, random_state=0).fit(X)
    >>> density.conditionals(X[:5]).samples.shape
    (4, 5, 3)
    """

    representation: ClassVar[str] = "samples"
    # Imputed by regressions that treat every column as a number.
    domain: ClassVar[str | None] = "numeric"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_draws: int = 5, max_iter: int = 10, random_state: Any = None):
        self.n_draws = n_draws
        self.max_iter = max_iter
        self.random_state = random_state

    def _fit(self, X: np.ndarray) -> None:
        from sklearn.experimental import enable_iterative_imputer  # noqa: F401
        from sklearn.impute import IterativeImputer

        # BayesianRidge's predictive sd is NaN for a constant predictor
        # (sqrt of a rounding-negative variance); the imputer then uses the
        # mean, as _posterior_draw does: not worth a numpy warning.
        with np.errstate(invalid="ignore"):
            self.imputers_ = [
                IterativeImputer(
                    sample_posterior=True,
                    max_iter=self.max_iter,
                    random_state=int(seed),
                ).fit(X)
                for seed in integer_seeds(self.random_state, self.n_draws)
            ]

    def _conditionals(self, X: np.ndarray) -> SampleConditionals:
        missing = np.isnan(X)
        keys = row_keys(X, missing)
        draws = [
            _posterior_draw(imp, X, missing, RowStreams(keys, int(imp.random_state)))
            for imp in self.imputers_
        ]
        return _sample_conditionals(X, draws)


def _posterior_draw(
    imputer: Any, X: np.ndarray, missing: np.ndarray, streams: RowStreams
) -> np.ndarray:
    """One completion by the fitted chained equations, the noise keyed by row.

    The steps of ``IterativeImputer.transform`` with ``sample_posterior=True``
    and unbounded values (``N(mu, sigma^2)`` per imputed entry), through its
    public fitted attributes, except that the normal of step ``s`` for row
    ``i`` comes from the row's own stream: a row's draw does not depend on
    the other rows transformed with it (the imputer's own generator would).
    """
    filled = np.asarray(imputer.initial_imputer_.transform(X), dtype=np.float64)
    # (IterativeImputer also stops when every entry of the batch is missing:
    # a batch-level rule this row-wise version leaves out.)
    for step, triplet in enumerate(imputer.imputation_sequence_):
        rows = np.flatnonzero(missing[:, triplet.feat_idx])
        if rows.size == 0:
            continue
        neighbours = filled[np.ix_(rows, triplet.neighbor_feat_idx)]
        with np.errstate(invalid="ignore"):  # NaN sd: see _fit
            mu, sigma = triplet.estimator.predict(neighbours, return_std=True)
        z = streams.take(rows).normal(step, 1)[:, 0]
        filled[rows, triplet.feat_idx] = np.where(sigma > 0, mu + sigma * z, mu)
    return filled


class MICEDensity(BaseDensity):
    """Draws from multiple imputation by chained equations (statsmodels MICE).

    For each of ``n_draws`` independent chains, statsmodels'
    :class:`~statsmodels.imputation.mice.MICEData` runs ``max_iter`` cycles on
    the training rows: each variable is regressed (OLS) on all others, the
    coefficients are perturbed by a draw from their approximate posterior,
    and missing values are imputed by predictive mean matching (a random one
    of the ``k_pmm`` observed values with the closest predictions). The
    chain's final regressions and donor pools are kept.

    :meth:`conditionals` imputes any rows (training or new) with those fitted
    regressions and training donors only: missing entries start at the
    training initial values and are updated for ``max_iter`` cycles of
    predictive mean matching. Observed entries never change, and the same
    rows always get the same draws.

    Requires statsmodels (``pip install missingkernels[experiments]``).

    Parameters
    ----------
    n_draws : int, default=5
        Number of imputations ``m`` per row (independent chains).
    max_iter : int, default=10
        Chained-equation cycles, on the training rows and when imputing.
    k_pmm : int, default=20
        Donors considered by predictive mean matching.
    perturbation_method : {"gaussian", "boot"}, default="gaussian"
        How the regression coefficients are perturbed (see ``MICEData``).
    random_state : int, RandomState instance or None, default=None
        Seeds the chains and the imputation of rows.

    Attributes
    ----------
    models_ : list of dict
        Per draw, feature index -> ``(params, donor_predictions,
        donor_values)``: the perturbed OLS coefficients (intercept first,
        then the other features in order) and the sorted predicted and
        observed training values used for matching. Predictive mean
        matching imputes a new row with observed training values (its
        donors), so the fitted density keeps every observed training value,
        column by column (not as rows), and so does a model that pickles it.
    order_ : list of int
        The order in which features are imputed in a cycle.
    initial_values_ : ndarray of shape (n_features,)
        Start values of missing entries (the observed value closest to the
        feature mean, as in ``MICEData``).
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] S. van Buuren and K. Groothuis-Oudshoorn, "mice: Multivariate
       Imputation by Chained Equations in R", Journal of Statistical Software
       45(3), 1-67, 2011.
    .. [2] M. Smieja, L. Struski, J. Tabor and M. Marzec, "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173, 150-162,
       2019 (the ``mice`` baseline).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.densities import MICEDensity
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> density = MICEDensity(n_draws=3, max_iter=3, random_state=0).fit(X)
    >>> density.conditionals(X[:5]).samples.shape
    (3, 5, 3)
    """

    representation: ClassVar[str] = "samples"
    # Imputed by regressions that treat every column as a number.
    domain: ClassVar[str | None] = "numeric"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "k_pmm": [Interval(Integral, 1, None, closed="left")],
        "perturbation_method": [StrOptions({"gaussian", "boot"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_draws: int = 5,
        max_iter: int = 10,
        k_pmm: int = 20,
        perturbation_method: str = "gaussian",
        random_state: Any = None,
    ):
        self.n_draws = n_draws
        self.max_iter = max_iter
        self.k_pmm = k_pmm
        self.perturbation_method = perturbation_method
        self.random_state = random_state

    def _fit(self, X: np.ndarray) -> None:
        purpose = f"{type(self).__name__}.fit"
        pd = import_optional("pandas", "experiments", purpose)
        mice = import_optional("statsmodels.imputation.mice", "experiments", purpose)
        MICEData = mice.MICEData
        d = X.shape[1]
        columns = [f"x{j}" for j in range(d)]
        X = X[~np.isnan(X).all(axis=1)]  # as MICEData does: no information
        frame = pd.DataFrame(X, columns=columns)
        has_rng = "rng" in inspect.signature(MICEData).parameters
        seeds = integer_seeds(self.random_state, 2 * self.n_draws)
        self.models_: list[dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]] = []
        self.draw_seeds_ = seeds[self.n_draws :]
        for seed in seeds[: self.n_draws]:
            if has_rng:
                mice = MICEData(
                    frame,
                    perturbation_method=self.perturbation_method,
                    k_pmm=self.k_pmm,
                    rng=np.random.RandomState(int(seed)),
                )
                mice.update_all(self.max_iter)
                models = self._collect(mice, X)
            else:  # statsmodels < 0.15 draws from the global generator
                state = np.random.get_state()  # noqa: NPY002
                try:
                    np.random.seed(int(seed))  # noqa: NPY002
                    mice = MICEData(
                        frame,
                        perturbation_method=self.perturbation_method,
                        k_pmm=self.k_pmm,
                    )
                    mice.update_all(self.max_iter)
                    models = self._collect(mice, X)
                finally:
                    np.random.set_state(state)  # noqa: NPY002
            self.models_.append(models)
        # MICEData imputes variables with the fewest missing entries first;
        # variables complete in training come last (new rows may lack them).
        n_missing = np.isnan(X).sum(axis=0)
        self.order_ = [int(j) for j in np.argsort(n_missing, kind="stable")]
        self.order_ = [j for j in self.order_ if n_missing[j] > 0] + [
            j for j in self.order_ if n_missing[j] == 0
        ]
        observed_mean = np.nanmean(X, axis=0)
        self.initial_values_ = np.array(
            [X[np.nanargmin(np.abs(X[:, j] - observed_mean[j])), j] for j in range(d)]
        )

    def _collect(
        self, mice: Any, X: np.ndarray
    ) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The chain's final perturbed regressions and PMM donor pools."""
        d = X.shape[1]
        completed = mice.data.to_numpy(dtype=np.float64)
        models = {}
        for j in range(d):
            name = f"x{j}"
            if name not in mice.params:
                # Complete in training: fitted here so new rows missing it
                # can still be imputed.
                mice.perturb_params(name)
            params = np.asarray(mice.params[name], dtype=np.float64)
            observed = ~np.isnan(X[:, j])
            exog = _design(completed[observed], j)
            if params.shape != (d,):
                raise RuntimeError(
                    "Unexpected statsmodels MICE regression for "
                    f"{describe_features(self, j)}: "
                    f"{params.shape[0]} coefficients, expected {d} (intercept + "
                    "other features). Please report this with your statsmodels "
                    "version."
                )
            predictions = exog @ params
            order = np.argsort(predictions, kind="stable")
            models[j] = (params, predictions[order], X[observed, j][order])
        return models

    def _conditionals(self, X: np.ndarray) -> SampleConditionals:
        missing = np.isnan(X)
        draws = []
        keys = row_keys(X, missing)
        d = X.shape[1]
        for models, seed in zip(self.models_, self.draw_seeds_, strict=True):
            # The donor picks of a row come from its own stream (batch-free).
            streams = RowStreams(keys, int(seed))
            work = np.where(missing, self.initial_values_, X)
            for it in range(self.max_iter):
                for j in self.order_:
                    rows = np.flatnonzero(missing[:, j])
                    if rows.size == 0:
                        continue
                    params, donor_pred, donor_values = models[j]
                    pred = _design(work[rows], j) @ params
                    u = streams.take(rows).uniform(it * d + j, 1)[:, 0]
                    work[rows, j] = _match(
                        pred, donor_pred, donor_values, self.k_pmm, u
                    )
            draws.append(work)
        return _sample_conditionals(X, draws)


def _design(rows: np.ndarray, j: int) -> np.ndarray:
    """OLS design of MICEData's default formula: intercept + other features."""
    return np.column_stack([np.ones(len(rows)), np.delete(rows, j, axis=1)])


def _match(
    pred: np.ndarray,
    donor_pred: np.ndarray,
    donor_values: np.ndarray,
    k_pmm: int,
    u: np.ndarray,
) -> np.ndarray:
    """Predictive mean matching: one of the k closest donors, picked by ``u``
    (uniforms on (0, 1), one per row)."""
    k = min(k_pmm, len(donor_pred))
    pos = np.searchsorted(donor_pred, pred)
    window = pos[:, None] + np.arange(-k, k)[None, :]
    outside = (window < 0) | (window >= len(donor_pred))
    window = np.clip(window, 0, len(donor_pred) - 1)
    dist = np.abs(donor_pred[window] - pred[:, None])
    dist[outside] = np.inf
    nearest = np.argsort(dist, axis=1, kind="stable")[:, :k]
    choice = np.minimum((u * k).astype(np.intp), k - 1)
    pick = nearest[np.arange(len(pred)), choice]
    return donor_values[window[np.arange(len(pred)), pick]]
