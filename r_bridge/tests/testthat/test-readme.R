# The repository README's R example runs as written. The README is outside
# the package: the test skips where it is absent (an installed package's
# tests, R CMD check on the tarball).

readme_block <- function(path, heading, language) {
  lines <- readLines(path, encoding = "UTF-8")
  start <- match(paste("##", heading), lines)
  if (is.na(start)) stop("no heading '## ", heading, "' in ", path)
  rest <- lines[(start + 1L):length(lines)]
  rest <- rest[seq_len(which(startsWith(c(rest, "## "), "## "))[1] - 1L)]
  open <- which(rest == paste0("```", language))[1]
  if (is.na(open)) stop("no ```", language, " block under '## ", heading, "'")
  close <- which(rest == "```" & seq_along(rest) > open)[1]
  rest[(open + 1L):(close - 1L)]
}

test_that("the README's R example runs as written", {
  skip_if_no_python()
  skip_if_not_installed("mlbench")
  readme <- file.path(getwd(), "..", "..", "..", "README.md")
  skip_if_not(file.exists(readme), "the repository README is not beside the tests")
  code <- readme_block(readme, "Quick start in R", "r")
  expect_true(any(grepl("mk_svm(", code, fixed = TRUE)))
  env <- new.env(parent = globalenv())
  # as typed at the prompt: visible values are printed
  output <- capture.output(
    source(exprs = parse(text = code), local = env, print.eval = TRUE)
  )
  expect_s3_class(env$fit, "mk_svm")
  expect_length(env$accuracy, 5)
  expect_gt(mean(env$accuracy), 0.65) # Pima: about 0.75 in the literature
  expect_true(any(grepl("Levels: neg pos", output, fixed = TRUE)))
})
