"""A kernel may be named like a C library function: a kernel named `erf`
computing a float64 erf once called itself for it, `malloc` and `free`
failed to compile (their temporaries called the kernel), and
`omp_get_thread_num` recursed into a segmentation fault. Kernel functions
now take symbols no library defines (`kernel.<name>`,
pk-rename-kernel-functions) and keep their C interfaces' names; names no
Python `def` can have (dots, set through `__name__`) work too."""

import math

import numpy as np
import pytest

import picokernel


def normalize(x_ref, o_ref):  # a temporary (the sum) and OpenMP at this size
    v = x_ref[...]
    o_ref[...] = v / v.sum()


def erf64(x_ref, o_ref):  # libm's erf
    o_ref[...] = picokernel.erf(x_ref[...])


def tanh_and_log1p(x_ref, o_ref):  # libmvec's tanh, log and exp
    v = x_ref[...]
    o_ref[...] = picokernel.tanh(v) + picokernel.log1p(v * v)


def named(body, name):
    def kernel(x_ref, o_ref):
        body(x_ref, o_ref)
    kernel.__name__ = kernel.__qualname__ = name
    return picokernel.kernel(kernel)


@pytest.mark.parametrize("name", ["erf", "tanh", "log1p", "malloc", "free", "memcpy",
                                  "abort", "omp_get_thread_num", "omp_get_num_threads",
                                  "aligned_alloc", "exit", "main", "llvm", "kernel",
                                  "_mlir_ciface_x", "__kmpc_fork_call", "ñame",
                                  "a.kernel", "kernel.a"])
@pytest.mark.parametrize("body", [normalize, erf64, tanh_and_log1p])
def test_kernels_named_like_library_functions(name, body):
    x = np.linspace(0.25, 3.0, 300_000)
    o = np.empty_like(x)
    kernel = named(body, name)
    kernel(x, o)
    if body is normalize:
        want = x / x.sum()
    elif body is erf64:
        want = np.array([math.erf(v) for v in x])
    else:
        want = np.tanh(x) + np.log1p(x * x)
    np.testing.assert_allclose(o, want, rtol=1e-14, atol=0)
    assert kernel.name == name
    if name.isidentifier() and name.isascii():  # LLVM IR quotes the others
        assert f"@_mlir_ciface_{name}(" in kernel.lower(x, o, stage="llvmir")
