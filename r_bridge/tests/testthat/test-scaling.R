# Issue 34: scale = TRUE with e1071's meaning, done in R: numeric predictors
# standardised by the means and sds of their observed training entries, a
# numeric response too (regression), predictions transformed back.

complete_regression <- function(n = 80, seed = 31) {
  set.seed(seed)
  x <- cbind(a = rnorm(n, 10, 3), b = runif(n, 0, 100), c = rexp(n))
  y <- 50 + 4 * x[, "a"] - 0.2 * x[, "b"] + 10 * sin(x[, "c"]) + rnorm(n, sd = 2)
  list(x = x, y = y)
}

test_that("the stored centres and scales are those of the observed training entries", {
  skip_if_no_python()
  d <- complete_regression()
  x <- d$x
  x[c(2, 5, 9), "a"] <- NA
  x[c(5, 40), "c"] <- NA
  fit <- mk_svm(x, d$y)
  expect_equal(fit$scaling$center, colMeans(x, na.rm = TRUE))
  expect_equal(fit$scaling$scale, apply(x, 2, sd, na.rm = TRUE))
  expect_equal(fit$y_scaling, list(center = mean(d$y), scale = sd(d$y)))
  # what Python received: the standardised matrix (the model keeps the rows
  # that are support vectors) and response
  sv <- as.integer(reticulate::py_to_r(fit$py_model$support_)) + 1L
  expect_equal(
    reticulate::py_to_r(fit$py_model$support_vectors_),
    unname(scale(x))[sv, , drop = FALSE],
    ignore_attr = TRUE
  )
  # classification: no response scaling
  cls <- mk_svm(x, factor(d$y > median(d$y)))
  expect_null(cls$y_scaling)
  expect_null(mk_svm(x, d$y, scale = FALSE)$y_scaling)
})

test_that("regression on complete rows matches e1071::svm (radial, scale = TRUE)", {
  skip_if_no_python()
  skip_if_not_installed("e1071")
  d <- complete_regression()
  # on complete rows genRBF is the RBF kernel; both solve with libsvm
  ours <- mk_svm(d$x, d$y, kernel = "genrbf", gamma = 0.3, C = 4, epsilon = 0.1, tol = 1e-8)
  ref <- e1071::svm(d$x, d$y, kernel = "radial", gamma = 0.3, cost = 4, epsilon = 0.1,
    tolerance = 1e-8, scale = TRUE)
  expect_equal(unname(ours$scaling$center), unname(ref$x.scale$`scaled:center`))
  expect_equal(unname(ours$y_scaling$center), unname(ref$y.scale$`scaled:center`))
  expect_equal(unname(ours$y_scaling$scale), unname(ref$y.scale$`scaled:scale`))
  new <- d$x[1:20, ] + 0.5
  expect_equal(unname(predict(ours, new)), unname(predict(ref, new)), tolerance = 1e-5)
  expect_equal(unname(fitted(ours)), unname(fitted(ref)), tolerance = 1e-5)
  expect_setequal(ours$index, ref$index)
  # the dual coefficients, in the units of the response
  td <- tidy(ours)
  ref_coef <- drop(ref$coefs) * ref$y.scale$`scaled:scale`
  expect_equal(td$coefficient[order(td$row)], ref_coef[order(ref$index)], tolerance = 1e-5)
  expect_equal(attr(coef(ours), "intercept"),
    -ref$rho * ref$y.scale$`scaled:scale` + ref$y.scale$`scaled:center`,
    tolerance = 1e-5
  )
})

test_that("with scale = FALSE nothing is scaled (Python's SVR on the raw values)", {
  skip_if_no_python()
  d <- complete_regression(n = 40)
  fit <- mk_svm(d$x, d$y, scale = FALSE, gamma = 0.01, C = 50)
  ref <- py_mk()$MissingKernelSVR(standardize = FALSE, gamma = 0.01, C = 50)
  ref$fit(py_array(d$x), d$y)
  expect_equal(unname(fitted(fit)), as.vector(ref$predict(py_array(d$x))), tolerance = 1e-10)
})

test_that("a Python-side scaling switch is turned off (R scales once)", {
  skip_if_no_python()
  fake <- reticulate::py_run_string(paste(
    "class WithScale:",
    "    def get_params(self, deep=True):",
    "        return {'C': 1.0, 'standardize': True}",
    "class WithoutScale:",
    "    def get_params(self, deep=True):",
    "        return {'C': 1.0}",
    sep = "\n"
  ), local = TRUE, convert = FALSE)
  off <- missingkernels:::.mk_python_scaling_off
  expect_identical(off(fake$WithScale), missingkernels:::.mk_python_no_scaling)
  expect_length(off(fake$WithoutScale), 0L)
  # the real estimators: whatever they have, no parameter is left that scales
  real <- off(reticulate::import("missingkernels", convert = FALSE)$MissingKernelSVC)
  expect_true(all(vapply(real, isFALSE, TRUE)))
})
