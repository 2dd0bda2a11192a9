# The fitted Python objects travel inside the R object: at fit time they are
# pickled into a raw vector (`python_pickle`); a model read back with
# readRDS(), or sent to a parallel worker, unpickles them on first use into
# its `python` environment (once per copy of the object in a session).

.mk_py_helpers <- function() {
  .mk_py()
  if (is.null(.mk_state$helpers)) {
    .mk_state$helpers <- reticulate::py_run_string(paste(
      "def _mk_dump(obj, path):",
      "    import pickle",
      "    with open(path, 'wb') as f:",
      "        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)",
      "",
      "def _mk_load(data):",
      "    import pickle",
      "    return pickle.loads(bytes(data))",
      sep = "\n"
    ), local = TRUE, convert = FALSE)
  }
  .mk_state$helpers
}

# The versions the pickle was written with (to explain a failed restore).
.mk_pickle_versions <- function() {
  version <- function(module) {
    tryCatch(
      reticulate::py_to_r(reticulate::import(module, convert = FALSE)$`__version__`),
      error = function(e) NA_character_
    )
  }
  c(missingkernels = version("missingkernels"), scikit_learn = version("sklearn"))
}

# Pickles (model, calibrated) into a raw vector; a model that cannot be
# pickled (e.g. a density object holding an R session through rpy2) gives
# NULL with the reason as attribute: fitting must not fail for it.
.mk_pickle <- function(model, calibrated) {
  path <- tempfile("mk-model", fileext = ".pkl")
  on.exit(unlink(path))
  reason <- tryCatch(
    {
      suppressWarnings(.mk_call(
        .mk_py_helpers()$`_mk_dump`(reticulate::tuple(model, calibrated), path),
        "pickling the Python model"
      ))
      NULL
    },
    error = function(e) conditionMessage(e)
  )
  if (!is.null(reason)) {
    return(structure(list(), reason = reason))
  }
  structure(readBin(path, "raw", file.size(path)), versions = .mk_pickle_versions())
}

# The live Python objects of a fitted model (an environment with `model` and
# `calibrated`), unpickled from the R object when this session does not have
# them (after readRDS(), in a parallel worker).
.mk_python <- function(object) {
  env <- .subset2(object, "python")
  if (!is.environment(env)) env <- new.env(parent = emptyenv())
  live <- inherits(env$model, "python.builtin.object") &&
    !reticulate::py_is_null_xptr(env$model)
  if (live) {
    return(env)
  }
  bytes <- .subset2(object, "python_pickle")
  if (!is.raw(bytes) || !length(bytes)) {
    stop("The Python side of this model is gone (a new R session or a ",
      "parallel worker) and was not saved with it",
      if (!is.null(attr(bytes, "reason"))) paste0(" (pickling failed: ", attr(bytes, "reason"), ")"),
      ": refit it with mk_svm().",
      call. = FALSE
    )
  }
  objects <- tryCatch(
    .mk_call(.mk_py_helpers()$`_mk_load`(reticulate::r_to_py(bytes)), "restoring the Python model"),
    error = function(e) {
      versions <- attr(bytes, "versions")
      stop(conditionMessage(e),
        if (length(versions)) {
          paste0(
            "\nThe model was saved with ",
            paste(names(versions), versions, collapse = ", "),
            "; this Python has ",
            paste(names(versions), .mk_pickle_versions(), collapse = ", "),
            "."
          )
        },
        "\nRefit it with mk_svm().",
        call. = FALSE
      )
    }
  )
  env$model <- reticulate::py_get_item(objects, 0L)
  calibrated <- reticulate::py_get_item(objects, 1L)
  env$calibrated <- if (!reticulate::py_is_null_xptr(calibrated) &&
    !identical(reticulate::py_str(calibrated), "None")) {
    calibrated
  }
  env
}

#' @export
`$.mk_svm` <- function(x, name) {
  if (identical(name, "py_model")) {
    return(.mk_python(x)$model)
  }
  if (identical(name, "py_calibrated")) {
    return(.mk_python(x)$calibrated)
  }
  .subset2(x, name)
}
