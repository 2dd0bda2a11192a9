"""missingkernels: kernels and SVMs for data with missing values.

Every kernel is an *expected kernel*: a classical kernel averaged over the
conditional distribution of the missing entries given the observed ones, under
a density fitted on the training rows. No value is imputed.
"""

from . import _moved_modules, conditionals, densities, estimators, kernels
from ._config import config_context, get_config, set_config
from ._registry import (
    PluginLoadWarning,
    RegistryEntry,
    RegistryError,
    get_baseline,
    get_density,
    get_kernel,
    get_plugin_manager,
    list_baselines,
    list_densities,
    list_expectations,
    list_kernels,
    list_representations,
    plugin_errors,
    register_plugin,
    reload_plugins,
    unregister_plugin,
)
from ._table_encoding import UnknownCategoryWarning
from ._validation import MIN_OBSERVED, DroppedFeaturesWarning, FeatureScaleWarning
from ._version import __version__
from .estimators import (
    SOCPSVC,
    ExpectedKernelFeatures,
    MissingKernelSVC,
    MissingKernelSVR,
    MissingKernelTransformer,
    plausible_values,
    uncertainty_from_missing,
    value_of_measuring,
)

# Pickles written before a private module was renamed name its old path.
_moved_modules.install()

__all__ = [
    "MIN_OBSERVED",
    "DroppedFeaturesWarning",
    "ExpectedKernelFeatures",
    "FeatureScaleWarning",
    "MissingKernelSVC",
    "MissingKernelSVR",
    "MissingKernelTransformer",
    "PluginLoadWarning",
    "RegistryEntry",
    "RegistryError",
    "SOCPSVC",
    "UnknownCategoryWarning",
    "__version__",
    "conditionals",
    "config_context",
    "densities",
    "estimators",
    "get_baseline",
    "get_config",
    "get_density",
    "get_kernel",
    "get_plugin_manager",
    "kernels",
    "list_baselines",
    "list_densities",
    "list_expectations",
    "list_kernels",
    "list_representations",
    "plausible_values",
    "plugin_errors",
    "register_plugin",
    "reload_plugins",
    "set_config",
    "uncertainty_from_missing",
    "unregister_plugin",
    "value_of_measuring",
]
