"""Experiment tools: missingness mechanisms, baselines, peers, the nested-CV runner."""

from ..estimators import GeomSVC  # re-exported: it lived here before
from ._baselines import DensityDrawImputer
from ._missingness import MissingnessInfo, simulate_missing
from ._plugin import register_baselines
from ._runner import (
    PAPER_C_GRID,
    PAPER_GAMMA_GRID,
    RESULT_COLUMNS,
    ComparisonData,
    MethodSpec,
    resolve_method,
    run_comparison,
)
from ._stats import (
    FriedmanNemenyi,
    block_scores,
    format_table,
    friedman_nemenyi,
    plot_critical_difference,
    plot_rate_curves,
    summary_table,
)

__all__ = [
    "PAPER_C_GRID",
    "PAPER_GAMMA_GRID",
    "RESULT_COLUMNS",
    "ComparisonData",
    "DensityDrawImputer",
    "FriedmanNemenyi",
    "GeomSVC",
    "MethodSpec",
    "MissingnessInfo",
    "block_scores",
    "format_table",
    "friedman_nemenyi",
    "plot_critical_difference",
    "plot_rate_curves",
    "register_baselines",
    "resolve_method",
    "run_comparison",
    "simulate_missing",
    "summary_table",
]

# The baselines are not listed by the core registry: register them here.
register_baselines()
