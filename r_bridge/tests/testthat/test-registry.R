test_that("registry listings are the Python registry, as data frames", {
  skip_if_no_python()
  mk <- py_mk()
  for (what in c("kernels", "densities", "baselines")) {
    df <- switch(what,
      kernels = mk_kernels(),
      densities = mk_densities(),
      baselines = mk_baselines()
    )
    py <- mk[[paste0("list_", what)]]()
    expect_s3_class(df, "data.frame")
    expect_identical(names(df), c("name", "kind", "plugin", "builtin", "description"))
    expect_identical(df$name, sort(names(py)))
    expect_identical(df$plugin, vapply(df$name, function(n) py[[n]]$plugin, "", USE.NAMES = FALSE))
    expect_identical(df$description, vapply(df$name, function(n) py[[n]]$description, "", USE.NAMES = FALSE))
    expect_true(all(df$kind == sub("s$", "", sub("ies$", "y", what))))
  }
  expect_true("genrbf" %in% mk_kernels()$name)
  expect_true("gaussian_em" %in% mk_densities()$name)
})

test_that("plugins registered at run time are listed with their plugin name", {
  skip_if_no_python()
  reticulate::py_run_string("
from missingkernels.hookspecs import hookimpl
from missingkernels.densities import GaussianEMDensity

class RBridgeTestPlugin:
    @hookimpl
    def missingkernels_register_densities(self):
        return {'rbridge_test_density': GaussianEMDensity}
")
  mk <- py_mk()
  mk$register_plugin(reticulate::py_eval("RBridgeTestPlugin()"), name = "rbridge-test")
  on.exit(mk$unregister_plugin("rbridge-test"))
  d <- mk_densities()
  row <- d[d$name == "rbridge_test_density", ]
  expect_identical(nrow(row), 1L)
  expect_identical(row$plugin, "rbridge-test")
  expect_false(row$builtin)
  expect_true(all(d$builtin[d$name != "rbridge_test_density"] ==
    startsWith(d$plugin[d$name != "rbridge_test_density"], "missingkernels.")))
  # and it can be used by name from R
  x <- rbind(c(0, 1), c(1, NA), c(2, 2.5), c(NA, 0), c(1, 1))
  expect_equal(
    mk_kernel_matrix(x, density = "rbridge_test_density", gamma = 0.5),
    mk_kernel_matrix(x, density = "gaussian_em", gamma = 0.5),
    tolerance = 1e-14
  )
})

test_that("mk_python_versions reports the Python side", {
  skip_if_no_python()
  v <- mk_python_versions()
  expect_identical(
    names(v),
    c("python", "python_version", "numpy", "scikit_learn", "missingkernels", "reticulate")
  )
  expect_identical(unname(v["numpy"]), py_np()$`__version__`)
  expect_identical(unname(v["missingkernels"]), py_mk()$`__version__`)
})
