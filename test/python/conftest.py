import os

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)

# Tests compile for real: no disk cache (Runtime/DiskCache.h) unless a test
# asks for one (test_disk_cache.py runs its own processes).
os.environ.setdefault("PK_CACHE", "0")
