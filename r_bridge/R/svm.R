#' Support vector machines on data with missing values
#'
#' Fits a support vector machine whose kernel is an \emph{expected kernel}:
#' a classical kernel averaged over the conditional distribution of the
#' missing entries, under a density fitted on the training rows (by default,
#' for numeric predictors, the generalised RBF kernel \code{"genrbf"} with a
#' Gaussian fitted by EM; with factor, character or logical predictors the
#' mixed kernel \code{"mixed_rbf"}, an RBF kernel on the numeric columns
#' times a matching kernel on the nominal ones, with a latent-class density).
#' Rows with missing predictor values are \strong{kept}: they are neither
#' dropped nor imputed. Classification or regression is chosen from the
#' response: a factor (or a logical or character vector, converted to a
#' factor) gives classification, a numeric vector regression.
#'
#' \strong{Missing values.} Unlike most R modelling functions, whose
#' \code{na.action} drops incomplete rows, \code{mk_svm} applies
#' \code{na.action} to the \strong{response only}: rows with missing
#' predictor values are always kept (an \code{NA} reaches Python as
#' \code{NaN}, or as a missing category of a nominal column, and the kernel
#' integrates over it). Rows whose response is
#' missing cannot be used for training: \code{na.action = na.omit} (the
#' default) drops them, \code{na.exclude} drops them too but pads
#' \code{fitted()}, \code{residuals()} and \code{predict(fit)} with
#' \code{NA} at their positions, \code{na.fail} refuses them with an error.
#' The dropped rows are recorded in \code{fit$na.action}. \code{predict}
#' returns a prediction for every row of \code{newdata}, including rows with
#' missing values (even entirely missing rows).
#'
#' \strong{Weights.} \code{weights} are case weights of the SVM's loss (row
#' \eqn{i} is penalised with \code{C * weights[i]}), passed to the Python
#' estimator's \code{fit} as \code{sample_weight}; the density of the
#' missing entries and \code{gamma = "scale"} are fitted unweighted. For
#' the formula method they are looked up in \code{data}, as in
#' \code{\link[stats]{lm}}.
#'
#' \strong{Arguments.} An argument that is neither an argument of
#' \code{mk_svm} nor a parameter of the Python estimator is an error that
#' names it and the accepted ones (with a hint for the names of
#' \code{e1071::svm}, e.g. \code{cost} is \code{C}), raised before Python
#' is called.
#'
#' \strong{Nominal predictors (mixed tables).} Factor, character and
#' logical columns of a data frame (or variables of the formula) are
#' \emph{nominal} columns: they are not dummy coded but passed to Python as
#' categorical columns of a pandas DataFrame (logical ones as booleans), and
#' the kernel compares them by matching while the density models their
#' categories (\code{kernel = "auto"} becomes \code{"mixed_rbf"}, whose
#' default density is \code{"latent_class"}: per latent class a Gaussian on
#' the numeric columns times independent categoricals on the nominal ones).
#' Unused levels of a factor are dropped.
#'
#' \strong{Ordered factors.} By default (\code{ordered = "nominal"}) an
#' ordered factor predictor is a nominal column like any other factor,
#' exactly as if it had been given as \code{factor(x, ordered = FALSE)}
#' (its unused levels dropped, its levels matched by label, not scaled).
#' This follows R's own habit: \code{lm} or \code{e1071::svm} (through
#' \code{\link[stats]{model.matrix}}) code an ordered factor with
#' polynomial contrasts, \eqn{L - 1} columns that span the same space as its
#' dummy columns, i.e. as a categorical, not as one column of ranks. Measured
#' (5 x 5-fold cross-validation, default settings) on three tables with
#' ordered predictors, the level ranks lost to mean imputation +
#' \code{e1071::svm} on two: mice's \code{boys} (height, \code{gen} and
#' \code{phb} ordered) RMSE 7.89 with standardised ranks against 7.25, and
#' Cleveland heart disease accuracy 0.810 against 0.838; nominal ordered
#' factors did not lose on any of the three (boys 6.93 against 7.25,
#' Cleveland 0.838 against 0.838, mammographic masses 0.827 against 0.824;
#' see \code{r_bridge/tools/ordered-factors-results.md} in the project's
#' repository).
#' \code{ordered = "ranks"} gives the previous treatment instead: the factor
#' is passed as an ordered categorical, which the Python side treats as
#' \emph{numeric}, coded by the rank of the level (0, 1, ..., in the order of
#' \code{levels()}, unused levels included); with \code{scale = TRUE} these
#' ranks are standardised like a numeric column (with \code{scale = FALSE}
#' they are not), and new data are ranked by label against the training
#' levels. A kernel for numeric columns only (such as \code{"genrbf"})
#' needs \code{ordered = "ranks"} for ordered predictors. The choice is kept
#' in \code{fit$design$ordered}; a model saved by an earlier version of the
#' package (without it) predicts with ranks, as it was fitted. Ordered
#' \emph{responses} are not affected (see \code{\link{predict.mk_svm}}).
#'
#' Numeric, integer and logical \emph{matrices} (\code{mk_svm(x, y)} with a
#' matrix) stay numeric. \code{summary(fit)} lists every predictor with its
#' kind and number of levels; the fitted Python estimator's
#' \code{is_nominal_} says the same.
#'
#' In \code{predict}, the levels of a new factor (or the values of a
#' character column) are matched to the training levels \emph{by label}, so
#' a factor whose levels are in another order, or a subset of them, predicts
#' the same. A level not seen in training follows \code{handle_unknown}:
#' \code{"missing"} (the default) treats it as a missing entry and warns (a
#' warning of class \code{"missingkernels_UnknownCategoryWarning"}), and
#' \code{"error"} stops.
#'
#' \strong{Formulas.} Terms whose variables are all numeric give the columns
#' of \code{\link[stats]{model.matrix}} (so \code{log(x)}, \code{I(x^2)},
#' \code{x:z} and \code{splines::ns(x, 3)} work as in \code{lm}); a term
#' that is a single factor, character or logical variable (including
#' \code{factor(g)} or \code{interaction(f, g)}) gives one nominal column.
#' A term that combines such a variable with another one (\code{f:x},
#' \code{f*g}) is an error: an interaction with a nominal column has no
#' dummy columns to multiply. Give the combination as one variable instead,
#' e.g. \code{interaction(f, g)}. The intercept is never a column.
#'
#' \strong{Conversions.} Integer columns become doubles (so their \code{NA}
#' becomes \code{NaN}, not a sentinel integer). The pandas DataFrame is built
#' column by column (not by \code{reticulate::r_to_py()}, which would turn a
#' character \code{NA} into the string \code{"NA"} and a logical \code{NA}
#' into \code{True}). Other column classes (dates, lists) are an error.
#' Parameters that scikit-learn requires to be integers (such as
#' \code{max_iter}) are passed as Python integers when given as whole
#' numbers.
#'
#' \strong{Scaling.} With \code{scale = TRUE} (the default, with the
#' meaning of \code{e1071::svm}) every numeric column is centred and scaled
#' by the mean and standard deviation of its observed training entries (in R,
#' before Python sees the data; both are kept in \code{fit$scaling}), and
#' the same transformation is applied to new data; constant columns are only
#' centred. Nominal columns are not scaled; the ranks of ordered factors
#' with \code{ordered = "ranks"} are (see \code{scale}).
#' For regression the response is standardised too (\code{fit$y_scaling}),
#' as \code{e1071::svm} does: \code{epsilon} is then in standard deviations
#' of the response, and predictions are transformed back to its units.
#'
#' \strong{Reproducibility.} Some fits draw random numbers in Python: the
#' completions of \code{density = "iterative"} and \code{"mice"}, R's mice
#' run by \code{"r_mice"}, the starting points of \code{"latent_class"} and
#' \code{"gaussian_mixture"}, the features of \code{route = "features"}.
#' Their seed is \code{random_state}; when it is not given, \code{mk_svm}
#' draws one from R's random number generator (one call of
#' \code{sample.int()}), so \code{set.seed()} before the fit reproduces it,
#' in this session or another. A \code{random_state} given wins over the R
#' generator. The seed used is kept in \code{fit$random_state}:
#' \code{update(fit, random_state = fit$random_state)} repeats the draws.
#' The seed reaches a density given by name (\code{"r_mice"} takes it as
#' its \code{seed}, unless \code{density_params} sets one), not a Python
#' density object, which keeps its own.
#'
#' \strong{Memory, and when the kernel is approximated.} An exact fit holds
#' the \eqn{n \times n}{n x n} training Gram matrix and a working copy
#' (\eqn{16 n^2}{16 n^2} bytes: 6 GiB for 20,000 rows). With \code{route =
#' "auto"} (the Python estimator's default) a fit takes that exact route
#' while the Gram matrix fits within the memory limit (\code{max_gram_memory}
#' of \code{\link{mk_config}}, by default half the machine's memory), and
#' otherwise the \strong{approximate} features route: \code{n_kernel_features}
#' (2000) random features of the expected kernel and a linear SVM, whose
#' predictions differ slightly from the exact model's. \code{mk_svm} says so
#' in a message before it starts, as it does when a fit will need 1 GiB or
#' more; \code{\link{mk_memory}} gives the same figures without fitting, and
#' \code{fit$route} records the route taken. \code{route = "exact"} or
#' \code{"features"} forces one.
#'
#' \strong{Saving.} The fitted Python estimator travels inside the R
#' object: it is pickled into \code{fit$python_pickle} (a raw vector) at
#' fitting time, so a model saved with \code{saveRDS()} and read back with
#' \code{readRDS()} in another session, or sent to a parallel worker
#' (\pkg{parallel}, \pkg{future}), unpickles it on first use and predicts
#' exactly as before. The session that reads it needs the Python package (the
#' same versions of \code{missingkernels} and scikit-learn are safest; the
#' versions used are kept as an attribute of the pickle). A model whose
#' Python objects cannot be pickled (e.g. a density that holds an R session
#' through rpy2) still fits, but must be refitted in a new session.
#'
#' @param x A numeric (double, integer or logical) matrix or a data frame of
#'   predictors, \code{NA} where missing.
#' @param y The response: a factor (classification) or a numeric vector
#'   (regression), without \code{NA}.
#' @param formula A formula \code{response ~ predictors}.
#' @param data A data frame containing the variables of \code{formula}.
#' @param subset Optional expression selecting the training rows, as in
#'   \code{\link[stats]{lm}}.
#' @param kernel \code{"auto"} (the default: \code{"mixed_rbf"} when there
#'   are nominal predictors, see Details, else \code{"genrbf"}) or a registry
#'   kernel name, see \code{\link{mk_kernels}}. A kernel for numeric columns
#'   only (such as \code{"genrbf"}) refuses nominal predictors.
#' @param density The density of the missing entries: \code{NULL} for the
#'   kernel's default (\code{"gaussian_em"} for the RBF and linear kernels,
#'   \code{"latent_class"} for \code{"mixed_rbf"}, \code{"categorical"} for
#'   Belanche's kernels), a registry name (see
#'   \code{\link{mk_densities}}), or a Python density object. R's own
#'   imputation models are \code{"r_mice"} (mice), \code{"r_amelia"}
#'   (Amelia) and \code{"r_norm"} (norm), from the R plugin of the Python
#'   package (\code{install_missingkernels(path, plugin = TRUE)}; without
#'   it they are an error saying so); they run in this R session.
#' @param gamma The RBF width,
#'   \eqn{k(x, y) = \exp(-\gamma \|x - y\|^2)}{k(x, y) = exp(-gamma ||x - y||^2)}, a
#'   positive number, or \code{"scale"} for \eqn{1 / (d \cdot}{1 / (d *}
#'   variance of the observed entries\eqn{)}{)}. Ignored by kernels without a
#'   width.
#' @param C The regularisation parameter (cost) of the SVM.
#' @param epsilon The width of the insensitive tube (regression only; in
#'   standard deviations of the response when \code{scale = TRUE}).
#' @param scale Logical: standardise the numeric columns and a numeric
#'   response (see Details). With \code{ordered = "ranks"} and \code{TRUE}
#'   the level ranks of an ordered factor (0, 1, ..., in the order of its
#'   declared levels) are standardised too, by their mean and standard
#'   deviation over the observed training rows, so that the factor enters
#'   the kernel on the scale of the other standardised columns (the centre
#'   and scale are in \code{fit$scaling}, its levels in
#'   \code{fit$scaling$levels}; new data are ranked by label against those
#'   levels); with \code{FALSE} an ordered factor enters as its raw ranks.
#'   Unordered factors, character and logical columns, and ordered factors
#'   with \code{ordered = "nominal"} (the default), are never scaled.
#' @param weights Optional non-negative case weights, one per training row
#'   (see Details).
#' @param na.action A function applied to the \emph{response} (see Details):
#'   \code{\link[stats]{na.omit}} (default), \code{na.exclude} or
#'   \code{na.fail}.
#' @param density_params A named list of parameters of the density, passed
#'   to the Python registry's \code{get_density(density, ...)} (e.g.
#'   \code{list(max_iter = 200)}, \code{list(m = 5, seed = 1)} for
#'   \code{"r_mice"}, \code{list(n_components = 3)} for
#'   \code{"gaussian_mixture"}; whole numbers of count parameters become
#'   Python integers, strings stay strings); needs \code{density} to be a
#'   name.
#' @param probability Logical: also fit a calibrated classifier, for class
#'   probabilities with \code{predict(fit, type = "prob")} (classification
#'   only). It costs \code{calibration_folds + 1} more fits of the SVM.
#' @param calibration How decision values become probabilities:
#'   \code{"sigmoid"} (Platt scaling, as libsvm and \code{e1071::svm}) or
#'   \code{"isotonic"} (monotone, needs more rows); see
#'   \code{\link{predict.mk_svm}}.
#' @param calibration_folds The number of cross-validation folds (stratified,
#'   in row order) whose held-out decision values the calibration is fitted
#'   to; every class needs at least that many training rows.
#' @param handle_unknown What \code{predict} does with a level of a nominal
#'   predictor (or of an ordered factor) that the training rows did not
#'   have: \code{"missing"} treats the entry as missing, with a warning;
#'   \code{"error"} stops. Forwarded to the Python estimator. With
#'   \code{ordered = "nominal"} a declared level of an ordered factor that
#'   no training row uses is such a level; with \code{"ranks"} it has its
#'   rank.
#' @param ordered How ordered factor predictors enter (see \emph{Ordered
#'   factors} in Details): \code{"nominal"} (the default) as nominal
#'   columns, like unordered factors, or \code{"ranks"} as numeric columns
#'   of their level ranks (standardised with \code{scale = TRUE}). Any
#'   other value is an error. It has no effect on matrices or on the
#'   response.
#' @param ... Passed on to the Python estimator
#'   (\code{missingkernels.MissingKernelSVC} or \code{MissingKernelSVR}),
#'   e.g. \code{metric = "mahalanobis"}, \code{class_weight = "balanced"} or
#'   \code{c(yes = 2, no = 1)} (by level), \code{kernel_params =
#'   list(diagonal = "independent")}, \code{tol}, \code{max_iter},
#'   \code{random_state = 1} (an integer seed of what is random in a fit;
#'   by default drawn from R's generator, see \emph{Reproducibility} in
#'   Details), \code{route} and \code{n_kernel_features} (see \emph{Memory}
#'   in Details). For the
#'   formula method: the arguments of the default method (\code{kernel},
#'   \code{density}, \code{gamma}, \code{C}, \code{epsilon}, \code{scale},
#'   \code{density_params}, \code{probability}, \code{calibration},
#'   \code{calibration_folds}, \code{handle_unknown}, \code{ordered}) and
#'   these. The mixed
#'   kernel's weight of the nominal block is \code{kernel_params =
#'   list(nominal_weight = 0.5)}.
#' @return An object of class \code{"mk_svm"}: a list with, among others,
#'   \code{type} (\code{"classification"} or \code{"regression"}),
#'   \code{levels} (the response levels), \code{classes} (the levels present
#'   in the training response, in the order of the decision values),
#'   \code{n_sv} (number of support vectors), \code{random_state} (the
#'   seed of the fit, given or drawn), \code{route} (\code{"exact"}, or
#'   \code{"features"} for the approximate kernel), \code{index} (the rows of
#'   the support vectors, counted from 1), \code{x} and \code{y} (the
#'   training predictors, unscaled: a double matrix when every column is
#'   numeric, else a data frame of double, factor, ordered factor (with
#'   \code{ordered = "ranks"}) and logical columns; and the response), \code{kernel} (the kernel used,
#'   \code{"auto"} resolved), \code{handle_unknown}, \code{fitted} (the
#'   predictions for the training rows), \code{training_error}
#'   (misclassification rate or mean squared error), \code{call} (with
#'   \code{mk_svm}, for \code{update()}), for formula fits \code{terms} and
#'   \code{model} (the model frame), \code{py_model} (the fitted Python
#'   estimator) and \code{python_pickle} (the same, pickled). See \code{\link{predict.mk_svm}} and
#'   \link{mk_svm-methods}.
#' @references M. Smieja, L. Struski, J. Tabor, M. Marzec (2019). Generalized
#'   RBF kernel for incomplete data. \emph{Knowledge-Based Systems} 173.
#'
#'   H. S. Anderson, M. R. Gupta (2011). Expected kernel for missing features
#'   in support vector machines. \emph{IEEE Statistical Signal Processing
#'   Workshop}.
#' @seealso \code{\link{mk_memory}} (the memory a fit needs, and its route),
#'   \code{\link{predict.mk_svm}}, \link{mk_svm-methods} (\code{update},
#'   \code{model.frame}, \code{residuals}, ...), \code{\link{plot.mk_svm}},
#'   \code{\link{mk_kernel_matrix}},
#'   \link{missingkernels-python} for choosing the Python environment.
#' @examples
#' if (mk_available()) {
#'   df <- data.frame(
#'     a = c(1.2, NA, 0.3, 2.2, -0.5, 1.0, NA, -1.1),
#'     b = c(0.1, 1.4, NA, -0.7, 0.9, -1.2, 0.2, 0.4),
#'     f = factor(c("u", "v", "u", NA, "v", "u", "v", "u"))
#'   )
#'   df$y <- factor(c("no", "yes", "no", "yes", "yes", "no", "yes", "no"))
#'   fit <- mk_svm(y ~ a + b + f, data = df, C = 10)
#'   fit
#'   predict(fit, df) # one prediction per row, NA rows included
#'
#'   x <- as.matrix(df[c("a", "b")])
#'   reg <- mk_svm(x, c(2.1, 0.4, 1.5, 3.0, -0.2, 1.1, 0.6, -1.3)) # regression
#'   predict(reg, x)
#' }
#' @order 1
#' @export
mk_svm <- function(x, ...) UseMethod("mk_svm")

#' @rdname mk_svm
#' @order 3
#' @export
mk_svm.default <- function(x, y, kernel = "auto", density = NULL,
                           gamma = "scale", C = 1, epsilon = 0.1,
                           scale = TRUE, density_params = NULL,
                           probability = FALSE, calibration = "sigmoid",
                           calibration_folds = 5, handle_unknown = "missing",
                           ordered = "nominal",
                           weights = NULL, na.action = stats::na.omit, ...) {
  cl <- match.call()
  .mk_check_arguments(...names(), ...length(), formula = FALSE)
  if (missing(y)) {
    stop("`y` is missing: use mk_svm(x, y, ...) or mk_svm(y ~ ., data).",
      call. = FALSE
    )
  }
  n <- if (is.data.frame(x) || is.matrix(x)) nrow(x) else length(x)
  rows <- seq_len(n) # messages number the rows of x
  if (!is.data.frame(y) && !is.matrix(y) && length(y) == n) {
    na <- .mk_response_na(y, na.action, if (is.data.frame(x) || is.matrix(x)) rownames(x))
    if (!is.null(na$action)) {
      x <- if (is.data.frame(x) || is.matrix(x)) x[na$keep, , drop = FALSE] else x[na$keep]
      y <- y[na$keep]
      if (length(weights) == n) weights <- weights[na$keep]
      rows <- rows[na$keep]
    }
  } else {
    na <- list(action = NULL)
  }
  built <- .mk_design_fit(x)
  fit <- .mk_svm_fit(built$x, y, built$design, weights = weights, row_numbers = rows,
    kernel = kernel, density = density, gamma = gamma, C = C,
    epsilon = epsilon, scale = scale, density_params = density_params,
    probability = probability, calibration = calibration,
    calibration_folds = calibration_folds, handle_unknown = handle_unknown,
    ordered = ordered, epsilon_given = !missing(epsilon), ...
  )
  fit$na.action <- na$action
  cl[[1L]] <- as.name("mk_svm") # update() calls the generic
  fit$call <- cl
  fit
}

# A character response whose values all read as numbers ("12", "-3") is most
# likely a numeric column read as text: as a classification it would get one
# class per distinct value.
.mk_warn_numeric_text <- function(y) {
  seen <- unique(y[!is.na(y)])
  if (!length(seen) || anyNA(suppressWarnings(as.numeric(seen)))) {
    return(invisible())
  }
  warning(sprintf(
    paste0(
      "The response is text (character) whose values all read as numbers ",
      "(%s): it is treated as a classification with %d classes. For ",
      "regression, convert it first: y <- as.numeric(y); to keep the ",
      "classes, make it a factor: factor(y)."
    ),
    paste0("\"", utils::head(seen, 3), "\"", collapse = ", "), length(seen)
  ), call. = FALSE)
}

.mk_response <- function(y, n, row_numbers = seq_len(n)) {
  if (is.data.frame(y) || (is.matrix(y) && ncol(y) != 1L)) {
    stop("The response must be a vector (one column).", call. = FALSE)
  }
  if (is.matrix(y)) y <- drop(y)
  if (is.character(y)) .mk_warn_numeric_text(y)
  if (is.logical(y) || is.character(y)) y <- factor(y)
  if (!is.factor(y) && !is.numeric(y)) {
    stop(sprintf(
      "The response must be a factor (classification) or numeric (regression), not %s.",
      class(y)[1]
    ), call. = FALSE)
  }
  if (length(y) != n) {
    stop(sprintf(
      "The response has %d values but the predictors have %d rows.", length(y), n
    ), call. = FALSE)
  }
  missing <- is.na(y)
  infinite <- is.numeric(y) & !missing & !is.finite(y)
  if (any(missing | infinite)) {
    what <- c(
      if (any(missing)) sprintf("%d missing value(s)", sum(missing)),
      if (any(infinite)) sprintf("%d infinite value(s)", sum(infinite))
    )
    stop(sprintf(
      paste0(
        "The response has %s (%s). Rows without a %s response cannot be ",
        "used for training: drop them first, e.g. %s. (Missing predictor ",
        "values are fine: those rows are kept.)"
      ),
      paste(what, collapse = " and "),
      .mk_rows_text(row_numbers[which(missing | infinite)]),
      if (any(infinite)) "finite" else "known",
      if (any(infinite)) "data[is.finite(data$y), ]" else "data[!is.na(data$y), ]"
    ), call. = FALSE)
  }
  if (is.factor(y) && length(unique(y)) < 2L) {
    stop("Classification needs at least two classes in the response; it has ",
      length(unique(y)), ".",
      call. = FALSE
    )
  }
  y
}

.mk_gamma_arg <- function(gamma) {
  if (identical(gamma, "scale")) {
    return(gamma)
  }
  if (!is.numeric(gamma) || length(gamma) != 1L || is.na(gamma) || gamma <= 0) {
    stop("`gamma` must be \"scale\" or one positive number.", call. = FALSE)
  }
  as.double(gamma)
}

.mk_number_arg <- function(value, name, lower_ok = FALSE) {
  if (!is.numeric(value) || length(value) != 1L || is.na(value) ||
    value < 0 || (!lower_ok && value == 0)) {
    stop(sprintf(
      "`%s` must be one %s number.", name,
      if (lower_ok) "non-negative" else "positive"
    ), call. = FALSE)
  }
  as.double(value)
}

# class_weight given per level (a named vector or list) becomes a Python dict
# keyed by the integer class codes sent to Python.
.mk_class_weight <- function(weight, levels) {
  if (is.null(weight) || identical(weight, "balanced")) {
    return(weight)
  }
  if (!(is.numeric(weight) || is.list(weight)) || is.null(names(weight))) {
    stop("`class_weight` must be \"balanced\" or a vector named by the ",
      "response levels, e.g. c(yes = 2, no = 1).",
      call. = FALSE
    )
  }
  unknown <- setdiff(names(weight), levels)
  if (length(unknown)) {
    stop("`class_weight` names ", paste0("'", unknown, "'", collapse = ", "),
      ", which are not levels of the response (",
      paste0("'", levels, "'", collapse = ", "), ").",
      call. = FALSE
    )
  }
  reticulate::py_dict(
    keys = as.list(match(names(weight), levels) - 1L),
    values = lapply(unname(as.list(weight)), as.double)
  )
}

.mk_svm_fit <- function(x, y, design, kernel = "auto", density = NULL,
                        gamma = "scale", C = 1, epsilon = 0.1, scale = TRUE,
                        density_params = NULL, probability = FALSE,
                        calibration = "sigmoid", calibration_folds = 5,
                        handle_unknown = "missing", ordered = "nominal",
                        weights = NULL, epsilon_given = FALSE,
                        row_numbers = seq_len(nrow(x)), ...) {
  # row_numbers: the rows of the user's data that x holds (for messages)
  if (length(row_numbers) != nrow(x)) row_numbers <- seq_len(nrow(x))
  # ordered factor predictors: nominal columns or level ranks (convert.R);
  # before the scaling, which standardises ranks only
  built <- .mk_apply_ordered(x, design, ordered)
  x <- built$x
  design <- built$design
  y <- .mk_response(y, nrow(x), row_numbers)
  .mk_check_arguments(...names(), ...length(), task = if (is.factor(y)) "classification" else "regression")
  weights <- .mk_weights(weights, nrow(x), row_numbers)
  if (!nrow(x)) stop("There are no training rows.", call. = FALSE)
  kernel <- .mk_kernel_arg(kernel) # e1071's "radial" is "genrbf", ... (advice.R)
  handle_unknown <- .mk_handle_unknown_arg(handle_unknown)
  if (!is.logical(scale) || length(scale) != 1L || is.na(scale)) {
    stop("`scale` must be TRUE or FALSE.", call. = FALSE)
  }
  classification <- is.factor(y)
  if (classification && epsilon_given) {
    warning("`epsilon` is used for regression only; ignored.", call. = FALSE)
  }
  calibration <- .mk_calibration_args(
    probability, calibration, calibration_folds, classification, y
  )
  extra <- list(...)
  # set.seed() reproduces a fit: without random_state, one is drawn from R's
  # generator (as ranger does) for what Python draws
  extra$random_state <- .mk_random_state(extra$random_state)
  density_params <- .mk_seed_density_params(density, density_params, extra$random_state)
  scaling <- if (scale) .mk_scaling(x) else NULL
  xs <- .mk_apply_scaling(x, scaling)
  y_scaling <- if (scale && !classification) .mk_response_scaling(y)

  mk <- .mk_py()
  .mk_check_ordered_kernel(kernel, x, design)
  params <- list(
    kernel = kernel, gamma = .mk_gamma_arg(gamma), C = .mk_number_arg(C, "C"),
    handle_unknown = handle_unknown
  )
  if (!classification) params$epsilon <- .mk_number_arg(epsilon, "epsilon", TRUE)
  dens <- .mk_density_arg(density, density_params) # checks name and parameters
  if (length(density_params)) {
    # By name with its parameters: the estimator builds the density itself,
    # and seeds it with `random_state` as it does a density given by name.
    params$density <- density
    params$density_params <- .mk_py_params(density_params)
  } else if (!is.null(dens)) {
    params$density <- dens
  }
  if (classification && !is.null(extra$class_weight)) {
    extra$class_weight <- .mk_class_weight(extra$class_weight, levels(y))
  }
  clash <- intersect(names(extra), names(params))
  if (length(clash)) {
    stop("Argument(s) ", paste(clash, collapse = ", "), " given twice.", call. = FALSE)
  }
  params <- c(params, .mk_py_params(extra))
  cls <- if (classification) mk$MissingKernelSVC else mk$MissingKernelSVR
  params <- c(params, .mk_python_scaling_off(cls)) # R scales (scaling.R)
  model <- .mk_call(do.call(cls, params), "creating the estimator")
  y_py <- if (classification) {
    .mk_np()$array(as.integer(y) - 1L, dtype = "int64")
  } else {
    .mk_np()$array(as.double(.mk_scale_response(y, y_scaling)), dtype = "float64")
  }
  X_py <- .mk_to_python(xs)
  w_py <- if (!is.null(weights)) .mk_np()$array(weights, dtype = "float64")
  .mk_announce_memory(model, nrow(x), ncol(x)) # large or approximate: say so first
  .mk_call(model$fit(X_py, y_py, sample_weight = w_py), "fitting", colnames(x),
    rows = row_numbers
  )
  fitted <- .mk_predict_py(model, X_py, classification, levels(y), colnames(x),
    ordered = is.ordered(y)
  )
  if (!classification) fitted <- .mk_unscale_response(fitted, y_scaling)
  names(fitted) <- rownames(x)
  support <- tryCatch(.mk_from_numpy(model$support_), error = function(e) NULL)
  calibrated <- if (!is.null(calibration)) {
    .mk_fit_calibrated(model, X_py, y_py, w_py, calibration, colnames(x), row_numbers)
  }

  incomplete <- !stats::complete.cases(x)
  structure(
    list(
      call = NULL,
      type = if (classification) "classification" else "regression",
      levels = if (classification) levels(y),
      ordered = is.ordered(y),
      classes = if (classification) {
        levels(y)[.mk_from_numpy(model$classes_) + 1L]
      },
      kernel = .mk_resolved_kernel(kernel, x),
      kernel_argument = kernel,
      handle_unknown = handle_unknown,
      density = if (is.character(density)) density else .mk_default_density(model),
      gamma = gamma,
      gamma_value = .mk_fitted_gamma(model),
      C = C,
      epsilon = if (!classification) epsilon,
      scale = scale,
      scaling = scaling,
      y_scaling = y_scaling,
      design = design,
      n = nrow(x),
      random_state = extra$random_state,
      route = tryCatch(reticulate::py_to_r(model$route_), error = function(e) NA_character_),
      n_features = ncol(x),
      feature_names = colnames(x),
      n_incomplete_rows = sum(incomplete),
      missing_rate = mean(is.na(x)),
      n_sv = length(support),
      index = if (!is.null(support)) as.integer(support) + 1L,
      x = x,
      y = y,
      weights = weights,
      fitted = fitted,
      training_error = .mk_training_error(y, fitted),
      probability = !is.null(calibration),
      calibration = calibration,
      python = list2env(list(model = model, calibrated = calibrated), parent = emptyenv()),
      python_pickle = .mk_pickle(model, calibrated)
    ),
    class = "mk_svm"
  )
}

# The seed of a fit: `random_state` as given (a whole number becomes an
# integer), else one drawn from R's random number generator, so that
# set.seed() before a fit makes it reproducible.
.mk_random_state <- function(random_state) {
  if (is.null(random_state)) {
    return(sample.int(.Machine$integer.max, 1L))
  }
  if (is.numeric(random_state) && length(random_state) == 1L && !is.na(random_state) &&
    random_state == round(random_state) && random_state >= 0 &&
    random_state <= .Machine$integer.max) {
    return(as.integer(random_state))
  }
  stop("`random_state` must be a whole number between 0 and ",
    .Machine$integer.max, " (or NULL to draw one from R's generator, which ",
    "set.seed() fixes).",
    call. = FALSE
  )
}

# The Python estimator passes its random_state to a density given by name
# when the density has that parameter; R's mice through the plugin
# ("r_mice") calls its seed `seed` instead: give it the fit's seed there,
# unless density_params sets one.
.mk_seed_density_params <- function(density, density_params, random_state) {
  if (!is.character(density) || length(density) != 1L || is.na(density) ||
    "seed" %in% names(density_params) || (!is.null(density_params) && !is.list(density_params))) {
    return(density_params)
  }
  .mk_check_density_name(density)
  known <- tryCatch(
    names(reticulate::py_to_r(.mk_py()$get_density(density)$get_params(deep = FALSE))),
    error = function(e) NULL # an unknown name: .mk_density_arg() says so
  )
  if ("seed" %in% known && !"random_state" %in% known) {
    density_params <- c(density_params, list(seed = random_state))
  }
  density_params
}

# `kernel = "auto"` as the Python estimators resolve it: "mixed_rbf" when
# the table has nominal columns (unordered factors, character, logical),
# else "genrbf".
.mk_resolved_kernel <- function(kernel, x) {
  if (!identical(kernel, "auto")) {
    return(kernel)
  }
  if (length(.mk_nominal_columns(x))) "mixed_rbf" else "genrbf"
}

# A kernel for numeric columns only (such as "genrbf") refuses nominal
# columns. When the only nominal columns are ordered factors made nominal by
# the default ordered = "nominal" (which before were level ranks, accepted
# by such kernels), the error says how to get the ranks back, before Python
# is called. Other nominal columns: Python's own error says what to do.
.mk_check_ordered_kernel <- function(kernel, x, design) {
  converted <- design$ordered_nominal
  if (!length(converted) || identical(kernel, "auto") ||
    length(setdiff(.mk_nominal_columns(x), converted))) {
    return(invisible())
  }
  k <- tryCatch(.mk_py()$get_kernel(kernel), error = function(e) NULL)
  if (is.null(k) || .mk_takes_tables(k)) {
    return(invisible()) # an unknown name: the estimator says so
  }
  stop(sprintf(
    paste0(
      "The kernel '%s' takes numeric columns, but the ordered factor%s %s %s ",
      "nominal column%s (ordered = \"nominal\", the default). Use ordered = ",
      "\"ranks\" to give %s as numeric level ranks, or kernel = \"auto\" ",
      "(\"mixed_rbf\" for tables with nominal columns)."
    ),
    kernel, if (length(converted) > 1L) "s" else "",
    paste0("'", converted, "'", collapse = ", "),
    if (length(converted) > 1L) "are" else "is a",
    if (length(converted) > 1L) "s" else "",
    if (length(converted) > 1L) "them" else "it"
  ), call. = FALSE)
}

.mk_handle_unknown_arg <- function(handle_unknown) {
  if (!is.character(handle_unknown) || length(handle_unknown) != 1L ||
    !handle_unknown %in% c("missing", "error")) {
    stop("`handle_unknown` must be \"missing\" (levels unseen in training are ",
      "treated as missing entries, with a warning) or \"error\".",
      call. = FALSE
    )
  }
  handle_unknown
}

# The density the fitted kernel used: its registry name when its class is a
# registered factory, else its class name.
.mk_default_density <- function(model) {
  qualname <- function(cls) {
    paste0(
      reticulate::py_to_r(reticulate::py_get_attr(cls, "__module__")), ".",
      reticulate::py_to_r(reticulate::py_get_attr(cls, "__qualname__"))
    )
  }
  tryCatch(
    {
      dens <- reticulate::py_get_attr(model$kernel_, "density_")
      target <- qualname(reticulate::py_get_attr(dens, "__class__"))
      entries <- reticulate::py_to_r(.mk_py()$list_densities())
      for (name in names(entries)) {
        factory <- reticulate::py_get_attr(entries[[name]], "factory")
        same <- tryCatch(identical(qualname(factory), target), error = function(e) FALSE)
        if (same) {
          return(name)
        }
      }
      sub("^.*\\.", "", target)
    },
    error = function(e) NA_character_
  )
}

.mk_fitted_gamma <- function(model) {
  kernel <- tryCatch(model$kernel_, error = function(e) NULL)
  for (attr in c("gamma_", "gamma")) {
    value <- tryCatch(reticulate::py_to_r(reticulate::py_get_attr(kernel, attr)),
      error = function(e) NULL
    )
    if (is.numeric(value) && length(value) == 1L) {
      return(value)
    }
  }
  NA_real_
}

# The checked probability settings: NULL (no probabilities) or
# list(method, folds).
.mk_calibration_args <- function(probability, calibration, folds, classification, y) {
  if (!is.logical(probability) || length(probability) != 1L || is.na(probability)) {
    stop("`probability` must be TRUE or FALSE.", call. = FALSE)
  }
  if (!is.character(calibration) || length(calibration) != 1L ||
    !calibration %in% c("sigmoid", "isotonic")) {
    stop("`calibration` must be \"sigmoid\" (Platt scaling) or \"isotonic\".",
      call. = FALSE
    )
  }
  if (!is.numeric(folds) || length(folds) != 1L || is.na(folds) || folds < 2 ||
    folds != round(folds)) {
    stop("`calibration_folds` must be a whole number of at least 2.", call. = FALSE)
  }
  if (!probability) {
    return(NULL)
  }
  if (!classification) {
    stop("`probability = TRUE` is for classification; the response is numeric.",
      call. = FALSE
    )
  }
  counts <- table(droplevels(y))
  if (min(counts) < folds) {
    stop(sprintf(
      paste0(
        "Class probabilities are calibrated by %d-fold cross-validation, but ",
        "class '%s' has only %d training row(s): lower `calibration_folds` ",
        "(at least 2) or use probability = FALSE."
      ),
      as.integer(folds), names(counts)[which.min(counts)], min(counts)
    ), call. = FALSE)
  }
  list(method = calibration, folds = as.integer(folds))
}

# scikit-learn's CalibratedClassifierCV around an unfitted copy of the
# estimator: the calibrator (a sigmoid, or an isotonic regression, per class
# one-versus-rest) is fitted on the decision values of cross-validation and
# applied to a copy refitted on all rows (ensemble = False, as libsvm's Platt
# scaling).
.mk_fit_calibrated <- function(model, X, y, sample_weight, calibration, columns,
                               rows = NULL) {
  sk_calibration <- reticulate::import("sklearn.calibration", convert = FALSE)
  sk_base <- reticulate::import("sklearn.base", convert = FALSE)
  calibrated <- .mk_call(sk_calibration$CalibratedClassifierCV(
    sk_base$clone(model),
    method = calibration$method, cv = calibration$folds, ensemble = FALSE
  ), "creating the calibrated classifier")
  .mk_call(
    calibrated$fit(X, y, sample_weight = sample_weight),
    "calibrating the probabilities", columns, rows = rows,
    where = paste0(
      "in the ", calibration$folds, "-fold cross-validation of the training ",
      "rows that calibrates the probabilities, probability = TRUE"
    )
  )
  calibrated
}

# The training error: the misclassification rate (classification) or the
# mean squared error (regression) of the fitted values.
.mk_training_error <- function(y, fitted) {
  if (is.factor(y)) mean(fitted != y) else mean((y - fitted)^2)
}
