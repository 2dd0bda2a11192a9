"""What every estimator built on a registry kernel shares."""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn import get_config
from sklearn.base import ClassifierMixin, clone
from sklearn.utils import gen_batches

from .._config import carried_config, explicit_config, max_gram_memory
from .._fit_cache import rows_digest
from .._numerics import integer_seeds
from .._optional import import_optional
from .._registry import get_kernel
from .._sklearn_compat import HasMethods, Interval, StrOptions
from .._table_encoding import encode_table
from .._validation import Encoder, pass_feature_names

#: Parameters of the estimator forwarded to the kernel when it accepts them.
_FORWARDED = ("gamma", "metric", "density")


class KernelParamsMixin:
    """Builds and fits the registry kernel named by the estimator's parameters.

    The estimator stores ``kernel`` (a registry name), ``density`` (a registry
    name, a density object or None for the kernel's default), ``gamma``,
    ``metric`` and ``kernel_params`` (other kernel parameters, a dict).
    """

    _kernel_parameter_constraints: ClassVar[dict] = {
        "kernel": [str],
        "density": [str, HasMethods(["fit", "conditionals"]), None],
        "gamma": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"scale"})],
        "metric": [StrOptions({"euclidean", "mahalanobis"})],
        "kernel_params": [dict, None],
    }

    #: ``density_params``: the estimators whose density can be given by name
    #: with parameters (``density__<param>`` on a name sets them).
    _density_parameter_constraints: ClassVar[dict] = {"density_params": [dict, None]}

    #: ``nominal_features`` and ``handle_unknown``: the estimators that take
    #: mixed-type tables (their nominal columns become category codes first).
    _table_parameter_constraints: ClassVar[dict] = {
        "nominal_features": ["array-like", StrOptions({"from_dtype"}), None],
        "handle_unknown": [StrOptions({"missing", "error"})],
    }

    #: The coding of a mixed-type table's nominal columns, applied before the
    #: validation (as the kernels' and densities' ``_encode``); the estimators
    #: take tables.
    _encode: ClassVar[Encoder | None] = staticmethod(encode_table)

    kernel: str
    density: Any
    gamma: Any
    metric: str
    kernel_params: dict | None

    def _kernel_name(self) -> str:
        """The registry kernel: ``kernel``, with ``"auto"`` resolved to
        ``"mixed_rbf"`` for a table with nominal columns, else ``"genrbf"``."""
        nominal = getattr(self, "is_nominal_", None)
        has_nominal = nominal is not None and bool(np.any(nominal))
        if self.kernel == "auto":
            return "mixed_rbf" if has_nominal else "genrbf"
        return self.kernel

    def _standardizes(self) -> bool:
        """Whether ``standardize`` applies: it is on and the kernel reads
        numbers (kernels on nominal values only, such as Belanche's, take
        their columns' codes as they are)."""
        if not getattr(self, "standardize", False):
            return False
        base = getattr(get_kernel(self._kernel_name()), "_base_kernel_class", None)
        return tuple(getattr(base, "domains", ("numeric",))) != ("nominal",)

    def _check_kernel_takes_nominal(self, kernel: Any, name: str) -> None:
        nominal = getattr(self, "is_nominal_", None)
        if nominal is None or not np.any(nominal):
            return
        base = getattr(kernel, "_base_kernel_class", None)
        domains = getattr(base, "domains", ("numeric",))
        if "mixed" in domains or ("nominal" in domains and np.all(nominal)):
            return
        from .._validation import describe_features

        cols = np.flatnonzero(nominal)
        raise ValueError(
            f"{type(self).__name__}: the kernel {name!r} takes "
            f"{' or '.join(domains)} columns, but "
            f"{describe_features(self, cols)} {'is' if len(cols) == 1 else 'are'} "
            "nominal. Use kernel='auto' (the default: 'mixed_rbf' for tables with "
            "nominal columns), or one-hot encode them (e.g. "
            "sklearn.preprocessing.OneHotEncoder in a Pipeline), or declare them "
            "numeric with nominal_features=None."
        )

    def set_params(self, **params: Any) -> Any:
        """Set the parameters, as scikit-learn's ``set_params``.

        Besides the estimator's own parameters and ``density__<param>`` for a
        density object, takes ``density__<param>`` for a density given by
        name (or left to the kernel's default), which sets
        ``density_params[<param>]``, and ``kernel_params__<param>`` (or
        ``kernel__<param>``), which sets ``kernel_params[<param>]``: so a
        ``GridSearchCV`` grid can search over them one at a time.

        Parameters
        ----------
        **params : dict
            Parameter names and values.

        Returns
        -------
        self : estimator
        """
        density = params.get("density", getattr(self, "density", None))
        own = self.get_params(deep=False)  # type: ignore[attr-defined]
        by_name = "density_params" in own and not hasattr(density, "set_params")
        nested: dict[str, dict[str, Any]] = {"density_params": {}, "kernel_params": {}}
        for key in list(params):
            head, sep, sub = key.partition("__")
            if not sep or "__" in sub:
                continue
            if head == "density" and by_name:
                nested["density_params"][sub] = params.pop(key)
            elif head in ("kernel_params", "kernel"):
                nested["kernel_params"][sub] = params.pop(key)
        for name, values in nested.items():
            if not values:
                continue
            # On top of the dict given in the same call, else the current one.
            base = params[name] if name in params else getattr(self, name, None)
            params[name] = {**(base or {}), **values}
        return super().set_params(**params)  # type: ignore[misc]

    def _density_from_params(self, accepted: dict[str, Any]) -> Any:
        """The density built by name from ``density_params`` and the
        estimator's ``random_state`` (None if neither applies)."""
        extra = dict(getattr(self, "density_params", None) or {})
        density = self.density
        if density is None:
            density = accepted.get("density")
        seeded = isinstance(density, str) and (
            getattr(self, "random_state", None) is not None
        )
        if not extra and not seeded:
            return None
        if not isinstance(density, str):
            raise ValueError(
                f"{type(self).__name__}: density_params is for a density given by "
                "name (or the kernel's default); set the parameters of a density "
                "object on the object itself (or as density__<param>)."
            )
        from .._registry import get_density

        probe = get_density(density)
        known = probe.get_params(deep=False) if hasattr(probe, "get_params") else {}
        unknown = sorted(set(extra) - set(known))
        if unknown:
            raise ValueError(
                f"density_params {unknown} are not parameters of the density "
                f"{density!r}; its parameters are {sorted(known)}."
            )
        # The estimator's seed reaches the draws (or the initialisation) of a
        # density it builds by name, as an ensemble seeds its members: the
        # same model on the same rows gives the same kernel, and the fits of
        # a grid search compare the same draws (and can share a cache).
        if seeded and "random_state" in known and "random_state" not in extra:
            extra["random_state"] = _integer_seed(self.random_state)  # type: ignore[attr-defined]
        elif seeded and "seed" in known and "seed" not in extra:
            # A density that names its seed as its library does (R's mice:
            # `seed`, a 32-bit integer).
            seed = _integer_seed(self.random_state)  # type: ignore[attr-defined]
            extra["seed"] = seed % (2**31 - 1)
        if not extra:
            return None
        return get_density(density, **extra)

    def _make_kernel(self) -> Any:
        kernel_name = self._kernel_name()
        kernel = get_kernel(kernel_name)
        self._check_kernel_takes_nominal(kernel, kernel_name)
        accepted = (
            kernel.get_params(deep=False) if hasattr(kernel, "get_params") else {}
        )
        params: dict[str, Any] = {}
        for name in _FORWARDED:
            value = getattr(self, name)
            if name == "density":
                if name not in accepted:
                    if value is None and not getattr(self, "density_params", None):
                        continue
                    raise ValueError(
                        f"The kernel {kernel_name!r} does not use a density; "
                        "leave density=None (and density_params empty)."
                    )
                built = self._density_from_params(accepted)
                # Never fit a user's object in place: the estimator owns a copy.
                if built is not None:
                    value = built
                elif value is None:
                    continue
                elif not isinstance(value, str):
                    value = clone(value)
            elif name not in accepted:
                continue  # e.g. gamma for the linear or Belanche kernels
            params[name] = value
        extra = dict(self.kernel_params or {})
        unknown = sorted(set(extra) - set(accepted))
        if unknown:
            hint = ""
            density = params.get("density", accepted.get("density"))
            if density is not None:
                from .._registry import new_density

                try:
                    probe = new_density(density)
                    known = set(probe.get_params(deep=False))
                except Exception:  # a plugin density without get_params
                    known = set()
                if set(unknown) & known:
                    hint = (
                        " Parameters of the density go in density_params (or "
                        "density__<param>, e.g. in a grid search)."
                    )
            raise ValueError(
                f"kernel_params {unknown} are not parameters of the kernel "
                f"{kernel_name!r}; its parameters are {sorted(accepted)}.{hint}"
            )
        clash = sorted(set(extra) & set(params))
        if clash:
            raise ValueError(
                f"kernel_params sets {clash}, which are parameters of "
                f"{type(self).__name__} itself: set them there instead."
            )
        params.update(extra)
        if getattr(type(kernel), "_encode", None) and hasattr(self, "is_nominal_"):
            # A kernel that takes tables sees rows coded already by the
            # estimator: say which columns are nominal.
            params["nominal_features"] = np.asarray(self.is_nominal_, dtype=bool)
            params["handle_unknown"] = getattr(self, "handle_unknown", "missing")
        if params:
            kernel.set_params(**params)
        # Fitted attributes that say what was chosen ("auto" and None resolved).
        self.kernel_name_ = kernel_name
        self.density_name_ = _density_label(self.density, accepted.get("density"))
        # The kernel is fitted on the validated array: its messages (and its
        # density's) name the columns by the estimator's feature_names_in_.
        pass_feature_names(self, kernel)
        return kernel

    def __sklearn_clone__(self) -> Any:
        """A clone (as :func:`sklearn.base.clone`) that carries the package
        settings of the cloning thread (:func:`missingkernels.set_config`) to
        the process it runs in: joblib workers do not share the thread's
        settings, and scikit-learn's parallel helpers carry only its own."""
        new = super().__sklearn_clone__()  # type: ignore[misc]
        settings = explicit_config()
        if settings:
            new._carried_settings = (os.getpid(), settings)
        elif getattr(self, "_carried_settings", None) is not None:
            # Cloned again in a worker (e.g. by an inner GridSearchCV).
            new._carried_settings = getattr(self, "_carried_settings", None)
        return new

    @contextmanager
    def _settings(self) -> Iterator[None]:
        carried = getattr(self, "_carried_settings", None)
        if carried is None or carried[0] == os.getpid():
            yield
            return
        with carried_config(carried[1]):
            yield

    @property
    def density_(self) -> Any:
        """The density fitted on the training rows (from the fitted kernel)."""
        return self.kernel_.density_  # type: ignore[attr-defined]

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.allow_nan = True
        return tags


def _integer_seed(random_state: Any) -> int:
    """An integer seed: the integer given, else one drawn from the generator."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(integer_seeds(random_state, 1)[0])


def _density_label(given: Any, default: Any) -> str | None:
    """The registry name of the density used: the one given, else the
    kernel's default (the class name for an object; None for none)."""
    value = default if given is None else given
    if value is None or isinstance(value, str):
        return value
    return type(value).__name__


def with_settings(method: Callable) -> Callable:
    """Run an estimator's method under the package settings its clone
    carried from another process (see ``KernelParamsMixin._settings``)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._settings():
            return method(self, *args, **kwargs)

    return wrapper


class BinaryClassifierMixin(ClassifierMixin):
    """Two-class classifier that predicts from the sign of ``decision_function``.

    The estimator calls ``_binary_signs(y)`` in ``fit`` (it sets ``classes_``
    and rejects other than two classes) and implements ``decision_function``,
    positive for ``classes_[1]``.
    """

    classes_: np.ndarray
    decision_function: Callable[[Any], np.ndarray]

    def _binary_signs(self, y: np.ndarray) -> np.ndarray:
        self.classes_ = np.unique(y)
        if self.classes_.size != 2:
            raise ValueError(
                "Only binary classification is supported. "
                f"{type(self).__name__} got y with {self.classes_.size} "
                "classes; wrap it in sklearn.multiclass.OneVsRestClassifier "
                "for more."
            )
        return np.where(y == self.classes_[1], 1.0, -1.0)

    def predict(self, X: Any) -> np.ndarray:
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.classifier_tags.multi_class = False
        return tags


def cross_gram_on_support(
    kernel: Any,
    X: np.ndarray,
    support_vectors: np.ndarray,
    support: np.ndarray,
    n_train: int,
) -> np.ndarray:
    """``K(X, X_train)`` with only the support-vector columns computed.

    A precomputed-kernel SVM reads only the columns of its support vectors
    (training rows ``support``, whose values are ``support_vectors``) out of
    the ``n_train`` it was fitted on, so the others are left at zero:
    predictions cost O(n_new * n_support) and need no other training row.
    """
    K = np.zeros((X.shape[0], n_train))
    if support.size and X.shape[0]:
        K[:, support] = kernel(X, support_vectors)
    return K


def training_digest(X: np.ndarray) -> tuple:
    """A digest that tells the training rows (standardised) from other rows,
    kept in place of the rows: equal for arrays of equal values (``-0.0``
    and ``0.0`` alike, any NaN alike, as ``np.array_equal(..., equal_nan=True)``),
    and from which no row can be read back."""
    canonical = np.where(np.isnan(X), np.nan, X) + 0.0  # -0.0 + 0.0 is 0.0
    return rows_digest(canonical)


def forget_training_rows(kernel: Any) -> None:
    """Drop what a fitted expected kernel keeps of its training rows for speed
    only: their conditionals (for a draws density, completed copies of every
    training row), which ``kernel(X_train)`` would otherwise reuse. The
    density's parameters stay; the conditionals of any rows, the training
    rows included, are recomputed from them (a row's conditionals depend on
    that row and the fitted density alone; the same array gives the same
    bits)."""
    if getattr(kernel, "_train_cache", None) is not None:
        kernel._train_cache = None


def removed_rows_error(owner: Any) -> AttributeError:
    """The AttributeError of ``X_fit_`` on an estimator that no longer keeps
    every training row: what replaced it."""
    scaled = (
        ", standardised when standardize=True" if hasattr(owner, "standardize") else ""
    )
    return AttributeError(
        f"{type(owner).__name__} no longer keeps its training rows as X_fit_ "
        "(a pickled model gave the training table back). Its decision "
        "function reads only the support vectors: support_vectors_ (those "
        f"training rows as the kernel saw them{scaled}, NaN where missing; "
        "support_ their indices among the training rows; none on the "
        "'features' route, which keeps the feature map's parameters); "
        "shape_fit_ is the shape of the training table."
    )


def row_chunks(n_rows: int, n_columns: int) -> Iterator[slice]:
    """Slices of the rows such that each chunk's float64 Gram against
    ``n_columns`` columns fits in scikit-learn's ``working_memory`` (at least
    one row per chunk)."""
    budget = int(get_config()["working_memory"] * 2**20)  # MiB -> bytes
    # ... and within the package's Gram limit (which counts 16 bytes an entry).
    budget = min(budget, max_gram_memory()[0] // 2)
    chunk = max(1, min(n_rows, budget // (8 * max(n_columns, 1))))
    return gen_batches(n_rows, chunk)


# -- verbose output -----------------------------------------------------------
#
# Printed to stdout, as scikit-learn's own verbose output (libsvm's lines under
# SVC(verbose=True), GridSearchCV's "Fitting 5 folds ..."): it then comes in
# order with theirs and shows without configuring anything, where logging
# would need a handler before a user sees a word.


def report(estimator: Any, message: str) -> None:
    """Print ``[<estimator's class>] message`` when its ``verbose`` is on."""
    if getattr(estimator, "verbose", 0):
        print(f"[{type(estimator).__name__}] {message}", flush=True)


@contextmanager
def progress(
    estimator: Any, n_rows: int, n_blocks: int, what: str
) -> Iterator[Callable[[int], None]]:
    """A function to call with the rows of each finished block.

    With ``verbose`` on and more than one block: a tqdm bar on stdout when
    tqdm is installed (it is optional: the ``experiments`` extra), else one
    line per block (``what: 64/250 rows``); otherwise nothing.
    """
    if not getattr(estimator, "verbose", 0) or n_blocks <= 1:
        yield lambda rows: None
        return
    label = f"[{type(estimator).__name__}] {what}"
    try:
        tqdm = import_optional("tqdm.auto", "experiments", label).tqdm
    except ImportError:
        done = 0

        def line(rows: int) -> None:
            nonlocal done
            done += rows
            print(f"{label}: {done}/{n_rows} rows", flush=True)

        yield line
        return
    bar = tqdm(total=n_rows, desc=label, unit="row", file=sys.stdout)
    try:
        yield bar.update
    finally:  # also on an error: what follows starts on a fresh line
        bar.close()


def fit_density_report(estimator: Any, kernel: Any, started: float) -> None:
    """Report the density of a kernel just fitted (``started``: the
    ``time.perf_counter()`` before the fit): iterations, convergence, time."""
    if not getattr(estimator, "verbose", 0):
        return
    density = getattr(kernel, "density_", None)
    if density is None:
        return
    parts = []
    if hasattr(density, "n_iter_"):
        parts.append(f"{density.n_iter_} iterations")
    if hasattr(density, "converged_"):
        parts.append("converged" if density.converged_ else "not converged")
    elapsed = time.perf_counter() - started
    seconds = getattr(density, "_fit_seconds", None)
    what = f" ({', '.join(parts)})" if parts else ""
    name = type(density).__name__
    if seconds is not None and seconds > elapsed:
        # Longer than the whole step: a copy of an earlier identical fit.
        message = f"density {name}{what}: a copy from the fit cache"
    else:
        # A density that does not time itself (a plugin's): the whole step.
        seconds = elapsed if seconds is None else seconds
        message = f"density {name} fitted{what} in {seconds:.2f} s"
    report(estimator, message)
