# mk_compare against run_comparison called from Python directly.

test_that("mk_compare returns the Python runner's long results", {
  skip_if_no_python()
  set.seed(4)
  x <- matrix(rnorm(300), 100, 3, dimnames = list(NULL, c("a", "b", "c")))
  y <- factor(ifelse(x[, 1] - x[, 2] > 0, "yes", "no"))
  x[matrix(runif(300) < 0.15, 100)] <- NA
  args <- list(
    methods = c("mean", "genrbf"), outer_folds = 2L, inner_folds = 2L,
    C_grid = c(1, 4), gamma_grid = 0.25, seed = 3L
  )
  res <- do.call(mk_compare, c(list(x, y), args))
  expect_s3_class(res, "data.frame")
  expect_identical(nrow(res), 2L * 2L * 2L) # folds x methods x metrics
  expect_setequal(res$metric, c("accuracy", "balanced_accuracy"))
  expect_true(all(res$error == ""))
  expect_true(all(res$score >= 0 & res$score <= 1))
  expect_true(all(res$C %in% c(1, 4)) && all(res$gamma == 0.25))
  expect_true(all(res$mechanism == "none"))
  expect_equal(unique(res$missing_rate), mean(is.na(x)))

  exp <- reticulate::import("missingkernels.experiments", convert = FALSE)
  data <- exp$ComparisonData(py_array(x), py_np()$array(as.integer(y) - 1L), "classification")
  ref <- exp$run_comparison(
    reticulate::py_dict(list("data"), list(data)), list("mean", "genrbf"),
    mechanisms = list("none"), rates = list(0.3), n_draws = 1L,
    outer_folds = 2L, inner_folds = 2L, C_grid = list(1, 4), gamma_grid = list(0.25),
    random_state = 3L
  )
  # pandas >= 3 frames do not convert with reticulate 1.28: read a CSV
  csv <- tempfile(fileext = ".csv")
  ref$to_csv(csv, index = FALSE)
  ref <- read.csv(csv, stringsAsFactors = FALSE)
  key <- function(d) paste(d$method, d$fold, d$metric)
  expect_identical(sort(key(res)), sort(key(ref)))
  expect_equal(res$score[order(key(res))], ref$score[order(key(ref))], tolerance = 1e-12)
  expect_identical(res$params[order(key(res))], ref$params[order(key(ref))])
})

test_that("formula interface, simulated mechanisms and regression", {
  skip_if_no_python()
  set.seed(5)
  df <- data.frame(a = rnorm(60), b = rnorm(60), f = factor(sample(c("u", "v"), 60, TRUE)))
  df$y <- df$a + 2 * df$b + rnorm(60, sd = 0.1)
  res <- mk_compare(y ~ a + b, data = df,
    methods = "genrbf", mechanism = c("mcar", "mar"), rate = c(0.1, 0.2),
    outer_folds = 2, inner_folds = 2, C_grid = 1, gamma_grid = 0.5
  )
  expect_identical(res$dataset[1], "df")
  expect_true(all(res$task == "regression" & res$metric == "r2"))
  expect_identical(nrow(res), 2L * 2L * 2L) # mechanisms x rates x folds
  expect_equal(sort(unique(res$missing_rate)), c(0.1, 0.2))
  expect_error(mk_compare(y ~ a, data = df, methods = "no_such_method"), "no_such_method")
  expect_error(mk_compare(y ~ a, data = df, bogus = 1), "Unknown argument")
})
