"""Static slicing and integer indexing of refs and values (NumPy's basic
indexing with constants), on load and store, on every backend."""

import numpy as np
import pytest

import picokernel

BACKENDS = ["cpu"] + (["vulkan"] if picokernel.vulkan_available()[0] else [])

# Keys for a (5, 6) array, as NumPy spells them.
KEYS = [
    np.s_[1:3], np.s_[:, 1:3], np.s_[::2], np.s_[::-1], np.s_[1], np.s_[-1],
    np.s_[..., 2], np.s_[2, ::-2], np.s_[1:4, ::-3], np.s_[-100:100],
    np.s_[:, -1:0:-1], np.s_[np.int64(2)], np.s_[4:1:-2, 3], np.s_[3, 4],
    np.s_[:, 5:], np.s_[1:2, :], np.s_[::7], np.s_[10:],
]


def reads(key):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[key] * 2 + 1
    return kernel


def writes(key):
    def kernel(v_ref, o_ref):
        o_ref[key] = v_ref[...]
    return kernel


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_load_slices_like_numpy(backend, key):
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    expected = x[key] * 2 + 1
    o = np.full(expected.shape, -7, np.float32)
    picokernel.kernel(reads(key), backend=backend)(x, o)
    np.testing.assert_array_equal(o, expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_store_to_slices_like_numpy(backend, key):
    o = np.arange(30, dtype=np.int32).reshape(5, 6)
    v = np.asarray(-np.arange(o[key].size, dtype=np.int32) - 1).reshape(
        o[key].shape)
    expected = o.copy()
    expected[key] = v
    picokernel.kernel(writes(key), backend=backend)(v, o)
    np.testing.assert_array_equal(o, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_stores_broadcast_cast_and_accumulate(backend):
    def kernel(x_ref, row_ref, o_ref):
        o_ref[...] = 0
        o_ref[1:3] = row_ref[...]          # broadcast a row
        o_ref[:, ::2] += 0.5               # float into float32 slices
        o_ref[-1, 1:] = x_ref[0, :-1] * 2  # int64 -> float32 (same kind)
        o_ref[0] = o_ref[1] + o_ref[2]     # reads earlier stores

    x = np.arange(24).reshape(4, 6)
    row = np.linspace(-1, 1, 6, dtype=np.float32)
    o = np.empty((4, 6), np.float32)
    picokernel.kernel(kernel, backend=backend)(x, row, o)
    expected = np.zeros((4, 6), np.float32)
    expected[1:3] = row
    expected[:, ::2] += 0.5
    expected[-1, 1:] = x[0, :-1] * 2
    expected[0] = expected[1] + expected[2]
    np.testing.assert_array_equal(o, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlapping_reads_and_writes_see_the_old_contents(backend):
    # NumPy copies an overlapping right-hand side first; so does picokernel.
    def shift(x_ref):
        x_ref[1:] = x_ref[:-1]

    def reverse(x_ref):
        x_ref[::-1] = x_ref[...]

    def swap_halves(m_ref):
        m = m_ref[...]
        m_ref[:, ::2] = m[:, 1::2] * 10
        m_ref[:, 1::2] = m[:, ::2]

    for fn in (shift, reverse):
        x = np.arange(9.0)
        expected = x.copy()
        fn(expected)
        picokernel.kernel(fn, backend=backend)(x)
        np.testing.assert_array_equal(x, expected)
    m = np.arange(12, dtype=np.int64).reshape(3, 4)
    expected = m.copy()
    expected[:, ::2], expected[:, 1::2] = m[:, 1::2] * 10, m[:, ::2]
    picokernel.kernel(swap_halves, backend=backend)(m)
    np.testing.assert_array_equal(m, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_values_slice_like_arrays(backend):
    def kernel(x_ref, o_ref):
        x = np.exp(x_ref[...])
        o_ref[...] = x[1:][::2, ::-1] - x[0]

    # float32: Vulkan has no float64 exp.
    x = np.linspace(-2, 2, 35, dtype=np.float32).reshape(7, 5)
    o = np.empty((3, 5), np.float32)
    picokernel.kernel(kernel, backend=backend)(x, o)
    e = np.exp(x)
    np.testing.assert_allclose(o, e[1:][::2, ::-1] - e[0], rtol=1e-6, atol=1e-6)


def test_slice_stencil_fuses_into_one_loop_without_temporaries():
    def diff(x_ref, o_ref):
        o_ref[...] = x_ref[1:] - x_ref[:-1]

    kernel = picokernel.kernel(diff)
    x = np.cumsum(np.arange(100, dtype=np.float64))
    o = np.empty(99)
    kernel(x, o)
    np.testing.assert_array_equal(o, np.diff(x))
    bufferized = str(kernel.lower(x, o, stage="bufferized"))
    assert bufferized.count("linalg.generic") == 1
    assert "memref.alloc" not in bufferized
    assert bufferized.count("memref.subview") == 2


@pytest.mark.parametrize(
    "expression, error, message",
    [
        ("m[0, 0, 0]", IndexError,
         "too many indices for array: array is 2-dimensional, but 3 were indexed"),
        ("m[3]", IndexError, "index 3 is out of bounds for axis 0 with size 3"),
        ("m[:, -5]", IndexError, "index -5 is out of bounds for axis 1 with size 4"),
        ("m[::0]", ValueError, "slice step cannot be zero"),
        ("m[..., ...]", IndexError, "an index can only have a single ellipsis"),
        ("m[None]", IndexError, "got None (np.newaxis"),
        ("m[True]", IndexError, "got True"),
        ("m[[0, 1]]", IndexError, "got [0, 1]"),
        ("m[m[0, 0]]", IndexError, "got <picokernel.Value"),
        ("m[0.5]", IndexError, "got 0.5"),
    ],
)
def test_bad_indices_are_clear_errors(expression, error, message):
    namespace = {}
    exec(f"def kernel(m_ref, o_ref):\n"
         f"    m = m_ref\n"
         f"    o_ref[...] = {expression}\n", namespace)
    with pytest.raises(error) as info:
        picokernel.kernel(namespace["kernel"])(np.zeros((3, 4)), np.zeros(4))
    assert message in str(info.value)


def test_store_errors_name_the_slice_and_the_line():
    def kernel(x_ref, o_ref):
        o_ref[1:3] = x_ref[...]

    with pytest.raises(ValueError) as info:
        picokernel.kernel(kernel)(np.zeros(3), np.zeros(4))
    assert ("a value of shape (3,) cannot be stored into a slice of ref "
            "'o_ref' of shape (2,)") in str(info.value)
    assert f"test_slicing.py:{kernel.__code__.co_firstlineno + 1}" in str(info.value)

    def to_int(x_ref, o_ref):
        o_ref[::2] = x_ref[...]

    with pytest.raises(TypeError, match="same_kind"):
        picokernel.kernel(to_int)(np.zeros(2), np.zeros(4, np.int32))


def random_part(rng, size, length):
    """A slice of `length` elements of a dimension of `size`, as source."""
    step = int(rng.choice([1, 1, 2, -1, -2, 3]))
    while (length - 1) * abs(step) >= size:
        step = 1 if step > 0 else -1
    span = (length - 1) * abs(step)
    if step > 0:
        start = int(rng.integers(0, size - span))
    else:
        start = int(rng.integers(span, size))
    stop = start + length * step
    if stop < 0:
        stop = ""
    elif rng.random() < 0.3 and stop >= size:
        stop = ""
    # Negative positions count from the end: use them now and then.
    if rng.random() < 0.3:
        start -= size
    return f"{start}:{stop}:{step}" if step != 1 else f"{start}:{stop}"


def random_slicing_kernel(rng, shape):
    """Statements `x[T] (op)= x[S] op y[U]` over random parts of one shape,
    updating x in place (so parts read what earlier statements wrote)."""
    lines = []
    for _ in range(int(rng.integers(1, 5))):
        lengths = [int(rng.integers(1, n + 1)) for n in shape]
        keys = [", ".join(random_part(rng, n, length)
                          for n, length in zip(shape, lengths))
                for _ in range(3)]
        # An integer index on the first axis of every part, now and then.
        if lengths[0] == 1 and rng.random() < 0.5:
            keys = [f"{int(rng.integers(0, shape[0]))}, " + key.split(", ", 1)[1]
                    for key in keys]
        op = ["+", "-", "*"][int(rng.integers(3))]
        assign = ["=", "+=", "*="][int(rng.integers(3))]
        lines.append(f"    x[{keys[0]}] {assign} x[{keys[1]}] {op} y[{keys[2]}]")
    return "def kernel(y, x):\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(60))
def test_random_in_place_slicing_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 6)), int(rng.integers(1, 9)))
    source = random_slicing_kernel(rng, shape)
    namespace = {}
    exec(source, namespace)
    y = rng.integers(-5, 5, shape).astype(np.int64)
    x = rng.integers(-5, 5, shape).astype(np.int64)
    expected = x.copy()
    namespace["kernel"](y, expected)
    backends = BACKENDS if seed % 4 == 0 else ["cpu"]
    for backend in backends:
        out = x.copy()
        picokernel.kernel(namespace["kernel"], backend=backend)(y, out)
        np.testing.assert_array_equal(out, expected, err_msg=f"{backend}\n{source}")
