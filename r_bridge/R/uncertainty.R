#' What the missing entries cost: uncertainty of predictions, and what to measure next
#'
#' A fitted model knows, for every row, the distribution of its missing
#' entries given its observed ones (the density behind the kernel).
#' \code{predict(fit, newdata, uncertainty = TRUE)} completes each incomplete
#' row \code{n_draws} times with values drawn from that distribution and
#' summarises the model's decisions on the completed rows: what the model
#' would say had the entries been observed. \code{mk_value_of_measuring()}
#' says, for each missing entry, how much observing it alone would change
#' the prediction. \code{mk_plot_uncertainty()} draws both for one row.
#'
#' \strong{Definitions.} For a row with missing entries, a completion draws
#' them from the fitted density given the row's observed entries; the
#' model's decision on the completed row is its \emph{completed decision}.
#' The flip probability is the share of completions whose predicted class
#' differs from the prediction on the incomplete row (for several classes:
#' the change probability). For kernels linear in a row's distribution
#' (\code{"expected_rbf"}, \code{"expected_linear"},
#' \code{"expected_mixed_rbf"}) the mean completed decision is the decision
#' itself; genRBF and \code{"mixed_rbf"} (the defaults) divide each row by a
#' normaliser that is 1 for complete rows, so their mean completed decision
#' is nearer the intercept than the decision. The value of measuring a
#' missing entry draws only that entry from its conditional distribution,
#' fills it in, and predicts the row as usual (its other missing entries
#' stay missing): for classification, the share of these predictions that
#' differ from today's; for regression, their standard deviation in the
#' units of the response. Each probability is a Monte Carlo estimate with
#' standard error \code{sqrt(p (1 - p) / n_draws)}. Complete rows have
#' spread 0 and cost no draws.
#'
#' \strong{Seeds.} With \code{seed = NULL} the draws are seeded from R's
#' random number generator, so \code{set.seed()} before the call reproduces
#' them; a row's draws depend on the row and the seed only, not on the other
#' rows of \code{newdata}.
#'
#' @param object,fit A model fitted by \code{\link{mk_svm}}.
#' @param newdata A data frame or matrix of predictors, \code{NA} where
#'   missing, as for \code{\link{predict.mk_svm}}; omitted: the training rows.
#' @param n_draws Completions per incomplete row (at least 2).
#' @param seed \code{NULL} (draw a seed from R's generator) or a whole number.
#' @return \code{mk_uncertainty()} (and \code{predict(fit, newdata,
#'   uncertainty = TRUE)}): a data frame with one row per row of
#'   \code{newdata} and the columns \code{n_missing} (the missing entries the
#'   model uses), \code{prediction} (a factor for classification, in the
#'   response's units for regression), then for two classes
#'   \code{decision}, \code{completed_mean}, \code{completed_sd},
#'   \code{completed_q05}, \code{completed_q95} and \code{flip_probability};
#'   for more classes \code{change_probability}, the share of completions
#'   predicted as each class (\code{completed_share_<level>}) and the
#'   one-versus-rest decision summaries per class; for regression
#'   \code{completed_mean}, \code{completed_sd}, \code{completed_q05},
#'   \code{completed_q95} in the units of the response. With
#'   \code{probability = TRUE} at fit time, also \code{proba_<level>},
#'   \code{proba_q05_<level>} and \code{proba_q95_<level>} (the 5\% and 95\%
#'   quantiles of the class probability over the completions).
#'   \code{mk_value_of_measuring()}: a data frame with one column per
#'   predictor (design column) and one row per row of \code{newdata},
#'   \code{NA} where the entry is observed.
#' @examples
#' if (mk_available()) {
#'   set.seed(1)
#'   x <- matrix(rnorm(240), 80, 3, dimnames = list(NULL, c("a", "b", "c")))
#'   y <- factor(ifelse(x[, 1] + x[, 2] > 0, "yes", "no"))
#'   x[sample(240, 50)] <- NA
#'   fit <- mk_svm(x, y)
#'   head(predict(fit, x[1:5, ], uncertainty = TRUE))
#'   mk_value_of_measuring(fit, x[1:5, ], n_draws = 50)
#' }
#' @export
mk_uncertainty <- function(object, newdata, n_draws = 200, seed = NULL) {
  .mk_check_fit(object)
  x <- .mk_cost_rows(object, if (missing(newdata)) NULL else newdata)
  n_draws <- .mk_check_draws(n_draws)
  random_state <- .mk_random_state(seed)
  X <- .mk_to_python(.mk_apply_scaling(x, object$scaling))
  table <- .mk_call(
    object$py_model$uncertainty_from_missing(X, n_draws = n_draws, random_state = random_state),
    "uncertainty_from_missing", object$feature_names
  )
  out <- .mk_frame_from_pandas(table)
  out$n_missing <- as.integer(out$n_missing)
  if (object$type == "classification") {
    out <- .mk_class_columns(out, object)
    if (isTRUE(object$probability)) {
      out <- cbind(out, .mk_proba_quantiles(object, X, nrow(x), n_draws, random_state))
    }
  } else {
    for (col in c("prediction", "completed_mean", "completed_q05", "completed_q95")) {
      out[[col]] <- .mk_unscale_response(out[[col]], object$y_scaling)
    }
    if (!is.null(object$y_scaling)) out$completed_sd <- out$completed_sd * object$y_scaling$scale
  }
  rownames(out) <- rownames(x)
  out
}

#' @rdname mk_uncertainty
#' @export
mk_value_of_measuring <- function(fit, newdata, n_draws = 100, seed = NULL) {
  .mk_check_fit(fit)
  x <- .mk_cost_rows(fit, if (missing(newdata)) NULL else newdata)
  n_draws <- .mk_check_draws(n_draws)
  X <- .mk_to_python(.mk_apply_scaling(x, fit$scaling))
  table <- .mk_call(
    fit$py_model$value_of_measuring(X, n_draws = n_draws, random_state = .mk_random_state(seed)),
    "value_of_measuring", fit$feature_names
  )
  out <- .mk_frame_from_pandas(table)
  names(out) <- fit$feature_names %||% names(out)
  if (fit$type == "regression" && !is.null(fit$y_scaling)) {
    out[] <- lapply(out, function(v) v * fit$y_scaling$scale)
  }
  rownames(out) <- rownames(x)
  out
}

#' @rdname mk_uncertainty
#' @param row The row of \code{newdata} to draw (a number or a row name).
#' @param ... Passed to \code{\link[graphics]{hist}}.
#' @details \code{mk_plot_uncertainty()} draws, with base graphics, the
#'   histogram of one row's completed decisions (classification: against
#'   the threshold 0 of two classes, or the share of completions per class
#'   for more; regression: the completed predictions) with the model's own
#'   decision marked, beside the bars of the value of measuring each of the
#'   row's missing entries. It returns invisibly a list with the completed
#'   decisions (\code{completed}), the row of \code{mk_uncertainty()}
#'   (\code{summary}) and of \code{mk_value_of_measuring()} (\code{value}).
#' @export
mk_plot_uncertainty <- function(fit, newdata, row = 1, n_draws = 200, seed = NULL, ...) {
  .mk_check_fit(fit)
  x <- .mk_cost_rows(fit, if (missing(newdata)) NULL else newdata)
  if (length(row) != 1L || is.na(row) ||
    (is.character(row) && !row %in% rownames(x)) ||
    (is.numeric(row) && (row < 1 || row > nrow(x) || row != round(row)))) {
    stop("`row` must be one row number (1 to ", nrow(x), ") or row name of `newdata`.",
      call. = FALSE
    )
  }
  one <- x[row, , drop = FALSE]
  n_draws <- .mk_check_draws(n_draws)
  random_state <- .mk_random_state(seed)
  summary <- mk_uncertainty(fit, one, n_draws = n_draws, seed = random_state)
  value <- mk_value_of_measuring(fit, one, n_draws = max(2L, n_draws %/% 2L), seed = random_state)
  completed <- .mk_completed_decisions(fit, one, n_draws, random_state)
  missing_value <- unlist(value[1, !is.na(unlist(value[1, ])), drop = TRUE])
  old <- graphics::par(mfrow = c(1, 2), mar = c(4.5, 4.5, 3, 1))
  on.exit(graphics::par(old))
  .mk_draw_completed(fit, completed, summary, ...)
  if (length(missing_value)) {
    ordered <- sort(missing_value, decreasing = TRUE)
    graphics::barplot(rev(ordered),
      horiz = TRUE, las = 1, col = "grey40",
      xlab = if (fit$type == "classification") "P(prediction changes)" else "sd of prediction",
      main = "Value of measuring"
    )
  } else {
    graphics::plot.new()
    graphics::title(main = "Value of measuring")
    graphics::text(0.5, 0.5, "no missing entry")
  }
  invisible(list(completed = completed, summary = summary, value = value))
}

# -- helpers -------------------------------------------------------------------

.mk_check_fit <- function(object) {
  if (!inherits(object, "mk_svm")) {
    stop("Expected a model fitted by mk_svm(); got an object of class ",
      paste(class(object), collapse = "/"), ".",
      call. = FALSE
    )
  }
}

.mk_check_draws <- function(n_draws) {
  if (!is.numeric(n_draws) || length(n_draws) != 1L || is.na(n_draws) ||
    n_draws != round(n_draws) || n_draws < 2) {
    stop("`n_draws` must be one whole number of at least 2.", call. = FALSE)
  }
  as.integer(n_draws)
}

# The design rows of `newdata` (the training rows when NULL).
.mk_cost_rows <- function(object, newdata) {
  if (is.null(newdata)) {
    return(object$x)
  }
  .mk_design_new(object$design, newdata, object$handle_unknown %||% "missing")
}

.mk_frame_from_pandas <- function(table) {
  columns <- unlist(reticulate::py_to_r(table$columns$astype("str")$tolist()))
  out <- lapply(columns, function(col) .mk_from_numpy(table[[col]]$to_numpy()))
  names(out) <- columns
  as.data.frame(out, optional = TRUE, stringsAsFactors = FALSE)
}

# Classes named by the response's levels: the prediction as a factor, and
# the per-class columns (suffix `_<code>` in Python) renamed `_<level>`.
.mk_class_columns <- function(out, object) {
  levels <- object$levels
  out$prediction <- factor(levels[as.integer(out$prediction) + 1L],
    levels = levels, ordered = isTRUE(object$ordered)
  )
  renamed <- names(out)
  for (code in rev(seq_along(levels) - 1L)) {
    pattern <- paste0("_", code, "$")
    renamed <- sub(pattern, paste0("_", levels[code + 1L]), renamed)
  }
  names(out) <- renamed
  out
}

# Completed copies of the (scaled) rows X stacked draw after draw, as the
# Python model reads them.
.mk_stacked_completions <- function(object, X, n_draws, random_state) {
  copies <- object$py_model$plausible_values(X, n_draws = n_draws, random_state = random_state)
  if (reticulate::py_has_attr(X, "iloc")) {
    reticulate::import("pandas", convert = FALSE)$concat(copies, ignore_index = TRUE)
  } else {
    .mk_np()$concatenate(copies)
  }
}

# Quantiles of the class probabilities over the completions (the R fit's
# calibrated classifier, applied to the draws of uncertainty_from_missing).
.mk_proba_quantiles <- function(object, X, n, n_draws, random_state) {
  stacked <- .mk_stacked_completions(object, X, n_draws, random_state)
  P <- .mk_from_numpy(.mk_call(object$py_calibrated$predict_proba(stacked), "probabilities"))
  today <- .mk_from_numpy(.mk_call(object$py_calibrated$predict_proba(X), "probabilities"))
  P <- matrix(P, ncol = length(object$classes))
  today <- matrix(today, ncol = length(object$classes))
  out <- list()
  for (k in seq_along(object$classes)) {
    draws <- matrix(P[, k], n, n_draws) # rows of one draw are consecutive
    q <- apply(draws, 1L, stats::quantile, probs = c(0.05, 0.95), names = FALSE, type = 7)
    level <- object$classes[k]
    out[[paste0("proba_", level)]] <- today[, k]
    out[[paste0("proba_q05_", level)]] <- q[1L, ]
    out[[paste0("proba_q95_", level)]] <- q[2L, ]
  }
  as.data.frame(out, optional = TRUE)
}

# One row's completed decisions (classification, two classes), predicted
# classes (more classes) or predictions in the response's units (regression).
.mk_completed_decisions <- function(fit, one, n_draws, random_state) {
  X <- .mk_to_python(.mk_apply_scaling(one, fit$scaling))
  stacked <- .mk_stacked_completions(fit, X, n_draws, random_state)
  if (fit$type == "regression") {
    pred <- .mk_from_numpy(.mk_call(fit$py_model$predict(stacked), "predicting"))
    return(.mk_unscale_response(pred, fit$y_scaling))
  }
  if (length(fit$classes) > 2L) {
    return(.mk_predict_py(fit$py_model, stacked, TRUE, fit$levels, fit$feature_names))
  }
  .mk_from_numpy(.mk_call(fit$py_model$decision_function(stacked), "decision values"))
}

.mk_draw_completed <- function(fit, completed, summary, ...) {
  if (is.factor(completed)) {
    share <- table(completed) / length(completed)
    graphics::barplot(share,
      col = "grey70", ylab = "share of completions",
      main = sprintf("Predicted: %s (P change %.2f)", summary$prediction, summary$change_probability)
    )
    return(invisible())
  }
  regression <- fit$type == "regression"
  centre <- if (regression) summary$prediction else summary$decision
  range <- range(c(completed, centre, if (!regression) 0))
  graphics::hist(completed,
    breaks = 30, col = "grey80", border = "white", xlim = range,
    xlab = if (regression) "completed prediction" else "completed decision",
    main = if (regression) {
      sprintf("Prediction %.3g (90%%: %.3g to %.3g)", centre, summary$completed_q05, summary$completed_q95)
    } else {
      sprintf("Predicted: %s (P flip %.2f)", summary$prediction, summary$flip_probability)
    },
    ...
  )
  if (!regression) graphics::abline(v = 0, lty = 2)
  graphics::abline(v = centre, lwd = 2, col = "firebrick")
  invisible()
}
