#' Kernel matrices on data with missing values
#'
#' Computes the Gram matrix of a registry kernel (by default the generalised
#' RBF kernel) between rows with missing values, without imputing them. The
#' density of the missing entries is fitted on \code{x}; the rows of
#' \code{y}, if given, are only conditioned on it.
#'
#' \code{K(x)} (\code{y = NULL}) and \code{K(x, y)} differ only on the
#' diagonal convention: in the training Gram a row is compared with itself
#' as the same random draw or an independent copy, depending on the kernel
#' (its \code{diagonal} parameter); \code{mk_kernel_matrix(x, x)} always uses
#' independent copies. Inputs are converted as in \code{\link{mk_svm}}
#' (\code{NA} becomes \code{NaN}, factors become indicator columns) but are
#' not standardised.
#'
#' @param x A numeric matrix or data frame, \code{NA} where missing; the
#'   density is fitted on its rows.
#' @param y Optional second set of rows with the same columns (a matrix, or a
#'   data frame when \code{x} is one).
#' @param kernel A registry kernel name, see \code{\link{mk_kernels}}.
#' @param density \code{NULL} for the kernel's default density
#'   (\code{"gaussian_em"} for \code{"genrbf"}), a registry name (see
#'   \code{\link{mk_densities}}) or a Python density object.
#' @param density_params A named list of parameters of the density; needs
#'   \code{density} to be a name.
#' @param ... Parameters of the kernel, e.g. \code{gamma = 0.5},
#'   \code{metric = "mahalanobis"}, \code{diagonal = "independent"}.
#' @return A numeric matrix with \code{nrow(x)} rows and \code{nrow(y)} (or
#'   \code{nrow(x)}) columns, \code{K[i, j] = k(x_i, y_j)}, with the row
#'   names of \code{x} and \code{y}.
#' @references M. Smieja, L. Struski, J. Tabor, M. Marzec (2019). Generalized
#'   RBF kernel for incomplete data. \emph{Knowledge-Based Systems} 173.
#' @examples
#' if (mk_available()) {
#'   x <- rbind(c(0, 1), c(1, NA), c(2, 2.5), c(NA, 0))
#'   K <- mk_kernel_matrix(x, gamma = 0.5)
#'   diag(K) # genRBF is normalised: 1
#'   mk_kernel_matrix(x, rbind(c(NA, NA), c(1, 1)), gamma = 0.5)
#' }
#' @export
mk_kernel_matrix <- function(x, y = NULL, kernel = "genrbf", density = NULL,
                             density_params = NULL, ...) {
  built <- .mk_design_fit(x)
  xm <- built$x
  ym <- if (!is.null(y)) .mk_design_new(built$design, y)
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel)) {
    stop("`kernel` must be one registry name, see mk_kernels().", call. = FALSE)
  }
  mk <- .mk_py()
  params <- .mk_py_params(list(...))
  dens <- .mk_density_arg(density, density_params)
  if (!is.null(dens)) params$density <- dens
  k <- .mk_call(do.call(mk$get_kernel, c(list(kernel), params)), "building the kernel")
  X <- .mk_to_numpy(xm)
  .mk_call(k$fit(X), "fitting the density", colnames(xm))
  K <- if (is.null(ym)) {
    .mk_call(k$`__call__`(X), "computing the kernel", colnames(xm))
  } else {
    .mk_call(k$`__call__`(X, .mk_to_numpy(ym)), "computing the kernel", colnames(xm))
  }
  K <- .mk_from_numpy(K)
  K <- matrix(as.double(K), nrow(xm), if (is.null(ym)) nrow(xm) else nrow(ym))
  dimnames(K) <- list(rownames(xm), if (is.null(ym)) rownames(xm) else rownames(ym))
  K
}
