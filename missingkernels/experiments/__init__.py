"""Experiment tools: missingness mechanisms, baselines, peers, the nested-CV runner."""

from ..estimators import GeomSVC  # re-exported: it lived here before
from ._imputation import DensityDrawImputer, DropSparseFeatures, MixedTableImputer
from ._lineups import (
    FULL_METHODS,
    IMPUTATION_BASELINES,
    PAPER_IMPUTATIONS,
    QUICK_METHODS,
    QUICK_MIXED_METHODS,
    default_methods,
)
from ._methods import PAPER_C_GRID, PAPER_GAMMA_GRID, MethodSpec, resolve_method
from ._missingness import (
    DegenerateMissingnessWarning,
    MissingnessInfo,
    simulate_missing,
)
from ._plugin import register_baselines
from ._report import CELL_COLUMNS, ComparisonReport, report_comparison
from ._results import RESULT_COLUMNS, read_results
from ._runner import ComparisonData, run_comparison
from ._stats import (
    FriedmanNemenyi,
    PairwiseWilcoxon,
    block_scores,
    format_pairwise,
    format_table,
    friedman_nemenyi,
    holm,
    majority_scores,
    pairwise_wilcoxon,
    plot_critical_difference,
    plot_rate_curves,
    summary_table,
)

__all__ = [
    "CELL_COLUMNS",
    "FULL_METHODS",
    "IMPUTATION_BASELINES",
    "PAPER_C_GRID",
    "PAPER_GAMMA_GRID",
    "PAPER_IMPUTATIONS",
    "QUICK_METHODS",
    "QUICK_MIXED_METHODS",
    "RESULT_COLUMNS",
    "ComparisonData",
    "ComparisonReport",
    "DegenerateMissingnessWarning",
    "DensityDrawImputer",
    "DropSparseFeatures",
    "FriedmanNemenyi",
    "GeomSVC",
    "MethodSpec",
    "MissingnessInfo",
    "MixedTableImputer",
    "PairwiseWilcoxon",
    "block_scores",
    "default_methods",
    "format_pairwise",
    "format_table",
    "friedman_nemenyi",
    "holm",
    "majority_scores",
    "pairwise_wilcoxon",
    "plot_critical_difference",
    "plot_rate_curves",
    "read_results",
    "register_baselines",
    "report_comparison",
    "resolve_method",
    "run_comparison",
    "simulate_missing",
    "summary_table",
]

# The baselines are not listed by the core registry: register them here.
register_baselines()
