"""The mixed kernel: an RBF on the numeric columns times simple matching on
the nominal ones, and its expectation over latent-class conditionals."""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np

from .._numerics import scale_gamma
from .._sklearn_compat import Interval, StrOptions
from .._table_encoding import encode_table
from ..conditionals import MixedConditionals
from ..conditionals._mixed import category_blocks
from ..hookspecs import hookimpl
from ._base_kernel import BaseKernel, MissingnessWeightMixin
from ._expectation_table import Expectation, times_missingness_factor
from ._expected_kernel import BaseExpectedKernel
from .rbf import engine

__all__ = ["ExpectedMixedRBFKernel", "MixedRBFKernel", "RBFMatching"]


class RBFMatching(MissingnessWeightMixin, BaseKernel):
    """An RBF on the numeric columns times simple matching on the nominal ones.

    ``k(x, y) = exp(-gamma ||x_N - y_N||^2) * ((1 - w) + w m(x_C, y_C))``
    with ``x_N`` the numeric columns, ``m`` the fraction of the nominal
    columns ``x_C`` on which both rows take the same category and ``w`` the
    ``nominal_weight``. Both factors are positive semi-definite kernels
    (``m`` is a sum of products of indicators, ``1 - w`` a constant), so the
    product is. Without nominal columns it is the RBF; without numeric
    columns and with ``w = 1``, simple matching (Belanche's K1).

    With ``nominal_combination="product"`` the nominal columns multiply
    instead of averaging: ``prod_v ((1 - w) + w 1[x_v = y_v])``, each factor
    PSD. Every mismatch then scales the kernel by ``1 - w``: with
    ``w = 1 - exp(-2 gamma')`` this is the RBF of width ``gamma'`` on the
    one-hot codes of the nominal columns.

    Parameters
    ----------
    gamma : float > 0 or "scale", default="scale"
        Width of the RBF on the numeric columns; ``"scale"`` is
        ``1 / (n_numeric * v)`` with ``v`` the variance of their observed
        training entries.
    nominal_weight : float in [0, 1], default=0.9
        The weight ``w`` of the nominal block: 0 ignores the nominal
        columns, 1 makes rows that match on no nominal column dissimilar
        whatever their numeric columns. The default is chosen from
        cross-validated accuracy on four UCI tables with numeric and nominal
        columns and natural missing values (hepatitis, horse colic,
        Cleveland heart disease, mammographic masses): the mean accuracy
        rose with ``w`` (0.770, 0.776, 0.781, 0.784, 0.786 at 0.25, 0.5,
        0.75, 0.9, 1); 0.9 is within noise of 1 and keeps rows that match on
        no nominal column comparable through their numeric columns.
    nominal_combination : {"mean", "product"}, default="mean"
        How the nominal columns combine: the share of matching columns
        (``"mean"``), or a product of one factor per column (``"product"``,
        each mismatch multiplies the kernel by ``1 - w``).
    missingness_weight : float in [0, 1], default=0.0
        The weight ``u`` of an optional factor on the missingness patterns,
        ``(1 - u) + u / d sum_v 1[x_v missing = y_v missing]`` (simple
        matching of the masks, PSD), for data whose missingness is
        informative. It multiplies the expected kernel as it is (the masks
        are observed) and needs the closed form over latent-class
        conditionals; 0 (the default) leaves it out.

    Attributes
    ----------
    gamma_ : float
    metric_ : missingkernels.kernels.rbf.engine.Metric
        The Euclidean geometry of the numeric columns (their training mean
        as the center).
    nominal_ : ndarray of shape (n_features,), dtype bool
        The nominal columns (from the training conditionals).

    Notes
    -----
    **The scale of C on tables with only (or mostly) nominal columns.** With
    ``"mean"``, the nominal block is ``(1 - w) + w m``: a constant plus
    ``w / q`` times the inner product of the rows' one-hot codes (``q`` nominal
    columns). An SVM ignores a constant added to its kernel (its dual
    constraint ``sum_i alpha_i y_i = 0`` cancels it), so on an all-nominal
    table only the product ``C w`` matters, and the kernel's values spread over
    ``1 - K(x, y) = w (1 - m)``, on average ``w G`` between two training rows,
    ``G`` the mean over the nominal columns of the probability that two rows
    differ there (the Gini impurity ``1 - sum_c p_c^2``). An RBF with
    ``gamma="scale"`` on standardised numeric columns spreads over about
    0.6-0.75 (measured on pima, ionosphere and breast cancer), which is what
    ``C = 1`` suits; tables of many sparse binary columns (most rows share the
    common value, ``G`` about 0.1-0.25) give ``w G`` about 0.1-0.2, and the
    default ``C = 1`` then acts like a ``C`` 3-7 times smaller: the SVM
    underfits. Search ``C`` up to about ``1 / (w G)`` or beyond (e.g. over 1,
    10 and 100). On a synthetic stand-in for UCI audiology (226 rows, 69
    nominal columns with ``G = 0.23``, 24 classes), 5-fold accuracy rose from
    0.650 at ``C = 1`` to 0.851 at ``C = 8`` and stayed there up to
    ``C = 100``; one-hot codes and scikit-learn's ``SVC()`` reach 0.752. No
    default of ``w`` can fix this (``w <= 1`` keeps the block a PSD kernel in
    ``[1 - w, 1]``; ``w = 1`` gave 0.674): the remedy is ``C``. ``"product"``
    with ``w = 1 - exp(-2 / (q G))`` is the RBF of the one-hot codes with the
    width of scikit-learn's ``gamma="scale"`` (per-column variances), whose
    spread suits ``C = 1`` (0.754 on the same table), but it peaked lower than
    ``"mean"`` with a larger ``C`` (0.798 at ``C = 10``).
    ``benchmarks/bench_nominal_scale.py`` reproduces these numbers.
    """

    name = "RBF x matching"
    one_width = True
    has_variance = False
    domains = ("mixed",)
    _parameter_constraints: ClassVar[dict] = {
        "gamma": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"scale"})],
        "nominal_weight": [Interval(Real, 0.0, 1.0, closed="both")],
        "nominal_combination": [StrOptions({"mean", "product"})],
        "missingness_weight": [Interval(Real, 0.0, 1.0, closed="both")],
    }

    def __init__(
        self,
        gamma: float | str = "scale",
        nominal_weight: float = 0.9,
        nominal_combination: str = "mean",
        missingness_weight: float = 0.0,
    ):
        self.gamma = gamma
        self.nominal_weight = nominal_weight
        self.nominal_combination = nominal_combination
        self.missingness_weight = missingness_weight

    def fit(self, X: np.ndarray, train: Any, density: Any = None) -> RBFMatching:
        self._set_nominal(train, density, X.shape[1])
        numeric = X[:, ~self.nominal_]
        center = (
            np.nanmean(numeric, axis=0) if numeric.size else np.zeros(numeric.shape[1])
        )
        center = np.where(np.isnan(center), 0.0, center)
        self.metric_ = engine.Metric.euclidean(center)
        if isinstance(self.gamma, str):
            self.gamma_ = scale_gamma(numeric) if numeric.shape[1] else 1.0
        else:
            self.gamma_ = float(self.gamma)
        return self

    def _set_nominal(self, train: Any, density: Any, n_features: int) -> None:
        """``nominal_`` from the training conditionals (or the density);
        refuses a missingness factor without latent-class conditionals."""
        if self.missingness_weight > 0 and not isinstance(train, MixedConditionals):
            raise ValueError(
                "missingness_weight > 0 needs latent-class conditionals "
                "(density='latent_class'): the factor on the missingness "
                f"patterns has no average over {type(train).__name__}."
            )
        nominal = getattr(train, "nominal", None)
        if nominal is None:
            nominal = getattr(density, "is_nominal_", None)
        if nominal is None:
            nominal = np.zeros(n_features, dtype=bool)
        self.nominal_ = np.asarray(nominal, dtype=bool).copy()

    def fit_blocks(self, X: Any, density: Any) -> RBFMatching:
        """:meth:`fit` on the row blocks of a dask array, out of core: the
        nominal columns from the conditionals of two rows, the numeric
        columns' means and the variance of their observed entries (for
        ``gamma="scale"``) from sums over blocks."""
        from .._dask_blocks import block_sums
        from .._numerics import gamma_from_variance

        first = np.asarray(X[:2].compute(), dtype=np.float64)
        self._set_nominal(density.conditionals(first), density, X.shape[1])
        numeric = ~self.nominal_
        head = first[:, numeric]
        shift = float(np.nanmean(head)) if np.isfinite(head).any() else 0.0
        counts, sums, count, shifted, squares = block_sums(
            X, _numeric_moments, numeric, shift
        )
        center = np.divide(sums, counts, out=np.zeros(len(sums)), where=counts > 0)
        self.metric_ = engine.Metric.euclidean(center)
        if not isinstance(self.gamma, str):
            self.gamma_ = float(self.gamma)
        elif not numeric.any():
            self.gamma_ = 1.0
        else:
            mean = shifted / count if count else 0.0
            variance = squares / count - mean * mean if count else np.nan
            self.gamma_ = gamma_from_variance(int(numeric.sum()), float(variance))
        return self

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Fitted before the metric was a public attribute (``_metric``).
        if "_metric" in state:
            state["metric_"] = state.pop("_metric")
        super().__setstate__(state)

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return np.ones(len(A))

    def _rows(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The kernel without the missingness factor."""
        nom = self.nominal_
        x, y = A[:, ~nom] - self.metric_.center, B[:, ~nom] - self.metric_.center
        sq = (x * x).sum(1)[:, None] + (y * y).sum(1)[None] - 2.0 * (x @ y.T)
        K = np.exp(-self.gamma_ * np.maximum(sq, 0.0))
        if nom.any():
            a, b = A[:, nom], B[:, nom]
            w = float(self.nominal_weight)
            if self.nominal_combination == "product":
                for v in range(a.shape[1]):
                    K *= (1.0 - w) + w * (a[:, v, None] == b[None, :, v])
                return K
            match = np.zeros((len(a), len(b)))
            for v in range(a.shape[1]):
                match += a[:, v, None] == b[None, :, v]
            K *= (1.0 - w) + w * match / a.shape[1]
        return K

    def fitted_attributes(self) -> dict[str, Any]:
        return {"gamma_": self.gamma_}


# -- the cell over MixedConditionals -------------------------------------------


def _log_weights(c: MixedConditionals) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(c.weights)


def _sides(c: MixedConditionals, metric: engine.Metric) -> list[engine.Side] | None:
    """One RBF side per class for the numeric block (offsets 0, weights 1)."""
    if c.numeric is None:
        return None
    num = c.numeric
    packed = engine.Packed.build(num.patterns, num.pattern_index)
    return [
        engine.Side.build(num.means[k], packed, [s[k] for s in num.covariances], metric)
        for k in range(c.n_components)
    ]


def _matching(
    base: RBFMatching, Fa: np.ndarray, Fb: np.ndarray, blocks: list[slice]
) -> np.ndarray:
    """The expected nominal factor between two sets of rows: ``Fa[:, b] @
    Fb[:, b].T`` is the probability that column ``b`` matches; ``"mean"``
    averages ``(1 - w) + w P``, ``"product"`` multiplies it over columns
    (independent within a pair of classes)."""
    w = float(base.nominal_weight)
    if base.nominal_combination == "product":
        M = np.ones((len(Fa), len(Fb)))
        for b in blocks:
            P = Fa[:, b] @ Fb[:, b].T
            P *= w
            P += 1.0 - w
            M *= P
        return M
    M = Fa @ Fb.T
    M *= w / len(blocks)
    M += 1.0 - w
    return M


def _matching_aligned(
    base: RBFMatching, Fa: np.ndarray, Fb: np.ndarray, blocks: list[slice]
) -> np.ndarray:
    """:func:`_matching` between row ``i`` of ``Fa`` and row ``i`` of ``Fb``."""
    w = float(base.nominal_weight)
    if base.nominal_combination == "product":
        out = np.ones(len(Fa))
        for b in blocks:
            out *= (1.0 - w) + w * np.einsum("nc,nc->n", Fa[:, b], Fb[:, b])
        return out
    return (1.0 - w) + w * np.einsum("nc,nc->n", Fa, Fb) / len(blocks)


def _class_pmfs(c: MixedConditionals) -> list[np.ndarray]:
    """:meth:`MixedConditionals.class_pmfs` of every class (none without
    nominal columns)."""
    return [c.class_pmfs(k) for k in range(c.n_components)] if c.n_nominal else []


def _self_log(
    base: RBFMatching,
    c: MixedConditionals,
    sides: list[engine.Side] | None,
    pmfs: list[np.ndarray],
) -> np.ndarray:
    """``log E k(X_i, X_i')`` for independent copies of each row; ``pmfs``:
    :func:`_class_pmfs` of ``c``."""
    K = c.n_components
    q = c.n_nominal
    blocks = category_blocks(c.category_sizes)
    logw = _log_weights(c)
    terms = np.empty((K * K, c.n_samples))
    for a in range(K):
        for b in range(K):
            t = logw[:, a] + logw[:, b]
            if sides is not None:
                t = t + engine.aligned(sides[a], sides[b], base.gamma_, base.metric_)
            if q:
                match = _matching_aligned(base, pmfs[a], pmfs[b], blocks)
                with np.errstate(divide="ignore"):
                    t = t + np.log(match)
            terms[a * K + b] = t
    from scipy.special import logsumexp

    return np.asarray(logsumexp(terms, axis=0))


def _mixed_gram(
    base: RBFMatching,
    cx: MixedConditionals,
    cy: MixedConditionals | None,
    diagonal: str,
    normalised: bool,
) -> np.ndarray:
    with np.errstate(under="ignore"):
        K = _gram(base, cx, cy, diagonal, normalised)
    return times_missingness_factor(K, base, cx, cy)


def _gram(
    base: RBFMatching,
    cx: MixedConditionals,
    cy: MixedConditionals | None,
    diagonal: str,
    normalised: bool,
) -> np.ndarray:
    """``sum_ab w_ia w_jb E_ab[rbf] E_ab[(1 - w) + w m]``, per class pair the
    numeric and nominal blocks being independent; genRBF's normalisation
    ``-1/2 log n_i`` enters the exponent through the offsets."""
    gamma, metric = base.gamma_, base.metric_
    symmetric = cy is None
    other = cx if cy is None else cy
    K, q = cx.n_components, cx.n_nominal
    sx = _sides(cx, metric)
    sy = sx if symmetric else _sides(other, metric)
    px = _class_pmfs(cx)
    py = px if symmetric else _class_pmfs(other)
    blocks = category_blocks(cx.category_sizes)
    self_x = _self_log(base, cx, sx, px)
    self_y = self_x if symmetric else _self_log(base, other, sy, py)
    off_x = _log_weights(cx)
    off_y = off_x if symmetric else _log_weights(other)
    if normalised:
        off_x = off_x - 0.5 * self_x[:, None]
        off_y = off_y - 0.5 * self_y[:, None]
    out = np.zeros((cx.n_samples, other.n_samples))
    term = np.empty_like(out)
    for a in range(K):
        for b in range(a if symmetric else 0, K):
            if sx is not None and sy is not None:
                engine.pairs(
                    sx[a].with_offsets(off_x[:, a]),
                    sy[b].with_offsets(off_y[:, b]),
                    gamma, metric, symmetric=symmetric and a == b,
                    accumulate=False, out=term,
                )  # fmt: skip
            else:
                np.add(off_x[:, a, None], off_y[None, :, b], out=term)
            engine.exp_inplace(term)
            if q:
                term *= _matching(base, px[a], py[b], blocks)
            out += term
            if symmetric and a != b:
                out += term.T
    if symmetric:
        engine.symmetrize(out)
        if diagonal == "same_draw":
            # Every draw matches itself: k(x, x) = 1; genRBF divides by n_i.
            diag = np.exp(-self_x) if normalised else np.ones(cx.n_samples)
        else:
            diag = np.ones(cx.n_samples) if normalised else np.exp(self_x)
        out[np.diag_indices_from(out)] = diag
    return out


MIXED_CELL = Expectation(
    RBFMatching,
    MixedConditionals,
    _mixed_gram,
    normalises=True,
    description=(
        "RBF x matching over MixedConditionals: closed form per class pair "
        "(compiled RBF loops and one GEMM of the class PMFs)"
    ),
)


def _numeric_moments(
    block: np.ndarray, numeric: np.ndarray, shift: float
) -> tuple[np.ndarray, np.ndarray, int, float, float]:
    """A block's numeric columns: per column the count and sum of the
    observed entries, and over all of them the count, sum and sum of squares
    less ``shift`` (near their mean: no cancellation in the variance)."""
    Xn = np.asarray(block, dtype=np.float64)[:, numeric]
    observed = ~np.isnan(Xn)
    values = Xn[observed] - shift
    return (
        observed.sum(axis=0),
        np.where(observed, Xn, 0.0).sum(axis=0),
        values.size,
        float(values.sum()),
        float((values * values).sum()),
    )


# -- presets ---------------------------------------------------------------------

_TABLE_CONSTRAINTS: dict[str, list[Any]] = {
    "nominal_features": ["array-like", StrOptions({"from_dtype"}), None],
    "handle_unknown": [StrOptions({"missing", "error"})],
}

_MIXED_CONSTRAINTS: dict[str, list[Any]] = {
    **BaseExpectedKernel._parameter_constraints,
    **RBFMatching._parameter_constraints,
    **_TABLE_CONSTRAINTS,
}

_MIXED_PARAMETERS = """gamma : float > 0 or "scale", default="scale"
        Width of the RBF on the numeric columns; ``"scale"`` is
        ``1 / (n_numeric * v)`` with ``v`` the variance of their observed
        training entries. The value used is ``gamma_``.
    nominal_weight : float in [0, 1], default=0.9
        Weight ``w`` of the nominal block (see :class:`RBFMatching`, also for
        the evidence behind the default). On a table of many nominal
        columns an SVM needs a larger ``C`` than on numeric columns (about
        ``1 / (w G)``, ``G`` the mean probability that two rows differ on a
        nominal column): see the Notes of :class:`RBFMatching`.
    nominal_combination : {"mean", "product"}, default="mean"
        The nominal columns' factors averaged, or multiplied (see
        :class:`RBFMatching`).
    missingness_weight : float in [0, 1], default=0.0
        Weight ``u`` of the optional factor on the missingness patterns (see
        :class:`RBFMatching`); 0 leaves it out.
    nominal_features : "from_dtype", None, array-like or bool mask, default="from_dtype"
        The nominal columns: by default the string, object, boolean and
        unordered categorical columns of a DataFrame (ordered categoricals
        are numeric, coded by rank); or those named (names, 0-based indices
        or a mask), whose distinct values are the categories.
    handle_unknown : {"missing", "error"}, default="missing"
        A category not seen in the training rows: a missing entry (with an
        ``UnknownCategoryWarning``), or an error.
    density : str or density estimator, default="latent_class"
        A density of mixed conditionals (``"latent_class"``, or a
        :class:`~missingkernels.densities.LatentClassDensity` with more
        classes), or one that can draw mixed rows (the draws average)."""

_MIXED_ATTRIBUTES = """density_ : LatentClassDensity
        The density fitted on the training rows.
    gamma_ : float
        The RBF width used.
    is_nominal_ : ndarray of shape (n_features_in_,), dtype bool
        The nominal columns.
    nominal_categories_ : list
        Per column, the category labels of its codes (None if numeric).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings."""

_MIXED_FORMULA = """Within one pair of latent classes ``(a, b)`` the numeric and nominal
    blocks are independent, so the expectation is exact::

        E k(X, Y) = sum_ab w_xa w_yb E_ab[exp(-gamma ||X_N - Y_N||^2)]
                                     * ((1 - w) + w / q sum_v P_ab(X_v = Y_v))

    with ``w_xa`` the posterior class weights of the rows, ``E_ab[rbf]`` the
    expected RBF between the two Gaussian conditionals (as in genRBF, by
    pairs of missing patterns) and ``P_ab(X_v = Y_v)`` the probability that
    the two rows' categories of nominal column ``v`` agree (one GEMM of the
    class PMFs)."""


class MixedRBFKernel(BaseExpectedKernel):
    """The normalised expected RBF x matching kernel for mixed-type tables.

    genRBF's normalisation of the expected kernel of :class:`RBFMatching`
    (an RBF on the numeric columns times simple matching on the nominal
    ones) over a latent-class density of the numeric and nominal columns::

        K(x, y) = E k(X, Y) / sqrt(E k(X, X') E k(Y, Y'))

    {formula}

    Complete rows give the base kernel itself and the diagonal is 1. On a
    table without nominal columns (and one class) this is genRBF; on a table
    without numeric columns, one class and ``nominal_weight=1``, the
    normalised Belanche K1. It is the default kernel of
    :class:`~missingkernels.MissingKernelSVC` for tables with nominal
    columns.

    Parameters
    ----------
    {parameters}
    diagonal : {{"independent", "same_draw"}}, default="independent"
        The diagonal of ``k(X)``: an independent copy (1) or the same draw.

    Attributes
    ----------
    {attributes}

    See Also
    --------
    ExpectedMixedRBFKernel : The same expectation without the normalisation.
    GenRBFKernel : The numeric-only kernel.

    References
    ----------
    .. [1] M. Smieja, L. Struski, J. Tabor and M. Marzec, "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173, 150-162,
       2019 (the normalised expected RBF).
    .. [2] L. A. Belanche, V. Kobayashi and T. Aluja, "Handling missing
       values in kernel methods with application to microbiology data",
       Neurocomputing 141, 110-116, 2014 (the expected matching kernel).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from missingkernels.kernels import MixedRBFKernel
    >>> df = pd.DataFrame({{
    ...     "age": [30.0, 45.0, np.nan, 52.0, 38.0],
    ...     "smoker": ["no", "yes", "yes", None, "no"],
    ... }})
    >>> k = MixedRBFKernel().fit(df)
    >>> K = k(df)
    >>> K.shape, bool(np.allclose(np.diag(K), 1.0))
    ((5, 5), True)
    """

    _base_kernel_class: ClassVar = RBFMatching
    _normalised: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = _MIXED_CONSTRAINTS
    _encode = staticmethod(encode_table)

    def __init__(
        self,
        gamma: float | str = "scale",
        nominal_weight: float = 0.9,
        nominal_combination: str = "mean",
        missingness_weight: float = 0.0,
        *,
        nominal_features: Any = "from_dtype",
        handle_unknown: str = "missing",
        density: Any = "latent_class",
        diagonal: str = "independent",
    ):
        self.gamma = gamma
        self.nominal_weight = nominal_weight
        self.nominal_combination = nominal_combination
        self.missingness_weight = missingness_weight
        self.nominal_features = nominal_features
        self.handle_unknown = handle_unknown
        self.density = density
        self.diagonal = diagonal


class ExpectedMixedRBFKernel(BaseExpectedKernel):
    """The expected RBF x matching kernel for mixed-type tables.

    ``K(x, y) = E k(X, Y)`` for the base kernel :class:`RBFMatching` (an RBF
    on the numeric columns times simple matching on the nominal ones) over a
    latent-class density of the numeric and nominal columns.

    {formula}

    Complete rows give the base kernel itself. On a table without nominal
    columns (and one class) this is the expected RBF; on a table without
    numeric columns, one class and ``nominal_weight=1``, Belanche's K1.

    Parameters
    ----------
    {parameters}
    diagonal : {{"same_draw", "independent"}}, default="same_draw"
        The diagonal of ``k(X)``: the same draw twice (1) or an
        independent copy.

    Attributes
    ----------
    {attributes}

    See Also
    --------
    MixedRBFKernel : The normalised version (unit diagonal).

    References
    ----------
    .. [1] H. S. Anderson and M. R. Gupta, "Expected kernel for missing
       features in support vector machines", IEEE Statistical Signal
       Processing Workshop, 2011.
    .. [2] L. A. Belanche, V. Kobayashi and T. Aluja, "Handling missing
       values in kernel methods with application to microbiology data",
       Neurocomputing 141, 110-116, 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import ExpectedMixedRBFKernel
    >>> X = np.array([[0.5, 0.0], [1.0, 1.0], [np.nan, 1.0], [0.2, np.nan]])
    >>> k = ExpectedMixedRBFKernel(nominal_features=[1]).fit(X)
    >>> k(X).shape
    (4, 4)
    """

    _base_kernel_class: ClassVar = RBFMatching
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = _MIXED_CONSTRAINTS
    _encode = staticmethod(encode_table)

    def __init__(
        self,
        gamma: float | str = "scale",
        nominal_weight: float = 0.9,
        nominal_combination: str = "mean",
        missingness_weight: float = 0.0,
        *,
        nominal_features: Any = "from_dtype",
        handle_unknown: str = "missing",
        density: Any = "latent_class",
        diagonal: str = "same_draw",
    ):
        self.gamma = gamma
        self.nominal_weight = nominal_weight
        self.nominal_combination = nominal_combination
        self.missingness_weight = missingness_weight
        self.nominal_features = nominal_features
        self.handle_unknown = handle_unknown
        self.density = density
        self.diagonal = diagonal


for _cls in (MixedRBFKernel, ExpectedMixedRBFKernel):
    assert _cls.__doc__ is not None
    _cls.__doc__ = _cls.__doc__.format(
        formula=_MIXED_FORMULA,
        parameters=_MIXED_PARAMETERS,
        attributes=_MIXED_ATTRIBUTES,
    )


# -- registration ------------------------------------------------------------------


@hookimpl
def missingkernels_register_kernels():  # type: ignore[no-untyped-def]
    return {"expected_mixed_rbf": ExpectedMixedRBFKernel, "mixed_rbf": MixedRBFKernel}


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    return {"rbf_matching/mixed": MIXED_CELL}
