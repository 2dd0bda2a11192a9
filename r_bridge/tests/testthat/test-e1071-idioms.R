# Issue 34: what users of e1071 and kernlab write: predict(probability = TRUE),
# type = "class" / "probabilities", kernel = "radial"; Python's advice in
# errors rewritten for R.

two_class <- function(n = 70, seed = 41) {
  set.seed(seed)
  x <- cbind(a = rnorm(n), b = rnorm(n), c = rnorm(n))
  y <- factor(ifelse(x[, 1] + x[, 2]^2 - 1 + 0.3 * rnorm(n) > 0, "yes", "no"))
  list(x = x, y = y)
}

test_that("predict(probability = TRUE) returns classes with e1071's probabilities attribute", {
  skip_if_no_python()
  d <- two_class()
  fit <- mk_svm(d$x, d$y, probability = TRUE, calibration_folds = 3)
  p <- predict(fit, d$x, probability = TRUE)
  expect_s3_class(p, "factor")
  expect_identical(as.vector(p), as.vector(predict(fit, d$x)))
  expect_identical(attr(p, "probabilities"), predict(fit, d$x, type = "prob"))
  dv <- predict(fit, d$x, decision.values = TRUE)
  expect_identical(attr(dv, "decision.values"), predict(fit, d$x, type = "decision"))
  # the training rows when newdata is omitted
  expect_identical(dim(attr(predict(fit, probability = TRUE), "probabilities")), c(70L, 2L))
  # kernlab's and parsnip's spellings
  expect_identical(predict(fit, d$x, type = "class"), predict(fit, d$x))
  expect_identical(predict(fit, d$x, type = "probabilities"), predict(fit, d$x, type = "prob"))
  expect_error(predict(fit, d$x, type = "votes"), "\"class\"")
  # without a calibrated model, probability = TRUE is an error, not ignored
  plain <- mk_svm(d$x, d$y)
  expect_error(predict(plain, d$x, probability = TRUE), "probability = TRUE")
  expect_error(predict(mk_svm(d$x, rnorm(70)), d$x, probability = TRUE), "classification")
  # a misspelt argument is not dropped silently
  expect_warning(predict(plain, d$x, probabilty = TRUE), "ignores the argument\\(s\\) `probabilty`")
})

test_that("kernel = \"radial\" is genRBF, with a note once; it equals e1071's radial SVM on complete rows", {
  skip_if_no_python()
  d <- two_class()
  notes <- missingkernels:::.mk_state$kernel_notes
  assign("kernel_notes", NULL, envir = missingkernels:::.mk_state)
  on.exit(assign("kernel_notes", notes, envir = missingkernels:::.mk_state))
  expect_message(fit <- mk_svm(d$x, d$y, kernel = "radial", gamma = 0.5, tol = 1e-8),
    class = "missingkernels_kernel_note"
  )
  expect_message(mk_svm(d$x, d$y, kernel = "radial"), NA) # once per session
  expect_identical(fit$kernel, "genrbf")
  direct <- mk_svm(d$x, d$y, kernel = "genrbf", gamma = 0.5, tol = 1e-8)
  expect_identical(predict(fit, d$x, type = "decision"), predict(direct, d$x, type = "decision"))
  skip_if_not_installed("e1071")
  ref <- e1071::svm(d$x, d$y, kernel = "radial", gamma = 0.5, cost = 1, tolerance = 1e-8)
  new <- d$x + 0.25
  expect_identical(as.character(predict(fit, new)), as.character(predict(ref, new)))
  ref_dec <- attr(predict(ref, new, decision.values = TRUE), "decision.values")
  # e1071's value is for "<first class>/<second class>" of its own order
  sign <- if (colnames(ref_dec) == paste(fit$classes, collapse = "/")) -1 else 1
  expect_equal(unname(predict(fit, new, type = "decision")), sign * unname(drop(ref_dec)),
    tolerance = 1e-5
  )
  expect_error(mk_svm(d$x, d$y, kernel = "sigmoid"), "no expected version")
})

test_that("Python's advice in errors and warnings is rewritten for R", {
  advice <- missingkernels:::.mk_r_advice
  msg <- paste0(
    "MissingKernelSVC: the kernel 'genrbf' takes numeric columns, but column 'f' ",
    "is nominal. Use kernel='auto' (the default: 'mixed_rbf' for tables with nominal ",
    "columns), or one-hot encode them (e.g. sklearn.preprocessing.OneHotEncoder in a ",
    "Pipeline), or declare them numeric with nominal_features=None."
  )
  out <- advice(msg)
  expect_no_match(out, "OneHotEncoder|Pipeline|nominal_features|=None")
  expect_match(out, "kernel = \"auto\"", fixed = TRUE)
  expect_match(out, "model.matrix", fixed = TRUE)
  expect_match(advice("Set handle_unknown='missing' to treat unseen"), "handle_unknown = \"missing\" in mk_svm()", fixed = TRUE)
  expect_identical(advice("leave density=None."), "leave density = NULL.")
  skip_if_no_python()
  d <- two_class()
  df <- data.frame(d$x, f = factor(sample(c("u", "v"), 70, TRUE)))
  err <- tryCatch(mk_svm(df, d$y, kernel = "genrbf"), error = conditionMessage)
  expect_match(err, "nominal")
  expect_no_match(err, "OneHotEncoder|Pipeline|nominal_features=None")
  expect_match(err, "model.matrix", fixed = TRUE)
})

test_that("predict() takes tidymodels' new_data as newdata, never the training rows in its place", {
  skip_if_no_python()
  d <- two_class()
  fit <- mk_svm(d$x, d$y)
  nd <- d$x[1:7, ]
  # issue 48: new_data was ignored with a warning and the 70 fitted values came back
  expect_warning(p <- predict(fit, new_data = nd), NA)
  expect_length(p, 7L)
  expect_identical(p, predict(fit, nd))
  expect_identical(predict(fit, new_data = nd, type = "decision"), predict(fit, nd, type = "decision"))
  expect_error(predict(fit, nd, new_data = nd), "not both")
  # other unknown arguments still warn
  expect_warning(predict(fit, nd, newx = nd), "ignores the argument\\(s\\) `newx`")
})
