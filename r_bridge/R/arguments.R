# Arguments of mk_svm checked in R, before Python is called: names, the
# response's missing values (na.action) and the weights.

# The arguments of mk_svm.default that the formula method takes through `...`.
.mk_r_arguments <- c(
  "kernel", "density", "gamma", "C", "epsilon", "scale", "density_params",
  "probability", "calibration", "calibration_folds", "handle_unknown", "ordered"
)

# The parameters of the Python estimators passed through `...` (the others,
# kernel, density, gamma, C, epsilon and handle_unknown, are arguments of
# mk_svm; nominal_features follows the classes of the R columns). A test
# compares them with MissingKernelSVC/SVR().get_params().
.mk_python_arguments <- list(
  classification = c(
    "metric", "kernel_params", "class_weight", "tol", "max_iter", "shrinking",
    "cache_size", "decision_function_shape", "break_ties", "route",
    "n_kernel_features", "random_state", "verbose"
  ),
  regression = c(
    "metric", "kernel_params", "tol", "max_iter", "shrinking", "cache_size",
    "route", "n_kernel_features", "random_state", "verbose"
  )
)

# e1071::svm's names for what mk_svm spells differently or does elsewhere.
.mk_e1071_hints <- c(
  cost = "e1071's `cost` is `C` here",
  class.weights = "e1071's `class.weights` is `class_weight` here",
  tolerance = "e1071's `tolerance` is `tol` here",
  cachesize = "e1071's `cachesize` is `cache_size` here",
  cross = "mk_tune() chooses parameters by cross-validation",
  fitted = "the fitted values are always kept: fitted(fit)",
  type = "the task follows the response: a factor for classification, numeric for regression",
  nu = "nu-SVMs are not available; use C",
  degree = "polynomial kernels take kernel_params = list(degree = ...)",
  coef0 = "polynomial kernels take kernel_params = list(coef0 = ...)",
  n_components = paste0(
    "the number of random kernel features is `n_kernel_features`; a density's ",
    "number of components goes in density_params = list(n_components = ...)"
  ),
  nominal_features = paste0(
    "the nominal columns are the factor, character and logical predictors: ",
    "convert a column with factor() to make it nominal, with as.numeric() to ",
    "make it numeric"
  )
)

# Stops with an R error naming each unknown argument and the accepted ones.
# `formula`: checking the dots of the formula method (TRUE) or of the default
# method (FALSE), for either task; `task`: checking for one task.
.mk_check_arguments <- function(dots, n = length(dots), formula = NULL, task = NULL) {
  if (!n) {
    return(invisible())
  }
  if (is.null(dots) || any(!nzchar(dots))) {
    stop("Every argument of mk_svm() after the data must be named (name = value); ",
      if (is.null(dots)) n else sum(!nzchar(dots)), " is not.",
      call. = FALSE
    )
  }
  python <- if (is.null(task)) {
    unique(unlist(.mk_python_arguments))
  } else {
    .mk_python_arguments[[task]]
  }
  own <- if (isTRUE(formula)) {
    c("formula", "data", "subset", "weights", "na.action", .mk_r_arguments)
  } else {
    c("x", "y", .mk_r_arguments, "weights", "na.action")
  }
  accepted <- if (is.null(task)) c(if (isTRUE(formula)) .mk_r_arguments, python) else python
  unknown <- setdiff(dots, accepted)
  if (!length(unknown)) {
    return(invisible())
  }
  if (!is.null(task) && task == "regression" && "class_weight" %in% unknown) {
    stop("`class_weight` is for classification; the response is numeric.", call. = FALSE)
  }
  hints <- .mk_e1071_hints[intersect(unknown, names(.mk_e1071_hints))]
  stop(sprintf(
    "Unknown argument%s to mk_svm(): %s%s.\nmk_svm() accepts %s, and the parameters of the Python estimator: %s.",
    if (length(unknown) > 1L) "s" else "",
    paste0("`", unknown, "`", collapse = ", "),
    if (length(hints)) paste0(" (", paste(hints, collapse = "; "), ")") else "",
    paste(own, collapse = ", "),
    paste(if (is.null(task)) {
      unique(unlist(.mk_python_arguments))
    } else {
      python
    }, collapse = ", ")
  ), call. = FALSE)
}

# Applies `na.action` to the response only. Returns list(keep, action):
# `keep` the rows to train on, `action` the "na.action" attribute (class
# "omit" or "exclude") or NULL when no row was dropped. `row_numbers`: the
# numbers of the rows of y in the user's data (for messages).
.mk_response_na <- function(y, na.action, row_names = NULL, row_numbers = seq_along(y)) {
  if (is.character(na.action) && length(na.action) == 1L) {
    na.action <- get(na.action, mode = "function", envir = parent.frame(2L))
  }
  if (!is.function(na.action)) {
    stop("`na.action` must be a function such as na.omit, na.exclude or na.fail.",
      call. = FALSE
    )
  }
  n <- length(y)
  if (!anyNA(y)) {
    return(list(keep = rep(TRUE, n), action = NULL))
  }
  frame <- data.frame(.response = seq_len(n))
  frame$.response <- y
  if (!is.null(row_names) && length(row_names) == n) {
    attr(frame, "row.names") <- row_names
  }
  kept <- tryCatch(na.action(frame), error = function(e) {
    stop(sprintf(
      paste0(
        "The response has %d missing value(s) (%s) and `na.action` ",
        "refused them (\"%s\"). Use na.action = na.omit or na.exclude to ",
        "train on the other rows (rows with missing predictors are kept ",
        "either way)."
      ),
      sum(is.na(y)), .mk_rows_text(row_numbers[is.na(y)]),
      trimws(conditionMessage(e))
    ), call. = FALSE)
  })
  action <- attr(kept, "na.action")
  if (is.null(action)) {
    return(list(keep = rep(TRUE, n), action = NULL)) # e.g. na.pass
  }
  keep <- rep(TRUE, n)
  keep[as.integer(action)] <- FALSE
  list(keep = keep, action = action)
}

# "row 7" or "rows 2, 4, 9 and 3 more": rows of the user's data.
.mk_rows_text <- function(rows, limit = 10L) {
  shown <- paste(utils::head(rows, limit), collapse = ", ")
  more <- length(rows) - limit
  paste0(
    if (length(rows) == 1L) "row " else "rows ", shown,
    if (more > 0L) sprintf(" and %d more", more) else ""
  )
}

# Checked case weights: NULL or a double vector of length n, finite,
# non-negative, not all zero. `row_numbers`: the numbers of the training rows
# in the user's data (for messages).
.mk_weights <- function(weights, n, row_numbers = seq_len(n)) {
  if (is.null(weights)) {
    return(NULL)
  }
  if (!is.numeric(weights) || length(weights) != n) {
    stop(sprintf(
      "`weights` must be a numeric vector with one value per training row (%d); it has %d.",
      n, length(weights)
    ), call. = FALSE)
  }
  bad <- which(!is.finite(weights) | weights < 0)
  if (length(bad)) {
    stop(sprintf(
      "`weights` must be finite and non-negative; at %s of the data they are not.",
      .mk_rows_text(row_numbers[bad])
    ), call. = FALSE)
  }
  if (all(weights == 0)) stop("`weights` are all zero.", call. = FALSE)
  as.double(unname(weights))
}
