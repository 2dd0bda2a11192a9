"""The ``missingkernels`` command line."""

from ._main import build_parser, main

__all__ = ["build_parser", "main"]
