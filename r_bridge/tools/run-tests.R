# Runs the testthat tests of the installed package and prints one summary
# line; exits non-zero when a test fails or errors.
#   Rscript r_bridge/tools/run-tests.R [path/to/tests/testthat]
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else file.path("r_bridge", "tests", "testthat")
suppressPackageStartupMessages({
  library(testthat)
  library(missingkernels)
})
res <- testthat::test_dir(dir,
  package = "missingkernels", load_package = "installed",
  reporter = testthat::ProgressReporter$new(show_praise = FALSE),
  stop_on_failure = FALSE
)
df <- as.data.frame(res)
failed <- df$failed > 0 | df$error
skipped <- !failed & df$skipped
passed <- !failed & !skipped
cat(sprintf(
  "r_bridge: %d passed, %d failed, %d skipped (tests; %d expectations)\n",
  sum(passed), sum(failed), sum(skipped), sum(df$nb)
))
if (any(skipped)) {
  cat("skipped:", paste(df$test[skipped], collapse = "; "), "\n")
}
quit(status = if (any(failed)) 1L else 0L)
