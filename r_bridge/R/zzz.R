.onLoad <- function(libname, pkgname) {
  # Nothing is installed or started here. Python is started by .mk_py() on
  # first use. The Python package is not published on a package index, so
  # loading never declares it with reticulate::py_require() (that would ask
  # an index for the name, where anyone could register it); a user of
  # reticulate >= 1.41 may opt in with the *local* source directory or wheel:
  # options(missingkernels.python_requirement = "/path/to/missingkernels")
  # or MISSINGKERNELS_PYTHON_REQUIREMENT, set before loading.
  requirement <- .mk_python_requirement()
  py_require <- .mk_py_require()
  if (!is.null(py_require) && !is.null(requirement)) {
    try(py_require(requirement), silent = TRUE)
  }
  # the parsnip engine "missingkernels" for svm_rbf, when parsnip is (or
  # gets) loaded; parsnip is suggested, not needed (parsnip.R)
  .mk_parsnip_on_load()
  invisible()
}

# ggplot2's data pronoun in autoplot.mk_tune()
utils::globalVariables(".data")

# The opted-in requirement: an existing local directory or file, else NULL.
.mk_python_requirement <- function() {
  requirement <- getOption(
    "missingkernels.python_requirement",
    Sys.getenv("MISSINGKERNELS_PYTHON_REQUIREMENT", "")
  )
  if (!is.character(requirement) || length(requirement) != 1L || is.na(requirement) ||
    !nzchar(requirement)) {
    return(NULL)
  }
  path <- path.expand(requirement)
  if (!file.exists(path)) {
    return(NULL) # a name or URL: never sent to an index from here
  }
  normalizePath(path)
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
