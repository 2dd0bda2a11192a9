"""Base kernels: classical kernels on complete rows, as small parameter objects.

A base kernel holds its parameters (``gamma``, ``metric``, ...), fits its own
state on the training rows (``gamma_`` for ``gamma="scale"``, the metric
covariance) and evaluates ``k`` on complete rows (:meth:`BaseKernel.pairwise`).
Its expectations over each representation of conditionals are cells of the
expectation table (:mod:`._table`); any representation that can sample works
with it through the average over pairs of draws.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .._numerics import scale_gamma
from .._sklearn_compat import Interval, StrOptions
from ..conditionals import GaussianConditionals

__all__ = ["RBF", "BaseKernel", "Linear", "Presence", "SimpleMatching"]

# Rows per block of the complete-row evaluations below.
_BLOCK = 2048


class BaseKernel(BaseEstimator):
    """Base class of the base kernels ``k(x, y)`` on complete rows.

    Subclasses store their parameters in ``__init__`` (scikit-learn style),
    implement :meth:`pairwise` and, when they have fitted state, :meth:`fit`.
    ``has_variance`` says whether the random kernel's variance is offered
    (closed form where a cell gives it, else over draws).

    Examples
    --------
    A Laplacian kernel, usable with every density through draws:

    >>> import numpy as np
    >>> from missingkernels.kernels import BaseKernel, make_expected_kernel
    >>> class Laplacian(BaseKernel):
    ...     def __init__(self, gamma=1.0):
    ...         self.gamma = gamma
    ...     def pairwise(self, A, B):
    ...         return np.exp(-self.gamma * np.abs(A[:, None] - B[None]).sum(-1))
    >>> ExpectedLaplacian = make_expected_kernel(Laplacian, "ExpectedLaplacianKernel")
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [0.5, 0.0]])
    >>> ExpectedLaplacian(gamma=0.5, n_draws=20).fit(X)(X).shape
    (4, 4)
    """

    #: Short name used in messages.
    name: ClassVar[str] = ""
    #: Whether the variance of ``k(X, Y)`` is offered.
    has_variance: ClassVar[bool] = True
    #: The domains of the rows it applies to (see
    #: :attr:`missingkernels.conditionals.BaseConditionals.domain`).
    domains: ClassVar[tuple[str, ...]] = ("numeric",)

    def fit(self, X: np.ndarray, train: Any, density: Any = None) -> BaseKernel:
        """Fit the kernel's own state.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The validated training rows, NaN where missing.
        train : BaseConditionals
            The conditionals of the training rows under the fitted density.
        density : density estimator, optional
            The fitted density.

        Returns
        -------
        self : object
        """
        return self

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``k(a_i, b_j)`` for complete rows, shape ``(len(A), len(B))``."""
        raise NotImplementedError

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        """``k(a_i, a_i)`` for complete rows, shape ``(len(A),)``."""
        out = np.empty(len(A))
        for i in range(len(A)):
            out[i] = self.pairwise(A[i : i + 1], A[i : i + 1])[0, 0]
        return out

    def fitted_attributes(self) -> dict[str, Any]:
        """Fitted attributes the expected kernel exposes as its own."""
        return {}

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """A map of complete rows whose inner products are (or average to) the
        kernel, for :class:`~missingkernels.ExpectedKernelFeatures`.

        Returns an object with ``transform(A)`` and ``n_components``, or None
        when the kernel has none (the features then use Nystroem). The
        expectation table's cells average it over the conditionals.

        Parameters
        ----------
        train : BaseConditionals
            The conditionals of the training rows (e.g. for the categories).
        n_components : int
            The number of features wanted (random maps).
        random_state : int, RandomState instance or None
        """
        return None

    @classmethod
    def kernel_name(cls) -> str:
        """The short name used in messages: ``name``, else the class name."""
        return cls.name or cls.__name__


class RBF(BaseKernel):
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

    Attributes
    ----------
    gamma_ : float
    metric_covariance_ : ndarray of shape (n_features, n_features) or None
    """

    name = "RBF"
    _parameter_constraints: ClassVar[dict] = {
        "gamma": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"scale"})],
        "metric": [StrOptions({"euclidean", "mahalanobis"})],
    }

    def __init__(self, gamma: float | str = "scale", metric: str = "euclidean"):
        self.gamma = gamma
        self.metric = metric

    def fit(self, X: np.ndarray, train: Any, density: Any = None) -> RBF:
        from . import _rbf

        center = train.first_moments().mean(axis=0)
        if self.metric == "mahalanobis":
            # The fitted joint covariance where the density has one (Gaussian
            # conditionals carry it); otherwise the covariance it implies.
            S = getattr(train, "covariance", None)
            if S is None and isinstance(train, GaussianConditionals):
                S = getattr(density, "covariance_", None)
            if S is None:
                S = train.implied_covariance()
            self.metric_covariance_: np.ndarray | None = np.array(S, np.float64)
            self._metric = _rbf.Metric.mahalanobis_from(center, S)
        else:
            self.metric_covariance_ = None
            self._metric = _rbf.Metric.euclidean(center)
        if isinstance(self.gamma, str):  # "scale"
            if self.metric == "mahalanobis":
                self.gamma_ = 1.0 / X.shape[1]
            else:
                self.gamma_ = scale_gamma(X)
        else:
            self.gamma_ = float(self.gamma)
        return self

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        x, _ = self._metric.coordinates(A)
        y, _ = self._metric.coordinates(B)
        sq = (x * x).sum(1)[:, None] + (y * y).sum(1)[None] - 2.0 * (x @ y.T)
        return np.exp(-self.gamma_ * np.maximum(sq, 0.0))

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return np.ones(len(A))

    def fitted_attributes(self) -> dict[str, Any]:
        return {"gamma_": self.gamma_, "metric_covariance_": self.metric_covariance_}

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """Random Fourier features (paired cos/sin, ``n_components // 2``
        frequencies ``w ~ N(0, 2 gamma I)`` in the metric's coordinates)."""
        from ._features import FourierMap, fourier_frequencies

        metric = self._metric
        omega = fourier_frequencies(
            n_components,
            len(metric.center),
            self.gamma_,
            metric.whitening if metric.precision is not None else None,
            check_random_state(random_state),
        )
        return FourierMap(omega=omega, center=metric.center)


class Linear(BaseKernel):
    """The linear kernel ``x^T y``."""

    name = "linear"

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return np.asarray(A @ B.T, dtype=np.float64)

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return np.einsum("nd,nd->n", A, A)

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """The exact map: the row itself."""
        from ._features import IdentityMap

        return IdentityMap(train.n_features)


class SimpleMatching(BaseKernel):
    """Simple matching ``1/d sum_v 1[x_v = y_v]`` for categorical codes."""

    name = "simple matching"
    has_variance = False
    domains = ("nominal",)

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        out = np.empty((len(A), len(B)))
        for s in range(0, len(A), _BLOCK):
            a = A[s : s + _BLOCK]
            out[s : s + len(a)] = (a[:, None, :] == B[None]).mean(axis=-1)
        return out

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return np.ones(len(A))

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """The exact map: one-hot codes over the training codes, ``/ sqrt(d)``."""
        return _category_map(train, presence=False)


class Presence(BaseKernel):
    """Presence ``1/d sum_v 1[x_v = 1] 1[y_v = 1]`` for 0/1 features."""

    name = "presence"
    has_variance = False
    domains = ("nominal",)

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        a = (np.asarray(A) == 1.0).astype(np.float64)
        b = (np.asarray(B) == 1.0).astype(np.float64)
        return a @ b.T / A.shape[1]

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        return (np.asarray(A) == 1.0).mean(axis=1)

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """The exact map: ``1[x_v = 1] / sqrt(d)`` (the probability if missing)."""
        return _category_map(train, presence=True)


def _category_map(train: Any, presence: bool) -> Any:
    from ._features import CategoryMap

    cats = tuple(
        np.asarray(train.feature_values(v), dtype=np.float64)
        for v in range(train.n_features)
    )
    return CategoryMap(categories=cats, presence=presence)
