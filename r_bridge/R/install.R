#' Install the Python side into a virtual environment
#'
#' Creates (or reuses) a Python virtual environment through reticulate and
#' installs into it the Python package \code{missingkernels} from a local
#' source directory or a wheel you name, and, if asked, the R plugin
#' (\code{missingkernels-r}, densities fitted by R's norm, mice and Amelia
#' through rpy2). The Python package is not published on a package index, so
#' a path is required: a bare name such as \code{"missingkernels"} is refused
#' rather than installed from an index, where anyone could register it.
#' Their dependencies (NumPy, SciPy, scikit-learn, numba, ...) come from
#' pip's usual index. With reticulate older than 1.38, which cannot convert
#' NumPy 2 arrays, \code{numpy<2} is installed too.
#'
#' Afterwards, in a \strong{new} R session (an R session keeps the first
#' Python it starts), this package finds the environment by itself when it is
#' named \code{"r-missingkernels"} (the default) and no other Python was
#' chosen (\code{RETICULATE_PYTHON}, \code{reticulate::use_python()}); for
#' another name or place, call
#' \code{reticulate::use_virtualenv("<envname>", required = TRUE)} or set
#' \code{RETICULATE_PYTHON} to the path this function returns, before the
#' first call. See \link{missingkernels-python} for the other route (an
#' environment you create yourself).
#'
#' @param path The Python package to install: a source directory (a clone
#'   of the repository, with its \file{pyproject.toml}) or a wheel file
#'   (\file{missingkernels-*.whl}).
#' @param envname The virtual environment: a name (created under
#'   reticulate's virtualenv root, \file{~/.virtualenvs} by default) or a
#'   path. An existing environment is reused and the package reinstalled
#'   into it.
#' @param plugin \code{FALSE} (default), \code{TRUE} for the plugin's source
#'   directory inside the repository \code{path}
#'   (\file{plugins/missingkernels-r}), or the path of the plugin's source
#'   directory or wheel.
#' @param extras Optional extras of the Python package, e.g.
#'   \code{"experiments"} (needed by \code{\link{mk_compare}}).
#' @param python The Python interpreter to create the environment with;
#'   \code{NULL} lets reticulate choose (it needs Python >= 3.10).
#' @param pip_options Further options for \code{pip install}, e.g.
#'   \code{"--no-deps"} or an index URL for the dependencies.
#' @return Invisibly, the path of the environment's \code{python}.
#' @examples
#' \dontrun{
#' # from a clone of the repository
#' install_missingkernels("~/src/missingkernels", extras = "experiments")
#' # or from a wheel built with `python -m build` / `pip wheel .`
#' install_missingkernels("~/Downloads/missingkernels-0.1.0-py3-none-any.whl")
#' # then, in a new R session
#' library(missingkernels)
#' mk_available()
#' }
#' @export
install_missingkernels <- function(path, envname = "r-missingkernels", plugin = FALSE,
                                   extras = NULL, python = NULL,
                                   pip_options = character()) {
  if (missing(path)) {
    stop("Name the Python package to install: a source directory or a wheel, ",
      "e.g. install_missingkernels(\"~/src/missingkernels\"). The package is not ",
      "published on a package index.",
      call. = FALSE
    )
  }
  packages <- .mk_install_packages(path, plugin, extras)
  if (!is.character(envname) || length(envname) != 1L || is.na(envname) || !nzchar(envname)) {
    stop("`envname` must be one name or path.", call. = FALSE)
  }
  if (reticulate::virtualenv_exists(envname)) {
    message("Reusing the virtual environment ", envname)
  } else {
    message("Creating the virtual environment ", envname)
    reticulate::virtualenv_create(envname, python = python, packages = NULL)
  }
  reticulate::virtualenv_install(envname, packages,
    ignore_installed = FALSE, pip_options = pip_options
  )
  executable <- reticulate::virtualenv_python(envname)
  if (reticulate::py_available(initialize = FALSE) &&
    !identical(
      normalizePath(reticulate::py_config()$python, mustWork = FALSE),
      normalizePath(executable, mustWork = FALSE)
    )) {
    message(
      "This R session already runs another Python (", reticulate::py_config()$python,
      "): restart R to use the new environment."
    )
  }
  message(
    "Installed into ", executable, ".\nIn a new R session, ",
    if (identical(envname, .mk_default_envname)) {
      "library(missingkernels) finds it when no other Python is chosen, or "
    },
    "run reticulate::use_virtualenv(\"", envname, "\", required = TRUE) or ",
    "Sys.setenv(RETICULATE_PYTHON = \"", executable, "\") before the first call."
  )
  invisible(executable)
}

.mk_default_envname <- "r-missingkernels"

# What pip installs: the local package (with extras), the plugin, and
# numpy<2 for a reticulate that cannot convert NumPy 2.
.mk_install_packages <- function(path, plugin = FALSE, extras = NULL,
                                 reticulate_version = utils::packageVersion("reticulate")) {
  target <- .mk_local_package(path, "path")
  if (!is.null(extras)) {
    if (!is.character(extras) || anyNA(extras) || !all(grepl("^[A-Za-z0-9_.-]+$", extras))) {
      stop("`extras` must be names of extras, e.g. \"experiments\".", call. = FALSE)
    }
    target <- paste0(target, "[", paste(extras, collapse = ","), "]")
  }
  packages <- target
  if (!isFALSE(plugin)) {
    if (isTRUE(plugin)) {
      plugin <- file.path(path, "plugins", "missingkernels-r")
      if (!dir.exists(plugin)) {
        stop("`plugin = TRUE` needs `path` to be the repository's source directory ",
          "(with plugins/missingkernels-r); give the plugin's directory or wheel instead.",
          call. = FALSE
        )
      }
    }
    packages <- c(packages, .mk_local_package(plugin, "plugin"))
  }
  if (reticulate_version < .mk_reticulate_numpy2) {
    packages <- c(packages, "numpy<2")
  }
  packages
}

# A local source directory (with pyproject.toml or setup.py) or a wheel /
# source archive, as an absolute path; anything else (a bare name, a URL) is
# refused: it would be looked up on a package index.
.mk_local_package <- function(path, what) {
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path)) {
    stop(sprintf("`%s` must be one path: a source directory or a wheel.", what), call. = FALSE)
  }
  full <- normalizePath(path.expand(path), mustWork = FALSE)
  if (dir.exists(full)) {
    if (!any(file.exists(file.path(full, c("pyproject.toml", "setup.py"))))) {
      stop(sprintf(
        "`%s` (%s) is a directory without pyproject.toml or setup.py: not a Python package's source.",
        what, path
      ), call. = FALSE)
    }
    return(full)
  }
  if (file.exists(full)) {
    if (!grepl("\\.(whl|tar\\.gz|zip)$", full)) {
      stop(sprintf(
        "`%s` (%s) is a file but not a wheel (.whl) or a source archive (.tar.gz, .zip).",
        what, path
      ), call. = FALSE)
    }
    return(full)
  }
  stop(sprintf(
    paste0(
      "`%s` (%s) is not a local directory or file. The Python package is not ",
      "published on a package index, so it is installed from a local source ",
      "directory (a clone of the repository) or a wheel only; a name would be ",
      "looked up on an index, where anyone could register it."
    ),
    what, path
  ), call. = FALSE)
}
