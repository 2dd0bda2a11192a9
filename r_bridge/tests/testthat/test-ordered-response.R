# Issue 34: an ordered factor response (mice::boys' pubertal stage `gen`)
# stopped with "comparison of these types is not implemented" (fitted values
# were a plain factor, the response an ordered one).

test_that("an ordered factor response fits, and predictions keep its class and levels", {
  skip_if_no_python()
  skip_if_not_installed("mice")
  boys <- mice::boys[seq(1, 748, by = 2), ] # 374 rows, about a third with `gen`
  expect_true(is.ordered(boys$gen))
  fit <- mk_svm(gen ~ age + hgt + wgt + tv, data = boys)
  expect_identical(fit$type, "classification")
  expect_identical(nobs(fit), sum(!is.na(boys$gen))) # the NA responses dropped
  expect_identical(fit$levels, levels(boys$gen))
  fitted_gen <- fitted(fit)
  expect_true(is.ordered(fitted_gen))
  expect_identical(levels(fitted_gen), levels(boys$gen))
  # the training error, against an independent count on the kept rows
  kept <- boys$gen[!is.na(boys$gen)]
  expect_equal(fit$training_error, mean(as.character(fitted_gen) != as.character(kept)))
  pred <- predict(fit, boys)
  expect_length(pred, nrow(boys)) # rows with missing tv (most) predicted too
  expect_true(is.ordered(pred))
  expect_false(anyNA(pred))
  # comparisons of ordered factors work on the result
  expect_type(pred >= "G3", "logical")
  expect_output(print(summary(fit)), "accuracy")
  expect_identical(predict(fit, boys[0, ]), factor(character(), levels(boys$gen), ordered = TRUE))
})
