import os

import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)

# Tests compile for real: no disk cache (Runtime/DiskCache.h) unless a test
# asks for one (test_disk_cache.py runs its own processes).
os.environ.setdefault("PK_CACHE", "0")


# Lines tests want shown after the run (the random-kernel agreement).
_reports = []


def report(line):
    _reports.append(line)


def pytest_terminal_summary(terminalreporter):
    for line in _reports:
        terminalreporter.write_line(line)
