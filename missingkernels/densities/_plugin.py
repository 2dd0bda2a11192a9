"""Registers the built-in density estimators through the plugin hooks."""

from __future__ import annotations

from ..hookspecs import hookimpl


@hookimpl
def missingkernels_register_densities():  # type: ignore[no-untyped-def]
    from . import _builtin_densities

    return _builtin_densities()
