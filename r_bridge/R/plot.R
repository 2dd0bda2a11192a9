#' Decision regions of a missing-data SVM
#'
#' Draws with base graphics the predicted class (classification) or value
#' (regression) over a grid of two numeric predictors spanning their
#' observed training values, and the training rows on top: complete rows
#' (in the two predictors) as points coloured by their response, support
#' vectors marked by a cross, and rows missing one of the two values as
#' ticks on the axis of the value they have (rows missing both are not
#' drawn). A legend gives the classes, or for regression the colours of the
#' predicted values.
#'
#' With more than two predictors, the two drawn are chosen by
#' \code{formula} (as in \code{e1071::plot.svm}, \code{formula = b ~ a}
#' puts \code{a} on the horizontal and \code{b} on the vertical axis;
#' default: the first two numeric predictors) and the others are held
#' fixed at the values in \code{slice}. A predictor not given in
#' \code{slice} is left \strong{missing}: the expected kernel integrates over
#' it under the fitted density, given the two drawn values, so the picture
#' is the model's prediction when only those two are known (e1071 sets such
#' predictors to 0 instead; give \code{slice} to do that). The subtitle
#' says which predictors are fixed and which integrated out. The two drawn
#' predictors must be numeric variables entering the model as themselves
#' (not only through a transformation such as \code{log(x)}); other models
#' get a message saying so, and nothing is drawn.
#'
#' @param x A model fitted by \code{\link{mk_svm}}.
#' @param formula Optional, \code{vertical ~ horizontal}: the two numeric
#'   predictors to draw.
#' @param slice A named list of values for the other predictors (numbers,
#'   or level labels for factors), e.g. \code{list(Temp = 80)}; those not
#'   named are missing (integrated out).
#' @param grid The number of grid points along each axis.
#' @param col Colours of the classes (classification) or of the predicted
#'   values from low to high (regression).
#' @param ... Passed to \code{\link[graphics]{image}}.
#' @return Invisibly, a list with the grid (\code{x}, \code{y}), the
#'   predictions on it (\code{z}, a matrix), the names of the two
#'   predictors (\code{variables}), the \code{slice} used (with
#'   \code{NA} for the integrated ones) and the \code{legend}
#'   (\code{values} and \code{colours}), or \code{NULL} when nothing was
#'   drawn.
#' @examples
#' if (mk_available()) {
#'   set.seed(2)
#'   x <- cbind(a = rnorm(60), b = rnorm(60))
#'   y <- factor(ifelse(x[, 1]^2 + x[, 2]^2 > 1.2, "out", "in"))
#'   x[sample(120, 15)] <- NA
#'   fit <- mk_svm(x, y, C = 10)
#'   plot(fit)
#'   aq <- mk_svm(Ozone ~ Solar.R + Wind + Temp, data = airquality)
#'   plot(aq, Temp ~ Wind) # Solar.R integrated out
#'   plot(aq, Temp ~ Wind, slice = list(Solar.R = 250))
#' }
#' @importFrom graphics plot
#' @export
plot.mk_svm <- function(x, formula = NULL, slice = list(), grid = 100, col = NULL, ...) {
  source <- .mk_plot_source(x)
  numeric_vars <- names(source)[vapply(source, is.numeric, TRUE)]
  vars <- .mk_plot_axes(formula, numeric_vars, x)
  if (is.null(vars)) {
    message(
      "plot() draws the decision regions over two numeric predictors that ",
      "enter the model as themselves; this model has ",
      length(numeric_vars), " such predictor(s)",
      if (length(numeric_vars)) paste0(" (", paste(numeric_vars, collapse = ", "), ")"),
      " among its ", x$n_features, " design column(s) (",
      paste(utils::head(x$feature_names, 6), collapse = ", "),
      if (x$n_features > 6) ", ...", "). Use predict() on data of your choice."
    )
    return(invisible(NULL))
  }
  if (!is.numeric(grid) || length(grid) != 1L || is.na(grid) || grid < 2) {
    stop("`grid` must be one number of at least 2.", call. = FALSE)
  }
  grid <- as.integer(grid)
  # every other predictor variable, also those entering only transformed
  all_vars <- if (!is.null(x$model)) all.vars(x$design$terms) else names(source)
  others <- setdiff(all_vars, vars)
  slice <- .mk_plot_slice(slice, others, vars, source)
  axis_values <- lapply(vars, function(v) {
    r <- range(source[[v]], na.rm = TRUE)
    if (r[1] == r[2]) r <- r + c(-1, 1)
    pad <- 0.05 * diff(r)
    seq(r[1] - pad, r[2] + pad, length.out = grid)
  })
  points <- expand.grid(axis_values[[1]], axis_values[[2]])
  names(points) <- vars
  newdata <- .mk_plot_newdata(points, source, slice)
  if (x$design$kind == "matrix") newdata <- as.matrix(newdata)
  pred <- predict(x, newdata)
  classification <- x$type == "classification"
  xs <- cbind(source[[vars[1]]], source[[vars[2]]])
  if (classification) {
    k <- length(x$levels)
    col <- rep_len(col %||% grDevices::hcl.colors(k, "Set 2"), k)
    z <- matrix(as.integer(pred), grid, grid)
    graphics::image(axis_values[[1]], axis_values[[2]], z,
      col = grDevices::adjustcolor(col, alpha.f = 0.35), breaks = seq(0.5, k + 0.5, by = 1),
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
    colour_of <- .mk_value_colours(col, range(z))
    point_col <- colour_of(x$y)
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
  legend <- if (classification) {
    list(values = x$levels, colours = col)
  } else {
    values <- pretty(range(z), n = 5)
    values <- values[values >= min(z) & values <= max(z)]
    if (length(values) < 2L) values <- range(z)
    list(values = values, colours = colour_of(values))
  }
  if (classification) {
    graphics::legend("topright", legend = x$levels, pt.bg = col, pch = 21, bg = "white", cex = 0.8)
  } else {
    graphics::legend("topright",
      legend = format(legend$values), fill = legend$colours, bg = "white", cex = 0.8,
      title = .mk_response_label(x)
    )
  }
  if (length(others)) {
    graphics::mtext(.mk_slice_text(slice), side = 3, line = 0.3, cex = 0.75)
  }
  invisible(list(
    x = axis_values[[1]], y = axis_values[[2]], z = z, variables = vars, slice = slice,
    legend = legend
  ))
}

# The predictor variables of the training rows, by name: the model frame's
# variables that enter as themselves (formula fits), or the columns of the
# training data (data frame or matrix fits).
.mk_plot_source <- function(x) {
  if (!is.null(x$model)) {
    mf <- x$model
    vars <- all.vars(stats::delete.response(x$design$terms))
    keep <- intersect(names(mf)[-attr(x$terms, "response")], vars)
    return(as.list(mf[keep]))
  }
  if (is.data.frame(x$x)) {
    return(as.list(x$x))
  }
  names <- x$feature_names %||% paste0("V", seq_len(ncol(x$x)))
  stats::setNames(lapply(seq_len(ncol(x$x)), function(j) unname(x$x[, j])), names)
}

# The two variables drawn, horizontal then vertical, or NULL when there are
# not two.
.mk_plot_axes <- function(formula, numeric_vars, x) {
  if (is.null(formula)) {
    return(if (length(numeric_vars) >= 2L) numeric_vars[1:2])
  }
  if (!inherits(formula, "formula") || length(formula) != 3L ||
    length(all.vars(formula[[2]])) != 1L || length(all.vars(formula[[3]])) != 1L) {
    stop("`formula` must be `vertical ~ horizontal` with one predictor on each side, ",
      "e.g. Temp ~ Wind.",
      call. = FALSE
    )
  }
  vars <- c(all.vars(formula[[3]]), all.vars(formula[[2]]))
  bad <- setdiff(vars, numeric_vars)
  if (length(bad)) {
    .mk_stop_names(
      "plot() draws numeric predictors that enter the model as themselves; %s %s not one (those: %s).",
      bad, numeric_vars
    )
  }
  if (vars[1] == vars[2]) stop("`formula` names the same predictor twice.", call. = FALSE)
  vars
}

# The values of the other predictors: those in `slice`, checked; NA (missing,
# integrated out) for the rest.
.mk_plot_slice <- function(slice, others, vars, source) {
  if (!is.list(slice) && !(is.atomic(slice) && !is.null(names(slice)))) {
    stop("`slice` must be a named list, e.g. list(Temp = 80).", call. = FALSE)
  }
  slice <- as.list(slice)
  if (length(slice) && (is.null(names(slice)) || any(!nzchar(names(slice))))) {
    stop("Every value in `slice` must be named by its predictor.", call. = FALSE)
  }
  drawn <- intersect(names(slice), vars)
  if (length(drawn)) {
    stop("`slice` fixes ", paste0("'", drawn, "'", collapse = ", "),
      ", which the plot draws on an axis.",
      call. = FALSE
    )
  }
  unknown <- setdiff(names(slice), others)
  if (length(unknown)) {
    .mk_stop_names(
      "`slice` names %s, which %s not a predictor of the model (the others: %s).",
      unknown, others
    )
  }
  out <- stats::setNames(vector("list", length(others)), others)
  for (v in others) {
    value <- slice[[v]]
    if (is.null(value)) {
      out[v] <- list(NA)
      next
    }
    if (length(value) != 1L) stop(sprintf("`slice$%s` must be one value.", v), call. = FALSE)
    column <- source[[v]]
    if ((is.null(column) || is.numeric(column)) && !is.numeric(value)) {
      stop(sprintf("`slice$%s` must be a number: '%s' is numeric.", v, v), call. = FALSE)
    }
    out[[v]] <- value
  }
  out
}

# Stops with `template`, whose three %s are the quoted `bad` names, "is" or
# "are", and the `valid` ones.
.mk_stop_names <- function(template, bad, valid) {
  stop(sprintf(
    template, paste0("'", bad, "'", collapse = ", "), if (length(bad) > 1L) "are" else "is",
    if (length(valid)) paste(valid, collapse = ", ") else "none"
  ), call. = FALSE)
}

# The grid as new data: the two drawn columns, each other predictor at its
# slice value (NA: missing), of the class of its training column.
.mk_plot_newdata <- function(points, source, slice) {
  n <- nrow(points)
  out <- points
  for (v in names(slice)) {
    column <- source[[v]]
    value <- slice[[v]]
    out[[v]] <- if (is.factor(column)) {
      factor(rep(as.character(value), n), levels = union(levels(column), stats::na.omit(as.character(value))),
        ordered = is.ordered(column)
      )
    } else if (is.logical(column)) {
      rep(as.logical(value), n)
    } else {
      rep(as.double(value), n)
    }
  }
  out
}

.mk_slice_text <- function(slice) {
  fixed <- names(slice)[!vapply(slice, function(v) length(v) == 1L && is.na(v), TRUE)]
  free <- setdiff(names(slice), fixed)
  paste(c(
    if (length(fixed)) {
      paste(paste0(fixed, " = ", vapply(slice[fixed], function(v) format(v), "")), collapse = ", ")
    },
    if (length(free)) paste0(paste(free, collapse = ", "), ": missing (integrated out)")
  ), collapse = "; ")
}

# A function mapping values to the colours of `col` over `span`.
.mk_value_colours <- function(col, span) {
  ramp <- grDevices::colorRamp(col)
  function(v) {
    rel <- (v - span[1]) / max(diff(span), .Machine$double.eps)
    grDevices::rgb(ramp(pmin(pmax(rel, 0), 1)), maxColorValue = 255)
  }
}

.mk_response_label <- function(x) {
  if (!is.null(x$terms)) {
    deparse(attr(x$terms, "variables")[[attr(x$terms, "response") + 1L]])
  } else {
    "predicted"
  }
}
