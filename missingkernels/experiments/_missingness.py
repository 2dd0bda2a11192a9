"""Missingness mechanisms of the genRBF experiments (MCAR, MAR, MNAR) and
self-masking."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
from scipy import linalg
from sklearn.utils import check_array, check_random_state

from .._sklearn_compat import Interval, StrOptions, validate_params
from .._validation import check_range_summary, first_text_cell

__all__ = ["DegenerateMissingnessWarning", "MissingnessInfo", "simulate_missing"]


class DegenerateMissingnessWarning(UserWarning):
    """Warned when MAR/MNAR can reach the rate only through tied distances.

    More entries lie at distance 0 from their reference row (duplicated rows,
    as binary or constant features produce) than the requested rate allows,
    so the paper's ``exp(-t * 0) = 1`` would remove all of them for every
    ``t``. :func:`simulate_missing` then removes a random subset of those
    entries only (``t = inf`` and ``p_zero < 1`` in :class:`MissingnessInfo`).
    """


@dataclass(frozen=True)
class MissingnessInfo:
    """What :func:`simulate_missing` did, for reproducibility and checks.

    Attributes
    ----------
    mechanism : {"mcar", "mar", "mnar", "self_masking"}
        The mechanism used.
    rate : float
        The requested fraction of missing entries.
    missing_rate : float
        The realised fraction of missing entries in the returned array.
    visible : ndarray of int
        Indices (into the input columns) of the returned columns, in order.
        All columns for ``"mcar"`` and ``"mar"``.
    hidden : ndarray of int
        Indices of the columns that drove the removal and were dropped
        (``"mnar"`` only; empty otherwise).
    reference_rows : ndarray of int or None
        ``reference_rows[i]`` is the input row whose distance decides the
        removal of returned column ``i`` (``"mar"``/``"mnar"``); None for MCAR.
    t : float or None
        The calibrated rate ``t`` of eqs. (26)-(27): entry ``i`` of row ``x``
        is removed with probability ``p_zero * exp(-t ||x - x_i||^2_Sigma)``;
        for ``"self_masking"`` the calibrated offset ``c`` of the logistic
        removal probability ``sigmoid(2 z + c)``.
    p_zero : float
        Removal probability at distance 0: 1 as in the paper, below 1 (with
        ``t = inf``) only when more entries tie with their reference row than
        the rate allows (see :class:`DegenerateMissingnessWarning`).
    """

    mechanism: str
    rate: float
    missing_rate: float
    visible: np.ndarray
    hidden: np.ndarray
    reference_rows: np.ndarray | None
    t: float | None
    p_zero: float = 1.0


class _Named:
    """Stands for the estimator in the shared validation messages: the
    column names of a DataFrame ``X``, for :func:`simulate_missing`."""

    def __init__(self, X: Any):
        names = getattr(X, "columns", None)
        if names is not None and all(isinstance(c, str) for c in names):
            self.feature_names_in_ = np.asarray(names, dtype=object)


def _numeric_rows(X: Any) -> np.ndarray:
    """X as a float64 copy (at least 2 rows), or a ValueError that names the
    first entry that is not a number and says what to do."""
    try:
        return np.asarray(
            check_array(
                X,
                dtype=np.float64,
                ensure_all_finite=False,
                ensure_min_samples=2,
                copy=True,
            )
        )
    except (TypeError, ValueError) as exc:
        if "convert" not in str(exc) and not isinstance(exc, TypeError):
            raise
        where = first_text_cell(_Named(X), X, True)
        raise ValueError(
            f"simulate_missing needs numeric X; {where or exc}. It removes "
            "entries of complete numeric data: encode nominal columns as "
            "numbers first (e.g. sklearn.preprocessing.OneHotEncoder, or "
            "pd.to_numeric(..., errors='coerce') for numbers stored as text), "
            "or drop them and put them back afterwards."
        ) from exc


def _whiten(X: np.ndarray) -> np.ndarray:
    """Rows mapped so Euclidean distance = Mahalanobis distance of sample cov."""
    if X.shape[1] == 0:
        return X
    cov = np.atleast_2d(np.cov(X, rowvar=False))
    # Pseudo-inverse square root: constant or collinear columns (a singular
    # sample covariance) simply do not contribute to the distance.
    eigval, eigvec = linalg.eigh(cov)
    keep = eigval > 1e-12 * max(eigval.max(), 0.0)
    return (X - X.mean(axis=0)) @ (eigvec[:, keep] / np.sqrt(eigval[keep]))


def _distance_driven_removal(
    driver: np.ndarray,
    n_targets: int,
    rate: float,
    rng: np.random.RandomState,
    mechanism: str,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Remove entries of ``n_targets`` columns by eqs. (26)-(27).

    Returns the removal mask ``(n, n_targets)``, the reference rows, ``t``
    and the removal probability at distance 0 (``p_zero``).
    """
    n = driver.shape[0]
    if n <= n_targets:
        raise ValueError(
            f"The MAR/MNAR mechanisms draw one reference row per affected "
            f"feature and never remove entries of those rows, so they need more "
            f"rows than affected features; got {n} rows for {n_targets} features."
        )
    n_cells = n * n_targets
    k = round(rate * n_cells)
    eligible = (n - n_targets) * n_targets
    if k > eligible:
        raise ValueError(
            f"rate={rate:g} asks for {k} missing entries but only {eligible} can "
            f"be removed ({n_targets} reference rows stay complete); use a rate "
            f"of at most {eligible / n_cells:.3f}."
        )
    refs = rng.choice(n, size=n_targets, replace=False)
    Y = _whiten(driver)
    # dist[x, i] = ||x - x_i||^2_Sigma with x_i the reference row of column i.
    sq = np.einsum("ij,ij->i", Y, Y)
    dist = sq[:, None] + sq[refs][None, :] - 2.0 * Y @ Y[refs].T
    dist = np.maximum(dist, 0.0)
    # Rows equal to their reference row are at distance exactly 0 (rounding
    # would leave ~1e-16 and rank them by noise).
    for i, r in enumerate(refs):
        dist[np.all(driver == driver[r], axis=1), i] = 0.0
    # Entry removed iff U < exp(-t dist), i.e. t < tau = -log(U) / dist, with
    # one uniform U per entry shared by every candidate t: t is then set to
    # the value at which exactly k entries go, so the rate is hit exactly.
    u = rng.uniform(size=(n, n_targets))
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = -np.log(u) / dist
    tau[dist == 0.0] = np.inf  # probability exp(-t * 0) = 1 for every t
    tau[refs] = -np.inf  # reference rows stay complete ("x != x_i" in the paper)
    if k == 0:
        return np.zeros((n, n_targets), dtype=bool), refs, float("inf"), 1.0
    tied = np.isposinf(tau)
    n_tied = int(tied.sum())
    if n_tied > k:
        # Every t removes all entries at distance 0, more than k: remove the k
        # of them with the smallest U, i.e. U < p_zero with t = inf.
        u_tied = np.sort(u[tied])
        p_zero = 0.5 * (u_tied[k - 1] + u_tied[k])
        warnings.warn(
            f"simulate_missing({mechanism!r}, rate={rate:g}): {n_tied} of the "
            f"{eligible} removable entries ({n_tied / eligible:.1%}) equal "
            "their reference row on the features that drive removal (duplicated "
            "rows, e.g. binary or constant features), and the paper removes "
            "every such entry for every t. To hit the rate, only those entries "
            f"were removed, each with probability {p_zero:.3g}. Use features "
            "with more distinct values for a graded mechanism, or "
            "mechanism='mcar'.",
            DegenerateMissingnessWarning,
            # the caller of simulate_missing (via validate_params, _removed_entries)
            stacklevel=5,
        )
        return tied & (u < p_zero), refs, float("inf"), float(p_zero)
    order = np.sort(tau, axis=None)[::-1]
    hi = order[k - 1]  # smallest tau that is removed
    lo = order[k] if k < n_cells else -np.inf  # largest tau that is kept
    if np.isfinite(lo) and np.isfinite(hi):
        t = 0.5 * (lo + hi)
    elif np.isfinite(hi):
        t = 0.5 * hi
    else:  # exactly the k entries at distance 0 are removed
        t = 2.0 * lo if np.isfinite(lo) and lo > 0 else 1.0
    return tau > t, refs, float(t), 1.0


# Slope of the self-masking mechanism's logistic removal probability in the
# standardised value: an entry two standard deviations above its column mean
# is ``exp(2 * 2) ~ 55`` times likelier to go missing, in odds, than one at
# the mean.
_SELF_MASKING_SLOPE = 2.0


def _self_masking_removal(
    X: np.ndarray, rate: float, rng: np.random.RandomState
) -> tuple[np.ndarray, float]:
    """Entries removed iff ``U < sigmoid(s z + c)``, ``z`` the entry
    standardised in its column, with ``c`` set so that exactly
    ``round(rate * n * d)`` entries go (one uniform ``U`` per entry)."""
    n, d = X.shape
    k = round(rate * n * d)
    sd = X.std(axis=0)
    z = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    u = rng.uniform(size=(n, d))
    # U < sigmoid(s z + c)  <=>  c > logit(U) - s z =: tau.
    with np.errstate(divide="ignore"):
        tau = np.log(u) - np.log1p(-u) - _SELF_MASKING_SLOPE * z
    if k == 0:
        return np.zeros((n, d), dtype=bool), -np.inf
    order = np.sort(tau, axis=None)
    hi = order[k - 1]  # largest tau removed
    lo = order[k] if k < n * d else np.inf  # smallest tau kept
    c = 0.5 * (hi + lo) if np.isfinite(lo) else hi + 1.0
    return tau < c, float(c)


@validate_params(
    {
        "X": ["array-like"],
        "mechanism": [StrOptions({"mcar", "mar", "mnar", "self_masking"})],
        "rate": [Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
        "return_info": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def simulate_missing(
    X: Any,
    mechanism: str = "mcar",
    rate: float = 0.3,
    *,
    random_state: Any = None,
    return_info: bool = False,
) -> Any:
    """Remove entries of complete data by the mechanisms of the genRBF paper.

    Implements section 5.1 of Smieja et al. (2019):

    - ``"mcar"``: exactly ``round(rate * n * d)`` entries, chosen uniformly at
      random, are removed.
    - ``"mar"`` (eq. 26): ``d`` distinct reference rows ``x_1, ..., x_d`` are
      drawn; feature ``i`` of row ``x`` is removed with probability
      ``exp(-t ||x - x_i||^2_Sigma)``, where ``||v||^2_Sigma = v' Sigma^-1 v``
      and ``Sigma`` is the sample covariance of ``X`` (pseudo-inverse if
      singular). The reference rows themselves lose nothing (the paper's
      ``x != x_i``).
    - ``"mnar"`` (eq. 27): the features are split at random into a hidden half
      ``I_H`` (``d // 2`` features) and a visible half ``I_V`` (the rest).
      With one reference row per visible feature, visible feature ``i`` of
      ``x`` is removed with probability ``exp(-t ||x_H - x_{i,H}||^2_Sigma_H)``
      (distance on the hidden features only); the hidden features are then
      dropped, so **the returned array has only the visible columns**.
    - ``"self_masking"`` (not in the paper; MNAR where a value decides its own
      removal): entry ``x_ij`` is removed with probability
      ``sigmoid(s z_ij + c)``, ``z_ij`` the entry standardised by its
      column's mean and standard deviation, and slope ``s = 2``, so large
      values go missing more often; the offset ``c`` is calibrated like
      ``t`` below.

    Every mechanism removes exactly ``round(rate * n_entries)`` entries, so
    the realised rate is within ``0.5 / n_entries`` of ``rate`` whatever the
    data (continuous, binary or constant columns). For MAR and MNAR ``t`` is
    calibrated to this: each entry gets one uniform ``U``, is removed iff
    ``U < exp(-t dist)``, and ``t`` is the point where exactly that many
    entries satisfy this. Given ``t``, each removal is the paper's
    independent Bernoulli draw. Self-masking calibrates its offset ``c``
    the same way.

    Entries whose row equals its reference row on the driving features
    (distance 0) are removed for every ``t``. When there are more of them
    than the rate allows (duplicated rows, as binary or constant features
    produce), only they are removed, each with a calibrated probability
    ``p_zero < 1`` (``t = inf``), and a :class:`DegenerateMissingnessWarning`
    says so: removal then depends on the data only through equality with the
    reference rows (with constant features it is MCAR).

    Rows may lose every entry (the paper does not forbid it, and every
    density of this package accepts such rows); with MAR/MNAR the reference
    rows always stay complete.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Complete numeric data (no NaN, no inf), e.g. a DataFrame of numeric
        columns (encode nominal ones as numbers first).
    mechanism : {"mcar", "mar", "mnar", "self_masking"}, default="mcar"
        The missingness mechanism.
    rate : float in [0, 1), default=0.3
        Fraction of the returned entries to remove.
    random_state : int, RandomState instance or None, default=None
        Seed for the draws; the output is a deterministic function of
        ``(X, mechanism, rate, random_state)`` for an int seed.
    return_info : bool, default=False
        Also return a :class:`MissingnessInfo` (visible/hidden columns,
        reference rows, calibrated ``t`` and ``p_zero``, realised rate).

    Returns
    -------
    X_missing : ndarray of shape (n_samples, n_returned_features)
        A float64 copy of ``X`` with NaN at removed entries;
        ``n_returned_features`` is ``n_features`` for MCAR/MAR and the
        number of visible features for MNAR.
    info : MissingnessInfo
        Only when ``return_info=True``.

    Raises
    ------
    ValueError
        If ``X`` has NaN or inf, an entry that is not a number (the message
        names it), fewer rows than the reference rows needed, fewer than 2
        features for MNAR, or a rate that cannot be reached; for MAR, MNAR
        and self-masking also if a column's values are so large (above about
        1e144) or so close together (spread below about 1e-144) that their
        squares leave float64's range: rescale such columns first.

    Warns
    -----
    DegenerateMissingnessWarning
        If MAR/MNAR hit the rate only by removing a random subset of the
        entries at distance 0 from their reference row (see above).

    Notes
    -----
    The paper calls eq. (26) MAR, but the distance ``||x - x_i||_Sigma``
    includes the coordinate ``i`` that is removed, so the probability of a
    removal depends on the removed value: it is not missing at random in
    Rubin's sense, and likelihood methods such as Gaussian EM are slightly
    biased under it (measured in ``tests/test_densities_mar_recovery.py``:
    variances off by about one standard error at n=5000). For a mechanism
    that is MAR in Rubin's sense, use ``"mnar"`` with ``return_info=True``
    and put the complete hidden columns back: removal then depends only on
    always-observed features.

    References
    ----------
    .. [1] M. Smieja, L. Struski, J. Tabor and M. Marzec, "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173, 150-162,
       2019, sec. 5.1, eqs. (26)-(27).
    .. [2] K. Mohan, J. Pearl. "Graphical models for processing missing
       data", Journal of the American Statistical Association 116 (2021)
       1023-1037 (self-masking: a variable causes its own missingness).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.experiments import simulate_missing
    >>> X = np.random.default_rng(0).normal(size=(100, 4))
    >>> X_mar = simulate_missing(X, "mar", 0.3, random_state=0)
    >>> float(np.isnan(X_mar).mean())
    0.3
    >>> X_mnar, info = simulate_missing(
    ...     X, "mnar", 0.2, random_state=0, return_info=True)
    >>> X_mnar.shape, len(info.hidden)
    ((100, 2), 2)
    """
    X = _complete_numeric_data(X, mechanism)
    rng = check_random_state(random_state)
    X, removed, info = _removed_entries(X, mechanism, float(rate), rng)
    X[removed] = np.nan
    if not return_info:
        return X
    return X, info


def _complete_numeric_data(X: Any, mechanism: str) -> np.ndarray:
    """X as a float64 copy, checked finite and, unless MCAR, in float64's range."""
    X = _numeric_rows(X)
    if not np.all(np.isfinite(X)):
        bad = np.argwhere(~np.isfinite(X))[0]
        raise ValueError(
            "simulate_missing needs complete, finite data: X has "
            f"{int(np.sum(np.isnan(X)))} NaN and {int(np.sum(np.isinf(X)))} inf "
            f"entries (first at row {bad[0]}, column {bad[1]}, both 0-based). Drop "
            "or impute them before simulating missingness."
        )
    if mechanism != "mcar":
        # The other mechanisms compute covariances, distances or standard
        # deviations, which square the values: keep them in float64's range.
        check_range_summary(
            _Named(X),
            X.max(axis=0),
            X.min(axis=0),
            name=f"simulate_missing({mechanism!r})",
            who="The MAR, MNAR and self-masking mechanisms (covariances, "
            "distances, standard deviations)",
            remedy="Rescale these columns before simulating (e.g. divide by a "
            "power of ten, and multiply the result back), or use "
            "mechanism='mcar', which does no arithmetic on the values.",
        )
    return X


def _removed_entries(
    X: np.ndarray, mechanism: str, rate: float, rng: np.random.RandomState
) -> tuple[np.ndarray, np.ndarray, MissingnessInfo]:
    """The data kept (MNAR drops the hidden half), its removed entries, the info."""
    n, d = X.shape
    all_columns = np.arange(d)
    hidden = np.zeros(0, dtype=np.intp)
    refs: np.ndarray | None = None
    t: float | None = None
    p_zero = 1.0
    if mechanism == "mcar":
        k = round(rate * n * d)
        removed = np.zeros(n * d, dtype=bool)
        removed[rng.choice(n * d, size=k, replace=False)] = True
        removed = removed.reshape(n, d)
        visible = all_columns
    elif mechanism == "mar":
        removed, refs, t, p_zero = _distance_driven_removal(X, d, rate, rng, mechanism)
        visible = all_columns
    elif mechanism == "self_masking":
        removed, t = _self_masking_removal(X, rate, rng)
        visible = all_columns
    else:
        if d < 2:
            raise ValueError(
                "The MNAR mechanism splits the features into a hidden and a "
                f"visible half, so it needs at least 2 features; X has {d}."
            )
        perm = rng.permutation(d)
        hidden = np.sort(perm[: d // 2])
        visible = np.sort(perm[d // 2 :])
        removed, refs, t, p_zero = _distance_driven_removal(
            X[:, hidden], len(visible), rate, rng, mechanism
        )
        X = X[:, visible]
    info = MissingnessInfo(
        mechanism=mechanism,
        rate=rate,
        missing_rate=float(removed.mean()),
        visible=visible,
        hidden=hidden,
        reference_rows=refs,
        t=t,
        p_zero=p_zero,
    )
    return X, removed, info
