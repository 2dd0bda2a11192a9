# Issue 34: mk_compare drops rows with a missing response like mk_svm; the
# calibration's warnings say where they come from; plot() with slice for
# more than two predictors; the regression plot's legend.

test_that("mk_compare drops rows whose response is missing, as mk_svm does", {
  skip_if_no_python()
  skip_if_not_installed("mice")
  nh <- mice::nhanes2
  expect_identical(sum(is.na(nh$hyp)), 8L)
  res <- mk_compare(hyp ~ ., data = nh, methods = "genrbf",
    outer_folds = 2, inner_folds = 2, C_grid = 1, gamma_grid = 0.5, seed = 1
  )
  expect_identical(as.integer(attr(res, "na.action")), which(is.na(nh$hyp)))
  cells <- unique(res[c("fold", "n_train", "n_test")])
  expect_identical(sum(cells$n_test), 17L) # 25 rows less the 8 without hyp
  expect_error(mk_compare(hyp ~ ., data = nh, methods = "genrbf", na.action = na.fail), "refused")
})

test_that("warnings raised in the calibration folds say so", {
  skip_if_no_python()
  set.seed(8)
  n <- 40
  df <- data.frame(a = rnorm(n), f = factor(c(rep("u", 19), rep("v", 20), "rare")))
  df$y <- factor(ifelse(df$a + 0.2 * rnorm(n) > 0, "yes", "no"))
  # "rare" (one row) is missing from the training rows of one calibration fold
  w <- character()
  fit <- withCallingHandlers(
    mk_svm(y ~ a + f, data = df, probability = TRUE, calibration_folds = 3),
    warning = function(cnd) {
      w <<- c(w, conditionMessage(cnd))
      invokeRestart("muffleWarning")
    }
  )
  unseen <- grep("not seen in the training rows", w, value = TRUE)
  expect_gte(length(unseen), 1L)
  expect_true(all(grepl("cross-validation of the training rows that calibrates the probabilities", unseen)))
  # and say it for R: handle_unknown = "missing", not handle_unknown='missing'
  expect_true(all(grepl("handle_unknown = \"missing\"", unseen, fixed = TRUE)))
})

test_that("plot() with more than two predictors: a formula, a slice, the others integrated out", {
  skip_if_no_python()
  set.seed(12)
  df <- data.frame(a = rnorm(60), b = rnorm(60), c = rnorm(60))
  df$y <- factor(ifelse(df$a - df$b + df$c > 0, "yes", "no"))
  df$v <- df$a + 2 * df$c + rnorm(60, sd = 0.1)
  df$a[1:6] <- NA
  fit <- mk_svm(y ~ a + b + c, data = df)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  drawn <- plot(fit, grid = 6)
  expect_identical(drawn$variables, c("a", "b"))
  grid <- expand.grid(a = drawn$x, b = drawn$y)
  expect_identical(as.vector(drawn$z), as.integer(predict(fit, data.frame(grid, c = NA_real_))))
  sliced <- plot(fit, b ~ c, slice = list(a = 1), grid = 5)
  expect_identical(sliced$variables, c("c", "b"))
  grid <- expand.grid(c = sliced$x, b = sliced$y)
  expect_identical(as.vector(sliced$z), as.integer(predict(fit, data.frame(grid, a = 1))))
  expect_error(plot(fit, b ~ a, slice = list(a = 1)), "draws on an axis")
  expect_error(plot(fit, slice = list(zz = 1)), "not a predictor")
  expect_error(plot(fit, b ~ zz), "'zz' is not one")
  # regression: a legend of the predicted values
  reg <- mk_svm(v ~ a + b + c, data = df)
  shown <- plot(reg, c ~ a, grid = 8)
  expect_true(length(shown$legend$values) >= 2L)
  expect_true(all(shown$legend$values >= min(shown$z) & shown$legend$values <= max(shown$z)))
  # a transformed predictor is not drawable: a message, nothing drawn
  expect_message(res <- plot(mk_svm(y ~ a + exp(b), data = df)), "two numeric predictors")
  expect_null(res)
})
