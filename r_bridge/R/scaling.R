# scale = TRUE, with the meaning of e1071::svm: the numeric predictors (and
# the level ranks of ordered factors) are standardised by the means and
# standard deviations of their observed training entries, a numeric response
# (regression) by its mean and standard deviation; the same transformation
# is applied to new rows, and predictions of a regression are transformed
# back to the units of the response.

# The R side does the scaling. Should the Python estimators gain a scaling
# switch of their own, it is turned off here so that nothing is scaled twice:
# the parameter name and the value that means "do not scale" (applied only
# when the estimator has that parameter; see .mk_python_scaling_off()).
.mk_python_no_scaling <- list(standardize = FALSE)

# The parameters that turn Python's own scaling off, for an estimator class:
# .mk_python_no_scaling when the class has that parameter, else none.
.mk_python_scaling_off <- function(cls) {
  params <- tryCatch(
    names(reticulate::py_to_r(cls()$get_params(deep = FALSE))),
    error = function(e) character()
  )
  .mk_python_no_scaling[intersect(names(.mk_python_no_scaling), params)]
}

# Centres and scales of the numeric columns (all columns of a matrix; of a
# design table, the double columns and the ordered factors: unordered
# factors and logicals are left alone). An ordered factor is numeric on the
# Python side, by the rank of its level (0, 1, ..., declared levels
# included); scaling standardises those ranks by their mean and standard
# deviation over the observed training rows, like a numeric column, so that
# one level apart does not weigh as a whole standard deviation of the other
# columns. Its training levels are kept in `levels` (new rows are ranked by
# label against them, see .mk_apply_scaling()).
.mk_scaling <- function(x) {
  levels <- NULL
  if (is.data.frame(x)) {
    keep <- vapply(x, function(col) is.double(col) || is.ordered(col), TRUE)
    if (!any(keep)) {
      return(NULL)
    }
    ordered <- names(x)[keep & vapply(x, is.ordered, TRUE)]
    levels <- lapply(x[ordered], levels)
    cols <- lapply(x[keep], function(col) {
      if (is.ordered(col)) as.double(as.integer(col) - 1L) else col
    })
    x <- matrix(unlist(cols, use.names = FALSE), nrow(x), length(cols),
      dimnames = list(NULL, names(cols))
    )
  }
  center <- colMeans(x, na.rm = TRUE)
  sds <- apply(x, 2L, stats::sd, na.rm = TRUE)
  center[!is.finite(center)] <- 0
  sds[!is.finite(sds) | sds <= 0] <- 1
  out <- list(center = center, scale = sds)
  if (length(levels)) out$levels <- levels
  out
}

# The rank (0, 1, ...) of each value of an ordered factor among the training
# levels, matched by label (NA for a missing value or an unknown label).
.mk_ordered_ranks <- function(col, levels) {
  as.double(match(as.character(col), levels) - 1L)
}

.mk_apply_scaling <- function(x, scaling) {
  if (is.null(scaling)) {
    return(x)
  }
  if (is.data.frame(x)) {
    for (nm in names(scaling$center)) {
      col <- x[[nm]]
      if (!is.null(scaling$levels[[nm]]) && (is.factor(col) || is.character(col))) {
        # an ordered factor: its standardised ranks, a double column (numeric
        # for Python, as its ranks were)
        col <- .mk_ordered_ranks(col, scaling$levels[[nm]])
      }
      x[[nm]] <- (col - scaling$center[[nm]]) / scaling$scale[[nm]]
    }
    return(x)
  }
  x <- sweep(x, 2L, scaling$center, "-", check.margin = FALSE)
  sweep(x, 2L, scaling$scale, "/", check.margin = FALSE)
}


# Centre and scale of a numeric response (regression with scale = TRUE); a
# constant response is only centred.
.mk_response_scaling <- function(y) {
  center <- mean(y)
  s <- stats::sd(y)
  if (!is.finite(s) || s <= 0) s <- 1
  list(center = center, scale = s)
}

.mk_scale_response <- function(y, scaling) {
  if (is.null(scaling)) y else (y - scaling$center) / scaling$scale
}

.mk_unscale_response <- function(pred, scaling) {
  if (is.null(scaling)) pred else pred * scaling$scale + scaling$center
}
