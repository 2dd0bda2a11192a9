# na.action on the response, weights as sample_weight, unknown arguments
# (issue 25).

arg_data <- function(n = 50, seed = 31) {
  set.seed(seed)
  df <- data.frame(a = rnorm(n), b = rnorm(n))
  df$y <- factor(ifelse(df$a + df$b + 0.3 * rnorm(n) > 0, "yes", "no"))
  df$v <- df$a - df$b + 0.2 * rnorm(n)
  df$a[c(3, 7, 12)] <- NA # missing predictors: kept
  df
}

test_that("na.omit drops rows with a missing response only; predictors' NA kept", {
  skip_if_no_python()
  df <- arg_data()
  df$y[c(5, 20)] <- NA
  fit <- mk_svm(y ~ a + b, data = df, gamma = 0.5, na.action = na.omit)
  expect_identical(nobs(fit), 48L)
  expect_identical(fit$n_incomplete_rows, 3L) # rows 3, 7, 12 kept
  expect_s3_class(fit$na.action, "omit")
  expect_identical(unname(as.integer(fit$na.action)), c(5L, 20L))
  expect_identical(nrow(model.frame(fit)), 48L)
  # the same as training on the rows with a response
  ref <- mk_svm(y ~ a + b, data = df[-c(5, 20), ], gamma = 0.5)
  expect_equal(predict(fit, df, type = "decision"), predict(ref, df, type = "decision"))
  expect_length(fitted(fit), 48L)
  expect_output(print(fit), "2 row\\(s\\) with a missing response dropped")
  # na.omit is the default
  expect_identical(nobs(mk_svm(y ~ a + b, data = df)), 48L)
  # the matrix interface
  mfit <- mk_svm(as.matrix(df[c("a", "b")]), df$y, gamma = 0.5)
  expect_identical(nobs(mfit), 48L)
  expect_equal(unname(predict(mfit, as.matrix(df[c("a", "b")]), type = "decision")),
    unname(predict(fit, df, type = "decision")))
})

test_that("na.exclude pads fitted and residuals; na.fail refuses", {
  skip_if_no_python()
  df <- arg_data()
  df$v[c(4, 9)] <- NA
  reg <- mk_svm(v ~ a + b, data = df, na.action = na.exclude)
  expect_s3_class(reg$na.action, "exclude")
  expect_length(fitted(reg), 50L)
  expect_true(all(is.na(fitted(reg)[c(4, 9)])))
  expect_false(anyNA(fitted(reg)[-c(4, 9)]))
  r <- residuals(reg)
  expect_length(r, 50L)
  expect_equal(r[-c(4, 9)], unname(df$v[-c(4, 9)] - predict(reg, df[-c(4, 9), ])))
  expect_length(predict(reg), 50L)
  expect_error(
    mk_svm(v ~ a + b, data = df, na.action = na.fail),
    "The response has 2 missing value\\(s\\) \\(rows 4, 9\\)"
  )
  expect_error(mk_svm(v ~ a + b, data = df, na.action = "na.fail"), "refused them")
})

test_that("weights become sample_weight", {
  skip_if_no_python()
  df <- arg_data()
  set.seed(1)
  df$w <- runif(50, 0.2, 3)
  fit <- mk_svm(y ~ a + b, data = df, weights = w, gamma = 0.5, C = 2, tol = 1e-8)
  expect_identical(fit$weights, df$w)
  expect_identical(model.frame(fit)$`(weights)`, df$w)
  # the same as the Python estimator fitted with sample_weight
  x <- as.matrix(df[c("a", "b")])
  ref <- py_mk()$MissingKernelSVC(standardize = FALSE, gamma = 0.5, C = 2, tol = 1e-8)
  ref$fit(py_array(scale(x)), py_np()$array(as.integer(df$y) - 1L), sample_weight = df$w)
  expect_equal(unname(predict(fit, df, type = "decision")),
    as.vector(ref$decision_function(py_array(scale(x)))),
    tolerance = 1e-8
  )
  unweighted <- mk_svm(y ~ a + b, data = df, gamma = 0.5, C = 2, tol = 1e-8)
  expect_false(isTRUE(all.equal(
    predict(fit, df, type = "decision"), predict(unweighted, df, type = "decision")
  )))
  # matrix interface, regression, and with na.omit the weights follow the rows
  v <- df$v
  v[2] <- NA
  reg <- mk_svm(x, v, weights = df$w, gamma = 0.5)
  ref_reg <- py_mk()$MissingKernelSVR(standardize = FALSE, gamma = 0.5)
  # (scale = TRUE: the response is standardised too, predictions back-transformed)
  ref_reg$fit(py_array(scale(x[-2, ])), as.vector(scale(v[-2])), sample_weight = df$w[-2])
  expect_equal(unname(predict(reg, x[-2, ])),
    as.vector(ref_reg$predict(py_array(scale(x[-2, ])))) * sd(v[-2]) + mean(v[-2]),
    tolerance = 1e-8
  )
  # with probabilities, the calibration is weighted too
  pfit <- mk_svm(y ~ a + b, data = df, weights = w, probability = TRUE)
  expect_equal(unname(rowSums(predict(pfit, df, type = "prob"))), rep(1, 50))
  expect_error(mk_svm(x, df$y, weights = rep(1, 3)), "one value per training row \\(50\\)")
  expect_error(mk_svm(x, df$y, weights = c(-1, rep(1, 49))), "non-negative; at row 1 of the data")
  expect_error(mk_svm(x, df$y, weights = rep(0, 50)), "all zero")
})

test_that("unknown arguments are R errors naming them and the accepted ones", {
  skip_if_no_python()
  df <- arg_data()
  err <- tryCatch(mk_svm(y ~ a + b, data = df, cost = 10), error = conditionMessage)
  expect_match(err, "Unknown argument to mk_svm(): `cost`", fixed = TRUE)
  expect_match(err, "e1071's `cost` is `C` here", fixed = TRUE)
  expect_match(err, "accepts formula, data, subset, weights, na.action, kernel")
  expect_match(err, "class_weight, tol, max_iter")
  expect_error(mk_svm(y ~ a + b, data = df, cross = 5, bogus = 1), "`cross`, `bogus`")
  x <- as.matrix(df[c("a", "b")])
  expect_error(mk_svm(x, df$y, costt = 1), "Unknown argument to mk_svm\\(\\): `costt`")
  expect_error(mk_svm(x, df$v, class_weight = "balanced"), "`class_weight` is for classification")
  expect_error(mk_svm(x, df$y, n_components = 3), "is `n_kernel_features`")
  expect_error(mk_svm(y ~ a + b, data = df, 3), "must be named")
})

test_that("the R lists of Python parameters are the estimators' parameters", {
  skip_if_no_python()
  # arguments of mk_svm; nominal_features follows the classes of the columns
  # and a Python-side scaling switch, which the R side turns off (scaling.R)
  own <- c(
    "kernel", "density", "gamma", "C", "epsilon", "handle_unknown", "nominal_features",
    "density_params", "probability", "calibration", "calibration_folds",
    # Python's deprecated name of n_kernel_features: refused in R with a hint
    "n_components",
    names(missingkernels:::.mk_python_no_scaling)
  )
  svc <- names(py_mk()$MissingKernelSVC()$get_params())
  svr <- names(py_mk()$MissingKernelSVR()$get_params())
  lists <- missingkernels:::.mk_python_arguments
  expect_setequal(lists$classification, setdiff(svc, own))
  expect_setequal(lists$regression, setdiff(svr, own))
})

test_that("an unknown argument is refused before Python is started", {
  res <- run_rscript(paste(
    "library(missingkernels)",
    "r <- tryCatch(mk_svm(cbind(a = 1:4), factor(c(1, 2, 1, 2)), cost = 1), error = conditionMessage)",
    "cat(r, '\\n')",
    "cat('started:', reticulate::py_available(), '\\n')",
    sep = "; "
  ), env = "RETICULATE_PYTHON=/nonexistent/bin/python")
  expect_match(res$output, "Unknown argument to mk_svm(): `cost`", fixed = TRUE)
  expect_match(res$output, "started: FALSE")
})
