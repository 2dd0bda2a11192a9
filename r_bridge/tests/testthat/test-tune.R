# mk_tune (issue 25): grid search by cross-validation returning a fitted model.

tune_data <- function(n = 60, seed = 51) {
  set.seed(seed)
  df <- data.frame(a = rnorm(n), b = rnorm(n))
  df$y <- factor(ifelse(df$a^2 + df$b^2 > 1.3, "out", "in"))
  df$v <- df$a^2 - df$b + 0.1 * rnorm(n)
  df$a[c(4, 11, 25, 40)] <- NA
  df
}

test_that("the grid's errors are those of a cross-validation by hand; best refitted", {
  skip_if_no_python()
  df <- tune_data()
  fit <- mk_tune(y ~ a + b, data = df,
    ranges = list(C = c(0.5, 8), gamma = c(0.1, 1)), folds = 3, seed = 7
  )
  expect_s3_class(fit, "mk_svm")
  perf <- fit$tune$performances
  expect_identical(nrow(perf), 4L)
  expect_named(perf, c("C", "gamma", "error", "dispersion", "failed"))
  expect_true(all(is.na(perf$failed)))
  # the folds: 1..3, stratified by class
  folds <- fit$tune$folds
  expect_setequal(unique(folds), 1:3)
  counts <- table(folds, df$y)
  expect_true(all(apply(counts, 2, function(col) max(col) - min(col) <= 1)))
  # error of one combination by hand, on the same folds
  by_hand <- sapply(1:3, function(k) {
    m <- mk_svm(y ~ a + b, data = df[folds != k, ], C = 8, gamma = 1)
    mean(predict(m, df[folds == k, ]) != df$y[folds == k])
  })
  row <- which(perf$C == 8 & perf$gamma == 1)
  expect_equal(perf$error[row], mean(by_hand))
  expect_equal(perf$dispersion[row], sd(by_hand))
  # the best combination, refitted on all rows
  best <- which.min(perf$error)
  expect_identical(fit$tune$best_parameters, list(C = perf$C[best], gamma = perf$gamma[best]))
  expect_identical(fit$C, perf$C[best])
  expect_identical(fit$gamma, perf$gamma[best])
  ref <- mk_svm(y ~ a + b, data = df, C = perf$C[best], gamma = perf$gamma[best])
  expect_identical(predict(fit, df, type = "decision"), predict(ref, df, type = "decision"))
  # its call is an mk_svm call with the best parameters: update() works
  expect_identical(fit$call[[1L]], as.name("mk_svm"))
  expect_identical(update(fit, C = 2)$C, 2)
  expect_output(print(fit), "Tuned by 3-fold cross-validation over 4 combinations")
  # the same seed gives the same folds, and the global stream is untouched
  set.seed(99)
  before <- runif(1)
  set.seed(99)
  again <- mk_tune(y ~ a + b, data = df, ranges = list(C = c(0.5, 8)), folds = 3, seed = 7)
  expect_identical(runif(1), before)
  expect_identical(again$tune$folds, folds)
})

test_that("matrix interface, regression (mean squared error), fixed arguments", {
  skip_if_no_python()
  df <- tune_data(seed = 52)
  x <- as.matrix(df[c("a", "b")])
  fit <- mk_tune(x, df$v, ranges = list(C = c(1, 10)), folds = 3, seed = 1, epsilon = 0.05)
  expect_identical(fit$type, "regression")
  expect_identical(fit$tune$metric, "mean squared error")
  expect_identical(fit$epsilon, 0.05)
  folds <- fit$tune$folds
  by_hand <- sapply(1:3, function(k) {
    m <- mk_svm(x[folds != k, ], df$v[folds != k], C = 10, epsilon = 0.05)
    mean((df$v[folds == k] - predict(m, x[folds == k, ]))^2)
  })
  expect_equal(fit$tune$performances$error[2], mean(by_hand))
  # probability = TRUE: used by the final fit
  pfit <- mk_tune(y ~ a + b, data = df, ranges = list(C = c(1, 4)), folds = 3, seed = 2,
    probability = TRUE, calibration_folds = 3)
  expect_identical(dim(predict(pfit, df, type = "prob")), c(60L, 2L))
})

test_that("rows without a response take no part; bad grids are clear errors", {
  skip_if_no_python()
  df <- tune_data(seed = 53)
  df$y[c(2, 3)] <- NA
  fit <- mk_tune(y ~ a + b, data = df, ranges = list(C = c(1, 4)), folds = 3, seed = 3)
  expect_true(all(is.na(fit$tune$folds[c(2, 3)])))
  expect_identical(nobs(fit), 58L)
  expect_error(mk_tune(y ~ a + b, data = df, ranges = list(cost = 1:2)), "Unknown argument.*`cost`")
  expect_error(mk_tune(y ~ a + b, data = df, ranges = list(1, 2)), "named list")
  expect_error(mk_tune(y ~ a + b, data = df, ranges = list(C = 1), C = 2), "both in `ranges`")
  expect_error(mk_tune(y ~ a + b, data = df, folds = 1), "at least 2")
  expect_error(mk_tune(y ~ a + b, data = df, subset = 1:30), "subset them first")
  # a failing combination is recorded, the others still count
  fit2 <- mk_tune(y ~ a + b, data = df, ranges = list(gamma = c(-1, 0.5)), folds = 2, seed = 1)
  perf <- fit2$tune$performances
  expect_match(perf$failed[1], "positive number")
  expect_true(is.na(perf$error[1]))
  expect_identical(fit2$gamma, 0.5)
})
