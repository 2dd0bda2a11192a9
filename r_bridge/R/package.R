#' missingkernels: kernels and SVMs for data with missing values
#'
#' An R front end to the Python package \code{missingkernels} through
#' reticulate. Every kernel is an \emph{expected kernel}: a classical kernel
#' averaged over the conditional distribution of the missing entries given
#' the observed ones, under a density fitted on the training rows. Rows with
#' missing values are neither dropped nor imputed.
#'
#' \itemize{
#'   \item \code{\link{mk_svm}}: classification and regression (formula and
#'     matrix interfaces), with \code{predict}, \code{print},
#'     \code{summary}, \code{update}, \code{plot} and the other methods of
#'     R's models (\link{mk_svm-methods}).
#'   \item \code{\link{mk_tune}}: parameters chosen by cross-validation
#'     (with \code{print}, \code{plot}, \code{autoplot} and \code{tidy}).
#'   \item \code{tidy}, \code{glance}, \code{augment}
#'     (\link{mk_svm-tidiers}): broom's tidy summaries.
#'   \item \code{\link{mk_caret_model}}: \code{mk_svm} as a caret model;
#'     the parsnip engine \code{"missingkernels"} for \code{svm_rbf()}
#'     (\link{missingkernels-parsnip}).
#'   \item \code{\link{install_missingkernels}}: the Python side, installed
#'     into a virtualenv.
#'   \item \code{\link{mk_kernel_matrix}}: Gram matrices.
#'   \item \code{\link{mk_memory}}, \code{\link{mk_config}}: the memory a fit
#'     will need and the route it takes, before it starts; the memory limit.
#'   \item \code{\link{mk_kernels}}, \code{\link{mk_densities}},
#'     \code{\link{mk_baselines}}: the plugin registry as data frames.
#'   \item \code{\link{mk_simulate_missing}}: MCAR, MAR and MNAR
#'     missingness of the genRBF experiments.
#'   \item \code{\link{mk_compare}}: method comparisons by nested
#'     cross-validation, as a long data frame.
#' }
#'
#' @seealso \link{missingkernels-python} for choosing the Python environment,
#'   \code{vignette("missingkernels", package = "missingkernels")}.
#' @keywords internal
#' @importFrom stats fitted predict
"_PACKAGE"

#' Choosing the Python environment
#'
#' This package calls the Python package \code{missingkernels} through
#' reticulate. Python is started only when a function of this package first
#' needs it (nothing happens when the package is loaded), and from then on
#' the R session is bound to that interpreter: choose it before.
#'
#' The Python package is not published on a package index: it is installed
#' from a local source directory (a clone of the repository) or a wheel.
#' Two routes:
#'
#' \describe{
#'   \item{\code{install_missingkernels()}}{From R, in one step:
#'     \code{install_missingkernels("/path/to/missingkernels")} creates (or
#'     reuses) the virtualenv \code{"r-missingkernels"} through reticulate and
#'     installs the package there (with \code{numpy<2} where reticulate is
#'     older than 1.38; \code{plugin = TRUE} adds the R plugin). In a new R
#'     session, this package uses that environment by itself when no other
#'     Python was chosen. See \code{\link{install_missingkernels}}.}
#'   \item{Your own environment}{Create a virtualenv or conda environment,
#'     \code{pip install} the package into it, and point reticulate at it
#'     before the first call: set \code{RETICULATE_PYTHON} to its
#'     \code{python} executable (e.g. in \file{~/.Renviron}, or with
#'     \code{Sys.setenv()}), or call \code{reticulate::use_python()} or
#'     \code{reticulate::use_virtualenv()}. This is the way with reticulate <
#'     1.41 (Debian 12 ships 1.28).}
#' }
#'
#' Loading the package never asks a package index for the name
#' \code{missingkernels} (it is not published there, and anyone could
#' register it). With reticulate >= 1.41, a user may let reticulate provision
#' an environment with \code{py_require()} from a \emph{local} source
#' directory or wheel: set \code{options(missingkernels.python_requirement =
#' "/path/to/missingkernels")} or the environment variable
#' \code{MISSINGKERNELS_PYTHON_REQUIREMENT} before loading; anything that is
#' not an existing path is ignored.
#'
#' reticulate before 1.38 cannot convert arrays of NumPy 2: with such a
#' reticulate the environment needs \code{numpy<2}. From a clone of the
#' repository, \code{bash scripts/test.sh} creates such an environment at
#' \file{.venv-r}. When Python or the package cannot be used, every function
#' stops with an error of class \code{"missingkernels_python_unavailable"}
#' that says why and how to install it; \code{\link{mk_available}} checks
#' without an error.
#'
#' Errors and warnings of the Python side arrive as R conditions: an error as
#' an R error with Python's message, a Python warning as an R warning of
#' class \code{"missingkernels_python_warning"} (and
#' \code{"missingkernels_<category>"}, e.g.
#' \code{"missingkernels_SingularCovarianceWarning"}), which
#' \code{suppressWarnings()} and \code{withCallingHandlers()} handle; each
#' distinct warning of a call is signalled once. Their messages name columns
#' by the column names of the data (or by position counted from 1). A fit
#' that reuses a density fitted earlier in the session on the same rows (the
#' Python package's fit cache, e.g. \code{update(fit, C = 10)}) does not
#' repeat that density's warnings.
#'
#' @examples
#' \dontrun{
#' # from R (then restart R):
#' install_missingkernels("~/src/missingkernels")
#'
#' # or in a shell:
#' #   python3 -m venv ~/.venvs/missingkernels
#' #   ~/.venvs/missingkernels/bin/pip install /path/to/missingkernels "numpy<2"
#' Sys.setenv(RETICULATE_PYTHON = path.expand("~/.venvs/missingkernels/bin/python"))
#' library(missingkernels)
#' mk_available()
#' mk_python_versions()
#' }
#' @name missingkernels-python
NULL
