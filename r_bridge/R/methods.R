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

#' Decision regions of a two-feature missing-data SVM
#'
#' For a model with exactly two numeric predictors (two columns in its
#' design matrix, each a variable of the data), draws with base graphics the
#' predicted class (classification) or value (regression) over a grid
#' spanning the observed training values, and the training rows on top:
#' complete rows as points coloured by their response, support vectors
#' marked by a cross, and rows missing one of the two values as ticks on the
#' axis of the value they have (rows missing both are not drawn). Other
#' models get a message saying so, and nothing is drawn.
#'
#' @param x A model fitted by \code{\link{mk_svm}}.
#' @param grid The number of grid points along each axis.
#' @param col Colours of the classes (classification) or of the predicted
#'   values from low to high (regression).
#' @param ... Passed to \code{\link[graphics]{image}}.
#' @return Invisibly, a list with the grid (\code{x}, \code{y}) and the
#'   predictions on it (\code{z}, a matrix), or \code{NULL} when nothing was
#'   drawn.
#' @examples
#' if (mk_available()) {
#'   set.seed(2)
#'   x <- cbind(a = rnorm(60), b = rnorm(60))
#'   y <- factor(ifelse(x[, 1]^2 + x[, 2]^2 > 1.2, "out", "in"))
#'   x[sample(120, 15)] <- NA
#'   fit <- mk_svm(x, y, C = 10)
#'   plot(fit)
#' }
#' @importFrom graphics plot
#' @export
plot.mk_svm <- function(x, grid = 100, col = NULL, ...) {
  vars <- .mk_plot_variables(x)
  if (is.null(vars)) {
    message(
      "plot() draws the decision regions of models with two numeric ",
      "predictors; this model has ", x$n_features, " design column(s) (",
      paste(utils::head(x$feature_names, 6), collapse = ", "),
      if (x$n_features > 6) ", ...", "). Fit a model on two numeric ",
      "predictors to see its regions, or use predict() on data of your choice."
    )
    return(invisible(NULL))
  }
  if (!is.numeric(grid) || length(grid) != 1L || is.na(grid) || grid < 2) {
    stop("`grid` must be one number of at least 2.", call. = FALSE)
  }
  grid <- as.integer(grid)
  xs <- x$x
  axis_values <- lapply(1:2, function(j) {
    r <- range(xs[, j], na.rm = TRUE)
    if (r[1] == r[2]) r <- r + c(-1, 1)
    pad <- 0.05 * diff(r)
    seq(r[1] - pad, r[2] + pad, length.out = grid)
  })
  points <- expand.grid(axis_values[[1]], axis_values[[2]])
  names(points) <- vars
  newdata <- if (x$design$kind == "matrix") {
    as.matrix(points)
  } else {
    points
  }
  pred <- predict(x, newdata)
  classification <- x$type == "classification"
  if (classification) {
    k <- length(x$levels)
    col <- col %||% grDevices::hcl.colors(k, "Set 2")
    col <- rep_len(col, k)
    z <- matrix(as.integer(pred), grid, grid)
    fill <- grDevices::adjustcolor(col, alpha.f = 0.35)
    graphics::image(axis_values[[1]], axis_values[[2]], z,
      col = fill, breaks = seq(0.5, k + 0.5, by = 1),
      xlab = vars[1], ylab = vars[2], ...
    )
    point_col <- col[as.integer(x$y)]
  } else {
    z <- matrix(as.double(pred), grid, grid)
    col <- col %||% grDevices::hcl.colors(24, "Blues 3", rev = TRUE)
    graphics::image(axis_values[[1]], axis_values[[2]], z,
      col = col, xlab = vars[1], ylab = vars[2], ...
    )
    graphics::contour(axis_values[[1]], axis_values[[2]], z, add = TRUE, col = "grey40")
    ramp <- grDevices::colorRamp(col)
    span <- range(z)
    rel <- (x$y - span[1]) / max(diff(span), .Machine$double.eps)
    point_col <- grDevices::rgb(ramp(pmin(pmax(rel, 0), 1)), maxColorValue = 255)
  }
  complete <- stats::complete.cases(xs)
  graphics::points(xs[complete, 1], xs[complete, 2],
    pch = 21, bg = point_col[complete], col = "grey20"
  )
  sv <- intersect(x$index, which(complete))
  if (length(sv)) graphics::points(xs[sv, 1], xs[sv, 2], pch = 4, cex = 1.3)
  only1 <- !is.na(xs[, 1]) & is.na(xs[, 2])
  only2 <- is.na(xs[, 1]) & !is.na(xs[, 2])
  rug_col <- if (classification) point_col else rep("grey20", length(point_col))
  if (any(only1)) graphics::rug(xs[only1, 1], side = 1, col = rug_col[only1], lwd = 2)
  if (any(only2)) graphics::rug(xs[only2, 2], side = 2, col = rug_col[only2], lwd = 2)
  if (classification) {
    graphics::legend("topright", legend = x$levels, pt.bg = col, pch = 21, bg = "white", cex = 0.8)
  }
  invisible(list(x = axis_values[[1]], y = axis_values[[2]], z = z))
}

# The names of the two variables a grid must give, or NULL when the model
# does not have exactly two numeric predictors that are its design columns.
.mk_plot_variables <- function(x) {
  if (x$n_features != 2L || is.data.frame(x$x)) { # a nominal or ordered column
    return(NULL)
  }
  if (x$design$kind == "matrix") {
    return(x$feature_names %||% c("V1", "V2"))
  }
  vars <- all.vars(stats::delete.response(x$design$terms))
  if (length(vars) == 2L && identical(vars, x$feature_names)) vars else NULL
}
