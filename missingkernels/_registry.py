"""The plugin registry: kernels, density estimators and baselines by name.

The registry is a :class:`pluggy.PluginManager` built on first use. Built-in
parts register through the hooks of :mod:`missingkernels.hookspecs`, exactly as
third-party plugins found through the entry-point group ``missingkernels`` do.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import pluggy

from . import hookspecs

ENTRY_POINT_GROUP = "missingkernels"
AUTOLOAD_ENV_VAR = "MISSINGKERNELS_DISABLE_PLUGIN_AUTOLOAD"

# Built-in plugins: (plugin name, module path). Imported on first registry use.
# Each kernel family's module registers its base kernel's cells and presets
# itself, as a third-party plugin does; the expectation table registers the
# draws cell (any base kernel over draws).
_BUILTIN_PLUGINS = (
    ("missingkernels.conditionals", "missingkernels.conditionals._plugin"),
    ("missingkernels.densities", "missingkernels.densities._plugin"),
    ("missingkernels.kernels", "missingkernels.kernels._expectation_table"),
    ("missingkernels.kernels.rbf", "missingkernels.kernels.rbf"),
    ("missingkernels.kernels.linear", "missingkernels.kernels._linear"),
    ("missingkernels.kernels.matching", "missingkernels.kernels._matching"),
    ("missingkernels.kernels.mixed", "missingkernels.kernels._mixed"),
    ("missingkernels.kernels.polynomial", "missingkernels.kernels._polynomial"),
)
# The experiment baselines are not part of the core: missingkernels.experiments
# registers its plugin itself when imported; baseline lookups import it first.
_BASELINES_PACKAGE = "missingkernels.experiments"

_KINDS = {
    "kernel": "missingkernels_register_kernels",
    "density": "missingkernels_register_densities",
    "baseline": "missingkernels_register_baselines",
    "representation": "missingkernels_register_representations",
    "expectation": "missingkernels_register_expectations",
}


# What an entry of a kind must be: kind -> (check, what it must be). Factories
# are callables unless the kind's owner says otherwise (set_entry_check).
_ENTRY_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {}


def set_entry_check(kind: str, check: Callable[[Any], bool], expected: str) -> None:
    """Let the owner of a kind say what its entries are: ``check(value)`` is
    True for a valid entry; ``expected`` says what an entry must be, for the
    message naming an invalid one (e.g. the expectation table's cells)."""
    if kind not in _KINDS:
        raise ValueError(f"Unknown registry kind {kind!r}; known: {sorted(_KINDS)}.")
    _ENTRY_CHECKS[kind] = (check, expected)
    _REGISTRY.invalidate()


def _valid_entry(kind: str, value: Any) -> bool:
    check, _ = _ENTRY_CHECKS.get(kind, (callable, ""))
    return bool(check(value))


def _expected_entries() -> str:
    """What the entries must be, for the message naming an invalid one."""
    owned = "; ".join(f"{kind}: {what}" for kind, (_, what) in _ENTRY_CHECKS.items())
    return "factories callable" + (f" ({owned})" if owned else "")


# Renamed built-in names: (kind, old name) -> (new name, why). Asking for the
# old name is an error that gives the new one (unless a plugin registers it).
_RENAMED = {
    ("baseline", "mice"): (
        "iterative",
        "it imputes with scikit-learn's IterativeImputer, like the density "
        "'iterative'; the density 'mice' is statsmodels' MICE",
    ),
}


class RegistryError(RuntimeError):
    """Raised when the registry is inconsistent, e.g. two plugins claim one name."""


class PluginLoadWarning(UserWarning):
    """Warned when a plugin fails to import or its hook fails; others still load."""


@dataclass(frozen=True)
class RegistryEntry:
    """One registered kernel, density estimator or baseline.

    Attributes
    ----------
    name : str
        The registry name, as passed to ``get_kernel``/``get_density``.
    kind : {"kernel", "density", "baseline"}
        What the factory builds.
    factory : callable
        Called with keyword parameters to build a new, unfitted object.
    plugin : str
        The name of the plugin that registered it (built-ins start with
        ``missingkernels.``).
    description : str
        One line, from the first line of the factory's docstring.
    """

    name: str
    kind: str
    factory: Callable[..., Any]
    plugin: str
    description: str


def _autoload_disabled() -> bool:
    value = os.environ.get(AUTOLOAD_ENV_VAR, "").strip().lower()
    return value not in ("", "0", "false", "no")


def _describe(factory: Callable[..., Any]) -> str:
    own = getattr(factory, "description", None)
    if isinstance(own, str) and own:
        return own
    doc = inspect.getdoc(factory) or ""
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    return first.rstrip(".") or getattr(factory, "__name__", repr(factory))


class _Registry:
    def __init__(self) -> None:
        self._pm: pluggy.PluginManager | None = None
        self._tables: dict[str, dict[str, RegistryEntry]] = {}
        self._derived: dict[tuple[str, Callable[..., Any]], Any] = {}
        self.errors: dict[str, str] = {}

    def invalidate(self) -> None:
        """Forget the tables and what was derived from them (after any
        registration change)."""
        self._tables.clear()
        self._derived.clear()

    def derived(
        self, kind: str, build: Callable[[dict[str, RegistryEntry]], Any]
    ) -> Any:
        """``build(table)`` of the kind's table, computed once per registry
        change (e.g. the expectation table's index of cells)."""
        table = self.table(kind)
        key = (kind, build)
        if key not in self._derived:
            self._derived[key] = build(table)
        return self._derived[key]

    # -- plugin manager -------------------------------------------------
    def manager(self) -> pluggy.PluginManager:
        if self._pm is None:
            pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
            pm.add_hookspecs(hookspecs)
            self._pm = pm
            self.errors = {}
            for name, module_path in _BUILTIN_PLUGINS:
                self._register(
                    functools.partial(importlib.import_module, module_path), name
                )
            if not _autoload_disabled():
                self._load_entry_points()
        return self._pm

    def _record_error(self, plugin: str, message: str) -> None:
        self.errors[plugin] = message
        warnings.warn(message, PluginLoadWarning, stacklevel=4)

    def _register(self, load: Callable[[], Any], name: str, origin: str = "") -> None:
        assert self._pm is not None
        where = f" ({origin})" if origin else ""
        try:
            plugin = load()
        except Exception as exc:
            self._record_error(
                name,
                f"missingkernels plugin {name!r}{where} failed to import: "
                f"{type(exc).__name__}: {exc}. The other plugins are unaffected; "
                f"fix or uninstall this one, or set {AUTOLOAD_ENV_VAR}=1 to skip "
                "all third-party plugins.",
            )
            return
        if self._pm.is_registered(plugin) or self._pm.has_plugin(name):
            return
        try:
            self._pm.register(plugin, name=name)
            self._pm.check_pending()
        except Exception as exc:
            if self._pm.has_plugin(name):
                self._pm.unregister(name=name)
            self._record_error(
                name,
                f"missingkernels plugin {name!r}{where} is not a valid plugin: "
                f"{type(exc).__name__}: {exc}",
            )
        self.invalidate()

    def _load_entry_points(self) -> None:
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            dist = getattr(ep, "dist", None)
            origin = f"entry point {ep.value!r}" + (
                f" of distribution {dist.name!r}" if dist is not None else ""
            )
            self._register(ep.load, ep.name, origin)

    def reset(self) -> None:
        self._pm = None
        self.invalidate()
        self.errors = {}

    # -- tables -----------------------------------------------------------
    def table(self, kind: str) -> dict[str, RegistryEntry]:
        pm = self.manager()
        if kind in self._tables:
            return self._tables[kind]
        hook_name = _KINDS[kind]
        caller = getattr(pm.hook, hook_name)
        table: dict[str, RegistryEntry] = {}
        # Call each implementation on its own so one failing plugin is
        # reported by name and does not hide the others.
        for impl in caller.get_hookimpls():
            plugin = impl.plugin_name
            try:
                result = impl.function()
            except Exception as exc:
                self._record_error(
                    plugin,
                    f"missingkernels plugin {plugin!r} failed in hook {hook_name}: "
                    f"{type(exc).__name__}: {exc}",
                )
                continue
            if result is None:
                continue
            if not isinstance(result, Mapping):
                self._record_error(
                    plugin,
                    f"missingkernels plugin {plugin!r}: hook {hook_name} must "
                    f"return a mapping name -> factory, got {type(result).__name__}.",
                )
                continue
            for name, factory in result.items():
                if not isinstance(name, str) or not _valid_entry(kind, factory):
                    self._record_error(
                        plugin,
                        f"missingkernels plugin {plugin!r}: hook {hook_name} "
                        f"returned an invalid entry {name!r} -> {factory!r}; "
                        f"names must be str and {_expected_entries()}.",
                    )
                    continue
                if name in table:
                    raise RegistryError(
                        f"The {kind} name {name!r} is registered by two plugins, "
                        f"{table[name].plugin!r} and {plugin!r}. Uninstall or "
                        "rename one of them."
                    )
                table[name] = RegistryEntry(
                    name=name,
                    kind=kind,
                    factory=factory,
                    plugin=plugin,
                    description=_describe(factory),
                )
        self._tables[kind] = dict(sorted(table.items()))
        return self._tables[kind]

    def get(self, kind: str, name: str, params: dict[str, Any]) -> Any:
        if not isinstance(name, str):
            raise TypeError(
                f"The {kind} name must be a str, got {type(name).__name__} ({name!r})."
            )
        table = self.table(kind)
        if name not in table and (kind, name) in _RENAMED:
            new, why = _RENAMED[kind, name]
            raise ValueError(f"The {kind} {name!r} is now called {new!r}: {why}.")
        if name not in table:
            known = ", ".join(table) or "(none registered)"
            close = difflib.get_close_matches(name, list(table), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(
                f"Unknown {kind} {name!r}.{hint} Known {kind} names: {known}."
            )
        return table[name].factory(**params)


_REGISTRY = _Registry()


def registry_view(kind: str, build: Callable[[dict[str, RegistryEntry]], Any]) -> Any:
    """``build(table)`` of a kind's registered entries, computed once per
    registry change: for the owner of a kind to index its entries (e.g. the
    expectation table's cells by class pair) without rebuilding the index
    on every lookup."""
    return _REGISTRY.derived(kind, build)


def get_plugin_manager() -> pluggy.PluginManager:
    """Return the :class:`pluggy.PluginManager` behind the registry.

    Built on first use: the built-in plugins, then the entry points of the group
    ``missingkernels`` unless the environment variable
    ``MISSINGKERNELS_DISABLE_PLUGIN_AUTOLOAD`` is set to a true value.

    Returns
    -------
    pm : pluggy.PluginManager

    Examples
    --------
    >>> from missingkernels import get_plugin_manager
    >>> pm = get_plugin_manager()
    >>> pm.has_plugin("missingkernels.kernels")
    True
    """
    return _REGISTRY.manager()


def register_plugin(plugin: Any, name: str | None = None) -> str:
    """Register a plugin object at run time (without an entry point).

    Parameters
    ----------
    plugin : module or object
        Implements hooks of :mod:`missingkernels.hookspecs` marked with
        :data:`missingkernels.hookspecs.hookimpl`.
    name : str, optional
        The plugin's name; defaults to pluggy's canonical name.

    Returns
    -------
    name : str
        The name under which it was registered.

    Raises
    ------
    ValueError
        If a plugin of that name is already registered.

    Examples
    --------
    >>> from missingkernels import register_plugin, unregister_plugin, list_densities
    >>> from missingkernels.hookspecs import hookimpl
    >>> from missingkernels.densities import GaussianEMDensity
    >>> class Extra:
    ...     @hookimpl
    ...     def missingkernels_register_densities(self):
    ...         return {"gaussian_em_copy": GaussianEMDensity}
    >>> name = register_plugin(Extra(), name="extra")
    >>> "gaussian_em_copy" in list_densities()
    True
    >>> unregister_plugin("extra")
    """
    pm = _REGISTRY.manager()
    if name is not None and pm.has_plugin(name):
        raise ValueError(
            f"A plugin named {name!r} is already registered; unregister it first "
            "or choose another name."
        )
    registered = pm.register(plugin, name=name)
    if registered is None:
        raise ValueError("This plugin object is already registered.")
    pm.check_pending()
    _REGISTRY.invalidate()
    return registered


def unregister_plugin(name: str) -> None:
    """Remove a plugin registered under ``name``.

    Parameters
    ----------
    name : str
        The plugin's name, as returned by :func:`register_plugin` or the
        entry-point name.

    Raises
    ------
    ValueError
        If no plugin of that name is registered.
    """
    pm = _REGISTRY.manager()
    if not pm.has_plugin(name):
        raise ValueError(
            f"No plugin named {name!r} is registered. Registered: "
            f"{', '.join(sorted(n for n, _ in pm.list_name_plugin()))}."
        )
    pm.unregister(name=name)
    _REGISTRY.invalidate()


def reload_plugins() -> None:
    """Forget every registration and rediscover plugins on next use.

    Useful after installing a plugin distribution in a running session, and in
    tests that change the environment variable or ``sys.path``.
    """
    _REGISTRY.reset()


def plugin_errors() -> dict[str, str]:
    """Return the plugins that failed to load, with the reason for each.

    Returns
    -------
    errors : dict of str to str
        Plugin name -> message (including the original exception).
    """
    _REGISTRY.manager()
    return dict(_REGISTRY.errors)


def list_kernels() -> dict[str, RegistryEntry]:
    """Return the registered kernels, sorted by name.

    Returns
    -------
    kernels : dict of str to RegistryEntry
        Name -> entry (factory, plugin, one-line description).

    Examples
    --------
    >>> from missingkernels import list_kernels
    >>> "genrbf" in list_kernels()
    True
    """
    return dict(_REGISTRY.table("kernel"))


def list_densities() -> dict[str, RegistryEntry]:
    """Return the registered density estimators, sorted by name.

    Returns
    -------
    densities : dict of str to RegistryEntry
        Name -> entry (factory, plugin, one-line description).

    Examples
    --------
    >>> from missingkernels import list_densities
    >>> "gaussian_em" in list_densities()
    True
    """
    return dict(_REGISTRY.table("density"))


def list_baselines() -> dict[str, RegistryEntry]:
    """Return the registered experiment baselines, sorted by name.

    Returns
    -------
    baselines : dict of str to RegistryEntry
        Name -> entry (factory, plugin, one-line description).
    """
    _import_baselines()
    return dict(_REGISTRY.table("baseline"))


def _import_baselines() -> None:
    """Import the experiments package, which registers the built-in baselines
    (again after :func:`reload_plugins`); a failure is reported like a
    failing plugin's."""
    try:
        importlib.import_module(_BASELINES_PACKAGE).register_baselines()
    except Exception as exc:
        _REGISTRY.manager()
        _REGISTRY._record_error(
            _BASELINES_PACKAGE,
            f"missingkernels plugin {_BASELINES_PACKAGE!r} failed to import: "
            f"{type(exc).__name__}: {exc}. The other plugins are unaffected.",
        )


def list_representations() -> dict[str, RegistryEntry]:
    """Return the registered representations of conditionals, sorted by name.

    A density declares the tag of its representation in its class attribute
    ``representation``; the tag names a class of
    :mod:`missingkernels.conditionals` (or a plugin's).

    Returns
    -------
    representations : dict of str to RegistryEntry
        Tag -> entry whose ``factory`` is the conditionals class.

    Examples
    --------
    >>> from missingkernels import list_representations
    >>> list_representations()["gaussian"].factory.__name__
    'GaussianConditionals'
    """
    return dict(_REGISTRY.table("representation"))


def list_expectations() -> dict[str, RegistryEntry]:
    """Return the cells of the expectation table, sorted by name.

    Each cell is the closed-form expectation of one base kernel over one
    representation (see :class:`missingkernels.kernels.Expectation`).

    Returns
    -------
    expectations : dict of str to RegistryEntry
        Name -> entry whose ``factory`` is the :class:`Expectation` cell.

    Examples
    --------
    >>> from missingkernels import list_expectations
    >>> "rbf/gaussian" in list_expectations()
    True
    """
    return dict(_REGISTRY.table("expectation"))


def get_kernel(name: str, **params: Any) -> Any:
    """Build a new, unfitted kernel from the registry.

    Parameters
    ----------
    name : str
        A name from :func:`list_kernels`, e.g. ``"genrbf"``.
    **params
        Passed to the kernel's constructor (e.g. ``gamma``, ``density``).

    Returns
    -------
    kernel : object
        With ``fit(X)`` and ``__call__(X, Y=None)``.

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the known names.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels import get_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [0.5, 0.0]])
    >>> k = get_kernel("genrbf", gamma=0.5).fit(X)
    >>> k(X).shape
    (4, 4)
    """
    return _REGISTRY.get("kernel", name, params)


def get_density(name: str, **params: Any) -> Any:
    """Build a new, unfitted density estimator from the registry.

    Parameters
    ----------
    name : str
        A name from :func:`list_densities`, e.g. ``"gaussian_em"``.
    **params
        Passed to the estimator's constructor.

    Returns
    -------
    density : object
        With ``fit(X)`` and ``conditionals(X)``.

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the known names.

    Examples
    --------
    >>> from missingkernels import get_density
    >>> get_density("gaussian_em", max_iter=50).max_iter
    50
    """
    return _REGISTRY.get("density", name, params)


def new_density(density: Any, **params: Any) -> Any:
    """A new, unfitted density from a registry name or a density object.

    A name is built with :func:`get_density` (``params`` go to its
    constructor); an object is cloned, so that fitting never changes the
    user's instance.
    """
    if isinstance(density, str):
        return get_density(density, **params)
    if params:
        raise ValueError(
            f"Parameters {sorted(params)} apply to a density given by name; set "
            f"them on the {type(density).__name__} object instead."
        )
    from sklearn.base import clone

    return clone(density)


def get_baseline(name: str, **params: Any) -> Any:
    """Build a new, unfitted baseline from the registry.

    Parameters
    ----------
    name : str
        A name from :func:`list_baselines`.
    **params
        Passed to the baseline's factory.

    Returns
    -------
    baseline : estimator

    Raises
    ------
    ValueError
        If ``name`` is unknown; the message lists the known names.
    """
    _import_baselines()
    return _REGISTRY.get("baseline", name, params)
