# saveRDS/readRDS and parallel workers (issue 25): the fitted Python model
# travels pickled inside the R object and is restored on first use.

persist_data <- function(n = 50, seed = 41) {
  set.seed(seed)
  df <- data.frame(a = rnorm(n), b = rnorm(n), f = factor(sample(c("u", "v", "w"), n, TRUE)))
  df$y <- factor(ifelse(df$a - df$b + 0.3 * rnorm(n) > 0, "yes", "no"))
  df$a[c(2, 8, 15)] <- NA
  df$f[c(4, 30)] <- NA
  df
}

test_that("a model read back with readRDS predicts identically, restored on first use", {
  skip_if_no_python()
  df <- persist_data()
  fit <- mk_svm(y ~ a + b + f, data = df, probability = TRUE, calibration_folds = 3)
  expect_type(fit$python_pickle, "raw")
  expect_named(attr(fit$python_pickle, "versions"), c("missingkernels", "scikit_learn"))
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(fit, path)
  back <- readRDS(path)
  # nothing live yet: the Python objects did not survive serialisation
  env <- back[["python"]]
  expect_true(reticulate::py_is_null_xptr(env$model))
  expect_identical(predict(back, df), predict(fit, df))
  # restored once, then reused
  restored <- env$model
  expect_false(reticulate::py_is_null_xptr(restored))
  expect_identical(predict(back, df, type = "decision"), predict(fit, df, type = "decision"))
  expect_identical(predict(back, df, type = "prob"), predict(fit, df, type = "prob"))
  expect_true(identical(env$model, restored))
  expect_identical(summary(back)$training, summary(fit)$training)
  # fit$py_model restores too
  gone <- unserialize(serialize(fit, NULL))
  expect_s3_class(gone$py_model, "python.builtin.object")
  expect_identical(
    reticulate::py_to_r(gone$py_model$get_params())$C,
    reticulate::py_to_r(fit$py_model$get_params())$C
  )
})

test_that("a model saved in one R session predicts identically in another", {
  skip_if_no_python()
  df <- persist_data(seed = 42)
  x <- as.matrix(df[c("a", "b")])
  fit <- mk_svm(x, df$y, C = 3)
  dir <- tempfile("mk-persist")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  model_path <- file.path(dir, "model.rds")
  x_path <- file.path(dir, "x.rds")
  out_path <- file.path(dir, "out.rds")
  saveRDS(fit, model_path)
  saveRDS(x, x_path)
  res <- run_rscript(sprintf(
    paste(
      "library(missingkernels)",
      "fit <- readRDS('%s')",
      "saveRDS(list(pred = predict(fit, readRDS('%s')), dec = predict(fit, readRDS('%s'), type = 'decision')), '%s')",
      sep = "; "
    ),
    model_path, x_path, x_path, out_path
  ), env = paste0("RETICULATE_PYTHON=", reticulate::py_config()$python))
  expect_identical(res$status, 0L, info = res$output)
  out <- readRDS(out_path)
  expect_identical(out$pred, predict(fit, x))
  expect_identical(out$dec, predict(fit, x, type = "decision"))
})

test_that("parallel workers predict with the model sent to them", {
  skip_if_no_python()
  skip_if_not_installed("parallel")
  df <- persist_data(seed = 43)
  fit <- mk_svm(y ~ a + b + f, data = df)
  cl <- parallel::makePSOCKcluster(1L)
  on.exit(parallel::stopCluster(cl))
  parallel::clusterCall(cl, function(libs, python) {
    .libPaths(libs)
    Sys.setenv(RETICULATE_PYTHON = python)
    NULL
  }, .libPaths(), reticulate::py_config()$python)
  chunks <- split(df, rep(1:2, length.out = nrow(df)))
  preds <- parallel::parLapply(cl, chunks, function(chunk, model) {
    as.character(missingkernels:::predict.mk_svm(model, chunk))
  }, model = fit)
  expect_identical(preds[[1]], as.character(predict(fit, chunks[[1]])))
  expect_identical(preds[[2]], as.character(predict(fit, chunks[[2]])))
})

test_that("a model that cannot be pickled still fits, and says so when gone", {
  skip_if_no_python()
  df <- persist_data(seed = 44)
  fit <- mk_svm(y ~ a + b, data = df)
  broken <- structure(list(), reason = "a density holding an R session")
  fit$python_pickle <- broken
  gone <- unserialize(serialize(fit, NULL))
  expect_error(predict(gone, df), "pickling failed: a density holding an R session")
})
