"""Method resolution of the comparisons: names to :class:`MethodSpec`.

A method is a registered baseline (:func:`missingkernels.list_baselines`) or
kernel (:func:`missingkernels.list_kernels`); :func:`resolve_method` looks it
up in the registry and says how the runner fits it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sklearn.pipeline import Pipeline

from .._registry import _RENAMED

#: The C grid of the genRBF paper (sec. 5.1): 2^k, k = -5, -3, ..., 9.
PAPER_C_GRID = tuple(2.0**k for k in range(-5, 10, 2))
#: The gamma grid of the genRBF paper (sec. 5.1): 2^k, k = -5, -3, ..., 11.
PAPER_GAMMA_GRID = tuple(2.0**k for k in range(-5, 12, 2))


@dataclass
class MethodSpec:
    """How the runner fits one method.

    Parameters
    ----------
    name : str
        The method's name in the results.
    kind : {"kernel", "pipeline", "estimator"}
        ``"kernel"``: a registry kernel followed by a precomputed-kernel SVM;
        ``"pipeline"``: a baseline :class:`~sklearn.pipeline.Pipeline` whose
        last step is an RBF SVM; ``"estimator"``: any estimator, grid-searched
        point by point (no Gram reuse), e.g. SOCP.
    make : callable
        ``make(task, seed)`` returns the kernel (kind ``"kernel"``, called
        again per gamma as ``make(task, seed, gamma)``, with the kernel's
        other grid parameters as keywords), the pipeline, or the estimator.
    grid : dict
        Hyperparameter grid. ``"C"`` and ``"gamma"`` for kernel and pipeline
        methods (``gamma`` may be ``[None]`` for kernels without a width; a
        kernel method may add other parameters of its kernel, e.g.
        ``{"nominal_weight": [0.25, 0.5, 1.0]}``, searched with gamma);
        estimator parameter names for kind ``"estimator"``.
    scale : bool, default=True
        Standardise features on the training rows first (kernel and estimator
        methods; pipelines carry their own scaler). Declared by the method,
        not inferred from its parameters: :func:`resolve_method` sets it for
        every method except a kernel whose density models category codes
        (e.g. ``"belanche_k1"``, ``"belanche_k2"``).
    multiclass : {"native", "ovr", "skip"}, default="native"
        How a classifier meets more than two classes: ``"native"`` (it
        handles them, as the SVMs of kernel and pipeline methods do),
        ``"ovr"`` (a binary-only estimator, fitted one-vs-rest with
        :class:`~sklearn.multiclass.OneVsRestClassifier`, e.g. ``"geom"`` and
        ``"socp"``) or ``"skip"`` (binary-only and not to be wrapped: the
        ``compare`` command leaves it out on multiclass data, saying why).
        Declared by a baseline factory as its attribute ``multiclass``.
    nominal : {"native", "one_hot"}, default="one_hot"
        How the method meets the nominal columns of a mixed table (see
        :class:`~missingkernels.experiments.ComparisonData`): ``"native"``
        (a kernel with the parameter ``nominal_features``, set to them, e.g.
        ``"mixed_rbf"``; a baseline whose factory takes ``nominal_features``:
        ``make(task, seed, nominal_features=...)``, e.g. the imputation
        baselines, which one-hot code them themselves, and ``"hgb"``, which
        splits on them natively) or ``"one_hot"`` (the runner one-hot codes
        them on the training rows, a missing entry missing in all of its
        0/1 columns, and the method sees the numeric and 0/1 columns, e.g.
        ``"genrbf"`` over one-hot codes). Ignored on all-numeric tables.
        Set by :func:`resolve_method`.
    """

    name: str
    kind: str
    make: Callable[..., Any]
    grid: dict = field(default_factory=dict)
    scale: bool = True
    multiclass: str = "native"
    nominal: str = "one_hot"


def _probe_baseline(name: str) -> Any:
    """The baseline built for either task (None if the factory refuses both)."""
    from .._registry import get_baseline

    for task in ("classification", "regression"):
        try:
            return get_baseline(name, task=task)
        except ValueError:
            continue
    return None


def _models_category_codes(density: Any) -> bool:
    """Whether a kernel's density (a registry name or an object) models its
    features as category codes (the representation ``"categorical"``).

    Standardising would change the codes (a 0/1 feature no longer 0/1), so a
    kernel on such a density sees the features as given.
    """
    if isinstance(density, str):
        from .._registry import list_densities

        entry = list_densities().get(density)
        density = entry.factory if entry is not None else None
    return getattr(density, "representation", None) == "categorical"


def resolve_method(
    name: str,
    *,
    C_grid: Sequence[float] = PAPER_C_GRID,
    gamma_grid: Sequence[float] = PAPER_GAMMA_GRID,
    kernel_params: Mapping[str, Any] | None = None,
) -> MethodSpec:
    """Turn a method name into a :class:`MethodSpec`.

    Parameters
    ----------
    name : str
        A registered baseline (:func:`missingkernels.list_baselines`) or a
        registered kernel (:func:`missingkernels.list_kernels`). A baseline
        whose factory returns a :class:`~sklearn.pipeline.Pipeline` is of kind
        ``"pipeline"``; any other (e.g. the peer ``"geom"`` or ``"socp"``) of
        kind ``"estimator"``, grid-searched over those of ``C`` and ``gamma``
        it has, after standardising the features. A factory may declare its
        own grid as an attribute ``search_grid`` (a dict of parameter lists,
        e.g. ``"hgb"``'s learning rate and leaf count, searched instead of
        ``C`` x ``gamma``), ``scale=False`` to see the features as given, and
        ``multiclass`` (see :class:`MethodSpec`) if it is binary-only.
    C_grid, gamma_grid : sequence of float
        The grids (the genRBF paper's by default).
    kernel_params : mapping, default=None
        Extra parameters of a registry kernel, or of a baseline's factory
        (e.g. ``{"density": ...}`` for ``"socp"``).

    Returns
    -------
    spec : MethodSpec

    Raises
    ------
    ValueError
        If the name is neither a baseline nor a kernel.

    Examples
    --------
    >>> from missingkernels.experiments import resolve_method
    >>> resolve_method("mean").kind
    'pipeline'
    >>> resolve_method("geom").kind
    'estimator'
    >>> sorted(resolve_method("hgb").grid)
    ['learning_rate', 'max_leaf_nodes']
    """
    from .._registry import get_baseline, get_kernel, list_baselines, list_kernels

    C_grid = list(C_grid)
    gamma_grid = list(gamma_grid)
    baselines = list_baselines()
    if name in baselines:
        import inspect

        factory = baselines[name].factory
        try:
            seeded = "random_state" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            seeded = False

        extra = dict(kernel_params or {})

        try:
            native = "nominal_features" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            native = False

        def make_baseline(task: str, seed: int, nominal_features: Any = None) -> Any:
            params = dict(extra)
            if nominal_features is not None:
                params["nominal_features"] = nominal_features
            if seeded:
                return get_baseline(name, task=task, random_state=seed, **params)
            return get_baseline(name, task=task, **params)

        probe = _probe_baseline(name)
        own_grid = getattr(factory, "search_grid", None)
        scale = bool(getattr(factory, "scale", True))
        multiclass = str(getattr(factory, "multiclass", "native"))
        if multiclass not in ("native", "ovr", "skip"):
            raise ValueError(
                f"The baseline {name!r} declares multiclass={multiclass!r}; use "
                "'native', 'ovr' or 'skip'."
            )
        if probe is not None and not isinstance(probe, Pipeline):
            # An estimator taking NaN itself (a peer such as "geom", or
            # "hgb"): grid over the factory's own grid if it declares one,
            # else over those of C and gamma it has.
            accepted = (
                probe.get_params(deep=False) if hasattr(probe, "get_params") else {}
            )
            if own_grid is not None:
                grid = {key: list(values) for key, values in dict(own_grid).items()}
            else:
                grid = {
                    key: values
                    for key, values in (("C", C_grid), ("gamma", gamma_grid))
                    if key in accepted
                }
            return MethodSpec(
                name,
                "estimator",
                make_baseline,
                grid,
                scale=scale,
                multiclass=multiclass,
                nominal="native" if native else "one_hot",
            )
        return MethodSpec(
            name,
            "pipeline",
            make_baseline,
            {"C": C_grid, "gamma": gamma_grid},
            nominal="native" if native else "one_hot",
        )
    kernels = list_kernels()
    if name in kernels:
        probe = get_kernel(name)
        accepted = probe.get_params(deep=False) if hasattr(probe, "get_params") else {}
        has_gamma = "gamma" in accepted
        params = dict(kernel_params or {})

        def make_kernel(task: str, seed: int, gamma: Any = None, **more: Any) -> Any:
            # ``more``: the kernel's other searched parameters (a grid key
            # besides C and gamma, e.g. nominal_weight).
            extra = {**params, **more}
            if has_gamma and gamma is not None:
                extra["gamma"] = gamma
            if "random_state" in accepted and "random_state" not in extra:
                extra["random_state"] = seed
            return get_kernel(name, **extra)

        density = params.get("density", accepted.get("density"))
        return MethodSpec(
            name,
            "kernel",
            make_kernel,
            {"C": C_grid, "gamma": gamma_grid if has_gamma else [None]},
            scale=not _models_category_codes(density),
            # (the kernels that take tables code their nominal columns)
            nominal="native" if getattr(type(probe), "_encode", None) else "one_hot",
        )
    if ("baseline", name) in _RENAMED:
        get_baseline(name)  # raises, naming the new name
    raise ValueError(
        f"Unknown method {name!r}. Methods are the baselines "
        f"{sorted(baselines)} and the kernels {sorted(kernels)}."
    )
