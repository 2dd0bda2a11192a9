# Issue 48, item 5: with scale = TRUE an ordered factor predictor enters the
# kernel as its level ranks standardised like a numeric column (mean and
# standard deviation of the observed training ranks); new data are ranked by
# label against the training levels. scale = FALSE keeps the raw ranks.

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

test_that("with scale = TRUE a fit equals the fit on the standardised ranks as a numeric column", {
  skip_if_no_python()
  df <- ordered_data()
  train <- df[1:55, ]
  test <- df[56:70, ]
  num_train <- with_standardised_ranks(train, train)
  num_test <- with_standardised_ranks(test, train)
  # classification: decision values
  fit <- mk_svm(y ~ a + b + g, data = train, C = 3)
  ref <- mk_svm(y ~ a + b + g, data = num_train, C = 3)
  expect_identical(fit$kernel, "genrbf")
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
  reg <- mk_svm(v ~ a + g + f, data = train, random_state = 3)
  reg_ref <- mk_svm(v ~ a + g + f, data = num_train, random_state = 3)
  expect_identical(reg$kernel, "mixed_rbf")
  expect_equal(unname(fitted(reg)), unname(fitted(reg_ref)), tolerance = 1e-8)
  expect_equal(unname(predict(reg, test)), unname(predict(reg_ref, num_test)), tolerance = 1e-8)
  # the uncertainty from the missing entries sees the same rows
  unc <- mk_uncertainty(reg, test[1:4, ], n_draws = 30, seed = 9)
  unc_ref <- mk_uncertainty(reg_ref, num_test[1:4, ], n_draws = 30, seed = 9)
  expect_equal(unname(as.matrix(unc)), unname(as.matrix(unc_ref)), tolerance = 1e-8)
})

test_that("new data with the levels in another order or a subset predict the same", {
  skip_if_no_python()
  df <- ordered_data()
  fit <- mk_svm(y ~ a + b + g, data = df[1:55, ], C = 3)
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

test_that("with scale = FALSE an ordered factor still enters as its raw ranks", {
  skip_if_no_python()
  df <- ordered_data()
  fit <- mk_svm(y ~ a + b + g, data = df, scale = FALSE, gamma = 0.01, C = 3)
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

test_that("a fit with an ordered predictor survives saveRDS/readRDS and augment", {
  skip_if_no_python()
  df <- ordered_data()
  fit <- mk_svm(v ~ a + b + g, data = df)
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(fit, path)
  back <- readRDS(path)
  expect_identical(back$scaling, fit$scaling)
  expect_identical(predict(back, df), predict(fit, df))
  aug <- augment(fit, newdata = df[1:6, ])
  expect_equal(unname(aug$.fitted), unname(predict(fit, df[1:6, ])))
})
