# The memory a fit needs, before it starts: the route ("exact" or the
# approximate "features") that route = "auto" takes, and the memory limit
# it is held to (the Python package's max_gram_memory), reachable from R.

#' Memory settings of the Python package
#'
#' Reads or changes the memory limits of the Python package (its
#' \code{set_config()}) for this R session. \code{max_gram_memory} bounds the
#' exact route of \code{\link{mk_svm}}: with \code{route = "auto"} (the
#' default) a fit whose training Gram matrix would need more takes the
#' approximate features route instead (see \code{\link{mk_memory}}), and a
#' kernel matrix or a prediction block above it is refused before it is
#' allocated. \code{fit_cache_memory} bounds the cache of fitted densities
#' and Gram matrices that a search over \code{C} reuses (0 turns it off).
#'
#' @param max_gram_memory The most memory an exact Gram matrix may take: a
#'   number of bytes or a size such as \code{"4GB"} or \code{"512MiB"};
#'   \code{NULL} restores the default (the environment variable
#'   \code{MISSINGKERNELS_MAX_GRAM_MEMORY} if set when Python started, else
#'   half the machine's physical memory). Left as it is when not given.
#' @param fit_cache_memory The most memory the fit cache may hold (bytes or
#'   a size; 0: no cache); \code{NULL} restores the default (256 MiB, or
#'   \code{MISSINGKERNELS_FIT_CACHE_MEMORY}). Left as it is when not given.
#' @return A list, invisibly when a setting was changed: the settings in
#'   effect, \code{max_gram_memory} (bytes), \code{max_gram_memory_source}
#'   (where the limit comes from) and \code{fit_cache_memory} (bytes). When
#'   a setting was changed, the list holds those in effect before it, so
#'   \code{old <- mk_config(max_gram_memory = "2GB")} then
#'   \code{mk_config(max_gram_memory = old$max_gram_memory)} restores it
#'   (as a number of bytes).
#' @seealso \code{\link{mk_memory}}, \code{\link{mk_svm}}.
#' @examples
#' if (mk_available()) {
#'   mk_config()$max_gram_memory # bytes
#'   old <- mk_config(max_gram_memory = "1GB")
#'   mk_memory(n = 20000, d = 8) # too large for the exact route: features
#'   mk_config(max_gram_memory = NULL) # back to the default
#' }
#' @export
mk_config <- function(max_gram_memory, fit_cache_memory) {
  mk <- .mk_py()
  current <- .mk_config_now()
  changes <- list()
  # (a list element set to NULL by `[<-` with list(NULL): NULL restores a default)
  if (!missing(max_gram_memory)) {
    changes["max_gram_memory"] <- list(.mk_size_arg(max_gram_memory, "max_gram_memory"))
  }
  if (!missing(fit_cache_memory)) {
    changes["fit_cache_memory"] <- list(.mk_size_arg(fit_cache_memory, "fit_cache_memory"))
  }
  if (!length(changes)) {
    return(current)
  }
  .mk_call(do.call(mk$set_config, changes), "setting the memory limits")
  invisible(current)
}

# A size for set_config: NULL (the default), a string ("4GB"), or a whole
# number of bytes (as a Python int: an R double may exceed R's integers).
.mk_size_arg <- function(value, name) {
  if (is.null(value) || (is.character(value) && length(value) == 1L && !is.na(value))) {
    return(value)
  }
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || !is.finite(value) || value < 0) {
    stop(sprintf(
      "`%s` must be a number of bytes, a size such as \"4GB\", or NULL for the default.",
      name
    ), call. = FALSE)
  }
  .mk_py_int(value)
}

.mk_config_now <- function() {
  config <- reticulate::import("missingkernels._config", convert = FALSE)
  limit <- config$max_gram_memory()
  list(
    max_gram_memory = .mk_py_bytes(limit[0L]),
    max_gram_memory_source = .mk_r_advice(reticulate::py_to_r(limit[1L])),
    fit_cache_memory = .mk_py_bytes(config$fit_cache_memory())
  )
}

# A Python int of bytes as an R double (reticulate would make an R integer
# of it, which overflows above 2 GiB).
.mk_py_bytes <- function(value) {
  reticulate::py_to_r(reticulate::import_builtins(convert = FALSE)$float(value))
}

# An R whole number as a Python int, whatever its size.
.mk_py_int <- function(value) {
  reticulate::import_builtins(convert = FALSE)$int(format(round(value), scientific = FALSE))
}

#' The memory a fit will need, before it starts
#'
#' Says which route \code{\link{mk_svm}} will take and how much memory it
#' will need, without fitting: the exact route holds the \eqn{n \times
#' n}{n x n} training Gram matrix and one working copy (\eqn{16 n^2}{16 n^2}
#' bytes: 6 GiB for 20,000 rows), the features route \code{n_kernel_features}
#' features per row (memory linear in \eqn{n}{n}).
#'
#' \strong{When the approximate route is taken.} With \code{route = "auto"}
#' (the default of \code{mk_svm}), a fit takes the exact route while its
#' Gram matrix fits within the memory limit (\code{max_gram_memory}, see
#' \code{\link{mk_config}}: by default half the machine's physical memory),
#' and otherwise the \emph{features route}: the expected kernel
#' approximated by \code{n_kernel_features} (default 2000) random Fourier
#' features or Nystroem landmarks, then a linear SVM on them. That model
#' approximates the exact one (the error falls like
#' \eqn{1/\sqrt{m}}{1/sqrt(m)} in the number \eqn{m}{m} of features), so
#' its predictions differ slightly from an exact fit's; \code{fit$route}
#' says which route a fit took. A fit whose features of every row would
#' exceed the limit makes them a block of 25,000 rows at a time instead (the
#' features never all in memory: for a million rows and 2,000 features about
#' 0.9 GiB beside the data, against 15 GiB for all of them), and fits the
#' linear SVM on the squared hinge (classification) or the squared
#' epsilon-insensitive loss (regression) from blockwise statistics;
#' \code{blocks} says what that needs. If neither route fits within the limit the
#' fit stops before it starts, saying what each needs. \code{route =
#' "exact"} or \code{"features"} (arguments of \code{mk_svm}) forces one.
#'
#' \code{mk_svm} itself says what it will need, as a message before it
#' starts, when that is at least
#' \code{getOption("missingkernels.memory_message", 2^30)} bytes (1 GiB) or
#' when \code{route = "auto"} takes the features route (a message of class
#' \code{"missingkernels_memory_message"}: \code{suppressMessages()} hides
#' it). The memory counted is that of the Gram matrix or the features; the
#' density and the data add to it, and a density that draws (\code{"mice"},
#' \code{"iterative"}) holds its draws.
#'
#' @param x A formula \code{response ~ predictors} (with \code{data}), or a
#'   matrix or data frame of predictors (as given to \code{mk_svm}); or
#'   omitted, with \code{n} and \code{d}.
#' @param data A data frame, with a formula.
#' @param n,d The numbers of training rows and of columns, instead of
#'   \code{x}.
#' @param route \code{"auto"}, \code{"exact"} or \code{"features"}, as the
#'   argument of \code{mk_svm}.
#' @param n_kernel_features The number of kernel features of the features
#'   route (\code{NULL}: the Python estimator's default, 2000).
#' @return An object of class \code{"mk_memory"}, printed in a sentence: a
#'   list with \code{n}, \code{d}, \code{route} (the route a fit takes;
#'   \code{NA} when neither fits), \code{needed} (bytes the route needs),
#'   \code{gram} (bytes of the exact route), \code{features} (bytes of the
#'   features route, all rows at once), \code{blocks} (bytes of the
#'   features route in blocks of rows, when it takes them; else \code{NA}),
#'   \code{n_kernel_features}, \code{limit} (bytes),
#'   \code{limit_source}, and \code{explanation} (the Python package's
#'   sentence, or its error when neither route fits).
#' @seealso \code{\link{mk_config}} to change the limit, \code{\link{mk_svm}}.
#' @examples
#' if (mk_available()) {
#'   mk_memory(n = 20000, d = 8)
#'   mk_memory(n = 20000, d = 8, route = "features")
#'   mk_memory(Ozone ~ ., data = airquality)
#' }
#' @export
mk_memory <- function(x = NULL, data = NULL, n = NULL, d = NULL, route = "auto",
                      n_kernel_features = NULL) {
  if (!is.null(x)) {
    if (!is.null(n) || !is.null(d)) {
      stop("mk_memory(): give the data (x, or a formula and data) or n and d, not both.",
        call. = FALSE
      )
    }
    dims <- .mk_fit_dims(x, data)
    n <- dims[["n"]]
    d <- dims[["d"]]
  }
  count <- function(v, name) {
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 1 || v != round(v)) {
      stop(sprintf("mk_memory(): `%s` must be a whole number of at least 1.", name), call. = FALSE)
    }
    v
  }
  n <- count(n, "n")
  d <- count(d, "d")
  if (!is.character(route) || length(route) != 1L || !route %in% c("auto", "exact", "features")) {
    stop("`route` must be \"auto\", \"exact\" or \"features\".", call. = FALSE)
  }
  params <- list(route = route)
  if (!is.null(n_kernel_features)) {
    params$n_kernel_features <- .mk_as_py_param(count(n_kernel_features, "n_kernel_features"), "n_kernel_features")
  }
  model <- .mk_call(do.call(.mk_py()$MissingKernelSVC, params), "creating the estimator")
  .mk_memory_plan(model, n, d)
}

# The plan of a fit of `model` (an unfitted Python estimator) on n rows of d
# columns, from the estimator's own choice of route.
.mk_memory_plan <- function(model, n, d) {
  config <- reticulate::import("missingkernels._config", convert = FALSE)
  features_module <- reticulate::import("missingkernels.estimators._features", convert = FALSE)
  int <- .mk_py_int
  m <- .mk_py_bytes(model$`_n_kernel_features`())
  limit <- .mk_config_now()
  gram <- .mk_py_bytes(config$gram_memory(int(n), int(n)))
  features <- .mk_py_bytes(features_module$feature_memory(int(n), int(d), int(m)))
  chosen <- tryCatch(
    model$`_choose_route`(int(n), int(d)),
    python.builtin.Exception = function(e) e,
    error = function(e) e
  )
  failed <- inherits(chosen, "error")
  route <- if (failed) NA_character_ else reticulate::py_to_r(chosen[0L])
  # Features above the limit are made a block of rows at a time (without
  # probabilities): the blocks are what it needs.
  blocks <- NA_real_
  if (!failed && route == "features" && features > limit$max_gram_memory) {
    out_of_core <- reticulate::import("missingkernels.estimators._out_of_core", convert = FALSE)
    blocks <- .mk_py_bytes(out_of_core$blocks_memory(int(n), int(m)))
  }
  structure(list(
    n = n, d = d, route = route,
    needed = if (failed) NA_real_ else if (route == "exact") gram else if (!is.na(blocks)) blocks else features,
    gram = gram, features = features, blocks = blocks, n_kernel_features = m,
    limit = limit$max_gram_memory, limit_source = limit$max_gram_memory_source,
    route_argument = reticulate::py_to_r(model$route),
    explanation = if (failed) {
      sub("^.*?ValueError: ", "", .mk_python_error_message(chosen, "choosing the route"))
    } else {
      .mk_r_advice(reticulate::py_to_r(chosen[2L]))
    }
  ), class = "mk_memory")
}

# The numbers of training rows and of columns a fit of mk_svm on `x` (a
# formula with `data`, or predictors) would have.
.mk_fit_dims <- function(x, data = NULL) {
  if (inherits(x, "formula")) {
    mf <- stats::model.frame(x, data, na.action = stats::na.pass)
    mt <- attr(mf, "terms")
    keep <- if (attr(mt, "response") > 0L) !is.na(stats::model.response(mf)) else rep(TRUE, nrow(mf))
    built <- suppressWarnings(.mk_table_fit(mt, mf[keep, , drop = FALSE]))
    return(c(n = sum(keep), d = ncol(built$x)))
  }
  built <- suppressWarnings(.mk_design_fit(x))
  c(n = nrow(built$x), d = ncol(built$x))
}

#' @export
print.mk_memory <- function(x, ...) {
  cat(.mk_memory_text(x), "\n", sep = "")
  invisible(x)
}

# The plan in a sentence or two, starting with `lead`.
.mk_memory_text <- function(plan, lead = "A fit") {
  size <- function(b) .mk_format_bytes(b)
  head <- sprintf("%s on %s rows of %d column(s), route = \"%s\": ", lead,
    format(plan$n, big.mark = ",", scientific = FALSE), as.integer(plan$d), plan$route_argument
  )
  limit <- sprintf("the limit is %s (%s)", size(plan$limit), plan$limit_source)
  if (is.na(plan$route)) {
    return(paste0(head, sub("^MissingKernelSV[CR]\\([^)]*\\): ", "", plan$explanation)))
  }
  if (plan$route == "exact") {
    return(paste0(head, sprintf(
      "the exact route; its %s x %s training Gram matrix (and one working copy) needs about %s; %s.",
      format(plan$n, big.mark = ",", scientific = FALSE),
      format(plan$n, big.mark = ",", scientific = FALSE), size(plan$gram), limit
    )))
  }
  if (!is.null(plan$blocks) && !is.na(plan$blocks)) {
    return(paste0(head, sprintf(
      paste0(
        "the approximate features route in blocks of rows (%s kernel features ",
        "per row, made a block at a time, then a linear SVM on the squared ",
        "hinge); about %s beside the data, where all the features would need ",
        "%s and the exact route's Gram matrix %s; %s."
      ),
      format(plan$n_kernel_features, big.mark = ",", scientific = FALSE),
      size(plan$blocks), size(plan$features), size(plan$gram), limit
    )))
  }
  paste0(head, sprintf(
    paste0(
      "the approximate features route (%s kernel features, then a linear ",
      "SVM); they need about %s, where the exact route's Gram matrix would ",
      "need %s; %s."
    ),
    format(plan$n_kernel_features, big.mark = ",", scientific = FALSE),
    size(plan$features), size(plan$gram), limit
  ))
}

.mk_format_bytes <- function(b) {
  units <- c("B", "KiB", "MiB", "GiB", "TiB")
  k <- if (b < 1024) 1L else min(length(units), floor(log(b, 1024)) + 1L)
  if (k == 1L) sprintf("%.0f B", b) else sprintf("%.1f %s", b / 1024^(k - 1L), units[k])
}

# Before mk_svm fits: a message with the plan when it needs at least
# getOption("missingkernels.memory_message") bytes (1 GiB by default) or
# when route = "auto" takes the approximate route. Returns the plan (NULL
# when it cannot be computed: the fit then reports its own errors).
.mk_announce_memory <- function(model, n, d) {
  plan <- tryCatch(.mk_memory_plan(model, n, d), error = function(e) NULL)
  if (is.null(plan) || is.na(plan$route)) {
    return(plan)
  }
  threshold <- getOption("missingkernels.memory_message", 2^30)
  approximate <- plan$route == "features" && identical(plan$route_argument, "auto")
  if (approximate || (is.numeric(threshold) && plan$needed >= threshold)) {
    message(structure(
      class = c("missingkernels_memory_message", "message", "condition"),
      list(message = paste0(.mk_memory_text(plan, "mk_svm(): this fit"), "\n"), call = NULL)
    ))
  }
  plan
}
