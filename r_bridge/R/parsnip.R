#' A parsnip engine for svm_rbf: "missingkernels"
#'
#' When the \pkg{parsnip} package is installed, loading this package
#' registers the engine \code{"missingkernels"} for parsnip's
#' \code{svm_rbf()} model, in both modes, so tidymodels workflows fit
#' \code{\link{mk_svm}} on data with missing predictors:
#'
#' \preformatted{
#' library(parsnip)
#' spec <- svm_rbf(cost = 2, rbf_sigma = 0.2) |>
#'   set_engine("missingkernels") |>
#'   set_mode("classification")
#' fit <- fit(spec, diabetes ~ ., data = pima)
#' predict(fit, pima, type = "prob")
#' }
#'
#' parsnip's arguments map to \code{mk_svm}'s: \code{cost} is \code{C},
#' \code{rbf_sigma} is \code{gamma} (the same parameterisation,
#' \eqn{k(x, y) = \exp(-\sigma \|x - y\|^2)}{k(x, y) = exp(-sigma ||x -
#' y||^2)}, as kernlab's engine) and \code{margin} is \code{epsilon}
#' (regression). Other arguments of \code{mk_svm} go through
#' \code{set_engine("missingkernels", kernel = ..., density = ...)}; without
#' \code{random_state} there, each fit draws its seed from R's generator,
#' so \code{set.seed()} before \code{fit()} reproduces it. The
#' predictors reach \code{mk_svm} as a data frame, factors unchanged
#' (nominal columns, not dummy coded). Classification fits are made with
#' \code{probability = TRUE}, so \code{type = "prob"} works.
#'
#' The registration happens when this package is loaded if parsnip is
#' loaded already, else when parsnip is loaded later. parsnip is not a
#' dependency: DESCRIPTION lists it under Enhances (it is not packaged by
#' Debian, where this package is tested; the registration is tested there
#' against a stand-in with parsnip's registration functions). In
#' your recipes, do not impute: the point of the engine is that it takes
#' the rows with missing values as they are.
#'
#' @name missingkernels-parsnip
#' @keywords internal
NULL

# parsnip's arguments of svm_rbf and mk_svm's names for them.
.mk_parsnip_args <- data.frame(
  parsnip = c("cost", "rbf_sigma", "margin"),
  original = c("C", "gamma", "epsilon"),
  dials = c("cost", "rbf_sigma", "svm_margin"),
  stringsAsFactors = FALSE
)

# Registers the engine with `parsnip`: parsnip's namespace, or (in the tests)
# a stand-in with the same functions. Returns TRUE when it registered, FALSE
# when the engine was there already.
.mk_register_parsnip <- function(parsnip = asNamespace("parsnip")) {
  get_fun <- function(name) get(name, envir = as.environment(parsnip))
  known <- tryCatch(
    {
      env <- get_fun("get_model_env")()
      engines <- get0("svm_rbf", envir = env, inherits = FALSE)
      !is.null(engines) && "missingkernels" %in% engines$engine
    },
    error = function(e) FALSE
  )
  if (known) {
    return(FALSE)
  }
  model <- "svm_rbf"
  eng <- "missingkernels"
  for (mode in c("classification", "regression")) {
    get_fun("set_model_engine")(model, mode = mode, eng = eng)
  }
  get_fun("set_dependency")(model, eng = eng, pkg = "missingkernels")
  for (i in seq_len(nrow(.mk_parsnip_args))) {
    a <- .mk_parsnip_args[i, ]
    get_fun("set_model_arg")(
      model = model, eng = eng, parsnip = a$parsnip, original = a$original,
      func = list(pkg = "dials", fun = a$dials), has_submodel = FALSE
    )
  }
  for (mode in c("classification", "regression")) {
    get_fun("set_fit")(
      model = model, eng = eng, mode = mode,
      value = list(
        interface = "data.frame",
        protect = c("x", "y"),
        func = c(pkg = "missingkernels", fun = "mk_svm"),
        defaults = if (mode == "classification") list(probability = TRUE) else list()
      )
    )
    get_fun("set_encoding")(
      model = model, eng = eng, mode = mode,
      options = list(
        predictor_indicators = "none", compute_intercept = FALSE,
        remove_intercept = FALSE, allow_sparse_x = FALSE
      )
    )
  }
  predict_value <- function(type, post = NULL) {
    list(
      pre = NULL, post = post, func = c(fun = "predict"),
      args = list(object = quote(object$fit), newdata = quote(new_data), type = type)
    )
  }
  get_fun("set_pred")(
    model = model, eng = eng, mode = "classification", type = "class",
    value = predict_value("response")
  )
  get_fun("set_pred")(
    model = model, eng = eng, mode = "classification", type = "prob",
    value = predict_value("prob", post = function(result, object) {
      as.data.frame(result, stringsAsFactors = FALSE)
    })
  )
  get_fun("set_pred")(
    model = model, eng = eng, mode = "regression", type = "numeric",
    value = predict_value("response", post = function(result, object) unname(result))
  )
  TRUE
}

# From .onLoad: register now if parsnip is loaded, else when it loads. A
# failure (e.g. a parsnip whose registration functions changed) is kept in
# .mk_state$parsnip_error rather than breaking the loading of this package.
.mk_parsnip_on_load <- function() {
  register <- function(...) {
    tryCatch(
      .mk_register_parsnip(),
      error = function(e) {
        .mk_state$parsnip_error <- conditionMessage(e)
        FALSE
      }
    )
  }
  if (isNamespaceLoaded("parsnip")) {
    register()
  } else {
    setHook(packageEvent("parsnip", "onLoad"), register)
  }
  invisible()
}
