#' Choose SVM parameters by cross-validation
#'
#' A grid search by k-fold cross-validation, as \code{e1071::tune.svm} does:
#' every combination of the values in \code{ranges} is fitted with
#' \code{\link{mk_svm}} on \code{folds - 1} folds and scored on the held-out
#' fold (each fit scales the columns and fits the density of the missing
#' entries on its own training rows, so nothing leaks from the held-out
#' rows), and the combination with the smallest mean error is refitted on all
#' rows and returned.
#'
#' The error is the misclassification rate (classification) or the mean
#' squared error (regression) of the held-out predictions, as in
#' \code{e1071::tune}. The folds are stratified by class for classification.
#' Rows whose response is missing take no part (they would be dropped by
#' \code{na.action} anyway); rows with missing predictors are kept. Factor,
#' character and logical predictors are nominal columns, as in
#' \code{\link{mk_svm}}; a level that only the held-out rows of a fold have
#' is treated there as a missing entry (one warning for the whole search
#' says how often), unless \code{handle_unknown = "error"} is given, which
#' makes those fits fail.
#'
#' @param x A formula \code{response ~ predictors} (then \code{data} is
#'   needed), or a matrix or data frame of predictors (then \code{y}).
#' @param y The response, when \code{x} is not a formula.
#' @param data A data frame, when \code{x} is a formula.
#' @param ranges A named list of the values to try, e.g. \code{list(C =
#'   2^(-2:6), gamma = c(0.01, 0.1, 1))}; names are arguments of
#'   \code{mk_svm} or parameters of the Python estimator (\code{kernel},
#'   \code{density} and \code{epsilon} too).
#' @param folds The number of cross-validation folds (at least 2).
#' @param seed An integer seed for the fold assignment and, unless
#'   \code{random_state} is given in \code{...}, for the seed of the fits
#'   (the global random number stream is left as it was), or \code{NULL} to
#'   draw both from the global stream, so that \code{set.seed()} before
#'   \code{mk_tune} reproduces the search. Every fit of the search and the
#'   final one share one \code{random_state} (the seed of what the densities
#'   draw, see \code{\link{mk_svm}}); the final model's \code{call}
#'   records it.
#' @param weights Optional case weights, one per row of \code{data} or
#'   \code{x}, used by every fit (not by the error).
#' @param ... Fixed arguments of every fit, passed to \code{\link{mk_svm}}
#'   (e.g. \code{kernel}, \code{scale}, \code{probability} (then used by the
#'   final fit only)).
#' @return The model fitted with the best parameters on all rows, an object
#'   of class \code{c("mk_tune", "mk_svm")} (an \code{"mk_svm"} model whose
#'   \code{call} has those parameters, so \code{update()} refits an
#'   \code{mk_svm}; \code{print}, \code{plot}, \code{autoplot} and
#'   \code{tidy} show the search, see \code{\link{print.mk_tune}}), with
#'   an element \code{tune}: a list with
#'   \code{performances} (a data frame: one row per combination, its
#'   parameters, \code{error} (mean over folds), \code{dispersion} (their
#'   standard deviation) and \code{failed} (the error message of a fit that
#'   failed, else \code{NA})), \code{best_parameters} (a list),
#'   \code{best_performance}, \code{folds} (the fold of each row, \code{NA}
#'   for rows without a response), \code{metric} and \code{call}.
#' @seealso \code{\link{print.mk_tune}} (\code{plot}, \code{autoplot},
#'   \code{tidy}), \code{\link{mk_svm}}, \code{\link{mk_compare}} for nested
#'   cross-validation of several methods.
#' @examples
#' if (mk_available()) {
#'   set.seed(1)
#'   df <- data.frame(a = rnorm(60), b = rnorm(60))
#'   df$y <- factor(ifelse(df$a^2 + df$b^2 > 1.4, "out", "in"))
#'   df$a[sample(60, 8)] <- NA
#'   fit <- mk_tune(y ~ a + b, data = df,
#'     ranges = list(C = c(0.5, 5), gamma = c(0.2, 1)), folds = 3, seed = 1)
#'   fit$tune$best_parameters
#'   fit$tune$performances
#' }
#' @export
mk_tune <- function(x, y = NULL, data = NULL, ranges = list(C = 2^(-2:4)), folds = 5,
                    seed = NULL, weights = NULL, ...) {
  cl <- match.call()
  formula_interface <- inherits(x, "formula")
  if (!is.list(ranges) || !length(ranges) || is.null(names(ranges)) ||
    any(!nzchar(names(ranges))) || any(lengths(ranges) == 0L)) {
    stop("`ranges` must be a named list of values to try, e.g. ",
      "list(C = 2^(-2:4), gamma = c(0.1, 1)).",
      call. = FALSE
    )
  }
  fixed <- list(...)
  if (any(c("subset", "na.action") %in% c(names(fixed), names(ranges)))) {
    stop("mk_tune() uses the rows of `data` (or `x`) as given, less those ",
      "without a response: subset them first (no `subset` or `na.action`).",
      call. = FALSE
    )
  }
  .mk_check_arguments(c(names(ranges), names(fixed)), length(ranges) + length(fixed),
    formula = TRUE
  )
  clash <- intersect(names(ranges), names(fixed))
  if (length(clash)) {
    stop("Argument(s) ", paste0("`", clash, "`", collapse = ", "),
      " given both in `ranges` and as fixed values.",
      call. = FALSE
    )
  }
  if (!is.numeric(folds) || length(folds) != 1L || is.na(folds) || folds < 2 ||
    folds != round(folds)) {
    stop("`folds` must be a whole number of at least 2.", call. = FALSE)
  }
  folds <- as.integer(folds)

  # the response, to stratify the folds and to score held-out rows
  if (formula_interface) {
    if (!is.data.frame(data)) {
      stop("With a formula, `data` must be a data frame.", call. = FALSE)
    }
    response <- stats::model.response(
      stats::model.frame(x, data, na.action = stats::na.pass)
    )
    n <- nrow(data)
  } else {
    if (is.null(y)) stop("`y` is missing: use mk_tune(x, y, ...) or mk_tune(y ~ ., data).", call. = FALSE)
    response <- y
    n <- if (is.data.frame(x) || is.matrix(x)) nrow(x) else length(x)
  }
  if (is.matrix(response)) response <- drop(response)
  if (is.logical(response) || is.character(response)) response <- factor(response)
  if (length(response) != n) {
    stop(sprintf("The response has %d values but there are %d rows.", length(response), n),
      call. = FALSE
    )
  }
  if (!is.null(weights) && length(weights) != n) {
    stop(sprintf("`weights` must have one value per row (%d); it has %d.", n, length(weights)),
      call. = FALSE
    )
  }
  usable <- which(!is.na(response))
  fold_of <- rep(NA_integer_, n)
  fold_of[usable] <- .mk_fold_ids(response[usable], folds, seed)
  classification <- is.factor(response)
  metric <- if (classification) "misclassification rate" else "mean squared error"

  # one seed for every fit (drawn from R's generator unless given): the
  # combinations are compared on the same draws, and the final fit repeats them
  if (!"random_state" %in% names(ranges) && is.null(fixed$random_state)) {
    fixed$random_state <- .mk_with_seed(seed, .mk_random_state(NULL))
  } else if (!is.null(fixed$random_state)) {
    fixed$random_state <- .mk_random_state(fixed$random_state)
  }
  grid <- expand.grid(ranges, stringsAsFactors = FALSE, KEEP.OUT.ATTRS = FALSE)
  cv_fixed <- fixed
  cv_fixed$probability <- NULL # calibrating every fold fit would be wasted
  rows <- function(object, idx) {
    if (is.data.frame(object) || is.matrix(object)) object[idx, , drop = FALSE] else object[idx]
  }
  fit_rows <- function(params, idx) {
    args <- c(params, cv_fixed)
    if (!is.null(weights)) args$weights <- weights[idx]
    if (formula_interface) {
      do.call(mk_svm, c(list(x, data = data[idx, , drop = FALSE]), args))
    } else {
      do.call(mk_svm, c(list(rows(x, idx), rows(response, idx)), args))
    }
  }
  newdata_rows <- function(idx) if (formula_interface) data[idx, , drop = FALSE] else rows(x, idx)

  errors <- matrix(NA_real_, nrow(grid), folds)
  unseen_folds <- 0L
  failed <- rep(NA_character_, nrow(grid))
  for (g in seq_len(nrow(grid))) {
    params <- as.list(grid[g, , drop = FALSE])
    for (k in seq_len(folds)) {
      train <- which(!is.na(fold_of) & fold_of != k)
      test <- which(!is.na(fold_of) & fold_of == k)
      result <- tryCatch(
        {
          # the memory message of mk_svm: the final fit's says it once
          fit <- withCallingHandlers(fit_rows(params, train),
            missingkernels_memory_message = function(m) invokeRestart("muffleMessage")
          )
          # a level that only held-out rows have: missing there (counted,
          # one warning at the end instead of one per fold and combination)
          pred <- withCallingHandlers(
            predict(fit, newdata_rows(test)),
            missingkernels_UnknownCategoryWarning = function(w) {
              unseen_folds <<- unseen_folds + 1L
              invokeRestart("muffleWarning")
            }
          )
          truth <- response[test]
          if (classification) mean(as.character(pred) != as.character(truth)) else mean((truth - pred)^2)
        },
        error = function(e) structure(NA_real_, message = conditionMessage(e))
      )
      if (!is.null(attr(result, "message"))) {
        failed[g] <- attr(result, "message")
        break
      }
      errors[g, k] <- result
    }
  }
  if (unseen_folds) {
    warning(sprintf(
      paste0(
        "In %d held-out fold fit(s), predictors had levels that the fold's ",
        "training rows did not have; they were treated as missing entries ",
        "(handle_unknown = \"missing\")."
      ),
      unseen_folds
    ), call. = FALSE)
  }
  performances <- grid
  performances$error <- ifelse(is.na(failed), rowMeans(errors), NA_real_)
  performances$dispersion <- ifelse(is.na(failed), apply(errors, 1L, stats::sd), NA_real_)
  performances$failed <- failed
  if (all(!is.na(failed))) {
    stop("Every parameter combination failed; the first: ", failed[1], call. = FALSE)
  }
  best <- which.min(performances$error)
  best_parameters <- as.list(grid[best, , drop = FALSE])

  # the final model, through a call to mk_svm with the best parameters
  final <- cl
  final[[1L]] <- as.name("mk_svm")
  final$ranges <- NULL
  final$folds <- NULL
  final$seed <- NULL
  if (formula_interface) {
    names(final)[names(final) == "x"] <- "formula"
    final$y <- NULL
  }
  final$random_state <- fixed$random_state
  for (nm in names(best_parameters)) final[[nm]] <- best_parameters[[nm]]
  model <- eval(final, parent.frame())
  model$tune <- list(
    performances = performances,
    best_parameters = best_parameters,
    best_performance = performances$error[best],
    folds = fold_of,
    metric = metric,
    call = cl
  )
  class(model) <- c("mk_tune", class(model))
  model
}

# `expr` evaluated after set.seed(seed), the global stream then restored;
# with seed = NULL, evaluated on the global stream.
.mk_with_seed <- function(seed, expr) {
  if (!is.null(seed)) {
    old <- .mk_save_seed()
    on.exit(.mk_restore_seed(old))
    set.seed(seed)
  }
  expr
}

# Fold numbers 1..k for the rows of a response: stratified by class for a
# factor, in random order; `seed` leaves the global stream as it was.
.mk_fold_ids <- function(response, folds, seed = NULL) {
  .mk_with_seed(seed, .mk_fold_ids_drawn(response, folds))
}

.mk_fold_ids_drawn <- function(response, folds) {
  n <- length(response)
  if (n < folds) {
    stop(sprintf("%d-fold cross-validation needs at least %d rows with a response; there are %d.",
      folds, folds, n), call. = FALSE)
  }
  ids <- integer(n)
  groups <- if (is.factor(response)) split(seq_len(n), droplevels(response)) else list(seq_len(n))
  offset <- 0L
  for (rows in groups) {
    # continue the fold sequence across classes so the folds stay balanced
    labels <- ((seq_along(rows) - 1L + offset) %% folds) + 1L
    ids[rows] <- labels[sample.int(length(rows))]
    offset <- offset + length(rows)
  }
  ids
}
