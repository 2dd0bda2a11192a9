# Class probabilities (issue 25): predict(type = "prob") from scikit-learn's
# CalibratedClassifierCV around the Python estimator.

prob_data <- function(n = 60, seed = 21, k = 2) {
  set.seed(seed)
  x <- matrix(rnorm(n * 3), n, 3, dimnames = list(NULL, c("a", "b", "c")))
  score <- x[, 1] - x[, 2] + 0.4 * rnorm(n)
  x[matrix(runif(n * 3) < 0.15, n)] <- NA
  y <- if (k == 2) {
    factor(ifelse(score > 0, "yes", "no"), levels = c("yes", "no"))
  } else {
    cut(score, c(-Inf, -0.6, 0.6, Inf), labels = c("low", "mid", "high"))
  }
  list(x = x, y = y)
}

python_probabilities <- function(x, y, method, folds = 5L, ...) {
  cal <- reticulate::import("sklearn.calibration", convert = TRUE)
  ref <- cal$CalibratedClassifierCV(py_mk()$MissingKernelSVC(standardize = FALSE, ...),
    method = method, cv = folds, ensemble = FALSE
  )
  # R's class codes (level order), as the package sends them
  ref$fit(py_array(scale(x)), py_np()$array(as.integer(y) - 1L))
  ref$predict_proba(py_array(scale(x)))
}

test_that("two classes: rows sum to 1, columns named by level, as Python's calibration", {
  skip_if_no_python()
  d <- prob_data()
  fit <- mk_svm(d$x, d$y, C = 2, gamma = 0.3, probability = TRUE)
  p <- predict(fit, d$x, type = "prob")
  expect_true(is.matrix(p))
  expect_identical(dim(p), c(60L, 2L))
  expect_identical(colnames(p), c("yes", "no"))
  expect_equal(unname(rowSums(p)), rep(1, 60), tolerance = 1e-12)
  expect_true(all(p >= 0 & p <= 1))
  ref <- python_probabilities(d$x, d$y, "sigmoid", C = 2, gamma = 0.3)
  expect_equal(unname(p), ref, tolerance = 1e-10)
  # rows with missing values get probabilities too, and mostly agree with
  # the predicted class
  new <- rbind(c(NA, NA, NA), c(2, -2, NA), c(-2, 2, 0))
  colnames(new) <- colnames(d$x)
  pn <- predict(fit, new, type = "prob")
  expect_false(anyNA(pn))
  expect_identical(unname(colnames(pn)[max.col(pn)][2:3]), c("yes", "no"))
  expect_gt(mean(colnames(p)[max.col(p)] == as.character(predict(fit, d$x))), 0.8)
})

test_that("isotonic calibration and several classes", {
  skip_if_no_python()
  d <- prob_data(n = 90, k = 3)
  fit <- mk_svm(d$x, d$y, probability = TRUE, calibration = "isotonic", calibration_folds = 3)
  p <- predict(fit, d$x, type = "prob")
  expect_identical(colnames(p), c("low", "mid", "high"))
  expect_equal(unname(rowSums(p)), rep(1, 90), tolerance = 1e-12)
  ref <- python_probabilities(d$x, d$y, "isotonic", folds = 3L)
  expect_equal(unname(p), ref, tolerance = 1e-10)
  expect_identical(fit$calibration, list(method = "isotonic", folds = 3L))
  # a data frame fit through the formula interface
  df <- as.data.frame(d$x)
  df$y <- d$y
  ffit <- mk_svm(y ~ ., data = df, probability = TRUE, calibration_folds = 3)
  pf <- predict(ffit, df[1:5, ], type = "prob")
  expect_identical(dim(pf), c(5L, 3L))
  expect_identical(rownames(pf), rownames(df)[1:5])
})

test_that("probabilities need probability = TRUE and classification; clear errors", {
  skip_if_no_python()
  d <- prob_data()
  fit <- mk_svm(d$x, d$y)
  expect_error(predict(fit, d$x, type = "prob"), "probability = TRUE")
  fit_p <- update(fit, probability = TRUE)
  expect_identical(dim(predict(fit_p, d$x, type = "prob")), c(60L, 2L))
  reg <- mk_svm(d$x, rnorm(60))
  expect_error(predict(reg, d$x, type = "prob"), "for classification")
  expect_error(mk_svm(d$x, rnorm(60), probability = TRUE), "for classification")
  expect_error(mk_svm(d$x, d$y, probability = TRUE, calibration = "platt"), "sigmoid")
  expect_error(mk_svm(d$x, d$y, probability = TRUE, calibration_folds = 1), "at least 2")
  few <- factor(c(rep("a", 57), rep("b", 3)))
  expect_error(mk_svm(d$x, few, probability = TRUE), "class 'b' has only 3 training row")
})
