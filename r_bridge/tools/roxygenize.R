# Regenerates man/*.Rd and NAMESPACE from the roxygen comments in R/ (run from
# the repository root; needs roxygen2, Debian: r-cran-roxygen2).
#   Rscript r_bridge/tools/roxygenize.R          rewrite r_bridge/man, NAMESPACE
#   Rscript r_bridge/tools/roxygenize.R --check  fail when they are out of date
args <- commandArgs(trailingOnly = TRUE)
check <- "--check" %in% args
pkg <- file.path("r_bridge")
if (!requireNamespace("roxygen2", quietly = TRUE)) {
  stop("roxygen2 is not installed (Debian: apt-get install r-cran-roxygen2).", call. = FALSE)
}
generated <- function(dir) {
  files <- c(file.path(dir, "NAMESPACE"), list.files(file.path(dir, "man"), full.names = TRUE))
  stats::setNames(lapply(files, readLines), basename(files))
}
target <- pkg
if (check) {
  target <- file.path(tempfile("mk-roxygen"), "r_bridge")
  dir.create(target, recursive = TRUE)
  for (item in c("DESCRIPTION", "NAMESPACE", "R", "man")) {
    file.copy(file.path(pkg, item), target, recursive = TRUE)
  }
}
unlink(file.path(target, "man"), recursive = TRUE)
# load = "source": documenting never needs the package built or Python.
suppressMessages(roxygen2::roxygenise(target, roclets = c("rd", "namespace"), load_code = "source"))
if (check) {
  old <- generated(pkg)
  new <- generated(target)
  stale <- union(setdiff(names(old), names(new)), setdiff(names(new), names(old)))
  both <- intersect(names(old), names(new))
  stale <- c(stale, both[!mapply(identical, old[both], new[both])])
  unlink(dirname(target), recursive = TRUE)
  if (length(stale)) {
    cat("r_bridge: documentation out of date (run Rscript r_bridge/tools/roxygenize.R):",
      paste(sort(stale), collapse = ", "), "\n")
    quit(status = 1L)
  }
  cat("r_bridge: man/ and NAMESPACE match the roxygen comments\n")
}
