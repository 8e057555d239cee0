"""Kernels run by NumPy itself, with picokernel's semantics.

A kernel's meaning is its Python function run on NumPy arrays behind refs
whose loads copy (a loaded value keeps the contents it read) and whose
stores write through, in program order, with NumPy's same_kind casting.
Compiled kernels keep that meaning by analysis; where they cannot -- two
arguments that overlap in memory without being the same array, one of
them written -- picokernel runs the function this way instead.
"""

import math

import numpy as np


def _weak_dtype(value):
    """The dtype a store converts from: an array's, or a Python number's
    NumPy default (bool, int64, float64)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, float):
        return np.dtype(np.float64)
    return np.asarray(value).dtype


class InterpretedRef:
    """A kernel parameter over a NumPy array: `ref[...]` loads a copy,
    `ref[...] = value` stores into the array."""

    __slots__ = ("_array", "name", "_converted_from", "stored")

    def __init__(self, array, name, converted_from=None):
        self._array = array
        self.name = name
        # The type of the argument NumPy converted (a list, a number), if
        # any: the kernel may only read it.
        self._converted_from = converted_from
        self.stored = False

    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)

    def __getitem__(self, key):
        return np.array(self._array[key], copy=True)

    def __setitem__(self, key, value):
        if self._converted_from is not None:
            raise TypeError(
                f"argument '{self.name}' must be a writable numpy.ndarray: the "
                f"kernel writes to it (got {self._converted_from.__name__})")
        self.stored = True
        source = _weak_dtype(value)
        if not np.can_cast(source, self._array.dtype, "same_kind"):
            raise TypeError(
                f"cannot store {source} values into ref '{self.name}' of dtype "
                f"{self._array.dtype} (NumPy's same_kind casting); convert "
                "explicitly with astype")
        self._array[key] = value

    def __len__(self):
        if not self._array.shape:
            raise TypeError(f"len() of ref '{self.name}', which is 0-d")
        return self._array.shape[0]

    def __repr__(self):
        return f"<picokernel.Ref {self.name} (interpreted)>"


def run(function, names, arrays, converted_from=None, error=None):
    """Runs the kernel `function` on `arrays` (one per parameter name;
    `converted_from`: the types of those NumPy converted, None for arrays).
    With `error` (picokernel's, as the compiled kernels raise them at the
    user's line), a kernel that returns a value or stores nothing is an
    error, as it is for the compiled kernels."""
    converted_from = converted_from or [None] * len(arrays)
    refs = [InterpretedRef(array, name, source)
            for name, array, source in zip(names, arrays, converted_from)]
    with np.errstate(all="ignore"):
        result = function(*refs)
    if error is None:
        return
    name = getattr(function, "__name__", "kernel")
    if result is not None:
        raise error(TypeError, f"kernel '{name}' returns a value: a kernel returns "
                               "nothing and stores its result into a ref instead "
                               f"(`{names[-1]}[...] = value`)")
    if not any(ref.stored for ref in refs):
        raise error(ValueError, f"kernel '{name}' stores to no ref: a kernel must "
                                "store its result into a ref (`o[...] = value`)")


#===-----------------------------------------------------------------------===#
# picokernel's functions on NumPy arrays
#===-----------------------------------------------------------------------===#


def _float_dtype(x):
    """The float dtype picokernel's math functions compute `x` in (NumPy's:
    int8 in float16, int16 in float32, wider integers in float64)."""
    dtype = np.asarray(x).dtype
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return dtype
    return np.result_type(dtype, np.float16)


def _in_float32(compute):
    """A function computed in float32 or float64 and rounded once, as the
    compiled kernels compute their 16-bit float math."""

    def apply(x):
        dtype = _float_dtype(x)
        wide = np.float64 if dtype.itemsize == 8 else np.float32
        with np.errstate(all="ignore"):
            return np.asarray(compute(np.asarray(x, dtype=wide))).astype(dtype)

    return apply


def _erf(x):
    try:
        from scipy.special import erf
    except ImportError:
        erf = np.vectorize(math.erf, otypes=[np.float64])
    return erf(x)


def _sigmoid(x):
    # As the compiled kernels compute it: exp(-|x|) never overflows.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


sigmoid = _in_float32(_sigmoid)
rsqrt = _in_float32(lambda x: 1 / np.sqrt(x))
erf = _in_float32(_erf)
