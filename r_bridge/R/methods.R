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
#' regression only. \code{update} refits with changed arguments, e.g.
#' \code{update(fit, C = 10)} or \code{update(fit, . ~ . - age)}, evaluating
#' the stored call again (the data are taken from where they were found at
#' fitting time).
#'
#' @param x,object,formula A model fitted by \code{\link{mk_svm}}.
#' @param ... Unused.
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
