#' Tidy summaries of a missing-data SVM (broom's tidy, glance, augment)
#'
#' Methods for the \pkg{generics} functions \code{tidy}, \code{glance} and
#' \code{augment} that \pkg{broom} and the tidymodels use (re-exported here,
#' so they work without loading broom), following broom's column
#' conventions. Each returns a tibble when the \pkg{tibble} package is
#' installed, else a data frame.
#'
#' \code{tidy} gives the components of the model: with \code{component =
#' "support_vectors"} (the default) one row per support vector: \code{row}
#' (its training row, counted from 1, as in \code{fit$index}),
#' \code{.rownames} (that row's name, when the training data had row names),
#' \code{response} (its response) and its dual coefficient (\eqn{y_i
#' \alpha_i}{y_i alpha_i}): \code{coefficient} for two classes or regression,
#' \code{coefficient_1}, ... (one per pair of classes, as libsvm stores them)
#' for more classes. The decision function is \eqn{f(x) = \sum_i y_i
#' \alpha_i k(x_i, x) + b}{f(x) = sum_i y_i alpha_i k(x_i, x) + b} over
#' the support vectors. With \code{component = "parameters"}: the settings as
#' \code{term} and \code{estimate} (\code{C}, \code{gamma} as fitted,
#' \code{epsilon}, the intercept(s) \eqn{b}).
#'
#' \code{glance} gives one row: \code{kernel}, \code{density}, \code{C},
#' \code{gamma} (the fitted value), \code{epsilon} (regression),
#' \code{n_sv}, \code{nobs}, \code{n_incomplete} (training rows with a
#' missing value), \code{missing_rate} (fraction of missing training
#' entries), \code{training_error} and \code{accuracy} (classification) or
#' \code{r.squared} and \code{rmse} (regression), on the training rows; for
#' a model returned by \code{\link{mk_tune}} also \code{cv_error} (the
#' best cross-validated error).
#'
#' \code{augment} adds predictions to data, \strong{one row per row of the
#' data, rows with missing predictors included} (they are predicted; nothing
#' is dropped): \code{.fitted} (the predicted class, a factor, or value),
#' for a model fitted with \code{probability = TRUE} the class
#' probabilities \code{.pred_<level>} (one column per class), and for
#' regression \code{.resid} (response minus \code{.fitted}, \code{NA}
#' where the response is missing or absent). Without \code{data} and
#' \code{newdata}: the training rows (the model frame for a formula fit;
#' for \code{mk_svm(x, y)} the columns of \code{x} and the response as
#' \code{y}). Row names that are not \code{1, 2, ...} are kept in a column
#' \code{.rownames}, as broom does. With \code{uncertainty = TRUE} it adds
#' what the rows' missing entries do to each prediction (see
#' \code{\link{mk_uncertainty}}): \code{.flip_prob} (two classes; more
#' classes: \code{.change_prob}), the probability that the predicted class
#' changes once the missing entries are observed, and the standard
#' deviation and 5\% and 95\% quantiles of the completed decision
#' (\code{.decision_sd}, \code{.decision_q05}, \code{.decision_q95}; for
#' regression of the completed prediction, \code{.fitted_sd},
#' \code{.fitted_q05}, \code{.fitted_q95}; for more than two classes
#' these are left out, see \code{mk_uncertainty()} for the per-class ones).
#'
#' @param x A model fitted by \code{\link{mk_svm}} or \code{\link{mk_tune}}.
#' @param component \code{"support_vectors"} or \code{"parameters"}.
#' @param data,newdata Data to augment: \code{newdata} for new rows,
#'   \code{data} for the original data (e.g. with the rows whose response
#'   is missing, which the fit dropped); both are predicted the same way.
#' @param uncertainty Logical: add the columns of uncertainty due to the
#'   missing entries (see Details).
#' @param n_draws,seed Completions per incomplete row and their seed
#'   (\code{NULL}: drawn from R's generator), with \code{uncertainty = TRUE}.
#' @param ... Unused.
#' @return A tibble (or data frame), see Details.
#' @seealso \code{\link{mk_svm}}, \code{\link{mk_tune}} (whose result has a
#'   \code{tidy} method too), \code{\link{coef.mk_svm}}.
#' @examples
#' if (mk_available()) {
#'   aq <- airquality
#'   fit <- mk_svm(Ozone ~ Solar.R + Wind + Temp, data = aq)
#'   glance(fit)
#'   head(tidy(fit))
#'   tidy(fit, component = "parameters")
#'   head(augment(fit, data = aq)) # 153 rows: Ozone NA rows predicted too
#' }
#' @name mk_svm-tidiers
NULL

#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance

#' @importFrom generics augment
#' @export
generics::augment

#' @rdname mk_svm-tidiers
#' @export
tidy.mk_svm <- function(x, component = c("support_vectors", "parameters"), ...) {
  component <- match.arg(component)
  .mk_unused_dots(..., where = "tidy()")
  if (component == "parameters") {
    intercept <- .mk_intercepts(x)
    out <- data.frame(
      term = c("C", "gamma", if (x$type == "regression") "epsilon", names(intercept)),
      estimate = c(
        as.double(x$C), as.double(x$gamma_value),
        if (x$type == "regression") as.double(x$epsilon), unname(intercept)
      ),
      stringsAsFactors = FALSE
    )
    return(.mk_tibble(out))
  }
  rows <- x$index %||% integer()
  out <- data.frame(row = as.integer(rows))
  if (.mk_has_rownames(x$x)) out$.rownames <- rownames(x$x)[rows]
  out$response <- x$y[rows]
  dual <- .mk_dual_coefficients(x)
  if (!is.null(dual) && ncol(dual) == length(rows)) {
    if (nrow(dual) == 1L) {
      out$coefficient <- as.double(dual[1L, ])
    } else {
      for (k in seq_len(nrow(dual))) out[[paste0("coefficient_", k)]] <- as.double(dual[k, ])
    }
  }
  .mk_tibble(out)
}

#' @rdname mk_svm-tidiers
#' @export
glance.mk_svm <- function(x, ...) {
  .mk_unused_dots(..., where = "glance()")
  density <- if (is.null(x$density) || is.na(x$density)) NA_character_ else as.character(x$density)
  out <- data.frame(
    kernel = x$kernel, density = density, C = as.double(x$C),
    gamma = as.double(x$gamma_value), stringsAsFactors = FALSE
  )
  if (x$type == "regression") out$epsilon <- as.double(x$epsilon)
  out$n_sv <- as.integer(x$n_sv)
  out$nobs <- as.integer(x$n)
  out$n_incomplete <- as.integer(x$n_incomplete_rows)
  out$missing_rate <- as.double(x$missing_rate)
  fitted <- x$fitted %||% .mk_predict(x, x$x, "response")
  out$training_error <- as.double(x$training_error %||% .mk_training_error(x$y, fitted))
  if (x$type == "classification") {
    out$accuracy <- mean(as.character(fitted) == as.character(x$y))
  } else {
    res <- x$y - fitted
    out$r.squared <- 1 - sum(res^2) / sum((x$y - mean(x$y))^2)
    out$rmse <- sqrt(mean(res^2))
  }
  if (!is.null(x$tune)) out$cv_error <- as.double(x$tune$best_performance)
  .mk_tibble(out)
}

#' @rdname mk_svm-tidiers
#' @export
augment.mk_svm <- function(x, data = NULL, newdata = NULL, uncertainty = FALSE,
                          n_draws = 200, seed = NULL, ...) {
  .mk_unused_dots(..., where = "augment()")
  if (!is.null(data) && !is.null(newdata)) {
    stop("Give `data` or `newdata`, not both.", call. = FALSE)
  }
  rows <- newdata %||% data
  if (is.null(rows)) {
    rows <- .mk_training_data(x)
    pred_rows <- NULL # predict() on the training rows themselves
    truth <- x$y
  } else {
    if (!is.data.frame(rows) && !is.matrix(rows)) {
      stop("`data` and `newdata` must be a data frame (or a matrix for a matrix fit).",
        call. = FALSE
      )
    }
    pred_rows <- rows
    truth <- .mk_response_of(x, rows)
  }
  out <- as.data.frame(rows, stringsAsFactors = FALSE, optional = TRUE)
  keep_names <- .mk_has_rownames(out)
  fitted <- if (is.null(pred_rows)) .mk_predict(x, x$x, "response") else predict(x, pred_rows)
  if (keep_names) {
    out <- cbind(data.frame(.rownames = rownames(out), stringsAsFactors = FALSE), out)
  }
  out$.fitted <- unname(fitted)
  if (isTRUE(x$probability)) {
    prob <- if (is.null(pred_rows)) .mk_predict(x, x$x, "prob") else predict(x, pred_rows, type = "prob")
    for (k in colnames(prob)) out[[paste0(".pred_", k)]] <- unname(prob[, k])
  }
  if (x$type == "regression") {
    out$.resid <- if (is.null(truth)) NA_real_ else as.double(truth) - unname(fitted)
  }
  if (!is.logical(uncertainty) || length(uncertainty) != 1L || is.na(uncertainty)) {
    stop("`uncertainty` must be TRUE or FALSE.", call. = FALSE)
  }
  if (uncertainty) out <- cbind(out, .mk_augment_uncertainty(x, pred_rows, n_draws, seed))
  rownames(out) <- NULL
  .mk_tibble(out)
}

# The columns augment(uncertainty = TRUE) adds, from mk_uncertainty().
.mk_augment_uncertainty <- function(x, rows, n_draws, seed) {
  u <- mk_uncertainty(x, rows, n_draws = n_draws, seed = seed)
  stem <- if (x$type == "regression") ".fitted" else ".decision"
  out <- data.frame(row.names = seq_len(nrow(u)))
  if (x$type == "classification") {
    if ("flip_probability" %in% names(u)) {
      out$.flip_prob <- u$flip_probability
    } else {
      out$.change_prob <- u$change_probability
    }
  }
  if ("completed_sd" %in% names(u)) {
    out[[paste0(stem, "_sd")]] <- u$completed_sd
    out[[paste0(stem, "_q05")]] <- u$completed_q05
    out[[paste0(stem, "_q95")]] <- u$completed_q95
  }
  out
}

# The training rows as a data frame: the model frame of a formula fit, else
# the predictors with the response as `y`.
.mk_training_data <- function(x) {
  if (!is.null(x$model)) {
    return(x$model)
  }
  out <- as.data.frame(x$x, stringsAsFactors = FALSE, optional = TRUE)
  if (is.null(colnames(x$x))) names(out) <- paste0("V", seq_len(ncol(out)))
  out$y <- x$y
  out
}

# The response in `rows` (NULL when it is not there): for a formula fit the
# left-hand side evaluated in `rows`.
.mk_response_of <- function(x, rows) {
  if (is.null(x$terms) || !is.data.frame(rows)) {
    return(NULL)
  }
  lhs <- attr(x$terms, "variables")[[attr(x$terms, "response") + 1L]]
  tryCatch(eval(lhs, rows, environment(x$terms)), error = function(e) NULL)
}

# Dual coefficients (y_i alpha_i) of the support vectors, a matrix with one
# row per binary problem; NULL when the Python model has none.
.mk_dual_coefficients <- function(x) {
  dual <- tryCatch(.mk_from_numpy(x$py_model$dual_coef_), error = function(e) NULL)
  if (is.null(dual)) {
    return(NULL)
  }
  if (!is.matrix(dual)) dual <- matrix(dual, 1L)
  if (x$type == "regression" && !is.null(x$y_scaling)) dual <- dual * x$y_scaling$scale
  dual
}

# The intercept(s) b of the decision function(s), named.
.mk_intercepts <- function(x) {
  b <- tryCatch(as.double(.mk_from_numpy(x$py_model$intercept_)), error = function(e) NULL)
  if (!length(b)) {
    return(stats::setNames(numeric(), character()))
  }
  if (x$type == "regression" && !is.null(x$y_scaling)) {
    b <- b * x$y_scaling$scale + x$y_scaling$center
  }
  stats::setNames(b, if (length(b) == 1L) "intercept" else paste0("intercept_", seq_along(b)))
}

# Row names that are not the automatic 1, 2, ...
.mk_has_rownames <- function(x) {
  if (is.data.frame(x)) .row_names_info(x) > 0L else !is.null(rownames(x))
}

.mk_tibble <- function(df) {
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

#' Coefficients, covariance and likelihood of a missing-data SVM
#'
#' A kernel SVM has no coefficients per predictor: its decision function is
#' \eqn{f(x) = \sum_i y_i \alpha_i k(x_i, x) + b}{f(x) = sum_i y_i alpha_i
#' k(x_i, x) + b}, a weighted sum of kernel values at the support vectors
#' (here expected kernels, averaged over the missing entries). \code{coef}
#' therefore returns the \emph{dual} coefficients \eqn{y_i \alpha_i}{y_i
#' alpha_i}, named by the training row of each support vector (a matrix with
#' one row per pair of classes for more than two classes; in the units of the
#' response for regression), with the intercept(s) as the attribute
#' \code{"intercept"}; \code{tidy(fit)} gives the same as a table.
#'
#' \code{vcov} and \code{logLik} stop with an error: an SVM minimises a hinge
#' (or \eqn{\epsilon}{epsilon}-insensitive) loss plus a penalty, not a
#' likelihood, so there is no log-likelihood (hence no AIC or BIC) and no
#' sampling covariance of estimated coefficients. Compare models by
#' cross-validated error instead (\code{\link{mk_tune}},
#' \code{\link{mk_compare}}); for the uncertainty of predictions, refit on
#' bootstrap samples.
#'
#' @param object A model fitted by \code{\link{mk_svm}}.
#' @param ... Unused.
#' @return \code{coef}: a named numeric vector (or matrix) with the
#'   attribute \code{"intercept"}. \code{vcov} and \code{logLik}: no value
#'   (an error of class \code{"missingkernels_not_a_likelihood_model"}).
#' @examples
#' if (mk_available()) {
#'   fit <- mk_svm(Ozone ~ Wind + Temp, data = airquality)
#'   head(coef(fit))
#'   try(vcov(fit))
#' }
#' @importFrom stats coef
#' @export
coef.mk_svm <- function(object, ...) {
  dual <- .mk_dual_coefficients(object)
  rows <- object$index
  if (is.null(dual) || is.null(rows) || ncol(dual) != length(rows)) {
    stop("This model has no support vectors to give coefficients of (the ",
      "\"features\" route fits a linear SVM on expected-kernel features, not ",
      "on the rows): see tidy(fit, component = \"parameters\").",
      call. = FALSE
    )
  }
  rn <- rownames(object$x)
  labels <- if (!is.null(rn)) rn[rows] else as.character(rows)
  out <- if (nrow(dual) == 1L) {
    stats::setNames(as.double(dual[1L, ]), labels)
  } else {
    dimnames(dual) <- list(paste0("pair_", seq_len(nrow(dual))), labels)
    dual
  }
  attr(out, "intercept") <- unname(.mk_intercepts(object))
  out
}

.mk_not_likelihood <- function(what) {
  stop(structure(
    class = c("missingkernels_not_a_likelihood_model", "error", "condition"),
    list(
      message = paste0(
        what, "() does not exist for an SVM: it minimises a hinge (or ",
        "epsilon-insensitive) loss plus a penalty, not a likelihood, so there is ",
        "no log-likelihood (no AIC/BIC) and no covariance matrix of estimated ",
        "coefficients. Compare models by cross-validated error (mk_tune(), ",
        "mk_compare()); for the uncertainty of predictions, refit on bootstrap ",
        "samples. coef(fit) gives the dual coefficients of the support vectors."
      ),
      call = NULL
    )
  ))
}

#' @rdname coef.mk_svm
#' @importFrom stats vcov
#' @export
vcov.mk_svm <- function(object, ...) .mk_not_likelihood("vcov")

#' @rdname coef.mk_svm
#' @importFrom stats logLik
#' @export
logLik.mk_svm <- function(object, ...) .mk_not_likelihood("logLik")
