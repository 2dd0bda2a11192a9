# What the missing entries cost (issue 47): predict(uncertainty = TRUE),
# augment(uncertainty = TRUE), mk_value_of_measuring(), mk_plot_uncertainty().

cost_data <- function(n = 90, seed = 4, k = 2) {
  set.seed(seed)
  x <- matrix(rnorm(n * 3), n, 3, dimnames = list(NULL, c("a", "b", "c")))
  x[, 2] <- x[, 2] + 0.8 * x[, 1]
  score <- x[, 1] + sin(2 * x[, 2]) - 0.5 * x[, 3]
  y <- if (k == 2) {
    factor(ifelse(score > 0, "yes", "no"), levels = c("yes", "no"))
  } else {
    cut(score, c(-Inf, -0.6, 0.6, Inf), labels = c("low", "mid", "high"))
  }
  x[matrix(runif(n * 3) < 0.25, n)] <- NA
  x[1, ] <- c(0.5, -0.2, 1) # a complete row
  list(x = x, y = y, score = score)
}

test_that("predict(uncertainty = TRUE): the completed mean is the decision (expected RBF)", {
  skip_if_no_python()
  d <- cost_data()
  fit <- mk_svm(d$x, d$y, kernel = "expected_rbf", C = 2)
  new <- d$x[1:15, ]
  u <- predict(fit, new, uncertainty = TRUE, n_draws = 400, seed = 3)
  expect_s3_class(u, "data.frame")
  expect_identical(nrow(u), 15L)
  expect_true(is.factor(u$prediction))
  expect_identical(levels(u$prediction), c("yes", "no"))
  expect_identical(as.character(u$prediction), as.character(predict(fit, new)))
  expect_equal(u$decision, unname(predict(fit, new, type = "decision")), tolerance = 1e-12)
  incomplete <- rowSums(is.na(new)) > 0
  expect_identical(u$n_missing, as.integer(rowSums(is.na(new))))
  expect_identical(u$completed_sd > 0, unname(incomplete))
  expect_identical(u$flip_probability[!incomplete], rep(0, sum(!incomplete)))
  # Monte Carlo: within 4.5 standard errors of the decision.
  se <- u$completed_sd / sqrt(400)
  expect_true(all(abs(u$completed_mean - u$decision) <= 4.5 * se + 1e-12))
  expect_true(all(u$completed_q05 <= u$completed_q95))
})

test_that("set.seed() reproduces the draws; another seed gives others", {
  skip_if_no_python()
  d <- cost_data()
  fit <- mk_svm(d$x, d$y)
  set.seed(10)
  a <- predict(fit, d$x[1:10, ], uncertainty = TRUE, n_draws = 30)
  set.seed(10)
  b <- predict(fit, d$x[1:10, ], uncertainty = TRUE, n_draws = 30)
  set.seed(11)
  c <- predict(fit, d$x[1:10, ], uncertainty = TRUE, n_draws = 30)
  expect_identical(a, b)
  expect_false(isTRUE(all.equal(a$completed_mean, c$completed_mean)))
  # the row's draws do not depend on the other rows
  one <- predict(fit, d$x[4, , drop = FALSE], uncertainty = TRUE, n_draws = 30, seed = 5)
  all <- predict(fit, d$x[1:10, ], uncertainty = TRUE, n_draws = 30, seed = 5)
  expect_equal(unlist(one[1, -2]), unlist(all[4, -2]), tolerance = 1e-12)
})

test_that("regression: the spread is in the units of the response", {
  skip_if_no_python()
  d <- cost_data()
  resp <- 1000 + 200 * d$score
  fit <- mk_svm(d$x, resp, kernel = "expected_rbf", C = 5)
  u <- predict(fit, d$x[1:12, ], uncertainty = TRUE, n_draws = 400, seed = 1)
  expect_equal(u$prediction, unname(predict(fit, d$x[1:12, ])), tolerance = 1e-10)
  se <- u$completed_sd / sqrt(400)
  expect_true(all(abs(u$completed_mean - u$prediction) <= 4.5 * se + 1e-9))
  # standardised units would give spreads below 2; the response spreads ~200
  expect_gt(max(u$completed_sd), 10)
  v <- mk_value_of_measuring(fit, d$x[1:12, ], n_draws = 40, seed = 1)
  expect_identical(unname(is.na(as.matrix(v))), unname(!is.na(d$x[1:12, ])))
  expect_gt(max(as.matrix(v), na.rm = TRUE), 10)
})

test_that("mk_value_of_measuring: one column per predictor, NA where observed", {
  skip_if_no_python()
  d <- cost_data()
  fit <- mk_svm(d$x, d$y)
  new <- d$x[2:9, ]
  rownames(new) <- paste0("p", 2:9)
  v <- mk_value_of_measuring(fit, new, n_draws = 30, seed = 2)
  expect_identical(names(v), c("a", "b", "c"))
  expect_identical(rownames(v), rownames(new))
  expect_identical(unname(is.na(as.matrix(v))), unname(!is.na(new)))
  vals <- as.matrix(v)[is.na(new)]
  expect_true(all(vals >= 0 & vals <= 1))
  expect_error(mk_value_of_measuring(fit, new, n_draws = 1), "n_draws")
  expect_error(mk_value_of_measuring(list(), new), "mk_svm")
})

test_that("augment(uncertainty = TRUE) adds .flip_prob and the decision's spread", {
  skip_if_no_python()
  d <- cost_data()
  df <- data.frame(d$x, y = d$y)
  fit <- mk_svm(y ~ ., data = df)
  au <- augment(fit, newdata = df[1:10, ], uncertainty = TRUE, n_draws = 30, seed = 7)
  u <- predict(fit, df[1:10, ], uncertainty = TRUE, n_draws = 30, seed = 7)
  expect_equal(au$.flip_prob, u$flip_probability)
  expect_equal(au$.decision_sd, u$completed_sd)
  expect_equal(au$.decision_q05, u$completed_q05)
  expect_equal(au$.decision_q95, u$completed_q95)
  expect_identical(nrow(augment(fit, uncertainty = TRUE, n_draws = 5, seed = 1)), nrow(df))
  expect_error(augment(fit, newdata = df, uncertainty = NA), "uncertainty")
})

test_that("several classes and probabilities: shares per level, probability quantiles", {
  skip_if_no_python()
  d <- cost_data(k = 3)
  fit <- mk_svm(d$x, d$y, probability = TRUE, calibration_folds = 3)
  u <- predict(fit, d$x[1:12, ], uncertainty = TRUE, n_draws = 40, seed = 9)
  shares <- as.matrix(u[paste0("completed_share_", levels(d$y))])
  expect_equal(unname(rowSums(shares)), rep(1, 12), tolerance = 1e-12)
  own <- shares[cbind(seq_len(12), as.integer(u$prediction))]
  expect_equal(u$change_probability, 1 - own, tolerance = 1e-12)
  p <- predict(fit, d$x[1:12, ], type = "prob")
  for (level in levels(d$y)) {
    expect_equal(u[[paste0("proba_", level)]], unname(p[, level]), tolerance = 1e-12)
    expect_true(all(u[[paste0("proba_q05_", level)]] <= u[[paste0("proba_q95_", level)]]))
  }
  complete <- rowSums(is.na(d$x[1:12, ])) == 0
  expect_equal(u$proba_q05_low[complete], unname(p[complete, "low"]), tolerance = 1e-12)
})

test_that("mk_plot_uncertainty draws one row and checks `row`", {
  skip_if_no_python()
  d <- cost_data()
  fit <- mk_svm(d$x, d$y)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  drawn <- mk_plot_uncertainty(fit, d$x[1:5, ], row = which(rowSums(is.na(d$x[1:5, ])) > 0)[1], n_draws = 40, seed = 1)
  expect_length(drawn$completed, 40L)
  expect_s3_class(drawn$summary, "data.frame")
  expect_error(mk_plot_uncertainty(fit, d$x[1:5, ], row = 9), "row")
})
