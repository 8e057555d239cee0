"""Issue 20, item 11: no warnings at interpreter exit. A process that
defines, calls and drops kernels (in reference cycles, closures, failed
calls, next to numba and jax where installed) exits with an empty stderr:
nanobind reports instances or functions leaked at exit there."""

import importlib.util
import os
import subprocess
import sys

SCRIPT = '''
import numpy as np, picokernel

@picokernel.kernel
def module_level(x, o):
    o[...] = x[...] * 2 + np.sin(x[...])   # reads np through its globals

module_level(np.ones(3), np.zeros(3))

def make(scale):
    @picokernel.kernel(dynamic=True)
    def closure(x, o):
        o[...] = x[...] * scale
    closure(np.ones(4), np.zeros(4))
    return closure

kept = [make(s) for s in (1.0, 2.0)]
make(3.0)                                   # dropped at once

class Holder:
    pass

holder = Holder()
holder.kernel, holder.self = make(4.0), holder   # a cycle through a kernel

@picokernel.kernel
def broken(x, o):
    o[...] = x[...] @ x[...]

try:
    broken(np.ones((2, 3)), np.zeros((2, 3)))
except ValueError as error:
    saved = error                           # its traceback holds frames

interpreted = picokernel.kernel(lambda x, o: o.__setitem__(..., x[...]),
                                backend="numpy")
interpreted(np.ones(2), np.zeros(2))
module_level.show_ir(); module_level.lower(stage="linalg")
''' + ("""
import numba
numba.njit(lambda x: x * 2)(np.ones(3))
""" if importlib.util.find_spec("numba") else "") + ("""
import jax, jax.numpy as jnp
jax.jit(lambda x: x * 2)(jnp.ones(3))
""" if importlib.util.find_spec("jax") else "")


def run(script, **env):
    return subprocess.run([sys.executable, "-c", script], capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, **env))


def test_defining_calling_and_dropping_kernels_exits_cleanly():
    # PK_LEAK_WARNINGS=1: nanobind's report of instances left at exit, which
    # a reference cycle the collector cannot see would leave.
    done = run(SCRIPT, PK_LEAK_WARNINGS="1")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr


DAEMONS = """
import threading, time, numpy as np, picokernel
@picokernel.kernel
def k(x, o):
    o[...] = x[...] * 2
x = np.ones(1 << 20); o = np.empty_like(x)   # large: calls release the GIL
def compile_forever():
    n = 1
    while True:
        n += 1
        picokernel.kernel(lambda a, b: b.__setitem__(Ellipsis, a[...] + n))(
            np.ones(n), np.empty(n))
threading.Thread(target=lambda: [k(x, o) for _ in iter(int, 1)], daemon=True).start()
threading.Thread(target=compile_forever, daemon=True).start()
threading.Thread(target=lambda k=k: time.sleep(100), daemon=True).start()
time.sleep(0.5)
"""


def test_daemon_threads_in_kernels_at_exit():
    # Python ends daemon threads waiting for the GIL inside a call: that
    # unwinding passes through picokernel, and kernels they hold are not
    # reported as leaks.
    for attempt in range(3):
        done = run(DAEMONS)
        assert done.returncode == 0, done.stderr
        assert done.stderr == "", done.stderr
