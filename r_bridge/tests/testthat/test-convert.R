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

test_that("factor, character and logical columns stay columns (no dummy coding)", {
  df <- data.frame(
    a = c(1.5, NA, 3, 4),
    f = factor(c("u", NA, "w", "v"), levels = c("u", "v", "w", "unused")),
    o = factor(c("lo", "hi", "hi", NA), levels = c("lo", "mid", "hi"), ordered = TRUE),
    s = c("p", "q", NA, "p"),
    l = c(TRUE, NA, FALSE, TRUE),
    i = c(1L, 2L, NA, 4L),
    stringsAsFactors = FALSE
  )
  built <- missingkernels:::.mk_design_fit(df)
  x <- built$x
  expect_s3_class(x, "data.frame")
  expect_identical(names(x), c("a", "f", "o", "s", "l", "i"))
  expect_identical(
    unname(built$design$column_kinds),
    c("numeric", "nominal", "ordered", "nominal", "logical", "numeric")
  )
  # unused levels of an unordered factor dropped; an ordered factor keeps all
  # of its levels (their ranks are the declared ones)
  expect_identical(levels(x$f), c("u", "v", "w"))
  expect_identical(levels(x$o), c("lo", "mid", "hi"))
  expect_true(is.ordered(x$o))
  expect_identical(levels(x$s), c("p", "q"))
  expect_identical(x$l, c(TRUE, NA, FALSE, TRUE))
  expect_identical(x$i, c(1, 2, NA, 4))
  expect_identical(nrow(x), 4L) # rows with NA are kept
  # new data is coded by label against the training levels
  new <- data.frame(
    a = 2, f = factor("w", levels = c("w", "u")),
    o = factor("hi", levels = c("hi", "lo"), ordered = TRUE), s = "q", l = NA, i = 3L
  )
  xn <- missingkernels:::.mk_design_new(built$design, new)
  expect_identical(as.character(xn$f), "w")
  expect_identical(levels(xn$f), c("u", "v", "w"))
  expect_identical(as.integer(xn$o), 3L) # "hi" is the third training level
  expect_identical(xn$l, NA)
  # an unseen level of a nominal column is kept as an extra level (Python
  # applies handle_unknown); of an ordered factor it is handled here
  bad <- new
  bad$f <- factor("zz")
  expect_identical(levels(missingkernels:::.mk_design_new(built$design, bad)$f), c("u", "v", "w", "zz"))
  bad <- new
  bad$o <- factor("top", ordered = TRUE)
  expect_warning(
    xo <- missingkernels:::.mk_design_new(built$design, bad),
    class = "missingkernels_UnknownCategoryWarning"
  )
  expect_true(is.na(xo$o))
  expect_error(missingkernels:::.mk_design_new(built$design, bad, "error"), "'top'")
  bad <- new
  bad$f <- 2
  expect_error(missingkernels:::.mk_design_new(built$design, bad), "'f' was a factor")
  bad <- new
  bad$a <- "x"
  expect_error(missingkernels:::.mk_design_new(built$design, bad), "'a' was numeric")
})

test_that("all-numeric data frames still give a double matrix", {
  df <- data.frame(a = c(1.5, NA, 3), i = c(1L, NA, 2L))
  built <- missingkernels:::.mk_design_fit(df)
  expect_identical(built$x, cbind(a = c(1.5, NA, 3), i = c(1, NA, 2)) |> `rownames<-`(as.character(1:3)))
  expect_false(built$design$table)
})

test_that("mk_compare() still dummy codes (its Python runner takes arrays)", {
  df <- data.frame(
    a = c(1.5, NA, 3, 4),
    f = factor(c("u", NA, "w", "v"), levels = c("u", "v", "w", "unused")),
    l = c(TRUE, NA, FALSE, TRUE)
  )
  x <- missingkernels:::.mk_indicator_matrix(df)
  expect_identical(colnames(x), c("a", "fv", "fw", "lTRUE"))
  expect_equal(unname(x[2, ]), rep(NA_real_, 4))
})

test_that("formula terms: numeric ones through model.matrix, factors alone, no factor interactions", {
  df <- data.frame(
    x = c(1, 2, 4, NA, 8), z = c(2, 1, NA, 3, 3),
    f = factor(c("a", "b", NA, "a", "b")), g = c("p", "q", "p", "p", NA),
    y = 1:5
  )
  mf <- stats::model.frame(y ~ log(x) + f + x:z + I(z^2), df, na.action = stats::na.pass)
  built <- missingkernels:::.mk_table_fit(attr(mf, "terms"), mf)
  expect_identical(names(built$x), c("log(x)", "f", "I(z^2)", "x:z"))
  expect_equal(built$x[["log(x)"]], log(df$x))
  expect_equal(built$x[["x:z"]], df$x * df$z)
  expect_identical(unname(built$design$column_kinds), c("numeric", "nominal", "numeric", "numeric"))
  # the same columns for new rows, transformations re-applied
  xn <- missingkernels:::.mk_design_new(built$design, df[2:3, ])
  expect_equal(xn[["log(x)"]], log(c(2, 4)))
  expect_identical(as.character(xn$f), c("b", NA))
  for (bad in c("y ~ x:f", "y ~ f * g", "y ~ x + f:g")) {
    mf <- stats::model.frame(stats::as.formula(bad), df, na.action = stats::na.pass)
    expect_error(
      missingkernels:::.mk_table_fit(attr(mf, "terms"), mf),
      "interactions with them are not available"
    )
  }
  mf <- stats::model.frame(y ~ interaction(f, g), df, na.action = stats::na.pass)
  built <- missingkernels:::.mk_table_fit(attr(mf, "terms"), mf)
  expect_identical(unname(built$design$column_kinds), "nominal")
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
