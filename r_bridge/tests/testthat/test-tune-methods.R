# Issue 34: mk_tune's result has a class, print, plot, autoplot and tidy.

tuned_aq <- function() {
  mk_tune(Ozone ~ Solar.R + Wind + Temp, data = airquality,
    ranges = list(C = c(0.5, 4, 32), gamma = c(0.1, 0.5)), folds = 3, seed = 2
  )
}

test_that("the result is an mk_tune and an mk_svm; tidy gives the search", {
  skip_if_no_python()
  tuned <- tuned_aq()
  expect_s3_class(tuned, c("mk_tune", "mk_svm"), exact = TRUE)
  td <- tidy(tuned)
  expect_identical(nrow(td), 6L)
  expect_true(all(c("C", "gamma", "error", "dispersion", "failed", "best") %in% names(td)))
  expect_identical(sum(td$best), 1L)
  expect_equal(td$error[td$best], min(td$error))
  expect_identical(td$C[td$best], tuned$C)
  expect_equal(glance(tuned)$cv_error, min(td$error))
  expect_identical(nrow(tidy(tuned, component = "support_vectors")), tuned$n_sv)
  out <- paste(capture.output(print(tuned)), collapse = "\n")
  expect_match(out, "Parameter tuning of mk_svm by 3-fold cross-validation")
  expect_match(out, "Best parameters: C = ")
  expect_match(out, "Kernel: genrbf") # then the model
  # update() refits a plain mk_svm
  expect_s3_class(update(tuned, C = 1), "mk_svm", exact = TRUE)
})

test_that("plot draws the error curves; autoplot the same with ggplot2", {
  skip_if_no_python()
  tuned <- tuned_aq()
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(tuned), tuned)
  d <- missingkernels:::.mk_tune_plot_data(tuned)
  expect_identical(d$x, "C")
  expect_identical(d$group, "gamma")
  expect_true(d$log) # 0.5 .. 32
  regions <- plot(tuned, what = "regions", grid = 5) # the model's regions (Temp integrated out)
  expect_identical(regions$variables, c("Solar.R", "Wind"))
  expect_identical(dim(regions$z), c(5L, 5L))
  skip_if_not_installed("ggplot2")
  p <- ggplot2::autoplot(tuned)
  expect_s3_class(p, "ggplot")
  built <- ggplot2::ggplot_build(p)
  expect_identical(nrow(built$data[[2]]), 6L) # one point per combination
})
