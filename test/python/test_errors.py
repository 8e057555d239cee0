"""Bad input is a Python exception with a clear message, never a crash."""

import sys

import numpy as np
import pytest

import picokernel


@picokernel.kernel
def add(a_ref, b_ref, o_ref):
    o_ref[...] = a_ref[...] + b_ref[...]


def f32(*shape):
    return np.ones(shape, np.float32)


def test_indexing_beyond_constant_basic_indexing():
    @picokernel.kernel
    def masked(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = x[x > 0]

    with pytest.raises(IndexError, match="no boolean masks, index arrays or traced values"):
        masked(f32(4), f32(2))

    @picokernel.kernel
    def out_of_bounds(x_ref, o_ref):
        o_ref[...] = x_ref[...][4]

    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        out_of_bounds(f32(4), f32(4))


def test_incompatible_shapes():
    with pytest.raises(ValueError, match=r"add: operands of shapes \(3,\) and \(4,\) cannot be broadcast together"):
        add(f32(3), f32(4), f32(4))


def test_error_names_the_users_line():
    with pytest.raises(ValueError, match=r"test_kernel_ops_line\.py:\d+: error"):
        exec(compile(
            "import picokernel, numpy as np\n"
            "@picokernel.kernel\n"
            "def k(a_ref, o_ref):\n"
            "    o_ref[...] = a_ref[...] + np.ones(5, np.float32)\n"
            "k(np.ones(3, np.float32), np.ones(3, np.float32))\n",
            "test_kernel_ops_line.py", "exec"), {})


def test_wrong_number_of_arguments():
    with pytest.raises(TypeError, match=r"add\(\) takes 3 arrays \(a_ref, b_ref, o_ref\), got 2"):
        add(f32(3), f32(3))


def test_array_like_outputs():
    # Inputs may be array-likes (test_api_arguments.py); an output may not.
    with pytest.raises(TypeError, match="argument 'o_ref' must be a writable numpy.ndarray: "
                                        "kernel 'add' writes to it \\(got list\\)"):
        add(f32(3), [1.0, 2.0, 3.0], [0.0, 0.0, 0.0])


def test_unsupported_dtypes():
    with pytest.raises(TypeError, match="argument 'a_ref' has dtype float128"):
        add(np.ones(3, np.longdouble), f32(3), f32(3))
    with pytest.raises(TypeError, match="dtype complex128"):
        add(np.ones(3, complex), f32(3), f32(3))


def test_complex_numbers_in_a_kernel_name_themselves_and_the_line():
    # NumPy would compute in complex128; picokernel has no complex dtypes.
    line = None

    def scaled(a_ref, o_ref):
        nonlocal line
        line = sys._getframe().f_lineno + 1
        o_ref[...] = a_ref[...] * 1j

    def scaled_numpy(a_ref, o_ref):
        o_ref[...] = a_ref[...] * np.complex64(2)

    for body, what in ((scaled, "complex numbers"),
                       (scaled_numpy, "arrays of dtype complex64")):
        with pytest.raises(TypeError, match=f"picokernel does not support {what} "
                                            r"\(supported: bool, "):
            picokernel.kernel(body)(f32(3), f32(3))
    with pytest.raises(TypeError, match=f"test_errors.py:{line}:.*complex numbers"):
        picokernel.kernel(scaled)(f32(3), f32(3))


def test_output_of_the_wrong_shape():
    with pytest.raises(ValueError, match=r"store to 'o_ref': a value of shape \(3,\) cannot be stored into ref 'o_ref' of shape \(2,\)"):
        add(f32(3), f32(3), f32(2))


def test_output_of_the_wrong_dtype():
    with pytest.raises(TypeError, match="cannot store float32 values into ref 'o_ref' of dtype int32"):
        add(f32(3), f32(3), np.ones(3, np.int32))


def test_read_only_output():
    o = f32(3)
    o.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'o_ref' is read-only, but kernel 'add' writes to it"):
        add(f32(3), f32(3), o)
    # Read-only inputs are fine.
    a = f32(3)
    a.flags.writeable = False
    out = np.zeros(3, np.float32)
    add(a, a, out)
    assert (out == 2).all()


def test_huge_broadcast_views():
    """A broadcast view whose contiguous copy cannot exist: NumPy's own
    MemoryError, not a crash; zero-size arrays with huge dimensions run."""
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32),
                                           shape=(2**30, 2**30), strides=(0, 0))
    with pytest.raises(MemoryError):
        add(huge, huge, np.zeros((1, 1), np.float32))
    empty = np.zeros((2**20, 0, 2**20), np.float32)
    add(empty, empty, empty.copy())


def test_no_store():
    @picokernel.kernel
    def lazy(x_ref, o_ref):
        x_ref[...] * 2

    with pytest.raises(ValueError, match="kernel 'lazy' stores to no ref"):
        lazy(f32(3), f32(3))


def test_unsupported_operand_types():
    @picokernel.kernel
    def with_list(x_ref, o_ref):
        o_ref[...] = x_ref[...] + [1, 2, 3]

    with pytest.raises(TypeError, match="unsupported operand type"):
        with_list(f32(3), f32(3))

    @picokernel.kernel
    def store_string(x_ref, o_ref):
        o_ref[...] = "hello"

    with pytest.raises(TypeError, match="cannot store a str into ref 'o_ref'"):
        store_string(f32(3), f32(3))


def test_dtype_rules():
    @picokernel.kernel
    def minus(p_ref, o_ref):
        o_ref[...] = p_ref[...] - p_ref[...]

    with pytest.raises(TypeError, match="boolean subtract"):
        minus(np.ones(3, bool), np.ones(3, bool))

    @picokernel.kernel
    def big(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 300

    with pytest.raises(OverflowError, match="integer scalar 300 is out of bounds for int8"):
        big(np.ones(3, np.int8), np.ones(3, np.int8))


def test_data_dependent_control_flow():
    @picokernel.kernel
    def branchy(x_ref, o_ref):
        if x_ref[...]:
            o_ref[...] = x_ref[...]

    with pytest.raises(TypeError, match="no concrete value while tracing"):
        branchy(f32(3), f32(3))


def test_stores_into_a_slice_of_a_slice_say_where_stores_go():
    @picokernel.kernel
    def chained(x_ref, o_ref):
        o_ref[...] = x_ref[...]
        o_ref[1:][-3:] = x_ref[:3]

    with pytest.raises(TypeError, match=r"stores go to a ref with one index, "
                                        r"e.g. o\[-3:\] = v"):
        chained(f32(5), f32(5))


def test_kernel_raising_midway_leaves_a_working_kernel():
    calls = []

    @picokernel.kernel
    def flaky(x_ref, o_ref):
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("user error midway")
        o_ref[...] = x_ref[...] + 1

    with pytest.raises(KeyError, match="user error midway"):
        flaky(f32(3), f32(3))
    o = np.zeros(3, np.float32)
    flaky(f32(3), o)
    assert (o == 2).all()
    assert flaky.cache_info().entries == 1


def test_bad_kernel_functions():
    with pytest.raises(TypeError, match="parameter 'refs' must be a plain positional parameter"):
        picokernel.kernel(lambda *refs: None)
    with pytest.raises(TypeError, match="takes no refs"):
        picokernel.kernel(lambda: None)
    with pytest.raises(TypeError, match="expects a function"):
        picokernel.kernel(42)


def test_partial_overlap_with_read_only_memory():
    x = np.arange(10, dtype=np.float32)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        add(x[:-1], x[:-1], x[1:])


def test_bad_options_name_themselves():
    def f(x, o):
        o[...] = x[...]
    with pytest.raises(ValueError, match="parallel threshold must be at least 0"):
        picokernel.kernel(f, parallel_threshold=-1)
    with pytest.raises(ValueError, match="workgroup_size must be positive"):
        picokernel.kernel(f, backend="vulkan", workgroup_size=0)
    with pytest.raises(ValueError, match="unknown backend"):
        picokernel.kernel(f, backend="cuda")
    with pytest.raises(TypeError, match="dynamic must be None"):
        picokernel.kernel(f, dynamic="yes")
    serial = picokernel.kernel(f, parallel_threshold=0)
    x, o = np.arange(5.0), np.zeros(5)
    serial(x, o)
    np.testing.assert_array_equal(o, x)


def test_arrays_by_keyword_name_their_mistakes():
    # (Keywords themselves: test_api_arguments.py.)
    @picokernel.kernel
    def fma(a, b, o):
        o[...] = a[...] * b[...]
    a = np.ones(3)
    with pytest.raises(TypeError, match="fma\\(\\) got an unexpected keyword argument 'out'"):
        fma(a, a, out=np.zeros(3))


@pytest.mark.parametrize("body", ["o[...] = a[...].T", "o[...] = a.T[...]",
                                  "o[...] = a[...].reshape(9)[:3]",
                                  "o[...] = a[...].swapaxes(0, 1)"])
def test_array_attributes_kernels_lack_are_clear_errors(body):
    namespace = {}
    exec(f"def k(a, o):\n    {body}\n", namespace)
    kernel = picokernel.kernel(namespace["k"])
    with pytest.raises(TypeError, match=r"ndarray\.\w+ is not supported inside kernels "
                                        r"\(pass a transposed or reshaped view"):
        kernel(np.ones((3, 3)), np.ones((3, 3)))


@pytest.mark.parametrize("body", ["o[...] = np.reshape(a[...], (9,))[:3]",
                                  "o[...] = np.transpose(a[...])",
                                  "o[...] = np.swapaxes(a[...], 0, 1)"])
def test_numpy_layout_functions_suggest_a_view(body):
    namespace = {"np": np}
    exec(f"def k(a, o):\n    {body}\n", namespace)
    kernel = picokernel.kernel(namespace["k"])
    with pytest.raises(TypeError, match=r"numpy\.\w+ is not supported inside kernels "
                                        r"\(pass a transposed or reshaped view"):
        kernel(np.ones((3, 3)), np.ones((3, 3)))


@pytest.mark.parametrize("method", ["argmax", "prod", "cumsum", "sort"])
def test_array_methods_kernels_lack_suggest_no_view(method):
    namespace = {}
    exec(f"def k(a, o):\n    o[...] = a[...].{method}()\n", namespace)
    kernel = picokernel.kernel(namespace["k"])
    with pytest.raises(TypeError) as error:
        kernel(np.ones(3), np.ones(3))
    assert f"ndarray.{method} is not supported inside kernels" in str(error.value)
    assert "view" not in str(error.value)


def test_other_missing_attributes_stay_attribute_errors():
    @picokernel.kernel
    def typo(a, o):
        o[...] = a[...].sqaure
    with pytest.raises(AttributeError, match="sqaure"):
        typo(np.ones(3), np.ones(3))
