# Calls into Python: errors and warnings as R conditions, with R's column
# names and R advice.

# Evaluates a Python call; a Python exception becomes an R error whose
# message is the exception's, without reticulate's call and traceback. The
# warnings Python issues during the call are recorded (not printed on stderr)
# and re-signalled as R warnings of class "missingkernels_python_warning"
# (catchable with suppressWarnings() or withCallingHandlers()), each distinct
# one once. Messages name columns as R does: `columns` are the column names
# of the matrix sent to Python (NULL: positions, counted from 1); `where`
# says in the warnings where they come from (e.g. the calibration folds).
# Python advice in messages is rewritten for R users (.mk_r_advice()).
.mk_call <- function(expr, what, columns = NULL, where = NULL, rows = NULL) {
  # R's mice (the R plugin's density, run in this R session) calls set.seed():
  # the user's random number stream is left as it was
  seed <- .mk_save_seed()
  recorder <- .mk_warnings_start()
  on.exit({
    .mk_restore_seed(seed)
    .mk_warnings_stop(recorder, columns, where, rows)
  })
  tryCatch(expr, python.builtin.Exception = function(e) {
    stop(.mk_python_error_message(e, what, columns, rows), call. = FALSE)
  }, error = function(e) {
    if (inherits(e, "missingkernels_python_unavailable")) stop(e)
    stop(.mk_python_error_message(e, what, columns, rows), call. = FALSE)
  })
}

# Python's warnings.catch_warnings(record = TRUE), entered: the context and
# the list it records into.
.mk_warnings_start <- function() {
  .mk_py()
  if (is.null(.mk_state$warnings)) {
    .mk_state$warnings <- reticulate::import("warnings", convert = FALSE)
  }
  context <- .mk_state$warnings$catch_warnings(record = TRUE)
  list(context = context, log = context$`__enter__`())
}

# Leaves the context and signals what it recorded as R warnings.
.mk_warnings_stop <- function(recorder, columns, where = NULL, rows = NULL) {
  context <- recorder$context
  context$`__exit__`(NULL, NULL, NULL)
  log <- recorder$log
  n <- reticulate::py_len(log)
  if (!n) {
    return(invisible())
  }
  messages <- character(n)
  categories <- character(n)
  for (i in seq_len(n)) {
    w <- reticulate::py_get_item(log, i - 1L)
    messages[i] <- reticulate::py_str(reticulate::py_get_attr(w, "message"))
    categories[i] <- reticulate::py_to_r(
      reticulate::py_get_attr(reticulate::py_get_attr(w, "category"), "__name__")
    )
  }
  key <- paste(categories, messages, sep = "\r")
  for (k in unique(key)) {
    first <- match(k, key)
    times <- sum(key == k)
    warning(structure(
      class = c(
        paste0("missingkernels_", categories[first]),
        "missingkernels_python_warning", "warning", "condition"
      ),
      list(
        message = paste0(
          categories[first], if (!is.null(where)) paste0(" (", where, ")"), ": ",
          .mk_r_advice(.mk_name_columns(messages[first], columns, rows)),
          if (times > 1L) sprintf(" (%d times)", times)
        ),
        call = NULL,
        category = categories[first]
      )
    ))
  }
  invisible()
}

.mk_python_error_message <- function(e, what, columns = NULL, rows = NULL) {
  msg <- conditionMessage(e)
  msg <- sub("\n*Detailed traceback:.*$", "", msg)
  msg <- sub("^Error in py_call_impl\\(.*?\\) *: *\n? *", "", msg)
  msg <- sub("\n+Run `reticulate::py_last_error\\(\\)`.*$", "", msg)
  paste0("missingkernels (", what, "): ", trimws(.mk_r_advice(.mk_name_columns(msg, columns, rows))))
}

# Python's messages give positions counted from 0 ("column 2 (0-based)",
# "columns 0, 3 and 5 more (0-based)", "row 7 (0-based)"), as the Python
# package's helper writes them; R users get the column names (`columns`) or
# positions counted from 1, and the rows of their data (`rows`: the number,
# in the user's data, of each row sent to Python; NULL: counted from 1).
.mk_name_columns <- function(msg, columns = NULL, rows = NULL) {
  label <- function(j) {
    if (!is.null(columns) && j < length(columns) && nzchar(columns[j + 1L])) {
      paste0("'", columns[j + 1L], "'")
    } else {
      as.character(j + 1L)
    }
  }
  msg <- .mk_gsub_fn(
    "\\b(columns?) ([0-9]+(?:, [0-9]+)*)( and [0-9]+ more)? \\(0-based\\)",
    msg, function(m) {
      noun <- sub(" .*$", "", m)
      more <- regmatches(m, regexpr(" and [0-9]+ more", m))
      listed <- sub(" and [0-9]+ more", "", sub(" \\(0-based\\)$", "", m))
      j <- as.integer(strsplit(sub("^columns? ", "", listed), ", ", fixed = TRUE)[[1]])
      paste0(noun, " ", paste(vapply(j, label, ""), collapse = ", "), more)
    }
  )
  .mk_gsub_fn("\\b(rows?) ([0-9]+) \\(0-based\\)", msg, function(m) {
    i <- as.integer(sub("^rows? ([0-9]+) .*$", "\\1", m)) + 1L
    if (!is.null(rows) && i <= length(rows)) i <- rows[i]
    paste0(sub(" .*$", "", m), " ", i)
  })
}

# gsub() with a function of each match (Perl regular expression).
.mk_gsub_fn <- function(pattern, x, f) {
  m <- gregexpr(pattern, x, perl = TRUE)
  regmatches(x, m) <- lapply(regmatches(x, m), function(v) vapply(v, f, ""))
  x
}
