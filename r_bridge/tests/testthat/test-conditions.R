# Python's warnings and errors in R's terms (issue 19): a Python warning is an
# R warning (not text on stderr), and messages name the R column, or count
# positions from 1; never a 0-based index.

test_that("positions from Python become R column names or 1-based positions", {
  name_columns <- missingkernels:::.mk_name_columns
  expect_identical(
    name_columns("X: column 1 (0-based) has the value 2.5 in row 0 (0-based).", c("a", "b")),
    "X: column 'b' has the value 2.5 in row 1."
  )
  expect_identical(
    name_columns("columns 0, 2 and 3 more (0-based) and column 4 (0-based)", letters[1:3]),
    "columns 'a', 'c' and 3 more and column 5"
  )
  expect_identical(name_columns("column 2 (0-based)", NULL), "column 3")
  expect_identical(name_columns("rows 10 (0-based)"), "rows 11")
  expect_identical(name_columns("a column 2 here"), "a column 2 here")
})

constant_column_data <- function() {
  set.seed(3)
  x <- data.frame(age = rnorm(40), dose = 2, weight = rnorm(40))
  x$age[sample(40, 8)] <- NA
  x$dose[sample(40, 8)] <- NA
  list(x = x, y = factor(rep(c("lo", "hi"), 20)))
}

test_that("Python warnings are R warnings that name the R column", {
  skip_if_no_python()
  d <- constant_column_data()
  seen <- list()
  stderr <- utils::capture.output(
    fit <- withCallingHandlers(mk_svm(d$x, d$y),
      warning = function(w) {
        seen[[length(seen) + 1L]] <<- w
        invokeRestart("muffleWarning")
      }
    ),
    type = "message"
  )
  expect_s3_class(fit, "mk_svm")
  messages <- vapply(seen, conditionMessage, "")
  expect_true(any(grepl("^SingularCovarianceWarning: .*column 'dose'", messages)), info = messages)
  expect_false(any(grepl("0-based", messages)))
  expect_true(all(vapply(seen, inherits, TRUE, "missingkernels_python_warning")))
  expect_true(any(vapply(seen, inherits, TRUE, "missingkernels_SingularCovarianceWarning")))
  # recorded, not printed by Python
  expect_false(any(grepl("Warning", stderr)), info = stderr)

  # Rows in another order are a new fit (no copy from Python's fit cache,
  # whose copies repeat their fit's warnings anyway).
  again <- c(2:40, 1)
  expect_warning(mk_svm(d$x[again, ], d$y[again]),
    class = "missingkernels_SingularCovarianceWarning"
  )
  once_more <- c(3:40, 1:2)
  raised <- 0L # inside suppressWarnings()
  escaped <- 0L # outside it
  quiet <- utils::capture.output(
    {
      withCallingHandlers(
        suppressWarnings(withCallingHandlers(
          mk_svm(d$x[once_more, ], d$y[once_more]),
          missingkernels_python_warning = function(w) raised <<- raised + 1L
        )),
        warning = function(w) escaped <<- escaped + 1L
      )
      invisible()
    },
    type = "message"
  )
  expect_gt(raised, 0L)
  expect_identical(escaped, 0L)
  expect_identical(quiet, character())
})

test_that("Python errors name the R column and count rows from 1", {
  skip_if_no_python()
  x <- data.frame(a = c(1, 0, 1, 1, 0, 1), b = c(0, 1, 2.5, 0, 1, 1))
  expect_error(
    mk_kernel_matrix(x, kernel = "belanche_k1"),
    "column 'b' has the value 2.5 in row 3\\."
  )
  expect_error(
    mk_kernel_matrix(unname(as.matrix(x)), kernel = "belanche_k1"),
    "column 2 has the value 2.5 in row 3\\."
  )
  # A column no training row observes is dropped, named the R way.
  empty <- data.frame(a = c(0.1, 1.2, -0.3, 0.8), b = NA_real_)
  warned <- NULL
  withCallingHandlers(
    mk_kernel_matrix(empty),
    warning = function(w) {
      warned <<- c(warned, conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  )
  expect_true(any(grepl("dropped column 'b', observed in fewer than 2", warned)))
  expect_false(any(grepl("0-based", warned)))
})

test_that("errors at predict time name the training columns", {
  skip_if_no_python()
  x <- data.frame(a = c(1, 0, 1, 1, 0, 1, 0, 0), b = c(0, 1, 1, 0, 1, 1, 0, 1))
  y <- factor(c("u", "v", "u", "v", "u", "v", "v", "u"))
  fit <- mk_svm(x, y, kernel = "belanche_k1", scale = FALSE)
  new <- data.frame(a = 1, b = 3)
  expect_error(predict(fit, new), "column 'b' has the value 3")
})
