"""Registers the built-in kernels and expectation cells through the hooks."""

from __future__ import annotations

from ..hookspecs import hookimpl


@hookimpl
def missingkernels_register_kernels():  # type: ignore[no-untyped-def]
    from . import _builtin_kernels

    return _builtin_kernels()


@hookimpl
def missingkernels_register_expectations():  # type: ignore[no-untyped-def]
    from ._expectations import _builtin_expectations

    return _builtin_expectations()
