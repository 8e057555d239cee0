"""The picokernel Python API: kernels, ops, dtypes, caching and semantics."""

import numpy as np
import pytest

import picokernel


# Copied verbatim from the seed post.
@picokernel.kernel
def fma(a_ref, b_ref, c_ref, o_ref):
    o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]


def arrays(rng, *shapes, dtype=np.float32):
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes]


def test_seed_kernel_matches_numpy(rng):
    a, b, c = arrays(rng, 1000, 1000, 1000)
    o = np.zeros_like(a)
    assert fma(a, b, c, o) is None
    np.testing.assert_array_equal(o, a * b + c)


def test_show_ir_is_the_seed_listing(rng):
    a, b, c, o = arrays(rng, 4, 4, 4, 4)
    assert fma.show_ir(a, b, c, o) == (
        "kernel fma(a_ref, b_ref, c_ref, o_ref):\n"
        "  v0<4:float32> = LOAD [a_ref]()\n"
        "  v1<4:float32> = LOAD [b_ref]()\n"
        "  v2<4:float32> = MUL(v0, v1)\n"
        "  v3<4:float32> = LOAD [c_ref]()\n"
        "  v4<4:float32> = ADD(v2, v3)\n"
        "  STORE [o_ref](v4)"
    )


def test_lower_shows_every_stage(rng):
    a, b, c, o = arrays(rng, 8, 8, 8, 8)
    assert picokernel.stages()[:6] == ["pk", "linalg", "fused", "tiled", "bufferized", "llvm"]
    assert "pk.mul" in fma.lower(a, b, c, o, stage="pk")
    assert "linalg.generic" in fma.lower(a, b, c, o, stage="linalg")
    bufferized = fma.lower(a, b, c, o, stage="bufferized")
    assert bufferized.count("linalg.generic") == 1 and "memref.alloc" not in bufferized
    assert "llvm.func @kernel.fma" in fma.lower(a, b, c, o, stage="llvm")
    with pytest.raises(RuntimeError, match="unknown stage 'bogus'"):
        fma.lower(a, b, c, o, stage="bogus")


def test_trace_kernel_and_ir():
    def scale(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0

    ir = picokernel.trace_kernel(scale, [(3,), (3,)], [np.float32, np.float32])
    assert str(ir) == (
        "kernel scale(x_ref, o_ref):\n"
        "  v0<3:float32> = LOAD [x_ref]()\n"
        "  v1<:float32> = CONST(2.0)\n"
        "  v2<3:float32> = MUL(v0, v1)\n"
        "  STORE [o_ref](v2)"
    )
    assert "pk.kernel @scale(%x_ref: !pk.ref<3xf32>" in ir.mlir


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
def test_every_op(rng, dtype):
    @picokernel.kernel
    def ops(x_ref, y_ref, add_ref, sub_ref, mul_ref, neg_ref, div_ref):
        x, y = x_ref[...], y_ref[...]
        add_ref[...] = x + y
        sub_ref[...] = x - y
        mul_ref[...] = x * y
        neg_ref[...] = -x
        div_ref[...] = x / y

    x = (rng.integers(-50, 50, 64)).astype(dtype)
    y = (rng.integers(1, 9, 64)).astype(dtype)
    outs = [np.empty_like(x) for _ in range(4)]
    quotient = np.empty(64, np.result_type(x / y))
    ops(x, y, *outs, quotient)
    for out, expected in zip(outs + [quotient], [x + y, x - y, x * y, -x, x / y]):
        np.testing.assert_array_equal(out, expected)


def test_matmul_shapes(rng):
    @picokernel.kernel
    def mm(a_ref, b_ref, o_ref):
        o_ref[...] = a_ref[...] @ b_ref[...]

    for lhs, rhs in [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                     ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (6, 4, 2)),
                     ((2, 2, 3, 4), (4,))]:
        a, b = arrays(rng, lhs, rhs, dtype=np.float64)
        expected = a @ b
        o = np.empty(expected.shape, np.float64)
        mm(a, b, o)
        np.testing.assert_allclose(o, expected, rtol=1e-12)


def test_broadcasting(rng):
    @picokernel.kernel
    def outer(row_ref, col_ref, o_ref):
        o_ref[...] = row_ref[...] * col_ref[...] + 1.0

    row, col = arrays(rng, 5, (4, 1))
    o = np.empty((4, 5), np.float32)
    outer(row, col, o)
    np.testing.assert_array_equal(o, row * col + np.float32(1.0))

    @picokernel.kernel
    def fill(x_ref, o_ref):
        o_ref[...] = x_ref[...]  # o[...] = x broadcasts x to o's shape

    o = np.empty((3, 5), np.float32)
    fill(row, o)
    np.testing.assert_array_equal(o, np.broadcast_to(row, (3, 5)))


def test_scalars_are_weakly_typed(rng):
    @picokernel.kernel
    def scalars(x_ref, o_ref):
        o_ref[...] = 2.0 * x_ref[...] - 1 + x_ref[...] / 4

    (x,) = arrays(rng, 16)
    o = np.empty_like(x)
    scalars(x, o)
    np.testing.assert_array_equal(o, 2.0 * x - 1 + x / 4)
    assert "f64" not in scalars.show_ir(x, o)  # float32 stays float32

    # NumPy scalars are not weak: float32 * float64 scalar computes in float64.
    @picokernel.kernel
    def strong(x_ref, o_ref):
        o_ref[...] = x_ref[...] * np.float64(0.1)

    o64 = np.empty(16, np.float64)
    strong(x, o64)
    np.testing.assert_array_equal(o64, x * np.float64(0.1))
    assert "CAST" in strong.show_ir(x, o64)

    # An integer array times a Python float is float64, as in NumPy.
    @picokernel.kernel
    def half(i_ref, o_ref):
        o_ref[...] = i_ref[...] * 0.5

    i = np.arange(7, dtype=np.int32)
    oh = np.empty(7, np.float64)
    half(i, oh)
    np.testing.assert_array_equal(oh, i * 0.5)


def test_numpy_arrays_are_constants(rng):
    weights = np.array([1.0, -2.0, 0.5], np.float32)

    @picokernel.kernel
    def weighted(x_ref, o_ref):
        o_ref[...] = x_ref[...] * weights + np.ones((2, 1), np.float32)

    (x,) = arrays(rng, (2, 3))
    o = np.empty((2, 3), np.float32)
    weighted(x, o)
    np.testing.assert_array_equal(o, x * weights + 1)


def test_bool_arrays(rng):
    @picokernel.kernel
    def logic(p_ref, q_ref, either_ref, both_ref, count_ref):
        either_ref[...] = p_ref[...] + q_ref[...]
        both_ref[...] = p_ref[...] * q_ref[...]
        count_ref[...] = p_ref[...] + 1

    p = rng.integers(0, 2, 32).astype(bool)
    q = rng.integers(0, 2, 32).astype(bool)
    either, both = np.empty_like(p), np.empty_like(p)
    count = np.empty(32, np.int64)
    logic(p, q, either, both, count)
    np.testing.assert_array_equal(either, p + q)
    np.testing.assert_array_equal(both, p * q)
    np.testing.assert_array_equal(count, p + 1)


def test_astype(rng):
    @picokernel.kernel
    def to_int(x_ref, o_ref):
        o_ref[...] = x_ref[...].astype(np.int32) * 2

    x = np.array([1.7, -2.5, 3.0], np.float64)
    o = np.empty(3, np.int32)
    to_int(x, o)
    np.testing.assert_array_equal(o, x.astype(np.int32) * 2)


def test_host_control_flow_runs_at_trace_time(rng):
    @picokernel.kernel
    def poly(x_ref, o_ref):
        x = x_ref[...]
        acc = x
        for power in range(3):
            acc = acc * x + power
        o_ref[...] = acc

    (x,) = arrays(rng, 10, dtype=np.float64)
    o = np.empty_like(x)
    poly(x, o)
    expected = x
    for power in range(3):
        expected = expected * x + power
    np.testing.assert_array_equal(o, expected)


def test_cache_hits_and_retracing(rng):
    @picokernel.kernel
    def add(a_ref, b_ref, o_ref):
        o_ref[...] = a_ref[...] + b_ref[...]

    a, b = arrays(rng, 8, 8)
    o = np.empty_like(a)
    add(a, b, o)
    add(a, b, o)
    assert add.cache_info().misses == 1 and add.cache_info().hits == 1
    a2, b2 = arrays(rng, 9, 9)
    add(a2, b2, np.empty_like(a2))  # new shape: retrace
    a3, b3 = arrays(rng, 8, 8, dtype=np.float64)
    add(a3, b3, np.empty_like(a3))  # new dtype: retrace
    info = add.cache_info()
    assert (info.misses, info.hits, info.entries) == (3, 1, 3)
    assert info.compile_seconds > 0
    assert "float64" in str(add.ir)
    add.clear_cache()
    assert add.cache_info().entries == 0


def test_decorator_with_options(rng):
    @picokernel.kernel(backend="cpu", parallel_threshold=0)
    def square(x_ref, o_ref):
        o_ref[...] = x_ref[...] * x_ref[...]

    (x,) = arrays(rng, 100)
    o = np.empty_like(x)
    square(x, o)
    np.testing.assert_array_equal(o, x * x)
    assert square.__name__ == "square" and square.backend == "cpu"
    with pytest.raises(ValueError, match="unknown backend 'metal'"):
        picokernel.kernel(backend="metal")(lambda o_ref: None)


#
# Semantics the original picokernel got wrong
#


def test_two_live_intermediates():
    @picokernel.kernel
    def k(a_ref, b_ref, c_ref, d_ref, o_ref):
        o_ref[...] = (a_ref[...] + b_ref[...]) * (c_ref[...] + d_ref[...])

    a, b, c, d = (np.array([v], np.float64) for v in (1, 2, 3, 4))
    o = np.empty(1)
    k(a, b, c, d, o)
    assert o[0] == 21


def test_output_aliasing_an_input(rng):
    a, b, c = arrays(rng, 50, 50, 50)
    expected = a * b + c
    fma(a, b, c, a)  # o is a
    np.testing.assert_array_equal(a, expected)

    @picokernel.kernel
    def square(x_ref, o_ref):
        o_ref[...] = x_ref[...] @ x_ref[...]

    m = rng.standard_normal((3, 3))
    expected = m @ m
    square(m, m)
    np.testing.assert_allclose(m, expected, rtol=1e-12)


def test_every_store_counts():
    @picokernel.kernel
    def k(x_ref, o_ref, p_ref):
        o_ref[...] = x_ref[...]
        o_ref[...] = o_ref[...] + 1
        p_ref[...] = o_ref[...] * 10

    x = np.arange(3, dtype=np.int64)
    o, p = np.empty_like(x), np.empty_like(x)
    k(x, o, p)
    np.testing.assert_array_equal(o, x + 1)
    np.testing.assert_array_equal(p, (x + 1) * 10)


def test_views_give_numpys_answer(rng):
    base = rng.standard_normal((6, 8)).astype(np.float32)
    a, b, c = base[:, ::2], base[::2, :4], base.T[:4, :6].T  # non-contiguous
    o = np.zeros((6, 4), np.float32)[:, :]
    expected = a * base[:, 1::2] + a
    fma(a, base[:, 1::2], a, o)
    np.testing.assert_array_equal(o, expected)

    # A non-contiguous output.
    out = np.zeros((6, 8), np.float32)
    fma(a, a, a, out[:, ::2])
    np.testing.assert_array_equal(out[:, ::2], a * a + a)
    assert not out[:, 1::2].any()

    # Overlapping views of one buffer: input shifted against the output.
    x = np.arange(10, dtype=np.float64)
    expected = x.copy()
    expected[1:] = x[:-1] * x[:-1] + x[:-1]
    fma(x[:-1], x[:-1], x[:-1], x[1:])
    np.testing.assert_array_equal(x, expected)
    del b, c


def test_zero_size_arrays():
    a = np.empty((0, 3), np.float32)
    o = np.empty((0, 3), np.float32)
    fma(a, a, a, o)


def test_comparisons_where_maximum_minimum_abs(rng):
    @picokernel.kernel
    def choose(x_ref, y_ref, o_ref, m_ref):
        x, y = x_ref[...], y_ref[...]
        o_ref[...] = picokernel.where(x > y, x, 2.0 * y) + picokernel.maximum(x, y) \
            - picokernel.minimum(x, 0.5) + abs(x)
        m_ref[...] = (x <= y) + (x != y) + (1.0 >= x)

    x = np.array([1.0, -2.0, np.nan, 0.5, -0.0, 3.0])
    y = np.array([0.5, -2.0, 1.0, np.nan, 0.0, 3.0])
    o, m = np.empty(6), np.empty(6, bool)
    choose(x, y, o, m)
    with np.errstate(invalid="ignore"):
        expected = (np.where(x > y, x, 2.0 * y) + np.maximum(x, y)
                    - np.minimum(x, 0.5) + abs(x))
        np.testing.assert_array_equal(m, (x <= y) + (x != y) + (1.0 >= x))
    np.testing.assert_array_equal(o, expected)


def test_where_promotes_and_broadcasts():
    @picokernel.kernel
    def pick(c_ref, a_ref, o_ref):
        o_ref[...] = picokernel.where(c_ref[...], a_ref[...], 7)

    c = np.array([[1], [0]], np.int32)          # nonzero counts as True
    a = np.array([1.5, 2.5, 3.5], np.float32)
    o = np.empty((2, 3), np.float32)
    pick(c, a, o)
    np.testing.assert_array_equal(o, np.where(c, a, 7))

    @picokernel.kernel
    def bad(c_ref, a_ref, o_ref):
        o_ref[...] = picokernel.where(c_ref[...], a_ref[...], [1, 2])

    with pytest.raises(TypeError, match="picokernel.where: unsupported operand type list"):
        bad(c, a, o)
