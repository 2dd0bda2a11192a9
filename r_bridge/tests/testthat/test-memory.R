# Issue 48, item 7: the memory a fit will need, before it starts, from R
# (mk_memory(), mk_config() for the Python package's max_gram_memory), the
# route route = "auto" takes, and mk_svm saying when it approximates.

# The memory limit in effect before `old <- mk_config(max_gram_memory = )`.
restore_gram_limit <- function(old) {
  explicit <- identical(old$max_gram_memory_source, "set with mk_config()")
  mk_config(max_gram_memory = if (explicit) old$max_gram_memory else NULL)
}

# mk_svm with 20 kernel features under a 14 MB limit, which all the features
# of these 100,000-row tables exceed and their blocks fit: it says so, takes
# the features route in blocks, and fits the squared `loss`.
fit_in_blocks <- function(x, y, loss) {
  old_limit <- mk_config(max_gram_memory = "14MB")
  on.exit(restore_gram_limit(old_limit), add = TRUE)
  old <- options(missingkernels.memory_message = 0)
  on.exit(options(old), add = TRUE)
  expect_message(
    fit <- mk_svm(x, y, gamma = 0.5, n_kernel_features = 20),
    "the approximate features route in blocks of rows \\(20 kernel features",
    class = "missingkernels_memory_message"
  )
  expect_identical(fit$route, "features")
  expect_identical(reticulate::py_to_r(fit$py_model$svm_$loss), loss)
  fit
}

test_that("mk_config() reads and sets the Python package's memory limits", {
  skip_if_no_python()
  now <- mk_config()
  expect_named(now, c("max_gram_memory", "max_gram_memory_source", "fit_cache_memory"))
  python <- reticulate::import("missingkernels._config", convert = FALSE)$max_gram_memory()
  expect_identical(now$max_gram_memory, as.double(reticulate::import_builtins()$float(python[0L])))
  old <- mk_config(max_gram_memory = "3GB")
  on.exit(restore_gram_limit(old), add = TRUE)
  expect_identical(mk_config()$max_gram_memory, 3e9) # above R's integers
  expect_identical(mk_config()$max_gram_memory_source, "set with mk_config()")
  expect_true(reticulate::py_eval("__import__('missingkernels').get_config()['max_gram_memory'] == 3 * 10**9"))
  mk_config(max_gram_memory = 5e9)
  expect_identical(mk_config()$max_gram_memory, 5e9)
  mk_config(max_gram_memory = NULL)
  expect_null(py_mk()$get_config()$max_gram_memory)
  expect_error(mk_config(max_gram_memory = -1), "number of bytes")
})

test_that("mk_memory() says the route and the memory before a fit", {
  skip_if_no_python()
  old <- mk_config(max_gram_memory = "8GB")
  on.exit(restore_gram_limit(old), add = TRUE)
  plan <- mk_memory(n = 20000, d = 8)
  expect_s3_class(plan, "mk_memory")
  expect_identical(plan$route, "exact")
  expect_identical(plan$gram, 16 * 20000^2) # the matrix and one working copy
  expect_identical(plan$needed, 6.4e9)
  expect_identical(plan$limit, 8e9)
  expect_output(print(plan), "the exact route; its 20,000 x 20,000 training Gram matrix .* needs about 6.0 GiB; the limit is 7.5 GiB")
  mk_config(max_gram_memory = "1GB")
  plan <- mk_memory(n = 20000, d = 8)
  expect_identical(plan$route, "features")
  expect_identical(plan$n_kernel_features, 2000)
  expect_identical(plan$features, 2000 * (20000 * 8 + 8 * 9)) # float64 features and their map
  expect_identical(plan$needed, plan$features)
  expect_output(print(plan), "the approximate features route \\(2,000 kernel features")
  expect_identical(mk_memory(n = 20000, d = 8, route = "exact")$route, "exact")
  expect_identical(mk_memory(n = 20000, d = 8, n_kernel_features = 500)$features, 500 * (20000 * 8 + 8 * 9))
  # a million rows: all the features (15 GiB) exceed the limit, blocks of
  # 25,000 rows do not: the features route in blocks, memory stated up front
  plan <- mk_memory(n = 1e6, d = 8)
  expect_identical(plan$route, "features")
  expect_identical(plan$features, 2000 * (1e6 * 8 + 8 * 9))
  expect_identical(plan$blocks, 4 * 25000 * 2000 * 4 + 3 * 8 * 2001^2 + 6 * 8 * 1e6)
  expect_identical(plan$needed, plan$blocks)
  expect_output(print(plan), "features route in blocks of rows \\(2,000 kernel features .* about 900.4 MiB beside the data, where all the features would need 14.9 GiB")
  expect_true(is.na(mk_memory(n = 20000, d = 8)$blocks))
  mk_config(max_gram_memory = "100MB")
  plan <- mk_memory(n = 20000, d = 8)
  expect_true(is.na(plan$route))
  expect_output(print(plan), "neither route fits the limit of 95.4 MiB \\(set with mk_config\\(\\)\\)")
  expect_match(plan$explanation, "mk_config(max_gram_memory = ...)", fixed = TRUE)
  # from the data, as mk_svm would see them (rows with a response)
  plan <- mk_memory(Ozone ~ ., data = airquality)
  expect_identical(c(plan$n, plan$d), c(116L, 5L))
  expect_identical(mk_memory(as.matrix(airquality[1:3]))$n, 153L)
  expect_error(mk_memory(airquality, n = 3), "not both")
})

test_that("mk_svm says before it starts when it takes the approximate route, or needs much memory", {
  skip_if_no_python()
  set.seed(2)
  x <- matrix(rnorm(400), 200)
  x[sample(400, 30)] <- NA
  y <- factor(ifelse(x[, 1] > 0, "u", "v"), c("u", "v"))
  keep <- !is.na(y)
  # the default: exact, and quiet below the threshold (1 GiB)
  expect_no_message(fit <- mk_svm(x, y, gamma = 0.5))
  expect_identical(fit$route, "exact")
  old <- options(missingkernels.memory_message = 0)
  on.exit(options(old), add = TRUE)
  expect_message(mk_svm(x, y, gamma = 0.5),
    sprintf("this fit on %d rows of 2 column\\(s\\), route = \"auto\": the exact route", sum(keep)),
    class = "missingkernels_memory_message"
  )
  options(old)
  # a limit the Gram matrix exceeds: the features route, said first
  old_limit <- mk_config(max_gram_memory = "100KB")
  on.exit(restore_gram_limit(old_limit), add = TRUE)
  expect_message(
    approx <- mk_svm(x, y, gamma = 0.5, n_kernel_features = 50),
    "route = \"auto\": the approximate features route \\(50 kernel features",
    class = "missingkernels_memory_message"
  )
  expect_identical(approx$route, "features")
  expect_identical(reticulate::py_to_r(approx$py_model$route_), "features")
  expect_output(print(approx), "Route: features")
  expect_output(print(approx), "support vectors: none \\(features route\\)")
  expect_length(predict(approx, x), 200L)
  # forced, no message: the user chose it
  expect_no_message(forced <- mk_svm(x, y, gamma = 0.5, route = "features", n_kernel_features = 50))
  expect_identical(forced$route, "features")
  # neither fits: the error speaks R
  expect_error(mk_svm(x, y, n_kernel_features = 1e5), "mk_config\\(max_gram_memory = \\.\\.\\.\\)")
})

test_that("mk_svm makes the features a block of rows at a time when all of them exceed the limit", {
  skip_if_no_python()
  set.seed(3)
  n <- 100000
  x <- matrix(rnorm(2 * n), n)
  x[sample(2 * n, n / 5)] <- NA
  y <- factor(ifelse(rowSums(x, na.rm = TRUE) > 0, "u", "v"), c("u", "v"))
  # 20 features of every row: 16.0 MB; blocks of 25,000 rows: 12.8 MB
  old_limit <- mk_config(max_gram_memory = "14MB")
  on.exit(restore_gram_limit(old_limit), add = TRUE)
  plan <- mk_memory(x, n_kernel_features = 20)
  expect_identical(plan$route, "features")
  expect_identical(plan$needed, plan$blocks)
  expect_lt(plan$blocks, plan$limit)
  expect_gt(plan$features, plan$limit)
  fit <- fit_in_blocks(x, y, "squared_hinge")
  pred <- predict(fit, x[1:2000, ])
  expect_length(pred, 2000L)
  expect_gt(mean(pred == y[1:2000]), 0.8)
})

test_that("mk_svm regression makes the features a block of rows at a time too", {
  skip_if_no_python()
  set.seed(4)
  n <- 100000
  x <- matrix(rnorm(2 * n), n)
  x[sample(2 * n, n / 5)] <- NA
  y <- 10 + 3 * ifelse(is.na(x[, 1]), 0, x[, 1]) + rnorm(n, sd = 0.5)
  fit <- fit_in_blocks(x, y, "squared_epsilon_insensitive")
  pred <- predict(fit, x[1:2000, ])
  expect_length(pred, 2000L)
  # the target's own spread is about 3: the fit explains most of it
  expect_lt(sqrt(mean((pred - y[1:2000])^2)), 1.5)
})

test_that("the help of mk_svm says when the approximate route is taken", {
  rd <- tools::Rd_db("missingkernels")[["mk_svm.Rd"]]
  text <- gsub("\\s+", " ", paste(
    utils::capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))),
    collapse = " "
  ))
  expect_match(text, "otherwise the .?approximate.? features route")
  expect_match(text, "mk_memory", fixed = TRUE)
})

test_that("mk_svm takes the blocks of rows for a data frame with factors too", {
  skip_if_no_python()
  set.seed(5)
  n <- 100000
  df <- data.frame(
    a = rnorm(n), b = rnorm(n),
    g = factor(sample(c("p", "q", "r"), n, replace = TRUE))
  )
  df$a[sample(n, n / 5)] <- NA
  df$g[sample(n, n / 10)] <- NA
  signal <- ifelse(is.na(df$a), 0, df$a) + 1.5 * (df$g %in% "p") + df$b
  y <- factor(ifelse(signal > 0.5, "u", "v"), c("u", "v"))
  # the mixed kernel's Nystroem landmarks: its features a block at a time
  fit <- fit_in_blocks(df, y, "squared_hinge")
  expect_identical(reticulate::py_to_r(fit$py_model$features_$method_), "nystroem")
  pred <- predict(fit, df[1:2000, ])
  expect_length(pred, 2000L)
  expect_gt(mean(pred == y[1:2000]), 0.8)
})
