"""Sphinx configuration of the missingkernels documentation.

Build with ``bash docs/build.sh`` (warnings are errors). Besides the usual
settings this file:

- copies the vignettes' committed full-mode results
  (``vignettes/results/*/full/``) into ``docs/_vignettes/`` so that MyST
  renders them as pages with their figures;
- writes the command line's help into ``docs/_generated/``;
- fails the build when a public name (a module's ``__all__``) has no
  docstring or is missing from the API reference (``api.rst``);
- copies a local MathJax into the site (``_static/mathjax/``), so that the
  formulas render without a network (see ``MATHJAX`` below).
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
sys.path.insert(0, str(DOCS))

# No entry-point plugins: the pages describe the package as installed alone
# (the R plugin, when installed in the environment, would add names).
os.environ.setdefault("MISSINGKERNELS_DISABLE_PLUGIN_AUTOLOAD", "1")
os.environ.setdefault("MISSINGKERNELS_DATA_DIR", str(ROOT.parent / "shared" / "data"))

import vignette_pages  # noqa: E402

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
html_static_path = ["_static"]
html_css_files = ["missingkernels.css"]
# The vignettes' wide results tables get the page's full width (their pages
# are added below).
secondary_sidebar: dict[str, list[str]] = {"**": ["page-toc"]}
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": secondary_sidebar,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# Pages without sub-pages: no "Section Navigation" sidebar (it would be empty).
# The API reference and its pages: the names grouped by role, as in api.rst
# (the default sidebar would list its ~120 pages flat).
_NO_SUBPAGES = ("index", "install", "theory", "cli", "development")
html_sidebars: dict[str, list[str]] = {p: [] for p in _NO_SUBPAGES}
html_sidebars.update({"api": ["api-sidebar.html"], "generated/*": ["api-sidebar.html"]})


def api_groups() -> list[tuple[str, list[tuple[str, str]]]]:
    """The sections of ``api.rst`` with their names and pages, in order."""
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    module = "missingkernels"
    lines = (DOCS / "api.rst").read_text().splitlines()
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and re.fullmatch(r"=+", lines[i + 1]) and line.strip():
            if not re.fullmatch(r"=+", line):
                groups.append((line.strip(), []))
        elif m := re.match(r"\.\. currentmodule:: ([\w.]+)", line):
            module = m[1]
        elif groups and (m := re.fullmatch(r"   (\w+)", line)):
            groups[-1][1].append((m[1], f"generated/{module}.{m[1]}"))
    return [(title, names) for title, names in groups if names]


html_context = {"api_groups": api_groups()}
html_show_sourcelink = False

# -- MathJax, served from the site itself ----------------------------------------
#
# The formulas are typeset in the reader's browser by MathJax 2.7 from
# Debian's ``libjs-mathjax`` (2.7.9 in Debian 12; scripts/test.sh installs
# it), copied into ``_static/mathjax/``: the pages then render on a machine
# without internet, which Sphinx's default (MathJax 4 from a CDN) does not.
# Debian's package rather than npm's or PyPI's: it is installed by the same
# apt step as R and Chromium, its version is fixed by the Debian release, and
# it needs no Node. Only what the ``TeX-AMS_CHTML`` configuration loads is
# copied (1.6 MB of its 54 MB). Elsewhere, point ``MK_MATHJAX_DIR`` at any
# MathJax 2.7 tree (e.g. npm's ``mathjax@2.7.9`` package has the same layout).

MATHJAX = Path(os.environ.get("MK_MATHJAX_DIR", "/usr/share/javascript/mathjax"))
MATHJAX_PARTS = [
    "MathJax.js",
    "config/TeX-AMS_CHTML.js",
    "jax/input/TeX",
    "jax/output/CommonHTML",
    "jax/element",
    "extensions",
    "localization/en",
    "fonts/HTML-CSS/TeX/woff",
]
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS_CHTML"
mathjax2_config = {
    # Typeset only Sphinx's math nodes, not a "$" or "\(" in code or prose.
    "tex2jax": {"processClass": "math", "ignoreClass": ".*"},
    "CommonHTML": {"linebreaks": {"automatic": True}},
    "messageStyle": "none",
    "menuSettings": {"zoom": "None"},
}


def copy_local_assets(app, exception) -> None:  # type: ignore[no-untyped-def]
    """Copy the local MathJax into the built site's ``_static/mathjax``, and
    the R vignette, when the R step has rendered it, into ``r/``."""
    if exception is not None or app.builder.format != "html":
        return
    if not (MATHJAX / "MathJax.js").exists():
        raise RuntimeError(
            f"no MathJax 2.7 in {MATHJAX}: install Debian's libjs-mathjax "
            "(apt-get install libjs-mathjax; scripts/test.sh does) or set "
            "MK_MATHJAX_DIR to a MathJax 2.7 tree"
        )
    # The configuration and the CSS are written for MathJax 2.7.
    version = re.search(r'version:"(2\.7\.\d+)"', (MATHJAX / "MathJax.js").read_text())
    if version is None:
        raise RuntimeError(f"{MATHJAX}/MathJax.js is not MathJax 2.7.x")
    if R_VIGNETTE.exists():  # linked from the R reference page
        (Path(app.outdir) / "r").mkdir(exist_ok=True)
        shutil.copy2(R_VIGNETTE, Path(app.outdir) / "r" / R_VIGNETTE.name)
    target = Path(app.outdir) / "_static" / "mathjax"
    shutil.rmtree(target, ignore_errors=True)
    for part in MATHJAX_PARTS:
        source = MATHJAX / part
        if source.is_dir():
            shutil.copytree(source, target / part)  # follows Debian's symlinks
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / part)


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
    # Its timing page loads a stylesheet from a CDN; the times are in the log.
    "write_computation_times": False,
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
    """Copy each vignette's full-mode report and figures; return the names.

    The report is rearranged for a reader (question and answer first,
    provenance last: ``docs/vignette_pages.py``)."""
    shutil.rmtree(VIGNETTE_PAGES, ignore_errors=True)
    names = []
    for full in sorted(VIGNETTE_RESULTS.glob("*/full")):
        if not (full / "README.md").exists():
            continue
        name = full.parent.name
        target = VIGNETTE_PAGES / name
        target.mkdir(parents=True)
        source = (full / "README.md").relative_to(ROOT).as_posix()
        page = vignette_pages.arrange((full / "README.md").read_text(), source)
        (target / "README.md").write_text(page)
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


R_MAN = ROOT / "r_bridge" / "man"
R_VIGNETTE = ROOT / "r_bridge" / "doc" / "missingkernels.html"
# Rd2HTML's page around the help text: dropped (its head loads KaTeX from a
# CDN); the body's sections become rubrics and \eqn{} math for our MathJax.
RD_RENDER = r"""
args <- commandArgs(trailingOnly = TRUE)
for (rd in list.files(args[1], pattern = "[.]Rd$", full.names = TRUE)) {
  out <- file.path(args[2], sub("[.]Rd$", ".html", basename(rd)))
  suppressWarnings(tools::Rd2HTML(tools::parse_Rd(rd), out = out,
                                  package = "missingkernels", no_links = TRUE))
}
"""


def write_r_reference() -> None:
    """The R package's help pages (``r_bridge/man``) as one page, rendered by
    R's own ``tools::Rd2HTML`` (pkgdown is not in Debian)."""
    import html
    import subprocess
    import tempfile

    page = GENERATED / "r_reference.rst"
    head = [
        ".. _r-reference:",
        "",
        "=========================",
        "The R package's reference",
        "=========================",
        "",
        "The help pages of the R package ``r_bridge/`` (``?mk_svm`` in R),",
        "rendered from its Rd files by R's ``tools::Rd2HTML`` when this site",
        "was built; their formulas (such as :math:`R^2`) are typeset as on the",
        "other pages. :ref:`r-guide` introduces the package.",
        "",
    ]
    if R_VIGNETTE.exists():  # built by the R step of the tests (20-r-bridge.sh)
        head += [
            "The package's vignette, rendered by rmarkdown with the examples run:",
            "`Support vector machines on data with missing values, from R",
            "<../r/missingkernels.html>`__.",
            "",
        ]
    else:
        head += [
            "The package's vignette (``r_bridge/vignettes/missingkernels.Rmd``)",
            "was not rendered before this site was built (the R step of",
            "``scripts/test.sh`` renders it into ``r_bridge/doc/``).",
            "",
        ]
    rscript = shutil.which("Rscript")
    if rscript is None:
        missing = "R was not installed when this site was built: no pages here."
        page.write_text("\n".join([*head, missing, ""]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([rscript, "-e", RD_RENDER, str(R_MAN), tmp], check=True)
        rendered = {p.stem: p.read_text() for p in Path(tmp).glob("*.html")}
    order = sorted(rendered, key=lambda n: (not n.endswith("-package"), n.lower()))
    lines = list(head)
    for name in order:
        text = rendered[name]
        title = html.unescape(re.search(r"<h2>(.*?)</h2>", text, re.S)[1]).strip()
        body = text.split("</h2>", 1)[1].rsplit("</div>", 1)[0]
        body = re.sub(r"<h3>(.*?)</h3>", r'<p class="rubric">\1</p>', body)
        body = re.sub(
            r'<code class="reqn">(.*?)</code>',
            r'<span class="math notranslate nohighlight">\(\1\)</span>',
            body,
            flags=re.S,
        )
        heading = f"``{name}``"
        lines += [
            heading,
            "=" * len(heading),
            "",
            f"**{title}**",
            "",
            ".. raw:: html",
            "",
        ]
        lines += ["   " + line if line.strip() else "" for line in body.splitlines()]
        lines.append("")
    page.write_text("\n".join(lines))


os.environ["COLUMNS"] = "88"  # argparse wraps the help at this width
for _name in copy_vignette_results():
    secondary_sidebar[f"_vignettes/{_name}/README"] = []
write_cli_help()
write_r_reference()

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
    app.connect("build-finished", copy_local_assets)
    # Before numpydoc (priority 500) turns the sections into reST.
    app.connect("autodoc-process-docstring", escape_trailing_underscores, priority=400)
    app.connect("autodoc-process-docstring", data_docstring, priority=400)
    app.connect("autodoc-skip-member", skip_member)
