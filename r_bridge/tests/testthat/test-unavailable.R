# Without a usable Python the functions stop with installation advice. Run in
# fresh R processes: an R session cannot switch Python once started.

probe <- paste(
  "library(missingkernels)",
  "cat('available:', isTRUE(mk_available()), '\\n')",
  "r <- tryCatch(mk_kernels(), error = function(e) e)",
  "cat('class:', class(r)[1], '\\n')",
  "cat(conditionMessage(r))",
  sep = "; "
)

test_that("a RETICULATE_PYTHON that does not exist gives installation advice", {
  res <- run_rscript(probe, env = "RETICULATE_PYTHON=/nonexistent/bin/python")
  expect_match(res$output, "available: FALSE")
  expect_match(res$output, "class: missingkernels_python_unavailable")
  expect_match(res$output, "RETICULATE_PYTHON=/nonexistent/bin/python, which does not exist")
  expect_match(res$output, "pip install", fixed = TRUE)
  expect_match(res$output, "Sys.setenv(RETICULATE_PYTHON", fixed = TRUE)
})

test_that("a Python without the package gives installation advice", {
  skip_if_no_python()
  base <- reticulate::py_eval("__import__('sys')._base_executable")
  venv <- file.path(tempfile("mk-empty-venv"))
  status <- system2(base, c("-m", "venv", "--without-pip", venv), stdout = FALSE, stderr = FALSE)
  if (status != 0) skip(paste("could not create an empty venv with", base))
  on.exit(unlink(venv, recursive = TRUE))
  python <- file.path(venv, "bin", "python")
  res <- run_rscript(probe, env = paste0("RETICULATE_PYTHON=", python))
  expect_match(res$output, "available: FALSE")
  expect_match(res$output, "class: missingkernels_python_unavailable")
  expect_match(res$output, "cannot import 'missingkernels'", fixed = TRUE)
  expect_match(res$output, "pip install", fixed = TRUE)
})

test_that("py_require() is used only where reticulate has it (>= 1.41)", {
  has <- utils::packageVersion("reticulate") >= "1.41"
  expect_identical(is.function(missingkernels:::.mk_py_require()), has)
  # loading the package never starts Python (import is lazy)
  res <- run_rscript(
    "library(missingkernels); cat('initialized:', reticulate::py_available(), '\\n')",
    env = "RETICULATE_PYTHON=/nonexistent/bin/python"
  )
  expect_match(res$output, "initialized: FALSE")
})
