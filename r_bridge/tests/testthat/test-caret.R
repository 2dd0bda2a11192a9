# Issue 34: mk_svm as a caret model: train(method = mk_caret_model(),
# preProcess = NULL, na.action = na.pass) keeps the rows with missing
# predictors.

test_that("the custom model list has what caret asks for", {
  m <- mk_caret_model()
  expect_true(all(c("label", "library", "type", "parameters", "grid", "fit", "predict",
    "prob", "sort", "levels", "loop") %in% names(m)))
  expect_identical(m$parameters$parameter, c("C", "gamma"))
  g <- m$grid(matrix(0, 5, 4), factor(1:5), len = 3)
  expect_identical(g$C, c(0.25, 0.5, 1)) # caret's svmRadial grid of C
  expect_identical(g$gamma, rep(0.25, 3)) # "scale" on standardised columns
  expect_error(mk_caret_model(C = 2), "set by caret")
  expect_error(mk_caret_model(cost = 2), "`C` here")
})

test_that("caret::train on PimaIndiansDiabetes2 with na.pass completes and predicts every row", {
  if (!nzchar(Sys.getenv("TZ"))) { # caret's dependencies ask timedatectl otherwise
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"), add = TRUE)
  }
  skip_if_no_python()
  skip_if_not_installed("caret")
  skip_if_not_installed("mlbench")
  data("PimaIndiansDiabetes2", package = "mlbench", envir = environment())
  set.seed(7)
  pima <- PimaIndiansDiabetes2[sample(nrow(PimaIndiansDiabetes2), 160), ]
  expect_gt(sum(!complete.cases(pima)), 50) # insulin, triceps: many NA
  ctrl <- caret::trainControl(method = "cv", number = 2, classProbs = TRUE)
  fit <- caret::train(diabetes ~ ., data = pima, method = mk_caret_model(),
    preProcess = NULL, na.action = na.pass, tuneLength = 2, trControl = ctrl
  )
  expect_s3_class(fit, "train")
  expect_identical(nrow(fit$results), 2L)
  expect_false(anyNA(fit$results$Accuracy)) # no resample failed
  expect_s3_class(fit$finalModel, "mk_svm")
  expect_identical(nobs(fit$finalModel), 160L)
  pred <- predict(fit, newdata = pima, na.action = na.pass)
  expect_length(pred, 160L)
  expect_false(anyNA(pred))
  prob <- predict(fit, newdata = pima, type = "prob", na.action = na.pass)
  expect_identical(names(prob), c("neg", "pos"))
  expect_equal(rowSums(prob), rep(1, 160), tolerance = 1e-12, ignore_attr = TRUE)
  # the x/y interface keeps the data frame (and its factors) as it is
  fit_xy <- caret::train(pima[names(pima) != "diabetes"], pima$diabetes,
    method = mk_caret_model(), preProcess = NULL,
    tuneGrid = data.frame(C = 1, gamma = 0.125),
    trControl = caret::trainControl(method = "none")
  )
  expect_identical(fit_xy$finalModel$C, 1)
  expect_length(predict(fit_xy, newdata = pima[1:7, names(pima) != "diabetes"]), 7L)
})

test_that("set.seed() before caret::train reproduces a fit whose density draws (issue 48)", {
  if (!nzchar(Sys.getenv("TZ"))) {
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"), add = TRUE)
  }
  skip_if_no_python()
  skip_if_not_installed("caret")
  set.seed(3)
  x <- data.frame(a = rnorm(40), b = rnorm(40))
  y <- factor(ifelse(x$a + x$b > 0, "yes", "no"))
  x$a[sample(40, 12)] <- NA
  model <- mk_caret_model(density = "iterative", density_params = list(n_draws = 3, max_iter = 2))
  train_with <- function(seed) {
    set.seed(seed)
    fit <- caret::train(x, y, method = model, preProcess = NULL,
      tuneGrid = data.frame(C = 1, gamma = 0.5),
      trControl = caret::trainControl(method = "none")
    )
    predict(fit$finalModel, x, type = "decision")
  }
  first <- train_with(21)
  expect_identical(train_with(21), first)
  expect_gt(max(abs(train_with(22) - first)), 1e-6)
})

test_that("caret's predict() drops incomplete rows without na.pass: the help and the vignette say so (issue 48)", {
  # the help page, where caret users look: the text and the example
  rd <- tools::Rd_db("missingkernels")[["mk_caret_model.Rd"]]
  text <- gsub("\\s+", " ", paste(
    utils::capture.output(tools::Rd2txt(rd, options = list(underline_titles = FALSE))),
    collapse = " "
  ))
  expect_match(text, "drops every incomplete row", fixed = TRUE)
  expect_match(text, "predict(fit, newdata, na.action = na.pass)", fixed = TRUE)
  example <- paste(utils::capture.output(tools::Rd2ex(rd)), collapse = "\n")
  expect_match(example, "length(predict(fit, newdata = pima, na.action = na.pass))", fixed = TRUE)
  # the R vignette (its source is beside the tests in the repository; the
  # installed package keeps it in doc/ when the vignette was built)
  sources <- c(
    file.path(getwd(), "..", "..", "vignettes", "missingkernels.Rmd"),
    system.file("doc", "missingkernels.Rmd", package = "missingkernels")
  )
  sources <- sources[nzchar(sources) & file.exists(sources)]
  skip_if(!length(sources), "the vignette's source is not available")
  vignette <- gsub("\\s+", " ", paste(readLines(sources[1], encoding = "UTF-8"), collapse = " "))
  expect_match(vignette, "Predict with `na.action = na.pass` as well", fixed = TRUE)
  expect_match(vignette, "drops the incomplete rows of `newdata`", fixed = TRUE)
})

test_that("what the help says of caret's predict() is what caret does", {
  if (!nzchar(Sys.getenv("TZ"))) {
    Sys.setenv(TZ = "UTC")
    on.exit(Sys.unsetenv("TZ"), add = TRUE)
  }
  skip_if_no_python()
  skip_if_not_installed("caret")
  aq <- airquality
  fit <- caret::train(Ozone ~ Solar.R + Wind + Temp, data = aq[!is.na(aq$Ozone), ],
    method = mk_caret_model(), preProcess = NULL, na.action = na.pass,
    tuneGrid = data.frame(C = 1, gamma = 0.3), trControl = caret::trainControl(method = "none")
  )
  complete <- complete.cases(aq[c("Solar.R", "Wind", "Temp")])
  expect_identical(sum(complete), 146L)
  dropped <- predict(fit, newdata = aq)
  expect_length(dropped, 146L) # caret's default na.action = na.omit
  all_rows <- predict(fit, newdata = aq, na.action = na.pass)
  expect_length(all_rows, 153L)
  expect_equal(unname(all_rows[complete]), unname(dropped))
  expect_equal(unname(all_rows), unname(predict(fit$finalModel, aq)))
  # train(x, y) predicts every row either way
  xy <- caret::train(aq[!is.na(aq$Ozone), c("Solar.R", "Wind", "Temp")], aq$Ozone[!is.na(aq$Ozone)],
    method = mk_caret_model(), preProcess = NULL,
    tuneGrid = data.frame(C = 1, gamma = 0.3), trControl = caret::trainControl(method = "none")
  )
  expect_length(predict(xy, newdata = aq[c("Solar.R", "Wind", "Temp")]), 153L)
})
