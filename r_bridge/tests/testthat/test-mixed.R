# Mixed tables: factor, character and logical predictors are nominal columns
# of a pandas DataFrame (not dummy coded); ordered factors too by default
# (ordered = "nominal"), or, with ordered = "ranks", ordered categoricals
# (numeric by rank on the Python side). test-ordered-predictors.R has more.

mixed_data <- function(n = 70, seed = 20) {
  set.seed(seed)
  df <- data.frame(
    a = rnorm(n),
    i = sample(c(1:6, NA), n, TRUE),
    f = factor(sample(c("u", "v", "w", NA), n, TRUE, prob = c(3, 3, 3, 1))),
    o = factor(sample(c("lo", "mid", "hi", NA), n, TRUE, prob = c(3, 3, 3, 1)),
      levels = c("lo", "mid", "hi"), ordered = TRUE
    ),
    s = sample(c("p", "q", NA), n, TRUE, prob = c(4, 4, 1)),
    l = sample(c(TRUE, FALSE, NA), n, TRUE, prob = c(4, 4, 1)),
    stringsAsFactors = FALSE
  )
  score <- df$a + 1.5 * (df$f %in% "u") - (df$s %in% "q") + 0.4 * as.integer(df$o) -
    0.8 * (df$l %in% TRUE) + rnorm(n, sd = 0.3)
  score[is.na(score)] <- rnorm(sum(is.na(score)))
  df$y <- factor(ifelse(score > 0.5, "yes", "no"))
  df$v <- score
  df$a[sample(n, 7)] <- NA
  df
}

# The equivalent DataFrame built on the Python side from a CSV (pandas'
# reader and dtypes, not this package's converter): f category, o ordered
# category, s strings, l boolean, i float.
py_reference_frame <- function(df) {
  path <- tempfile(fileext = ".csv")
  utils::write.csv(df, path, row.names = FALSE)
  helpers <- reticulate::py_run_string(paste(
    "def ref_frame(path):",
    "    import pandas as pd",
    "    df = pd.read_csv(path, na_values=['NA'], keep_default_na=False)",
    "    df['i'] = df['i'].astype('float64')",
    "    df['f'] = df['f'].astype('category')",
    "    df['o'] = pd.Categorical(df['o'], categories=['lo', 'mid', 'hi'], ordered=True)",
    "    df['l'] = df['l'].astype('boolean')",
    "    return df[['a', 'i', 'f', 'o', 's', 'l']]",
    sep = "\n"
  ), local = TRUE, convert = FALSE)
  helpers$ref_frame(path)
}

test_that("a data frame with numeric, factor, ordered, character and logical columns fits and predicts", {
  skip_if_no_python()
  df <- mixed_data()
  fit <- mk_svm(y ~ a + i + f + o + s + l, data = df, C = 10)
  expect_identical(fit$kernel, "mixed_rbf") # kernel = "auto"
  expect_identical(fit$density, "latent_class")
  expect_identical(fit$n_features, 6L)
  expect_identical(fit$feature_names, c("a", "i", "f", "o", "s", "l"))
  pred <- predict(fit, df)
  expect_s3_class(pred, "factor")
  expect_length(pred, nrow(df))
  expect_false(anyNA(pred))
  expect_gt(mean(pred == df$y), 0.75)
  # rows missing everything are predicted too
  blank <- df[1:2, ]
  blank[, c("a", "i", "f", "o", "s", "l")] <- NA
  expect_length(predict(fit, blank), 2L)
  # regression on the same table
  reg <- mk_svm(v ~ a + i + f + o + s + l, data = df, C = 10)
  expect_identical(reg$kernel, "mixed_rbf")
  expect_gt(cor(predict(reg, df), df$v), 0.7)
  # the data frame method gives the same model as the formula
  fit_df <- mk_svm(df[c("a", "i", "f", "o", "s", "l")], df$y, C = 10)
  expect_equal(
    predict(fit_df, df, type = "decision"), predict(fit, df, type = "decision"),
    tolerance = 1e-12
  )
})

test_that("nominal columns reach Python as nominal columns, not dummy codes", {
  skip_if_no_python()
  df <- mixed_data()
  fit <- mk_svm(y ~ a + i + f + o + s + l, data = df, ordered = "ranks")
  model <- fit$py_model
  expect_identical(
    as.vector(reticulate::py_to_r(model$is_nominal_)),
    c(FALSE, FALSE, TRUE, FALSE, TRUE, TRUE) # o: ordered, numeric by rank
  )
  expect_identical(
    as.character(reticulate::py_to_r(model$feature_names_in_)),
    c("a", "i", "f", "o", "s", "l")
  )
  cats <- reticulate::py_to_r(model$nominal_categories_)
  expect_identical(as.character(unlist(cats[[3]])), c("u", "v", "w"))
  expect_identical(sort(as.character(unlist(cats[[5]]))), c("p", "q"))
  expect_identical(unlist(cats[[6]]), c(FALSE, TRUE))
  expect_null(cats[[1]])
  expect_null(cats[[4]])
  # by default (ordered = "nominal") the ordered factor is nominal too
  by_default <- mk_svm(y ~ a + i + f + o + s + l, data = df)
  expect_identical(
    as.vector(reticulate::py_to_r(by_default$py_model$is_nominal_)),
    c(FALSE, FALSE, TRUE, TRUE, TRUE, TRUE)
  )
  cats <- reticulate::py_to_r(by_default$py_model$nominal_categories_)
  expect_identical(as.character(unlist(cats[[4]])), c("lo", "mid", "hi"))
})

test_that("predictions equal the Python estimator's on the equivalent DataFrame", {
  skip_if_no_python()
  df <- mixed_data()
  train <- df[1:50, ]
  test <- df[51:70, ]
  # the reference frame has `o` as an ordered categorical: ordered = "ranks"
  fit <- mk_svm(y ~ a + i + f + o + s + l, data = train, scale = FALSE, gamma = 0.3, C = 3,
    ordered = "ranks")
  ref <- py_mk()$MissingKernelSVC(standardize = FALSE, gamma = 0.3, C = 3)
  ref$fit(py_reference_frame(train), as.character(train$y))
  expect_identical(as.logical(ref$is_nominal_), c(FALSE, FALSE, TRUE, FALSE, TRUE, TRUE))
  test_py <- py_reference_frame(test)
  expect_equal(
    unname(predict(fit, test, type = "decision")),
    as.vector(ref$decision_function(test_py)),
    tolerance = 1e-10
  )
  expect_identical(as.character(predict(fit, test)), as.vector(ref$predict(test_py)))
  # regression (MissingKernelSVR), with the nominal weight changed
  reg <- mk_svm(v ~ a + i + f + o + s + l, data = train, scale = FALSE, gamma = 0.3,
    kernel_params = list(nominal_weight = 0.8), ordered = "ranks")
  ref_reg <- py_mk()$MissingKernelSVR(standardize = FALSE, gamma = 0.3, kernel_params = list(nominal_weight = 0.8))
  ref_reg$fit(py_reference_frame(train), train$v)
  expect_equal(unname(predict(reg, test)), as.vector(ref_reg$predict(test_py)), tolerance = 1e-10)
  unweighted <- mk_svm(v ~ a + i + f + o + s + l, data = train, scale = FALSE, gamma = 0.3,
    ordered = "ranks")
  expect_gt(max(abs(predict(unweighted, test) - predict(reg, test))), 1e-6)
})

test_that("levels are matched by label: reordered or fewer levels predict the same", {
  skip_if_no_python()
  df <- mixed_data()
  fit <- mk_svm(y ~ a + i + f + o + s + l, data = df[1:55, ], C = 5)
  new <- df[56:70, ]
  base <- predict(fit, new, type = "decision")
  reordered <- new
  reordered$f <- factor(as.character(new$f), levels = c("w", "u", "v"))
  reordered$o <- factor(as.character(new$o), levels = c("hi", "lo", "mid"), ordered = TRUE)
  reordered$s <- factor(new$s, levels = c("q", "p"))
  expect_false(identical(as.integer(reordered$f), as.integer(new$f)))
  expect_equal(predict(fit, reordered, type = "decision"), base, tolerance = 1e-12)
  subset <- new
  subset$f <- droplevels(factor(ifelse(new$f %in% "v", NA, as.character(new$f)), levels = c("w", "u")))
  expected <- new
  expected$f[new$f %in% "v"] <- NA
  expect_equal(
    predict(fit, subset, type = "decision"), predict(fit, expected, type = "decision"),
    tolerance = 1e-12
  )
  expect_identical(predict(fit, reordered), predict(fit, new))
})

test_that("a level unseen in training: missing with a warning, or an error", {
  skip_if_no_python()
  df <- mixed_data()
  fit <- mk_svm(y ~ a + i + f + o + s + l, data = df, C = 5)
  new <- df[1:6, ]
  unseen <- new
  unseen$f <- factor(c("zz", as.character(new$f[-1])))
  as_missing <- new
  as_missing$f[1] <- NA
  expect_warning(
    dec <- predict(fit, unseen, type = "decision"),
    "feature 'f' holds value\\(s\\) not seen in the training rows \\(\\['zz'\\]",
    class = "missingkernels_UnknownCategoryWarning"
  )
  expect_equal(dec, predict(fit, as_missing, type = "decision"), tolerance = 1e-12)
  # every call warns, not only the first
  expect_warning(predict(fit, unseen), class = "missingkernels_UnknownCategoryWarning")
  # a new value of a character column, and of an ordered factor
  unseen_s <- new
  unseen_s$s[2] <- "r"
  expect_warning(predict(fit, unseen_s), "feature 's'", class = "missingkernels_UnknownCategoryWarning")
  unseen_o <- new
  unseen_o$o <- factor(c("top", as.character(new$o[-1])), levels = c("lo", "mid", "hi", "top"), ordered = TRUE)
  as_missing_o <- new
  as_missing_o$o[1] <- NA
  # by default the ordered factor is nominal: Python's warning, as for f
  expect_warning(
    dec_o <- predict(fit, unseen_o, type = "decision"),
    "feature 'o' holds value\\(s\\) not seen in the training rows \\(\\['top'\\]",
    class = "missingkernels_UnknownCategoryWarning"
  )
  expect_equal(dec_o, predict(fit, as_missing_o, type = "decision"), tolerance = 1e-12)
  # as ranks, R's warning names it as an ordered factor
  ranks <- update(fit, ordered = "ranks")
  expect_warning(
    dec_r <- predict(ranks, unseen_o, type = "decision"),
    "ordered factor 'o'.*'top'",
    class = "missingkernels_UnknownCategoryWarning"
  )
  expect_equal(dec_r, predict(ranks, as_missing_o, type = "decision"), tolerance = 1e-12)

  strict <- update(fit, handle_unknown = "error")
  expect_identical(strict$handle_unknown, "error")
  expect_error(predict(strict, unseen), "feature 'f' holds value\\(s\\) not seen")
  expect_error(predict(strict, unseen_o), "feature 'o' holds value\\(s\\) not seen")
  strict_ranks <- update(fit, handle_unknown = "error", ordered = "ranks")
  expect_error(predict(strict_ranks, unseen_o), "ordered factor 'o'.*'top'")
  expect_error(mk_svm(y ~ a + f, data = df, handle_unknown = "ignore"), "`handle_unknown` must be")
})

test_that("print and summary say which predictors are nominal and which numeric", {
  skip_if_no_python()
  df <- mixed_data()
  fit <- mk_svm(y ~ a + i + f + o + s + l, data = df, ordered = "ranks")
  out <- paste(capture.output(print(fit)), collapse = "\n")
  expect_match(out, "Kernel: mixed_rbf   density: latent_class", fixed = TRUE)
  expect_match(out, "Numeric predictors (2): a, i", fixed = TRUE)
  expect_match(out, "Nominal predictors, not dummy coded (3): f (3 levels), s (2 levels), l (logical)", fixed = TRUE)
  expect_match(out, "Ordered factors, numeric by level rank (1): o (3 levels)", fixed = TRUE)
  # by default (ordered = "nominal") the ordered factor is listed as nominal
  by_default <- mk_svm(y ~ a + i + f + o + s + l, data = df)
  expect_output(
    print(by_default),
    "Nominal predictors, not dummy coded (4): f (3 levels), o (3 levels), s (2 levels), l (logical)",
    fixed = TRUE
  )
  expect_identical(
    summary(by_default)$predictors$type,
    c("numeric", "numeric", "nominal", "nominal", "nominal", "logical")
  )
  s <- summary(fit)
  expect_identical(s$predictors$name, c("a", "i", "f", "o", "s", "l"))
  expect_identical(s$predictors$type, c("numeric", "numeric", "nominal", "ordered", "nominal", "logical"))
  expect_identical(s$predictors$levels, c(NA, NA, 3L, 3L, 2L, 2L))
  expect_equal(s$predictors$missing, unname(colMeans(is.na(df[c("a", "i", "f", "o", "s", "l")]))))
  expect_output(print(s), "nominal +3")
  # plot() draws two numeric predictors only
  two <- mk_svm(y ~ a + f, data = df)
  expect_message(expect_null(plot(two)), "two numeric")
  # an all-numeric fit lists its numeric predictors only
  num <- mk_svm(y ~ a + i, data = df)
  expect_identical(num$kernel, "genrbf")
  expect_output(print(num), "Numeric predictors \\(2\\): a, i")
})

test_that("formulas: numeric transformations kept, factor interactions refused", {
  skip_if_no_python()
  df <- mixed_data()
  fit <- mk_svm(y ~ log(a + 5) + I(i^2) + a:i + f, data = df)
  expect_identical(fit$feature_names, c("log(a + 5)", "I(i^2)", "f", "a:i"))
  expect_identical(as.vector(reticulate::py_to_r(fit$py_model$is_nominal_)), c(FALSE, FALSE, TRUE, FALSE))
  expect_length(predict(fit, df[1:5, ]), 5L)
  expect_error(mk_svm(y ~ a * f, data = df), "The term 'a:f' combines the variable 'f'")
  expect_error(mk_svm(y ~ f:s, data = df), "variables 'f' and 's'")
  both <- mk_svm(y ~ a + interaction(f, s), data = df)
  expect_identical(as.vector(reticulate::py_to_r(both$py_model$is_nominal_)), c(FALSE, TRUE))
  # a kernel for numeric columns refuses nominal ones
  expect_error(mk_svm(y ~ a + f, data = df, kernel = "genrbf"), "nominal")
  expect_error(mk_svm(y ~ a + f, data = df, nominal_features = "f"), "factor\\(\\) to make it nominal")
  # an ordered factor alone: nominal by default, numeric with ordered = "ranks"
  # (then genrbf takes it)
  ord <- mk_svm(y ~ a + o, data = df)
  expect_identical(ord$kernel, "mixed_rbf")
  ord_ranks <- mk_svm(y ~ a + o, data = df, ordered = "ranks")
  expect_identical(ord_ranks$kernel, "genrbf")
})

test_that("mk_tune and mk_kernel_matrix take nominal columns", {
  skip_if_no_python()
  df <- mixed_data()
  tuned <- mk_tune(y ~ a + f + s + l, data = df, ranges = list(C = c(1, 10)), folds = 3, seed = 1)
  expect_identical(tuned$kernel, "mixed_rbf")
  expect_true(all(is.na(tuned$tune$performances$failed)))
  # a level of one row only: one warning for the search, not one per fold
  rare <- df
  rare$f <- factor(ifelse(seq_len(nrow(df)) == 5L, "rare", as.character(df$f)))
  warned <- character()
  withCallingHandlers(
    mk_tune(y ~ a + f, data = rare, ranges = list(C = c(1, 10)), folds = 3, seed = 1),
    warning = function(w) {
      warned <<- c(warned, conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  )
  expect_length(warned, 1L)
  expect_match(warned, "In 2 held-out fold fit\\(s\\), predictors had levels")

  x <- df[1:12, c("a", "i", "f", "o", "s", "l")]
  K <- mk_kernel_matrix(x, gamma = 0.4)
  ref <- py_mk()$get_kernel("mixed_rbf", gamma = 0.4)
  ref$fit(py_reference_frame(df[1:12, ]))
  expect_equal(unname(K), ref$`__call__`(py_reference_frame(df[1:12, ])), tolerance = 1e-10)
  expect_equal(unname(diag(K)), rep(1, 12), tolerance = 1e-12)
  K2 <- mk_kernel_matrix(x, df[13:15, ], gamma = 0.4)
  expect_equal(unname(K2), ref$`__call__`(py_reference_frame(df[1:12, ]), py_reference_frame(df[13:15, ])),
    tolerance = 1e-10
  )
  expect_error(mk_kernel_matrix(x, kernel = "genrbf"), "'f', 's', 'l' are nominal")
  # ordered factors only: numeric, by level rank
  ko <- mk_kernel_matrix(df[1:8, c("a", "o")], gamma = 0.4)
  by_rank <- cbind(a = df$a[1:8], o = as.integer(df$o[1:8]) - 1)
  expect_equal(ko, mk_kernel_matrix(by_rank, gamma = 0.4), tolerance = 1e-12, ignore_attr = TRUE)
})
