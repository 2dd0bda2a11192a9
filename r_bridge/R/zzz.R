.onLoad <- function(libname, pkgname) {
  # reticulate >= 1.41 can provision Python itself: declare the requirement
  # (it only takes effect when the user has not chosen a Python, e.g. with
  # RETICULATE_PYTHON). Older reticulate (1.28 on Debian 12) has no
  # py_require(); there the user points reticulate at an environment.
  # Python itself is not started here: .mk_py() imports on first use.
  requirement <- getOption(
    "missingkernels.python_requirement",
    Sys.getenv("MISSINGKERNELS_PYTHON_REQUIREMENT", "missingkernels")
  )
  py_require <- .mk_py_require()
  if (!is.null(py_require) && !isFALSE(requirement) && nzchar(requirement)) {
    try(py_require(requirement), silent = TRUE)
  }
  invisible()
}

# reticulate::py_require where it exists (reticulate >= 1.41), else NULL.
.mk_py_require <- function() {
  ns <- asNamespace("reticulate")
  if (exists("py_require", envir = ns, inherits = FALSE)) {
    get("py_require", envir = ns)
  } else {
    NULL
  }
}
