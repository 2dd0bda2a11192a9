# Deliberate conversions between R data and the arrays/parameters Python gets.
#
# reticulate maps an integer or logical NA to the most negative int32 (or to
# True), never to NaN, so every input becomes a double matrix first: then an
# R NA (NA_real_ is a NaN) arrives in Python as NaN, the package's marker of a
# missing entry.

# Parameters that scikit-learn and the densities validate as integers: an R
# number such as 5 (a double) is passed as the Python int 5.
.mk_integer_params <- c(
  "max_iter", "random_state", "n_components", "n_init", "n_neighbors",
  "n_draws", "n_imputations", "n_samples", "n_jobs", "verbose", "seed", "m",
  "k", "n_estimators", "max_depth", "n_nearest_features", "burn_in"
)

.mk_as_py_param <- function(value, name) {
  if (is.list(value) && !inherits(value, "python.builtin.object")) {
    if (length(value) && (is.null(names(value)) || any(!nzchar(names(value))))) {
      return(lapply(value, .mk_as_py_param, name = ""))
    }
    return(.mk_py_params(value))
  }
  if (name %in% .mk_integer_params && is.numeric(value) && !is.integer(value) &&
    length(value) == 1L && !is.na(value)) {
    if (value != round(value) || abs(value) > .Machine$integer.max) {
      stop(sprintf(
        "`%s` must be a whole number (an integer in Python), not %s.",
        name, format(value)
      ), call. = FALSE)
    }
    return(as.integer(value))
  }
  if (is.factor(value)) {
    return(as.character(value))
  }
  value
}

# A named R list of parameters as Python keyword arguments.
.mk_py_params <- function(params) {
  if (!length(params)) {
    return(list())
  }
  nm <- names(params)
  if (is.null(nm) || any(!nzchar(nm))) {
    stop("Every argument passed on to Python must be named (name = value).",
      call. = FALSE
    )
  }
  out <- Map(.mk_as_py_param, params, nm)
  names(out) <- nm
  out
}

# An R double matrix as a writable, C-ordered float64 NumPy array (a copy:
# arrays reticulate builds over R memory are read-only). R's NA_real_ is a
# *signalling* NaN (payload 1954, quiet bit clear): NumPy would raise
# "invalid value" warnings on every operation touching it, so every NA
# becomes R's NaN, the standard quiet NaN, first.
.mk_to_numpy <- function(x) {
  x <- unname(x)
  x[is.na(x)] <- NaN
  .mk_np()$array(reticulate::r_to_py(x), dtype = "float64", order = "C")
}

.mk_from_numpy <- function(x) {
  out <- reticulate::py_to_r(x)
  if (is.array(out) && length(dim(out)) == 1L) out <- as.vector(out)
  out
}

# Classes of data-frame columns that can become numeric columns.
.mk_column_ok <- function(col) {
  is.numeric(col) || is.logical(col) || is.factor(col) || is.character(col)
}

.mk_check_columns <- function(df, what = "x") {
  bad <- names(df)[!vapply(df, .mk_column_ok, logical(1))]
  if (length(bad)) {
    stop(sprintf(
      paste0(
        "Column(s) %s of %s are of class %s; only numeric, integer, logical, ",
        "factor and character columns can be used. Convert them (e.g. ",
        "as.numeric() for dates) or drop them."
      ),
      paste0("'", bad, "'", collapse = ", "), what,
      paste(unique(vapply(df[bad], function(c) class(c)[1], "")), collapse = "/")
    ), call. = FALSE)
  }
  invisible(df)
}

# Treatment contrasts (one 0/1 column per level but the first) for every
# factor, ordered ones included: the default polynomial contrasts of ordered
# factors would turn levels into arbitrary real scores.
.mk_contrasts <- function(mf, response = NULL) {
  vars <- setdiff(names(mf), response)
  fac <- vars[vapply(mf[vars], function(c) is.factor(c) || is.character(c), TRUE)]
  stats::setNames(rep(list("contr.treatment"), length(fac)), fac)
}

# Unused levels of predictor factors would give all-zero (constant) columns,
# which make a fitted covariance singular.
.mk_drop_predictor_levels <- function(mf, response = NULL) {
  for (nm in names(mf)) {
    if (!identical(nm, response) && is.factor(mf[[nm]])) {
      mf[[nm]] <- droplevels(mf[[nm]])
    }
  }
  mf
}

# The design matrix (no intercept) of a model frame whose rows with NA were
# kept (na.pass): model.matrix keeps them as rows with NA entries; a missing
# factor value makes all of that factor's indicator columns NA.
.mk_model_matrix <- function(mt, mf, contrasts) {
  mt <- stats::delete.response(mt)
  attr(mt, "intercept") <- 1L # always drop a level, with or without `- 1`
  x <- stats::model.matrix(mt, mf, contrasts.arg = contrasts)
  keep <- colnames(x) != "(Intercept)"
  x <- x[, keep, drop = FALSE]
  attr(x, "assign") <- NULL
  attr(x, "contrasts") <- NULL
  storage.mode(x) <- "double"
  x
}

# Builds the training design matrix from a matrix or data frame `x`;
# returns list(x = double matrix, design = what is needed for new data).
.mk_design_fit <- function(x) {
  if (is.data.frame(x)) {
    .mk_check_columns(x)
    if (!ncol(x)) stop("`x` has no columns.", call. = FALSE)
    mf <- stats::model.frame(~., data = x, na.action = stats::na.pass)
    mf <- .mk_drop_predictor_levels(mf)
    mt <- attr(mf, "terms")
    contrasts <- .mk_contrasts(mf)
    xm <- .mk_model_matrix(mt, mf, contrasts)
    design <- list(
      kind = "data.frame", terms = stats::delete.response(mt),
      xlevels = stats::.getXlevels(mt, mf), contrasts = contrasts,
      columns = colnames(xm)
    )
    return(list(x = xm, design = design))
  }
  xm <- .mk_as_double_matrix(x, "x")
  list(x = xm, design = list(kind = "matrix", columns = colnames(xm), ncol = ncol(xm)))
}

.mk_as_double_matrix <- function(x, what) {
  if (is.vector(x) && !is.list(x) || is.factor(x)) {
    x <- matrix(x, ncol = 1L, dimnames = list(names(x), NULL))
  }
  if (!is.matrix(x)) {
    stop(sprintf(
      "`%s` must be a numeric matrix or a data frame, not an object of class %s.",
      what, class(x)[1]
    ), call. = FALSE)
  }
  if (!(is.numeric(x) || is.logical(x))) {
    stop(sprintf(
      paste0(
        "`%s` is a %s matrix; it must be numeric, integer or logical. Use a ",
        "data frame with factor columns for categorical variables (they ",
        "become indicator columns)."
      ),
      what, typeof(x)
    ), call. = FALSE)
  }
  storage.mode(x) <- "double" # integer/logical NA -> NA_real_ (NaN in Python)
  x
}

# The design matrix of new rows, built exactly like the training one.
.mk_design_new <- function(design, newdata) {
  if (design$kind == "matrix") {
    if (is.data.frame(newdata)) {
      .mk_check_columns(newdata, "newdata")
      fac <- vapply(newdata, function(c) is.factor(c) || is.character(c), TRUE)
      if (any(fac)) {
        stop("The model was fitted on a numeric matrix; `newdata` has factor ",
          "or character columns.",
          call. = FALSE
        )
      }
      newdata <- as.matrix(newdata)
    }
    x <- .mk_as_double_matrix(newdata, "newdata")
    if (!is.null(design$columns) && !is.null(colnames(x))) {
      missing_cols <- setdiff(design$columns, colnames(x))
      if (length(missing_cols)) {
        stop("`newdata` lacks the column(s) ",
          paste0("'", missing_cols, "'", collapse = ", "),
          " used for fitting.",
          call. = FALSE
        )
      }
      x <- x[, design$columns, drop = FALSE]
    } else if (ncol(x) != design$ncol) {
      stop(sprintf(
        "`newdata` has %d column(s); the model was fitted on %d.",
        ncol(x), design$ncol
      ), call. = FALSE)
    }
    return(x)
  }
  if (!is.data.frame(newdata)) {
    if (is.matrix(newdata) && !is.null(colnames(newdata))) {
      newdata <- as.data.frame(newdata, stringsAsFactors = FALSE)
    } else {
      stop("`newdata` must be a data frame with the variables used for fitting.",
        call. = FALSE
      )
    }
  }
  mf <- stats::model.frame(design$terms, newdata,
    na.action = stats::na.pass, xlev = design$xlevels
  )
  if (!is.null(cl <- attr(design$terms, "dataClasses"))) {
    stats::.checkMFClasses(cl, mf)
  }
  x <- .mk_model_matrix(design$terms, mf, design$contrasts)
  if (!identical(colnames(x), design$columns)) {
    stop("The columns built from `newdata` differ from the training columns.",
      call. = FALSE
    )
  }
  x
}

`%||%` <- function(a, b) if (is.null(a)) b else a
