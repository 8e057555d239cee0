"""`@` on Vulkan (pk-tile-matmul-for-gpu: workgroups that stage tiles of the
operands in shared memory) against NumPy: tiles that divide the shape and
that don't, K in whole steps and with a rest, every dtype, batches, views,
aliasing, special values and epilogues. Operands from matmul_oracle hold
small integers, so that any summation order gives NumPy's result exactly."""

import glob
import shutil
import subprocess

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import (check_empty_and_zero_k, check_output_is_an_operand,
                           check_special_values, check_views_and_transposes,
                           expected, integers, product_like)

available, why = picokernel.vulkan_available()
pytestmark = [pytest.mark.skipif(not available, reason=f"no Vulkan device: {why}"),
              pytest.mark.usefixtures("spirv_dump")]


@picokernel.kernel(backend="vulkan")
def matmul(a, b, o):
    o[...] = a[...] @ b[...]


def run(a, b, out_dtype=None):
    o = product_like(a, b, dtype=out_dtype)
    matmul(a, b, o)
    return o


# (M, K, N) around the 64 x 64 workgroup tile and the 16-deep K step: one
# element, exact tiles, one more and one less, K = 1, K below one step,
# several steps with and without a rest, one row or column, several tiles.
SHAPES = [(1, 1, 1), (4, 3, 5), (64, 16, 64), (64, 64, 64), (65, 17, 63),
          (63, 15, 65), (100, 70, 130), (200, 1, 200), (1, 1024, 64),
          (1024, 64, 1), (128, 1000, 64), (129, 33, 257)]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_float32_shapes(rng, m, k, n):
    a = integers(rng, (m, k), np.float32)
    b = integers(rng, (k, n), np.float32)
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int64, np.int32, np.int16, np.int8, bool])
@pytest.mark.parametrize("m,k,n", [(129, 70, 65), (64, 32, 64), (5, 3, 4)])
def test_dtypes(rng, dtype, m, k, n):
    if dtype is bool:
        a, b = rng.random((m, k)) < 0.1, rng.random((k, n)) < 0.1
    else:
        a = integers(rng, (m, k), dtype, -2, 3)
        b = integers(rng, (k, n), dtype, -2, 3)
    np.testing.assert_array_equal(run(a, b), expected(a, b, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32])
def test_integers_wrap_as_numpy(rng, dtype):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=(70, 90), dtype=dtype)
    b = rng.integers(info.min, info.max, size=(90, 80), dtype=dtype)
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("shapes", [((3, 40, 50), (3, 50, 60)),
                                    ((1, 40, 50), (4, 50, 60)),
                                    ((40, 50), (2, 50, 60)),
                                    ((2, 1, 40, 50), (3, 50, 60)),
                                    ((70, 3, 5), (70, 5, 2))])
def test_batched(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("shapes", [((300, 200), (200,)), ((200,), (200, 300)),
                                    ((4, 30, 20), (20,))])
def test_vectors(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(run(a, b), a @ b)


def test_views_and_transposes(rng):
    check_views_and_transposes(matmul, rng)


def test_output_is_an_operand(rng):
    check_output_is_an_operand(matmul, rng, 130)


def test_special_values(rng):
    check_special_values(matmul, rng)


def test_empty_and_zero_k():
    check_empty_and_zero_k(matmul)


def test_float_sums_are_accurate(rng):
    # Sums in order along K: within K ulps-scale error of float64's result.
    a = rng.standard_normal((96, 3000)).astype(np.float32)
    b = rng.standard_normal((3000, 80)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    error = np.abs(run(a, b) - want) / scale
    assert error.max() < 3000 * np.finfo(np.float32).eps


def test_k_past_the_device_loop_budget_is_exact_or_an_error():
    # llvmpipe stops a thread after 65535 loop iterations (and counts each
    # exit of the inner K loop): a K that long is refused at compile time,
    # never summed partially. Below it, the sum is whole.
    for k in (58240, 58256, 60000, 61696):
        a, b = np.ones((1, k), np.float32), np.ones((k, 1), np.float32)
        o = np.zeros((1, 1), np.float32)
        try:
            matmul(a, b, o)
        except RuntimeError as error:
            assert "loop iterations in one GPU thread" in str(error)
            continue
        assert o[0, 0] == k


@picokernel.kernel(backend="vulkan")
def matmul_bias_gelu(a, b, bias, o):
    x = a[...] @ b[...] + bias[...]
    o[...] = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


@picokernel.kernel(backend="vulkan")
def scaled_matmul(a, b, o):
    o[...] = (2 * a[...]) @ (b[...] - 1)


def test_producers_and_epilogue(rng):
    a = rng.standard_normal((96, 80)).astype(np.float32)
    b = rng.standard_normal((80, 112)).astype(np.float32)
    bias = rng.standard_normal(112).astype(np.float32)
    o = np.empty((96, 112), np.float32)
    matmul_bias_gelu(a, b, bias, o)
    x = a @ b + bias
    want = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(o, want, rtol=2e-5, atol=2e-5)
    a, b = integers(rng, (70, 50), np.float32), integers(rng, (50, 90), np.float32)
    o = np.empty((70, 90), np.float32)
    scaled_matmul(a, b, o)
    np.testing.assert_array_equal(o, (2 * a) @ (b - 1))


def test_matmul_stages_tiles_in_workgroup_memory(rng, spirv_dump):
    @picokernel.kernel(backend="vulkan")
    def staged(a, b, o):
        o[...] = a[...] @ b[...]

    a = integers(rng, (128, 96), np.float32)
    b = integers(rng, (96, 128), np.float32)
    o = np.empty((128, 128), np.float32)
    staged(a, b, o)
    np.testing.assert_array_equal(o, a @ b)
    disassembler = shutil.which("spirv-dis")
    if disassembler is None:
        pytest.skip("spirv-dis (Debian: spirv-tools) is not installed")
    [module] = glob.glob(str(spirv_dump / "staged-*.spv"))
    text = subprocess.run([disassembler, module], capture_output=True,
                          text=True, check=True).stdout
    assert "Workgroup %" in text or "Workgroup\n" in text
    assert text.count("OpControlBarrier") == 2
    assert "LocalSize 16 8 1" in text
