"""Out of core on dask: conditionals, expected kernel features and linear models.

The densities and feature maps of the package are row-wise: a row's
conditionals and features depend only on the row and the fitted state, never
on the other rows of its batch. So a dask array (or DataFrame) of any size is
processed block of rows by block of rows, on any dask scheduler or
``distributed`` cluster, with the results of the in-memory computation:

- :class:`~missingkernels.densities.GaussianEMDensity` and
  :class:`~missingkernels.densities.GaussianMixtureDensity` ``.fit`` take a
  dask collection directly (map-reduce of per-block sufficient statistics);
- :func:`conditional_means` and :func:`expected_features` map fitted
  estimators over the row blocks and return dask arrays;
- :func:`partial_fit` trains an incremental scikit-learn model
  (``SGDClassifier``, ``SGDRegressor``, ...) block by block, one block in the
  driver's memory at a time.

This module imports dask only when one of its functions is called (the
``dask`` extra: ``pip install "missingkernels[dask]"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._dask_blocks import import_dask, is_dask_collection, map_rows

__all__ = ["conditional_means", "expected_features", "partial_fit"]


def _first_moments(density: Any, block: np.ndarray) -> np.ndarray:
    return np.asarray(density.conditionals(block).first_moments(), np.float64)


def conditional_means(density: Any, X: Any) -> Any:
    """The rows with missing entries replaced by their conditional means.

    ``density.conditionals(block).first_moments()`` of every row block: the
    same values as in memory, as a lazy dask array.

    Parameters
    ----------
    density : fitted density estimator
        E.g. a :class:`~missingkernels.densities.GaussianEMDensity`, fitted
        in memory or on a dask collection.
    X : dask Array or DataFrame of shape (n_samples, n_features)
        Rows with NaN where missing.

    Returns
    -------
    means : dask Array of shape (n_samples, n_features), dtype float64

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from missingkernels.densities import GaussianEMDensity
    >>> from missingkernels.dask import conditional_means
    >>> rng = np.random.default_rng(0)
    >>> X = rng.multivariate_normal([0, 0], [[1, 0.9], [0.9, 1]], size=1000)
    >>> X[rng.random(1000) < 0.3, 1] = np.nan
    >>> dX = da.from_array(X, chunks=(250, 2))
    >>> density = GaussianEMDensity().fit(dX)
    >>> means = conditional_means(density, dX)
    >>> means.chunks[0]
    (250, 250, 250, 250)
    >>> bool(np.allclose(means.compute(), density.conditionals(X).first_moments()))
    True
    """
    import functools

    method = functools.partial(_first_moments, density)
    return map_rows(density, X, method, "missingkernels.dask.conditional_means")


def expected_features(transformer: Any, X: Any) -> Any:
    """``transformer.transform`` over the row blocks of a dask collection.

    For a fitted :class:`~missingkernels.ExpectedKernelFeatures`, or a fitted
    scikit-learn ``Pipeline`` of transformers ending in one: the features of
    each row depend only on the row and the fitted map, so the blocks give the
    in-memory features.

    Parameters
    ----------
    transformer : fitted transformer
        Its ``transform`` must accept a row whose entries are all missing
        (one is used to find the output's width and dtype).
    X : dask Array or DataFrame of shape (n_samples, n_features)
        Rows with NaN where missing; a DataFrame's column names are checked
        against those seen in fit.

    Returns
    -------
    Z : dask Array of shape (n_samples, n_features_out)
        Lazy; row chunks as in X, one chunk across the features.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from missingkernels import ExpectedKernelFeatures
    >>> from missingkernels.dask import expected_features
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 3))
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> features = ExpectedKernelFeatures(n_components=50, random_state=0).fit(X)
    >>> Z = expected_features(features, da.from_array(X, chunks=(400, 3)))
    >>> Z.shape, Z.chunks[0]
    ((1000, 50), (400, 400, 200))
    >>> bool(np.allclose(Z.compute(), features.transform(X)))
    True
    """
    return map_rows(
        transformer, X, transformer.transform, "missingkernels.dask.expected_features"
    )


def partial_fit(
    model: Any,
    X: Any,
    y: Any,
    *,
    classes: Any = None,
    n_epochs: int = 1,
) -> Any:
    """Train an incremental model over the row blocks of a dask collection.

    Calls ``model.partial_fit`` on each block of rows in order (``n_epochs``
    times over all blocks): only one block is in the driver's memory at a
    time, computed wherever dask runs (e.g. a ``distributed`` cluster). The
    result is that of the same calls on the same blocks in memory. Any
    scikit-learn estimator with ``partial_fit`` works, such as
    ``SGDClassifier`` (``loss="hinge"``: a linear SVM; ``"log_loss"``:
    logistic regression), ``SGDRegressor``, ``Perceptron`` or
    ``MiniBatchKMeans``.

    Parameters
    ----------
    model : estimator with ``partial_fit``
        Trained in place and returned.
    X : dask Array or DataFrame of shape (n_samples, n_features)
        E.g. the output of :func:`expected_features`.
    y : dask Array or Series of shape (n_samples,)
        With as many row blocks as X, of the same lengths.
    classes : array-like, optional
        All the class labels (a classifier needs them at the first call);
        by default the distinct labels of y, found in one pass over it.
    n_epochs : int, default=1
        Passes over the blocks. Shuffle the rows beforehand if blocks are
        ordered by label or time (SGD assumes rows in random order).

    Returns
    -------
    model : estimator
        The same object, trained.

    Examples
    --------
    >>> import numpy as np
    >>> import dask.array as da
    >>> from sklearn.linear_model import SGDClassifier
    >>> from missingkernels.dask import partial_fit
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> dX, dy = da.from_array(X, chunks=500), da.from_array(y, chunks=500)
    >>> model = partial_fit(SGDClassifier(random_state=0), dX, dy, n_epochs=2)
    >>> model.classes_.tolist(), model.score(X, y) > 0.95
    ([0, 1], True)
    """
    import dask
    from sklearn.base import is_classifier

    da = import_dask("missingkernels.dask.partial_fit")
    if not hasattr(model, "partial_fit"):
        raise TypeError(
            f"{type(model).__name__} has no partial_fit; use an incremental "
            "estimator such as sklearn.linear_model.SGDClassifier."
        )
    if not (is_dask_collection(X) and is_dask_collection(y)):
        raise TypeError(
            "missingkernels.dask.partial_fit takes dask collections X and y; got "
            f"{type(X).__name__} and {type(y).__name__}."
        )
    if int(n_epochs) < 1:
        raise ValueError(f"n_epochs must be at least 1; got {n_epochs}.")
    if hasattr(X, "to_dask_array"):
        X = X.to_dask_array()
    if hasattr(y, "to_dask_array"):
        y = y.to_dask_array()
    if X.ndim != 2:
        raise ValueError(f"X must be 2D; got shape {X.shape}.")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    x_blocks, y_blocks = list(X.to_delayed().ravel()), list(y.to_delayed().ravel())
    if len(x_blocks) != len(y_blocks):
        raise ValueError(
            f"X has {len(x_blocks)} row blocks and y {len(y_blocks)}; rechunk y "
            "like X (e.g. y.rechunk(X.chunks[0]))."
        )
    kwargs = {}
    if is_classifier(model):
        if classes is None:
            (classes,) = dask.compute(da.unique(y))
        kwargs["classes"] = np.asarray(classes)
    for _ in range(int(n_epochs)):
        for xb, yb in zip(x_blocks, y_blocks, strict=True):
            block, target = dask.compute(xb, yb)
            if len(block) != len(target):
                raise ValueError(
                    f"A row block of X has {len(block)} rows and the matching "
                    f"block of y {len(target)}; chunk y like X."
                )
            if len(block):
                model.partial_fit(block, target, **kwargs)
    return model
