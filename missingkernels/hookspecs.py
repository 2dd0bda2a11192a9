"""Hook specifications for missingkernels plugins.

A plugin is any module or object that implements one or more of the hooks
below, decorated with :data:`hookimpl`. Third-party plugins are discovered
through the entry-point group ``missingkernels``; in a plugin's
``pyproject.toml``::

    [project.entry-points.missingkernels]
    my_plugin = "my_package.plugin"

The built-in kernels, densities and baselines are registered through these
same hooks, so a plugin has exactly the powers of the core.

Every hook returns a mapping ``name -> factory``. A factory is a callable
(usually a class) that accepts keyword parameters and returns a new,
unfitted object. The first line of the factory's docstring is the one-line
description shown by ``missingkernels list``.

Examples
--------
>>> from missingkernels.hookspecs import hookimpl
>>> class MyPlugin:
...     @hookimpl
...     def missingkernels_register_densities(self):
...         from missingkernels.densities import GaussianEMDensity
...         return {"my_gaussian": GaussianEMDensity}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pluggy

__all__ = [
    "PROJECT_NAME",
    "hookimpl",
    "hookspec",
    "missingkernels_register_baselines",
    "missingkernels_register_densities",
    "missingkernels_register_expectations",
    "missingkernels_register_kernels",
    "missingkernels_register_representations",
]

#: The pluggy project name, also the entry-point group of plugins.
PROJECT_NAME = "missingkernels"

#: Marks the hook specifications below (used by the package itself).
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
#: Marks a plugin's hook implementations: decorate each hook function with it.
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

Factory = Callable[..., Any]


@hookspec
def missingkernels_register_kernels() -> Mapping[str, Factory]:  # type: ignore[empty-body]
    """Return the missing-data kernels this plugin provides.

    Returns
    -------
    kernels : mapping of str to callable
        Registry name -> factory. ``factory(**params)`` must return an unfitted
        kernel object with ``fit(X)``, ``__call__(X, Y=None)`` and the
        scikit-learn parameter API (``get_params``/``set_params``).
    """


@hookspec
def missingkernels_register_densities() -> Mapping[str, Factory]:  # type: ignore[empty-body]
    """Return the density estimators this plugin provides.

    Returns
    -------
    densities : mapping of str to callable
        Registry name -> factory. ``factory(**params)`` must return an unfitted
        density estimator with ``fit(X)`` (rows may contain NaN) and
        ``conditionals(X)`` returning one of the representations of
        :mod:`missingkernels.conditionals`.
    """


@hookspec
def missingkernels_register_baselines() -> Mapping[str, Factory]:  # type: ignore[empty-body]
    """Return the experiment baselines this plugin provides.

    Returns
    -------
    baselines : mapping of str to callable
        Registry name -> factory. ``factory(task, **params)`` returns an
        unfitted scikit-learn estimator (classifier for ``task="classification"``,
        regressor for ``task="regression"``) that accepts X with NaN. The
        comparisons search a pipeline ending in an SVM over ``C`` x
        ``gamma``; for another estimator, the factory may carry the
        attributes ``search_grid`` (dict of parameter lists searched by the
        inner CV; default: those of ``C`` and ``gamma`` it has) and ``scale``
        (standardise the features first; default True).
    """


@hookspec
def missingkernels_register_representations() -> Mapping[str, type]:  # type: ignore[empty-body]
    """Return the representations of conditionals this plugin provides.

    Returns
    -------
    representations : mapping of str to type
        Tag -> class. A density whose class attribute ``representation`` is
        the tag returns instances of the class from ``conditionals(X)``. The
        class should subclass
        :class:`missingkernels.conditionals.BaseConditionals` and implement
        ``first_moments``, ``second_moments`` and ``sample``: then every base
        kernel of a matching ``domain`` works with it through the average over
        pairs of draws, and cells can add closed forms.
    """


@hookspec
def missingkernels_register_expectations() -> Mapping[str, Any]:  # type: ignore[empty-body]
    """Return cells of the expectation table this plugin provides.

    Returns
    -------
    expectations : mapping of str to Expectation
        Name (by convention ``"<base kernel>/<representation>"``) ->
        :class:`missingkernels.kernels.Expectation`: the closed-form
        expectation of one base kernel class over one conditionals class
        (subclasses included), and optionally its variance. Two cells for the
        same pair of classes are an error.
    """
