# Ordered factors as predictors (issue 48, item 5): repeated K-fold
# cross-validation of four treatments on tables with ordered predictors.
#
#   R_LIBS=<library with missingkernels> RETICULATE_PYTHON=<python> \
#     Rscript r_bridge/tools/ordered-factors-bench.R <table> [repeats] [folds] [out.csv] [methods]
#
# [methods]: a comma-separated subset of the methods below (default: all).
#
# <table>: boys (mice; hgt ~ age + gen + phb + tv + reg, regression, RMSE),
# cleveland (shared data; disease yes/no, slope and ca ordered, accuracy),
# mammographic (shared data; severity, bi_rads and density ordered,
# accuracy). Methods, all on the same folds (seed 1000 + repeat):
#   before  - ordered factors as unscaled level ranks 0..L-1, every other
#             numeric column (and a numeric response) standardised: what
#             mk_svm(scale = TRUE) did before this change, reproduced with
#             scale = FALSE on columns standardised here;
#   after   - mk_svm(scale = TRUE, ordered = "ranks"): the ranks standardised
#             like a numeric column (the default of commit 2476a18, where
#             this column was first measured);
#   default - mk_svm() with its defaults, the ordered factors as they are
#             (since ordered = "nominal" became the default: nominal
#             columns, so it should equal `nominal`);
#   nominal - mk_svm(scale = TRUE) with the ordered factors as plain factors;
#   dropped - mk_svm(scale = TRUE) without the ordered predictors (a
#             reference: what they add under the two mk_svm treatments);
#   impute  - mean (numeric) / mode (factor) imputation of the training
#             rows' statistics, then e1071::svm (defaults: radial,
#             scale = TRUE; ordered factors enter through R's default
#             polynomial contrasts).
# mk_svm runs with its defaults and random_state = 1.
args <- commandArgs(trailingOnly = TRUE)
table <- args[1]
repeats <- if (length(args) >= 2) as.integer(args[2]) else 5L
folds <- if (length(args) >= 3) as.integer(args[3]) else 5L
out_csv <- if (length(args) >= 4 && nzchar(args[4])) args[4] else NA_character_
all_methods <- c("before", "after", "default", "nominal", "dropped", "impute")
methods <- if (length(args) >= 5) strsplit(args[5], ",", fixed = TRUE)[[1]] else all_methods
if (!length(methods) || !all(methods %in% all_methods)) {
  stop("methods must be a comma-separated subset of ", paste(all_methods, collapse = ", "))
}
data_dir <- Sys.getenv("MK_SHARED_DATA", "/work/shared/data")
suppressPackageStartupMessages(library(missingkernels))

load_table <- function(name) {
  if (name == "boys") {
    e <- new.env()
    utils::data("boys", package = "mice", envir = e)
    d <- e$boys[!is.na(e$boys$hgt), c("hgt", "age", "gen", "phb", "tv", "reg")]
    d$tv <- as.double(d$tv)
    return(list(data = d, response = "hgt", ordered = c("gen", "phb")))
  }
  if (name == "cleveland") {
    d <- utils::read.csv(file.path(data_dir, "cleveland_heart_disease.csv"))
    d$target <- factor(ifelse(d$target > 0, "disease", "none"))
    for (v in c("cp", "restecg", "thal")) d[[v]] <- factor(d[[v]])
    d$slope <- factor(d$slope, levels = 1:3, labels = c("up", "flat", "down"), ordered = TRUE)
    d$ca <- factor(d$ca, levels = 0:3, ordered = TRUE)
    for (v in c("age", "sex", "trestbps", "chol", "fbs", "thalach", "exang", "oldpeak")) {
      d[[v]] <- as.double(d[[v]])
    }
    return(list(data = d, response = "target", ordered = c("slope", "ca")))
  }
  if (name == "mammographic") {
    d <- utils::read.csv(file.path(data_dir, "mammographic_masses.csv"))
    d$target <- factor(ifelse(d$target == 1, "malignant", "benign"))
    d$bi_rads[d$bi_rads > 6] <- NA # one entry is 55, outside the BI-RADS scale 0-6
    d$bi_rads <- factor(d$bi_rads, levels = 0:6, ordered = TRUE)
    d$density <- factor(d$density, levels = 1:4, ordered = TRUE)
    d$shape <- factor(d$shape)
    d$margin <- factor(d$margin)
    d$age <- as.double(d$age)
    return(list(data = d, response = "target", ordered = c("bi_rads", "density")))
  }
  stop("unknown table ", name)
}

standardise_numeric <- function(train, test, skip) {
  for (v in names(train)) {
    if (v %in% skip || !is.double(train[[v]])) next
    m <- mean(train[[v]], na.rm = TRUE)
    s <- stats::sd(train[[v]], na.rm = TRUE)
    if (!is.finite(s) || s <= 0) s <- 1
    train[[v]] <- (train[[v]] - m) / s
    test[[v]] <- (test[[v]] - m) / s
  }
  list(train = train, test = test)
}

mode_of <- function(x) {
  tab <- table(x)
  names(tab)[which.max(tab)]
}

fit_predict <- function(method, train, test, response, ordered) {
  f <- stats::as.formula(paste(response, "~ ."))
  classification <- is.factor(train[[response]])
  if (method == "before") {
    for (v in ordered) {
      train[[v]] <- as.double(as.integer(train[[v]]) - 1L)
      test[[v]] <- as.double(as.integer(test[[v]]) - 1L)
    }
    s <- standardise_numeric(train, test, skip = c(response, ordered))
    train <- s$train
    test <- s$test
    if (!classification) {
      m <- mean(train[[response]])
      sdev <- stats::sd(train[[response]])
      train[[response]] <- (train[[response]] - m) / sdev
    }
    fit <- mk_svm(f, train, scale = FALSE, random_state = 1)
    pred <- predict(fit, test)
    if (!classification) pred <- pred * sdev + m
    return(pred)
  }
  if (method == "nominal") {
    for (v in ordered) {
      train[[v]] <- factor(train[[v]], ordered = FALSE)
      test[[v]] <- factor(test[[v]], levels = levels(train[[v]]))
    }
  }
  if (method == "dropped") {
    keep <- setdiff(names(train), ordered)
    train <- train[keep]
    test <- test[keep]
  }
  if (method == "after") {
    fit <- mk_svm(f, train, random_state = 1, ordered = "ranks")
    return(predict(fit, test))
  }
  if (method %in% c("default", "nominal", "dropped")) {
    fit <- mk_svm(f, train, random_state = 1)
    return(predict(fit, test))
  }
  if (method == "impute") {
    for (v in setdiff(names(train), response)) {
      if (is.factor(train[[v]])) {
        fill <- mode_of(train[[v]])
        train[[v]][is.na(train[[v]])] <- fill
        test[[v]][is.na(test[[v]])] <- fill
      } else {
        fill <- mean(train[[v]], na.rm = TRUE)
        train[[v]][is.na(train[[v]])] <- fill
        test[[v]][is.na(test[[v]])] <- fill
      }
    }
    fit <- e1071::svm(f, train)
    return(predict(fit, test))
  }
  stop("unknown method ", method)
}

tab <- load_table(table)
d <- tab$data
rows <- list()
t_start <- Sys.time()
for (r in seq_len(repeats)) {
  set.seed(1000 + r)
  fold <- sample(rep(seq_len(folds), length.out = nrow(d)))
  for (k in seq_len(folds)) {
    train <- d[fold != k, ]
    test <- d[fold == k, ]
    truth <- test[[tab$response]]
    for (m in methods) {
      t0 <- Sys.time()
      pred <- suppressWarnings(fit_predict(m, train, test, tab$response, tab$ordered))
      secs <- as.double(difftime(Sys.time(), t0, units = "secs"))
      score <- if (is.factor(truth)) {
        mean(as.character(pred) == as.character(truth))
      } else {
        sqrt(mean((pred - truth)^2))
      }
      rows[[length(rows) + 1L]] <- data.frame(
        table = table, repeat_ = r, fold = k, method = m, score = score, seconds = secs
      )
    }
  }
  cat(sprintf("%s: repeat %d done (%.0f s)\n", table, r,
    as.double(difftime(Sys.time(), t_start, units = "secs"))))
}
res <- do.call(rbind, rows)
if (!is.na(out_csv)) utils::write.csv(res, out_csv, row.names = FALSE)
metric <- if (is.factor(d[[tab$response]])) "accuracy" else "RMSE"
cv_means <- stats::aggregate(score ~ method + repeat_, res, mean)
summ <- do.call(rbind, lapply(methods, function(m) {
  s <- cv_means$score[cv_means$method == m]
  data.frame(
    table = table, metric = metric, method = m, mean = mean(s),
    sd_over_repeats = if (length(s) > 1) stats::sd(s) else NA_real_,
    seconds = sum(res$seconds[res$method == m])
  )
}))
print(summ, digits = 4, row.names = FALSE)
cat(sprintf("total %.0f s\n", as.double(difftime(Sys.time(), t_start, units = "secs"))))
