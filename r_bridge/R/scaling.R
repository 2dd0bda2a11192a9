# scale = TRUE, with the meaning of e1071::svm: the numeric predictors are
# standardised by the means and standard deviations of their observed
# training entries, a numeric response (regression) by its mean and standard
# deviation; the same transformation is applied to new rows, and predictions
# of a regression are transformed back to the units of the response.

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

# Centres and scales of the numeric columns (all columns of a matrix; the
# double columns of a design table: factors and logicals are left alone).
.mk_scaling <- function(x) {
  if (is.data.frame(x)) {
    x <- as.matrix(x[vapply(x, is.double, TRUE)])
    if (!ncol(x)) {
      return(NULL)
    }
  }
  center <- colMeans(x, na.rm = TRUE)
  sds <- apply(x, 2L, stats::sd, na.rm = TRUE)
  center[!is.finite(center)] <- 0
  sds[!is.finite(sds) | sds <= 0] <- 1
  list(center = center, scale = sds)
}

.mk_apply_scaling <- function(x, scaling) {
  if (is.null(scaling)) {
    return(x)
  }
  if (is.data.frame(x)) {
    for (nm in names(scaling$center)) {
      x[[nm]] <- (x[[nm]] - scaling$center[[nm]]) / scaling$scale[[nm]]
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
