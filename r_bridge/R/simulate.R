#' Remove entries of complete data by a missingness mechanism
#'
#' The mechanisms of the genRBF experiments (Smieja et al. 2019, section
#' 5.1), computed by \code{missingkernels.experiments.simulate_missing}:
#' \describe{
#'   \item{\code{"mcar"}}{exactly \code{round(rate * n * d)} entries chosen
#'     uniformly at random are removed.}
#'   \item{\code{"mar"}}{(eq. 26) \code{d} reference rows are drawn; feature
#'     \code{i} of a row is removed with a probability decreasing with its
#'     Mahalanobis distance to reference row \code{i}, calibrated so the
#'     fraction removed is \code{rate}. Reference rows stay complete.}
#'   \item{\code{"mnar"}}{(eq. 27) the features are split at random into a
#'     hidden half and a visible half; removals in the visible features
#'     depend on the hidden ones, which are then dropped: \strong{the result
#'     has only the visible columns}.}
#' }
#'
#' @param x A complete numeric matrix or data frame (numeric, integer or
#'   logical columns; no \code{NA}).
#' @param mechanism One of \code{"mcar"}, \code{"mar"}, \code{"mnar"}.
#' @param rate The fraction of (returned) entries to remove, in [0, 1).
#' @param seed An integer seed for the Python random generator. \code{NULL}
#'   (default) draws one from R's generator, so \code{set.seed()} makes the
#'   result reproducible.
#' @return \code{x} (same class, as doubles) with \code{NA} at the removed
#'   entries, restricted to the visible columns for \code{"mnar"}. The
#'   attribute \code{"missingness"} is a list: \code{mechanism}, \code{rate},
#'   \code{missing_rate} (realised), \code{visible} and \code{hidden} (column
#'   indices into \code{x}, 1-based), \code{reference_rows} (1-based, or
#'   \code{NULL} for MCAR), \code{t} (the calibrated rate of eqs. 26-27) and
#'   \code{seed}.
#' @references M. Smieja, L. Struski, J. Tabor, M. Marzec (2019). Generalized
#'   RBF kernel for incomplete data. \emph{Knowledge-Based Systems} 173.
#' @examples
#' if (mk_available()) {
#'   set.seed(1)
#'   x <- matrix(rnorm(200), 50, 4, dimnames = list(NULL, paste0("v", 1:4)))
#'   xm <- mk_simulate_missing(x, "mar", rate = 0.2)
#'   mean(is.na(xm))
#'   colnames(mk_simulate_missing(x, "mnar", rate = 0.2)) # visible half only
#' }
#' @export
mk_simulate_missing <- function(x, mechanism = c("mcar", "mar", "mnar"), rate,
                                seed = NULL) {
  mechanism <- match.arg(mechanism)
  if (missing(rate)) stop("`rate` is missing: the fraction of entries to remove.", call. = FALSE)
  if (!is.numeric(rate) || length(rate) != 1L || is.na(rate) || rate < 0 || rate >= 1) {
    stop("`rate` must be one number in [0, 1).", call. = FALSE)
  }
  is_df <- is.data.frame(x)
  if (is_df) {
    ok <- vapply(x, function(c) is.numeric(c) || is.logical(c), TRUE)
    if (!all(ok)) {
      stop("All columns of `x` must be numeric (or logical); not: ",
        paste0("'", names(x)[!ok], "'", collapse = ", "), ".",
        call. = FALSE
      )
    }
    xm <- as.matrix(x)
  } else {
    xm <- x
  }
  xm <- .mk_as_double_matrix(xm, "x")
  if (anyNA(xm)) {
    stop("`x` already has missing values; mk_simulate_missing() needs complete data.",
      call. = FALSE
    )
  }
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  seed <- .mk_as_py_param(seed, "random_state")
  .mk_py() # stops with installation advice if Python is unusable
  experiments <- reticulate::import("missingkernels.experiments", convert = FALSE)
  res <- .mk_call(
    experiments$simulate_missing(.mk_to_numpy(xm),
      mechanism = mechanism, rate = as.double(rate), random_state = seed,
      return_info = TRUE
    ),
    "simulating missingness", colnames(xm)
  )
  out <- .mk_from_numpy(reticulate::py_get_item(res, 0L))
  out[is.nan(out)] <- NA # R users expect NA, not NaN
  info <- reticulate::py_get_item(res, 1L)
  get <- function(name) reticulate::py_to_r(reticulate::py_get_attr(info, name))
  visible <- as.integer(get("visible")) + 1L
  hidden <- as.integer(get("hidden")) + 1L
  refs <- get("reference_rows")
  out <- matrix(as.double(out), nrow(xm), length(visible))
  dimnames(out) <- list(rownames(xm), colnames(xm)[visible])
  if (is_df) {
    df <- as.data.frame(out, stringsAsFactors = FALSE)
    names(df) <- names(x)[visible]
    rownames(df) <- rownames(x)
    out <- df
  }
  t <- get("t")
  attr(out, "missingness") <- list(
    mechanism = mechanism,
    rate = rate,
    missing_rate = get("missing_rate"),
    visible = visible,
    hidden = hidden,
    reference_rows = if (!is.null(refs)) as.integer(refs) + 1L,
    t = if (is.null(t)) NA_real_ else t,
    seed = seed
  )
  out
}
