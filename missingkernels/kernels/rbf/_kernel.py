"""The RBF base kernel and its presets, genRBF and the expected RBF.

The RBF ``exp(-gamma ||x - y||^2)`` (Euclidean or Mahalanobis) on complete
rows, and the presets genRBF (Smieja et al.) and the expected RBF (Anderson &
Gupta) that average it over the missing entries through the cells of
:mod:`._cells` and :mod:`.factor`.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.utils import check_random_state

from ..._numerics import gamma_from_variance
from ..._sklearn_compat import Interval, StrOptions
from .._base_kernel import BaseKernel, MissingnessWeightMixin
from .._expected_kernel import BaseExpectedKernel
from . import engine

__all__ = ["RBF", "ExpectedRBFKernel", "GenRBFKernel"]


# -- base kernel ------------------------------------------------------------------


class RBF(MissingnessWeightMixin, BaseKernel):
    """The RBF ``exp(-gamma ||x - y||^2)``, Euclidean or Mahalanobis.

    Parameters
    ----------
    gamma : float > 0 or "scale", default="scale"
        ``"scale"``: ``1 / (n_features * v)`` with ``v`` the variance of the
        observed training entries; with ``metric="mahalanobis"``,
        ``1 / n_features`` (whitened rows have unit variance).
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        ``"mahalanobis"`` replaces ``||x - y||^2`` by ``(x - y)^T S^-1 (x - y)``
        with ``S`` the covariance of the fitted density (for a mixture or
        draws: the covariance implied on the training rows).
    missingness_weight : float in [0, 1], default=0.0
        The weight ``u`` of a factor on the rows' missingness masks that
        multiplies the kernel (:meth:`missingness_factor`); 0 leaves it out.

    Attributes
    ----------
    gamma_ : float
    metric_ : missingkernels.kernels.rbf.engine.Metric
        The fitted geometry the rows are taken in: its center (the mean of
        the training rows) and, for the Mahalanobis metric, the whitening.
    metric_covariance_ : ndarray of shape (n_features, n_features) or None
    """

    name = "RBF"
    one_width = True
    _parameter_constraints: ClassVar[dict] = {
        "gamma": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"scale"})],
        "metric": [StrOptions({"euclidean", "mahalanobis"})],
        "missingness_weight": [Interval(Real, 0.0, 1.0, closed="both")],
    }

    def __init__(
        self,
        gamma: float | str = "scale",
        metric: str = "euclidean",
        missingness_weight: float = 0.0,
    ):
        self.gamma = gamma
        self.metric = metric
        self.missingness_weight = missingness_weight

    def fit(self, X: np.ndarray, train: Any, density: Any = None) -> RBF:
        # The fitted joint covariance where the density has one (Gaussian
        # conditionals carry it); otherwise the covariance it implies.
        covariance = (
            train.joint_covariance(density) if self.metric == "mahalanobis" else None
        )
        center = train.first_moments().mean(axis=0)
        return self._set_fitted(center, covariance, X.shape[1], lambda: np.nanvar(X))

    def fit_blocks(self, X: Any, density: Any) -> RBF:
        """:meth:`fit` on the row blocks of a dask array, out of core: the
        center (the mean of the rows' conditional means) and the variance of
        the observed entries (for ``gamma="scale"``) from sums over blocks,
        the Mahalanobis metric from the density's covariance."""
        from ..._dask_blocks import block_sums
        from ...conditionals import GaussianConditionals

        first = X[:2].compute()
        with np.errstate(invalid="ignore"):
            shift = float(np.nanmean(first)) if np.isfinite(first).any() else 0.0
        n, means, count, shifted, squares = block_sums(
            X, _center_and_spread, density, shift
        )
        covariance = None
        if self.metric == "mahalanobis":
            train = density.conditionals(first)
            if not isinstance(train, GaussianConditionals):
                raise NotImplementedError(
                    "The Mahalanobis metric out of core takes the covariance of "
                    f"a Gaussian density, not the {type(train).__name__} of "
                    f"{type(density).__name__}: load the rows in memory "
                    "(X.compute()) for this density."
                )
            covariance = train.joint_covariance(density)
        mean = shifted / count
        return self._set_fitted(
            means / n, covariance, X.shape[1], lambda: squares / count - mean * mean
        )

    def _set_fitted(
        self,
        center: np.ndarray,
        covariance: np.ndarray | None,
        n_features: int,
        variance: Any,
    ) -> RBF:
        """The fitted state from the rows' center, the metric's covariance
        (Mahalanobis) and ``variance()``, the variance of the observed
        entries (called for ``gamma="scale"`` in the Euclidean metric)."""
        if covariance is not None:
            self.metric_covariance_: np.ndarray | None = np.array(
                covariance, np.float64
            )
            self.metric_ = engine.Metric.mahalanobis_from(center, covariance)
        else:
            self.metric_covariance_ = None
            self.metric_ = engine.Metric.euclidean(center)
        if not isinstance(self.gamma, str):
            self.gamma_ = float(self.gamma)
        elif self.metric == "mahalanobis":
            self.gamma_ = 1.0 / n_features
        else:
            self.gamma_ = gamma_from_variance(n_features, float(variance()))
        return self

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Fitted before the metric was a public attribute (``_metric``).
        if "_metric" in state:
            state["metric_"] = state.pop("_metric")
        super().__setstate__(state)

    def _rows(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The kernel without the factor on the masks."""
        x, _ = self.metric_.coordinates(A)
        y, _ = self.metric_.coordinates(B)
        sq = (x * x).sum(1)[:, None] + (y * y).sum(1)[None] - 2.0 * (x @ y.T)
        return np.exp(-self.gamma_ * np.maximum(sq, 0.0))

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return np.ones(len(A))

    def fitted_attributes(self) -> dict[str, Any]:
        return {"gamma_": self.gamma_, "metric_covariance_": self.metric_covariance_}

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """Random Fourier features (paired cos/sin, ``n_components // 2``
        frequencies ``w ~ N(0, 2 gamma I)`` in the metric's coordinates).
        There are none with the factor on the masks (the features then use
        Nystroem)."""
        from ._fourier import FourierMap, fourier_frequencies

        if self.missingness_weight > 0:
            raise NotImplementedError(
                f"The RBF with missingness_weight={self.missingness_weight} > 0 "
                "has no expected Fourier features (the factor on the masks "
                "multiplies the kernel)."
            )

        metric = self.metric_
        omega = fourier_frequencies(
            n_components,
            len(metric.center),
            self.gamma_,
            metric.whitening if metric.precision is not None else None,
            check_random_state(random_state),
        )
        return FourierMap(omega=omega, center=metric.center)


def _center_and_spread(
    block: np.ndarray, density: Any, shift: float
) -> tuple[int, np.ndarray, int, float, float]:
    """A block's rows, the sum of their conditional means, and the count,
    sum and sum of squares of its observed entries (less ``shift``, near
    their mean: no cancellation in the variance)."""
    means = np.asarray(density.conditionals(block).first_moments(), np.float64)
    observed = block[~np.isnan(block)] - shift
    return (
        len(block),
        means.sum(axis=0),
        observed.size,
        float(observed.sum()),
        float((observed * observed).sum()),
    )


# -- presets ----------------------------------------------------------------------

_RBF_CONSTRAINTS: dict[str, list[Any]] = {
    **BaseExpectedKernel._parameter_constraints,
    **RBF._parameter_constraints,
}

_RBF_PARAMETERS = """gamma : float > 0 or "scale", default="scale"
        Width of the base kernel ``exp(-gamma ||x - y||^2)``. ``"scale"`` uses
        ``1 / (n_features * v)`` with ``v`` the variance of the observed
        training entries (as scikit-learn's ``"scale"``, over observed entries
        only); with ``metric="mahalanobis"`` the whitened rows have unit
        variance, so it is ``1 / n_features``. The value used is ``gamma_``.
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        ``"euclidean"``: the scikit-learn RBF on complete rows.
        ``"mahalanobis"``: ``||x - y||^2`` is replaced by
        ``(x - y)^T S^-1 (x - y)``, i.e. the kernel is taken after whitening
        every row and conditional covariance (the scalar product of the
        genRBF paper's Appendix D and of its authors' experiments). ``S`` is
        the covariance of the fitted Gaussian density; for a mixture or for
        draws, the covariance the density implies on the training rows
        (``mean_i E[X_i X_i^T] - m m^T``). It must be positive definite.
    density : str or density estimator, default="gaussian_em"
        A registry name (see :func:`missingkernels.list_densities`) or an
        unfitted density object (cloned at fit). Gaussian densities give the
        closed form; a mixture the weighted sum over component pairs; draws
        (``"mice"``, ``"iterative"``) the average over pairs of draws.
    missingness_weight : float in [0, 1], default=0.0
        The weight ``u`` of a factor on the missingness masks that multiplies
        the kernel: ``(1 - u) + u / d sum_v 1[x_v missing = y_v missing]``,
        the share of features missing in both rows or observed in both
        (simple matching, a kernel equal to 1 for equal masks, so the product
        is a kernel with the same diagonal). For missingness that carries
        information (values missing because they are large, a test not
        ordered because it was not needed), which the average over the
        missing entries cannot use. The masks are observed, so the factor
        multiplies the expectation as it is (and the variance by its
        square). 0, the default, leaves it out. With ``u > 0`` there are no
        expected Fourier features (:class:`~missingkernels.ExpectedKernelFeatures`
        uses Nystroem)."""

_RBF_ATTRIBUTES = """density_ : density estimator
        The density fitted on the training rows (for ``"gaussian_em"``:
        ``density_.mean_``, ``density_.covariance_``).
    gamma_ : float
        The kernel width used.
    metric_covariance_ : ndarray of shape (n_features, n_features) or None
        ``S`` of the Mahalanobis metric; None for the Euclidean one.
    n_features_in_ : int
        Number of features seen during fit."""


class GenRBFKernel(BaseExpectedKernel):
    """genRBF: the normalised expected RBF kernel (Smieja et al.).

    ``K(x, y) = E k(X, Y) / sqrt(E k(X, X') E k(Y, Y'))`` where ``k`` is the
    RBF, ``X``, ``X'`` are independent draws of the missing entries of ``x``
    from the fitted density and ``Y`` likewise for ``y``. With a Gaussian
    density this is the closed form of the paper's eqs. (20)-(21)::

        E k(X, Y) = det(I + 2 gamma (A + B))^(-1/2)
                    exp(-1/2 (a - b)^T (A + B + I / (2 gamma))^-1 (a - b)),
        E k(X, X') = det(I + 4 gamma A)^(-1/2),

    computed exactly, grouped by missing pattern (one small factorisation per
    pair of patterns, never one per pair of rows) and in log space. Complete
    rows give ``exp(-gamma ||x - y||^2)``; the Gram matrix is positive
    semi-definite and has a unit diagonal.

    Parameters
    ----------
    {rbf_parameters}
    diagonal : {{"independent", "same_draw"}}, default="independent"
        The diagonal of ``k(X)``. ``"independent"`` (the paper): a row against
        an independent copy of itself, so ``K(x, x) = 1``. ``"same_draw"``:
        the same draw twice, ``1 / E k(X, X')``. ``k(X, Y)`` is not affected.

    Attributes
    ----------
    {rbf_attributes}

    See Also
    --------
    ExpectedRBFKernel : The same expectation without the normalisation.

    Notes
    -----
    ``__call__`` runs compiled loops (numba) on threads over disjoint output
    rows: ``MISSINGKERNELS_NUM_THREADS`` (else ``OMP_NUM_THREADS``, else all
    available cores) sets their number. Its memory is the output plus
    O(n d + P k^2) for P missing patterns of at most k missing features.
    Its cost is close to ``sklearn.metrics.pairwise.rbf_kernel`` on filled
    rows when rows share few missing patterns and grows with the number of
    distinct patterns; ``benchmarks/bench_kernels.py`` prints the ratio.

    References
    ----------
    .. [1] M. Smieja, L. Struski, J. Tabor and M. Marzec, "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173, 150-162,
       2019, eqs. (20)-(21) and Appendix D.
    .. [2] L. Struski, M. Smieja, B. Zielinski and J. Tabor, "Regression SVM
       for incomplete data".

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import GenRBFKernel
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [0.5, 0.0]])
    >>> k = GenRBFKernel(gamma=0.5).fit(X)
    >>> K = k(X)
    >>> K.shape, bool(np.allclose(np.diag(K), 1.0))
    ((4, 4), True)
    >>> k(X[:2], X).shape
    (2, 4)
    """

    _base_kernel_class: ClassVar = RBF
    _normalised: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = _RBF_CONSTRAINTS

    def __init__(
        self,
        gamma: float | str = "scale",
        metric: str = "euclidean",
        density: Any = "gaussian_em",
        diagonal: str = "independent",
        missingness_weight: float = 0.0,
    ):
        self.gamma = gamma
        self.metric = metric
        self.density = density
        self.diagonal = diagonal
        self.missingness_weight = missingness_weight


class ExpectedRBFKernel(BaseExpectedKernel):
    """Expected RBF kernel: the RBF averaged over the missing entries (Anderson).

    ``K(x, y) = E k(X, Y)`` with ``k(x, y) = exp(-gamma ||x - y||^2)`` and
    ``X``, ``Y`` independent draws of the missing entries from the fitted
    density (eq. (3) of Anderson & Gupta in scikit-learn's parametrisation)::

        E k(X, Y) = det(I + 2 gamma (A + B))^(-1/2)
                    exp(-1/2 (a - b)^T (A + B + I / (2 gamma))^-1 (a - b))

    for Gaussian conditionals ``N(a, A)``, ``N(b, B)``; computed exactly, by
    pairs of missing patterns and in log space. Complete rows give
    scikit-learn's ``rbf_kernel``. :meth:`variance` gives
    ``Var k = E_{{2 gamma}} k - (E_gamma k)^2`` (the RBF squared is the RBF at
    ``2 gamma``), used by the SOCP estimator.

    Parameters
    ----------
    {rbf_parameters}
    diagonal : {{"same_draw", "independent"}}, default="same_draw"
        The diagonal of ``k(X)``. ``"same_draw"`` (the paper): ``k(x, x) = 1``
        for every draw. ``"independent"``: against an independent copy,
        ``E k(X, X') = det(I + 4 gamma A)^(-1/2)``. ``k(X, Y)`` is not
        affected.

    Attributes
    ----------
    {rbf_attributes}

    See Also
    --------
    GenRBFKernel : The normalised version.

    References
    ----------
    .. [1] H. S. Anderson and M. R. Gupta, "Expected kernel for missing
       features in support vector machines", IEEE Statistical Signal
       Processing Workshop, 2011, eqs. (1), (3), (7).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from missingkernels.kernels import ExpectedRBFKernel
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.5], [0.5, 0.0]])
    >>> k = ExpectedRBFKernel(gamma=0.3).fit(X)
    >>> bool(np.allclose(k(X), rbf_kernel(X, gamma=0.3)))
    True
    >>> X_missing = np.array([[0.0, np.nan], [1.0, 3.0]])
    >>> k.variance(X_missing, X).shape
    (2, 4)
    """

    _base_kernel_class: ClassVar = RBF
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = _RBF_CONSTRAINTS

    def __init__(
        self,
        gamma: float | str = "scale",
        metric: str = "euclidean",
        density: Any = "gaussian_em",
        diagonal: str = "same_draw",
        missingness_weight: float = 0.0,
    ):
        self.gamma = gamma
        self.metric = metric
        self.density = density
        self.diagonal = diagonal
        self.missingness_weight = missingness_weight


for _cls in (GenRBFKernel, ExpectedRBFKernel):
    assert _cls.__doc__ is not None
    _cls.__doc__ = _cls.__doc__.format(
        rbf_parameters=_RBF_PARAMETERS, rbf_attributes=_RBF_ATTRIBUTES
    )
