"""Slices of dynamic sizes: `x[1:-1]`, `x[::2]`, `x[2:]` in a kernel for
every size agree with NumPy at every size (0, 1, shorter than the slice's
bounds, long), one compile serving them all; slices of a constant size,
with both bounds counted from the start (`x[:4]`, `x[2]`, `x[3::-1]`) or
from the end (`x[-3:]`, `x[-1]`, `x[:-3:-1]`), serve every size large
enough to hold them from one compile, and each shorter size from its own;
slices backwards from the end to the start (`x[::-1]`, `x[-3::-2]`) serve
every size; slices that start from one end and stop from the other (`x[-5:4]`,
`x[4:-4:-1]`) keep their dimension static, and still agree with NumPy."""

import itertools

import numpy as np
import pytest

import picokernel

SIZES = list(range(0, 13)) + [31, 100, 1001, 4099]

BOUNDS = [None, 0, 1, 2, 5, -1, -2, -5]
STEPS = [1, 2, 3, 7, -1, -2]


def slice_text(start, stop, step):
    text = lambda b: "" if b is None else str(b)
    return f"{text(start)}:{text(stop)}:{step}"


def follows_the_end(start, stop, step):
    """Whether the slice's length follows the dimension's (start counted
    from the start, stop from the end, forwards; or backwards from the end
    to the start): those take dynamic sizes."""
    return ((step > 0 and (start is None or start >= 0)
             and (stop is None or stop < 0))
            or (step < 0 and (start is None or start < 0) and stop is None))


def constant_minimum(start, stop, step):
    """For a slice of a constant size at a constant place relative to the
    start or the end of every dimension that holds it (and of no shorter
    one): the least size that does (0 if it takes none); else None."""
    def indices(n):
        return list(range(*slice(start, stop, step).indices(n)))
    big = 10**6
    final = indices(big)
    from_start = (max(final) + 1 if final else 0,
                  lambda n: indices(n) == final)
    from_end = (big - min(final) if final else 0,
                lambda n: [i - n for i in indices(n)] == [i - big for i in final])
    for least, same in (from_start, from_end):
        if all(same(n) for n in list(range(least, 200)) + [big + 7]) and (
                least == 0 or not same(least - 1)):
            return least
    return None


def update_kernel(index, **options):
    namespace = {}
    exec("def update(x, o):\n"
         "    o[...] = x[...]\n"
         f"    o[{index}] = x[{index}] * 2 + 1\n", namespace)
    return picokernel.kernel(namespace["update"], **options)


def expected_update(x, index):
    o = x.copy()
    part = eval(f"x[{index}]")
    exec(f"o[{index}] = part * 2 + 1")
    return o


SPECS = [(start, stop, step)
         for start, stop, step in itertools.product(BOUNDS, BOUNDS, STEPS)]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: slice_text(*s))
def test_every_slice_at_every_size(spec):
    index = slice_text(*spec)
    kernel = update_kernel(index, dynamic=True)
    for n in SIZES:
        x = np.arange(n, dtype=np.float64) * 1.5 - 3
        o = np.full(n, np.nan)
        kernel(x, o)
        np.testing.assert_array_equal(o, expected_update(x, index),
                                      err_msg=f"x[{index}] with n={n}")
    # Sizes 0 and 1 are part of the key; the rest share one kernel where
    # the slice follows the end, or those that hold a fixed slice do.
    misses = kernel.cache_info().misses
    least = constant_minimum(*spec)
    if follows_the_end(*spec):
        assert misses == 3, index
    elif least is not None:
        shorter = [n for n in SIZES if 2 <= n < least]
        assert misses == 3 + len(shorter), (index, misses)


def test_stencil_compiles_once():
    @picokernel.kernel(dynamic=True)
    def smooth(x, o):
        o[...] = x[...]
        o[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]

    for n in [3, 4, 10, 1000, 1001, 100_003, 2]:
        x = np.random.default_rng(n).standard_normal(n)
        o = np.empty(n)
        smooth(x, o)
        expected = x.copy()
        expected[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]
        np.testing.assert_array_equal(o, expected)
    assert smooth.cache_info().misses == 1


def test_automatic_policy_makes_the_stencil_dynamic():
    @picokernel.kernel
    def smooth(x, o):
        o[...] = x[...]
        o[1:-1] = (x[2:] + x[:-2]) * 0.5

    for n in range(50, 60):
        x = np.arange(n, dtype=np.float32) ** 2
        o = np.empty_like(x)
        smooth(x, o)
        expected = x.copy()
        expected[1:-1] = (x[2:] + x[:-2]) * np.float32(0.5)
        np.testing.assert_array_equal(o, expected)
    assert smooth.cache_info().misses == 2


def test_2d_laplacian_over_both_dimensions():
    @picokernel.kernel(dynamic=True)
    def laplacian(x, o):
        o[...] = 0
        o[1:-1, 1:-1] = (x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:]
                         + x[1:-1, :-2] - 4 * x[1:-1, 1:-1])

    for shape in [(5, 7), (6, 9), (2, 3), (3, 2), (64, 33), (4, 5)]:
        x = np.random.default_rng(shape[0]).standard_normal(shape)
        o = np.full(shape, np.nan)
        laplacian(x, o)
        expected = np.zeros(shape)
        expected[1:-1, 1:-1] = (x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:]
                                + x[1:-1, :-2] - 4 * x[1:-1, 1:-1])
        np.testing.assert_allclose(o, expected, rtol=0, atol=1e-12)
    assert laplacian.cache_info().misses == 1


def test_strided_slices_of_slices_and_broadcast_scalars():
    @picokernel.kernel(dynamic=True)
    def pairs(x, o):
        o[...] = x[...]
        o[1::2] = x[1:][::2] + 0.5
        o[2:-2:2] = x[::2][1:-1] * 3
        o[3::7] = -1

    for n in [2, 3, 4, 5, 6, 7, 20, 21, 1000, 1003]:
        x = np.arange(n, dtype=np.float64)
        o = np.empty(n)
        pairs(x, o)
        expected = x.copy()
        expected[1::2] = x[1:][::2] + 0.5
        expected[2:-2:2] = x[::2][1:-1] * 3
        expected[3::7] = -1
        np.testing.assert_array_equal(o, expected, err_msg=f"n={n}")
    assert pairs.cache_info().misses == 1


def test_sums_and_maxima_of_slices():
    @picokernel.kernel(dynamic=True)
    def edges(x, o):
        o[...] = x[:, 1:].max(axis=1) + x[:, :-1].sum(axis=1) * 0 + x[:, 0]

    for rows in [3, 4, 50]:
        x = np.random.default_rng(rows).standard_normal((rows, 6))
        o = np.empty(rows)
        edges(x, o)
        np.testing.assert_array_equal(o, x[:, 1:].max(axis=1) + x[:, 0])
    assert edges.cache_info().misses == 1


def test_ir_shows_dynamic_bounds():
    @picokernel.kernel(dynamic=True)
    def smooth(x, o):
        o[...] = x[...]
        o[1:-1] = x[2:] + x[:-2]

    smooth(np.arange(10.0), np.empty(10))
    ir = smooth.ir
    assert "pk.extract_slice" in ir.mlir and "tensor<?xf64>" in ir.mlir
    assert "pk.index" not in ir.mlir
    assert "SLICE(v" in ir.listing and "2:2+v" in ir.listing, ir.listing
    assert "pk.slice_size" in ir.mlir


def ahead_of_time(kernel, name, tmp_path):
    """The last compile of `kernel` (named `name`) built ahead of time: its
    C header and its entry point (ctypes, returning int); skips where the
    tools are not built."""
    import ctypes
    import os
    import shutil
    import subprocess

    translate = shutil.which("pk-translate",
                             path=os.environ.get("PK_BIN_DIR") or None)
    cc = shutil.which("clang-22") or shutil.which("cc")
    if translate is None or cc is None:
        pytest.skip("pk-translate is not built (ctest sets PK_BIN_DIR)")
    source = tmp_path / f"{name}.mlir"
    source.write_text(kernel.ir.mlir)
    header = subprocess.run([translate, "--pk-to-c-header", str(source)],
                            capture_output=True, text=True, check=True).stdout
    obj, lib = tmp_path / f"{name}.o", tmp_path / f"lib{name}.so"
    subprocess.run([translate, "--pk-to-object", str(source), "-o", str(obj)],
                   check=True)
    subprocess.run([cc, "-shared", str(obj), "-o", str(lib), "-lm"], check=True)
    entry = getattr(ctypes.CDLL(str(lib)), f"pk_{name}")
    entry.restype = ctypes.c_int
    return header, entry


def test_ahead_of_time_stencil_takes_one_size(tmp_path):
    """The traced dynamic stencil, compiled ahead of time: its entry point
    takes one size for x and o (a slice's size is computed from the size it
    slices) and agrees with NumPy at every size, 0 and 1 included."""
    import ctypes
    import re

    @picokernel.kernel(dynamic=True)
    def smooth(x, o):
        o[...] = x[...]
        o[1:-1] = x[2:] + x[:-2] - x[1:-1] * 2

    smooth(np.arange(10.0), np.empty(10))
    header, entry = ahead_of_time(smooth, "smooth", tmp_path)
    assert re.search(r"int pk_smooth\(int64_t n, const double \*\w+, "
                     r"double \*\w+\);", header), header
    pointer = ctypes.POINTER(ctypes.c_double)
    entry.argtypes = [ctypes.c_int64, pointer, pointer]
    for n in [0, 1, 2, 3, 4, 17, 1000]:
        x = np.random.default_rng(n).standard_normal(n)
        o = np.full(n, np.nan)
        assert entry(n, x.ctypes.data_as(pointer), o.ctypes.data_as(pointer)) == 0
        expected = x.copy()
        expected[1:-1] = x[2:] + x[:-2] - x[1:-1] * 2
        np.testing.assert_array_equal(o, expected, err_msg=f"n={n}")
    assert entry(-1, None, None) == 1


def test_fixed_slices_serve_every_long_size():
    """Rows taken by integer index and a backwards head (`x[0]`, `x[2]`,
    `x[3::-1]`) take the same elements of every long enough dimension: one
    compile serves every such size, and each shorter size gets its own
    (NumPy's answer there, or its IndexError)."""
    @picokernel.kernel(dynamic=True)
    def rows(x, o):
        o[...] = x[0] + x[2]

    for m, n in [(3, 5), (4, 7), (9, 2), (31, 100), (1000, 3)]:
        x = np.random.default_rng(m).standard_normal((m, n))
        o = np.empty(n)
        rows(x, o)
        np.testing.assert_array_equal(o, x[0] + x[2], err_msg=f"{m}x{n}")
    assert rows.cache_info().misses == 1
    with pytest.raises(IndexError, match="index 2 is out of bounds"):
        rows(np.zeros((2, 5)), np.empty(5))

    @picokernel.kernel(dynamic=True)
    def head(x, o):
        o[...] = x[3::-1] * 2

    for n in [4, 5, 17, 1000, 3, 2]:
        x = np.arange(n, dtype=np.float32)
        o = np.empty(min(n, 4), np.float32)
        head(x, o)
        np.testing.assert_array_equal(o, x[3::-1] * 2, err_msg=f"n={n}")
    # 4 (x as long as o, one size), every longer size, 3 and 2.
    assert head.cache_info().misses == 4


def test_automatic_policy_makes_a_fixed_slice_dynamic():
    @picokernel.kernel
    def window(x, w, o):
        o[...] = x[1:5] * w[...]

    w = np.arange(4.0)
    for n in range(50, 60):
        x = np.arange(n, dtype=np.float64) ** 2
        o = np.empty(4)
        window(x, w, o)
        np.testing.assert_array_equal(o, x[1:5] * w)
    assert window.cache_info().misses == 2


def test_ahead_of_time_fixed_slice_checks_its_minimum(tmp_path):
    """A kernel taking x[:4] of a dynamic size, compiled ahead of time:
    its header says n >= 4, and the entry point returns 1 without running
    below that."""
    import ctypes

    @picokernel.kernel(dynamic=True)
    def head(x, o):
        o[...] = x[:4] + 1

    head(np.arange(10.0), np.empty(4))
    header, entry = ahead_of_time(head, "head", tmp_path)
    assert "n >= 4 */" in header, header
    pointer = ctypes.POINTER(ctypes.c_double)
    entry.argtypes = [ctypes.c_int64, pointer, pointer]
    for n in [4, 5, 1000]:
        x = np.random.default_rng(n).standard_normal(n)
        o = np.full(4, np.nan)
        assert entry(n, x.ctypes.data_as(pointer), o.ctypes.data_as(pointer)) == 0
        np.testing.assert_array_equal(o, x[:4] + 1, err_msg=f"n={n}")
    o = np.full(4, np.nan)
    x = np.zeros(3)
    assert entry(3, x.ctypes.data_as(pointer), o.ctypes.data_as(pointer)) == 1
    assert np.isnan(o).all()


def test_slices_from_the_end_serve_every_long_size():
    """The last row, the last three and the last two backwards (`x[-1]`,
    `x[-3:]`, `x[:-3:-1]`) start at the size less a constant: one compile
    serves every size that holds them, in loads and stores."""
    @picokernel.kernel(dynamic=True)
    def ends(x, o, p):
        o[...] = x[-1] - x[0]
        p[...] = x[...]
        p[-3:] = x[-3:] * 2
        p[:-3:-1] = x[1:3] + 1

    for m, n in [(3, 5), (4, 7), (9, 2), (31, 100), (1000, 3)]:
        x = np.random.default_rng(m).standard_normal((m, n))
        o, p = np.empty(n), np.empty((m, n))
        ends(x, o, p)
        np.testing.assert_array_equal(o, x[-1] - x[0], err_msg=f"{m}x{n}")
        expected = x.copy()
        expected[-3:] = x[-3:] * 2
        expected[:-3:-1] = x[1:3] + 1
        np.testing.assert_array_equal(p, expected, err_msg=f"{m}x{n}")
    assert ends.cache_info().misses == 1
    assert "pk.slice_size" in ends.ir.mlir


def test_reversed_dimensions_serve_every_size():
    """`x[::-1]` and `x[-2::-3]` of every size (0 and 1 included, which are
    part of the key), in loads and stores, one compile for sizes from 2."""
    @picokernel.kernel(dynamic=True)
    def flipped(x, o):
        o[...] = x[::-1, ::-1] - x[...]
        o[-2::-3, 1] = x[-2::-3, 0] * 3

    for m, n in [(3, 5), (4, 7), (9, 2), (31, 100), (2, 2)]:
        x = np.random.default_rng(m).standard_normal((m, n))
        o = np.empty((m, n))
        flipped(x, o)
        expected = x[::-1, ::-1] - x
        expected[-2::-3, 1] = x[-2::-3, 0] * 3
        np.testing.assert_array_equal(o, expected, err_msg=f"{m}x{n}")
    # (2, 2): one size for both dimensions.
    assert flipped.cache_info().misses == 2


def test_a_first_size_too_short_for_a_slice_leaves_longer_ones_dynamic():
    """A first call whose size is too short for a slice (x[1:4] of 3
    elements takes 2) compiles for itself; every longer size then shares
    one compile, with either policy."""
    for policy, sizes, compiles in [(True, [3, 10, 20, 30, 40], 2),
                                    (None, [8, 3, 9, 10, 11], 3)]:
        @picokernel.kernel(dynamic=policy)
        def window(x, o):
            o[...] = x[1:4] * 2

        for n in sizes:
            x = np.arange(n, dtype=np.float32)
            o = np.empty(len(x[1:4]), np.float32)
            window(x, o)
            np.testing.assert_array_equal(o, x[1:4] * 2, err_msg=f"n={n}")
        assert window.cache_info().misses == compiles, policy


def test_ir_after_a_call_that_raises_is_the_last_compile():
    """A size too short for `x[-2]` raises NumPy's IndexError; the kernel's
    IR is still that of its last compile (which did not fail)."""
    @picokernel.kernel(dynamic=True)
    def second_last(x, o):
        o[...] = x[-2]

    second_last(np.arange(9.0), np.zeros(()))
    with pytest.raises(IndexError, match="out of bounds"):
        second_last(np.arange(1.0), np.zeros(()))
    assert "pk.slice_size" in second_last.ir.mlir
