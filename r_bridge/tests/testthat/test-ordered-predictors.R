# Issue 48, item 5: ordered factor predictors.
#
# By default (ordered = "nominal") an ordered factor predictor is a nominal
# column, exactly as factor(x, ordered = FALSE) would be: R's own models code
# it with polynomial contrasts, which span the space of its dummy columns (a
# categorical, not one column of ranks), and the ranks lost to mean
# imputation + e1071::svm on two of three tables
# (r_bridge/tools/ordered-factors-results.md).
#
# ordered = "ranks" keeps the previous treatment: with scale = TRUE the level
# ranks are standardised like a numeric column (mean and standard deviation
# of the observed training ranks); new data are ranked by label against the
# training levels; scale = FALSE keeps the raw ranks. A fit saved before the
# choice existed predicts with ranks, as it was fitted.

ordered_data <- function(n = 70, seed = 58) {
  set.seed(seed)
  df <- data.frame(a = rnorm(n, 5, 2), b = runif(n, 0, 50))
  # declared levels include one no row uses ("top"): ranks 0..3, "top" = 3
  g <- sample(c("lo", "mid", "hi"), n, TRUE)
  df$g <- factor(g, levels = c("lo", "mid", "hi", "top"), ordered = TRUE)
  rank <- as.integer(df$g) - 1L
  df$v <- 2 * df$a - 0.05 * df$b + 3 * rank + rnorm(n, sd = 0.5)
  df$y <- factor(ifelse(df$v > stats::median(df$v), "yes", "no"))
  df$a[c(3, 11, 40)] <- NA
  df$g[c(5, 17, 26, 60)] <- NA
  df
}

# The ordered column replaced by its standardised training ranks (computed
# here, independently of the package), as a plain numeric column.
with_standardised_ranks <- function(df, train) {
  r_train <- as.integer(train$g) - 1L
  m <- mean(r_train, na.rm = TRUE)
  s <- stats::sd(r_train, na.rm = TRUE)
  out <- df
  out$g <- (match(as.character(df$g), levels(train$g)) - 1L - m) / s
  out
}

# The ordered column as a plain (unordered) factor, same levels.
with_plain_factor <- function(df) {
  df$g <- factor(df$g, ordered = FALSE)
  df
}

# ---------------------------------------------------------------------------
# The default: nominal

test_that("by default an ordered predictor is nominal: the fit equals the one on factor(g, ordered = FALSE)", {
  skip_if_no_python()
  df <- ordered_data()
  train <- df[1:55, ]
  test <- df[56:70, ]
  fit <- mk_svm(y ~ a + b + g, data = train, C = 3, random_state = 4)
  ref <- mk_svm(y ~ a + b + g, data = with_plain_factor(train), C = 3, random_state = 4)
  # a nominal column: the mixed kernel, not genrbf on ranks
  expect_identical(fit$kernel, "mixed_rbf")
  expect_identical(fit$design$ordered, "nominal")
  expect_identical(fit$design$ordered_nominal, "g")
  expect_identical(fit$design$column_kinds[["g"]], "nominal")
  expect_identical(fit$design$levels$g, c("lo", "mid", "hi")) # unused "top" dropped
  expect_false("g" %in% names(fit$scaling$center)) # nominal columns are not scaled
  expect_identical(
    as.vector(reticulate::py_to_r(fit$py_model$is_nominal_)), c(FALSE, FALSE, TRUE)
  )
  expect_identical(summary(fit)$predictors$type, c("numeric", "numeric", "nominal"))
  expect_equal(
    unname(predict(fit, test, type = "decision")),
    unname(predict(ref, with_plain_factor(test), type = "decision")),
    tolerance = 1e-12
  )
  expect_identical(unname(fitted(fit)), unname(fitted(ref)))
  # the x interface, and regression, the same
  cols <- c("a", "b", "g")
  fit_x <- mk_svm(train[cols], train$v, random_state = 4)
  ref_x <- mk_svm(with_plain_factor(train)[cols], train$v, random_state = 4)
  expect_identical(fit_x$design$ordered, "nominal")
  expect_equal(unname(predict(fit_x, test)), unname(predict(ref_x, with_plain_factor(test))),
    tolerance = 1e-10
  )
  # new data may give the column as an ordered factor (levels in another
  # order, or a subset), a plain factor or text: matched by label
  base <- predict(fit, test, type = "decision")
  reordered <- test
  reordered$g <- factor(as.character(test$g), levels = c("hi", "top", "lo", "mid"), ordered = TRUE)
  expect_equal(predict(fit, reordered, type = "decision"), base, tolerance = 1e-12)
  as_text <- test
  as_text$g <- as.character(test$g)
  expect_equal(predict(fit, as_text, type = "decision"), base, tolerance = 1e-12)
  expect_equal(predict(fit, with_plain_factor(test), type = "decision"), base, tolerance = 1e-12)
})

test_that("mk_svm(ordered = \"nominal\") is the default, and ordered factors with one used level warn as factors do", {
  skip_if_no_python()
  df <- ordered_data()
  explicit <- mk_svm(y ~ a + b + g, data = df, C = 3, random_state = 4, ordered = "nominal")
  default <- mk_svm(y ~ a + b + g, data = df, C = 3, random_state = 4)
  expect_identical(predict(explicit, df, type = "decision"), predict(default, df, type = "decision"))
  one <- df
  one$h <- factor(rep("x", nrow(df)), levels = c("x", "z"), ordered = TRUE)
  expect_warning(mk_svm(y ~ a + h, data = one), "The factor predictor 'h' has one level")
})

test_that("nominal by default: a level unused in training is unseen in new data (missing, with a warning, or an error)", {
  skip_if_no_python()
  df <- ordered_data()
  train <- df[1:55, ]
  fit <- mk_svm(y ~ a + b + g, data = train, C = 3, random_state = 4)
  top <- df[56:58, ]
  top$g <- factor(c("top", "lo", "hi"), levels = levels(df$g), ordered = TRUE)
  as_missing <- top
  as_missing$g[1] <- NA
  # Python's handle_unknown = "missing": an R warning of the package's class
  expect_warning(
    dec <- predict(fit, top, type = "decision"),
    "feature 'g' holds value\\(s\\) not seen in the training rows \\(\\['top'\\]",
    class = "missingkernels_UnknownCategoryWarning"
  )
  expect_equal(dec, predict(fit, as_missing, type = "decision"), tolerance = 1e-12)
  strict <- update(fit, handle_unknown = "error")
  expect_identical(strict$design$ordered, "nominal")
  expect_error(predict(strict, top), "feature 'g' holds value\\(s\\) not seen")
  # a column of another class: the error names it as an ordered factor
  # made nominal, with the training levels
  wrong <- top
  wrong$g <- c(1, 2, 3)
  expect_error(
    predict(fit, wrong),
    paste0(
      "Variable 'g' was an ordered factor \\(a nominal column: ordered = \"nominal\"\\) ",
      "in the training data; in `newdata` it is of class numeric.*'lo', 'mid', 'hi'"
    )
  )
})

test_that("a bad `ordered` value is an error that names the choices", {
  df <- ordered_data()
  msg <- "`ordered` must be \"nominal\" \\(ordered factor predictors are nominal columns.*or \"ranks\""
  for (bad in list("rank", NA_character_, c("nominal", "ranks"), TRUE, 1)) {
    expect_error(mk_svm(y ~ a + b + g, data = df, ordered = bad), msg)
    expect_error(mk_svm(df[c("a", "g")], df$y, ordered = bad), msg)
  }
  # checked for matrices too (where it changes nothing): a typo is not ignored
  expect_error(mk_svm(as.matrix(df[c("a", "b")]), df$y, ordered = "Nominal"), msg)
})

test_that("a kernel for numeric columns only says how to get the ranks back", {
  skip_if_no_python()
  df <- ordered_data()
  expect_error(
    mk_svm(y ~ a + b + g, data = df, kernel = "genrbf"),
    paste0(
      "The kernel 'genrbf' takes numeric columns, but the ordered factor 'g' ",
      "is a nominal column \\(ordered = \"nominal\", the default\\)\\. Use ordered = \"ranks\""
    )
  )
  ranks <- mk_svm(y ~ a + b + g, data = df, kernel = "genrbf", ordered = "ranks")
  expect_identical(ranks$kernel, "genrbf")
  # other nominal columns: Python's own message
  df$f <- factor(ifelse(df$b > 25, "p", "q"))
  expect_error(mk_svm(y ~ a + f + g, data = df, kernel = "genrbf"), "features 'f', 'g' are nominal")
})

test_that("mk_tune and the caret model pass `ordered` on to mk_svm", {
  skip_if_no_python()
  df <- ordered_data()
  tuned <- mk_tune(y ~ a + b + g, data = df, ranges = list(C = c(1, 4)), folds = 3, seed = 1,
    ordered = "ranks")
  expect_identical(tuned$design$ordered, "ranks")
  expect_identical(tuned$kernel, "genrbf")
  by_default <- mk_tune(y ~ a + b + g, data = df, ranges = list(C = c(1, 4)), folds = 3, seed = 1)
  expect_identical(by_default$design$ordered, "nominal")
  expect_error(
    mk_tune(y ~ a + b + g, data = df, ranges = list(C = 1), folds = 3, ordered = "rank"),
    "`ordered` must be"
  )
  # the caret model's fit function (caret itself is not needed to call it)
  model <- mk_caret_model(ordered = "ranks")
  fit <- model$fit(df[c("a", "b", "g")], df$y, wts = NULL,
    param = data.frame(C = 1, gamma = 0.3), lev = levels(df$y), last = TRUE,
    classProbs = FALSE
  )
  expect_identical(fit$design$ordered, "ranks")
})

# ---------------------------------------------------------------------------
# ordered = "ranks": the previous treatment

test_that(".mk_scaling standardises the ranks of ordered factors, declared levels included", {
  x <- data.frame(
    a = c(1, NA, 3, 5),
    g = factor(c("b", "a", NA, "c"), levels = c("a", "b", "c", "d"), ordered = TRUE),
    f = factor(c("u", "v", "u", "v"))
  )
  s <- missingkernels:::.mk_scaling(x)
  expect_equal(s$center, c(a = 3, g = 1)) # ranks 1, 0, 2 ("d" unused: rank 3)
  expect_equal(s$scale, c(a = 2, g = 1))
  expect_identical(s$levels, list(g = c("a", "b", "c", "d")))
  xs <- missingkernels:::.mk_apply_scaling(x, s)
  expect_type(xs$g, "double")
  expect_equal(xs$g, c(0, -1, NA, 1))
  expect_identical(xs$f, x$f) # unordered factors are left alone
  # new rows: levels in another order, or a subset, give the same values
  new <- data.frame(a = 1, g = factor(c("c", "a", "d"), levels = c("d", "c", "a"), ordered = TRUE))
  expect_equal(missingkernels:::.mk_apply_scaling(new, s)$g, c(1, -1, 2))
  new$g <- c("c", "a", "d") # a character column is matched by label too
  expect_equal(missingkernels:::.mk_apply_scaling(new, s)$g, c(1, -1, 2))
  # a scaling stored by an earlier version (no ordered columns) leaves them
  old <- list(center = c(a = 3), scale = c(a = 2))
  expect_identical(missingkernels:::.mk_apply_scaling(x, old)$g, x$g)
})

test_that("ordered = \"ranks\" with scale = TRUE equals the fit on the standardised ranks as a numeric column", {
  skip_if_no_python()
  df <- ordered_data()
  train <- df[1:55, ]
  test <- df[56:70, ]
  num_train <- with_standardised_ranks(train, train)
  num_test <- with_standardised_ranks(test, train)
  # classification: decision values
  fit <- mk_svm(y ~ a + b + g, data = train, C = 3, ordered = "ranks")
  ref <- mk_svm(y ~ a + b + g, data = num_train, C = 3)
  expect_identical(fit$kernel, "genrbf")
  expect_identical(fit$design$ordered, "ranks")
  expect_identical(fit$design$column_kinds[["g"]], "ordered")
  expect_equal(fit$scaling$center[["g"]], mean(as.integer(train$g) - 1L, na.rm = TRUE))
  expect_equal(
    unname(predict(fit, test, type = "decision")),
    unname(predict(ref, num_test, type = "decision")),
    tolerance = 1e-10
  )
  expect_equal(
    unname(predict(fit, train, type = "decision")),
    unname(predict(ref, num_train, type = "decision")),
    tolerance = 1e-10
  )
  # regression, mixed table (a nominal column too: mixed_rbf, latent_class)
  train$f <- factor(ifelse(train$b > 25, "p", "q"))
  test$f <- factor(ifelse(test$b > 25, "p", "q"))
  num_train$f <- train$f
  num_test$f <- test$f
  reg <- mk_svm(v ~ a + g + f, data = train, random_state = 3, ordered = "ranks")
  reg_ref <- mk_svm(v ~ a + g + f, data = num_train, random_state = 3)
  expect_identical(reg$kernel, "mixed_rbf")
  expect_equal(unname(fitted(reg)), unname(fitted(reg_ref)), tolerance = 1e-8)
  expect_equal(unname(predict(reg, test)), unname(predict(reg_ref, num_test)), tolerance = 1e-8)
  # the uncertainty from the missing entries sees the same rows
  unc <- mk_uncertainty(reg, test[1:4, ], n_draws = 30, seed = 9)
  unc_ref <- mk_uncertainty(reg_ref, num_test[1:4, ], n_draws = 30, seed = 9)
  expect_equal(unname(as.matrix(unc)), unname(as.matrix(unc_ref)), tolerance = 1e-8)
  # the x interface takes the choice too
  fit_x <- mk_svm(train[c("a", "b", "g")], train$y, C = 3, ordered = "ranks")
  expect_equal(
    unname(predict(fit_x, test, type = "decision")),
    unname(predict(ref, num_test, type = "decision")),
    tolerance = 1e-10
  )
})

test_that("ordered = \"ranks\": new data with the levels in another order or a subset predict the same", {
  skip_if_no_python()
  df <- ordered_data()
  fit <- mk_svm(y ~ a + b + g, data = df[1:55, ], C = 3, ordered = "ranks")
  test <- df[56:70, ]
  base <- predict(fit, test, type = "decision")
  reordered <- test
  reordered$g <- factor(as.character(test$g), levels = c("hi", "top", "lo", "mid"), ordered = TRUE)
  expect_equal(predict(fit, reordered, type = "decision"), base, tolerance = 1e-12)
  subset <- test
  subset$g <- factor(as.character(test$g), levels = c("lo", "mid", "hi"), ordered = TRUE)
  expect_equal(predict(fit, subset, type = "decision"), base, tolerance = 1e-12)
  as_text <- test
  as_text$g <- as.character(test$g)
  expect_equal(predict(fit, as_text, type = "decision"), base, tolerance = 1e-12)
  # a level unused in training ("top", rank 3) has its standardised rank
  top <- test[1, ]
  top$g <- factor("top", levels = levels(df$g), ordered = TRUE)
  num <- with_standardised_ranks(top, df[1:55, ])
  ref <- mk_svm(y ~ a + b + g, data = with_standardised_ranks(df[1:55, ], df[1:55, ]), C = 3)
  expect_equal(unname(predict(fit, top, type = "decision")),
    unname(predict(ref, num, type = "decision")),
    tolerance = 1e-10
  )
})

test_that("ordered = \"ranks\" with scale = FALSE: an ordered factor enters as its raw ranks", {
  skip_if_no_python()
  df <- ordered_data()
  fit <- mk_svm(y ~ a + b + g, data = df, scale = FALSE, gamma = 0.01, C = 3, ordered = "ranks")
  expect_null(fit$scaling)
  raw <- df
  raw$g <- as.double(as.integer(df$g) - 1L)
  ref <- mk_svm(y ~ a + b + g, data = raw, scale = FALSE, gamma = 0.01, C = 3)
  expect_equal(
    unname(predict(fit, df, type = "decision")),
    unname(predict(ref, raw, type = "decision")),
    tolerance = 1e-10
  )
})

# ---------------------------------------------------------------------------
# Saved fits

test_that("a fit with an ordered predictor survives saveRDS/readRDS and augment, either way", {
  skip_if_no_python()
  df <- ordered_data()
  for (how in c("nominal", "ranks")) {
    fit <- mk_svm(v ~ a + b + g, data = df, ordered = how)
    path <- tempfile(fileext = ".rds")
    saveRDS(fit, path)
    back <- readRDS(path)
    unlink(path)
    expect_identical(back$design$ordered, how)
    expect_identical(back$scaling, fit$scaling)
    expect_identical(predict(back, df), predict(fit, df))
    aug <- augment(fit, newdata = df[1:6, ])
    expect_equal(unname(aug$.fitted), unname(predict(fit, df[1:6, ])))
  }
})

test_that("a fit saved before `ordered` existed (no design$ordered) still predicts with ranks", {
  skip_if_no_python()
  df <- ordered_data()
  train <- df[1:55, ]
  test <- df[56:70, ]
  fit <- mk_svm(y ~ a + b + g, data = train, C = 3, random_state = 4, ordered = "ranks")
  # what an earlier version stored: the same design without the two fields
  old <- fit
  old$design$ordered <- NULL
  old$design$ordered_nominal <- NULL
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(old, path)
  back <- readRDS(path)
  expect_null(back$design$ordered)
  expect_identical(
    predict(back, test, type = "decision"), predict(fit, test, type = "decision")
  )
  # an unseen label is handled as ranks handle it: R's warning, as before
  top <- test[1:2, ]
  top$g <- c("top", "huge")
  expect_warning(predict(back, top), "ordered factor 'g' holds 1 value", class = "missingkernels_UnknownCategoryWarning")
  # and it differs from the nominal default
  nominal <- mk_svm(y ~ a + b + g, data = train, C = 3, random_state = 4)
  expect_gt(max(abs(predict(back, test, type = "decision") - predict(nominal, test, type = "decision"))), 1e-6)
})
