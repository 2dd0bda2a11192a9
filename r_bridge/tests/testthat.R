library(testthat)
library(missingkernels)

test_check("missingkernels")
