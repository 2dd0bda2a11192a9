#' The registered kernels, densities and baselines
#'
#' The Python package keeps a registry of kernels, density estimators and
#' baselines, filled by its built-in parts and by plugins (installed Python
#' distributions declaring an entry point in the group
#' \code{missingkernels}, or objects registered at run time). These
#' functions list it.
#'
#' @return A data frame with one row per registered name (sorted) and the
#'   columns \code{name} (what \code{kernel =} or \code{density =} takes),
#'   \code{kind}, \code{plugin} (the plugin that registered it; built-ins
#'   start with \code{"missingkernels."}), \code{builtin} (logical) and
#'   \code{description}. Plugins that failed to load are listed, with their
#'   error, in the attribute \code{"plugin_errors"} (a named character
#'   vector, empty when none failed).
#' @examples
#' if (mk_available()) {
#'   mk_kernels()
#'   mk_densities()[, c("name", "plugin")]
#' }
#' @export
mk_kernels <- function() .mk_registry("list_kernels")

#' @rdname mk_kernels
#' @export
mk_densities <- function() .mk_registry("list_densities")

#' @rdname mk_kernels
#' @export
mk_baselines <- function() .mk_registry("list_baselines")

.mk_registry <- function(lister) {
  mk <- .mk_py()
  entries <- reticulate::py_to_r(.mk_call(mk[[lister]](), "reading the registry"))
  field <- function(name) {
    vapply(entries, function(e) {
      as.character(reticulate::py_to_r(reticulate::py_get_attr(e, name)))
    }, character(1), USE.NAMES = FALSE)
  }
  nm <- sort(names(entries))
  entries <- entries[nm]
  plugin <- field("plugin")
  out <- data.frame(
    name = as.character(nm),
    kind = field("kind"),
    plugin = plugin,
    builtin = startsWith(plugin, "missingkernels."),
    description = field("description"),
    stringsAsFactors = FALSE
  )
  errors <- reticulate::py_to_r(mk$plugin_errors())
  attr(out, "plugin_errors") <- if (length(errors)) {
    unlist(errors)
  } else {
    stats::setNames(character(), character())
  }
  out
}
