# Issue 34: mk_svm as a caret model: train(method = mk_caret_model(),
# preProcess = NULL, na.action = na.pass) keeps the rows with missing
# predictors.

test_that("the custom model list has what caret asks for", {
  m <- mk_caret_model()
  expect_true(all(c("label", "library", "type", "parameters", "grid", "fit", "predict",
    "prob", "sort", "levels", "loop") %in% names(m)))
  expect_identical(m$parameters$parameter, c("C", "gamma"))
  g <- m$grid(matrix(0, 5, 4), factor(1:5), len = 3)
  expect_identical(g$C, c(0.25, 0.5, 1)) # caret's svmRadial grid of C
  expect_identical(g$gamma, rep(0.25, 3)) # "scale" on standardised columns
  expect_error(mk_caret_model(C = 2), "set by caret")
  expect_error(mk_caret_model(cost = 2), "`C` here")
})

test_that("caret::train on PimaIndiansDiabetes2 with na.pass completes and predicts every row", {
  if (!nzchar(Sys.getenv("TZ"))) { # caret's dependencies ask timedatectl otherwise
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"), add = TRUE)
  }
  skip_if_no_python()
  skip_if_not_installed("caret")
  skip_if_not_installed("mlbench")
  data("PimaIndiansDiabetes2", package = "mlbench", envir = environment())
  set.seed(7)
  pima <- PimaIndiansDiabetes2[sample(nrow(PimaIndiansDiabetes2), 160), ]
  expect_gt(sum(!complete.cases(pima)), 50) # insulin, triceps: many NA
  ctrl <- caret::trainControl(method = "cv", number = 2, classProbs = TRUE)
  fit <- caret::train(diabetes ~ ., data = pima, method = mk_caret_model(),
    preProcess = NULL, na.action = na.pass, tuneLength = 2, trControl = ctrl
  )
  expect_s3_class(fit, "train")
  expect_identical(nrow(fit$results), 2L)
  expect_false(anyNA(fit$results$Accuracy)) # no resample failed
  expect_s3_class(fit$finalModel, "mk_svm")
  expect_identical(nobs(fit$finalModel), 160L)
  pred <- predict(fit, newdata = pima, na.action = na.pass)
  expect_length(pred, 160L)
  expect_false(anyNA(pred))
  prob <- predict(fit, newdata = pima, type = "prob", na.action = na.pass)
  expect_identical(names(prob), c("neg", "pos"))
  expect_equal(rowSums(prob), rep(1, 160), tolerance = 1e-12, ignore_attr = TRUE)
  # the x/y interface keeps the data frame (and its factors) as it is
  fit_xy <- caret::train(pima[names(pima) != "diabetes"], pima$diabetes,
    method = mk_caret_model(), preProcess = NULL,
    tuneGrid = data.frame(C = 1, gamma = 0.125),
    trControl = caret::trainControl(method = "none")
  )
  expect_identical(fit_xy$finalModel$C, 1)
  expect_length(predict(fit_xy, newdata = pima[1:7, names(pima) != "diabetes"]), 7L)
})

test_that("set.seed() before caret::train reproduces a fit whose density draws (issue 48)", {
  if (!nzchar(Sys.getenv("TZ"))) {
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"), add = TRUE)
  }
  skip_if_no_python()
  skip_if_not_installed("caret")
  set.seed(3)
  x <- data.frame(a = rnorm(40), b = rnorm(40))
  y <- factor(ifelse(x$a + x$b > 0, "yes", "no"))
  x$a[sample(40, 12)] <- NA
  model <- mk_caret_model(density = "iterative", density_params = list(n_draws = 3, max_iter = 2))
  train_with <- function(seed) {
    set.seed(seed)
    fit <- caret::train(x, y, method = model, preProcess = NULL,
      tuneGrid = data.frame(C = 1, gamma = 0.5),
      trControl = caret::trainControl(method = "none")
    )
    predict(fit$finalModel, x, type = "decision")
  }
  first <- train_with(21)
  expect_identical(train_with(21), first)
  expect_gt(max(abs(train_with(22) - first)), 1e-6)
})
