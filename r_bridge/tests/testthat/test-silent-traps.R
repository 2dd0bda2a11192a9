# Issue 48, item 2: R habits that gave a silent wrong result.

trap_data <- function(n = 60, seed = 5) {
  set.seed(seed)
  d <- data.frame(x = rnorm(n), z = rnorm(n), g = factor(rep("only", n)))
  d$y <- d$x + 0.5 * d$z + rnorm(n, sd = 0.3)
  d$x[sample(n, 10)] <- NA
  d
}

test_that("an offset in the formula is refused (it predicted as if absent)", {
  d <- trap_data()
  expect_error(mk_svm(y ~ x + offset(100 * z), d), "offset")
  expect_error(mk_svm(y ~ x, d, offset = d$z), "offset")
})

test_that("a character response that reads as numbers says it is text", {
  skip_if_no_python()
  d <- trap_data()
  d$y_text <- as.character(round(d$y)) # "-2" to "3": a few classes
  expect_warning(
    fit <- mk_svm(y_text ~ x + z, d),
    "is text .*\"-?[0-9]+\".*as.numeric\\(y\\)"
  )
  expect_identical(fit$type, "classification")
  # a factor (or genuine labels) says nothing
  expect_warning(mk_svm(factor(y_text) ~ x + z, d), NA)
  d$lab <- ifelse(d$y > 0, "up", "down")
  expect_warning(mk_svm(lab ~ x + z, d), NA)
})

test_that("a factor predictor with one level is named in a warning", {
  skip_if_no_python()
  d <- trap_data()
  expect_warning(mk_svm(y ~ x + g, d), "'g'.*one level")
  d$g2 <- factor(c("a", rep("b", 59)))
  expect_warning(mk_svm(y ~ x + g2, d), NA)
})
