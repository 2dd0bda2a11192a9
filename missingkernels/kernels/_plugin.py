"""Registers the built-in kernels through the plugin hooks."""

from __future__ import annotations

from ..hookspecs import hookimpl


@hookimpl
def missingkernels_register_kernels():  # type: ignore[no-untyped-def]
    from . import _builtin_kernels

    return _builtin_kernels()
