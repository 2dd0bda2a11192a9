# The model-object conventions of R's modelling functions for mk_svm fits:
# terms, model.frame, formula, nobs, residuals and plot (update() works
# through the stored call, which names the generic mk_svm).

.mk_need_formula <- function(object, what) {
  if (is.null(object$terms)) {
    stop(sprintf(
      paste0(
        "%s() needs a model fitted with the formula interface, ",
        "mk_svm(y ~ ., data); this one was fitted with mk_svm(x, y)."
      ),
      what
    ), call. = FALSE)
  }
}

#' Model-object methods for missing-data SVMs
#'
#' The usual accessors of R's modelling functions. \code{terms},
#' \code{formula} and \code{model.frame} need a model fitted with the formula
#' interface; \code{model.frame} returns the training rows actually used
#' (rows with a missing response removed by \code{na.action}, rows with
#' missing predictors kept). \code{nobs} is the number of training rows.
#' \code{residuals} are the training responses minus the fitted values, for
#' regression only.
#'
#' \code{update} refits with changed arguments, e.g. \code{update(fit, C =
#' 10)} or \code{update(fit, . ~ . - age)}: it evaluates the stored call
#' (\code{fit$call}), with the changes, again \strong{in the environment
#' \code{update()} is called from}, as \code{update()} does for \code{lm}.
#' The names in the call, such as \code{d} in \code{data = d}, are looked up
#' there, not where the model was fitted, and the data are read again as
#' they are now. For a model fitted inside a function on data local to it,
#' give the data again, \code{update(fit, data = d, C = 10)}: without them
#' \code{update()} stops, naming the object it cannot find, or, if an
#' object of that name exists where \code{update()} is called, refits on
#' that one. Variables of the formula that are not columns of the data are
#' looked up in the environment of the formula, as in \code{lm}. Without
#' \code{random_state} in the call, the refit draws a new seed from R's
#' generator (see \code{\link{mk_svm}}); \code{update(fit, random_state =
#' fit$random_state)} repeats the draws of the fit.
#'
#' @param x,object,formula A model fitted by \code{\link{mk_svm}}.
#' @param formula. For \code{update}: a changed formula, e.g. \code{. ~ . -
#'   age} (formula fits only).
#' @param evaluate For \code{update}: \code{FALSE} returns the updated call
#'   instead of evaluating it.
#' @param ... For \code{update}: the changed arguments of
#'   \code{\link{mk_svm}}; unused by the other methods.
#' @return \code{terms}: the terms object; \code{formula}: the model
#'   formula; \code{model.frame}: a data frame with the response and the
#'   predictor variables of the training rows; \code{nobs}: an integer;
#'   \code{residuals}: a numeric vector, one value per training row (with
#'   \code{na.action = na.exclude}, \code{NA} for the rows whose response was
#'   missing).
#' @seealso \code{\link{mk_svm}}, \code{\link{plot.mk_svm}},
#'   \code{\link{predict.mk_svm}}
#' @examples
#' if (mk_available()) {
#'   set.seed(1)
#'   df <- data.frame(a = rnorm(40), b = rnorm(40))
#'   df$y <- df$a - df$b + rnorm(40, sd = 0.2)
#'   df$a[c(3, 8, 21)] <- NA
#'   fit <- mk_svm(y ~ a + b, data = df)
#'   formula(fit)
#'   nobs(fit)
#'   head(model.frame(fit))
#'   head(residuals(fit))
#'   fit10 <- update(fit, C = 10)
#'   fit10$C
#' }
#' @name mk_svm-methods
NULL

#' @rdname mk_svm-methods
#' @importFrom stats terms
#' @export
terms.mk_svm <- function(x, ...) {
  .mk_need_formula(x, "terms")
  x$terms
}

#' @rdname mk_svm-methods
#' @importFrom stats formula
#' @export
formula.mk_svm <- function(x, ...) {
  .mk_need_formula(x, "formula")
  x$formula
}

#' @rdname mk_svm-methods
#' @importFrom stats model.frame
#' @export
model.frame.mk_svm <- function(formula, ...) {
  .mk_need_formula(formula, "model.frame")
  formula$model
}

#' @rdname mk_svm-methods
#' @importFrom stats nobs
#' @export
nobs.mk_svm <- function(object, ...) object$n

#' @rdname mk_svm-methods
#' @importFrom stats update
#' @export
update.mk_svm <- function(object, formula., ..., evaluate = TRUE) {
  call <- object$call
  if (is.null(call)) stop("update(): this model has no stored call.", call. = FALSE)
  if (!missing(formula.)) {
    .mk_need_formula(object, "update")
    call$formula <- stats::update(stats::formula(object), formula.)
  }
  changes <- match.call(expand.dots = FALSE)$...
  for (name in names(changes)) {
    if (!nzchar(name)) {
      stop("update(): give the changed arguments by name, e.g. update(fit, C = 10).",
        call. = FALSE
      )
    }
    call[[name]] <- changes[[name]]
  }
  if (!evaluate) {
    return(call)
  }
  env <- parent.frame()
  tryCatch(eval(call, env), error = function(e) {
    advice <- .mk_update_error(e, call)
    if (is.null(advice)) stop(e)
    stop(advice, call. = FALSE)
  })
}

# The error of a refit by update(): an object of the call that is not found
# where update() was called from (a fit made inside a function) gets advice;
# NULL for other errors.
.mk_update_error <- function(e, call) {
  msg <- conditionMessage(e)
  name <- sub("^object '(.*)' not found$", "\\1", msg)
  if (identical(name, msg)) {
    return(NULL)
  }
  args <- as.list(call)[-1L]
  holder <- names(args)[vapply(args, function(a) name %in% all.vars(a), NA)]
  holder <- holder[!is.na(holder) & nzchar(holder)]
  if (!length(holder)) {
    return(NULL)
  }
  sprintf(
    paste0(
      "update() evaluates the model's call again in the environment it is ",
      "called from (as for lm), and `%s` (in `%s = `) is not found there: was ",
      "the model fitted inside a function? Give it again, e.g. ",
      "update(fit, %s = <your %s>)."
    ),
    name, holder[1], holder[1], if (identical(holder[1], "data")) "data frame" else holder[1]
  )
}

#' @rdname mk_svm-methods
#' @importFrom stats residuals
#' @export
residuals.mk_svm <- function(object, ...) {
  if (object$type != "regression") {
    stop("residuals() are defined for regression models; this is a classifier ",
      "(compare fitted(fit) with the response instead).",
      call. = FALSE
    )
  }
  stats::naresid(object$na.action, unname(object$y) - unname(object$fitted))
}
