"""Sphinx configuration of the missingkernels documentation.

Build with ``bash docs/build.sh`` (warnings are errors). Besides the usual
settings this file:

- copies the vignettes' committed full-mode results
  (``vignettes/results/*/full/``) into ``docs/_vignettes/`` so that MyST
  renders them as pages with their figures;
- writes the command line's help into ``docs/_generated/``;
- fails the build when a public name (a module's ``__all__``) has no
  docstring or is missing from the API reference (``api.rst``).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import shutil
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

# No entry-point plugins: the pages describe the package as installed alone
# (the R plugin, when installed in the environment, would add names).
os.environ.setdefault("MISSINGKERNELS_DISABLE_PLUGIN_AUTOLOAD", "1")
os.environ.setdefault("MISSINGKERNELS_DATA_DIR", str(ROOT.parent / "shared" / "data"))

import missingkernels  # noqa: E402

project = "missingkernels"
author = "The missingkernels developers"
copyright = "2025-2026, The missingkernels developers"
release = missingkernels.__version__
version = re.sub(r"(\.dev\d+|rc\d+)$", "", release)

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "README.md", "**/table_*.md", "auto_examples/*.ipynb"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
default_role = "py:obj"  # `name` in a docstring cross-references it
suppress_warnings = ["myst.header"]  # the vignettes' reports start at level 2

# -- autodoc, autosummary, numpydoc --------------------------------------------

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True}
autodoc_typehints = "none"  # the numpydoc "Parameters" sections say it
autoclass_content = "class"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# numpydoc's own GL08 check reads ``__doc__`` only, so it flags a method that
# inherits its documentation; ``check_public_names`` below checks every public
# name, method and property instead (inherited docstrings and ``#:`` comments
# count).
numpydoc_validation_checks: set[str] = set()

# -- HTML -----------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"missingkernels {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "install": []}
html_show_sourcelink = False

# -- MyST -----------------------------------------------------------------------

myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 2

# -- sphinx-gallery -------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "examples")],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",  # every example runs (all are plot_*.py)
    "ignore_pattern": r"__init__\.py",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "plot_gallery": "True",
    "matplotlib_animations": False,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
}
warnings.filterwarnings(
    "ignore",
    category=UserWarning,
    message="Matplotlib is currently using agg",
)

# -- the vignettes' results and the CLI help, generated at every build ------------

VIGNETTE_RESULTS = ROOT / "vignettes" / "results"
VIGNETTE_PAGES = DOCS / "_vignettes"
GENERATED = DOCS / "_generated"


def copy_vignette_results() -> list[str]:
    """Copy each vignette's full-mode report and figures; return the names."""
    shutil.rmtree(VIGNETTE_PAGES, ignore_errors=True)
    names = []
    for full in sorted(VIGNETTE_RESULTS.glob("*/full")):
        if not (full / "README.md").exists():
            continue
        name = full.parent.name
        target = VIGNETTE_PAGES / name
        target.mkdir(parents=True)
        shutil.copy2(full / "README.md", target / "README.md")
        for figure in full.glob("*.png"):
            shutil.copy2(figure, target / figure.name)
        names.append(name)
    return names


def write_cli_help() -> None:
    """``missingkernels [COMMAND] --help`` as text files for ``cli.rst``."""
    from missingkernels.cli import build_parser

    GENERATED.mkdir(exist_ok=True)
    parser = build_parser()
    (GENERATED / "cli_main.txt").write_text(parser.format_help())
    subparsers = next(
        a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"
    )
    for name, sub in subparsers.choices.items():
        (GENERATED / f"cli_{name}.txt").write_text(sub.format_help())


os.environ["COLUMNS"] = "88"  # argparse wraps the help at this width
copy_vignette_results()
write_cli_help()

# -- every public name has a docstring and a place in the API reference ----------

PUBLIC_MODULES = [
    "missingkernels",
    "missingkernels.kernels",
    "missingkernels.conditionals",
    "missingkernels.densities",
    "missingkernels.estimators",
    "missingkernels.dask",
    "missingkernels.datasets",
    "missingkernels.experiments",
    "missingkernels.hookspecs",
    "missingkernels.utils",
    "missingkernels.utils.estimator_checks",
]


def attribute_doc(module_name: str, name: str) -> str:
    """The ``#:`` comment of a module-level constant, where it is defined.

    A public module often re-exports a constant of a private one: look in
    the public module, then in every loaded submodule holding the same object.
    """
    from sphinx.pycode import ModuleAnalyzer

    obj = getattr(sys.modules[module_name], name)
    holders = sorted(
        m
        for m, mod in list(sys.modules.items())
        if m.startswith(module_name + ".") and getattr(mod, name, None) is obj
    )
    candidates = [module_name, *holders]
    if name == "__version__":
        candidates.append("missingkernels._version")
    for candidate in candidates:
        try:
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        except Exception:
            continue
        doc = docs.get(("", name))
        if doc:
            return "\n".join(doc).strip()
    return ""


def public_names() -> dict[str, list[str]]:
    names = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names[module_name] = list(getattr(module, "__all__", []))
    return names


def _is_data(obj: object) -> bool:
    return not (
        inspect.isclass(obj)
        or inspect.isroutine(obj)
        or inspect.ismodule(obj)
        or isinstance(obj, property)
    )


def undocumented(cls: type) -> list[str]:
    """Public methods and properties of ``cls`` with no docstring, inherited
    ones included (autodoc silently leaves out an undocumented member)."""
    names = set()
    for klass in cls.__mro__:
        if klass.__module__.startswith("missingkernels"):
            names.update(
                n for n in vars(klass) if not n.startswith("_") or n == "__call__"
            )
    missing = []
    for name in sorted(names):
        doc, routine = None, False
        for klass in cls.__mro__:
            member = vars(klass).get(name)
            if member is None:
                continue
            if isinstance(member, (classmethod, staticmethod)):
                member = member.__func__
            if not (inspect.isfunction(member) or isinstance(member, property)):
                break  # data: documented in the class docstring or by '#:'
            routine = True
            doc = member.__doc__
            if doc and doc.strip():
                break
        if routine and not (doc and doc.strip()):
            missing.append(name)
    return missing


def check_public_names(app) -> None:  # type: ignore[no-untyped-def]
    """Fail the build on a public name without a docstring or API entry."""
    api = (DOCS / "api.rst").read_text()
    listed = set(re.findall(r"^\s+(?:~?[\w.]+\.)?(\w+)\s*$", api, re.M))
    problems = []
    for module_name, names in public_names().items():
        module = sys.modules[module_name]
        if not inspect.getdoc(module):
            problems.append(f"{module_name}: module without a docstring")
        for name in names:
            obj = getattr(module, name, None)
            full = f"{module_name}.{name}"
            if obj is None and not hasattr(module, name):
                problems.append(f"{full}: in __all__ but not defined")
                continue
            if inspect.ismodule(obj):
                continue  # a subpackage: documented by its own section
            doc = attribute_doc(module_name, name) if _is_data(obj) else obj.__doc__
            if not (doc and doc.strip()):
                problems.append(f"{full}: no docstring (a '#:' comment for data)")
            if name not in listed:
                problems.append(f"{full}: not in docs/api.rst")
            if inspect.isclass(obj) and obj.__module__.startswith("missingkernels"):
                problems += [f"{full}.{m}: no docstring" for m in undocumented(obj)]
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    for problem in problems:
        # A warning: sphinx-build -W makes it an error (docs/build.sh).
        logger.warning("public name not covered by the documentation: %s", problem)


def data_docstring(app, what, name, obj, options, lines) -> None:  # type: ignore[no-untyped-def]
    """Give a re-exported constant the ``#:`` comment of its definition."""
    if what not in ("data", "attribute") or any(line.strip() for line in lines):
        return
    module_name, _, attr = name.rpartition(".")
    if module_name in sys.modules and hasattr(sys.modules[module_name], attr):
        doc = attribute_doc(module_name, attr)
        if doc:
            lines[:] = doc.splitlines()


def escape_trailing_underscores(app, what, name, obj, options, lines) -> None:  # type: ignore[no-untyped-def]
    """``(n_features_in_,)`` in a numpydoc type is text, not a reST reference."""
    for i, line in enumerate(lines):
        if re.match(r"^\s*[\w, *]+ : ", line):
            head, _, kind = line.partition(" : ")
            lines[i] = head + " : " + re.sub(r"\b(\w+)_(?=[,)\s]|$)", r"\1\\_", kind)


def skip_member(app, what, name, obj, skip, options):  # type: ignore[no-untyped-def]
    """Leave out what scikit-learn defines (its own docs say it), including
    its generated metadata-routing setters."""
    if re.fullmatch(r"set_\w+_request|get_metadata_routing", name):
        return True
    module = getattr(obj, "__module__", None) or getattr(
        getattr(obj, "fget", None), "__module__", None
    )
    if isinstance(module, str) and module.split(".")[0] == "sklearn":
        return True
    return None


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("builder-inited", check_public_names)
    # Before numpydoc (priority 500) turns the sections into reST.
    app.connect("autodoc-process-docstring", escape_trailing_underscores, priority=400)
    app.connect("autodoc-process-docstring", data_docstring, priority=400)
    app.connect("autodoc-skip-member", skip_member)
