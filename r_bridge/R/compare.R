#' Compare methods by nested cross-validation
#'
#' Runs the comparison protocol of the genRBF experiments
#' (\code{missingkernels.experiments.run_comparison}) on one dataset: for
#' every mechanism, rate and draw, entries are removed from complete data
#' (or, with \code{mechanism = "none"}, the data's own missing values are
#' kept); the rows are split into \code{outer_folds} (stratified for
#' classification); on each outer training set an inner
#' \code{inner_folds} grid search over \code{C_grid} x \code{gamma_grid}
#' chooses the hyperparameters, the method is refitted on the outer training
#' rows and scored on the outer test rows. Scalers, imputers and densities
#' are fitted on the training rows of each fit only.
#'
#' Methods are registry kernels (\code{\link{mk_kernels}}, e.g.
#' \code{"genrbf"}), registry baselines (\code{\link{mk_baselines}}, e.g.
#' \code{"mean"}: imputation then an RBF SVM) or \code{"socp"}. The Python
#' comparison runner takes numeric arrays only, so here, unlike in
#' \code{\link{mk_svm}}, factor (ordered or not) and character predictors
#' become treatment-coded 0/1 indicator columns (one per level but the first;
#' a missing value makes all of them \code{NA}) and logical predictors one
#' 0/1 column; \code{NA} becomes \code{NaN}. Standardisation is done by the
#' runner, on training rows. A method that fails in a cell does not stop the
#' run: its rows have \code{score = NA} and the message in \code{error}, and
#' a warning says how many cells failed.
#'
#' @param x A numeric matrix or data frame of predictors (complete unless
#'   \code{mechanism = "none"}).
#' @param y The response: a factor (classification, scored by accuracy and
#'   balanced accuracy) or numeric (regression, scored by \eqn{R^2}{R^2}).
#'   Rows whose response is missing are handled by \code{na.action}, as in
#'   \code{\link{mk_svm}}.
#' @param formula,data,subset As in \code{\link{mk_svm}}; rows with
#'   \code{NA} predictors are kept.
#' @param methods Method names (see Details).
#' @param mechanism One or more of \code{"none"} (the data's own missing
#'   values), \code{"mcar"}, \code{"mar"}, \code{"mnar"} (see
#'   \code{\link{mk_simulate_missing}}).
#' @param rate Missing rates for the simulated mechanisms.
#' @param n_draws Missingness draws (for \code{"none"}: repetitions with new
#'   fold splits).
#' @param outer_folds,inner_folds Numbers of outer and inner folds.
#' @param C_grid,gamma_grid The grids of the inner search (by default the
#'   genRBF paper's, \eqn{2^{-5}, 2^{-3}, \dots, 2^9}{2^-5, 2^-3, ..., 2^9}
#'   and \eqn{2^{-5}, \dots, 2^{11}}{2^-5, ..., 2^11}).
#' @param selection_metric The inner criterion: \code{NULL} (accuracy or
#'   \eqn{R^2}{R^2}), \code{"accuracy"}, \code{"balanced_accuracy"} or
#'   \code{"r2"}.
#' @param seed Integer seed of everything; \code{NULL} draws one from R's
#'   generator (so \code{set.seed()} makes the run reproducible).
#' @param n_jobs Cells run in parallel (joblib) when > 1.
#' @param dataset The dataset's name in the results.
#' @param na.action A function applied to the \emph{response} only, as in
#'   \code{\link{mk_svm}}: \code{na.omit} (the default) and \code{na.exclude}
#'   drop the rows whose response is missing (recorded in the attribute
#'   \code{"na.action"} of the result), \code{na.fail} stops. Rows with
#'   missing predictors are always kept.
#' @param ... For the formula method, the arguments of the default method.
#' @return A data frame in long format, one row per cell (mechanism, rate,
#'   draw, outer fold, method) and metric, with the columns of the Python
#'   runner (\code{dataset}, \code{task}, \code{mechanism}, \code{rate},
#'   \code{draw}, \code{fold}, \code{method}, \code{params} (JSON),
#'   \code{metric}, \code{score}, \code{fit_seconds}, \code{cell_seconds},
#'   \code{n_train}, \code{n_test}, \code{missing_rate}, \code{error}) and
#'   the chosen \code{C} and \code{gamma} as numeric columns. Draws and
#'   folds are numbered from 0, as in the Python results. The attributes
#'   \code{"seed"} (the seed used) and \code{"na.action"} (the rows dropped
#'   for a missing response, if any).
#' @references M. Smieja, L. Struski, J. Tabor, M. Marzec (2019). Generalized
#'   RBF kernel for incomplete data. \emph{Knowledge-Based Systems} 173,
#'   section 5.1.
#' @examples
#' if (mk_available()) {
#'   set.seed(1)
#'   x <- matrix(rnorm(240), 80, 3)
#'   y <- factor(x[, 1] + x[, 2] > 0)
#'   x[sample(length(x), 40)] <- NA
#'   res <- mk_compare(x, y,
#'     methods = c("genrbf", "mean"), outer_folds = 2, inner_folds = 2,
#'     C_grid = c(1, 10), gamma_grid = 0.3
#'   )
#'   aggregate(score ~ method + metric, res, mean)
#' }
#' @export
mk_compare <- function(x, ...) UseMethod("mk_compare")

#' @rdname mk_compare
#' @export
mk_compare.formula <- function(formula, data = NULL, ..., subset) {
  frame <- .mk_model_frame(
    match.call(expand.dots = FALSE), c("formula", "data", "subset"), parent.frame()
  )
  mt <- frame$terms
  y <- frame$y
  mf <- .mk_drop_predictor_levels(frame$frame, frame$response)
  x <- .mk_model_matrix(mt, mf, .mk_contrasts(mf, frame$response))
  # messages number the rows of `data`, also after `subset` (as mk_svm's)
  attr(x, "mk_data_rows") <- .mk_data_rows(frame$frame, data)
  args <- list(...)
  if (is.null(args$dataset)) {
    args$dataset <- if (!missing(data)) paste(deparse(substitute(data)), collapse = "") else "data"
  }
  do.call(mk_compare.default, c(list(x, y), args))
}

#' @rdname mk_compare
#' @export
mk_compare.default <- function(x, y, methods = c("genrbf", "mean"),
                               mechanism = "none", rate = 0.3, n_draws = 1,
                               outer_folds = 5, inner_folds = 5,
                               C_grid = 2^seq(-5, 9, by = 2),
                               gamma_grid = 2^seq(-5, 11, by = 2),
                               selection_metric = NULL, seed = NULL, n_jobs = 1,
                               dataset = "data", na.action = stats::na.omit, ...) {
  if (...length()) {
    stop("Unknown argument(s): ", paste(...names(), collapse = ", "), ".", call. = FALSE)
  }
  rows <- attr(x, "mk_data_rows")
  xm <- .mk_indicator_matrix(x)
  if (length(rows) != nrow(xm)) rows <- seq_len(nrow(xm))
  if (is.matrix(y) && ncol(y) == 1L) y <- drop(y)
  # na.action concerns the response only, as in mk_svm()
  na <- if (!is.data.frame(y) && length(y) == nrow(xm)) {
    .mk_response_na(y, na.action, rownames(xm), rows)
  } else {
    list(action = NULL)
  }
  if (!is.null(na$action)) {
    xm <- xm[na$keep, , drop = FALSE]
    y <- y[na$keep]
    rows <- rows[na$keep]
  }
  y <- .mk_response(y, nrow(xm), rows)
  if (!is.character(methods) || !length(methods) || anyNA(methods)) {
    stop("`methods` must be method names, e.g. c(\"genrbf\", \"mean\").", call. = FALSE)
  }
  .mk_check_methods(methods)
  mechanism <- match.arg(mechanism, c("none", "mcar", "mar", "mnar"), several.ok = TRUE)
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1L)
  int <- function(value) .mk_as_py_param(value, "random_state") # a Python int
  .mk_py()
  if (!reticulate::py_module_available("pandas")) {
    stop("mk_compare() needs the Python package's 'experiments' extra (pandas, ",
      "statsmodels, ...): pip install 'missingkernels[experiments]' into the ",
      "Python environment in use.",
      call. = FALSE
    )
  }
  experiments <- reticulate::import("missingkernels.experiments", convert = FALSE)
  classification <- is.factor(y)
  y_py <- if (classification) {
    .mk_np()$array(as.integer(y) - 1L, dtype = "int64")
  } else {
    .mk_np()$array(as.double(y), dtype = "float64")
  }
  data <- experiments$ComparisonData(
    .mk_to_numpy(xm), y_py,
    if (classification) "classification" else "regression"
  )
  result <- .mk_call(
    experiments$run_comparison(
      reticulate::py_dict(list(dataset), list(data)),
      as.list(methods),
      mechanisms = as.list(mechanism),
      rates = as.list(as.double(rate)),
      n_draws = int(n_draws), outer_folds = int(outer_folds),
      inner_folds = int(inner_folds),
      C_grid = as.list(as.double(C_grid)), gamma_grid = as.list(as.double(gamma_grid)),
      selection_metric = selection_metric, n_jobs = int(n_jobs),
      random_state = int(seed), progress = FALSE
    ),
    "running the comparison", colnames(xm),
    rows = rows
  )
  # Through a CSV: pandas' column types (string dtypes of pandas >= 3) do not
  # all convert with reticulate 1.28.
  csv <- tempfile(fileext = ".csv")
  on.exit(unlink(csv))
  result$to_csv(csv, index = FALSE)
  out <- utils::read.csv(csv, stringsAsFactors = FALSE, na.strings = c("", "NA", "NaN"))
  out$error[is.na(out$error)] <- ""
  out$params[is.na(out$params)] <- ""
  out$C <- .mk_json_number(out$params, "C")
  out$gamma <- .mk_json_number(out$params, "gamma")
  failed <- unique(out[nzchar(out$error), c("mechanism", "rate", "draw", "fold", "method", "error")])
  if (nrow(failed)) {
    warning(sprintf(
      "%d cell(s) failed (score NA); first: method %s: %s",
      nrow(failed), failed$method[1], failed$error[1]
    ), call. = FALSE)
  }
  attr(out, "seed") <- seed
  attr(out, "na.action") <- na$action
  out
}

# Method names an R user reaches for that are spelt otherwise here.
.mk_check_methods <- function(methods) {
  if ("mice" %in% methods) {
    stop(paste0(
      "mk_compare(): \"mice\" is not a method name. R's mice is the method ",
      "\"r_mice\" (mice's imputations, then an RBF SVM; needs the R plugin, see ",
      "install_missingkernels(plugin = TRUE)); the density \"r_mice\" of ",
      "mk_svm(density = \"r_mice\") averages the kernel over mice's draws ",
      "instead. \"iterative\" imputes by chained equations with scikit-learn, ",
      "without R. See mk_baselines()."
    ), call. = FALSE)
  }
  if ("r_mice" %in% methods && !"r_mice" %in% names(reticulate::py_to_r(.mk_py()$list_baselines()))) {
    stop(paste0(
      "mk_compare(): the method \"r_mice\" (R's mice imputations, then an RBF SVM) ",
      "comes with the Python plugin 'missingkernels-r', which is not installed in ",
      "the Python environment in use: install_missingkernels(\"/path/to/missingkernels\", ",
      "plugin = TRUE), then restart R. See mk_baselines()."
    ), call. = FALSE)
  }
  invisible()
}

# A number from the flat JSON objects of the runner's `params` column.
.mk_json_number <- function(json, key) {
  pattern <- sprintf('"%s": *([-+0-9.eE]+|NaN|Infinity)', key)
  m <- regmatches(json, regexec(pattern, json))
  vapply(m, function(v) if (length(v) == 2L) as.numeric(v[2]) else NA_real_, 0)
}
