"""Registers the built-in experiment baselines through the plugin hooks."""

from __future__ import annotations

from ..hookspecs import hookimpl


@hookimpl
def missingkernels_register_baselines():  # type: ignore[no-untyped-def]
    from ._baselines import _builtin_baselines

    return _builtin_baselines()
