# mk_svm's formula method: the model frame (na.action on the response
# only), the design of the predictors, then the fit of svm.R.

#' @rdname mk_svm
#' @order 2
#' @export
mk_svm.formula <- function(formula, data = NULL, ..., subset, weights,
                           na.action = stats::na.omit) {
  cl <- match.call()
  .mk_check_arguments(...names(), ...length(), formula = TRUE)
  frame <- .mk_model_frame(
    match.call(expand.dots = FALSE), c("formula", "data", "subset", "weights"),
    parent.frame()
  )
  mf <- frame$frame
  mt <- frame$terms
  y <- frame$y
  rows <- .mk_data_rows(mf, data)
  # na.action concerns the response only: rows with missing predictors stay
  na <- .mk_response_na(y, na.action, rownames(mf), rows)
  if (!is.null(na$action)) {
    mf <- mf[na$keep, , drop = FALSE]
    y <- stats::model.response(mf)
    rows <- rows[na$keep]
  }
  attr(mf, "na.action") <- na$action
  w <- stats::model.weights(mf)
  built <- .mk_table_fit(mt, mf, if (is.data.frame(data)) names(data))
  x <- built$x
  if (!ncol(x)) stop("The formula has no predictors.", call. = FALSE)
  fit <- .mk_svm_fit(x, y, built$design, ...,
    weights = w, epsilon_given = "epsilon" %in% ...names(), row_numbers = rows
  )
  fit$na.action <- na$action
  cl[[1L]] <- as.name("mk_svm") # update() calls the generic
  fit$call <- cl
  fit$formula <- stats::formula(mt)
  fit$terms <- mt
  fit$model <- mf
  fit
}

# The number of each row of a model frame in `data` (for messages): rows
# of `data` when it is a data frame (the frame keeps their row names, also
# after `subset`), else the frame's own row names when they are numbers.
.mk_data_rows <- function(mf, data = NULL) {
  rows <- if (is.data.frame(data)) {
    match(rownames(mf), rownames(data))
  } else {
    suppressWarnings(as.integer(rownames(mf)))
  }
  if (anyNA(rows) || length(rows) != nrow(mf)) rows <- seq_len(nrow(mf))
  rows
}

# The model frame of a formula method (mk_svm, mk_compare): `call` is the
# method's match.call(expand.dots = FALSE), `args` the arguments passed on
# to model.frame(), `env` the caller's frame. Rows with NA stay (na.pass:
# na.action concerns the response only, applied by the caller); the
# formula must have a response and the predictors usable column types.
# list(frame, terms, response (its column name), y).
.mk_model_frame <- function(call, args, env) {
  mf <- call[c(1L, match(args, names(call), 0L))]
  mf$na.action <- quote(stats::na.pass)
  mf[[1L]] <- quote(stats::model.frame)
  mf <- eval(mf, env)
  mt <- attr(mf, "terms")
  if (attr(mt, "response") == 0L) {
    stop("The formula has no response: use `response ~ predictors`.", call. = FALSE)
  }
  if (!is.null(attr(mt, "offset"))) {
    # model.frame() keeps an offset aside, so it would be dropped silently
    stop(
      "The formula has an offset(): an SVM has no linear predictor to offset. ",
      "Drop it, or give the variable as a predictor (e.g. `y ~ x + z`).",
      call. = FALSE
    )
  }
  # Variables the formula names but no term uses (dt in `y ~ . - dt`) are
  # left out: their class does not matter, and new data need not have them.
  fac <- attr(mt, "factors")
  labels <- attr(mt, "term.labels")
  if (length(fac) && length(labels)) {
    unused <- rownames(fac)[rowSums(fac != 0) == 0L]
    unused <- setdiff(unused, names(mf)[attr(mt, "response")])
    if (length(unused)) {
      mt <- mt[seq_along(labels)]
      mf <- mf[setdiff(names(mf), unused)]
      attr(mf, "terms") <- mt
    }
  }
  .mk_check_columns(mf[-1L], "the predictors")
  list(
    frame = mf, terms = mt, response = names(mf)[attr(mt, "response")],
    y = stats::model.response(mf)
  )
}
