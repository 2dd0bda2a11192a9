"""Expected kernel features: linear models on expected kernels, at any n."""

from __future__ import annotations

import contextlib
import math
import time
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from scipy import linalg
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils import check_random_state

from .._config import arrays_bytes, format_bytes, gram_memory, max_gram_memory
from .._dask_blocks import (
    as_row_blocks,
    is_dask_collection,
    reporting_passes,
    rowwise_on_dask,
)
from .._sklearn_compat import Interval, StrOptions, _fit_context
from .._validation import dropped_features, validate_missing_data
from ..kernels._expectation_table import expected_features
from ._base import (
    KernelParamsMixin,
    fit_density_report,
    forget_training_rows,
    progress,
    report,
)

# Rows per block of transform: bounds the temporaries of the conditionals.
_ROWS = 1 << 14


def feature_memory(
    n_rows: int, n_features: int, n_components: int, itemsize: int = 8
) -> int:
    """Bytes the random or exact features of ``n_rows`` rows take, with
    their map (``n_components`` vectors of ``n_features + 1`` float64: the
    frequencies and phase of random Fourier features)."""
    return n_components * (n_rows * itemsize + 8 * (n_features + 1))


def nystroem_memory(n_rows: int, n_landmarks: int) -> int:
    """Bytes of the largest kernel block a Nystroem map of ``n_rows`` rows
    computes (the landmarks' Gram, or one block of rows against them),
    counted as the kernels count a Gram: the matrix and one working copy."""
    return gram_memory(n_landmarks, max(n_landmarks, min(n_rows, _ROWS)))


class ExpectedKernelFeatures(
    ClassNamePrefixFeaturesOutMixin, KernelParamsMixin, TransformerMixin, BaseEstimator
):
    """Map rows with NaN to features whose inner products are the expected kernel.

    A linear model on these features (``LinearSVC``, ``LogisticRegression``,
    ``Ridge``, ``SGDClassifier``) is a kernel machine on the expected kernel
    without an ``n x n`` Gram matrix: memory and time grow linearly in the
    number of rows.

    - ``method="expected"``: the base kernel's feature map averaged over the
      conditionals of the missing entries, in closed form through the
      expectation table. Exact for ``expected_linear`` (the conditional means)
      and the Belanche kernels (one-hot codes, or the conditional PMF of a
      missing entry); random Fourier features for the RBF family (genRBF's
      normalisation and the Mahalanobis metric included; orthogonal
      frequencies), whose inner products average to the expected kernel over
      ``random_state``, with an error falling like ``1/sqrt(n_components)``.
    - ``method="nystroem"``: ``K(X, L) K(L, L)^(-1/2)`` for ``n_components``
      landmark training rows ``L``, with exact entries of any registry kernel.
    - ``method="auto"``: ``"expected"`` where the kernel and the density's
      representation have it, else ``"nystroem"``.

    Inner products estimate the kernel between independent rows: a row's
    feature vector with itself gives ``E k(X_i, X_i')``, not the
    ``"same_draw"`` diagonal of the kernel.

    Parameters
    ----------
    kernel : str, default="auto"
        A registry kernel name; ``"auto"``: ``"mixed_rbf"`` when the table has
        nominal columns, else ``"genrbf"``.
    density : str, density estimator or None, default=None
        Registry name, unfitted density object or None for the kernel's default.
    density_params : dict, default=None
        Parameters of the density given by name (or of the kernel's
        default); also settable as ``density__<param>`` (see
        :class:`MissingKernelSVC`).
    nominal_features : "from_dtype", None, array-like or bool mask, default="from_dtype"
        The nominal columns of X (see :class:`MissingKernelSVC`).
    handle_unknown : {"missing", "error"}, default="missing"
        Unseen categories in new rows (see :class:`MissingKernelSVC`).
    gamma : float or "scale", default="scale"
        RBF width; ignored by kernels without one.
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        Scalar product of the RBF kernels; ignored by other kernels.
    kernel_params : dict, default=None
        Other parameters of the kernel.
    method : {"auto", "expected", "nystroem"}, default="auto"
    n_components : int, default=500
        Random Fourier features (``2 * max(1, n_components // 2)``: cos and
        sin pairs) or Nystroem landmarks; exact maps have their own size.
    landmarks : {"uniform", "kmeans"}, default="uniform"
        Nystroem landmarks: training rows drawn uniformly, or the training
        rows nearest to k-means centres of the conditional means.
    dtype : {"float64", "float32"}, default="float64"
        Of the output.
    density_rows : int or None, default=None
        Fit the kernel (its density, gamma="scale") on at most this many
        training rows drawn at random; None: on all of them. A Gaussian
        density in ``d`` dimensions is estimated well from a few times
        ``d**2`` rows, and EM's cost grows with the rows: on millions of rows
        this keeps the fit to seconds, at a statistical cost only.
    random_state : int, RandomState instance or None, default=None
        Frequencies and landmarks.
        Also seeds a density the estimator builds by name (``density`` a
        registry name, or the kernel's default) that has a ``random_state``
        of its own, unless ``density_params`` sets it: its draws or
        initialisation, so that the same model on the same rows gives the
        same kernel. A density object keeps its own.
    verbose : int, default=0
        Print what ``fit`` does (the density fitted: iterations, time; the
        map) and the progress of ``transform`` over blocks of rows: a tqdm
        bar when tqdm is installed, else a line per block. Output goes to
        stdout, as scikit-learn's.

    Attributes
    ----------
    kernel_ : object
        The fitted kernel; ``kernel_.density_`` is the fitted density.
    dropped_features_ : ndarray of int
        0-based indices of the features observed in fewer than
        ``missingkernels.MIN_OBSERVED`` (2) training rows, which the kernel
        dropped (named in a ``DroppedFeaturesWarning``;
        ``feature_names_in_[dropped_features_]`` names them). New rows'
        values in them are ignored.
    method_ : {"exact", "fourier", "nystroem"}
        The map used.
    feature_map_ : object or None
        The base kernel's feature map (``"exact"`` and ``"fourier"``).
    landmarks_ : ndarray of shape (n_landmarks, n_features) or None
        The Nystroem landmark rows: the only training rows the fitted map
        keeps (every feature is the kernel against them). The Fourier and
        exact maps keep none: their features need only the density's
        parameters and the map's frequencies.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    References
    ----------
    .. [1] A. Rahimi, B. Recht. "Random features for large-scale kernel
       machines", NIPS 2007.
    .. [2] F. X. Yu, A. T. Suresh, K. Choromanski, D. Holtmann-Rice, S. Kumar.
       "Orthogonal random features", NIPS 2016.
    .. [3] C. Williams, M. Seeger. "Using the Nystroem method to speed up
       kernel machines", NIPS 2001.
    .. [4] M. Śmieja, Ł. Struski, J. Tabor, M. Marzec. "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173 (2019).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.linear_model import LogisticRegression
    >>> from missingkernels import ExpectedKernelFeatures
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> X[rng.random(X.shape) < 0.3] = np.nan
    >>> model = make_pipeline(
    ...     StandardScaler(),
    ...     ExpectedKernelFeatures(n_components=300, random_state=0),
    ...     LogisticRegression(C=10.0, max_iter=1000),
    ... ).fit(X[:200], y[:200])
    >>> model.score(X[200:], y[200:]) > 0.6
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **KernelParamsMixin._kernel_parameter_constraints,
        **KernelParamsMixin._table_parameter_constraints,
        **KernelParamsMixin._density_parameter_constraints,
        "method": [StrOptions({"auto", "expected", "nystroem"})],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions({"uniform", "kmeans"})],
        "dtype": [StrOptions({"float64", "float32"})],
        "density_rows": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # Whose parameter sets the number of features, in messages: an SVM's
    # "features" route names its own (n_kernel_features), not this one's.
    _size_owner: str | None = None
    _size_param: str = "n_components"
    _in_blocks: bool = False

    def __init__(
        self,
        *,
        kernel: str = "auto",
        density: Any = None,
        density_params: dict | None = None,
        nominal_features: Any = "from_dtype",
        handle_unknown: str = "missing",
        gamma: Any = "scale",
        metric: str = "euclidean",
        kernel_params: dict | None = None,
        method: str = "auto",
        n_components: int = 500,
        landmarks: str = "uniform",
        dtype: str = "float64",
        density_rows: int | None = None,
        random_state: Any = None,
        verbose: int = 0,
    ) -> None:
        self.kernel = kernel
        self.density = density
        self.density_params = density_params
        self.nominal_features = nominal_features
        self.handle_unknown = handle_unknown
        self.gamma = gamma
        self.metric = metric
        self.kernel_params = kernel_params
        self.method = method
        self.n_components = n_components
        self.landmarks = landmarks
        self.dtype = dtype
        self.density_rows = density_rows
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: Any, y: Any = None) -> ExpectedKernelFeatures:
        """Fit the kernel's density, then the feature map, on the training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where missing.
        y : None
            Ignored.

        Returns
        -------
        self : ExpectedKernelFeatures
        """
        self._fit(X)
        forget_training_rows(self.kernel_)
        return self

    @_fit_context(prefer_skip_nested_validation=False)
    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """Fit, then return the features of the training rows.

        As ``fit(X).transform(X)``, with the conditionals of the training
        rows computed once (by the fit, then dropped: the fitted map keeps
        no training row but the Nystroem landmarks).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where missing.
        y : None
            Ignored.
        **fit_params : dict
            Ignored.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components_out)
        """
        self._fit(X)
        if is_dask_collection(X):
            return self.transform(X)  # lazy, block by block
        try:
            return self._transform(X)
        finally:
            forget_training_rows(self.kernel_)

    def _fit_blocks(self, X: Any) -> None:
        """:meth:`fit` on the row blocks of a dask collection, out of core:
        the kernel fitted on the blocks (or, with ``density_rows``, in memory
        on that many rows drawn from them), the map from its fitted state,
        or Nystroem on landmarks drawn as in memory (only their rows read);
        the features of the training rows are never all in memory."""
        X = as_row_blocks(self, X, reset=True, purpose=f"{type(self).__name__}.fit")
        rng = check_random_state(self.random_state)
        rows = self._fit_kernel(X, rng)
        if self.method != "nystroem":
            # The map needs the fitted state only; two rows probe the table.
            self._fit_expected(X[:2].compute(), rng)
        if self.feature_map_ is None:
            # Uniform landmarks: the rows the in-memory fit draws, read alone.
            self._fit_nystroem(rows, rng)
        report(self, f"{self._n_features_out} features ({self.method_} map)")

    def _fit_kernel(self, X: Any, rng: np.random.RandomState) -> Any:
        """Fit the kernel on the training rows (with ``density_rows``, on that
        many drawn from them, in memory); the maps are reset. Returns the
        rows it was fitted on."""
        n = X.shape[0]
        if self.density_rows is not None and n > self.density_rows:
            X = X[np.sort(rng.choice(n, self.density_rows, replace=False))]
            if is_dask_collection(X):
                X = X.compute()
        started = time.perf_counter()
        with contextlib.ExitStack() as stack:
            if self.verbose and is_dask_collection(X):  # a long fit: its passes
                stack.enter_context(
                    reporting_passes(lambda text: report(self, f"kernel fit: {text}"))
                )
            self.kernel_ = self._make_kernel().fit(X)
        fit_density_report(self, self.kernel_, started)
        self.dropped_features_ = dropped_features(self.kernel_)
        self.feature_map_ = None
        self.landmarks_ = None
        return X

    def _fits_blocks(self) -> bool:
        """Whether a dask collection is fitted out of core: a kernel fitted
        out of core, and a map that needs no training rows or uniform
        Nystroem landmarks (k-means landmarks read every row)."""
        base = getattr(self._make_kernel(), "_base_kernel_class", None)
        fits = getattr(base, "fits_blocks", None)
        return self.landmarks == "uniform" and callable(fits) and bool(fits())

    def _fit(self, X: Any) -> None:
        if is_dask_collection(X):
            if self._fits_blocks():
                self._fit_blocks(X)
                return
            # A kernel fitted in memory: the rows are read (and checked,
            # and their nominal columns coded, as in memory).
            X = X.compute()
        X = validate_missing_data(
            self, X, reset=True, min_samples=2, require_observed_columns=False,
            encode=self._encode,
        )  # fmt: skip
        self._check_size(X.shape[0], X.shape[1])
        rng = check_random_state(self.random_state)
        X = self._fit_kernel(X, rng)
        if self.method != "nystroem":
            self._fit_expected(X, rng)
        if self.feature_map_ is None:
            self._fit_nystroem(X, rng)
        report(
            self,
            f"{self._n_features_out} features ({self.method_} map)",
        )

    def _refuse(self, what: str, needed: int, fits: int) -> None:
        """The ValueError of a map above the memory limit: what it needs, and
        the largest number of features (or landmarks) that fits."""
        limit, source = max_gram_memory()
        owner = self._size_owner or type(self).__name__
        lower = f"lower {self._size_param}"
        if fits >= 1:
            lower += f" (at most {fits} fit)"
        raise ValueError(
            f"{owner}: {self._size_param}={int(self.n_components)} {what} need "
            f"about {format_bytes(needed)}, above the limit of "
            f"{format_bytes(limit)} ({source}). A few hundred to a few thousand "
            "features usually suffice (the error of random features falls like "
            f"1/sqrt({self._size_param})): {lower}, fit on a random subsample, "
            "or, if the machine has the memory, raise the limit with "
            "missingkernels.set_config(max_gram_memory=...)."
        )

    def _check_size(self, n_rows: int, n_features: int) -> None:
        """ValueError, before any work, when the features of the training rows
        (and the frequencies) would exceed the package's memory limit."""
        if self.method == "nystroem" or self._in_blocks:
            # Nystroem: at most one feature per training row (_fit_nystroem);
            # in blocks: the caller makes the features a block at a time.
            return
        itemsize = np.dtype(self.dtype).itemsize
        needed = feature_memory(n_rows, n_features, int(self.n_components), itemsize)
        limit = max_gram_memory()[0]
        if needed > limit:
            one = feature_memory(n_rows, n_features, 1, itemsize)
            self._refuse(f"features of {n_rows} rows", needed, limit // one)

    def _fit_expected(self, X: np.ndarray, rng: np.random.RandomState) -> None:
        from ..kernels.rbf._fourier import FourierMap

        kernel = self.kernel_
        _, train = kernel._conditionals(X)
        advice = "Use method='nystroem' (any kernel)"
        try:
            fmap = kernel.base_kernel_.feature_map(train, self.n_components, rng)
            if fmap is not None:  # the kernel has a map: the density has none
                advice += " or another density"
            # The table decides whether the map averages over this
            # representation; two rows are enough to find out.
            self._features(fmap, X[:2])
        except NotImplementedError as exc:
            if self.method == "expected":
                raise ValueError(f"method='expected': {exc} {advice}.") from None
            return
        self.feature_map_ = fmap
        self.method_ = "fourier" if isinstance(fmap, FourierMap) else "exact"
        self._n_features_out = int(fmap.n_components)

    def _fit_nystroem(self, X: np.ndarray, rng: np.random.RandomState) -> None:
        m = min(int(self.n_components), X.shape[0])
        # Refused here, with this map's advice, rather than by the kernel's
        # Gram check (whose advice is to take the route without a Gram).
        needed = nystroem_memory(X.shape[0], m)
        limit = max_gram_memory()[0]
        if needed > limit:
            block = min(X.shape[0], _ROWS)
            fits = limit // gram_memory(1, block)
            if fits > block:  # the landmarks' own Gram is then the largest
                fits = math.isqrt(limit // gram_memory(1, 1))
            self._refuse(
                f"(at most one per row: {m} Nystroem landmarks of {X.shape[0]} "
                f"rows; their kernel with blocks of up to {block} rows, and one "
                "working copy)",
                needed,
                fits,
            )
        if self.landmarks == "uniform":
            rows = np.sort(rng.choice(X.shape[0], size=m, replace=False))
        else:
            rows = self._kmeans_rows(X, m, rng)
        L = X[rows]
        if is_dask_collection(L):  # (out of core: these rows alone are read)
            L = np.asarray(L.compute())
        # Independent-rows convention, as every cross entry K(x, l).
        K = self.kernel_(L, L.copy())
        w, U = linalg.eigh(0.5 * (K + K.T))
        keep = w > max(w.max(), 0.0) * 1e-12
        self.landmarks_ = L
        self._normaliser = U[:, keep] / np.sqrt(w[keep])
        self.method_ = "nystroem"
        self._n_features_out = int(keep.sum())

    def _n_landmarks(self) -> int:
        assert self.landmarks_ is not None
        return int(self.landmarks_.shape[0])

    def _kmeans_rows(
        self, X: np.ndarray, m: int, rng: np.random.RandomState
    ) -> np.ndarray:
        from sklearn.cluster import KMeans

        _, train = self.kernel_._conditionals(X)
        means = np.asarray(train.first_moments(), dtype=np.float64)
        centres = (
            KMeans(n_clusters=m, n_init=1, random_state=rng).fit(means).cluster_centers_
        )
        chosen: list[int] = []
        for centre in centres:
            dist = ((means - centre) ** 2).sum(axis=1)
            dist[chosen] = np.inf
            chosen.append(int(np.argmin(dist)))
        return np.sort(np.array(chosen))

    def _features(
        self, fmap: Any, X: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """The expected features of the rows ``X``; a Fourier map computes
        them in ``self.dtype``, into ``out`` where it can (then returned)."""
        _, c = self.kernel_._conditionals(X)
        return self._features_of(fmap, c, out)

    def _features_of(
        self, fmap: Any, c: Any, out: np.ndarray | None = None
    ) -> np.ndarray:
        """:meth:`_features` of rows given by their conditionals ``c``."""
        from ..kernels.rbf._fourier import FourierMap

        if isinstance(fmap, FourierMap):
            fmap = fmap.with_dtype(self.dtype).writing_to(out)
        kernel = self.kernel_
        return expected_features(
            kernel.base_kernel_,
            c,
            fmap,
            normalised=kernel._normalised,
            options=kernel._draw_options(),
        )

    @rowwise_on_dask
    def transform(self, X: Any) -> np.ndarray:
        """Return the expected kernel features of the rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing; or a dask Array or DataFrame of
            numeric columns, read block of rows by block of rows.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components_out), or dask Array
            ``Z @ Z_other.T`` estimates (or equals) the expected kernel
            between independent rows.
        """
        return self._transform(X)

    def _transform(self, X: Any) -> np.ndarray:
        X = validate_missing_data(self, X, reset=False, encode=self._encode)
        out = np.empty((X.shape[0], self._n_features_out), dtype=self.dtype)
        rows = _ROWS
        if self.method_ == "nystroem":
            # Blocks whose kernel against the landmarks fits the memory limit
            # (fewer rows than _ROWS only where a full block would be refused).
            one_row = gram_memory(1, self._n_landmarks())
            rows = max(1, min(rows, max_gram_memory()[0] // one_row))
        starts = range(0, X.shape[0], rows)
        with progress(self, X.shape[0], len(starts), "feature map") as advance:
            for s in starts:
                block = X[s : s + rows]
                dest = out[s : s + len(block)]
                if self.method_ == "nystroem":
                    assert self.landmarks_ is not None
                    Z = self.kernel_(block, self.landmarks_) @ self._normaliser
                else:
                    Z = self._features(self.feature_map_, block, dest)
                if Z is not dest:  # (a Fourier map writes into dest)
                    dest[...] = Z
                advance(len(block))
        return out

    def _prepare(self, X: Any) -> list[Any]:
        """The rows' numbers and conditionals chunk by chunk: what
        :meth:`_transform_prepared` needs to make their features again
        without conditioning them again (the passes of an out-of-core fit
        over the same rows). Nystroem keeps the rows alone."""
        X = validate_missing_data(self, X, reset=False, encode=self._encode)
        if self.method_ == "nystroem":
            return [X]
        chunks = [X[s : s + _ROWS] for s in range(0, X.shape[0], _ROWS)]
        return [(len(rows), self.kernel_._conditionals(rows)[1]) for rows in chunks]

    def _prepared_bytes(self, prepared: list[Any]) -> int:
        """The memory what :meth:`_prepare` made takes while it is used:
        its arrays, and for Fourier features their conditional covariances
        once more (the engine packs them for as long as they live)."""
        held = arrays_bytes(prepared)
        if self.method_ == "fourier":
            held += sum(
                arrays_bytes(getattr(c, "covariances", ())) for _, c in prepared
            )
        return held

    def _transform_prepared(self, prepared: list[Any]) -> np.ndarray:
        """:meth:`transform` of rows given by :meth:`_prepare`."""
        if self.method_ == "nystroem":
            return self._transform(prepared[0])
        n = sum(count for count, _ in prepared)
        out = np.empty((n, self._n_features_out), dtype=self.dtype)
        s = 0
        for count, c in prepared:
            dest = out[s : s + count]
            Z = self._features_of(self.feature_map_, c, dest)
            if Z is not dest:
                dest[...] = Z
            s += count
        return out

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
