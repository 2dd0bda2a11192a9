"""
A plugin with a new base kernel
===============================

A *base kernel* is a classical kernel on complete rows. Subclass
:class:`~missingkernels.kernels.BaseKernel`, turn it into an expected kernel
with :func:`~missingkernels.kernels.make_expected_kernel`, and register it
under a name with a plugin: every estimator can then use it by that name,
with every density. Without a closed form for its expectation the kernel
averages over draws from the conditionals.

An installed package registers its plugin through the entry-point group
``missingkernels`` instead of :func:`~missingkernels.register_plugin`::

    [project.entry-points.missingkernels]
    my_plugin = "my_package.plugin"
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import missingkernels
from missingkernels import MissingKernelSVC
from missingkernels.hookspecs import hookimpl
from missingkernels.kernels import BaseKernel, make_expected_kernel


class Laplacian(BaseKernel):
    """The Laplacian kernel exp(-gamma ||x - y||_1)."""

    def __init__(self, gamma=1.0):
        self.gamma = gamma

    def pairwise(self, A, B):
        return np.exp(-self.gamma * np.abs(A[:, None, :] - B[None, :, :]).sum(-1))


ExpectedLaplacianKernel = make_expected_kernel(
    Laplacian,
    "ExpectedLaplacianKernel",
    n_draws=20,
    doc="Expected Laplacian kernel over the missing entries (by draws).",
)


class LaplacianPlugin:
    @hookimpl
    def missingkernels_register_kernels(self):
        return {"expected_laplacian": ExpectedLaplacianKernel}


missingkernels.register_plugin(LaplacianPlugin(), name="laplacian-example")
print(missingkernels.list_kernels()["expected_laplacian"].description)

# %%
# Use it by name, like the built-in kernels.
X, y = load_breast_cancer(return_X_y=True)
X, y = X[:200, :6], y[:200]
rng = np.random.default_rng(0)
X[rng.random(X.shape) < 0.2] = np.nan

for kernel in ("expected_laplacian", "genrbf"):
    model = make_pipeline(
        StandardScaler(), MissingKernelSVC(kernel=kernel, gamma=0.2, C=4.0)
    )
    scores = cross_val_score(model, X, y, cv=3)
    print(f"{kernel:20s} 3-fold accuracy {scores.mean():.3f}")

# %%
# The two kernels between the first 40 rows.
fig, axes = plt.subplots(1, 2, figsize=(8, 4))
X_std = StandardScaler().fit_transform(X)
for ax, kernel in zip(axes, ("expected_laplacian", "genrbf"), strict=True):
    k = missingkernels.get_kernel(kernel, gamma=0.2).fit(X_std)
    ax.imshow(k(X_std[:40]), vmin=0, vmax=1, cmap="magma")
    ax.set_title(kernel)
    ax.set_axis_off()
plt.show()

missingkernels.unregister_plugin("laplacian-example")
