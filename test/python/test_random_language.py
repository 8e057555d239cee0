"""The differential test over the whole language (random_language.py): at
least 2,000 random kernels on the CPU and 300 on Vulkan in every run, and
each backend again compiling for dynamic sizes, each against NumPy, each in
a worker process (a crash or a hang is a finding about one seed). Every
kernel must agree with NumPy or hit a documented limit; the agreement is
reported at the end of the pytest run.

    PK_RANDOM_KERNELS_CPU=20000 PK_RANDOM_SEED=5 pytest test_random_language.py
    python3 random_language.py --seed 1234          # replay a failing seed
"""

import os
import time

import pytest

import picokernel
import random_language

from conftest import report

KERNELS = {"cpu": int(os.environ.get("PK_RANDOM_KERNELS_CPU", 2000)),
           # The CPU again, each kernel compiled for dynamic sizes where it
           # can be (dynamic=True).
           "cpu-dynamic": int(os.environ.get("PK_RANDOM_KERNELS_CPU_DYNAMIC", 1000)),
           "vulkan": int(os.environ.get("PK_RANDOM_KERNELS_VULKAN", 300)),
           "vulkan-dynamic": int(os.environ.get("PK_RANDOM_KERNELS_VULKAN_DYNAMIC", 300))}
FIRST_SEED = int(os.environ.get("PK_RANDOM_SEED", 0))
# A bound on the run (sanitizer builds are several times slower); a run cut
# short by it fails, naming how far it got.
SECONDS = float(os.environ.get("PK_RANDOM_SECONDS", 1800))


@pytest.mark.parametrize("backend", ["cpu", "cpu-dynamic", "vulkan", "vulkan-dynamic"])
def test_random_kernels_agree_with_numpy(backend):
    if backend.startswith("vulkan") and not picokernel.vulkan_available()[0]:
        pytest.skip("no Vulkan device")
    count = KERNELS[backend]
    seeds = range(FIRST_SEED, FIRST_SEED + count)
    start = time.monotonic()
    counts, failures = random_language.run(seeds, backend,
                                           deadline=start + SECONDS)
    seconds = time.monotonic() - start
    checked = sum(counts.values())
    report(random_language.report(backend, counts, failures, seconds) +
           f" (seeds {FIRST_SEED}..{FIRST_SEED + checked - 1})")
    replay = "\n".join(f"replay: python3 {random_language.__file__} "
                        f"--backend {backend} --seed {failure.split()[1].rstrip(':')}"
                        for failure in failures[:20])
    assert not failures, "\n\n".join(failures[:10]) + "\n" + replay
    assert checked == count, (f"only {checked} of {count} kernels checked in "
                              f"{SECONDS:.0f} s (PK_RANDOM_SECONDS)")
