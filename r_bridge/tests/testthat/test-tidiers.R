# Issue 34: broom's tidy/glance/augment as generics methods; coef, vcov,
# logLik.

aq_fit <- function(...) mk_svm(Ozone ~ Solar.R + Wind + Temp, data = airquality, ...)

test_that("augment: one row per input row, rows with missing predictors included", {
  skip_if_no_python()
  fit <- aq_fit()
  expect_identical(nobs(fit), sum(!is.na(airquality$Ozone)))
  a <- augment(fit, data = airquality)
  expect_s3_class(a, "data.frame")
  expect_identical(nrow(a), nrow(airquality)) # 153, Ozone-less rows too
  expect_false(anyNA(a$.fitted)) # Solar.R is missing in 7 rows: predicted
  expect_equal(a$.fitted, unname(predict(fit, airquality)))
  expect_identical(is.na(a$.resid), is.na(airquality$Ozone))
  expect_equal(a$.resid, airquality$Ozone - a$.fitted)
  expect_identical(names(a)[seq_len(ncol(airquality))], names(airquality))
  # newdata: the same, without a response
  nd <- airquality[1:10, c("Solar.R", "Wind", "Temp")]
  an <- augment(fit, newdata = nd)
  expect_identical(nrow(an), 10L)
  expect_true(all(is.na(an$.resid)))
  # the training rows (model frame), with broom's .rownames for the gaps
  at <- augment(fit)
  expect_identical(nrow(at), nobs(fit))
  expect_identical(at$.rownames, rownames(airquality)[!is.na(airquality$Ozone)])
  expect_equal(at$.fitted, unname(fitted(fit)))
  expect_error(augment(fit, data = airquality, newdata = nd), "not both")
})

test_that("augment of a classifier: .fitted and .pred_<level> probabilities", {
  skip_if_no_python()
  aq <- airquality
  aq$hot <- factor(ifelse(aq$Temp > 80, "hot", "mild"))
  fit <- mk_svm(hot ~ Ozone + Solar.R + Wind, data = aq, probability = TRUE, calibration_folds = 3)
  a <- augment(fit, data = aq)
  expect_identical(nrow(a), nrow(aq))
  expect_s3_class(a$.fitted, "factor")
  expect_true(all(c(".pred_hot", ".pred_mild") %in% names(a)))
  expect_equal(a$.pred_hot + a$.pred_mild, rep(1, nrow(aq)), tolerance = 1e-12)
  expect_equal(unname(as.matrix(a[c(".pred_hot", ".pred_mild")])),
    unname(predict(fit, aq, type = "prob")[, c("hot", "mild")])
  )
  expect_false(".resid" %in% names(a))
  # a matrix fit: its columns and the response as y
  x <- as.matrix(aq[c("Wind", "Temp")])
  m <- augment(mk_svm(x, aq$hot))
  expect_identical(names(m), c("Wind", "Temp", "y", ".fitted"))
})

test_that("glance: one row of model-level numbers, checked against their definitions", {
  skip_if_no_python()
  fit <- aq_fit(C = 2)
  g <- glance(fit)
  expect_identical(nrow(g), 1L)
  expect_identical(g$nobs, nobs(fit))
  expect_identical(g$n_sv, fit$n_sv)
  expect_identical(g$kernel, "genrbf")
  expect_identical(g$C, 2)
  y <- airquality$Ozone[!is.na(airquality$Ozone)]
  res <- y - fitted(fit)
  expect_equal(g$r.squared, 1 - sum(res^2) / sum((y - mean(y))^2))
  expect_equal(g$rmse, sqrt(mean(res^2)))
  expect_equal(g$training_error, mean(res^2))
  kept <- airquality[!is.na(airquality$Ozone), c("Solar.R", "Wind", "Temp")]
  expect_identical(g$n_incomplete, sum(!complete.cases(kept)))
  expect_equal(g$missing_rate, mean(is.na(kept)))
  cls <- mk_svm(factor(Temp > 80) ~ Ozone + Wind, data = airquality)
  gc <- glance(cls)
  expect_equal(gc$accuracy, 1 - cls$training_error)
})

test_that("tidy: the support vectors with their dual coefficients; coef() the same", {
  skip_if_no_python()
  aq <- airquality
  aq$hot <- factor(ifelse(aq$Temp > 80, "hot", "mild"))
  C <- 3
  fit <- mk_svm(hot ~ Ozone + Solar.R + Wind, data = aq, C = C)
  td <- tidy(fit)
  expect_identical(nrow(td), fit$n_sv)
  expect_identical(td$row, fit$index)
  expect_identical(as.character(td$response), as.character(fit$y[fit$index]))
  # the dual constraints of a binary SVM: 0 < |y_i alpha_i| <= C, sum = 0,
  # and the sign is the class
  expect_true(all(abs(td$coefficient) > 0 & abs(td$coefficient) <= C + 1e-8))
  expect_equal(sum(td$coefficient), 0, tolerance = 1e-8)
  expect_identical(length(unique(sign(td$coefficient)[td$response == "hot"])), 1L)
  cf <- coef(fit)
  expect_equal(as.vector(cf), td$coefficient)
  expect_identical(names(cf), td$.rownames)
  expect_length(attr(cf, "intercept"), 1L)
  par <- tidy(fit, component = "parameters")
  expect_identical(par$term, c("C", "gamma", "intercept"))
  expect_equal(par$estimate[1:2], c(C, fit$gamma_value))
  # three classes: one coefficient column per pair of classes
  aq$temp3 <- cut(aq$Temp, c(-Inf, 72, 84, Inf), labels = c("cool", "warm", "hot"))
  t3 <- tidy(mk_svm(temp3 ~ Ozone + Wind, data = aq))
  expect_true(all(c("coefficient_1", "coefficient_2") %in% names(t3)))
})

test_that("vcov and logLik say why an SVM has none; coef is never silently NULL", {
  skip_if_no_python()
  fit <- aq_fit()
  expect_error(vcov(fit), class = "missingkernels_not_a_likelihood_model")
  expect_error(logLik(fit), "not a likelihood")
  expect_error(AIC(fit), "not a likelihood")
  expect_false(is.null(coef(fit)))
})
