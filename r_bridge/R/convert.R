# Deliberate conversions between R data and the arrays/parameters Python gets.
#
# reticulate maps an integer or logical NA to the most negative int32 (or to
# True), never to NaN, so every input becomes a double matrix first: then an
# R NA (NA_real_ is a NaN) arrives in Python as NaN, the package's marker of a
# missing entry.

# Parameters that scikit-learn and the densities validate as integers: an R
# number such as 5 (a double) is passed as the Python int 5.
.mk_integer_params <- c(
  "max_iter", "random_state", "n_components", "n_kernel_features", "n_init", "n_neighbors",
  "n_draws", "n_imputations", "n_samples", "n_jobs", "verbose", "seed", "m",
  "k", "n_estimators", "max_depth", "n_nearest_features", "burn_in",
  "maxit", "maxits", "empri"
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
# factors would turn levels into arbitrary real scores. Used by the indicator
# coding of mk_compare() only (its Python runner takes numeric arrays).
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
.mk_model_matrix <- function(mt, mf, contrasts, keep_assign = FALSE) {
  mt <- stats::delete.response(mt)
  attr(mt, "intercept") <- 1L # always drop a level, with or without `- 1`
  x <- stats::model.matrix(mt, mf, contrasts.arg = contrasts)
  keep <- colnames(x) != "(Intercept)"
  assign <- attr(x, "assign")[keep]
  x <- x[, keep, drop = FALSE]
  attr(x, "assign") <- if (keep_assign) assign
  attr(x, "contrasts") <- NULL
  storage.mode(x) <- "double"
  x
}

# The indicator-coded design matrix of a data frame (mk_compare(), whose
# Python runner takes numeric arrays only): factors and character columns
# become treatment-coded 0/1 columns, logical columns one 0/1 column.
.mk_indicator_matrix <- function(x) {
  if (!is.data.frame(x)) {
    return(.mk_as_double_matrix(x, "x"))
  }
  .mk_check_columns(x)
  if (!ncol(x)) stop("`x` has no columns.", call. = FALSE)
  mf <- stats::model.frame(~., data = x, na.action = stats::na.pass)
  mf <- .mk_drop_predictor_levels(mf)
  .mk_model_matrix(attr(mf, "terms"), mf, .mk_contrasts(mf))
}

# ---------------------------------------------------------------------------
# Mixed tables: factor, character and logical predictors are nominal columns.
#
# A predictor variable of the model frame is "numeric" (numeric or integer,
# possibly a matrix such as ns(x, 3)), "nominal" (an unordered factor or a
# character vector), "logical" (nominal with the categories FALSE/TRUE) or
# "ordered" (an ordered factor: numeric on the Python side, by level rank,
# unless mk_svm's `ordered = "nominal"`, its default, makes it nominal; see
# .mk_apply_ordered()).
.mk_var_kind <- function(col) {
  if (is.ordered(col)) {
    "ordered"
  } else if (is.factor(col) || is.character(col)) {
    "nominal"
  } else if (is.logical(col) && is.null(dim(col))) {
    "logical"
  } else {
    "numeric"
  }
}

# The training table of a model frame. Terms whose variables are all numeric
# give the columns of their model matrix (log(x), x:z, ns(x, 3), I(x^2), ...);
# a term that is one factor, character or logical variable gives one column
# of that variable, kept as it is (no dummy coding); a term combining such a
# variable with others (an interaction such as f:x or f:g) is an error.
# Returns list(x, design): `x` a double matrix when every column is numeric
# (the arrays of all-numeric fits), else a data frame whose columns are
# doubles, factors (levels: the training levels), ordered factors and
# logicals, in term order; `design` what .mk_design_new() needs.
.mk_table_fit <- function(mt, mf, data_names = NULL) {
  mt <- stats::delete.response(mt)
  # the columns new data must have: the variables of the terms that were
  # columns of the data (or plain variables of the model frame)
  variables <- intersect(all.vars(mt), union(data_names, names(mf)))
  labels <- attr(mt, "term.labels")
  if (!length(labels)) stop("The formula has no predictors.", call. = FALSE)
  fac <- attr(mt, "factors")
  vars <- rownames(fac)
  kinds <- vapply(vars, function(v) .mk_var_kind(mf[[v]]), "")
  term_kind <- character(length(labels))
  term_var <- character(length(labels))
  for (j in seq_along(labels)) {
    involved <- vars[fac[, j] > 0]
    special <- involved[kinds[involved] != "numeric"]
    if (!length(special)) {
      term_kind[j] <- "numeric"
    } else if (length(involved) == 1L) {
      term_kind[j] <- kinds[[involved]]
      term_var[j] <- involved
    } else {
      stop(sprintf(
        paste0(
          "The term '%s' combines the %s %s with other variables. Factor, ",
          "character and logical predictors are nominal columns (compared by ",
          "matching, not dummy coded), so interactions with them are not ",
          "available. Drop the term, or give the combination as one ",
          "variable: interaction(f, g) for two factors, or a numeric ",
          "column you build (e.g. x * (f == \"a\"))."
        ),
        labels[j], if (length(special) > 1L) "variables" else "variable",
        paste0("'", special, "'", collapse = " and ")
      ), call. = FALSE)
    }
  }
  numeric_terms <- which(term_kind == "numeric")
  num_tt <- if (length(numeric_terms)) mt[numeric_terms]
  xm <- if (!is.null(num_tt)) .mk_model_matrix(num_tt, mf, NULL, keep_assign = TRUE)
  levels <- list()
  columns <- list()
  for (j in seq_along(labels)) {
    if (term_kind[j] == "numeric") {
      k <- match(j, numeric_terms)
      for (cc in which(attr(xm, "assign") == k)) {
        columns[[colnames(xm)[cc]]] <- unname(xm[, cc])
      }
      next
    }
    v <- term_var[j]
    col <- mf[[v]]
    if (term_kind[j] == "nominal") {
      col <- .mk_nominal_column(col, v)
      levels[[v]] <- levels(col)
    } else if (term_kind[j] == "ordered") {
      levels[[v]] <- levels(col) # all levels: the ranks are the declared ones
    }
    columns[[v]] <- unname(col)
  }
  kind_of <- stats::setNames(rep("numeric", length(columns)), names(columns))
  kind_of[names(levels)] <- vapply(names(levels), function(v) kinds[[v]], "")
  logical_vars <- term_var[term_kind == "logical"]
  kind_of[logical_vars] <- "logical"
  design <- list(
    kind = "data.frame", terms = mt, numeric_terms = num_tt, variables = variables,
    columns = names(columns), column_kinds = kind_of, levels = levels,
    table = any(kind_of != "numeric")
  )
  list(x = .mk_assemble(columns, design, rownames(mf)), design = design)
}

# A nominal training column: an unordered factor of the levels the rows use
# (unused levels are no categories), with a warning when fewer than two are
# left.
.mk_nominal_column <- function(col, name) {
  col <- droplevels(factor(col, ordered = FALSE))
  if (nlevels(col) < 2L) {
    warning(sprintf(
      paste0(
        "The factor predictor '%s' has %s level in the rows used: it ",
        "carries no information. Drop it from the formula."
      ),
      name, if (nlevels(col)) "one" else "no"
    ), call. = FALSE)
  }
  col
}

# The choices of mk_svm's `ordered`, the treatment of ordered factor
# predictors: "nominal" (the default) or "ranks".
.mk_ordered_arg <- function(ordered) {
  if (!is.character(ordered) || length(ordered) != 1L || is.na(ordered) ||
    !ordered %in% c("nominal", "ranks")) {
    stop(
      "`ordered` must be \"nominal\" (ordered factor predictors are nominal ",
      "columns, as unordered factors; the default) or \"ranks\" (numeric ",
      "columns of their level ranks 0, 1, ..., standardised with scale = TRUE).",
      call. = FALSE
    )
  }
  ordered
}

# Applies mk_svm's `ordered` to a training design (from .mk_design_fit() or
# .mk_table_fit(), which keep ordered factors as "ordered" columns, i.e. level
# ranks for Python). With "nominal" every ordered column becomes a nominal
# one, exactly as if it had been given as factor(x, ordered = FALSE): R's own
# models (lm, e1071::svm through model.matrix) code an ordered factor with
# polynomial contrasts, L - 1 columns spanning the same space as its dummy
# columns, i.e. as a categorical, not as one column of ranks; and on three
# tables with ordered predictors the ranks lost to mean imputation +
# e1071::svm on two (r_bridge/tools/ordered-factors-results.md). The choice
# is kept in design$ordered and the converted columns in
# design$ordered_nominal; a design without `ordered` (a fit saved by an
# older version) keeps its "ordered" columns, i.e. ranks, in predict().
.mk_apply_ordered <- function(x, design, ordered) {
  ordered <- .mk_ordered_arg(ordered)
  if (!identical(design$kind, "data.frame")) {
    return(list(x = x, design = design)) # a matrix: numbers only
  }
  design$ordered <- ordered
  design$ordered_nominal <- character()
  if (ordered == "ranks") {
    return(list(x = x, design = design))
  }
  kinds <- design$column_kinds
  for (v in names(kinds)[kinds == "ordered"]) {
    col <- .mk_nominal_column(x[[v]], v)
    x[[v]] <- col
    design$levels[[v]] <- levels(col)
    design$column_kinds[[v]] <- "nominal"
    design$ordered_nominal <- c(design$ordered_nominal, v)
  }
  list(x = x, design = design)
}

# The columns as the design's container: a double matrix for all-numeric
# designs, else a data frame (names kept as they are).
.mk_assemble <- function(columns, design, row_names) {
  n <- if (length(columns)) length(columns[[1L]]) else 0L
  if (!isTRUE(design$table)) {
    x <- matrix(
      as.double(unlist(columns, use.names = FALSE)), n, length(columns),
      dimnames = list(row_names, names(columns))
    )
    return(x)
  }
  structure(columns,
    class = "data.frame",
    row.names = if (is.null(row_names)) .set_row_names(n) else row_names
  )
}

# Builds the training design from a matrix or data frame `x`;
# returns list(x = double matrix or data frame, design = what is needed for
# new data).
.mk_design_fit <- function(x) {
  if (is.data.frame(x)) {
    .mk_check_columns(x)
    if (!ncol(x)) stop("`x` has no columns.", call. = FALSE)
    mf <- stats::model.frame(~., data = x, na.action = stats::na.pass)
    return(.mk_table_fit(attr(mf, "terms"), mf, names(x)))
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
        "data frame with factor or character columns for categorical ",
        "variables (they become nominal columns)."
      ),
      what, typeof(x)
    ), call. = FALSE)
  }
  storage.mode(x) <- "double" # integer/logical NA -> NA_real_ (NaN in Python)
  x
}

# The design matrix of new rows, built exactly like the training one.
.mk_design_new <- function(design, newdata, handle_unknown = "missing") {
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
  if (is.null(design$column_kinds)) {
    stop("This model was fitted by an older version of the package; refit it.",
      call. = FALSE
    )
  }
  lacking <- setdiff(design$variables, names(newdata))
  if (length(lacking)) {
    # model.frame() would look them up outside newdata (an error, or another
    # object of that name)
    stop(sprintf(
      "`newdata` lacks the column(s) %s used for fitting (it has %s).",
      paste0("'", lacking, "'", collapse = ", "),
      if (ncol(newdata)) paste0("'", utils::head(names(newdata), 10), "'", collapse = ", ") else "no columns"
    ), call. = FALSE)
  }
  mf <- stats::model.frame(design$terms, newdata, na.action = stats::na.pass)
  kinds <- design$column_kinds
  nominal_vars <- names(kinds)[kinds != "numeric"]
  # variables of numeric terms: numbers (an all-NA column may be logical)
  for (v in setdiff(names(mf), nominal_vars)) {
    col <- mf[[v]]
    if (is.logical(col) && all(is.na(col))) {
      mf[[v]] <- as.double(col)
    } else if (!is.numeric(col)) {
      stop(sprintf(
        "Variable '%s' was numeric in the training data; in `newdata` it is of class %s.",
        v, class(col)[1]
      ), call. = FALSE)
    }
  }
  columns <- list()
  xm <- if (!is.null(design$numeric_terms)) {
    .mk_model_matrix(design$numeric_terms, mf, NULL)
  }
  for (nm in design$columns) {
    columns[[nm]] <- if (kinds[[nm]] == "numeric") {
      if (is.null(xm) || !nm %in% colnames(xm)) {
        stop("The columns built from `newdata` differ from the training columns.",
          call. = FALSE
        )
      }
      unname(xm[, nm])
    } else {
      .mk_new_column(mf[[nm]], nm, kinds[[nm]], design$levels[[nm]], handle_unknown,
        was_ordered = nm %in% design$ordered_nominal
      )
    }
  }
  .mk_assemble(columns, design, rownames(mf))
}

# A nominal, ordered or logical column of new rows, coded against the
# training levels by label (never by integer code). A nominal column keeps
# labels unseen in training as extra levels: the Python estimator applies
# `handle_unknown` to them (and warns). An ordered factor is sent with exactly
# the training levels (their ranks are its values), so an unseen level is
# handled here, as Python would: an R warning of class
# "missingkernels_UnknownCategoryWarning" and NA, or an error; the message
# names it as an ordered factor.
# `was_ordered`: a nominal column that was an ordered factor in training
# (ordered = "nominal"), for the messages.
.mk_new_column <- function(col, name, kind, levels, handle_unknown = "missing",
                           was_ordered = FALSE) {
  if (is.logical(col) && all(is.na(col))) { # e.g. data.frame(f = NA)
    return(switch(kind,
      logical = unname(col),
      ordered = factor(rep(NA_character_, length(col)), levels = levels, ordered = TRUE),
      factor(rep(NA_character_, length(col)), levels = levels)
    ))
  }
  if (kind == "logical") {
    if (!is.logical(col)) {
      stop(sprintf(
        "Variable '%s' was logical in the training data; in `newdata` it is of class %s.",
        name, class(col)[1]
      ), call. = FALSE)
    }
    return(unname(col))
  }
  if (!(is.factor(col) || is.character(col))) {
    stop(sprintf(
      paste0(
        "Variable '%s' was a%s factor%s in the training data; in `newdata` it ",
        "is of class %s (give a factor or character vector with the training ",
        "levels: %s)."
      ),
      name, if (kind == "ordered" || was_ordered) "n ordered" else "",
      if (was_ordered) " (a nominal column: ordered = \"nominal\")" else "",
      class(col)[1],
      paste0("'", utils::head(levels, 8), "'", collapse = ", ")
    ), call. = FALSE)
  }
  values <- as.character(col)
  unseen <- setdiff(unique(values[!is.na(values)]), levels)
  if (kind == "nominal") {
    return(factor(values, levels = c(levels, unseen)))
  }
  if (length(unseen)) {
    what <- sprintf(
      "the ordered factor '%s' holds %d value(s) not among its training levels (%s; levels: %s)",
      name, sum(values %in% unseen), paste0("'", utils::head(unseen, 5), "'", collapse = ", "),
      paste0("'", utils::head(levels, 10), "'", collapse = " < ")
    )
    if (identical(handle_unknown, "error")) {
      stop(paste0(
        "In `newdata`, ", what, ". Use handle_unknown = \"missing\" in mk_svm() ",
        "to treat unseen levels as missing entries."
      ), call. = FALSE)
    }
    warning(structure(
      class = c("missingkernels_UnknownCategoryWarning", "warning", "condition"),
      list(
        message = paste0(
          "UnknownCategoryWarning: in `newdata`, ", what,
          "; they are treated as missing (handle_unknown = \"missing\")."
        ),
        call = NULL, category = "UnknownCategoryWarning"
      )
    ))
    values[values %in% unseen] <- NA_character_
  }
  factor(values, levels = levels, ordered = TRUE)
}

# The predictors as the Python estimator takes them: a float64 NumPy array
# (NA -> NaN) for a double matrix; for a data frame (a design with nominal
# columns) a pandas DataFrame built column by column, not by
# reticulate::r_to_py(), which with reticulate 1.28 turns an NA of a
# character column into the string "NA", a logical NA into True and an
# integer NA into -2147483648. Here: double columns -> float64 (NaN),
# factors -> pandas Categorical with the factor's levels as categories
# (unordered; ordered factors -> ordered Categorical), logical -> pandas
# "boolean" (pd.NA where missing).
.mk_to_python <- function(x) {
  if (!is.data.frame(x)) {
    return(.mk_to_numpy(x))
  }
  kinds <- vapply(x, function(col) {
    if (is.ordered(col)) "ordered" else if (is.factor(col)) "nominal" else if (is.logical(col)) "logical" else "numeric"
  }, "")
  numeric <- kinds %in% c("numeric", "logical")
  num <- if (any(numeric)) {
    m <- matrix(0, nrow(x), sum(numeric))
    for (k in seq_len(sum(numeric))) m[, k] <- as.double(x[[which(numeric)[k]]])
    .mk_to_numpy(m)
  }
  cat <- if (any(!numeric)) {
    m <- matrix(-1L, nrow(x), sum(!numeric))
    for (k in seq_len(sum(!numeric))) {
      codes <- as.integer(x[[which(!numeric)[k]]]) - 1L
      codes[is.na(codes)] <- -1L
      m[, k] <- codes
    }
    .mk_np()$array(reticulate::r_to_py(m), dtype = "int64")
  }
  categories <- lapply(x[!numeric], function(col) as.list(levels(col)))
  .mk_frame_helper()$`_mk_frame`(
    as.list(names(x)), as.list(unname(kinds)), num, cat, unname(categories)
  )
}

.mk_frame_helper <- function() {
  .mk_py()
  if (is.null(.mk_state$frame_helper)) {
    .mk_state$frame_helper <- reticulate::py_run_string(paste(
      "def _mk_frame(names, kinds, numeric, codes, categories):",
      "    import numpy as np",
      "    import pandas as pd",
      "    data = {}",
      "    i = c = 0",
      "    for name, kind in zip(names, kinds):",
      "        if kind in ('numeric', 'logical'):",
      "            v = np.asarray(numeric[:, i], dtype=np.float64)",
      "            i += 1",
      "            if kind == 'numeric':",
      "                data[name] = v",
      "            else:",
      "                data[name] = pd.array([None if t != t else bool(t) for t in v], dtype='boolean')",
      "        else:",
      "            data[name] = pd.Categorical.from_codes(",
      "                np.asarray(codes[:, c], dtype=np.int64), categories=list(categories[c]),",
      "                ordered=kind == 'ordered')",
      "            c += 1",
      "    return pd.DataFrame(data, columns=list(names))",
      sep = "\n"
    ), local = TRUE, convert = FALSE)
  }
  .mk_state$frame_helper
}

`%||%` <- function(a, b) if (is.null(a)) b else a
