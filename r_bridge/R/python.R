# Access to the Python package, imported on first use.
#
# Nothing here runs when the R package is loaded: reticulate binds an R
# session to one Python interpreter for good, so choosing it must stay the
# user's decision (RETICULATE_PYTHON, reticulate::use_python(), py_require())
# until a function of this package actually needs Python.

.mk_state <- new.env(parent = emptyenv())

# The first reticulate version that converts arrays of NumPy >= 2.
.mk_reticulate_numpy2 <- "1.38.0"

.mk_install_hint <- function() {
  paste0(
    "To use it, install the Python package 'missingkernels' into a Python ",
    "environment and point reticulate at that environment *before* this ",
    "package first calls Python (in a fresh R session), e.g. in a shell:\n",
    "  python3 -m venv ~/.venvs/missingkernels\n",
    "  ~/.venvs/missingkernels/bin/pip install /path/to/missingkernels",
    if (utils::packageVersion("reticulate") < .mk_reticulate_numpy2) {
      " 'numpy<2'"
    },
    "\nand in R:\n",
    "  Sys.setenv(RETICULATE_PYTHON = \"~/.venvs/missingkernels/bin/python\")\n",
    "Or from R, in one step: install_missingkernels(\"/path/to/missingkernels\"), ",
    "then restart R.\n",
    "From a clone of the repository, `bash scripts/test.sh` creates such an ",
    "environment at .venv-r. See ?missingkernels-python."
  )
}

.mk_unavailable <- function(reason) {
  stop(
    structure(
      class = c("missingkernels_python_unavailable", "error", "condition"),
      list(
        message = paste0(
          "missingkernels: the Python package is not available: ", reason,
          "\n", .mk_install_hint()
        ),
        call = NULL
      )
    )
  )
}

# Before Python is started: when the user has not chosen a Python, the
# environment install_missingkernels() creates by default is used if it
# exists.
.mk_use_default_env <- function() {
  if (reticulate::py_available(initialize = FALSE)) {
    return(invisible(FALSE))
  }
  chosen <- nzchar(Sys.getenv("RETICULATE_PYTHON")) ||
    nzchar(Sys.getenv("RETICULATE_PYTHON_ENV")) ||
    !is.null(.mk_python_requirement())
  if (chosen || !isTRUE(tryCatch(reticulate::virtualenv_exists(.mk_default_envname),
    error = function(e) FALSE
  ))) {
    return(invisible(FALSE))
  }
  tryCatch(
    {
      reticulate::use_virtualenv(.mk_default_envname, required = FALSE)
      invisible(TRUE)
    },
    error = function(e) invisible(FALSE)
  )
}

# Why Python cannot be used, as one sentence, or NULL when it can.
.mk_python_problem <- function() {
  .mk_use_default_env()
  ok <- tryCatch(reticulate::py_available(initialize = TRUE),
    error = function(e) structure(FALSE, reason = conditionMessage(e))
  )
  if (!isTRUE(ok)) {
    requested <- Sys.getenv("RETICULATE_PYTHON")
    reason <- attr(ok, "reason")
    return(paste0(
      "reticulate could not start Python",
      if (nzchar(requested)) {
        paste0(" (RETICULATE_PYTHON=", requested, if (!file.exists(requested)) {
          ", which does not exist"
        }, ")")
      },
      if (!is.null(reason)) paste0(": ", reason),
      "."
    ))
  }
  config <- reticulate::py_config()
  if (!reticulate::py_module_available("missingkernels")) {
    return(paste0(
      "the Python in use (", config$python, ") cannot import 'missingkernels'."
    ))
  }
  numpy <- config$numpy$version
  if (!is.null(numpy) &&
    numeric_version(as.character(numpy)) >= "2" &&
    utils::packageVersion("reticulate") < .mk_reticulate_numpy2) {
    return(paste0(
      "the Python in use (", config$python, ") has NumPy ", numpy,
      ", which reticulate ", utils::packageVersion("reticulate"),
      " cannot convert (it needs reticulate >= ", .mk_reticulate_numpy2,
      " or NumPy < 2)."
    ))
  }
  NULL
}

# The Python module `missingkernels` (convert = FALSE: conversions are done
# explicitly by this package), imported once per session.
.mk_py <- function() {
  if (is.null(.mk_state$module)) {
    problem <- .mk_python_problem()
    if (!is.null(problem)) .mk_unavailable(problem)
    module <- tryCatch(
      reticulate::import("missingkernels", convert = FALSE),
      error = function(e) {
        .mk_unavailable(paste0(
          "importing it failed: ", conditionMessage(e)
        ))
      }
    )
    if (!reticulate::py_has_attr(module, "MissingKernelSVC")) {
      # e.g. a folder named `missingkernels` (such as this installed R
      # package) in the working directory, imported as a namespace package
      where <- tryCatch(reticulate::py_str(module$`__path__`),
        error = function(e) "a module"
      )
      .mk_unavailable(paste0(
        "'import missingkernels' found ", where, ", which is not the Python ",
        "package (a folder of that name in the working directory shadows it)."
      ))
    }
    .mk_state$numpy <- reticulate::import("numpy", convert = FALSE)
    .mk_state$builtins <- reticulate::import_builtins(convert = FALSE)
    .mk_state$module <- module
    # the R plugin's densities run their R code in this R session (densities.R)
    if (reticulate::py_module_available("missingkernels_r")) .mk_install_host_r()
  }
  .mk_state$module
}

.mk_np <- function() {
  .mk_py()
  .mk_state$numpy
}

#' Is the Python package available?
#'
#' Checks, without an error, whether the functions of this package can reach
#' the Python package \code{missingkernels} through reticulate. The first call
#' starts Python in this R session (see \link{missingkernels-python}).
#'
#' @return \code{TRUE} or \code{FALSE}; when \code{FALSE} the attribute
#'   \code{"reason"} says why and how to install it.
#' @examples
#' mk_available()
#' @export
mk_available <- function() {
  result <- tryCatch(
    {
      .mk_py()
      TRUE
    },
    missingkernels_python_unavailable = function(e) {
      structure(FALSE, reason = conditionMessage(e))
    }
  )
  result
}

#' Versions of the Python side
#'
#' @return A named character vector: the Python executable, the versions of
#'   Python, NumPy, scikit-learn and \code{missingkernels}, and of reticulate.
#' @examples
#' if (mk_available()) mk_python_versions()
#' @export
mk_python_versions <- function() {
  mk <- .mk_py()
  config <- reticulate::py_config()
  sklearn <- reticulate::import("sklearn", convert = TRUE)
  c(
    python = config$python,
    python_version = reticulate::import("platform", convert = TRUE)$python_version(),
    numpy = as.character(reticulate::py_to_r(.mk_np()$`__version__`)),
    scikit_learn = sklearn$`__version__`,
    missingkernels = reticulate::py_to_r(mk$`__version__`),
    reticulate = as.character(utils::packageVersion("reticulate"))
  )
}
