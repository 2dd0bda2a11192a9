# mk_svm against the Python estimators called directly (reticulate with its
# own conversions), on data standardised here with base::scale().

make_data <- function(n = 60, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * 3), n, 3, dimnames = list(NULL, c("a", "b", "c")))
  score <- x[, 1] - x[, 2] + 0.3 * rnorm(n)
  x[matrix(runif(n * 3) < 0.2, n)] <- NA
  x[5, ] <- NA # an entirely missing training row is kept too
  list(x = x, score = score)
}

py_scaled <- function(x) py_array(scale(x)) # centre/scale by observed entries

test_that("classification matches MissingKernelSVC; factor levels survive", {
  skip_if_no_python()
  d <- make_data()
  # levels deliberately not alphabetical, plus a level absent from the data
  y <- factor(ifelse(d$score > 0, "pos", "neg"), levels = c("pos", "neg", "unused"))
  # a tight solver tolerance: libsvm's solution then does not depend on
  # which class is coded first (it does at the default tol = 1e-3)
  fit <- mk_svm(d$x, y, C = 3, gamma = 0.4, tol = 1e-10)
  expect_s3_class(fit, "mk_svm")
  expect_identical(fit$type, "classification")
  pred <- predict(fit, d$x)
  expect_s3_class(pred, "factor")
  expect_identical(levels(pred), c("pos", "neg", "unused"))
  expect_length(pred, nrow(d$x))
  expect_false(anyNA(pred))

  ref <- py_mk()$MissingKernelSVC(standardize = FALSE, C = 3, gamma = 0.4, tol = 1e-10)
  ref$fit(py_scaled(d$x), py_np()$array(as.character(y)))
  expect_identical(as.character(pred), as.vector(ref$predict(py_scaled(d$x))))
  # Python sorts the string classes (neg, pos); R codes follow the levels
  # (pos, neg): positive R decision values favour object$classes[2] = "neg".
  expect_identical(fit$classes, c("pos", "neg"))
  dec <- predict(fit, d$x, type = "decision")
  expect_equal(unname(dec), -as.vector(ref$decision_function(py_scaled(d$x))),
    tolerance = 1e-7
  )
  expect_identical(as.character(pred), ifelse(dec > 0, "neg", "pos"))
})

test_that("formula and matrix interfaces agree", {
  skip_if_no_python()
  d <- make_data(seed = 2)
  df <- as.data.frame(d$x)
  df$y <- factor(d$score > 0, labels = c("no", "yes"))
  f1 <- mk_svm(y ~ a + b + c, data = df, C = 2)
  f2 <- mk_svm(d$x, df$y, C = 2)
  f3 <- mk_svm(y ~ ., data = df, C = 2)
  expect_identical(f1$n, 60L)
  expect_identical(predict(f1, df), predict(f3, df))
  expect_identical(unname(predict(f1, df)), unname(predict(f2, d$x)))
  expect_equal(
    unname(predict(f1, df, type = "decision")),
    unname(predict(f2, d$x, type = "decision"))
  )
  # `subset` selects training rows as in lm(); NA rows are kept regardless
  f4 <- mk_svm(y ~ a + b, data = df, subset = seq_len(40))
  expect_identical(f4$n, 40L)
  expect_identical(f4$n_incomplete_rows, sum(!complete.cases(df[1:40, c("a", "b")])))
})

test_that("NA round trip: R NA reaches Python as NaN and NA rows are predicted", {
  skip_if_no_python()
  d <- make_data(seed = 3)
  xi <- round(d$x * 10)
  storage.mode(xi) <- "integer" # integer NA would be -2^31 if passed raw
  y <- factor(d$score > 0)
  fit <- mk_svm(xi, y, scale = FALSE, max_iter = 5000)
  np <- reticulate::import("numpy", convert = FALSE)
  # What Python received: the model keeps the rows that are support vectors
  X_fit <- fit$py_model$support_vectors_
  sv <- as.integer(reticulate::py_to_r(fit$py_model$support_)) + 1L
  xs <- xi[sv, , drop = FALSE]
  expect_identical(reticulate::py_to_r(X_fit$dtype$name), "float64")
  expect_identical(unname(reticulate::py_to_r(np$isnan(X_fit))), unname(is.na(xs)))
  # R's NA is a signalling NaN; Python must get quiet NaNs (no FP warnings)
  quiet <- reticulate::py_eval(
    "lambda a: bool(((a.view('uint64') >> 51) & 1)[a != a].all())",
    convert = TRUE
  )
  expect_true(quiet(X_fit))
  observed <- !is.na(xs)
  expect_identical(reticulate::py_to_r(X_fit)[observed], as.double(xs[observed]))
  # max_iter = 5000 (a double in R) is an int in Python
  expect_identical(reticulate::py_to_r(fit$py_model$get_params())$max_iter, 5000L)

  new <- rbind(c(NA, NA, NA), c(3L, NA, -2L), c(1L, 2L, 3L))
  colnames(new) <- colnames(xi)
  rownames(new) <- c("empty", "partial", "complete")
  p <- predict(fit, new)
  expect_named(p, rownames(new))
  expect_false(anyNA(p))
  dec <- predict(fit, new, type = "decision")
  expect_true(all(is.finite(dec)))
})

test_that("regression matches MissingKernelSVR", {
  skip_if_no_python()
  d <- make_data(seed = 4)
  df <- as.data.frame(d$x)
  df$y <- d$score
  fit <- mk_svm(y ~ ., data = df, C = 5, epsilon = 0.05, gamma = 0.3)
  expect_identical(fit$type, "regression")
  pred <- predict(fit, df)
  expect_type(pred, "double")
  expect_length(pred, nrow(df))
  # scale = TRUE standardises the response too (e1071's meaning): the SVR is
  # fitted to it and its predictions are transformed back
  ref <- py_mk()$MissingKernelSVR(standardize = FALSE, C = 5, epsilon = 0.05, gamma = 0.3)
  ref$fit(py_scaled(d$x), as.vector(scale(df$y)))
  expect_equal(unname(pred), as.vector(ref$predict(py_scaled(d$x))) * sd(df$y) + mean(df$y),
    tolerance = 1e-10
  )
  expect_identical(predict(fit, df, type = "decision"), pred)
  s <- summary(fit)
  expect_equal(
    unname(s$training["r_squared"]),
    1 - sum((df$y - pred)^2) / sum((df$y - mean(df$y))^2)
  )
  expect_output(print(s), "r_squared")
})

test_that("several classes: decision matrix with one column per class", {
  skip_if_no_python()
  d <- make_data(seed = 5)
  y <- cut(d$score, c(-Inf, -0.5, 0.5, Inf), labels = c("a", "b", "c"))
  fit <- mk_svm(d$x, y, C = 4)
  dec <- predict(fit, d$x, type = "decision")
  expect_identical(dim(dec), c(60L, 3L))
  expect_identical(colnames(dec), c("a", "b", "c"))
  ref <- py_mk()$MissingKernelSVC(standardize = FALSE, C = 4)
  ref$fit(py_scaled(d$x), py_np()$array(as.character(y)))
  expect_equal(unname(dec), ref$decision_function(py_scaled(d$x)), tolerance = 1e-10)
  expect_identical(
    as.character(predict(fit, d$x)), as.vector(ref$predict(py_scaled(d$x)))
  )
})

test_that("class_weight by level equals Python's class_weight by label", {
  skip_if_no_python()
  d <- make_data(seed = 6)
  y <- factor(ifelse(d$score > 0.6, "rare", "common"), levels = c("rare", "common"))
  fit <- mk_svm(d$x, y, class_weight = c(rare = 4), tol = 1e-10)
  ref <- py_mk()$MissingKernelSVC(standardize = FALSE, class_weight = list(rare = 4), tol = 1e-10)
  ref$fit(py_scaled(d$x), py_np()$array(as.character(y)))
  # Python's classes are (common, rare), R's (rare, common): opposite signs
  expect_equal(unname(predict(fit, d$x, type = "decision")),
    -as.vector(ref$decision_function(py_scaled(d$x))),
    tolerance = 1e-7
  )
  expect_error(mk_svm(d$x, y, class_weight = c(other = 2)), "not levels of the response")
})

test_that("print, summary and fitted", {
  skip_if_no_python()
  d <- make_data(seed = 7)
  y <- factor(d$score > 0, labels = c("no", "yes"))
  fit <- mk_svm(d$x, y)
  expect_identical(fit$density, "gaussian_em") # the kernel's default, by name
  expect_output(print(fit), "Kernel: genrbf   density: gaussian_em")
  expect_output(print(fit), "Training rows: 60, [0-9]+ with missing values")
  s <- summary(fit)
  expect_s3_class(s, "summary.mk_svm")
  expect_equal(unname(s$training["accuracy"]), mean(predict(fit) == y))
  expect_identical(sum(s$sv_per_class), fit$n_sv)
  expect_equal(s$missing_by_feature, colMeans(is.na(d$x)))
  expect_output(print(s), "Support vectors per class")
  expect_identical(fitted(fit), predict(fit, d$x))
})

test_that("bad inputs are clear errors", {
  skip_if_no_python()
  d <- make_data(seed = 8)
  y <- factor(d$score > 0)
  y_na <- y
  y_na[3] <- NA
  expect_error(mk_svm(d$x, y_na, na.action = na.pass), "1 missing value\\(s\\) \\(row 3\\)")
  expect_error(mk_svm(d$x, factor(rep("a", 60))), "at least two classes")
  expect_error(mk_svm(d$x, y[-1]), "59 values but the predictors have 60 rows")
  expect_error(mk_svm(d$x, y, gamma = -1), "positive number")
  expect_error(mk_svm(d$x, y, kernel = "no_such_kernel"), "no_such_kernel")
  expect_warning(mk_svm(d$x, y, epsilon = 0.3), "regression only")
  fit <- mk_svm(d$x, y)
  expect_error(predict(fit, d$x[, 1:2]), "lacks the column")
  # the Python object travels pickled inside the R object (test-persist.R);
  # without the pickle, the error says to refit
  gone <- unserialize(serialize(fit, NULL))
  gone$python_pickle <- NULL
  expect_error(predict(gone, d$x), "refit it")
})

test_that("random_state fixes the draws of a density of draws", {
  skip_if_no_python()
  d <- make_data(seed = 9)
  y <- factor(ifelse(d$score > 0, "yes", "no"))
  fit_once <- function() {
    mk_svm(d$x, y,
      density = "iterative", density_params = list(n_draws = 2),
      gamma = 0.5, random_state = 1
    )
  }
  a <- fit_once()
  b <- fit_once()
  expect_identical(
    reticulate::py_to_r(a$py_model$density_$random_state), 1L
  )
  expect_identical(predict(a, d$x, type = "decision"), predict(b, d$x, type = "decision"))
})
