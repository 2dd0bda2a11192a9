test_that("mk_simulate_missing is Python's simulate_missing, NA instead of NaN", {
  skip_if_no_python()
  set.seed(2)
  x <- matrix(rnorm(240), 60, 4, dimnames = list(NULL, paste0("v", 1:4)))
  for (mech in c("mcar", "mar", "mnar")) {
    out <- mk_simulate_missing(x, mech, rate = 0.25, seed = 7)
    ref <- reticulate::import("missingkernels.experiments")$simulate_missing(
      py_array(x), mech, 0.25, random_state = 7L
    )
    expect_identical(is.na(unname(out)), is.nan(ref))
    expect_false(any(is.nan(out)))
    info <- attr(out, "missingness")
    expect_identical(colnames(out), colnames(x)[info$visible])
    expect_equal(unname(out)[!is.na(out)], x[, info$visible][!is.na(out)])
    expect_equal(mean(is.na(out)), round(0.25 * length(out)) / length(out))
  }
  expect_identical(ncol(mk_simulate_missing(x, "mnar", rate = 0.2, seed = 1)), 2L)
})

test_that("set.seed makes it reproducible; data frames stay data frames", {
  skip_if_no_python()
  df <- data.frame(a = rnorm(30), b = rnorm(30), c = 1:30)
  set.seed(5)
  a <- mk_simulate_missing(df, "mar", rate = 0.1)
  set.seed(5)
  b <- mk_simulate_missing(df, "mar", rate = 0.1)
  expect_identical(a, b)
  expect_s3_class(a, "data.frame")
  expect_identical(names(a), names(df))
  expect_error(mk_simulate_missing(a, "mcar", rate = 0.1), "already has missing values")
  expect_error(mk_simulate_missing(df, "mcar", rate = 1), "\\[0, 1\\)")
  expect_error(mk_simulate_missing(df, "other", rate = 0.1), "should be one of")
})
