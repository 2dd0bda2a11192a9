# mk_kernel_matrix against the kernel computed entirely in Python.

py_reference <- function() {
  reticulate::py_run_string("
import numpy as np
import missingkernels as mk
rng = np.random.default_rng(11)
X = rng.normal(size=(40, 4)) @ np.array([[1, .5, 0, 0], [0, 1, .3, 0], [0, 0, 1, .2], [0, 0, 0, 1.]])
X[rng.random(X.shape) < 0.25] = np.nan
X[3] = np.nan
Y = rng.normal(size=(7, 4))
Y[rng.random(Y.shape) < 0.3] = np.nan
Xi = np.round(3 * X)
k = mk.get_kernel('genrbf', gamma=0.3).fit(X)
K_XX = k(X)
K_XY = k(X, Y)
K_exp = mk.get_kernel('expected_rbf', gamma=0.2, metric='mahalanobis').fit(X)(X, Y)
K_int = mk.get_kernel('genrbf', gamma=0.3).fit(Xi)(Xi)
", convert = TRUE)
}

# An R matrix with R's NA (not the NaN that comes back from Python).
with_r_na <- function(m) {
  m[is.nan(m)] <- NA_real_
  m
}

test_that("the kernel matrix equals the Python one to 1e-12", {
  skip_if_no_python()
  py <- py_reference()
  X <- with_r_na(py$X)
  Y <- with_r_na(py$Y)
  expect_true(anyNA(X) && !any(is.nan(X)))
  K <- mk_kernel_matrix(X, gamma = 0.3)
  expect_identical(dim(K), c(40L, 40L))
  expect_lte(max(abs(K - py$K_XX)), 1e-12)
  K_XY <- mk_kernel_matrix(X, Y, gamma = 0.3)
  expect_identical(dim(K_XY), c(40L, 7L))
  expect_lte(max(abs(K_XY - py$K_XY)), 1e-12)
  K_exp <- mk_kernel_matrix(X, Y,
    kernel = "expected_rbf", density = "gaussian_em",
    gamma = 0.2, metric = "mahalanobis"
  )
  expect_lte(max(abs(K_exp - py$K_exp)), 1e-12)
  # integer input with NA_integer_: converted to double, NA -> NaN
  Xi <- with_r_na(py$Xi)
  storage.mode(Xi) <- "integer"
  expect_lte(max(abs(mk_kernel_matrix(Xi, gamma = 0.3) - py$K_int)), 1e-12)
})

test_that("on complete rows genRBF is the RBF kernel (closed form in R)", {
  skip_if_no_python()
  set.seed(3)
  x <- matrix(rnorm(30), 10, 3, dimnames = list(letters[1:10], NULL))
  K <- mk_kernel_matrix(x, gamma = 0.7)
  expect_equal(K, exp(-0.7 * as.matrix(dist(x))^2), tolerance = 1e-12)
  expect_identical(dimnames(K), list(letters[1:10], letters[1:10]))
})

test_that("data frames with factors: nominal columns, the mixed kernel on codes", {
  skip_if_no_python()
  df <- data.frame(
    a = c(0.5, NA, 1.7, -0.3, 2.2, 0.1),
    f = factor(c("x", "y", NA, "z", "y", "x"))
  )
  # the same table as a numeric array whose column 1 (0-based) is declared
  # nominal on the Python side: its codes are the categories
  codes <- cbind(a = df$a, f = as.integer(df$f) - 1)
  ref <- py_mk()$get_kernel("mixed_rbf", gamma = 0.5, nominal_features = list(1L))
  ref$fit(py_array(codes))
  expect_equal(
    unname(mk_kernel_matrix(df, gamma = 0.5)),
    ref$`__call__`(py_array(codes)),
    tolerance = 1e-12
  )
  expect_error(mk_kernel_matrix(df, kernel = "no_such_kernel"), "no_such_kernel")
  expect_error(
    mk_kernel_matrix(df, density_params = list(max_iter = 10)),
    "needs `density` to be a registry name"
  )
})
