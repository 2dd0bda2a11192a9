#' The parameter search of mk_tune: print, plot, autoplot, tidy
#'
#' A model returned by \code{\link{mk_tune}} is an \code{"mk_svm"} model
#' (with the best parameters, fitted on all rows) of class
#' \code{c("mk_tune", "mk_svm")}: \code{predict}, \code{summary},
#' \code{glance} and the other methods of \code{\link{mk_svm}} work on it.
#' These methods show the search itself.
#'
#' \code{print} gives the cross-validation (folds, metric), the best
#' parameters and error, the table of all combinations, then the model.
#' \code{plot} draws the mean cross-validated error against the first tuned
#' numeric parameter (on a log scale when its values span more than a
#' factor of 10), one line per value of a second parameter, with bars of
#' plus and minus one standard deviation over the folds, the best
#' combination circled; \code{plot(x, what = "regions")} draws the model's
#' decision regions instead (\code{\link{plot.mk_svm}}). \code{autoplot}
#' draws the same with \pkg{ggplot2} (needs ggplot2, which is suggested,
#' not required). \code{tidy} returns the table of combinations: the
#' parameters, \code{error} (mean over the folds), \code{dispersion} (their
#' standard deviation), \code{failed} (the error message of a fit that
#' failed, else \code{NA}) and \code{best} (logical); \code{tidy(x,
#' component = "support_vectors")} (or \code{"parameters"}) gives the
#' model's, as for \code{\link[=mk_svm-tidiers]{mk_svm}}.
#'
#' @param x,object A model returned by \code{\link{mk_tune}}.
#' @param what \code{"performance"} (the search) or \code{"regions"} (the
#'   decision regions of the model).
#' @param component \code{"performance"}, \code{"support_vectors"} or
#'   \code{"parameters"}.
#' @param ... For \code{plot}, passed on to \code{\link[graphics]{plot}}
#'   (or to \code{\link{plot.mk_svm}} with \code{what = "regions"}); else
#'   unused.
#' @return \code{print} and \code{plot}: \code{x}, invisibly; \code{autoplot}:
#'   a ggplot object; \code{tidy}: a tibble (a data frame without the tibble
#'   package).
#' @examples
#' if (mk_available()) {
#'   tuned <- mk_tune(Ozone ~ Solar.R + Wind + Temp, data = airquality,
#'     ranges = list(C = c(0.5, 2, 8), gamma = c(0.1, 0.5)), folds = 3, seed = 1)
#'   tuned
#'   tidy(tuned)
#'   plot(tuned)
#'   if (requireNamespace("ggplot2", quietly = TRUE)) ggplot2::autoplot(tuned)
#' }
#' @export
print.mk_tune <- function(x, ...) {
  tune <- x$tune
  cat(sprintf(
    "Parameter tuning of mk_svm by %d-fold cross-validation (%s)\n",
    max(tune$folds, na.rm = TRUE), tune$metric
  ))
  best <- tune$best_parameters
  cat("Best parameters:",
    paste(names(best), vapply(best, format, ""), sep = " = ", collapse = ", "), "\n")
  cat(sprintf("Best performance: %.4g\n", tune$best_performance))
  perf <- tune$performances
  shown <- perf[, setdiff(names(perf), if (all(is.na(perf$failed))) "failed"), drop = FALSE]
  cat("\nAll combinations (error: mean over folds; dispersion: their sd):\n")
  print(utils::head(shown, 20L), row.names = FALSE, digits = 4)
  if (nrow(shown) > 20L) cat(sprintf("... and %d more (tidy(x) has all)\n", nrow(shown) - 20L))
  cat("\nThe model refitted on all rows with the best parameters:\n")
  NextMethod()
  invisible(x)
}

#' @rdname print.mk_tune
#' @export
plot.mk_tune <- function(x, what = c("performance", "regions"), ...) {
  what <- match.arg(what)
  if (what == "regions") {
    return(plot.mk_svm(x, ...))
  }
  d <- .mk_tune_plot_data(x)
  perf <- d$data
  xs <- perf[[d$x]]
  groups <- if (is.null(d$group)) list(all = seq_len(nrow(perf))) else split(seq_len(nrow(perf)), perf[[d$group]])
  col <- grDevices::hcl.colors(max(length(groups), 2L), "Dark 3")[seq_along(groups)]
  lo <- perf$error - perf$dispersion
  hi <- perf$error + perf$dispersion
  ylim <- range(c(lo, hi, perf$error), na.rm = TRUE)
  graphics::plot(xs, perf$error,
    type = "n", log = if (d$log) "x" else "", ylim = ylim,
    xlab = d$x, ylab = paste("cross-validated", x$tune$metric), ...
  )
  for (k in seq_along(groups)) {
    i <- groups[[k]][order(xs[groups[[k]]])]
    graphics::lines(xs[i], perf$error[i], type = "b", pch = 19, col = col[k])
    ok <- i[is.finite(lo[i]) & is.finite(hi[i]) & hi[i] > lo[i]]
    if (length(ok)) {
      graphics::arrows(xs[ok], lo[ok], xs[ok], hi[ok],
        angle = 90, code = 3, length = 0.03, col = col[k]
      )
    }
  }
  best <- which(perf$best)
  graphics::points(xs[best], perf$error[best], cex = 2.2, lwd = 2)
  if (!is.null(d$group)) {
    graphics::legend("topright",
      legend = paste(d$group, "=", names(groups)), col = col, lwd = 2, pch = 19,
      bg = "white", cex = 0.8
    )
  }
  invisible(x)
}

#' @rdname print.mk_tune
#' @exportS3Method ggplot2::autoplot
autoplot.mk_tune <- function(object, ...) {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stop("autoplot() needs the ggplot2 package: install.packages(\"ggplot2\"), ",
      "or use plot(x).",
      call. = FALSE
    )
  }
  d <- .mk_tune_plot_data(object)
  perf <- d$data
  perf$.x <- perf[[d$x]]
  perf$.group <- if (is.null(d$group)) "all" else factor(perf[[d$group]])
  perf$.lo <- perf$error - perf$dispersion
  perf$.hi <- perf$error + perf$dispersion
  aes <- ggplot2::aes
  p <- ggplot2::ggplot(perf, aes(x = .data$.x, y = .data$error, colour = .data$.group)) +
    ggplot2::geom_line() +
    ggplot2::geom_point() +
    ggplot2::geom_errorbar(aes(ymin = .data$.lo, ymax = .data$.hi), width = 0.05) +
    ggplot2::geom_point(data = perf[perf$best, , drop = FALSE], size = 4, shape = 1, colour = "black") +
    ggplot2::labs(
      x = d$x, y = paste("cross-validated", object$tune$metric),
      colour = d$group %||% NULL
    )
  if (is.null(d$group)) p <- p + ggplot2::guides(colour = "none")
  if (d$log) p <- p + ggplot2::scale_x_log10()
  p
}

#' @rdname print.mk_tune
#' @export
tidy.mk_tune <- function(x, component = c("performance", "support_vectors", "parameters"),
                         ...) {
  component <- match.arg(component)
  if (component != "performance") {
    return(tidy.mk_svm(x, component = component, ...))
  }
  .mk_unused_dots(..., where = "tidy()")
  .mk_tibble(.mk_tune_table(x))
}

# The performances with a `best` column.
.mk_tune_table <- function(x) {
  perf <- x$tune$performances
  perf$best <- seq_len(nrow(perf)) == which.min(perf$error)
  perf
}

# What the plots draw: the table, the parameter on the x axis (the first
# numeric one with more than one value), the grouping one (the next tuned
# parameter with more than one value), and whether the x axis is logarithmic.
.mk_tune_plot_data <- function(x) {
  perf <- .mk_tune_table(x)
  params <- names(x$tune$best_parameters)
  varying <- params[vapply(params, function(p) length(unique(perf[[p]])) > 1L, TRUE)]
  numeric <- varying[vapply(varying, function(p) is.numeric(perf[[p]]), TRUE)]
  if (!length(numeric)) {
    stop("The search tried no numeric parameter with more than one value: see tidy(x).",
      call. = FALSE
    )
  }
  xp <- numeric[1L]
  others <- setdiff(varying, xp)
  if (length(others) > 1L) {
    stop(sprintf(
      paste0(
        "plot() draws the error against one parameter (%s), one line per value ",
        "of a second (%s); this search varied %s too: see tidy(x)."
      ),
      xp, others[1L], paste(others[-1L], collapse = ", ")
    ), call. = FALSE)
  }
  values <- perf[[xp]]
  list(
    data = perf[!is.na(perf$error), , drop = FALSE], x = xp,
    group = if (length(others)) others[1L],
    log = all(values > 0) && max(values) / min(values) > 10
  )
}
