"""Issue 20, item 3: backend="numpy", the original picokernel's default
backend name: the kernel's Python function runs on the arrays themselves
(no compile), with picokernel's semantics; PK_DISABLE_JIT=1 makes it every
kernel's backend; trace_kernel takes a decorated kernel."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import picokernel
import random_language


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own, as NumPy warns
def test_random_kernels_agree_with_numpy():
    # The differential test's kernels (every dtype, indexing form,
    # reduction, aliasing and layout), run by the interpreter.
    counts, failures = random_language.run(range(400), "numpy", isolated=False)
    assert not failures, failures[0]
    assert counts["agree"] > 350, counts


def test_same_results_as_the_compiled_kernel(rng):
    def body(a, b, w, o, s):
        x = a[...] @ b[...]
        y = np.where(x > 0, picokernel.exp(-x), x * 0.5) + w[1:, ::2].sum(axis=0)
        o[...] = y
        o[:, 0] += 1
        s[...] = (y ** 2).mean()

    a = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 6)).astype(np.float32)
    outputs = []
    for backend in ("cpu", "numpy"):
        o, s = np.zeros((5, 3), np.float32), np.zeros((), np.float32)
        picokernel.kernel(body, backend=backend)(a, b, w, o, s)
        outputs.append((o, s))
    (o1, s1), (o2, s2) = outputs
    np.testing.assert_allclose(o1, o2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s1, s2, rtol=1e-5)


def test_loads_copy_and_stores_follow_same_kind_casting():
    @picokernel.kernel(backend="numpy")
    def swap(a, b):
        x = a[...]
        a[...] = b[...]
        b[...] = x  # what a held before the store

    a, b = np.arange(3), np.arange(3, 6)
    swap(a, b)
    assert a.tolist() == [3, 4, 5] and b.tolist() == [0, 1, 2]

    @picokernel.kernel(backend="numpy")
    def store_float(x, o):
        o[...] = x[...] * 0.5

    with pytest.raises(TypeError, match="same_kind"):
        store_float(np.ones(3), np.zeros(3, np.int64))


def test_arguments_are_checked():
    @picokernel.kernel(backend="numpy")
    def copy(x, o):
        o[...] = x[...]

    assert copy.backend == "numpy" and isinstance(copy, picokernel.InterpretedKernel)
    assert "backend='numpy'" in repr(copy)
    with pytest.raises(TypeError, match=r"takes 2 arrays \(x, o\), got 1"):
        copy(np.ones(2))
    with pytest.raises(TypeError, match="argument 'o' must be a writable numpy.ndarray"):
        copy([1.0, 2.0], [0.0, 0.0])
    o = np.zeros(2)
    copy([1.0, 2.0], o=o)  # (array-likes and keywords: test_api_arguments.py)
    assert o.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        picokernel.kernel(copy.__wrapped__, backend="gpu")


def test_disable_jit_makes_every_kernel_interpret():
    script = (
        "import numpy as np, picokernel\n"
        "@picokernel.kernel\n"
        "def k(x, o):\n"
        "    print('running', type(x).__name__)\n"
        "    o[...] = x[...] + 1\n"
        "o = np.zeros(3)\n"
        "k(np.arange(3.0), o); k(np.arange(3.0), o)\n"
        "print(k.backend, o.tolist(), k.cache_info().misses)\n")
    env = dict(os.environ, PK_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                         capture_output=True, text=True).stdout
    # The function runs at every call (no trace, no compile).
    assert out == ("running InterpretedRef\nrunning InterpretedRef\n"
                   "numpy [1.0, 2.0, 3.0] 0\n"), out
    env["PK_DISABLE_JIT"] = "0"
    out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.endswith("cpu [1.0, 2.0, 3.0] 1\n"), out


def test_trace_kernel_takes_a_kernel_and_defaults_to_float32():
    @picokernel.kernel
    def neg(x, o):
        o[...] = -x[...]

    ir = picokernel.trace_kernel(neg, [(2, 3), (2, 3)])
    assert str(ir) == ("kernel neg(x, o):\n  v0<2,3:float32> = LOAD [x]()\n"
                       "  v1<2,3:float32> = NEG(v0)\n  STORE [o](v1)")
    assert "float64" in str(picokernel.trace_kernel(neg, [(2,), (2,)],
                                                    [np.float64, np.float64]))


@pytest.mark.parametrize("body,kind,fragment", [
    ("    return x[...] * 2", TypeError, "returns a value"),
    ("    y = x[...] * 2", ValueError, "stores to no ref"),
    ("    o[...] = x * 2", TypeError, "load it with x[...]"),
    ("    o[...] = x.sum()", TypeError, "load it with x[...]"),
    ("    o[...] = np.exp(x)", TypeError, "load it with x[...]"),
    ("    o[...] = x", TypeError, "load it with x[...]"),
])
def test_the_same_errors_as_compiled_kernels(body, kind, fragment):
    namespace = {"np": np}
    exec("def k(x, o):\n" + body + "\n", namespace)
    for backend in ("cpu", "numpy"):
        with pytest.raises(kind, match=re.escape(fragment)):
            picokernel.kernel(namespace["k"], backend=backend)(np.ones(3), np.zeros(3))


def test_len_of_a_ref_on_both_backends():
    def scale(x, o):
        o[...] = x[...] * len(o)
    for backend in ("cpu", "numpy"):
        o = np.zeros(4)
        picokernel.kernel(scale, backend=backend)(np.ones(4), o)
        assert o.tolist() == [4.0] * 4


@pytest.mark.parametrize("value,interpreted", [("1", True), ("true", True), ("0", False),
                                               ("false", False), ("off", False),
                                               ("no", False), ("", False)])
def test_disable_jit_reads_like_the_other_switches(monkeypatch, value, interpreted):
    monkeypatch.setenv("PK_DISABLE_JIT", value)
    k = picokernel.kernel(lambda x, o: o.__setitem__(..., x[...]))
    assert isinstance(k, picokernel.InterpretedKernel) == interpreted
