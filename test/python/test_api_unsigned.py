"""Unsigned integers (issue 20, item 4): uint8, uint16, uint32 and uint64
arrays everywhere signed ones work, with NumPy 2's promotion (NEP 50),
wrapping, comparisons and errors, on every backend. NumPy is the oracle:
each case runs the kernel body on NumPy arrays too."""

import itertools
import warnings

import numpy as np
import pytest

import picokernel

BACKENDS = ["cpu"]
if picokernel.vulkan_available()[0]:
    BACKENDS.append("vulkan")

UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
SIGNED = [np.int8, np.int16, np.int32, np.int64]
FLOATS = [np.float16, np.float32, np.float64]


def values(dtype, count=24, seed=0):
    """Every interesting value of `dtype`: 0, 1, the top, the top bit,
    and random ones over the whole range."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    special = [0, 1, 2, info.max, info.max - 1, (info.max >> 1) + 1,
               info.max >> 1, 7, 100 % (info.max + 1)]
    drawn = rng.integers(0, info.max, count - len(special), dtype=dtype,
                         endpoint=True)
    return np.concatenate([np.array(special, dtype), drawn])


def numpy_result(body, *arrays):
    """The body run on copies of `arrays` by NumPy, warnings silenced."""
    copies = [np.array(a, copy=True) for a in arrays]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        body(*copies)
    return copies


def check(body, *arrays, backend="cpu"):
    """The kernel's outputs equal NumPy's, dtypes and bits."""
    want = numpy_result(body, *arrays)
    got = [np.array(a, copy=True) for a in arrays]
    picokernel.kernel(body, backend=backend)(*got)
    for w, g in zip(want, got):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


#===-----------------------------------------------------------------------===#
# Promotion: NumPy's result_type for every pair of dtypes
#===-----------------------------------------------------------------------===#

ALL = [np.bool_] + SIGNED + UNSIGNED + FLOATS


@pytest.mark.parametrize("a", UNSIGNED)
def test_result_dtype_of_every_pair(a):
    for b in ALL:
        def body(x, y, o):
            o[...] = x[...] + y[...]

        want = np.result_type(a, b)
        x, y = np.ones(3, a), np.ones(3, b)
        o = np.zeros(3, want)
        ir = picokernel.kernel(body).trace(x, y, o)
        # The sum is computed in NumPy's dtype: a wrong one is a cast in the
        # listing, or a TypeError on the store.
        picokernel.kernel(body)(x, y, o)
        np.testing.assert_array_equal(o, np.ones(3, a) + np.ones(3, b))
        assert f":{np.dtype(want).name}> = ADD" in str(ir), (a, b, str(ir))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("scalar", [0, 1, 7, 255])
def test_python_integers_are_weak(dtype, scalar):
    """`uint8_array + 7` stays uint8 and wraps, as in NumPy 2."""
    def body(x, o):
        o[...] = x[...] + scalar
        o[...] += x[...] * scalar

    x = values(dtype)
    check(body, x, np.zeros_like(x))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("scalar", [-1, 2**64, -(2**63)])
def test_python_integers_out_of_range_raise(dtype, scalar):
    def body(x, o):
        o[...] = x[...] + scalar

    x = values(dtype)
    with pytest.raises(OverflowError):
        x + scalar
    with pytest.raises(OverflowError, match="out of bounds|does not fit"):
        picokernel.kernel(body)(x, np.zeros_like(x))


def test_python_integers_out_of_range_of_a_narrow_dtype_raise():
    def body(x, o):
        o[...] = x[...] + 256

    with pytest.raises(OverflowError, match="256"):
        picokernel.kernel(body)(np.ones(2, np.uint8), np.zeros(2, np.uint8))


@pytest.mark.parametrize("big", [2**63, 2**64 - 1])
def test_uint64_holds_big_python_integers(big):
    def body(x, o):
        o[...] = x[...] + big

    x = values(np.uint64)
    check(body, x, np.zeros_like(x))


#===-----------------------------------------------------------------------===#
# Arithmetic: wrapping, division, extremes, negation and powers
#===-----------------------------------------------------------------------===#

OPERATORS = ["x + y", "x - y", "x * y", "x // y", "x % y", "x / y",
             "np.maximum(x, y)", "np.minimum(x, y)", "-x", "abs(x)", "+x",
             "x ** 2", "x ** 3", "np.where(x > y, x, y)"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("expression", OPERATORS)
def test_arithmetic_agrees_with_numpy(backend, dtype, expression):
    namespace = {"np": np}
    exec(f"def body(a, b, o):\n    x, y = a[...], b[...]\n"
         f"    o[...] = {expression}\n", namespace)
    x = values(dtype, seed=1)
    y = values(dtype, seed=2)[::-1].copy()
    y[3] = 0  # division by zero gives 0, as in NumPy
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = eval(expression, {"np": np, "x": x, "y": y})
    check(namespace["body"], x, y, np.zeros(len(x), result.dtype),
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("unsigned", UNSIGNED)
@pytest.mark.parametrize("other", SIGNED + FLOATS + [np.bool_])
def test_mixed_arithmetic_agrees_with_numpy(backend, unsigned, other):
    def body(a, b, o, p):
        o[...] = a[...] * b[...] - a[...]
        p[...] = np.maximum(a[...], b[...])

    x = values(unsigned, seed=3)
    if other is np.bool_:
        y = np.arange(len(x)) % 3 == 0
    elif np.dtype(other).kind == "f":
        y = np.linspace(-300, 300, len(x)).astype(other)
    else:
        y = values(np.dtype(other).str.replace("i", "u"), seed=4).astype(other)
    result = np.result_type(unsigned, other)
    check(body, x, y, np.zeros(len(x), result), np.zeros(len(x), result),
          backend=backend)


#===-----------------------------------------------------------------------===#
# Comparisons: exact for every pair, Python integers by value
#===-----------------------------------------------------------------------===#

COMPARISONS = ["<", "<=", ">", ">=", "==", "!="]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("unsigned", UNSIGNED)
@pytest.mark.parametrize("other", UNSIGNED + SIGNED + [np.float64])
def test_comparisons_are_exact(backend, unsigned, other):
    """uint64 against int64 compares exactly (NumPy 2 does; no common
    dtype holds both): 2**63 > -1 and 2**64 - 1 != -1."""
    x = values(unsigned, seed=5)
    if np.dtype(other).kind == "u":
        y = values(other, seed=6)
    elif np.dtype(other).kind == "i":
        info = np.iinfo(other)
        y = np.array([-1, 0, 1, info.min, info.max] * 5, other)[:len(x)]
    else:
        y = np.array([-1.0, 0.5, 2.0**63, 2.0**64, np.nan, 1e30] * 4)[:len(x)]
    for op in COMPARISONS:
        namespace = {}
        exec(f"def body(a, b, o, p):\n    o[...] = a[...] {op} b[...]\n"
             f"    p[...] = b[...] {op} a[...]\n", namespace)
        check(namespace["body"], x, y, np.zeros(len(x), bool),
              np.zeros(len(x), bool), backend=backend)


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("scalar", [-1, -(2**63), 0, 255, 256, 2**63, 2**64 - 1,
                                    2**64, 2**70])
def test_comparisons_with_python_integers_by_value(dtype, scalar):
    x = values(dtype, seed=7)
    for op in COMPARISONS:
        namespace = {}
        exec(f"def body(a, o, p):\n    o[...] = a[...] {op} {scalar}\n"
             f"    p[...] = {scalar} {op} a[...]\n", namespace)
        check(namespace["body"], x, np.zeros(len(x), bool),
              np.zeros(len(x), bool))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("scalar", ["np.int8(-128)", "np.int64(-1)",
                                    "np.int64(2**62)", "np.uint64(2**64 - 1)",
                                    "np.uint8(200)", "np.float32(0.5)"])
def test_comparisons_with_numpy_scalars(dtype, scalar):
    """NumPy scalars are strong: uint64 against np.int8(-128) compares
    exactly, as two arrays do."""
    x = values(dtype, seed=14)
    for op in COMPARISONS:
        namespace = {"np": np}
        exec(f"def body(a, o, p):\n    o[...] = a[...] {op} {scalar}\n"
             f"    p[...] = {scalar} {op} a[...]\n", namespace)
        check(namespace["body"], x, np.zeros(len(x), bool),
              np.zeros(len(x), bool))


#===-----------------------------------------------------------------------===#
# Casts, math functions, reductions and products
#===-----------------------------------------------------------------------===#


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("source,target", [
    (s, t) for s, t in itertools.product(UNSIGNED + SIGNED + [np.bool_],
                                         UNSIGNED + SIGNED + FLOATS + [np.bool_])
    if np.dtype(s).kind == "u" or np.dtype(t).kind == "u"])
def test_casts_agree_with_numpy(backend, source, target):
    """Widening zero-extends an unsigned source and sign-extends a signed
    one; narrowing wraps; to floats by value."""
    def body(a, o):
        o[...] = a[...].astype(target)

    if source is np.bool_:
        x = np.arange(10) % 2 == 0
    elif np.dtype(source).kind == "u":
        x = values(source, seed=8)
    else:
        info = np.iinfo(source)
        x = np.array([-1, 0, 1, info.min, info.max, 5, -7], source)
    check(body, x, np.zeros(len(x), target), backend=backend)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", UNSIGNED)
def test_floats_in_range_convert_to_unsigned(dtype, target):
    info = np.iinfo(target)
    top = float(info.max) if np.dtype(target).itemsize < 4 else 2.0**20
    x = np.array([0.0, 0.9, 1.5, 7.99, top, 100.25], dtype)

    def body(a, o):
        o[...] = a[...].astype(target)

    check(body, x, np.zeros(len(x), target))


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_math_functions_compute_in_numpys_float(dtype):
    def body(a, o, p):
        o[...] = np.sqrt(a[...])
        p[...] = np.floor(a[...])

    x = values(dtype, seed=9)
    want = np.sqrt(x)
    o = np.zeros(len(x), want.dtype)
    p = np.zeros(len(x), dtype)
    picokernel.kernel(body)(x, o, p)
    np.testing.assert_allclose(o, want, rtol=1e-3 if want.dtype == np.float16 else 1e-6)
    np.testing.assert_array_equal(p, x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_reductions_agree_with_numpy(backend, dtype):
    """sum in uint64 (NumPy's unsigned accumulator), max and min by
    unsigned order, mean in float64."""
    def body(a, s, m, n, r, mean):
        x = a[...]
        s[...] = x.sum()
        m[...] = x.max(axis=1)
        n[...] = x.min(axis=0)
        r[...] = x.sum(axis=1)
        mean[...] = x.mean(axis=0)

    x = values(dtype, count=48, seed=10).reshape(6, 8)
    check(body, x, np.zeros((), np.uint64), np.zeros(6, dtype),
          np.zeros(8, dtype), np.zeros(6, np.uint64), np.zeros(8),
          backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", UNSIGNED)
def test_empty_arrays(backend, dtype):
    """Elementwise work over no elements writes nothing; sums of nothing
    are 0 and row sums of empty rows 0, as NumPy's."""
    def body(a, b, o, s, r):
        o[...] = a[...] * 2 + a[...] // 3
        s[...] = a[...].sum()
        r[...] = b[...].sum(axis=1)

    check(body, np.zeros(0, dtype), np.zeros((4, 0), dtype),
          np.zeros(0, dtype), np.ones((), np.uint64), np.ones(4, np.uint64),
          backend=backend)


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_long_reductions_use_every_path(dtype):
    """Long rows take the split and vectorized reductions."""
    def body(a, s, m, n):
        s[...] = a[...].sum()
        m[...] = a[...].max()
        n[...] = a[...].min()

    x = values(dtype, count=100_003, seed=11)
    check(body, x, np.zeros((), np.uint64), np.zeros((), dtype),
          np.zeros((), dtype))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("shape", [((7, 5), (5, 3)), ((16, 32), (32, 24)),
                                   ((5,), (5, 4)), ((3, 5), (5,))])
def test_products_wrap_as_numpys(backend, dtype, shape):
    def body(a, b, o):
        o[...] = a[...] @ b[...] + 1

    rng = np.random.default_rng(12)
    info = np.iinfo(dtype)
    a = rng.integers(0, info.max, shape[0], dtype=dtype, endpoint=True)
    b = rng.integers(0, info.max, shape[1], dtype=dtype, endpoint=True)
    o = np.zeros((a @ b).shape, dtype)
    check(body, a, b, o, backend=backend)


#===-----------------------------------------------------------------------===#
# Stores, constants, slices, NumPy scalars and the other entry points
#===-----------------------------------------------------------------------===#


def test_stores_convert_by_same_kind():
    """uint8 into int16 and uint16 converts; int8 into uint8 does not (not
    the same kind, NumPy's casting="same_kind")."""
    def widen(a, o, p):
        o[...] = a[...]
        p[...] = a[...]

    x = values(np.uint8)
    check(widen, x, np.zeros(len(x), np.int16), np.zeros(len(x), np.uint16))

    def narrow(a, o):
        o[...] += a[...]

    with pytest.raises(TypeError):
        picokernel.kernel(narrow)(np.ones(3, np.int8), np.zeros(3, np.uint8))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("number", [0, 5, 255])
def test_python_integers_store_into_unsigned_refs(dtype, number):
    """`uint8_ref[...] = 5` stores the number, as NumPy's assignment."""
    def body(a):
        a[...] = number
        a[1:] = 7

    check(body, np.ones(3, dtype))


@pytest.mark.parametrize("dtype,number", [(np.uint8, 256), (np.uint8, -1),
                                          (np.uint64, 2**64), (np.uint32, -5)])
def test_python_integers_out_of_range_do_not_store(dtype, number):
    def body(a):
        a[...] = number

    with pytest.raises(OverflowError):
        np.ones(3, dtype)[...] = number
    with pytest.raises(OverflowError):
        picokernel.kernel(body)(np.ones(3, dtype))


@pytest.mark.parametrize("exponent", ["2**63", "2**64 - 1", "2**63 + 1",
                                      "np.uint64(2**63)", "np.uint64(2**64 - 1)"])
def test_exponents_beyond_int64(exponent):
    """uint64 holds exponents from 2^63 to 2^64: powers by squaring, as
    NumPy's integer loop."""
    namespace = {"np": np}
    exec(f"def body(a, o):\n    o[...] = a[...] ** ({exponent})\n", namespace)
    x = np.array([0, 1, 2, 3, 2**64 - 1, 2**63 + 7], np.uint64)
    check(namespace["body"], x, np.zeros(len(x), np.uint64))
    small = np.array([0, 1, 2, 3, 255], np.uint8)
    if "np." in exponent:  # a strong uint64 exponent: uint64 result
        check(namespace["body"], small, np.zeros(len(small), np.uint64))
    else:  # NumPy: the weak exponent does not fit uint8
        with pytest.raises(OverflowError):
            picokernel.kernel(namespace["body"])(small, np.zeros(5, np.uint8))


def test_numpy_scalars_store_with_numpys_cast():
    """NumPy's assignment wraps an integer scalar into an unsigned array
    (np.uint32(2**32 - 1) into uint8 is 255) but checks its value against a
    signed one (np.int64(300) into int8 is an OverflowError)."""
    def body(a, c):
        a[...] = np.uint32(4294967295)
        c[...] = np.uint64(2**64 - 1)

    check(body, np.zeros(2, np.uint8), np.zeros(2, np.uint16))

    def signed(b):
        b[...] = np.int64(300)

    with pytest.raises(OverflowError):
        np.zeros(2, np.int8)[...] = np.int64(300)
    with pytest.raises(OverflowError, match="300"):
        picokernel.kernel(signed)(np.zeros(2, np.int8))


def test_numpy_scalars_and_captured_arrays():
    table = np.array([250, 3, 255], np.uint8)

    def body(a, o, p):
        o[...] = a[...] + np.uint8(10) + table
        p[...] = a[...] * np.uint64(2**64 - 1)

    x = np.array([1, 6, 255], np.uint8)
    check(body, x, np.zeros(3, np.uint8), np.zeros(3, np.uint64))


def test_slices_and_reversals():
    def body(a, o):
        o[1:] = a[:-1] - a[1:]
        o[0] = a[::-1][0]

    x = values(np.uint16, count=17, seed=13)
    check(body, x, np.zeros_like(x))


def test_unsigned_inputs_as_arguments_and_scalars():
    def body(a, o):
        o[...] = a[...] * 2

    o = np.zeros(3, np.uint8)
    picokernel.kernel(body)(np.array([1, 200, 255], np.uint8), o)
    np.testing.assert_array_equal(o, [2, 144, 254])
    scalar_out = np.zeros((), np.uint32)
    picokernel.kernel(body)(np.uint32(4_000_000_000), scalar_out)
    assert scalar_out == (4_000_000_000 * 2) % 2**32


def test_dynamic_sizes():
    def body(a, o):
        o[...] = a[...] // 3

    k = picokernel.kernel(body, dynamic=True)
    for n in (1, 5, 1000):
        x = values(np.uint32, count=max(n, 10), seed=n)[:n].copy()
        o = np.zeros(n, np.uint32)
        k(x, o)
        np.testing.assert_array_equal(o, x // 3)


def test_listing_names_unsigned_dtypes():
    def body(a, o):
        o[...] = a[...] + 255

    listing = str(picokernel.kernel(body).trace(np.ones(4, np.uint8),
                                                np.ones(4, np.uint8)))
    assert "<4:uint8> = LOAD [a]()" in listing
    assert "<:uint8> = CONST(255)" in listing


def test_numpy_backend():
    def body(a, o):
        o[...] = a[...] - 1

    x = np.array([0, 1, 2], np.uint16)
    o = np.zeros(3, np.uint16)
    picokernel.kernel(body, backend="numpy")(x, o)
    np.testing.assert_array_equal(o, [65535, 0, 1])
