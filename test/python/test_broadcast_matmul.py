"""`@` against NumPy for batched products whose batch dimensions broadcast:
batch dimensions of one operand only (the other's are 1 or missing), e.g.
the rows of a batch of inputs through a stack of matrices,
(2, 3, 1, K) @ (3, K, N). picokernel computes them as one matmul or
batch_matmul of the operands themselves: A's own batch dimensions join its
rows, B's its columns, and the product packs into register tiles (it ran
as a loop nest over the broadcast B, 7-13x NumPy's time). Operands from
matmul_oracle: small integers, so that any summation order gives NumPy's
result bit for bit.
"""

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import computed, expected, integers, product_like


@picokernel.kernel(dynamic=False)
def matmul(a, b, o):
    o[...] = a[...] @ b[...]


@picokernel.kernel(dynamic=True)
def dynamic_matmul(a, b, o):
    o[...] = a[...] @ b[...]


@picokernel.kernel(dynamic=False)
def matmul_bias_relu(a, b, bias, o):
    o[...] = np.maximum(a[...] @ b[...] + bias[...], 0)


# A's batch dimensions alone, B's alone, both, shared ones between them,
# unit dimensions, rank-2 operands against batches, empty batches, and
# rows or columns that make a matrix-vector product of a batch.
SHAPES = [
    ((2, 3, 1, 64), (3, 64, 40)), ((2, 3, 5, 64), (3, 64, 40)),
    ((5, 64), (3, 64, 40)), ((3, 5, 64), (64, 40)),
    ((2, 1, 4, 64), (1, 3, 64, 8)), ((2, 3, 4, 64), (2, 1, 64, 8)),
    ((1, 3, 4, 64), (2, 3, 64, 8)), ((4, 1, 1, 2, 32), (3, 1, 32, 5)),
    ((2, 3, 1, 1024), (3, 1024, 256)), ((0, 3, 1, 64), (3, 64, 40)),
    ((2, 3, 7, 64), (1, 64, 1)), ((2, 1, 1, 64), (1, 5, 64, 33)),
    ((6, 1, 64), (1, 64, 1))]


@pytest.mark.parametrize("shapes", SHAPES)
def test_shapes(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(computed(matmul, a, b), a @ b)


@pytest.mark.parametrize("shapes", SHAPES)
def test_dynamic_sizes(rng, shapes):
    # One kernel of dynamic sizes for every shape (broadcast dimensions
    # stay 1 in its traces).
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(computed(dynamic_matmul, a, b), a @ b)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int64, np.int32, np.uint8, np.int8,
                                   np.bool_])
@pytest.mark.parametrize("shapes", [((2, 3, 1, 40), (3, 40, 24)),
                                    ((2, 1, 6, 40), (1, 3, 40, 5))])
def test_dtypes(rng, dtype, shapes):
    a = integers(rng, shapes[0], dtype, -2, 3)
    b = integers(rng, shapes[1], dtype, -2, 3)
    np.testing.assert_array_equal(computed(matmul, a, b), expected(a, b, dtype))


def test_views(rng):
    base = integers(rng, (6, 80, 130), np.float32)
    for a, b in [(base[::3, None, :4, ::2], base[:3, :65, ::-2]),
                 (base[:2, None, :, :64].transpose(0, 1, 3, 2),
                  base[:3, :80, 1:50]),
                 (base[None, :2, :7, :80], base[:1, :, 3:11][:, None])]:
        np.testing.assert_array_equal(computed(matmul, a, b), a @ b)


def test_epilogue(rng):
    a = integers(rng, (2, 3, 4, 64), np.float32)
    b = integers(rng, (3, 64, 40), np.float32)
    bias = integers(rng, (40,), np.float32)
    o = np.empty((2, 3, 4, 40), np.float16)
    matmul_bias_relu(a, b, bias, o)
    np.testing.assert_array_equal(o, np.maximum(a @ b + bias, 0).astype(np.float16))


def test_products_are_packed(rng):
    # One packed batch_matmul of (3, 2, 1024) @ (3, 1024, 256): B is read
    # where it is, not broadcast, and the product is vector code.
    a = integers(rng, (2, 3, 1, 1024), np.float32)
    b = integers(rng, (3, 1024, 256), np.float32)
    tiled = matmul.lower(a, b, product_like(a, b), stage="tiled")
    assert "vector.fma" in tiled
    assert "tensor<2x3x1024x256xf32>" not in tiled
    linalg = matmul.lower(a, b, product_like(a, b), stage="linalg")
    assert "linalg.batch_matmul" in linalg


@pytest.mark.skipif(not picokernel.vulkan_available()[0],
                    reason="no Vulkan device")
@pytest.mark.parametrize("shapes", SHAPES[:8])
def test_vulkan(rng, shapes):
    kernel = picokernel.kernel(backend="vulkan")(matmul.__wrapped__)
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(computed(kernel, a, b), a @ b)


@picokernel.kernel(dynamic=True)
def dynamic_bias_relu(a, b, bias, o):
    o[...] = np.maximum(a[...] @ b[...] + bias[...], 0)


# Batches of rows through one matrix (a linear layer over a batch of
# sequences), and A's batches through a stack of B's, at sizes that the
# register tiles do not divide.
DYNAMIC_BATCHES = [((3, 5, 64), (64, 40)), ((1, 7, 33), (33, 9)),
                   ((4, 13, 200), (200, 17)), ((2, 3, 1, 96), (3, 96, 24)),
                   ((2, 3, 6, 70), (3, 70, 30)), ((5, 2, 64), (64, 3))]


def test_dynamic_batches_are_packed(rng):
    # Batch sizes of dynamic kernels join the rows (or columns) as static
    # ones do: one packed matmul, not a batch_matmul over copies of B.
    for shapes, product in [(((3, 5, 64), (64, 40)), "linalg.matmul"),
                            (((2, 3, 1, 96), (3, 96, 24)), "linalg.batch_matmul")]:
        kernel = picokernel.kernel(dynamic=True)(matmul.__wrapped__)
        a = integers(rng, shapes[0], np.float32)
        b = integers(rng, shapes[1], np.float32)
        np.testing.assert_array_equal(computed(kernel, a, b), a @ b)
        assert product in kernel.lower(stage="linalg")
        tiled = kernel.lower(stage="tiled")
        assert "vector.fma" in tiled or "vector.contract" in tiled


@pytest.mark.parametrize("shapes", DYNAMIC_BATCHES)
def test_dynamic_batches(rng, shapes):
    # One kernel of dynamic sizes across the shapes, with and without an
    # epilogue reading the product.
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    bias = integers(rng, shapes[1][-1:], np.float32)
    np.testing.assert_array_equal(computed(dynamic_matmul, a, b), a @ b)
    o = np.empty(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, 1))[:-1]
                 + (b.shape[-1],), np.float32)
    dynamic_bias_relu(a, b, bias, o)
    np.testing.assert_array_equal(o, np.maximum(a @ b + bias, 0))


@pytest.mark.skipif(not picokernel.vulkan_available()[0],
                    reason="no Vulkan device")
def test_vulkan_dynamic_batches(rng):
    kernel = picokernel.kernel(backend="vulkan", dynamic=True)(matmul.__wrapped__)
    for shapes in DYNAMIC_BATCHES[:4]:
        a = integers(rng, shapes[0], np.float32)
        b = integers(rng, shapes[1], np.float32)
        np.testing.assert_array_equal(computed(kernel, a, b), a @ b)
