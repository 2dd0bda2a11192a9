"""Registers the built-in experiment baselines through the plugin hooks.

The core registry does not list this plugin: :mod:`missingkernels.experiments`
registers it when imported (:func:`register_baselines`), and the registry's
baseline lookups import that package first, so the core (kernels, densities)
never depends on the experiments.
"""

from __future__ import annotations

import sys

from ..hookspecs import hookimpl

#: The name the built-in baselines are registered under.
PLUGIN_NAME = "missingkernels.experiments"


@hookimpl
def missingkernels_register_baselines():  # type: ignore[no-untyped-def]
    from ._baselines import _builtin_baselines

    return _builtin_baselines()


def register_baselines() -> None:
    """Register the built-in baselines with the plugin registry, once.

    Called when :mod:`missingkernels.experiments` is imported and by
    :func:`missingkernels.list_baselines` and
    :func:`missingkernels.get_baseline`, so the baselines are registered
    again after :func:`missingkernels.reload_plugins`. Does nothing when they
    already are.

    Examples
    --------
    >>> import missingkernels
    >>> from missingkernels.experiments import register_baselines
    >>> register_baselines()
    >>> missingkernels.list_baselines()["mean"].plugin
    'missingkernels.experiments'
    """
    from .._registry import get_plugin_manager, register_plugin

    pm = get_plugin_manager()
    plugin = sys.modules[__name__]
    if not pm.has_plugin(PLUGIN_NAME) and not pm.is_registered(plugin):
        register_plugin(plugin, name=PLUGIN_NAME)
