# The `density` and `density_params` arguments, and R's own imputation
# packages (mice, Amelia, norm) as densities: the Python plugin
# missingkernels-r fits them, with this R session as its R when called from
# R (.mk_install_host_r()).

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
# it reach R? Stops with what to install.
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
  invisible()
}

# The plugin's R code run in this R session. The plugin reaches R through
# rpy2; with Python inside R, rpy2 would call this same R from C calls that
# release Python's GIL, and R's garbage collector then finalizes reticulate's
# Python objects without it, which crashes the process. So this R session is
# installed as the plugin's host (missingkernels_r._session.set_host_r), and
# the plugin calls R through reticulate instead: rpy2 is never imported.
# Called by .mk_py() when the plugin is installed.
.mk_install_host_r <- function() {
  session <- tryCatch(
    reticulate::import("missingkernels_r._session", convert = FALSE),
    error = function(e) NULL
  )
  if (is.null(session) || !reticulate::py_has_attr(session, "set_host_r")) {
    return(invisible(FALSE)) # an older plugin: rpy2 it is
  }
  session$set_host_r(reticulate::py_func(.mk_host_r_evaluate))
  invisible(TRUE)
}

# The evaluator the plugin calls (see set_host_r in the plugin): the fixed R
# function text `source`, called with `args`, through the fixed `runner` text
# when given; the value with named lists as dicts and atomic vectors as NumPy
# arrays, as rpy2's numpy2ri gives them. R's console output is dropped.
.mk_host_r_evaluate <- function(source, args, runner = NULL) {
  f <- .mk_host_function(source)
  args <- lapply(args %||% list(), .mk_host_argument)
  utils::capture.output(
    value <- if (is.null(runner)) do.call(f, args) else .mk_host_function(runner)(f, args)
  )
  .mk_host_value(value)
}

# An R function from the plugin's fixed source text, evaluated once.
.mk_host_function <- function(source) {
  cache <- .mk_state$host_functions %||% list()
  f <- cache[[source]]
  if (is.null(f)) {
    f <- eval(parse(text = source, keep.source = FALSE), envir = new.env(parent = globalenv()))
    cache[[source]] <- f
    .mk_state$host_functions <- cache
  }
  f
}

# An argument as rpy2 would give it to R: a list of strings is a character
# vector, a one-dimensional array a vector.
.mk_host_argument <- function(a) {
  if (is.list(a) && length(a) && all(vapply(a, function(v) is.character(v) && length(v) == 1L, TRUE))) {
    return(unlist(a, use.names = FALSE))
  }
  if (is.array(a) && length(dim(a)) == 1L) {
    return(as.vector(a))
  }
  a
}

.mk_host_value <- function(v) {
  if (is.null(v)) {
    return(NULL)
  }
  if (is.list(v)) {
    out <- lapply(v, .mk_host_value)
    return(if (!is.null(names(v))) reticulate::py_dict(as.list(names(v)), unname(out), convert = FALSE) else out)
  }
  if (is.factor(v)) v <- as.character(v)
  if (is.atomic(v)) {
    return(reticulate::r_to_py(array(v, dim = dim(v) %||% length(v))))
  }
  v
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
