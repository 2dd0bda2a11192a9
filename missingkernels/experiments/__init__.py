"""Experiment tools: missingness mechanisms for the method comparisons."""

from ._missingness import MissingnessInfo, simulate_missing

__all__ = ["MissingnessInfo", "simulate_missing"]
