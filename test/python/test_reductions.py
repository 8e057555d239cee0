"""Reductions with NumPy's axis/keepdims and dtype rules; softmax and
layernorm kernels in one trace each, on every backend."""

import numpy as np
import pytest

import picokernel

BACKENDS = ["cpu"] + (["vulkan"] if picokernel.vulkan_available()[0] else [])


def softmax(x_ref, o_ref):
    x = x_ref[...]
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    o_ref[...] = e / e.sum(axis=-1, keepdims=True)


def layernorm(x_ref, g_ref, b_ref, o_ref):
    x = x_ref[...]
    mu = np.mean(x, axis=-1, keepdims=True)
    var = ((x - mu) ** 2.0).mean(axis=-1, keepdims=True)
    o_ref[...] = (x - mu) / np.sqrt(var + 1e-5) * g_ref[...] + b_ref[...]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-6), (np.float64, 1e-14)])
def test_softmax(backend, dtype, tol):
    kernel = picokernel.kernel(softmax, backend=backend)
    x = np.random.default_rng(0).standard_normal((16, 33)).astype(dtype) * 4
    o = np.empty_like(x)
    if backend == "vulkan" and dtype == np.float64:
        # GLSL's exp has no double version: a clear compile error.
        with pytest.raises(RuntimeError, match="float64 exp is not available on Vulkan"):
            kernel(x, o)
        return
    kernel(x, o)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(o, e / e.sum(-1, keepdims=True), rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("backend", BACKENDS)
def test_layernorm(backend):
    kernel = picokernel.kernel(layernorm, backend=backend)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    g, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    o = np.empty_like(x)
    kernel(x, g, b, o)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    np.testing.assert_allclose(o, (x - mu) / np.sqrt(var + 1e-5) * g + b, rtol=1e-5, atol=1e-5)


def test_axes_keepdims_and_dtypes():
    @picokernel.kernel
    def stats(x_ref, i_ref, s_ref, m_ref, n_ref, c_ref, a_ref):
        x = x_ref[...]
        s_ref[...] = x.sum(axis=0)
        m_ref[...] = np.max(x, 1)
        n_ref[...] = x.min(axis=(0, 1), keepdims=True)
        c_ref[...] = i_ref[...].sum()          # int32 sums in int64
        a_ref[...] = np.mean(i_ref[...], axis=-1)  # and averages in float64

    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 7))
    i = rng.integers(-100, 100, (5, 7)).astype(np.int32)
    s, m, n = np.empty(7), np.empty(5), np.empty((1, 1))
    c, a = np.empty((), np.int64), np.empty(5)
    stats(x, i, s, m, n, c, a)
    np.testing.assert_allclose(s, x.sum(0), rtol=1e-14)
    np.testing.assert_array_equal(m, x.max(1))
    np.testing.assert_array_equal(n, x.min(keepdims=True))
    assert c == i.sum() and i.sum().dtype == np.int64
    np.testing.assert_allclose(a, i.mean(-1), rtol=1e-14)


def test_nan_propagates_through_max():
    @picokernel.kernel
    def k(x_ref, o_ref):
        o_ref[...] = x_ref[...].max(axis=0)

    x = np.array([[1.0, 2.0], [np.nan, 0.5]])
    o = np.empty(2)
    k(x, o)
    np.testing.assert_array_equal(o, x.max(0))


def test_axis_errors():
    @picokernel.kernel
    def k(x_ref, o_ref):
        o_ref[...] = x_ref[...].sum(axis=2)

    # NumPy's AxisError (a ValueError and an IndexError), with its message.
    with pytest.raises(np.exceptions.AxisError,
                       match="axis 2 is out of bounds for array of dimension 2"):
        k(np.ones((2, 3)), np.ones(2))

    @picokernel.kernel
    def twice(x_ref, o_ref):
        o_ref[...] = x_ref[...].sum(axis=(1, -1))

    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        twice(np.ones((2, 3)), np.ones(2))

    @picokernel.kernel
    def other(x_ref, o_ref):
        o_ref[...] = np.sum(x_ref[...], dtype=np.float64)

    with pytest.raises(TypeError, match="supports only axis and keepdims"):
        other(np.ones(3), np.ones(()))


def test_nn_kernels_example_runs():
    import pathlib
    import runpy
    import sys

    example = pathlib.Path(__file__).parents[2] / "examples" / "python" / "nn_kernels.py"
    module = runpy.run_path(str(example))
    assert module["main"]() == 0
