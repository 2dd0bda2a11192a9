# The install path (issue 25): install_missingkernels() installs a local
# source directory or wheel into a virtualenv; loading never asks a package
# index for the unpublished name.

fake_source <- function(plugin = TRUE) {
  dir <- tempfile("mk-src")
  dir.create(dir)
  writeLines("[project]\nname = 'missingkernels'", file.path(dir, "pyproject.toml"))
  if (plugin) {
    dir.create(file.path(dir, "plugins", "missingkernels-r"), recursive = TRUE)
    writeLines("[project]\nname = 'missingkernels-r'",
      file.path(dir, "plugins", "missingkernels-r", "pyproject.toml"))
  }
  normalizePath(dir)
}

test_that("only a local source directory or wheel is installed, never a name", {
  packages <- missingkernels:::.mk_install_packages
  err <- tryCatch(packages("missingkernels"), error = conditionMessage)
  expect_match(err, "not a local directory or file")
  expect_match(err, "not published on a package index")
  expect_error(packages("https://example.org/missingkernels.whl"), "not a local directory")
  empty <- tempfile("mk-empty")
  dir.create(empty)
  expect_error(packages(empty), "without pyproject.toml or setup.py")
  text <- tempfile(fileext = ".txt")
  writeLines("x", text)
  expect_error(packages(text), "not a wheel")
  # and install_missingkernels() refuses before creating anything
  env <- tempfile("mk-env")
  expect_error(install_missingkernels("missingkernels", envname = env), "not a local directory")
  expect_false(file.exists(env))
  expect_error(install_missingkernels(), "not published on a package index")
})

test_that("what pip is given: the path, extras, the plugin, numpy<2 for old reticulate", {
  packages <- missingkernels:::.mk_install_packages
  src <- fake_source()
  expect_identical(packages(src, reticulate_version = "1.38.0"), src)
  expect_identical(packages(src, reticulate_version = "1.28"), c(src, "numpy<2"))
  expect_identical(
    packages(src, plugin = TRUE, extras = c("experiments", "r"), reticulate_version = "1.41"),
    c(paste0(src, "[experiments,r]"), file.path(src, "plugins", "missingkernels-r"))
  )
  wheel <- file.path(tempdir(), "missingkernels_r-0.1.0-py3-none-any.whl")
  writeLines("", wheel)
  expect_identical(packages(src, plugin = wheel, reticulate_version = "1.41"),
    c(src, normalizePath(wheel)))
  expect_error(packages(wheel, plugin = TRUE), "repository's source directory")
  expect_error(packages(src, extras = "a b"), "names of extras")
  # this reticulate decides numpy<2 by itself
  old <- utils::packageVersion("reticulate") < "1.38.0"
  expect_identical("numpy<2" %in% packages(src), old)
})

test_that("loading never declares the unpublished name with py_require()", {
  requirement <- missingkernels:::.mk_python_requirement
  withr_option <- function(value, code) {
    old <- options(missingkernels.python_requirement = value)
    on.exit(options(old))
    code
  }
  expect_null(withr_option(NULL, requirement()))
  expect_null(withr_option("missingkernels", requirement())) # a name: ignored
  expect_null(withr_option("git+https://example.org/mk.git", requirement()))
  src <- fake_source(plugin = FALSE)
  expect_identical(withr_option(src, requirement()), src)
  # .onLoad's source names no package for py_require()
  onload <- paste(deparse(body(missingkernels:::.onLoad)), collapse = "\n")
  expect_no_match(onload, "\"missingkernels\"", fixed = TRUE)
})

test_that("the environment install_missingkernels() makes is found without RETICULATE_PYTHON", {
  skip_if_no_python()
  # an environment named r-missingkernels under a virtualenv root, which sees
  # the packages of the Python in use through a .pth file (no pip install)
  root <- tempfile("mk-workon")
  dir.create(root)
  on.exit(unlink(root, recursive = TRUE))
  base <- reticulate::py_eval("__import__('sys')._base_executable")
  env <- file.path(root, "r-missingkernels")
  status <- system2(base, c("-m", "venv", "--without-pip", env), stdout = FALSE, stderr = FALSE)
  if (status != 0) skip(paste("could not create a venv with", base))
  site <- Sys.glob(file.path(env, "lib", "python3*", "site-packages"))
  ours <- reticulate::py_eval("__import__('sysconfig').get_paths()['purelib']")
  # addsitedir also runs that directory's .pth files (an editable install)
  writeLines(sprintf("import site; site.addsitedir(%s)", deparse(ours)), file.path(site, "mk-test.pth"))
  res <- run_rscript(
    paste(
      "Sys.unsetenv('RETICULATE_PYTHON')",
      "library(missingkernels)",
      "cat('available:', isTRUE(mk_available()), '\\n')",
      "cat('python:', reticulate::py_config()$python, '\\n')",
      sep = "; "
    ),
    env = paste0("WORKON_HOME=", root)
  )
  expect_match(res$output, "available: TRUE")
  expect_match(res$output, paste0("python: ", normalizePath(env)), fixed = TRUE)
})

test_that("install_missingkernels() installs the package from its source (slow, opt-in)", {
  # MISSINGKERNELS_TEST_INSTALL=/path/to/the/repository: creates a virtualenv
  # and pip-installs the package and its dependencies (needs the index)
  source_dir <- Sys.getenv("MISSINGKERNELS_TEST_INSTALL")
  skip_if(!nzchar(source_dir), "set MISSINGKERNELS_TEST_INSTALL=<repository> to run")
  env <- tempfile("mk-install-env")
  on.exit(unlink(env, recursive = TRUE))
  python <- reticulate::py_eval("__import__('sys')._base_executable")
  out <- utils::capture.output(
    expect_message(
      executable <- install_missingkernels(source_dir, envname = env, python = python),
      "Installed into"
    )
  )
  expect_true(file.exists(executable))
  # reused the second time (pip finds everything installed)
  expect_message(install_missingkernels(source_dir, envname = env, pip_options = "--no-deps"), "Reusing")
  res <- run_rscript(
    paste(
      "library(missingkernels)",
      "cat('available:', isTRUE(mk_available()), '\\n')",
      "cat('numpy:', mk_python_versions()[['numpy']], '\\n')",
      "fit <- mk_svm(cbind(a = c(1, NA, 3, 4, 5, 6)), factor(c(1, 1, 1, 2, 2, 2)))",
      "cat('predicted:', length(predict(fit)), '\\n')",
      sep = "; "
    ),
    env = paste0("RETICULATE_PYTHON=", executable)
  )
  expect_match(res$output, "available: TRUE")
  expect_match(res$output, "predicted: 6")
  if (utils::packageVersion("reticulate") < "1.38.0") expect_match(res$output, "numpy: 1\\.")
})
