"""Reductions and the work reading them computed in tiles of rows
(pk-fuse-rows): softmax, logsumexp, norms, cross-entropy and variances agree
with NumPy for every float dtype, axis, shape (prime, 1 and 0 rows, rows
longer than a tile), view and aliasing, with NaN and inf rows; the compiled
code has no temporary as large as the input."""

import numpy as np
import pytest

import picokernel

FLOATS = [np.float32, np.float64, np.float16]
SHAPES = [(64, 128), (1009, 33), (7, 5), (1, 1000), (1000, 1), (3, 70001),
          (0, 8), (8, 0)]


def softmax(x_ref, o_ref):
    v = x_ref[...]
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    o_ref[...] = e / e.sum(axis=-1, keepdims=True)


def softmax_first_axis(x_ref, o_ref):
    v = x_ref[...]
    e = np.exp(v - v.max(axis=0, keepdims=True))
    o_ref[...] = e / e.sum(axis=0, keepdims=True)


def logsumexp(x_ref, o_ref):
    v = x_ref[...]
    m = v.max(axis=-1, keepdims=True)
    o_ref[...] = m + np.log(np.exp(v - m).sum(axis=-1, keepdims=True))


def layernorm(x_ref, g_ref, b_ref, o_ref):
    v = x_ref[...]
    mean = v.mean(axis=-1, keepdims=True)
    d = v - mean
    o_ref[...] = d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * g_ref[...] + b_ref[...]


def rmsnorm(x_ref, g_ref, o_ref):
    v = x_ref[...]
    o_ref[...] = v / np.sqrt((v * v).mean(axis=-1, keepdims=True) + 1e-6) * g_ref[...]


def variance(x_ref, o_ref):
    v = x_ref[...]
    o_ref[...] = ((v - v.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)


def cross_entropy(x_ref, t_ref, o_ref):
    # -log softmax at the target's one-hot row.
    v = x_ref[...]
    m = v.max(axis=-1, keepdims=True)
    lse = m + np.log(np.exp(v - m).sum(axis=-1, keepdims=True))
    o_ref[...] = ((lse - v) * t_ref[...]).sum(axis=-1)


def reference(kernel, *inputs):
    """The kernel run by NumPy in float64, cast back."""
    wide = [np.asarray(a, np.float64) for a in inputs[:-1]]
    out = np.empty(inputs[-1].shape, np.float64)
    with np.errstate(all="ignore"):
        kernel(*wide, out)
        # Stored in the output's dtype (a float16 result past 65504 is inf).
        return out.astype(inputs[-1].dtype).astype(np.float64)


def tolerance(dtype):
    return {np.float16: 4e-3, np.float32: 2e-5, np.float64: 1e-12}[dtype]


def check(kernel, *inputs):
    out = inputs[-1]
    try:
        expected = reference(kernel, *inputs)
    except ValueError:
        # NumPy refuses (max of an empty row): so does picokernel.
        with pytest.raises(ValueError, match="zero-size"):
            picokernel.kernel(kernel)(*inputs)
        return
    picokernel.kernel(kernel)(*inputs)
    rtol = tolerance(out.dtype.type)
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=rtol,
                               atol=rtol * max(1.0, np.abs(expected).max(initial=0)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax(shape, dtype):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    check(softmax, x, np.empty_like(x))
    check(softmax_first_axis, x, np.empty_like(x))
    check(logsumexp, x, np.empty(shape[:1] + (1,), dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_norms(shape, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) + 0.5).astype(dtype)
    g = rng.standard_normal(shape[1:]).astype(dtype)
    b = rng.standard_normal(shape[1:]).astype(dtype)
    check(layernorm, x, g, b, np.empty_like(x))
    check(rmsnorm, x, g, np.empty_like(x))
    check(variance, x, np.empty(shape[:1], dtype))


@pytest.mark.parametrize("shape", [(64, 10), (4096, 33), (2, 5000)])
def test_cross_entropy(shape):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(np.float32)
    t = np.zeros(shape, np.float32)
    t[np.arange(shape[0]), rng.integers(0, shape[1], shape[0])] = 1
    check(cross_entropy, x, t, np.empty(shape[0], np.float32))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_3d_every_axis(axis):
    def body(x_ref, o_ref):
        v = x_ref[...]
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        o_ref[...] = e / e.sum(axis=axis, keepdims=True)

    body.__name__ = f"softmax_axis{axis}"
    x = np.random.default_rng(3).standard_normal((6, 50, 70)).astype(np.float32)
    check(body, x, np.empty_like(x))


def test_nan_and_inf_rows():
    x = np.random.default_rng(4).standard_normal((256, 64)).astype(np.float32)
    x[3, 7] = np.nan
    x[10, :] = -np.inf
    x[20, 5] = np.inf
    x[30, :] = np.inf
    out = np.empty_like(x)
    picokernel.kernel(softmax)(x, out)
    with np.errstate(all="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        expected = e / e.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=1e-7)


def test_views_and_aliasing():
    rng = np.random.default_rng(5)
    base = rng.standard_normal((300, 200)).astype(np.float32)
    g = rng.standard_normal(100).astype(np.float32)
    b = rng.standard_normal(100).astype(np.float32)
    # Strided input, output a view of another array.
    x = base[::3, 1::2]
    big = np.zeros((100, 300), np.float32)
    check(layernorm, x, g, b, big[:, ::3])
    # In place: the output is the input.
    y = np.ascontiguousarray(x)
    expected = reference(layernorm, y, g, b, y)
    picokernel.kernel(layernorm)(y, g, b, y)
    np.testing.assert_allclose(y, expected, rtol=2e-5, atol=2e-5)

    # In place with rows reversed: every tile writes rows another one reads.
    def reversed_rows(x_ref, o_ref):
        v = x_ref[...]
        o_ref[...] = (v - v.max(axis=-1, keepdims=True))[::-1]

    z = rng.standard_normal((512, 64)).astype(np.float32)
    expected = (z - z.max(axis=-1, keepdims=True))[::-1]
    picokernel.kernel(reversed_rows)(z, z)
    np.testing.assert_array_equal(z, expected)


def test_both_temporaries_stored():
    """exp's result is an output too: both arrays right."""
    def body(x_ref, e_ref, o_ref):
        v = x_ref[...]
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        e_ref[...] = e
        o_ref[...] = e / e.sum(axis=-1, keepdims=True)

    x = np.random.default_rng(6).standard_normal((333, 77)).astype(np.float32)
    e, o = np.empty_like(x), np.empty_like(x)
    picokernel.kernel(body)(x, e, o)
    expected_e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(e, expected_e, rtol=2e-6)
    np.testing.assert_allclose(o, expected_e / expected_e.sum(axis=-1, keepdims=True), rtol=2e-5)


@pytest.mark.parametrize("shape", [(1024, 1024), (64, 65536), (8192, 128)])
def test_no_full_size_temporary(shape):
    x = np.ones(shape, np.float32)
    text = picokernel.kernel(softmax).lower(x, np.empty_like(x), stage="bufferized")
    full = f"memref<{shape[0]}x{shape[1]}xf32>"
    allocs = [line for line in text.splitlines() if "memref.alloc(" in line]
    assert allocs, text
    assert not any(full in line for line in allocs), allocs
    assert "scf.forall" in text


@pytest.mark.parametrize("fn", ["softmax", "layernorm", "rmsnorm"])
@pytest.mark.parametrize("shape", [(1024, 1024), (8192, 128), (2048, 513)])
def test_in_place_rows_make_no_full_size_temporary(fn, shape):
    """k(x, x): each tile reads the rows it then overwrites, so the ref is
    written in place (pk-compute-in-place starts the tile loop from it)
    instead of in a full-size temporary copied back; results match the
    out-of-place call and NumPy."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    if fn == "layernorm":
        g = rng.standard_normal(shape[1]).astype(np.float32)
        arrays = (g, g)
        kernel_fn = layernorm
    elif fn == "rmsnorm":
        g = rng.standard_normal(shape[1]).astype(np.float32)
        arrays = (g,)
        kernel_fn = rmsnorm
    else:
        arrays = ()
        kernel_fn = softmax
    k = picokernel.kernel(kernel_fn)
    text = k.lower(x, *arrays, x, stage="bufferized")
    full = f"memref<{shape[0]}x{shape[1]}xf32>"
    allocs = [line for line in text.splitlines() if "memref.alloc(" in line]
    assert not any(full in line for line in allocs), allocs
    copies = [line for line in text.splitlines() if "memref.copy" in line]
    assert not any(full in line for line in copies), copies
    expected = np.empty_like(x)
    k(x, *arrays, expected)
    np.testing.assert_allclose(expected, reference(kernel_fn, x, *arrays, expected),
                               rtol=2e-5, atol=2e-5)
    y = x.copy()
    k(y, *arrays, y)
    np.testing.assert_array_equal(y, expected)


def test_chains_of_norms_fuse_each_producer_once():
    """A chain of 16 dependent row reductions: each level's reduction and
    subtraction appear once in the tile (a producer read twice is not fused
    twice, which would double the code per level), and the result is
    right."""
    def chain(x_ref, o_ref):
        v = x_ref[...]
        for _ in range(16):
            v = v - v.max(axis=-1, keepdims=True)
        o_ref[...] = v

    x = np.random.default_rng(8).standard_normal((64, 128)).astype(np.float32)
    out = np.empty_like(x)
    kernel = picokernel.kernel(chain)
    text = kernel.lower(x, out, stage="tiled")
    assert "scf.for" in text or "scf.forall" in text
    assert text.count("linalg.generic") <= 2 * 16 + 2, text.count("linalg.generic")
    kernel(x, out)
    np.testing.assert_array_equal(out, reference(chain, x, out).astype(np.float32))
