"""A density given by name whose fits are random is not cached either."""

from __future__ import annotations

import numpy as np
import pytest

import missingkernels
from missingkernels import MissingKernelSVC, get_kernel
from missingkernels._fit_cache import clear_fit_cache, fit_cache_info


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_fit_cache()
    yield
    clear_fit_cache()


def _rows(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    X[:, 1] += X[:, 0]
    y = (X[:, 0] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    return X, y


def _two_grams(**params):
    X, y = _rows()
    fits = [MissingKernelSVC(gamma=0.5, **params).fit(X, y) for _ in range(2)]
    # The kernel on the training rows as the SVM saw them (standardised).
    return [f.kernel_((X - f.x_center_) / f.x_scale_) for f in fits]


@pytest.mark.parametrize("density", ["iterative", "gaussian_mixture"])
def test_a_random_density_by_name_is_refitted_with_or_without_the_cache(density):
    """random_state=None: two fits draw anew (the densities' defaults are
    None), with the cache as without it: the kernel's key holds the density
    the name builds, not the name."""
    with missingkernels.config_context(fit_cache_memory=0):
        off = _two_grams(density=density)
    on = _two_grams(density=density)
    assert np.abs(off[0] - off[1]).max() > 0  # the reference: fits differ
    assert np.abs(on[0] - on[1]).max() > 0
    assert fit_cache_info()["hits"] == 0
    seeded = _two_grams(density=density, random_state=0)
    np.testing.assert_array_equal(seeded[0], seeded[1])
    assert fit_cache_info()["hits"] > 0


def test_a_deterministic_density_by_name_is_still_cached():
    X, _ = _rows()
    for name in ["gaussian_em", "latent_class"]:
        clear_fit_cache()
        kernel = "genrbf" if name == "gaussian_em" else "mixed_rbf"
        params = {} if name == "gaussian_em" else {"nominal_features": [2]}
        Xk = X if name == "gaussian_em" else np.where(np.isnan(X), X, np.round(X))
        for _ in range(2):
            get_kernel(kernel, density=name, gamma=0.5, **params).fit(Xk)
        info = fit_cache_info()
        assert info["uncacheable"] == 0 and info["hits"] >= 1, (name, info)


def test_a_gram_larger_than_the_cache_is_not_even_pickled(monkeypatch):
    """A training Gram above fit_cache_memory is not copied into a pickle
    only to be dropped (a transient copy of the whole Gram)."""
    import pickle

    from missingkernels import _fit_cache

    sizes = []
    real = pickle.dumps

    def recording(obj, *args, **kwargs):  # type: ignore[no-untyped-def]
        blob = real(obj, *args, **kwargs)
        sizes.append(len(blob))
        return blob

    monkeypatch.setattr(_fit_cache.pickle, "dumps", recording)
    X, y = _rows()
    gram_bytes = 60 * 60 * 8
    with missingkernels.config_context(fit_cache_memory=gram_bytes - 1):
        MissingKernelSVC(gamma=0.5).fit(X, y)
    # The density (small) is pickled and kept; the kernel with its Gram not.
    assert sizes and max(sizes) < gram_bytes
    assert fit_cache_info()["entries"] == 1
