#' mk_svm as a caret model
#'
#' Returns a custom model for \code{caret::train(method = )}: a list in the
#' form of caret's \code{getModelInfo()} entries, so caret users keep their
#' \code{train()} workflows (resampling, tuning grids, \code{trainControl},
#' \code{confusionMatrix}, ...) on data with missing predictors. caret's own
#' SVMs (\code{"svmRadial"} and others) cannot fit rows with missing values,
#' so with \code{na.action = na.pass} every resample fails; this model keeps
#' those rows (see \code{\link{mk_svm}}).
#'
#' Call \code{train()} with \code{na.action = na.pass} (else the formula
#' method drops every incomplete row before the model sees it) and
#' \code{preProcess = NULL}: \code{mk_svm} standardises the predictors
#' itself, on each resample's training rows (caret's \code{"center"} and
#' \code{"scale"} would do the same; its imputing pre-processors would defeat
#' the purpose). The tuning parameters are \code{C} and \code{gamma} (the RBF
#' width, \eqn{k(x, y) = \exp(-\gamma \|x - y\|^2)}{k(x, y) = exp(-gamma ||x
#' - y||^2)}, kernlab's \code{sigma}); caret's default grid
#' (\code{tuneLength = len}) is \code{C} = \eqn{2^{-2}, 2^{-1}, \dots}{2^-2,
#' 2^-1, ...} (\code{len} values, as caret's \code{"svmRadial"}) with
#' \code{gamma} = 1 / (number of predictor columns), the value of
#' \code{gamma = "scale"} for standardised columns; \code{search = "random"}
#' draws both on log scales. With \code{classProbs = TRUE} in
#' \code{trainControl} the fits are made with \code{probability = TRUE}.
#' The formula method of \code{train()} dummy codes factors (caret builds a
#' model matrix); give a data frame to \code{train(x, y)} to keep them
#' nominal columns.
#'
#' \strong{Predicting: give \code{na.action = na.pass} again.} For a model
#' trained with the formula method, \code{train(y ~ ., data)}, caret's
#' \code{predict(fit, newdata)} builds the model frame of \code{newdata}
#' with its own \code{na.action}, \code{na.omit} by default: it
#' \strong{drops every incomplete row} before this model sees it, and
#' returns fewer predictions than \code{newdata} has rows, without a
#' warning. Call \code{predict(fit, newdata, na.action = na.pass)} (also
#' with \code{type = "prob"}) to get one prediction per row, incomplete rows
#' included. A model trained with \code{train(x, y)} predicts every row
#' either way.
#'
#' Each fit draws its \code{random_state} (see \code{\link{mk_svm}}) from
#' R's generator unless \code{random_state} is fixed here, so
#' \code{set.seed()} before \code{train()} (or caret's \code{seeds} in
#' \code{trainControl}) reproduces the fits of the densities that draw.
#'
#' @param ... Fixed arguments of every \code{\link{mk_svm}} fit, e.g.
#'   \code{kernel = "expected_rbf"}, \code{density = "r_mice"},
#'   \code{density_params = list(n_components = 2)}.
#' @return A list with the elements caret asks of a custom model
#'   (\code{label}, \code{library}, \code{type}, \code{parameters},
#'   \code{grid}, \code{fit}, \code{predict}, \code{prob}, \code{predictors},
#'   \code{levels}, \code{tags}, \code{sort}, \code{loop}).
#' @references M. Kuhn. The caret package, chapter "Using your own model in
#'   train". \url{https://topepo.github.io/caret/using-your-own-model-in-train.html}
#' @seealso \code{\link{mk_svm}}, \code{\link{mk_tune}} (the same search
#'   without caret).
#' @examples
#' if (mk_available() && requireNamespace("caret", quietly = TRUE)) {
#'   data("PimaIndiansDiabetes2", package = "mlbench")
#'   set.seed(1)
#'   pima <- PimaIndiansDiabetes2[sample(768, 200), ]
#'   fit <- caret::train(diabetes ~ ., data = pima,
#'     method = mk_caret_model(), preProcess = NULL, na.action = na.pass,
#'     tuneLength = 2, trControl = caret::trainControl(method = "cv", number = 3))
#'   fit$results
#'   # caret's predict() drops incomplete rows unless na.action = na.pass:
#'   nrow(pima)                                                 # 200 rows
#'   length(predict(fit, newdata = pima))                       # complete rows only
#'   length(predict(fit, newdata = pima, na.action = na.pass))  # all 200
#'   predict(fit, newdata = head(pima), na.action = na.pass)
#' }
#' @export
mk_caret_model <- function(...) {
  fixed <- list(...)
  reserved <- intersect(names(fixed), c("C", "gamma", "weights", "na.action", "subset"))
  if (length(reserved)) {
    stop("mk_caret_model(): ", paste0("`", reserved, "`", collapse = ", "),
      " is set by caret (C and gamma are the tuning parameters; weights come ",
      "from train(weights = )).",
      call. = FALSE
    )
  }
  .mk_check_arguments(names(fixed), length(fixed), formula = TRUE)
  list(
    label = "SVM with expected kernels for missing values (missingkernels)",
    library = "missingkernels",
    type = c("Classification", "Regression"),
    parameters = data.frame(
      parameter = c("C", "gamma"), class = c("numeric", "numeric"),
      label = c("Cost", "RBF width (gamma)"), stringsAsFactors = FALSE
    ),
    grid = function(x, y, len = NULL, search = "grid") {
      len <- len %||% 3L
      d <- max(NCOL(x), 1L)
      if (identical(search, "random")) {
        data.frame(C = 2^stats::runif(len, -5, 10), gamma = 2^stats::runif(len, -6, 2) / d)
      } else {
        data.frame(C = 2^((seq_len(len)) - 3), gamma = 1 / d)
      }
    },
    loop = NULL,
    fit = function(x, y, wts, param, lev, last, classProbs, ...) {
      args <- c(
        list(x, y, C = param$C, gamma = param$gamma),
        fixed, list(...)
      )
      if (is.factor(y) && isTRUE(classProbs) && is.null(args$probability)) {
        args$probability <- TRUE
      }
      if (!is.null(wts)) args$weights <- wts
      do.call(mk_svm, args)
    },
    predict = function(modelFit, newdata, preProc = NULL, submodels = NULL) {
      .mk_caret_newdata(modelFit, newdata, function(nd) predict(modelFit, nd))
    },
    prob = function(modelFit, newdata, preProc = NULL, submodels = NULL) {
      .mk_caret_newdata(modelFit, newdata, function(nd) {
        as.data.frame(predict(modelFit, nd, type = "prob"))
      })
    },
    predictors = function(x, ...) x$feature_names,
    varImp = NULL,
    levels = function(x) x$levels,
    tags = c(
      "Kernel Method", "Support Vector Machines", "Radial Basis Function",
      "Missing Values", "Robust Methods"
    ),
    sort = function(x) x[order(x$C, -x$gamma), , drop = FALSE]
  )
}

# caret hands new rows as a matrix or a data frame whatever the model was
# fitted on: give predict() the container of the fit.
.mk_caret_newdata <- function(fit, newdata, f) {
  if (fit$design$kind == "matrix" && is.data.frame(newdata)) {
    newdata <- as.matrix(newdata)
  } else if (fit$design$kind != "matrix" && is.matrix(newdata)) {
    newdata <- as.data.frame(newdata, stringsAsFactors = FALSE)
  }
  f(newdata)
}
