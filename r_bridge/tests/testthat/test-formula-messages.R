# Issue 48, items 3 and 4: a formula that excludes a column of an unusable
# class, and messages that point at the right place (rows of the data, the
# columns newdata lacks, na.fail, an infinite response, update()).

message_data <- function(n = 12, seed = 48) {
  set.seed(seed)
  d <- data.frame(a = rnorm(n), b = rnorm(n))
  d$y <- d$a - d$b + rnorm(n, sd = 0.3)
  d$w <- 1
  d$y[c(2, 4, 5, 6, 8)] <- NA
  d
}

test_that("y ~ . - dt fits when dt is a Date column, and predicts without it", {
  skip_if_no_python()
  d <- message_data()
  d$dt <- as.Date("2024-01-01") + seq_len(nrow(d))
  fit <- mk_svm(y ~ . - dt - w, data = d, random_state = 1)
  expect_identical(fit$feature_names, c("a", "b"))
  ref <- mk_svm(y ~ a + b, data = d, random_state = 1)
  expect_identical(predict(fit, d), predict(ref, d))
  # new data need not have the excluded column
  expect_identical(predict(fit, d[c("a", "b")]), predict(ref, d))
  expect_identical(names(model.frame(fit)), c("y", "a", "b"))
  # a Date column that is used is still refused, by name
  expect_error(mk_svm(y ~ a + dt, data = d), "'dt' of the predictors are of class Date")
})

test_that("row numbers in messages count the rows of the data", {
  skip_if_no_python()
  d <- message_data()
  # a missing weight in row 7 (rows 2, 4, 5, 6 have no response)
  d$w[7] <- NA
  expect_error(mk_svm(y ~ a + b, data = d, weights = w), "at row 7 of the data")
  d$w[7] <- 1
  # an infinite predictor in row 10, with the formula and the x interface
  inf <- d
  inf$a[10] <- Inf
  expect_error(mk_svm(y ~ a + b, data = inf), "column 'a', row 10\\)")
  expect_error(mk_svm(as.matrix(inf[c("a", "b")]), inf$y), "column 'a', row 10\\)")
  # with subset, still rows of the data
  expect_error(mk_svm(y ~ a + b, data = inf, subset = a > -5 | is.na(a)), "row 10\\)")
  # an infinite response in row 9
  inf_y <- d
  inf_y$y[9] <- -Inf
  expect_error(mk_svm(y ~ a + b, data = inf_y), "1 infinite value\\(s\\) \\(row 9\\)")
  expect_error(mk_svm(inf_y[c("a", "b")], inf_y$y), "1 infinite value\\(s\\) \\(row 9\\)")
})

test_that("mk_compare's messages count the rows of the data too, and name the column", {
  skip_if_no_python()
  skip_if_not(reticulate::py_module_available("pandas"), "the experiments extra is not installed")
  d <- message_data(n = 20)
  d$a[10] <- Inf
  # rows 2, 4, 5, 6, 8 have no response: the Python side sees row 10 as its
  # 5th (0-based); before, it said only "X has inf entries"
  expect_error(
    mk_compare(y ~ a + b, data = d, outer_folds = 2, seed = 1),
    "infinite value\\(s\\), the first in column 'a', row 10\\."
  )
  expect_error(
    mk_compare(y ~ a + b, data = d, subset = b > -5, outer_folds = 2, seed = 1),
    "column 'a', row 10\\."
  )
  # the x interface: rows of x
  expect_error(
    mk_compare(d[c("a", "b")], d$y, outer_folds = 2, seed = 1),
    "column 'a', row 10\\."
  )
  # an infinite response: rows of the data
  d$a[10] <- 1
  d$y[11] <- Inf
  expect_error(
    mk_compare(y ~ a + b, data = d, subset = b > -5, outer_folds = 2, seed = 1),
    "\\(row 11\\)"
  )
})

test_that("an infinite response gets advice that removes it; na.fail's message reads", {
  skip_if_no_python()
  d <- message_data()
  d$y[3] <- Inf
  msg <- tryCatch(mk_svm(y ~ a + b, data = d), error = conditionMessage)
  expect_match(msg, "data[is.finite(data$y), ]", fixed = TRUE)
  expect_no_match(msg, "!is.na(", fixed = TRUE)
  # the advice does what it says: Inf and NA both go
  kept <- d[is.finite(d$y), ]
  expect_true(all(is.finite(kept$y)))
  expect_s3_class(mk_svm(y ~ a + b, data = kept), "mk_svm")
  # na.fail: its own message quoted, then a new sentence
  msg <- tryCatch(mk_svm(y ~ a + b, data = message_data(), na.action = na.fail),
    error = conditionMessage
  )
  expect_match(msg, "(rows 2, 4, 5, 6, 8)", fixed = TRUE)
  expect_match(msg, "refused them (\"missing values in object\"). Use na.action", fixed = TRUE)
})

test_that("newdata lacking a column names it (formula and x interfaces)", {
  skip_if_no_python()
  d <- message_data()
  d$f <- factor(rep(c("u", "v", "w"), 4))
  fit <- mk_svm(y ~ a + b + f, data = d)
  expect_error(predict(fit, d[c("a", "f")]), "`newdata` lacks the column\\(s\\) 'b' used for fitting")
  expect_error(predict(fit, d["a"]), "lacks the column\\(s\\) 'b', 'f' used")
  # an object of the lacking name elsewhere is not used instead
  b <- rep(100, nrow(d))
  expect_error(predict(fit, d[c("a", "f")]), "lacks the column\\(s\\) 'b'")
  # a transformed variable: the column it needs
  logfit <- mk_svm(y ~ log(abs(a)) + b, data = d)
  expect_error(predict(logfit, d["b"]), "lacks the column\\(s\\) 'a' used")
  # the x interface, with a data frame
  xfit <- mk_svm(d[c("a", "b", "f")], d$y)
  expect_error(predict(xfit, d[c("b", "f")]), "lacks the column\\(s\\) 'a' used")
  expect_identical(length(predict(xfit, d[c("f", "b", "a")])), nrow(d))
})

test_that("update() of a fit made inside a function: the help and the error say where the data are read", {
  skip_if_no_python()
  fit_inside <- function() {
    local_d <- message_data()
    mk_svm(y ~ a + b, data = local_d)
  }
  fit <- fit_inside()
  expect_error(
    update(fit, C = 10),
    "`local_d` \\(in `data = `\\) is not found there.*update\\(fit, data = <your data frame>\\)"
  )
  # given again, it refits
  local_d <- message_data()
  expect_identical(update(fit, data = local_d, C = 10)$C, 10)
  expect_identical(update(fit, C = 3)$C, 3) # found where update() is called
  expect_identical(update(fit, . ~ . - b, data = local_d)$feature_names, "a")
  expect_identical(update(fit, C = 3, evaluate = FALSE)$C, 3)
  # the help page says so
  rd <- tools::Rd_db("missingkernels")[["mk_svm-methods.Rd"]]
  text <- paste(utils::capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))),
    collapse = " "
  )
  text <- gsub("\\s+", " ", text)
  expect_match(text, "in the environment .?update\\(\\).? is called from")
  expect_no_match(text, "where they were found at fitting time", fixed = TRUE)
})
