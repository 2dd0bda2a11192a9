# Issue 34: R's own mice, Amelia and norm as densities from R: the Python
# plugin missingkernels-r (through rpy2, which, inside this R session, runs
# them in this very session); a clear R message without the plugin;
# density_params built by Python's get_density(name, **params).

# The plugin is installed in the Python environment of CI's R tests
# (scripts/test.d/20-r-bridge.sh): there, its absence fails like Python's.
skip_if_no_r_plugin <- function() {
  skip_if_no_python()
  why <- if (!"r_mice" %in% mk_densities()$name) {
    "the R plugin (plugins/missingkernels-r) is not installed in this Python environment"
  } else if (!reticulate::py_module_available("rpy2")) {
    "rpy2 is not installed in this Python environment"
  }
  if (is.null(why)) {
    return(invisible(TRUE))
  }
  if (identical(Sys.getenv("MISSINGKERNELS_REQUIRE_PYTHON"), "1")) stop(why, call. = FALSE)
  skip(why)
}

r_density_data <- function(n = 40, seed = 3) {
  set.seed(seed)
  x <- cbind(a = rnorm(n), b = rnorm(n), c = rnorm(n))
  x[, "b"] <- x[, "a"] + 0.5 * x[, "b"]
  y <- factor(ifelse(x[, "a"] + x[, "c"] + 0.3 * rnorm(n) > 0, "yes", "no"))
  x[sample(length(x), 24)] <- NA
  list(x = x, y = y)
}

test_that("without the plugin, density = \"r_mice\" says what to install, not 'Did you mean mice'", {
  skip_if_no_python()
  res <- run_rscript(
    paste(
      "library(missingkernels)",
      "x <- cbind(a = c(1, NA, 3, 4, 5, 6, 2, 8), b = c(2, 1, NA, 3, 5, 4, 6, 7))",
      "y <- factor(rep(c('u', 'v'), 4))",
      "for (d in c('r_mice', 'r_amelia', 'r_norm')) cat(tryCatch(mk_svm(x, y, density = d), error = conditionMessage), '\\n---\\n')",
      sep = "; "
    ),
    # the registry then loads the built-in parts only, as without the plugin
    env = "MISSINGKERNELS_DISABLE_PLUGIN_AUTOLOAD=1"
  )
  expect_no_match(res$output, "Did you mean")
  expect_match(res$output, "density = \"r_mice\" is R's mice package", fixed = TRUE)
  expect_match(res$output, "density = \"r_amelia\" is R's Amelia package", fixed = TRUE)
  expect_match(res$output, "density = \"r_norm\" is R's norm package", fixed = TRUE)
  expect_match(res$output, "install_missingkernels(\"/path/to/missingkernels\", plugin = TRUE)", fixed = TRUE)
  expect_match(res$output, "plugins/missingkernels-r", fixed = TRUE)
  # and mk_compare()'s method "mice" points to r_mice
  skip_if_no_python()
  expect_error(mk_compare(matrix(1:20, 10), factor(rep(1:2, 5)), methods = "mice"), "\"r_mice\"")
})

test_that("density = \"r_mice\": R's mice in this session; R's random stream is left alone", {
  skip_if_no_r_plugin()
  skip_if_not_installed("mice")
  d <- r_density_data()
  set.seed(99)
  sample.int(.Machine$integer.max, 1L) # mk_svm draws its random_state
  after_draw <- .Random.seed
  set.seed(99)
  fit <- mk_svm(d$x, d$y, density = "r_mice", density_params = list(m = 3, maxit = 2, seed = 11))
  expect_identical(.Random.seed, after_draw) # mice's set.seed() did not leak
  expect_identical(fit$density, "r_mice")
  dens <- fit$py_model$kernel_$density_
  expect_identical(reticulate::py_to_r(dens$`__class__`$`__name__`), "RMiceDensity")
  expect_identical(reticulate::py_to_r(dens$m), 3L) # a Python int
  new <- rbind(c(NA, 0.5, NA), c(1, NA, -1), c(NA, NA, NA))
  colnames(new) <- colnames(d$x)
  p <- predict(fit, new, type = "decision")
  expect_true(all(is.finite(p)))
  # the same seed, the same model
  again <- mk_svm(d$x, d$y, density = "r_mice", density_params = list(m = 3, maxit = 2, seed = 11))
  expect_equal(predict(again, new, type = "decision"), p)
})

test_that("density = \"r_mice\" predicts new rows with the fitted chains' models, not a mice run per row (issue 48, item 6)", {
  skip_if_no_r_plugin()
  skip_if_not_installed("mice")
  # A method of our own, found by mice as any user method is: it counts the
  # draws. A new row costs m draws per missing entry and sweep (one sweep
  # when a single entry is missing); a mice run per row cost maxit x m x
  # (incomplete columns) each, 200 times the time of density = "mice".
  probe <- new.env()
  probe$calls <- 0L
  assign("mice.impute.mkcount", function(y, ry, x, wy = NULL, ...) {
    probe$calls <- probe$calls + 1L
    mice::mice.impute.norm(y, ry, x, wy = wy, ...)
  }, envir = globalenv())
  on.exit(rm("mice.impute.mkcount", envir = globalenv()))
  d <- r_density_data(n = 60)
  fit <- mk_svm(d$x, d$y, density = "r_mice",
    density_params = list(m = 3, maxit = 4, method = "mkcount", seed = 2)
  )
  new <- rbind(c(NA, 0.5, 1), c(1, NA, -1), c(0.2, -0.3, NA), c(NA, NA, 1), c(0, 0, 0))
  colnames(new) <- colnames(d$x)
  probe$calls <- 0L
  p <- predict(fit, new, type = "decision")
  expect_true(all(is.finite(p)))
  expect_identical(probe$calls, 3L * 3L + 3L * 4L * 2L)
  # the draws are kept on the fit: predicting again runs nothing
  expect_identical(predict(fit, new, type = "decision"), p)
  expect_identical(probe$calls, 3L * 3L + 3L * 4L * 2L)
})

test_that("density = \"r_amelia\" gives the model of gaussian_em (the same Gaussian MLE)", {
  skip_if_no_r_plugin()
  skip_if_not_installed("Amelia")
  d <- r_density_data(n = 60, seed = 4)
  fit_a <- mk_svm(d$x, d$y, gamma = 0.5,
    density = "r_amelia", density_params = list(tolerance = 1e-10, max_iter = 5000)
  )
  fit_g <- mk_svm(d$x, d$y, gamma = 0.5,
    # the ML fit (no prior), which is what Amelia computes with empri = 0
    density = "gaussian_em", density_params = list(tol = 1e-10, max_iter = 5000, prior_rows = 0)
  )
  expect_identical(fit_a$density, "r_amelia")
  expect_equal(predict(fit_a, d$x, type = "decision"), predict(fit_g, d$x, type = "decision"),
    tolerance = 1e-4
  )
})

test_that("density_params are the keyword arguments of Python's get_density()", {
  skip_if_no_python()
  params <- missingkernels:::.mk_py_params
  expect_identical(params(list(n_components = 2, maxit = 3)), list(n_components = 2L, maxit = 3L))
  expect_identical(params(list(n_components = "bic")), list(n_components = "bic")) # passes through
  d <- r_density_data(n = 50, seed = 6)
  fit <- mk_svm(d$x, d$y, kernel = "genrbf", density = "gaussian_mixture",
    density_params = list(n_components = 2, random_state = 1)
  )
  dens <- fit$py_model$kernel_$density_
  expect_identical(reticulate::py_to_r(dens$n_components), 2L)
  expect_identical(fit$density, "gaussian_mixture")
  expect_error(mk_svm(d$x, d$y, density_params = list(max_iter = 5)), "registry name")
  expect_error(mk_svm(d$x, d$y, density = "gaussian_em", density_params = c(max_iter = 5)), "named list")
  # a selection rule such as n_components = "bic", where the Python side has it
  bic <- tryCatch(
    {
      py_mk()$get_density("gaussian_mixture", n_components = "bic")$fit(py_array(d$x))
      TRUE
    },
    error = function(e) FALSE
  )
  skip_if(!bic, "the Python gaussian_mixture density does not take n_components = \"bic\" (yet)")
  fit_bic <- mk_svm(d$x, d$y, kernel = "genrbf", density = "gaussian_mixture",
    density_params = list(n_components = "bic", random_state = 1)
  )
  expect_identical(reticulate::py_to_r(fit_bic$py_model$kernel_$density_$n_components), "bic")
})
