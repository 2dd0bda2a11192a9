#' Predictions of a missing-data SVM
#'
#' Predicts every row of \code{newdata}, including rows with missing values:
#' the kernel between a new row and the training rows integrates over the
#' missing entries under the density fitted at training time (the density is
#' not refitted).
#'
#' \strong{The spellings of e1071 and kernlab.} \code{type = "class"} (e1071,
#' kernlab, parsnip) is \code{"response"}; \code{type = "probabilities"}
#' (kernlab) and \code{"probability"} are \code{"prob"};
#' \code{"decision.values"} is \code{"decision"}. As in
#' \code{e1071::predict.svm}, \code{probability = TRUE} returns the
#' predicted classes with the matrix of class probabilities as the attribute
#' \code{"probabilities"}, and \code{decision.values = TRUE} adds the
#' decision values as the attribute \code{"decision.values"}.
#'
#' @param object A model fitted by \code{\link{mk_svm}}.
#' @param newdata A data frame (formula or data-frame fit) or a matrix
#'   (matrix fit) with the predictors, \code{NA} where missing. Columns of
#'   a matrix are matched by name when both have names. Factor levels are
#'   matched to the training levels by label (their order and the set of
#'   levels may differ); a level unseen in training follows the fit's
#'   \code{handle_unknown} (see \code{\link{mk_svm}}). Omitted: the training
#'   rows. tidymodels' spelling \code{new_data} is accepted in its place.
#' @param type \code{"response"} for the predicted class (a factor with the
#'   levels of the training response, ordered when the response was an
#'   ordered factor) or value; \code{"decision"} for the decision values of
#'   the SVM: for two classes a vector, positive values favouring the second
#'   class in \code{object$classes}; for more classes a matrix of
#'   one-versus-rest scores with one column per class. For regression both
#'   types give the predicted values (in the units of the response: with
#'   \code{scale = TRUE} the SVM is fitted to the standardised response and
#'   its predictions are transformed back). \code{"prob"} for class
#'   probabilities (classification; the model must have been fitted with
#'   \code{probability = TRUE}): a matrix with one column per class, named by
#'   the levels (those present in the training response), and rows summing
#'   to 1. They come from scikit-learn's \code{CalibratedClassifierCV} around
#'   the Python estimator: a sigmoid (Platt scaling, \code{calibration =
#'   "sigmoid"}) or an isotonic regression (\code{"isotonic"}) fitted, one
#'   class against the rest, to the decision values of a cross-validation of
#'   the training rows and applied to the SVM refitted on all of them, then
#'   normalised. The most probable class can differ from \code{type =
#'   "response"} near the decision boundary. The aliases of e1071 and
#'   kernlab are accepted (see Details).
#' @param probability Logical, e1071's argument: \code{TRUE} adds the class
#'   probabilities to the predicted classes as the attribute
#'   \code{"probabilities"} (the model must have been fitted with
#'   \code{probability = TRUE}).
#' @param decision.values Logical, e1071's argument: \code{TRUE} adds the
#'   decision values as the attribute \code{"decision.values"}.
#' @param uncertainty Logical: \code{TRUE} returns, instead of predictions,
#'   a data frame saying how uncertain each prediction is because of the
#'   row's missing entries (see \code{\link{mk_uncertainty}}).
#' @param n_draws,seed With \code{uncertainty = TRUE}: completions per
#'   incomplete row, and their seed (\code{NULL}: drawn from R's generator,
#'   so \code{set.seed()} reproduces them).
#' @param ... \code{new_data} (tidymodels' name of \code{newdata}); any
#'   other argument given here is ignored with a warning.
#' @return A factor (classification, \code{type = "response"}), a numeric
#'   vector or a numeric matrix, with one element or row per row of
#'   \code{newdata}, named by its row names. \code{fitted} gives the
#'   predictions for the training rows.
#' @examples
#' if (mk_available()) {
#'   x <- cbind(a = c(0.1, 1.9, NA, 2.4, 0.3, 2.1), b = c(1, NA, 0.2, 2.2, 0.5, 1.8))
#'   y <- factor(c("low", "high", "low", "high", "low", "high"), c("low", "high"))
#'   fit <- mk_svm(x, y, C = 10)
#'   predict(fit, rbind(c(NA, NA), c(2, 2)))
#'   predict(fit, x, type = "decision")
#'   fit_p <- mk_svm(x, y, C = 10, probability = TRUE, calibration_folds = 3)
#'   predict(fit_p, rbind(c(NA, NA), c(2, 2)), type = "prob")
#'   # e1071's spelling: classes with the probabilities as an attribute
#'   attr(predict(fit_p, x, probability = TRUE), "probabilities")
#' }
#' @export
predict.mk_svm <- function(object, newdata, type = c("response", "decision", "prob"),
                           probability = FALSE, decision.values = FALSE,
                           uncertainty = FALSE, n_draws = 200, seed = NULL, ...) {
  type <- .mk_predict_type(type)
  newdata <- if (missing(newdata)) NULL else newdata
  dots <- list(...)
  if ("new_data" %in% names(dots)) {
    # tidymodels' spelling: ignoring it would predict the training rows instead
    if (!is.null(newdata)) {
      stop("predict(): give the new rows once, as `newdata` or as `new_data`, not both.",
        call. = FALSE
      )
    }
    newdata <- dots[["new_data"]]
    dots[["new_data"]] <- NULL
  }
  do.call(.mk_unused_dots, c(dots, list(where = "predict()")))
  for (flag in c("probability", "decision.values")) {
    value <- get(flag)
    if (!is.logical(value) || length(value) != 1L || is.na(value)) {
      stop(sprintf("`%s` must be TRUE or FALSE.", flag), call. = FALSE)
    }
  }
  if (!is.logical(uncertainty) || length(uncertainty) != 1L || is.na(uncertainty)) {
    stop("`uncertainty` must be TRUE or FALSE.", call. = FALSE)
  }
  if (uncertainty) {
    return(mk_uncertainty(object, newdata, n_draws = n_draws, seed = seed))
  }
  classification <- object$type == "classification"
  if (type == "prob" || probability) .mk_need_probabilities(object, classification)
  x <- if (is.null(newdata)) {
    NULL # the training rows
  } else {
    .mk_design_new(object$design, newdata, object$handle_unknown %||% "missing")
  }
  one <- function(type) {
    if (is.null(x)) {
      # with na.action = na.exclude padded with NA where the response was missing
      stats::napredict(object$na.action, .mk_predict(object, object$x, type))
    } else {
      .mk_predict(object, x, type)
    }
  }
  out <- one(type)
  if (probability && classification && type == "response") {
    attr(out, "probabilities") <- one("prob")
  }
  if (decision.values && type == "response") {
    attr(out, "decision.values") <- one("decision")
  }
  out
}

# The prediction type, from this package's names and the aliases of e1071,
# kernlab and parsnip.
.mk_predict_type <- function(type) {
  if (identical(type, c("response", "decision", "prob"))) {
    return("response")
  }
  aliases <- c(
    response = "response", class = "response", decision = "decision",
    decision.values = "decision", prob = "prob", probabilities = "prob",
    probability = "prob"
  )
  if (!is.character(type) || length(type) != 1L || !type %in% names(aliases)) {
    stop("`type` must be \"response\" (or \"class\"), \"decision\" or \"prob\" ",
      "(or kernlab's \"probabilities\").",
      call. = FALSE
    )
  }
  aliases[[type]]
}

.mk_need_probabilities <- function(object, classification) {
  if (!classification) {
    stop("Class probabilities (type = \"prob\", probability = TRUE) are for ",
      "classification; this is a regression model.",
      call. = FALSE
    )
  }
  if (!isTRUE(object$probability)) {
    stop("This model was fitted without class probabilities: refit it with ",
      "probability = TRUE, e.g. update(fit, probability = TRUE).",
      call. = FALSE
    )
  }
}

# A warning naming the arguments a method does not use (instead of dropping
# a misspelt one silently).
.mk_unused_dots <- function(..., where) {
  if (!...length()) {
    return(invisible())
  }
  nm <- ...names()
  shown <- if (is.null(nm)) "unnamed" else paste0("`", ifelse(nzchar(nm), nm, "(unnamed)"), "`", collapse = ", ")
  warning(sprintf("%s ignores the argument(s) %s.", where, shown), call. = FALSE)
  invisible()
}

.mk_predict <- function(object, x, type) {
  classification <- object$type == "classification"
  rn <- rownames(x)
  if (!nrow(x)) {
    return(if (type == "prob") {
      matrix(numeric(), 0L, length(object$classes), dimnames = list(NULL, object$classes))
    } else if (classification && type == "response") {
      factor(character(), levels = object$levels, ordered = isTRUE(object$ordered))
    } else {
      numeric()
    })
  }
  X <- .mk_to_python(.mk_apply_scaling(x, object$scaling))
  model <- object$py_model # restored from the pickle when needed
  if (!classification || type == "response") {
    pred <- .mk_predict_py(model, X, classification, object$levels, object$feature_names,
      ordered = isTRUE(object$ordered)
    )
    if (!classification) pred <- .mk_unscale_response(pred, object$y_scaling)
    names(pred) <- rn
    return(pred)
  }
  if (type == "prob") {
    prob <- .mk_from_numpy(
      .mk_call(object$py_calibrated$predict_proba(X), "probabilities", object$feature_names)
    )
    prob <- matrix(prob, nrow(x), dimnames = list(rn, object$classes))
    return(prob)
  }
  scores <- .mk_from_numpy(
    .mk_call(model$decision_function(X), "decision values", object$feature_names)
  )
  if (is.matrix(scores)) {
    dimnames(scores) <- list(rn, object$classes)
  } else {
    names(scores) <- rn
  }
  scores
}

#' @rdname predict.mk_svm
#' @export
fitted.mk_svm <- function(object, ...) {
  if (is.null(object$fitted)) {
    return(predict(object))
  }
  stats::napredict(object$na.action, object$fitted)
}

# Predicted classes (a factor with `levels`) or values of a fitted Python
# estimator on a NumPy array.
.mk_predict_py <- function(model, X, classification, levels, columns, ordered = FALSE) {
  pred <- .mk_from_numpy(.mk_call(model$predict(X), "predicting", columns))
  if (classification) {
    pred <- factor(levels[as.integer(pred) + 1L], levels = levels, ordered = ordered)
  }
  pred
}
