# Tests that need Python skip, with the reason, when the Python package is not
# reachable -- except where MISSINGKERNELS_REQUIRE_PYTHON=1 (the project's
# test script sets it), where that is a failure: CI must not pass by skipping.
skip_if_no_python <- function() {
  ok <- mk_available()
  if (isTRUE(ok)) {
    return(invisible(TRUE))
  }
  if (identical(Sys.getenv("MISSINGKERNELS_REQUIRE_PYTHON"), "1")) {
    stop("MISSINGKERNELS_REQUIRE_PYTHON=1 but ", attr(ok, "reason"), call. = FALSE)
  }
  skip(sub("\n.*$", "", attr(ok, "reason"))) # first line: what is wrong
}

# Python modules with conversion on, for references computed on the Python
# side without going through this package's conversions.
py_mk <- function() reticulate::import("missingkernels", convert = TRUE)
py_np <- function() reticulate::import("numpy", convert = TRUE)

# Plain NumPy float array from an R matrix, NA -> NaN, built independently of
# the package's own converter (quiet NaN, as a Python user's data has: R's NA
# is a signalling NaN).
py_array <- function(x) {
  x <- unname(x)
  storage.mode(x) <- "double"
  x[is.na(x)] <- NaN
  py_np()$array(x, dtype = "float64")
}

# An Rscript in a fresh process, with the library paths of this session.
run_rscript <- function(code, env = character()) {
  rscript <- file.path(R.home("bin"), "Rscript")
  env <- c(env, paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep)))
  out <- suppressWarnings(system2(rscript, c("-e", shQuote(code)),
    stdout = TRUE, stderr = TRUE, env = env
  ))
  list(output = paste(out, collapse = "\n"), status = attr(out, "status") %||% 0L)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
