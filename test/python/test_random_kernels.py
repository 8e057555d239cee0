"""Random straight-line kernels agree with NumPy (the original picokernel got
39% of these wrong by reusing one scratch buffer while it was still live)."""

import numpy as np
import pytest

import picokernel

OPS = ["+", "-", "*", "/", "//", "%"]


def random_kernel(rng, n_inputs):
    """Source of a kernel with n_inputs refs and one output, computing a
    random expression DAG that reuses intermediates."""
    lines = [f"    v{i} = r{i}[...]" for i in range(n_inputs)]
    values = [f"v{i}" for i in range(n_inputs)]
    for step in range(int(rng.integers(2, 9))):
        kind = rng.random()
        a = values[int(rng.integers(len(values)))]
        if kind < 0.15:
            expr = f"-{a}"
        elif kind < 0.3:
            scalar = [2, 0.5, -3, 1.25][int(rng.integers(4))]
            op = OPS[int(rng.integers(3))]
            expr = f"{a} {op} {scalar}" if rng.random() < 0.5 else f"{scalar} {op} {a}"
        else:
            b = values[int(rng.integers(len(values)))]
            expr = f"{a} {OPS[int(rng.integers(len(OPS)))]} {b}"
        lines.append(f"    t{step} = {expr}")
        values.append(f"t{step}")
    params = ", ".join(f"r{i}" for i in range(n_inputs))
    body = "\n".join(lines)
    return (f"def kernel({params}, out):\n{body}\n"
            f"    out[...] = {values[-1]}\n", values[-1])


def run_numpy(source, inputs):
    """The kernel run by NumPy (arrays are refs already); the output is
    captured, since its shape and dtype are not known beforehand."""
    namespace = {}
    exec(source, namespace)
    captured = {}

    class Out:
        def __setitem__(self, key, value):
            captured["value"] = np.asarray(value)

    namespace["kernel"](*inputs, Out())
    return captured["value"]


def random_case(seed):
    """A random kernel, its inputs (the first one (3, 5)), NumPy's result
    and the compiled kernel, all from `seed`."""
    rng = np.random.default_rng(seed)
    n_inputs = int(rng.integers(1, 5))
    dtype = [np.float32, np.float64][seed % 2]
    source, _ = random_kernel(rng, n_inputs)
    shapes = [(3, 5), (5,), (1, 5), (3, 1), ()]
    inputs = [rng.standard_normal(shapes[int(rng.integers(len(shapes)))]).astype(dtype)
              for _ in range(n_inputs)]
    inputs[0] = rng.standard_normal((3, 5)).astype(dtype)
    with np.errstate(all="ignore"):
        expected = run_numpy(source, inputs)
    namespace = {}
    exec(source, namespace)
    return source, inputs, expected, picokernel.kernel(namespace["kernel"])


@pytest.mark.parametrize("seed", range(150))
def test_random_kernel_matches_numpy(seed):
    source, inputs, expected, compiled = random_case(seed)
    out = np.empty(expected.shape, expected.dtype)
    compiled(*inputs, out)
    np.testing.assert_array_equal(out, expected, err_msg=source)


@pytest.mark.parametrize("seed", range(60))
def test_random_kernel_writing_into_an_input_matches_numpy(seed):
    """The output is also the first input (NumPy's `kernel(a, b, out=a)`):
    computed in place where the update is elementwise, and still NumPy's
    answer wherever the old contents are read again."""
    source, inputs, expected, compiled = random_case(1000 + seed)
    if expected.shape != inputs[0].shape or expected.dtype != inputs[0].dtype:
        pytest.skip("the result does not fit the first input")
    compiled(*inputs, inputs[0])
    np.testing.assert_array_equal(inputs[0], expected, err_msg=source)
