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
#' (\code{NA} becomes \code{NaN}; factor, character and logical columns of a
#' data frame are nominal columns, not dummy coded; ordered factors are
#' numeric, by level rank \eqn{0, 1, \dots}{0, 1, ...}, as in
#' \code{mk_svm(ordered = "ranks")}, whereas \code{mk_svm}'s default makes
#' them nominal: give them as \code{factor(x, ordered = FALSE)} for that
#' kernel) but are not standardised. With \code{kernel = "auto"} (the default) the kernel is
#' \code{"mixed_rbf"} when \code{x} has nominal columns, else
#' \code{"genrbf"}; a kernel for numeric columns only refuses nominal ones.
#' Levels of \code{y} are matched to those of \code{x} by label; a level
#' \code{x} does not have follows the kernel parameter \code{handle_unknown}
#' (\code{"missing"}, the default, with a warning, or \code{"error"}).
#'
#' @param x A numeric matrix or data frame, \code{NA} where missing; the
#'   density is fitted on its rows.
#' @param y Optional second set of rows with the same columns (a matrix, or a
#'   data frame when \code{x} is one).
#' @param kernel \code{"auto"} or a registry kernel name, see
#'   \code{\link{mk_kernels}}.
#' @param density \code{NULL} for the kernel's default density
#'   (\code{"gaussian_em"} for \code{"genrbf"}, \code{"latent_class"} for
#'   \code{"mixed_rbf"}), a registry name (see
#'   \code{\link{mk_densities}}) or a Python density object.
#' @param density_params A named list of parameters of the density; needs
#'   \code{density} to be a name.
#' @param ... Parameters of the kernel, e.g. \code{gamma = 0.5},
#'   \code{metric = "mahalanobis"}, \code{diagonal = "independent"},
#'   \code{nominal_weight = 0.5} or \code{handle_unknown = "error"} (mixed
#'   kernels).
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
mk_kernel_matrix <- function(x, y = NULL, kernel = "auto", density = NULL,
                             density_params = NULL, ...) {
  kernel <- .mk_kernel_arg(kernel) # e1071's "radial" is "genrbf", ... (advice.R)
  kernel_params <- list(...)
  handle_unknown <- .mk_handle_unknown_arg(kernel_params$handle_unknown %||% "missing")
  built <- .mk_design_fit(x)
  xm <- built$x
  ym <- if (!is.null(y)) .mk_design_new(built$design, y, handle_unknown)
  nominal <- .mk_nominal_columns(xm)
  if (identical(kernel, "auto")) kernel <- if (length(nominal)) "mixed_rbf" else "genrbf"
  mk <- .mk_py()
  params <- .mk_py_params(kernel_params)
  dens <- .mk_density_arg(density, density_params)
  if (!is.null(dens)) params$density <- dens
  k <- .mk_call(do.call(mk$get_kernel, c(list(kernel), params)), "building the kernel")
  if (is.data.frame(xm) && !.mk_takes_tables(k)) {
    if (length(nominal)) {
      stop(sprintf(
        paste0(
          "The kernel '%s' takes numeric columns, but %s %s nominal (factor, ",
          "character or logical). Use kernel = \"auto\" (\"mixed_rbf\" for such ",
          "tables) or \"expected_mixed_rbf\", or code them as numbers yourself."
        ),
        kernel, paste0("'", nominal, "'", collapse = ", "),
        if (length(nominal) > 1L) "are" else "is"
      ), call. = FALSE)
    }
    xm <- .mk_ranks(xm) # ordered factors only: their level ranks
    if (!is.null(ym)) ym <- .mk_ranks(ym)
  }
  X <- .mk_to_python(xm)
  .mk_call(k$fit(X), "fitting the density", colnames(xm))
  K <- if (is.null(ym)) {
    .mk_call(k$`__call__`(X), "computing the kernel", colnames(xm))
  } else {
    .mk_call(k$`__call__`(X, .mk_to_python(ym)), "computing the kernel", colnames(xm))
  }
  K <- .mk_from_numpy(K)
  K <- matrix(as.double(K), nrow(xm), if (is.null(ym)) nrow(xm) else nrow(ym))
  dimnames(K) <- list(rownames(xm), if (is.null(ym)) rownames(xm) else rownames(ym))
  K
}

# Whether a Python kernel or estimator takes tables with nominal columns (it
# has the parameter nominal_features).
.mk_takes_tables <- function(obj) {
  keys <- reticulate::py_to_r(.mk_state$builtins$list(obj$get_params(deep = FALSE)))
  "nominal_features" %in% unlist(keys)
}

# The nominal columns (unordered factors and logicals) of a design table.
.mk_nominal_columns <- function(x) {
  if (!is.data.frame(x)) {
    return(character())
  }
  names(x)[vapply(x, function(col) (is.factor(col) && !is.ordered(col)) || is.logical(col), TRUE)]
}

# A design table without nominal columns as a double matrix, ordered factors
# as their level ranks 0, 1, ... (as the Python side codes them).
.mk_ranks <- function(x) {
  m <- vapply(x, function(col) if (is.factor(col)) as.double(as.integer(col) - 1L) else as.double(col), numeric(nrow(x)))
  m <- matrix(m, nrow(x), ncol(x), dimnames = list(rownames(x), names(x)))
  m
}
