"""backend="vulkan": the same kernels through SPIR-V on a Vulkan device
(lavapipe on the CPU in CI) give the CPU backend's results."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import picokernel

available, why = picokernel.vulkan_available()
# Every SPIR-V module the suite compiles is validated (conftest.spirv_dump).
pytestmark = [pytest.mark.skipif(not available, reason=f"no Vulkan device: {why}"),
              pytest.mark.usefixtures("spirv_dump")]


def both(fn):
    return picokernel.kernel(fn), picokernel.kernel(backend="vulkan")(fn)


def run(kernel, *arrays):
    out = np.zeros_like(arrays[-1])
    kernel(*arrays[:-1], out)
    return out


def test_seed_fma_on_vulkan(rng):
    def fma(a_ref, b_ref, c_ref, o_ref):
        o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]

    cpu, gpu = both(fma)
    for n in (4, 1000, 300_001):
        a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        o = np.empty_like(a)
        np.testing.assert_array_equal(run(gpu, a, b, c, o), run(cpu, a, b, c, o))
        np.testing.assert_array_equal(run(gpu, a, b, c, o), a * b + c)
    assert picokernel.vulkan_device()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_ops_and_broadcasting_on_vulkan(rng, dtype):
    def ops(x_ref, row_ref, o_ref):
        x, row = x_ref[...], row_ref[...]
        o_ref[...] = (x + row) * x - row + (-x) + x / (row * row + 1)

    cpu, gpu = both(ops)
    x = rng.integers(-9, 9, (3, 50)).astype(dtype)
    row = rng.integers(-9, 9, 50).astype(dtype)
    o = np.empty((3, 50), np.float64 if np.issubdtype(dtype, np.integer) else dtype)
    np.testing.assert_array_equal(run(gpu, x, row, o), run(cpu, x, row, o))


def test_matmul_and_casts_on_vulkan(rng):
    def affine(x_ref, w_ref, b_ref, o_ref):
        o_ref[...] = x_ref[...].astype(np.float64) @ w_ref[...] + b_ref[...]

    cpu, gpu = both(affine)
    x = rng.integers(-5, 5, (4, 8)).astype(np.int16)
    w = rng.standard_normal((8, 3))
    b = rng.standard_normal(3)
    o = np.empty((4, 3))
    np.testing.assert_allclose(run(gpu, x, w, b, o), run(cpu, x, w, b, o), rtol=1e-12)


def test_chain_and_aliasing_on_vulkan(rng):
    def chain(a_ref, b_ref, o_ref):
        x = a_ref[...]
        for _ in range(8):
            x = x * b_ref[...] + 0.5
        o_ref[...] = x

    cpu, gpu = both(chain)
    a, b = (rng.standard_normal(1000).astype(np.float32) * 0.5 for _ in range(2))
    o = np.empty_like(a)
    np.testing.assert_array_equal(run(gpu, a, b, o), run(cpu, a, b, o))
    expected = a.copy()
    cpu(expected, b, expected)
    gpu(a, b, a)  # the output is an input
    np.testing.assert_array_equal(a, expected)


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend 'metal'"):
        picokernel.kernel(backend="metal")(lambda o_ref: None)


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.int16, np.bool_])
def test_narrow_dtypes_on_vulkan(dtype):
    def k(a_ref, b_ref, o_ref):
        o_ref[...] = a_ref[...] * b_ref[...] + a_ref[...]

    cpu, gpu = both(k)
    a = (np.arange(100) % 3).astype(dtype)
    b = (np.arange(100) % 2).astype(dtype)
    o = np.zeros(100, dtype)
    np.testing.assert_array_equal(run(gpu, a, b, o), run(cpu, a, b, o))
    np.testing.assert_array_equal(run(gpu, a, b, o), a * b + a)


def test_comparisons_and_where_on_vulkan(rng):
    def leaky(x_ref, y_ref, o_ref):
        x, y = x_ref[...], y_ref[...]
        o_ref[...] = picokernel.where(x > y, x, 0.1 * x) + picokernel.maximum(x, y) + abs(y)

    cpu, gpu = both(leaky)
    x, y = (rng.standard_normal(500).astype(np.float32) for _ in range(2))
    o = np.empty_like(x)
    np.testing.assert_array_equal(run(gpu, x, y, o), run(cpu, x, y, o))


def test_math_on_vulkan():
    def gelu(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3))) \
            + np.log1p(np.exp(-np.abs(x))) + picokernel.sigmoid(x)

    cpu, gpu = both(gelu)
    x = np.linspace(-6, 6, 4001).astype(np.float32)
    o = np.empty_like(x)
    np.testing.assert_allclose(run(gpu, x, o), run(cpu, x, o), rtol=1e-5, atol=1e-6)


def test_erf_on_vulkan_is_a_polynomial_within_float32_error():
    """GLSL has no erf: float32 erf is MLIR's polynomial approximation,
    float64 a clear compile error (no float64 transcendentals in GLSL)."""
    import math

    def erf(x_ref, o_ref):
        o_ref[...] = picokernel.erf(x_ref[...])

    cpu, vulkan = both(erf)
    x = np.concatenate([np.linspace(-6, 6, 4001),
                        [np.inf, -np.inf, np.nan, -0.0, 0.0]]).astype(np.float32)
    o = run(vulkan, x, np.empty_like(x))
    want = np.array([math.erf(v) for v in x.astype(np.float64)])
    np.testing.assert_allclose(o, want, rtol=0, atol=5e-7)
    assert np.signbit(o[-2]) and not np.signbit(o[-1])  # erf(-0.0) is -0.0
    np.testing.assert_allclose(o, run(cpu, x, np.empty_like(x)), rtol=0, atol=5e-7)
    with pytest.raises(RuntimeError, match="float64 erf is not available on Vulkan"):
        run(vulkan, x.astype(np.float64), np.empty(x.shape))


def test_full_reductions_and_0d_kernels_on_vulkan(rng):
    """Reductions to 0-d arrays and 0-d arithmetic run as one GPU thread
    (pk-add-unit-parallel-loop) and give the CPU backend's results."""
    def statistics(x_ref, i_ref, s_ref, m_ref, k_ref, c_ref, o_ref):
        x = x_ref[...]
        s_ref[...] = x.sum()
        m_ref[...] = np.max(x)
        k_ref[...] = x.mean(axis=(0, 1), keepdims=True)
        c_ref[...] = i_ref[...].sum()
        o_ref[...] = x - x.mean()

    def scalar(a_ref, b_ref, o_ref):
        o_ref[...] = a_ref[...] * b_ref[...] + 1

    x = rng.standard_normal((37, 53)).astype(np.float32)
    i = rng.integers(-1000, 1000, 100).astype(np.int32)
    results = []
    for kernel in both(statistics):
        outputs = [np.empty((), np.float32), np.empty((), np.float32),
                   np.empty((1, 1), np.float32), np.empty((), np.int64),
                   np.empty_like(x)]
        kernel(x, i, *outputs)
        results.append(outputs)
    for cpu_output, vulkan_output in zip(*results):
        np.testing.assert_allclose(vulkan_output, cpu_output, rtol=1e-5, atol=1e-6)
    assert results[1][3] == i.sum()
    assert results[1][1] == x.max()

    cpu, vulkan = both(scalar)
    a, b = np.array(2.5, np.float32), np.array(-3.0, np.float32)
    assert run(vulkan, a, b, np.empty((), np.float32)) == 2.5 * -3.0 + 1


@pytest.mark.parametrize("op", ["sum", "max", "min", "mean"])
@pytest.mark.parametrize("shape,axis", [((5000,), None), ((1_000_003,), None),
                                        ((300, 700), None), ((3, 100_001), 1),
                                        ((2049, 3), 0), ((40, 50, 60), (0, 2))])
def test_long_reductions_run_in_blocks_on_vulkan(rng, op, shape, axis):
    """Reductions of 2048 elements or more run as blocks of 1024, a GPU
    thread each, combined pairwise (pk-split-reductions): the CPU's result
    for max/min and integers, NumPy's pairwise accuracy for float sums."""
    def body(x_ref, o_ref):
        o_ref[...] = getattr(x_ref[...], op)(axis=axis)

    body.__name__ = f"{op}_blocks"
    cpu, gpu = both(body)
    x = rng.standard_normal(shape).astype(np.float32) + 0.25
    x.flat[len(x.flat) // 3] = 40.0
    expected = getattr(np, op)(x.astype(np.float64), axis=axis)
    out = np.empty(np.shape(expected), np.float32)
    gpu(x, out)
    if op in ("max", "min"):
        np.testing.assert_array_equal(out, getattr(np, op)(x, axis=axis))
        x.flat[7] = np.nan
        gpu(x, out)
        np.testing.assert_array_equal(out, getattr(np, op)(x, axis=axis))
        return
    reduced = x.size // max(out.size, 1)
    bound = 4 * np.finfo(np.float32).eps * np.log2(reduced) * np.abs(x).sum(axis=axis)
    if op == "mean":
        bound = bound / reduced
    assert np.all(np.abs(out - expected) <= bound + np.finfo(np.float32).eps * np.abs(expected))
    cpu_out = np.empty_like(out)
    cpu(x, cpu_out)
    np.testing.assert_allclose(out, cpu_out, rtol=1e-5, atol=1e-6)




@pytest.mark.parametrize("shape,axis", [
    ((7, 63), 1), ((5, 64), -1), ((3, 65), 1), ((2, 127), 1), ((4, 129), 1),
    ((6, 1000), 1), ((3, 2047), 1), ((1000,), None), ((9, 20, 30), (1, 2)),
    ((20, 9, 30), (0, 2)), ((40, 3), 0), ((300, 5), 0), ((2000, 1100), 0),
    ((66_000, 64), 1), ((64, 8, 16), (0, 2))])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8])
def test_reductions_in_workgroups_on_vulkan(rng, shape, axis, dtype):
    """Reductions of 64 elements or more per output run as a workgroup per
    output whose threads stride over the elements and combine in a
    shared-memory tree (pk-reduce-in-workgroups), also past 65535 outputs
    (a second grid dimension) and over several or non-innermost axes: the
    same results as NumPy (exact for integers, max and min; the float sums'
    rounding within NumPy's pairwise bound)."""
    if np.dtype(dtype).kind == "i":
        x = rng.integers(-50, 50, shape).astype(dtype)
    else:
        x = (rng.standard_normal(shape) + 0.25).astype(dtype)
        x.flat[len(x.flat) // 2] = 30.0
    for op in ("sum", "max", "min", "mean"):
        def body(x_ref, o_ref):
            o_ref[...] = getattr(x_ref[...], op)(axis=axis)

        body.__name__ = f"{op}_workgroups"
        expected = getattr(np, op)(x, axis=axis)
        out = np.empty(np.shape(expected), expected.dtype)
        picokernel.kernel(backend="vulkan")(body)(x, out)
        if expected.dtype.kind in "biu" or op in ("max", "min"):
            np.testing.assert_array_equal(out, expected, err_msg=f"{op} {shape} {axis}")
            continue
        exact = getattr(np, op)(x.astype(np.float64), axis=axis)
        reduced = x.size // max(out.size, 1)
        eps = np.finfo(out.dtype).eps
        bound = 4 * eps * np.log2(reduced) * np.abs(x.astype(np.float64)).sum(axis=axis)
        if op == "mean":
            bound = bound / reduced
        bound = bound + eps * np.abs(exact)
        np.testing.assert_array_less(np.abs(out - exact), bound + 1e-30,
                                     err_msg=f"{op} {shape} {axis}")


def test_reductions_of_reversed_slices_in_workgroups_on_vulkan(rng):
    """A reversed slice fused into a reduction is read through a non-
    permutation map (-i + n - 1): the reduction still runs as workgroups
    (it used to run one GPU thread per output and be refused past the
    device's 65535-iteration budget)."""
    x = rng.standard_normal(129_024).astype(np.float32)
    rows = rng.standard_normal((3, 100_003)).astype(np.float32)
    cases = [
        (lambda x_ref, o_ref: o_ref.__setitem__(Ellipsis, (x_ref[::-1] * 2).sum()),
         x, lambda a: (a[::-1] * 2).sum()),
        (lambda x_ref, o_ref: o_ref.__setitem__(Ellipsis, (x_ref[::-1] + x_ref[...]).max()),
         x, lambda a: (a[::-1] + a).max()),
        (lambda x_ref, o_ref: o_ref.__setitem__(Ellipsis, (x_ref[:, ::-1] * x_ref[...]).sum(axis=1)),
         rows, lambda a: (a[:, ::-1] * a).sum(axis=1)),
    ]
    for body, array, expected in cases:
        body.__name__ = "reversed"
        want = expected(array)
        out = np.empty(np.shape(want), np.float32)
        picokernel.kernel(backend="vulkan")(body)(array, out)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize("op", ["max", "min"])
def test_workgroup_max_min_propagate_nan_and_infinity_on_vulkan(op):
    def body(x_ref, o_ref):
        o_ref[...] = getattr(x_ref[...], op)(axis=1)

    x = np.zeros((6, 300), np.float32)
    x[0, 17] = np.nan
    x[1, 299] = np.nan
    x[2, :] = -np.inf
    x[3, :] = np.inf
    x[4, 150] = -np.inf
    x[5, 3] = np.inf
    out = np.empty(6, np.float32)
    picokernel.kernel(backend="vulkan")(body)(x, out)
    np.testing.assert_array_equal(out, getattr(np, op)(x, axis=1))


def test_softmax_and_layernorm_rows_on_vulkan(rng):
    """Row reductions whose bodies carry fused elementwise work (softmax's
    sum of exp(x - max), a norm's sum of squares) through workgroups."""
    def softmax(x_ref, o_ref):
        v = x_ref[...]
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        o_ref[...] = e / e.sum(axis=-1, keepdims=True)

    def layernorm(x_ref, o_ref):
        v = x_ref[...]
        mean = v.mean(axis=-1, keepdims=True)
        o_ref[...] = (v - mean) / np.sqrt(((v - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)

    for shape in ((3, 100), (50, 1000), (2, 5000)):
        x = rng.standard_normal(shape).astype(np.float32) * 4
        for fn in (softmax, layernorm):
            cpu, gpu = both(fn)
            np.testing.assert_allclose(run(gpu, x, np.empty_like(x)),
                                       run(cpu, x, np.empty_like(x)), rtol=2e-5, atol=1e-6)


def test_long_integer_sums_on_vulkan(rng):
    def total(x_ref, o_ref):
        o_ref[...] = x_ref[...].sum()

    x = rng.integers(-2**31, 2**31 - 1, 3_000_001, dtype=np.int64)
    o = np.empty((), np.int64)
    both(total)[1](x, o)
    assert o == x.sum()


def test_arrays_over_the_storage_buffer_limit_are_named_in_the_error():
    def rowsum(x_ref, o_ref):
        o_ref[...] = x_ref[...].sum(axis=1)

    kernel = picokernel.kernel(backend="vulkan")(rowsum)
    x = np.zeros((2, 40_000_000), np.float32)  # 320 MB; lavapipe takes 128 MiB
    try:
        kernel(x, np.empty(2, np.float32))
    except RuntimeError as error:
        assert "argument 'x_ref' needs 320000000 bytes" in str(error)
    else:
        pytest.skip("this device takes storage buffers of 320 MB")


def test_copy_only_kernels_run_without_a_dispatch_on_vulkan():
    def copy(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(run(both(copy)[1], x, np.empty_like(x)), x)


def test_device_buffers_are_bounded_in_bytes():
    """Every compiled Vulkan variant keeps buffers for its arrays: the cache
    keeps at most max_device_bytes of them (plus the newest variant),
    dropping the least recently used, and evicted variants compile again."""
    def scale(a, o):
        o[...] = a[...] * 2

    mib = 1 << 20
    # (Variants of static sizes: one of dynamic sizes, which dynamic=None
    # compiles from the second size on, holds its last call's buffers.)
    kernel = picokernel.kernel(scale, backend="vulkan", max_device_bytes=5 * mib,
                               dynamic=False)
    for n in range(20):
        a = np.arange(mib // 4 + n, dtype=np.float32)  # 1 MiB, one shape each
        o = np.empty_like(a)
        kernel(a, o)
        np.testing.assert_array_equal(o, a * 2)
    info = kernel.cache_info()
    assert info.entries <= 3 and info.evictions >= 17  # 2 MiB a variant
    a = np.arange(mib // 4, dtype=np.float32)  # the first shape, evicted
    o = np.empty_like(a)
    kernel(a, o)
    np.testing.assert_array_equal(o, a * 2)
    assert kernel.cache_info().misses == 21


def test_a_forked_child_is_told_it_cannot_use_the_parent_s_device():
    """The device's driver threads and locks stay the parent's: a child
    forked after the device opened gets an error from Vulkan kernels, old
    and new, instead of waiting for ever; the parent keeps working."""
    code = textwrap.dedent("""
        import os, signal, numpy as np, picokernel

        def double(a, o):
            o[...] = a[...] * 2

        k = picokernel.kernel(double, backend="vulkan")
        a = np.arange(4, dtype=np.float32)
        o = np.empty_like(a)
        k(a, o)
        pid = os.fork()
        if pid == 0:
            signal.alarm(60)
            said = []
            for kernel in (k, picokernel.kernel(double, backend="vulkan")):
                try:
                    kernel(a, o)
                    said.append("ran")
                except RuntimeError as error:
                    said.append("forked from" in str(error))
            picokernel.kernel(double)(a, o)  # the CPU backend works
            said.append(picokernel.vulkan_available()[0])
            os._exit(0 if said == [True, True, False] else 1)
        _, status = os.waitpid(pid, 0)
        o[:] = 0
        k(a, o)
        print(status, (o == a * 2).all())
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "True"]
