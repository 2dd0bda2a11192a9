# Conversions on the R side (no Python needed).

test_that("integer and logical NA become NA_real_, not sentinels", {
  x <- matrix(c(1L, NA, 3L, 4L), 2)
  d <- missingkernels:::.mk_as_double_matrix(x, "x")
  expect_identical(typeof(d), "double")
  expect_true(is.na(d[2, 1]))
  expect_equal(d[c(1, 3, 4)], c(1, 3, 4))
  l <- missingkernels:::.mk_as_double_matrix(matrix(c(TRUE, NA, FALSE, TRUE), 2), "x")
  expect_identical(l, matrix(c(1, NA, 0, 1), 2))
})

test_that("character matrices and unsupported columns are clear errors", {
  expect_error(
    missingkernels:::.mk_as_double_matrix(matrix(c("a", "b"), 1), "x"),
    "character matrix; it must be numeric"
  )
  df <- data.frame(a = 1:3, when = as.Date("2020-01-01") + 0:2)
  expect_error(missingkernels:::.mk_design_fit(df), "'when' of x are of class Date")
})

test_that("factors become treatment indicators; a missing level makes them all NA", {
  df <- data.frame(
    a = c(1.5, NA, 3, 4),
    f = factor(c("u", NA, "w", "v"), levels = c("u", "v", "w", "unused")),
    o = factor(c("lo", "hi", "hi", NA), levels = c("lo", "hi"), ordered = TRUE),
    s = c("p", "q", NA, "p"),
    l = c(TRUE, NA, FALSE, TRUE),
    i = c(1L, 2L, NA, 4L)
  )
  built <- missingkernels:::.mk_design_fit(df)
  x <- built$x
  # unused level dropped; ordered factor gets 0/1 columns, not polynomial scores
  expect_identical(colnames(x), c("a", "fv", "fw", "ohi", "sq", "lTRUE", "i"))
  expected <- rbind(
    c(1.5, 0, 0, 0, 0, 1, 1),
    c(NA, NA, NA, 1, 1, NA, 2),
    c(3, 0, 1, 1, NA, 0, NA),
    c(4, 1, 0, NA, 0, 1, 4)
  )
  expect_equal(unname(x), expected)
  expect_identical(nrow(x), 4L) # rows with NA are kept
  # new data is coded with the training levels, whatever its own levels are
  new <- data.frame(
    a = 2, f = factor("w", levels = c("w", "u")),
    o = factor("hi", levels = c("lo", "hi"), ordered = TRUE), s = "q", l = NA, i = 3L
  )
  xn <- missingkernels:::.mk_design_new(built$design, new)
  expect_equal(unname(xn[1, ]), c(2, 0, 1, 1, 1, NA, 3))
  bad <- new
  bad$f <- factor("zz")
  expect_error(missingkernels:::.mk_design_new(built$design, bad), "new level")
})

test_that("matrix designs match new data by column name", {
  x <- cbind(a = c(1, 2), b = c(3, NA))
  built <- missingkernels:::.mk_design_fit(x)
  new <- cbind(b = 5, a = 6, c = 7)
  expect_equal(missingkernels:::.mk_design_new(built$design, new), cbind(a = 6, b = 5))
  expect_error(missingkernels:::.mk_design_new(built$design, cbind(a = 1)), "lacks the column")
  unnamed <- missingkernels:::.mk_design_fit(unname(x))
  expect_error(missingkernels:::.mk_design_new(unnamed$design, matrix(1, 1, 3)), "3 column")
})

test_that("integer parameters are passed as integers, recursively", {
  p <- missingkernels:::.mk_py_params(list(
    max_iter = 50, tol = 1, kernel_params = list(n_draws = 20, diagonal = "same_draw")
  ))
  expect_identical(p$max_iter, 50L)
  expect_identical(p$tol, 1) # a float parameter stays a double
  expect_identical(p$kernel_params$n_draws, 20L)
  expect_error(missingkernels:::.mk_py_params(list(max_iter = 2.5)), "whole number")
  expect_error(missingkernels:::.mk_py_params(list(1)), "must be named")
})

test_that("standardisation uses observed entries and leaves constant columns unscaled", {
  x <- cbind(a = c(1, NA, 3, 5), b = c(2, 2, 2, NA))
  s <- missingkernels:::.mk_scaling(x)
  expect_equal(s$center, c(a = 3, b = 2))
  expect_equal(s$scale, c(a = 2, b = 1))
  xs <- missingkernels:::.mk_apply_scaling(x, s)
  expect_equal(xs[, "a"], c(-1, NA, 0, 1))
})
