"""Issue 20, item 11: no warnings at interpreter exit. A process that
defines, calls and drops kernels (in reference cycles, closures, failed
calls, next to numba and jax where installed) exits with an empty stderr:
nanobind reports instances or functions leaked at exit there."""

import importlib.util
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

interpreted = picokernel.kernel(lambda x, o: None, backend="numpy")
interpreted(np.ones(2), np.zeros(2))
module_level.show_ir(); module_level.lower(stage="linalg")
''' + ("""
import numba
numba.njit(lambda x: x * 2)(np.ones(3))
""" if importlib.util.find_spec("numba") else "") + ("""
import jax, jax.numpy as jnp
jax.jit(lambda x: x * 2)(jnp.ones(3))
""" if importlib.util.find_spec("jax") else "")


def test_defining_calling_and_dropping_kernels_exits_cleanly():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
