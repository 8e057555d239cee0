"""Four neural-network building blocks as picokernel kernels, written the way
NumPy code is written, each checked against NumPy on every backend.

    python3 examples/python/nn_kernels.py
"""
import numpy as np

import picokernel


def softplus(x_ref, o_ref):
    x = x_ref[...]
    o_ref[...] = np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def gelu(x_ref, o_ref):  # the tanh approximation
    x = x_ref[...]
    o_ref[...] = 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def softmax(x_ref, o_ref):  # over the last axis
    x = x_ref[...]
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    o_ref[...] = e / e.sum(axis=-1, keepdims=True)


def layernorm(x_ref, gamma_ref, beta_ref, o_ref):
    x = x_ref[...]
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2.0).mean(axis=-1, keepdims=True)
    o_ref[...] = (x - mean) / np.sqrt(variance + 1e-5) * gamma_ref[...] + beta_ref[...]


def reference(kernel, *inputs):
    """The kernel run by NumPy itself: arrays are refs already (`ref[...]`
    reads or assigns the whole array)."""
    out = np.empty_like(inputs[0])
    kernel(*inputs, out)
    return out


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    gamma = rng.standard_normal(256).astype(np.float32)
    beta = rng.standard_normal(256).astype(np.float32)
    backends = ["cpu"] + (["vulkan"] if picokernel.vulkan_available()[0] else [])
    worst = 0.0
    for backend in backends:
        for function, inputs in [(softplus, (x,)), (gelu, (x,)), (softmax, (x,)),
                                 (layernorm, (x, gamma, beta))]:
            kernel = picokernel.kernel(function, backend=backend)
            out = np.empty_like(x)
            kernel(*inputs, out)
            error = float(np.max(np.abs(out - reference(function, *inputs))))
            worst = max(worst, error)
            print(f"{backend:6} {function.__name__:9} max |picokernel - NumPy| = {error:.2e}")
    print("OK" if worst < 1e-4 else "MISMATCH")
    return 0 if worst < 1e-4 else 1


if __name__ == "__main__":
    raise SystemExit(main())
