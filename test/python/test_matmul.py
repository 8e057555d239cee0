"""`@` against NumPy over the shapes, dtypes and layouts of the packed,
vectorized matmul (pk-pack-matmul and pk-vectorize-packed-matmul) and of the
plain loop nest that small products keep (operands from matmul_oracle: small
integers, so that any summation order gives NumPy's result bit for bit).
The kernels compile per shape (`dynamic=False`): test_dynamic_matmul.py
covers one compile for every size.
"""

import ml_dtypes
import numpy as np
import pytest

import picokernel
from matmul_oracle import (check_empty_and_zero_k, check_output_is_an_operand,
                           check_special_values, check_views_and_transposes,
                           expected, integers, product_like)


@picokernel.kernel(dynamic=False)
def matmul(a, b, o):
    o[...] = a[...] @ b[...]


@picokernel.kernel(dynamic=False)
def matmul_bias_gelu(a, b, bias, o):
    x = a[...] @ b[...] + bias[...]
    o[...] = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def run(a, b, out_dtype=None):
    o = product_like(a, b, dtype=out_dtype)
    matmul(a, b, o)
    return o


# (M, K, N): tiles that divide and that don't, K = 1 and K prime, one row
# or column, tall and skinny, and the packing threshold's neighbours.
SHAPES = [(32, 32, 32), (31, 32, 32), (64, 64, 64), (129, 129, 129),
          (1, 1024, 64), (1024, 64, 1), (200, 1, 200), (97, 101, 103),
          (777, 65, 33), (1000, 300, 70), (8, 4096, 32), (300, 7, 257)]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_float32_shapes(rng, m, k, n):
    a = integers(rng, (m, k), np.float32)
    b = integers(rng, (k, n), np.float32)
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int64, np.int32, np.int16, np.int8])
@pytest.mark.parametrize("m,k,n", [(129, 70, 65), (64, 256, 96), (5, 3, 4)])
def test_dtypes(rng, dtype, m, k, n):
    a = integers(rng, (m, k), dtype, -2, 3)
    b = integers(rng, (k, n), dtype, -2, 3)
    np.testing.assert_array_equal(run(a, b), expected(a, b, dtype))


# Packed products whose every dimension overruns its tile by a little
# (rows of 8, columns of 32 or 16 lanes, K steps of 4): the packs read past
# the operands' ends as zeros, with masked vector loads, in one pass.
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16,
                                   ml_dtypes.bfloat16, np.int32, np.int8])
@pytest.mark.parametrize("shape_a,shape_b", [
    ((9, 5), (5, 1000)), ((1000, 5), (5, 17)), ((17, 1001), (1001, 33)),
    ((3, 9, 7), (3, 7, 513)), ((2, 65, 6), (6, 4097 // 64))])
def test_padded_packs_in_every_dimension(rng, dtype, shape_a, shape_b):
    a = integers(rng, shape_a, dtype, -2, 3)
    b = integers(rng, shape_b, dtype, -2, 3)
    np.testing.assert_array_equal(run(a, b), expected(a, b, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32])
def test_integers_wrap_as_numpy(rng, dtype):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=(70, 90), dtype=dtype)
    b = rng.integers(info.min, info.max, size=(90, 80), dtype=dtype)
    np.testing.assert_array_equal(run(a, b), a @ b)


def test_bfloat16_gives_float32_as_numpy(rng):
    a = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    assert (a @ b).dtype == np.float32
    o = np.zeros((64, 64), np.float32)
    matmul(a, b, o)
    np.testing.assert_allclose(o, a @ b, rtol=1e-5, atol=1e-5)
    stored = np.zeros((64, 64), ml_dtypes.bfloat16)
    matmul(a, b, stored)  # float32 stored into bfloat16: rounded once
    # (from picokernel's float32 sums: NumPy's BLAS may sum in another
    # order, an ulp apart, which can round to another bfloat16)
    np.testing.assert_array_equal(stored, o.astype(ml_dtypes.bfloat16))


def test_bool_is_any_and(rng):
    a = rng.random((100, 80)) < 0.05
    b = rng.random((80, 90)) < 0.05
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("shapes", [
    ((1,), (1, 1, 4)), ((3,), (2, 3, 4)), ((33,), (33, 17)), ((2, 7, 40), (40,)),
    ((3, 9, 20), (3, 20, 1)), ((3, 1, 20), (3, 20, 9)), ((1, 3000), (3000, 70)),
    ((5000,), (5000,)), ((5000,), (5000, 40)), ((512, 300), (300, 200)),
    ((1024,), (1024, 1024)), ((2, 3, 64, 256), (3, 256, 64)),
    ((700, 4000), (4000, 6)), ((6, 70000), (70000, 3))])
@pytest.mark.parametrize("density", [0.5, 0.001, 0.0])
def test_bool_products_with_vectors_and_batches(rng, shapes, density):
    """Boolean products are sums of 0.0 and 1.0 in float32 tested nonzero,
    as vector code (packed, matrix-vector): x @ (b, K, n) once gave
    [T, F, F, F] for all-true rows (vectors of i1 are bits, memory holds a
    byte per boolean)."""
    a = rng.random(shapes[0]) < density
    b = rng.random(shapes[1]) < density
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("shapes", [((3, 40, 50), (3, 50, 60)),
                                    ((1, 40, 50), (4, 50, 60)),
                                    ((40, 50), (2, 50, 60)),
                                    ((2, 1, 40, 50), (3, 50, 60)),
                                    ((16, 64, 64), (16, 64, 64))])
def test_batched(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("shapes", [((300, 200), (200,)), ((200,), (200, 300)),
                                    ((4, 300, 200), (200,))])
def test_vectors(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    o = np.empty(np.matmul(a, b).shape, np.float32)
    matmul(a, b, o)
    np.testing.assert_array_equal(o, a @ b)


# Matrix-vector products on either side (pk-vectorize-matvec): tiles that
# divide and that don't (rows, columns, K), thin ones that keep the loop
# nest, batches, and every element type.
MATVEC_SHAPES = [((64, 64), (64,)), ((67, 131), (131,)), ((8, 4096), (4096,)),
                 ((4096, 8), (8,)), ((7, 300), (300,)), ((1000, 63), (63,)),
                 ((64,), (64, 64)), ((131,), (131, 67)), ((4096,), (4096, 8)),
                 ((7,), (7, 300)), ((300,), (300, 1000)), ((9,), (9, 129)),
                 ((3, 130, 70), (70,)), ((70,), (3, 70, 130)),
                 ((2, 3, 40, 72), (72,)),
                 # Fewer rows than a tile, and rows a tile leaves over.
                 ((1, 5000), (5000,)), ((3, 700), (700,)), ((13, 300), (300,)),
                 ((15, 64), (64,)), ((4, 2, 257), (257,)),
                 # Dot products: one row, K in whole tiles and not.
                 ((64,), (64,)), ((1000,), (1000,)), ((100003,), (100003,)),
                 # Rows or columns shorter than a tile: one tile of their
                 # length (from 4 on), or the loop nest (fewer).
                 ((1000, 3), (3,)), ((1000, 4), (4,)), ((67, 5), (5,)),
                 ((1000, 17), (17,)), ((13, 48), (48,)), ((3,), (3, 1000)),
                 ((1000,), (1000, 4)), ((67,), (67, 5)), ((1000,), (1000, 20)),
                 ((9,), (9, 63)), ((2, 50, 12), (12,)), ((12,), (2, 12, 50)),
                 # Matrices of one column or one row, batched or not, and
                 # batches on the matrix only: batches of tiles.
                 ((64, 300), (300, 1)), ((1, 300), (300, 64)),
                 ((1000, 7), (7, 1)), ((1, 9), (9, 1000)),
                 ((4, 64, 300), (4, 300, 1)), ((4, 1, 300), (4, 300, 64)),
                 ((2, 3, 1, 70), (3, 70, 130)), ((3, 67, 70), (1, 70, 1)),
                 ((5, 9, 2000), (2000,)), ((2000,), (5, 2000, 9))]


@pytest.mark.parametrize("shapes", MATVEC_SHAPES)
def test_matrix_vector_shapes(rng, shapes):
    a = integers(rng, shapes[0], np.float32)
    b = integers(rng, shapes[1], np.float32)
    np.testing.assert_array_equal(run(a, b), a @ b)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.int8,
                                   np.int64])
@pytest.mark.parametrize("shapes", [((100, 260), (260,)), ((260,), (260, 100)),
                                    ((5, 260), (260,)), ((2600,), (2600,)),
                                    ((100, 20), (20,)), ((260,), (260, 7))])
def test_matrix_vector_dtypes(rng, dtype, shapes):
    a = integers(rng, shapes[0], dtype)
    b = integers(rng, shapes[1], dtype)
    np.testing.assert_array_equal(run(a, b), expected(a, b, dtype))


def test_matrix_vector_views_and_aliasing(rng):
    base = integers(rng, (300, 260), np.float32)
    x = integers(rng, (600,), np.float32)
    for a, v in [(base[::2, 1:], x[:259]), (base.T, x[::2]),
                 (base[:, ::-1], x[-260:][::-1])]:
        np.testing.assert_array_equal(run(a, v), a @ v)
    for v, a in [(x[:150], base[::2, 1:]), (x[::2][:260], base.T),
                 (x[-300:][::-1], base[:, ::-1])]:
        np.testing.assert_array_equal(run(v, a), v @ a)
    # The result overwrites the vector it is made from.
    a = integers(rng, (256, 256), np.float32)
    v = integers(rng, (256,), np.float32)
    want = a @ v
    matmul(a, v, v)
    np.testing.assert_array_equal(v, want)
    v = integers(rng, (256,), np.float32)
    want = v @ a
    matmul(v, a, v)
    np.testing.assert_array_equal(v, want)


def test_matrix_vector_sums_are_accurate(rng):
    # Rows summed by 64-product trees, the trees in order: within twice
    # NumPy's error on rows of 1e5 (a plain loop would drift further).
    a = rng.standard_normal((64, 100000)).astype(np.float32)
    v = rng.standard_normal(100000).astype(np.float32)
    want = a.astype(np.float64) @ v.astype(np.float64)
    got = run(a, v)
    assert np.abs(got - want).max() <= 2 * np.abs((a @ v) - want).max() + 1e-3


def test_dot_products_are_accurate(rng):
    # As the rows of A @ x: 64-product trees added in order.
    a = rng.standard_normal(1000000).astype(np.float32)
    b = rng.standard_normal(1000000).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = run(a, b)
    assert abs(float(got) - want) <= 2 * abs(float(a @ b) - want) + 1e-2


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("m,k,n", [(96, 8192, 96), (200, 3000, 70)])
def test_long_sums_are_accurate(rng, dynamic, m, k, n):
    # Each register tile sums K in runs of 256 from zero (as BLAS's blocks):
    # summed in order across a cache chunk of K (2048 float32 steps), the
    # error on all-positive data was 3-6x NumPy's. Within twice NumPy's
    # (OpenBLAS's) relative error, and 1e-6.
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    o = np.empty((m, n), np.float32)
    (dynamic_matmul if dynamic else matmul)(a, b, o)
    error = np.abs(o - want).max() / want.max()
    numpy_error = np.abs(a @ b - want).max() / want.max()
    assert error <= max(2 * numpy_error, 1e-6)


@picokernel.kernel(dynamic=True)
def dynamic_matmul(a, b, o):
    o[...] = a[...] @ b[...]


def test_large_matrix_vector_products_are_vector_code(rng):
    a = integers(rng, (512, 512), np.float32)
    v = integers(rng, (512,), np.float32)
    for x, y in [(a, v), (v, a)]:
        tiled = matmul.lower(x, y, np.empty(512, np.float32), stage="tiled")
        assert "vector.transfer_read" in tiled
        assert "linalg.matvec" not in tiled and "linalg.vecmat" not in tiled
    # Thin ones too: 3 rows, and a dot product.
    long = integers(rng, (65536,), np.float32)
    thin = integers(rng, (3, 65536), np.float32)
    tiled = matmul.lower(thin, long, np.empty(3, np.float32), stage="tiled")
    assert "vector.reduction" in tiled and "linalg.matvec" not in tiled
    tiled = matmul.lower(long, long, np.empty((), np.float32), stage="tiled")
    assert "vector.reduction" in tiled and "linalg.dot" not in tiled
    # Matrices of one column or one row, and batches of them.
    for x_shape, y_shape in [((512, 512), (512, 1)), ((1, 512), (512, 512)),
                             ((4, 128, 512), (4, 512, 1)),
                             ((4, 1, 512), (4, 512, 128)),
                             ((4, 128, 512), (512,)), ((512,), (4, 512, 128))]:
        x, y = integers(rng, x_shape, np.float32), integers(rng, y_shape, np.float32)
        o = np.empty(np.matmul(x, y).shape, np.float32)
        tiled = matmul.lower(x, y, o, stage="tiled")
        assert "vector.transfer_read" in tiled, (x_shape, y_shape)
        assert "linalg.batch_matmul" not in tiled and "linalg.matmul" not in tiled


def test_kernel_temporaries_are_reused_across_calls(rng, monkeypatch):
    # The packing buffers come from the workspace: after the first call no
    # call maps fresh pages (8 MB of them here, ~2000 page faults).
    resource = pytest.importorskip("resource")
    a = integers(rng, (1024, 1024), np.float32)
    o = np.empty_like(a)

    @picokernel.kernel
    def product(a, b, o):
        o[...] = a[...] @ b[...]

    product(a, a, o)
    product(a, a, o)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        product(a, a, o)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 300, f"{faults} page faults in 3 calls"


def test_views_and_transposes(rng):
    check_views_and_transposes(matmul, rng)


def test_output_is_an_operand(rng):
    check_output_is_an_operand(matmul, rng, 128)


def test_special_values(rng):
    check_special_values(matmul, rng)


def test_empty_and_zero_k():
    check_empty_and_zero_k(matmul)


# (M, K, N) for epilogues: tiles that divide C (the epilogue runs on each
# row panel of C, pk-vectorize-packed-matmul), that don't (a pass over C),
# and K in several chunks (a pass over C).
EPILOGUE_SHAPES = [(128, 64, 96), (96, 80, 112), (64, 4096, 64), (512, 512, 512)]


@pytest.mark.parametrize("m,k,n", EPILOGUE_SHAPES)
def test_fused_epilogue(rng, m, k, n):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    o = np.empty((m, n), np.float32)
    matmul_bias_gelu(a, b, bias, o)
    x = a @ b + bias
    want = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(o, want, rtol=2e-5, atol=2e-5 * np.sqrt(k))


@picokernel.kernel(dynamic=False)
def matmul_residual(a, b, r, o):
    o[...] = a[...] @ b[...] + 2 * r[...]


@picokernel.kernel(dynamic=False)
def matmul_to_half(a, b, o):
    o[...] = (a[...] @ b[...] - 1).astype(np.float16)


@picokernel.kernel(dynamic=False)
def matmul_squared(a, b, o):
    x = a[...] @ b[...]
    o[...] = x * x + x


@picokernel.kernel(dynamic=False)
def matmul_softmax(a, b, o):
    x = a[...] @ b[...]
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    o[...] = e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("m,k,n", EPILOGUE_SHAPES[:3])
def test_epilogues_read_other_arrays_and_aliases(rng, m, k, n):
    a, b = integers(rng, (m, k), np.float32), integers(rng, (k, n), np.float32)
    r = integers(rng, (m, n), np.float32)
    o = np.empty((m, n), np.float32)
    matmul_residual(a, b, r, o)
    np.testing.assert_array_equal(o, a @ b + 2 * r)
    want = a @ b + 2 * r
    matmul_residual(a, b, r, r)  # the residual is the output
    np.testing.assert_array_equal(r, want)
    if m == k:
        want = a @ b + 2 * a
        matmul_residual(a, b, a, a)  # an operand is the residual and output
        np.testing.assert_array_equal(a, want)
    a = integers(rng, (m, k), np.float32)
    half = np.empty((m, n), np.float16)
    matmul_to_half(a, b, half)
    np.testing.assert_array_equal(half, (a @ b - 1).astype(np.float16))
    matmul_squared(a, b, o)
    np.testing.assert_array_equal(o, (a @ b) * (a @ b) + a @ b)


@pytest.mark.parametrize("m,k,n", EPILOGUE_SHAPES[:3])
def test_reductions_after_a_matmul(rng, m, k, n):
    a = rng.standard_normal((m, k)).astype(np.float32) / np.sqrt(k)
    b = rng.standard_normal((k, n)).astype(np.float32)
    o = np.empty((m, n), np.float32)
    matmul_softmax(a, b, o)
    x = a.astype(np.float64) @ b
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(o, e / e.sum(axis=-1, keepdims=True), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("threads", ["1", "2"])
def test_epilogues_on_any_thread_count(rng, threads, monkeypatch):
    # Batched products tile batches in parallel and row panels serially:
    # the epilogue fuses into the serial loop.
    monkeypatch.setenv("OMP_NUM_THREADS", threads)
    a = integers(rng, (4, 64, 48), np.float32)
    b = integers(rng, (4, 48, 96), np.float32)
    r = integers(rng, (4, 64, 96), np.float32)
    o = np.empty((4, 64, 96), np.float32)
    matmul_residual(a, b, r, o)
    np.testing.assert_array_equal(o, a @ b + 2 * r)


@picokernel.kernel(dynamic=False)
def scaled_matmul(a, b, o):
    o[...] = (2 * a[...]) @ (b[...] - 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("m,k,n", [(192, 256, 256), (129, 70, 65)])
def test_producers_fuse_into_packing(rng, dtype, m, k, n):
    # The scale, shift and float16 -> float32 casts of the operands are
    # computed while packing them (no full-size temporaries), exactly. (192
    # rows: register tiles of 6 rows (AVX2) and of 8 (AVX-512) divide them,
    # so that no padded C is needed either.)
    a = integers(rng, (m, k), dtype)
    b = integers(rng, (k, n), dtype)
    o = np.empty((m, n), dtype)
    scaled_matmul(a, b, o)
    np.testing.assert_array_equal(o, expected(2 * a, b - 1, dtype))
    if (m, k, n) == (192, 256, 256):
        tiled = scaled_matmul.lower(a, b, o, stage="tiled")
        assert "tensor.empty() : tensor<192x256xf32>" not in tiled, tiled
        assert "tensor.empty() : tensor<256x256xf32>" not in tiled, tiled


def test_large_products_run_as_vector_tiles(rng):
    a = integers(rng, (256, 256), np.float32)
    tiled = matmul.lower(a, a, a.copy(), stage="tiled")
    assert "vector.fma" in tiled or "vector.outerproduct" in tiled
    assert "linalg.matmul" not in tiled
    small = integers(rng, (4, 3), np.float32)
    assert "linalg.matmul" in matmul.lower(small, small.T.copy(),
                                           np.empty((4, 4), np.float32),
                                           stage="tiled")
