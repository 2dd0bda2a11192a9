# Model-object conventions (issue 25): update(), terms(), model.frame(),
# formula(), nobs(), fitted(), residuals(), print/summary, plot().

method_data <- function(n = 50, seed = 11) {
  set.seed(seed)
  df <- data.frame(a = rnorm(n), b = rnorm(n), c = rnorm(n))
  df$y <- factor(ifelse(df$a - df$b + 0.3 * rnorm(n) > 0, "yes", "no"))
  df$v <- df$a - 0.5 * df$b + 0.1 * rnorm(n)
  df$a[c(2, 9, 17)] <- NA
  df$b[c(4, 9, 30)] <- NA
  df
}

test_that("the stored call names mk_svm, so update() refits", {
  skip_if_no_python()
  df <- method_data()
  fit <- mk_svm(y ~ a + b, data = df, C = 1, gamma = 0.5)
  expect_identical(fit$call[[1L]], as.name("mk_svm"))
  fit10 <- update(fit, C = 10)
  expect_s3_class(fit10, "mk_svm")
  expect_identical(fit10$C, 10)
  expect_identical(fit10$gamma, 0.5)
  expect_identical(fit10$call$C, 10)
  # the same as fitting with C = 10 directly
  direct <- mk_svm(y ~ a + b, data = df, C = 10, gamma = 0.5)
  expect_equal(predict(fit10, df, type = "decision"), predict(direct, df, type = "decision"))
  # a changed formula
  fit_a <- update(fit, . ~ . - b)
  expect_identical(fit_a$feature_names, "a")
  expect_identical(format(formula(fit_a)), "y ~ a")
  # matrix interface too
  x <- as.matrix(df[c("a", "b", "c")])
  mfit <- mk_svm(x, df$y)
  expect_identical(mfit$call[[1L]], as.name("mk_svm"))
  expect_identical(update(mfit, C = 3)$C, 3)
})

test_that("terms, formula, model.frame, nobs", {
  skip_if_no_python()
  df <- method_data()
  fit <- mk_svm(y ~ a + b, data = df, subset = 1:40)
  expect_s3_class(terms(fit), "terms")
  expect_identical(attr(terms(fit), "term.labels"), c("a", "b"))
  expect_identical(format(formula(fit)), "y ~ a + b")
  mf <- model.frame(fit)
  expect_s3_class(mf, "data.frame")
  expect_identical(names(mf), c("y", "a", "b"))
  expect_identical(nrow(mf), 40L)
  expect_identical(mf$a, df$a[1:40]) # NA predictors kept
  expect_identical(nobs(fit), 40L)
  x <- as.matrix(df[c("a", "b")])
  mfit <- mk_svm(x, df$y)
  expect_identical(nobs(mfit), 50L)
  expect_error(model.frame(mfit), "formula interface")
  expect_error(terms(mfit), "formula interface")
  expect_error(formula(mfit), "formula interface")
})

test_that("fitted and residuals (regression); residuals refused for classifiers", {
  skip_if_no_python()
  df <- method_data()
  reg <- mk_svm(v ~ a + b + c, data = df, C = 5)
  expect_identical(fitted(reg), predict(reg, df))
  expect_equal(residuals(reg), unname(df$v - predict(reg, df)))
  expect_identical(resid(reg), residuals(reg))
  cls <- mk_svm(y ~ a + b, data = df)
  expect_identical(fitted(cls), predict(cls, df))
  expect_error(residuals(cls), "regression")
})

test_that("print and summary show kernel, density, support vectors, training error", {
  skip_if_no_python()
  df <- method_data()
  fit <- mk_svm(y ~ a + b, data = df, C = 2)
  err <- mean(predict(fit, df) != df$y)
  expect_equal(fit$training_error, err)
  out <- paste(capture.output(print(fit)), collapse = "\n")
  expect_match(out, "mk_svm(formula = y ~ a + b, data = df, C = 2)", fixed = TRUE)
  expect_match(out, "Kernel: genrbf   density: gaussian_em")
  expect_match(out, sprintf("support vectors: %d", fit$n_sv))
  expect_match(out, sprintf("Training error: %.4g (misclassification rate)", err), fixed = TRUE)
  # the support vectors are training rows, counted from 1
  expect_length(fit$index, fit$n_sv)
  expect_true(all(fit$index >= 1 & fit$index <= nrow(df)))
  s <- summary(fit)
  expect_equal(unname(s$training["accuracy"]), 1 - err)
  expect_identical(sum(s$sv_per_class), fit$n_sv)
  reg <- mk_svm(v ~ a + b, data = df)
  mse <- mean((df$v - predict(reg, df))^2)
  expect_output(print(reg), sprintf("Training error: %.4g (mean squared error)", mse), fixed = TRUE)
})

test_that("plot draws decision regions for two features, a message otherwise", {
  skip_if_no_python()
  df <- method_data()
  fit <- mk_svm(y ~ a + b, data = df, C = 2)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  drawn <- plot(fit, grid = 20)
  expect_identical(dim(drawn$z), c(20L, 20L))
  # the regions are the model's predictions on the grid
  points <- expand.grid(a = drawn$x, b = drawn$y)
  expect_identical(as.vector(drawn$z), as.integer(predict(fit, points)))
  # matrix fits and regression
  x <- as.matrix(df[c("a", "b")])
  expect_identical(dim(plot(mk_svm(x, df$y), grid = 10)$z), c(10L, 10L))
  expect_identical(dim(plot(mk_svm(x, df$v), grid = 10)$z), c(10L, 10L))
  expect_identical(dim(plot(mk_svm(df[c("a", "b")], df$y), grid = 10)$z), c(10L, 10L))
  expect_identical(dim(plot(mk_svm(unname(x), df$y), grid = 10)$z), c(10L, 10L))
  # a transformed one: a message and nothing drawn (three: test-consistency.R)
  expect_message(res <- plot(mk_svm(y ~ a + exp(b), data = df)), "two numeric predictors")
  expect_null(res)
})
