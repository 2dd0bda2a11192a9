# print() and summary() of a fitted mk_svm.

#' @rdname summary.mk_svm
#' @export
print.mk_svm <- function(x, ...) {
  cat("Support vector", if (x$type == "classification") "classifier" else "regression",
    "on an expected kernel (missingkernels)\n")
  if (!is.null(x$call)) {
    cat("\nCall:\n")
    print(x$call)
  }
  cat("\n")
  .mk_print_settings(x)
  invisible(x)
}

# The predictors (design columns) of a fit: a data frame with `name`,
# `type` ("numeric", "nominal", "logical" (nominal, FALSE/TRUE) or "ordered"
# (numeric on the Python side, by level rank)) and `levels` (the number of
# training levels; NA for numeric columns, 2 for logical ones).
.mk_predictors <- function(x) {
  cols <- x$x
  names <- x$feature_names %||% paste0("V", seq_len(x$n_features))
  if (!is.data.frame(cols)) {
    return(data.frame(name = names, type = "numeric", levels = NA_integer_))
  }
  type <- vapply(cols, function(col) {
    if (is.ordered(col)) "ordered" else if (is.factor(col)) "nominal" else if (is.logical(col)) "logical" else "numeric"
  }, "")
  levels <- vapply(cols, function(col) {
    if (is.factor(col)) nlevels(col) else if (is.logical(col)) 2L else NA_integer_
  }, 0L)
  data.frame(name = names, type = unname(type), levels = unname(levels))
}

# One line per kind of predictor, e.g.
# "Numeric predictors (2): a, b" / "Nominal predictors (2): f (3 levels), l (logical)".
.mk_describe_predictors <- function(p, max_shown = 8L) {
  line <- function(title, items) {
    if (!length(items)) {
      return(NULL)
    }
    shown <- utils::head(items, max_shown)
    sprintf("%s (%d): %s%s", title, length(items), paste(shown, collapse = ", "),
      if (length(items) > max_shown) ", ..." else ""
    )
  }
  nominal <- p$type %in% c("nominal", "logical")
  c(
    line("Numeric predictors", p$name[p$type == "numeric"]),
    line(
      "Nominal predictors, not dummy coded",
      ifelse(p$type[nominal] == "logical",
        paste0(p$name[nominal], " (logical)"),
        sprintf("%s (%d levels)", p$name[nominal], p$levels[nominal])
      )
    ),
    line(
      "Ordered factors, numeric by level rank",
      sprintf("%s (%d levels)", p$name[p$type == "ordered"], p$levels[p$type == "ordered"])
    )
  )
}

.mk_print_settings <- function(x) {
  # "scale" with no fitted width: a kernel without gamma (e.g. Belanche's)
  gamma <- if (identical(x$gamma, "scale")) {
    if (is.na(x$gamma_value)) "" else sprintf("   gamma: scale (= %.4g)", x$gamma_value)
  } else {
    paste0("   gamma: ", format(x$gamma))
  }
  cat(sprintf("Kernel: %s   density: %s%s   C: %s%s\n",
    x$kernel,
    if (is.null(x$density) || is.na(x$density)) "default" else x$density,
    gamma, format(x$C),
    if (!is.null(x$epsilon)) paste0("   epsilon: ", format(x$epsilon)) else ""
  ))
  if (identical(x$route, "features")) {
    cat("Route: features (the kernel approximated by random features, then a linear SVM; see ?mk_memory)\n")
  }
  if (x$type == "classification") {
    cat(sprintf("Classes (%d): %s\n", length(x$levels), paste(x$levels, collapse = ", ")))
  }
  cat(sprintf(
    "Training rows: %d, %d with missing values (%.1f%% of entries missing), kept\n",
    x$n, x$n_incomplete_rows, 100 * x$missing_rate
  ))
  if (length(x$na.action)) {
    cat(sprintf("(%d row(s) with a missing response dropped by na.action)\n", length(x$na.action)))
  }
  if (!is.null(x$weights)) cat("Case weights given\n")
  cat(sprintf("Features: %d%s   support vectors: %s\n",
    x$n_features, if (x$scale) " (numeric ones standardised)" else "",
    # a linear SVM on kernel features keeps no training rows
    if (identical(x$route, "features")) "none (features route)" else format(x$n_sv)
  ))
  cat(.mk_describe_predictors(.mk_predictors(x)), sep = "\n")
  if (!is.null(x$tune)) {
    best <- x$tune$best_parameters
    cat(sprintf("Tuned by %d-fold cross-validation over %d combinations: %s (%s %.4g)\n",
      max(x$tune$folds, na.rm = TRUE), nrow(x$tune$performances),
      paste(names(best), vapply(best, format, ""), sep = " = ", collapse = ", "),
      x$tune$metric, x$tune$best_performance
    ))
  }
  if (!is.null(x$training_error)) {
    cat(sprintf("Training error: %.4g (%s)\n", x$training_error,
      if (x$type == "classification") "misclassification rate" else "mean squared error"
    ))
  }
}

#' Summaries of a missing-data SVM
#'
#' \code{print} shows the kernel, the density of the missing entries, the
#' other settings, the sizes, which predictors are numeric, which nominal
#' (with their number of levels) and which ordered, the number of support
#' vectors and the training error (misclassification rate, or mean squared
#' error for regression, of the fitted values); \code{summary} adds the fraction of missing entries
#' per predictor (in a table of the predictors with their type and number
#' of levels), the support vectors per class and the fit on the training
#' rows (accuracy, or \eqn{R^2}{R^2} and RMSE).
#'
#' @param object,x A model fitted by \code{\link{mk_svm}} (or its summary).
#' @param ... Unused.
#' @return \code{summary} returns an object of class \code{"summary.mk_svm"}:
#'   the model with the added elements \code{missing_by_feature} (named
#'   numeric), \code{predictors} (a data frame with one row per predictor
#'   column: \code{name}, \code{type} (\code{"numeric"}, \code{"nominal"},
#'   \code{"logical"} or \code{"ordered"}), \code{levels} (number of
#'   training levels, \code{NA} for numeric columns) and \code{missing}
#'   (fraction of missing training entries)), \code{sv_per_class} (classification) and \code{training}
#'   (named numeric: \code{accuracy}, or \code{r_squared} and \code{rmse}).
#'   The print methods return their argument invisibly.
#' @examples
#' if (mk_available()) {
#'   x <- cbind(a = c(0.1, 1.9, NA, 2.4, 0.3, 2.1), b = c(1, NA, 0.2, 2.2, 0.5, 1.8))
#'   y <- factor(c("low", "high", "low", "high", "low", "high"))
#'   summary(mk_svm(x, y))
#' }
#' @export
summary.mk_svm <- function(object, ...) {
  out <- object
  out$missing_by_feature <- colMeans(is.na(object$x))
  out$predictors <- .mk_predictors(object)
  out$predictors$missing <- unname(out$missing_by_feature)
  pred <- object$fitted %||% .mk_predict(object, object$x, "response")
  if (object$type == "classification") {
    if (length(object$index)) {
      counts <- table(factor(object$y[object$index], levels = object$classes))
      out$sv_per_class <- stats::setNames(as.integer(counts), object$classes)
    }
    out$training <- c(accuracy = mean(pred == object$y))
  } else {
    res <- object$y - pred
    out$training <- c(
      r_squared = 1 - sum(res^2) / sum((object$y - mean(object$y))^2),
      rmse = sqrt(mean(res^2))
    )
  }
  class(out) <- "summary.mk_svm"
  out
}

#' @rdname summary.mk_svm
#' @export
print.summary.mk_svm <- function(x, ...) {
  class(x) <- "mk_svm"
  print(x)
  cat("\nPredictors (training; missing: fraction of missing entries):\n")
  p <- x$predictors %||% data.frame(
    name = names(x$missing_by_feature), type = "numeric", levels = NA_integer_,
    missing = unname(x$missing_by_feature)
  )
  p$missing <- round(p$missing, 3)
  p$levels <- ifelse(is.na(p$levels), "", as.character(p$levels))
  print(p, row.names = FALSE)
  if (!is.null(x$sv_per_class)) {
    cat("\nSupport vectors per class:\n")
    print(x$sv_per_class)
  }
  cat("\nOn the training rows:",
    paste(sprintf("%s = %.4g", names(x$training), x$training), collapse = ", "), "\n")
  invisible(x)
}
