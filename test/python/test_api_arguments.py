"""Issue 20, item 5: inputs as array-likes (Python and NumPy scalars as 0-d
arrays, lists, objects with __array__ or __dlpack__, converted by NumPy once
per call), outputs writable NumPy arrays, arrays by parameter name; each
mistake a TypeError naming the argument. On every backend that runs here."""

import numpy as np
import pytest

import picokernel

BACKENDS = ["cpu", "numpy"] + (["vulkan"] if picokernel.vulkan_available()[0] else [])


class ArrayInterface:
    """An object NumPy converts through __array__ (as it does a pandas
    Series or a jax array)."""

    def __init__(self, data):
        self.data = np.asarray(data)

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)


class DLPackOnly:
    """An object with only __dlpack__ (numpy.from_dlpack converts it)."""

    def __init__(self, data):
        self.data = np.asarray(data)

    def __dlpack__(self, **kwargs):
        return self.data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.data.__dlpack_device__()


def axpy_kernel(backend):
    def axpy(a, x, y, o):
        o[...] = a[...] * x[...] + y[...]
    return picokernel.kernel(axpy, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_array_like_inputs(backend):
    k = axpy_kernel(backend)
    x = np.arange(4.0)
    cases = [
        ((2.0, x, 1.0), 2.0 * x + 1.0),                 # Python floats: 0-d float64
        ((np.float32(3), [1, 2, 3, 4], 0), 3 * np.array([1, 2, 3, 4.0])),
        ((True, x, np.int8(2)), x + 2),                 # bool, NumPy scalars
        ((ArrayInterface(2.0), ArrayInterface(x), 0), 2 * x),
        ((DLPackOnly(np.float64(1.5)), DLPackOnly(x), x), 2.5 * x),
        (([[1.0]], x, [0, 0, 0, 1]), x + [0, 0, 0, 1]),  # nested lists broadcast
    ]
    for args, want in cases:
        o = np.zeros(4)
        k(*args, o)
        np.testing.assert_array_equal(o, want, err_msg=f"{backend}: {args!r}")


def test_python_numbers_are_numpys_default_dtypes():
    # As numpy.asarray converts them: an argument is an array, not a weak
    # Python number inside the kernel (float32 * a float argument is float64).
    @picokernel.kernel
    def product(x, s, o):
        o[...] = x[...] * s[...]

    x, o = np.full(3, 1 / 3, np.float32), np.zeros(3)
    product(x, 3.0, o)
    np.testing.assert_array_equal(o, x.astype(np.float64) * 3.0)
    assert "LOAD [s]()" in product.show_ir() and "<:float64> = LOAD [s]" in product.show_ir()


@pytest.mark.parametrize("backend", BACKENDS)
def test_keywords(backend):
    k = axpy_kernel(backend)
    x, o = np.arange(3.0), np.zeros(3)
    k(a=2.0, x=x, y=1.0, o=o)
    np.testing.assert_array_equal(o, 2 * x + 1)
    k(3.0, x, o=o, y=x)
    np.testing.assert_array_equal(o, 4 * x)
    for call, message in [
        (lambda: k(1, x, 0, o, y=1), "got multiple values for argument 'y'"),
        (lambda: k(1, x, 0, z=o), r"unexpected keyword argument 'z' \(its arrays: a, x, y, o\)"),
        (lambda: k(1, x, o=o), r"missing the array 'y' \(its arrays: a, x, y, o\)"),
        (lambda: k(1, x, 0, o, o), r"takes 4 arrays \(a, x, y, o\), got 5"),
    ]:
        with pytest.raises(TypeError, match=message):
            call()


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_must_be_writable_arrays(backend):
    k = axpy_kernel(backend)
    x = np.arange(3.0)
    for output in ([0.0, 0.0, 0.0], ArrayInterface(np.zeros(3)), DLPackOnly(np.zeros(3))):
        with pytest.raises(TypeError, match="argument 'o' must be a writable numpy.ndarray"):
            k(1.0, x, 0.0, output)

    def total(x, o):
        o[...] = x[...].sum()

    for output in (0.0, np.float64(0), [5.0]):
        with pytest.raises(TypeError, match="argument 'o' must be a writable numpy.ndarray"):
            picokernel.kernel(total, backend=backend)(x, output)


def test_arguments_numpy_cannot_convert():
    k = axpy_kernel("cpu")
    o = np.zeros(2)
    with pytest.raises(TypeError, match="argument 'x' must be an array or convertible.*"
                                        "inhomogeneous"):
        k(1.0, [[1.0], [1.0, 2.0]], 0.0, o)
    with pytest.raises(TypeError, match="argument 'x' has dtype"):
        k(1.0, ["a", "b"], 0.0, o)
    with pytest.raises(TypeError, match="argument 'x' has dtype object"):
        k(1.0, [object(), object()], 0.0, o)


def test_a_read_only_array_written():
    k = axpy_kernel("cpu")
    o = np.zeros(3)
    o.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        k(1.0, np.ones(3), 0.0, o)


def test_keywords_must_be_strings_and_may_name_self():
    k = axpy_kernel("cpu")
    with pytest.raises(TypeError, match="keywords must be strings"):
        k(1.0, np.ones(2), **{1: np.zeros(2)})

    for backend in BACKENDS:
        def copy(self, stage, o):
            o[...] = self[...] + stage[...]
        o = np.zeros(2)
        picokernel.kernel(copy, backend=backend)(stage=np.ones(2), self=np.ones(2), o=o)
        assert o.tolist() == [2.0, 2.0], backend


def test_trace_kernel_checks_its_shapes():
    def copy(x, o):
        o[...] = x[...]
    for shapes in ([(2.0,), (2,)], [(2**64,), (2,)], [(-1,), (2,)]):
        with pytest.raises(TypeError, match="trace_kernel: the shape of argument 'x' must"):
            picokernel.trace_kernel(copy, shapes)
