# Renders the vignette to r_bridge/doc/missingkernels.html (run from the
# repository root with the package installed and RETICULATE_PYTHON set; see
# scripts/test.d/20-r-bridge.sh).
args <- commandArgs(trailingOnly = TRUE)
out_dir <- if (length(args)) args[1] else file.path("r_bridge", "doc")
ok <- missingkernels::mk_available()
if (!isTRUE(ok)) stop(attr(ok, "reason"), call. = FALSE) # no empty page in CI
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
work <- tempfile("mk-vignette")
dir.create(work)
start <- proc.time()[["elapsed"]]
out <- rmarkdown::render(
  file.path("r_bridge", "vignettes", "missingkernels.Rmd"),
  output_dir = out_dir, intermediates_dir = work, knit_root_dir = work,
  envir = new.env(), quiet = TRUE
)
unlink(work, recursive = TRUE)
cat(sprintf("vignette: %s (%.0f s)\n", out, proc.time()[["elapsed"]] - start))
