"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(
    os.environ.get("MISSINGKERNELS_DATA_DIR", REPO_ROOT.parent / "shared" / "data")
)


@pytest.fixture(scope="session")
def shared_data_dir() -> Path:
    """The directory of the shared real datasets (CSV, last column ``target``)."""
    if not (SHARED_DATA / "manifest.json").exists():
        pytest.skip(
            f"shared datasets not found at {SHARED_DATA}; set MISSINGKERNELS_DATA_DIR"
        )
    return SHARED_DATA


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
