# What R users of e1071 and kernlab write, and the advice Python's messages
# give, in this package's R terms.

# Kernel names of e1071::svm and kernlab::ksvm, and the registry kernels
# they become. Each is expected: on complete rows "genrbf" is the RBF kernel
# exp(-gamma ||x - y||^2) of e1071's "radial", "expected_linear" the linear
# kernel, "expected_polynomial" the polynomial one (its degree and coef0 in
# kernel_params).
.mk_kernel_aliases <- c(
  radial = "genrbf", rbfdot = "genrbf", rbf = "genrbf",
  linear = "expected_linear", vanilladot = "expected_linear",
  polynomial = "expected_polynomial", polydot = "expected_polynomial"
)

# `kernel` with the names of e1071 and kernlab mapped to registry kernels,
# with a message (once per name and session) saying what it became.
.mk_kernel_arg <- function(kernel) {
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel)) {
    stop("`kernel` must be \"auto\" or one registry name, see mk_kernels().", call. = FALSE)
  }
  if (kernel %in% c("sigmoid", "tanhdot")) {
    stop("The sigmoid kernel (e1071's \"sigmoid\", kernlab's \"tanhdot\") has no ",
      "expected version here; use kernel = \"genrbf\" (e1071's \"radial\") or see ",
      "mk_kernels().",
      call. = FALSE
    )
  }
  if (!kernel %in% names(.mk_kernel_aliases)) {
    return(kernel)
  }
  target <- .mk_kernel_aliases[[kernel]]
  noted <- .mk_state$kernel_notes %||% character()
  if (!kernel %in% noted) {
    .mk_state$kernel_notes <- c(noted, kernel)
    message(structure(
      class = c("missingkernels_kernel_note", "message", "condition"),
      list(
        message = paste0(
          "kernel = \"", kernel, "\" (the name of e1071/kernlab) is the expected kernel \"",
          target, "\" here: ", .mk_kernel_alias_note[[target]],
          " (this note is shown once per session)\n"
        ),
        call = NULL
      )
    ))
  }
  target
}

.mk_kernel_alias_note <- c(
  genrbf = paste0(
    "on complete rows the RBF kernel exp(-gamma * |x - y|^2), on rows with ",
    "missing values its normalised expectation under the fitted density ",
    "(Smieja et al. 2019)"
  ),
  expected_linear = "on complete rows the linear kernel, averaged over the missing entries",
  expected_polynomial = paste0(
    "on complete rows the polynomial kernel (degree and coef0 in ",
    "kernel_params = list(degree = 3, coef0 = 0)), averaged over the missing entries"
  )
)

# Python's advice in a message, as an R user acts on it. Each entry: a Perl
# regular expression and its replacement.
.mk_advice_rules <- list(
  c(
    paste0(
      "or one-hot encode them \\(e\\.g\\. sklearn\\.preprocessing\\.OneHotEncoder ",
      "in a Pipeline\\), or declare them numeric with nominal_features=None\\.?"
    ),
    paste0(
      "or give them as numbers: dummy columns with model.matrix(~ f - 1, data), ",
      "or as.numeric() of the factor for its codes (the nominal columns are ",
      "the factor, character and logical predictors; numeric ones are not)."
    )
  ),
  c(
    "encode them as numbers first \\(e\\.g\\. with sklearn\\.preprocessing\\.OneHotEncoder\\)\\.?",
    "give factors as factor columns of a data frame, or as numbers (model.matrix() dummy columns)."
  ),
  c(
    "Set handle_unknown='missing' to treat",
    "Use handle_unknown = \"missing\" in mk_svm() to treat"
  ),
  c("\\(handle_unknown='missing'\\)", "(handle_unknown = \"missing\")"),
  c("nominal_features=None", "numeric (as.numeric()) columns"),
  c("leave density=None", "leave density = NULL"),
  # the memory limit, set from R with mk_config()
  c(
    "missingkernels\\.set_config\\(max_gram_memory=\\.\\.\\.\\)",
    "mk_config(max_gram_memory = ...)"
  ),
  c("set with missingkernels\\.set_config\\b", "set with mk_config()"),
  c("MissingKernelSV[CR]/SVR\\(route='features'\\)", "mk_svm(route = \"features\")"),
  # the remaining Python keyword spellings, name='value' and name=None
  c("\\b([a-z][a-z_]*)='([^']*)'", "\\1 = \"\\2\""),
  c("\\b([a-z][a-z_]*)=None\\b", "\\1 = NULL"),
  c("\\b([a-z][a-z_]*)=True\\b", "\\1 = TRUE"),
  c("\\b([a-z][a-z_]*)=False\\b", "\\1 = FALSE")
)

.mk_r_advice <- function(msg) {
  for (rule in .mk_advice_rules) {
    msg <- gsub(rule[1], rule[2], msg, perl = TRUE)
  }
  msg
}
