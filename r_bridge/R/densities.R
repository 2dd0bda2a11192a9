# The `density` and `density_params` arguments, and R's own imputation
# packages (mice, Amelia, norm) as densities: the Python plugin
# missingkernels-r fits them through rpy2, which, called from this R session
# through reticulate, runs them in this very R session.

# The densities of the R plugin and the R package each one needs.
.mk_r_densities <- c(r_mice = "mice", r_amelia = "Amelia", r_norm = "norm")

# density (+ density_params) as the value of the Python `density` parameter:
# a name, a Python density object, or (with density_params) the density built
# by the Python registry's get_density(name, **density_params).
.mk_density_arg <- function(density, density_params) {
  if (!is.null(density_params) && !is.list(density_params)) {
    stop("`density_params` must be a named list, e.g. list(max_iter = 200).", call. = FALSE)
  }
  if (length(density_params)) {
    if (!is.character(density) || length(density) != 1L || is.na(density)) {
      stop("`density_params` needs `density` to be a registry name, e.g. ",
        "density = \"gaussian_em\".",
        call. = FALSE
      )
    }
    .mk_check_density_name(density)
    return(.mk_call(
      do.call(.mk_py()$get_density, c(list(density), .mk_py_params(density_params))),
      "building the density"
    ))
  }
  if (is.null(density) || inherits(density, "python.builtin.object")) {
    return(density)
  }
  if (!is.character(density) || length(density) != 1L || is.na(density)) {
    stop("`density` must be NULL, a registry name (see mk_densities()) or a ",
      "Python density object.",
      call. = FALSE
    )
  }
  .mk_check_density_name(density)
  density
}

# Before Python is asked for an R density: is the plugin installed, and can
# it reach R? Stops with what to install; otherwise imports rpy2 quietly.
.mk_check_density_name <- function(name) {
  if (!name %in% names(.mk_r_densities)) {
    return(invisible())
  }
  mk <- .mk_py()
  registered <- names(reticulate::py_to_r(mk$list_densities()))
  r_package <- .mk_r_densities[[name]]
  python <- reticulate::py_config()$python
  if (!name %in% registered) {
    errors <- reticulate::py_to_r(mk$plugin_errors())
    failed <- errors[grepl("missingkernels_r|missingkernels-r", names(errors))]
    stop(sprintf(
      paste0(
        "density = \"%s\" is R's %s package, fitted through the Python plugin ",
        "'missingkernels-r', which %s. Install it into that environment, then ",
        "restart R:\n",
        "  install_missingkernels(\"/path/to/missingkernels\", plugin = TRUE)\n",
        "or in a shell:\n",
        "  %s -m pip install /path/to/missingkernels/plugins/missingkernels-r\n",
        "(it brings rpy2; the R package %s must be installed in R%s). ",
        "Without the plugin, density = \"gaussian_em\" fits the same Gaussian ",
        "model as norm and Amelia by EM, and \"iterative\" imputes by chained ",
        "equations as mice does. See ?mk_densities."
      ),
      name, r_package,
      if (length(failed)) {
        paste0("failed to load in the Python environment in use: ", failed[[1L]])
      } else {
        "is not installed in the Python environment in use"
      },
      shQuote(python), r_package,
      if (requireNamespace(r_package, quietly = TRUE)) ", as it is here" else ": it is not"
    ), call. = FALSE)
  }
  if (!reticulate::py_module_available("rpy2")) {
    stop(sprintf(
      paste0(
        "density = \"%s\" needs the Python package rpy2 (through which the ",
        "plugin calls R), which the Python environment in use cannot import. ",
        "Install it: %s -m pip install 'rpy2>=3.5.13,<3.6', then restart R."
      ),
      name, shQuote(python)
    ), call. = FALSE)
  }
  if (!requireNamespace(r_package, quietly = TRUE)) {
    stop(sprintf(
      "density = \"%s\" needs the R package %s: install.packages(\"%s\")%s.",
      name, r_package, r_package,
      if (r_package %in% c("mice", "Amelia")) {
        sprintf(" (Debian/Ubuntu: apt-get install r-cran-%s)", tolower(r_package))
      } else {
        ""
      }
    ), call. = FALSE)
  }
  .mk_import_rpy2()
  invisible()
}

# Imports rpy2 once, quietly: embedded in this R session it finds R already
# running and says so (a warning and a log line) before using it.
.mk_import_rpy2 <- function() {
  if (isTRUE(.mk_state$rpy2)) {
    return(invisible())
  }
  helper <- reticulate::py_run_string(paste(
    "def _mk_import_rpy2():",
    "    import logging",
    "    import warnings",
    "    loggers = [logging.getLogger(n) for n in ('rpy2', 'rpy2.rinterface_lib.embedded')]",
    "    levels = [lg.level for lg in loggers]",
    "    for lg in loggers:",
    "        lg.setLevel(logging.ERROR)",
    "    try:",
    "        with warnings.catch_warnings():",
    "            warnings.simplefilter('ignore')",
    "            import rpy2.robjects  # noqa: F401",
    "    finally:",
    "        for lg, level in zip(loggers, levels):",
    "            lg.setLevel(level)",
    sep = "\n"
  ), local = TRUE, convert = FALSE)
  .mk_call(helper$`_mk_import_rpy2`(), "starting rpy2 in this R session")
  .mk_state$rpy2 <- TRUE
  invisible()
}

# The global random number state (NULL when there is none yet), and its
# restoration.
.mk_save_seed <- function() {
  get0(".Random.seed", envir = globalenv(), inherits = FALSE)
}

.mk_restore_seed <- function(seed) {
  current <- get0(".Random.seed", envir = globalenv(), inherits = FALSE)
  if (identical(current, seed)) {
    return(invisible())
  }
  if (is.null(seed)) {
    rm(".Random.seed", envir = globalenv())
  } else {
    assign(".Random.seed", seed, envir = globalenv())
  }
  invisible()
}
