# Issue 34: the parsnip engine "missingkernels" for svm_rbf. parsnip is not
# packaged by Debian (so not installed where CI runs): the registration is
# tested against a recording stand-in for parsnip's registration functions,
# and against parsnip itself where it is installed.

recording_parsnip <- function() {
  env <- new.env()
  env$calls <- list()
  record <- function(name) {
    force(name)
    function(...) {
      env$calls[[length(env$calls) + 1L]] <- list(fun = name, args = list(...))
      invisible()
    }
  }
  for (f in c("set_model_engine", "set_dependency", "set_model_arg", "set_fit",
    "set_encoding", "set_pred")) {
    assign(f, record(f), envir = env)
  }
  model_env <- new.env()
  env$get_model_env <- function() model_env
  env
}

calls_of <- function(env, fun) Filter(function(call) call$fun == fun, env$calls)

test_that("the engine is registered with parsnip's functions, in both modes", {
  stand_in <- recording_parsnip()
  expect_true(missingkernels:::.mk_register_parsnip(stand_in))
  engines <- calls_of(stand_in, "set_model_engine")
  expect_setequal(vapply(engines, function(c) c$args$mode, ""), c("classification", "regression"))
  expect_true(all(vapply(engines, function(c) c$args$eng, "") == "missingkernels"))
  args <- calls_of(stand_in, "set_model_arg")
  mapping <- stats::setNames(
    vapply(args, function(c) c$args$original, ""), vapply(args, function(c) c$args$parsnip, "")
  )
  expect_identical(mapping[c("cost", "rbf_sigma", "margin")], c(cost = "C", rbf_sigma = "gamma", margin = "epsilon"))
  fits <- calls_of(stand_in, "set_fit")
  expect_identical(fits[[1]]$args$value$func, c(pkg = "missingkernels", fun = "mk_svm"))
  expect_identical(fits[[1]]$args$value$interface, "data.frame")
  enc <- calls_of(stand_in, "set_encoding")
  expect_identical(enc[[1]]$args$options$predictor_indicators, "none") # factors stay nominal
  preds <- calls_of(stand_in, "set_pred")
  expect_setequal(vapply(preds, function(c) c$args$type, ""), c("class", "prob", "numeric"))
  # already known to parsnip: nothing is registered twice
  model_env <- stand_in$get_model_env()
  assign("svm_rbf", data.frame(engine = "missingkernels", mode = "classification"), envir = model_env)
  expect_false(missingkernels:::.mk_register_parsnip(stand_in))
  # loading the package left a hook for when parsnip is loaded
  if (!isNamespaceLoaded("parsnip")) {
    expect_gte(length(getHook(packageEvent("parsnip", "onLoad"))), 1L)
  }
})

test_that("the registered fit and prediction calls work as parsnip makes them", {
  skip_if_no_python()
  stand_in <- recording_parsnip()
  missingkernels:::.mk_register_parsnip(stand_in)
  fit_value <- calls_of(stand_in, "set_fit")[[1]]$args$value
  set.seed(5)
  x <- data.frame(a = rnorm(50), b = rnorm(50), f = factor(sample(c("u", "v"), 50, TRUE)))
  y <- factor(ifelse(x$a + 0.3 * rnorm(50) > 0, "yes", "no"))
  x$a[1:5] <- NA
  # parsnip: func with the protected x, y, the mapped arguments and defaults
  fit_fun <- getExportedValue(fit_value$func[["pkg"]], fit_value$func[["fun"]])
  object <- list(fit = do.call(fit_fun, c(list(x = x, y = y, C = 2, gamma = 0.5), fit_value$defaults)))
  new_data <- x[1:8, ]
  for (pred in calls_of(stand_in, "set_pred")) {
    value <- pred$args$value
    if (pred$args$mode != "classification") next
    args <- lapply(value$args, eval, envir = environment())
    result <- do.call(value$func[["fun"]], args)
    if (!is.null(value$post)) result <- value$post(result, object)
    if (pred$args$type == "class") {
      expect_identical(result, predict(object$fit, new_data))
    } else {
      expect_identical(names(result), c("no", "yes"))
      expect_equal(rowSums(result), rep(1, 8), tolerance = 1e-12, ignore_attr = TRUE)
    }
  }
})

test_that("with parsnip installed, svm_rbf() fits with the engine", {
  skip_if_not_installed("parsnip") # not packaged by Debian: skipped there
  skip_if_no_python()
  spec <- parsnip::set_mode(parsnip::set_engine(parsnip::svm_rbf(cost = 2), "missingkernels"), "classification")
  aq <- airquality
  aq$hot <- factor(ifelse(aq$Temp > 80, "hot", "mild"))
  fit <- parsnip::fit(spec, hot ~ Ozone + Solar.R + Wind, data = aq)
  expect_identical(nrow(predict(fit, aq)), nrow(aq))
})
