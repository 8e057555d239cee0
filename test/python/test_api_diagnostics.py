"""Issue 20, item 6: diagnostics in Python terms, at the user's line: NumPy
functions picokernel lacks, a kernel that returns instead of storing (at
its def line), a ref used without [...], Python's math functions and
control flow on traced values, hints in Python syntax."""

import math
import re

import numpy as np
import pytest

import picokernel

FILE = "/tmp/picokernel_user_kernel.py"


def kernel_of(body):
    namespace = {"np": np, "math": math, "picokernel": picokernel}
    source = "import numpy as np\n\n@picokernel.kernel\ndef k(x, o):\n" + body + "\n"
    exec(compile(source, FILE, "exec"), namespace)
    return namespace["k"]


CASES = [
    # (body, exception, line, message fragment)
    ("    o[...] = np.fmax(x[...], 0)", TypeError, 5, "numpy.fmax is not supported"),
    ("    o[...] = np.sum(x)", TypeError, 5, "ref 'x' is a reference to an array, not "
                                              "its value: load it with x[...]"),
    ("    o[...] = x * 2", TypeError, 5, "load it with x[...]"),
    ("    o[...] = 2 + x", TypeError, 5, "load it with x[...]"),
    ("    o[...] = -x", TypeError, 5, "load it with x[...]"),
    ("    o[...] = x.sum()", TypeError, 5, "load it with x[...]"),
    ("    o[...] = np.exp(x)", TypeError, 5, "load it with x[...]"),
    ("    o[...] = math.exp(x[...])", TypeError, 5, "use NumPy's (np.exp"),
    ("    o[...] = float(x[...])", TypeError, 5, "used as a float"),
    ("    if x[...] > 0:\n        o[...] = x[...]", TypeError, 5, "np.where(condition, x, y)"),
    ("    for v in x[...]:\n        o[...] = v", TypeError, 5, "not a Python sequence"),
    ("    return x[...] * 2", TypeError, 3, "kernel 'k' returns a value: a kernel returns "
                                           "nothing and stores its result into a ref "
                                           "instead (`o[...] = value`)"),
    ("    o = x[...] * 2", ValueError, 3, "stores to no ref: a kernel must store its result "
                                         "into a ref (`o[...] = value` in Python"),
]


@pytest.mark.parametrize("body,kind,line,fragment", CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_errors_point_at_the_users_line(body, kind, line, fragment):
    k = kernel_of(body)
    with pytest.raises(kind) as error:
        k(np.ones(3), np.zeros(3))
    message = str(error.value)
    assert message.startswith(f"{FILE}:{line}:"), message
    assert fragment in message, message
    # Hints in Python's syntax (C++'s only beside it, named).
    assert "pk::all" not in message or "`o[...] = value` in Python" in message


def test_len_of_a_ref_is_its_first_size():
    k = kernel_of("    o[...] = x[...] * len(x)")
    o = np.zeros(3)
    k(np.ones(3), o)
    assert o.tolist() == [3.0, 3.0, 3.0]
    scalar = kernel_of("    o[...] = len(x)")
    with pytest.raises(TypeError, match=re.escape("len() of ref 'x', which is 0-d")):
        scalar(np.ones(()), np.zeros(()))


def test_globals_are_frozen_when_traced():
    # Documented (as in jax.jit): what a kernel reads from its globals is
    # captured when it is traced for a shape and dtype.
    assert "frozen when it is traced" in picokernel.kernel.__doc__
