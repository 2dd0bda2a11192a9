"""Experiment tools: missingness mechanisms, baselines, the nested-CV runner."""

from ._baselines import DensityDrawImputer
from ._missingness import MissingnessInfo, simulate_missing
from ._runner import (
    PAPER_C_GRID,
    PAPER_GAMMA_GRID,
    RESULT_COLUMNS,
    ComparisonData,
    MethodSpec,
    resolve_method,
    run_comparison,
)

__all__ = [
    "PAPER_C_GRID",
    "PAPER_GAMMA_GRID",
    "RESULT_COLUMNS",
    "ComparisonData",
    "DensityDrawImputer",
    "MethodSpec",
    "MissingnessInfo",
    "resolve_method",
    "run_comparison",
    "simulate_missing",
]
