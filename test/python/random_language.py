"""Random kernels drawn from the whole picokernel language, checked against
NumPy.

Each seed gives one kernel: Python source over refs (loads and stores of
whole arrays and of basic-indexed parts, loads after stores, in-place
updates), every dtype (bool, int8-64, uint8-64, float16, bfloat16, float32/64), weak
Python scalars and strong NumPy scalars on both sides, `where` with scalars,
the math functions on raw domains (NaN, +-inf, +-0, subnormals, huge), `//`,
`%`, `**`, casts, reductions (empty, 0-d, keepdims, negative and tuple axes,
`axis=()`), integer indexing mixed with stepped and negative slices, several
outputs, `@` (float16 and batched included), captured NumPy constants; and
arguments laid out as callers do: the same array twice, partial overlaps,
non-contiguous, Fortran-order, offset, reversed, big-endian and read-only
arrays, 0-d and zero-size arrays.

The oracle runs the same source on NumPy arrays behind refs whose loads copy
(a load is a value: it keeps the contents it read, whatever is stored
later) and whose stores write through; every byte of every argument is
compared afterwards. The kernel is generated statement by statement against
that oracle, so its shapes and dtypes are NumPy's by construction. Results
of exact operations (arithmetic, casts, comparisons, indexing, integer
reductions) must agree bit for bit; results that went through a rounding
the two sides may do differently (math functions, float sums, float `@`)
agree to a few units in the last place, relative to the kernel's scale.

When NumPy raises, picokernel must raise the same kind of exception. The
only other accepted outcomes are the documented limits in LIMITS.

    python3 random_language.py --count 500            # a run, with a report
    python3 random_language.py --seed 1234 -v         # replay one kernel
"""

import argparse
import math
import os
import sys
import time
import traceback
import warnings

import numpy as np

try:
    import ml_dtypes

    bfloat16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 kernels are then not drawn
    ml_dtypes = None
    bfloat16 = None

INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UINTS = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64)]
if bfloat16 is not None:
    FLOATS.insert(1, bfloat16)
BOOL = np.dtype(bool)
DTYPES = [BOOL] + INTS + UINTS + FLOATS

# picokernel's documented limits: (backend or None for all, exception type,
# message fragment). A kernel that raises one of these where NumPy computes
# counts as "limit", not as a disagreement.
LIMITS = [
    (None, TypeError, "need a constant exponent"),
    ("vulkan", RuntimeError, "is not available on Vulkan"),
]


def dtype_source(dtype):
    """The dtype as the kernel source names it."""
    if dtype == bfloat16:
        return "bfloat16"
    return f"np.{dtype.name}"


def is_float(dtype):
    return dtype.kind == "f" or dtype == bfloat16


def tolerance(dtype):
    """Relative agreement asked of results that went through a rounding
    the two sides may do differently."""
    if dtype == bfloat16:
        return 6e-2
    return {2: 8e-3, 4: 2e-4, 8: 1e-10}.get(dtype.itemsize, 0)


#===-----------------------------------------------------------------------===#
# The oracle: NumPy behind value-semantics refs
#===-----------------------------------------------------------------------===#


class NumPyRef:
    """A kernel parameter over a NumPy array: loads copy, stores write."""

    def __init__(self, array):
        self._array = array

    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)

    def __getitem__(self, key):
        return np.array(self._array[key], copy=True)

    def __setitem__(self, key, value):
        self._array[key] = value


def _float_type(x):
    dtype = np.asarray(x).dtype
    return dtype if is_float(dtype) else np.result_type(dtype, np.float16)


def _through_float64(function):
    """A function NumPy lacks, computed in float64 and rounded once."""

    def apply(x):
        dtype = _float_type(x)
        wide = np.asarray(x, dtype=np.float64)
        with np.errstate(all="ignore"):
            return np.asarray(function(wide)).astype(dtype)

    return apply


class NumPyFunctions:
    """What `pk.` names in a kernel means for the oracle."""

    where = staticmethod(np.where)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    log1p = staticmethod(np.log1p)
    expm1 = staticmethod(np.expm1)
    sqrt = staticmethod(np.sqrt)
    tanh = staticmethod(np.tanh)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    floor = staticmethod(np.floor)
    ceil = staticmethod(np.ceil)
    rsqrt = staticmethod(_through_float64(lambda x: 1 / np.sqrt(x)))
    sigmoid = staticmethod(_through_float64(lambda x: 1 / (1 + np.exp(-x))))
    erf = staticmethod(_through_float64(np.vectorize(math.erf, otypes=[float])))


def namespace(pk, constants):
    names = {"np": np, "pk": pk, "bfloat16": ml_dtypes.bfloat16 if ml_dtypes else None}
    names.update(constants)
    return names


#===-----------------------------------------------------------------------===#
# Random inputs over raw domains
#===-----------------------------------------------------------------------===#


def special_floats(dtype):
    info = np.finfo(np.float32 if dtype == bfloat16 else dtype)
    if dtype == bfloat16:
        big, tiny = 3.0e38, 1e-38
    else:
        big, tiny = float(info.max), float(info.smallest_subnormal)
    return [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.5, 2.5,
            big, -big, tiny, -tiny, 3.0, 1e-3, 100.0, -7.0]


def random_array(rng, shape, dtype, regime):
    """Values of `dtype`: 'plain' (small numbers), 'wide' (every magnitude)
    or 'special' (mostly NaN, infinities, zeros, extremes)."""
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == BOOL:
        return np.array(rng.random(size) < 0.5).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if regime == "plain":
            values = rng.integers(-9 if dtype.kind == "i" else 0, 10, size)
        else:
            values = rng.integers(info.min, info.max, size, endpoint=True,
                                  dtype=dtype)
            extremes = ([info.min, info.max, 0, -1, 1, info.min + 1]
                        if dtype.kind == "i" else
                        [0, info.max, 1, info.max - 1, info.max // 2 + 1])
            pick = rng.random(size) < 0.3
            values[pick] = rng.choice(extremes, int(pick.sum()))
        return values.astype(dtype).reshape(shape)
    if regime == "plain":
        values = np.round(rng.standard_normal(size) * 4, int(rng.integers(0, 3)))
    elif regime == "wide":
        limit = {2: 4, 4: 37, 8: 300}[2 if dtype == bfloat16 else dtype.itemsize]
        if dtype == bfloat16:
            limit = 37
        values = (rng.choice([-1.0, 1.0], size)
                  * 10.0 ** rng.uniform(-limit, limit, size))
    else:
        values = rng.standard_normal(size)
    if regime != "plain" or rng.random() < 0.3:
        specials = special_floats(dtype)
        pick = rng.random(size) < (0.6 if regime == "special" else 0.1)
        values[pick] = rng.choice(specials, int(pick.sum()))
    with np.errstate(all="ignore"):
        return values.astype(dtype).reshape(shape)


#===-----------------------------------------------------------------------===#
# Kernel generation
#===-----------------------------------------------------------------------===#


class Rejected(Exception):
    """A candidate statement NumPy does not evaluate cleanly."""


class Val:
    """A traced value of the kernel being generated: its name, NumPy's value
    for it, and its tolerance: 0 when it is exact (no rounding the two sides
    may do differently went into it), else the relative agreement asked of
    it (that of the least precise float on its way)."""

    def __init__(self, name, value, tol):
        # NumPy's own result: a 0-d one may be a NumPy scalar, which NumPy
        # stores differently from a 0-d array (see store()).
        self.name, self.value, self.tol = name, value, tol
        self.dtype, self.shape = np.asarray(value).dtype, np.shape(value)

    exact = property(lambda self: self.tol == 0)


WEAK_INTS = [0, 1, 2, -1, 3, 7, -3, 100, 127, -128, 1000, 40000, 2**31 - 1, -(2**31),
             2**40, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, -(2**70)]
WEAK_FLOATS = [0.5, -2.5, 2.0, 1e-3, 3.0, -0.0, 0.0, 1e10, 1e-30, 65504.0, 1e300,
               float("inf"), float("-inf"), float("nan"), -1.0, 0.1]

# Rounding the two sides may do differently: math functions, `**` other
# than NumPy's exact fast paths, float sums and means, float `@`.
INEXACT_UNARY = ["np.exp({})", "np.log({})", "np.log1p({})", "np.expm1({})",
                 "np.tanh({})", "np.sin({})", "np.cos({})", "pk.exp({})",
                 "pk.sigmoid({})", "pk.rsqrt({})", "pk.erf({})", "pk.log1p({})",
                 "pk.expm1({})", "pk.tanh({})", "pk.log({})", "pk.sin({})"]
EXACT_UNARY = ["-{}", "+{}", "abs({})", "np.abs({})", "np.negative({})",
               "np.floor({})", "np.ceil({})", "pk.floor({})", "pk.ceil({})",
               "np.sqrt({})", "pk.sqrt({})", "np.positive({})"]
# Functions whose result jumps (or leaves their domain) under a tiny change
# of the argument: only exact values go in.
DISCONTINUOUS = ("floor", "ceil", "sqrt", "log", "rsqrt", "//", "%", "<", ">",
                 "==", "!=", "astype")
EXACT_POWERS = ("2", "0.5", "-1", "1", "0")


def finite_magnitudes(value):
    """|value| in long double, with NaN and infinities as 0."""
    wide = np.asarray(value).astype(np.longdouble)
    return np.where(np.isfinite(wide), np.abs(wide), 0)


def partial_sums_may_overflow(bound, dtype):
    """Whether a float sum whose terms' magnitudes add up to `bound` may
    overflow before its end. Where it gives inf and where nan then depends
    on the order of the additions and on FMA, which differ between NumPy
    (pairwise sums, BLAS) and picokernel, as between BLAS libraries; such
    sums are not drawn. 16-bit floats accumulate in float32 on both sides."""
    accumulator = np.float32 if dtype.itemsize == 2 else dtype
    return bool(np.any(bound > np.finfo(accumulator).max))


def is_weak_float(source):
    return source.startswith(("float(", "-")) and "." in source or \
        source.replace(".", "", 1).replace("e", "", 1).replace("-", "").isdigit() \
        and ("." in source or "e" in source)


class Generator:
    """Builds one kernel: source lines, each evaluated by the oracle as it
    is added, so that every value's shape and dtype are NumPy's."""

    def __init__(self, rng, backend):
        self.rng = rng
        self.backend = backend
        self.lines = []
        self.params = []      # [(name, initial array)]
        self.arrays = {}      # name -> the oracle's current contents
        self.ref_tol = {}     # name -> tolerance of what it holds
        self.values = []      # [Val]
        self.constants = {}
        self.uses_extremum = False
        self.stored = set()
        self.counter = 0
        self.expect_error = None
        self.universe = self.random_shape(max_rank=3)
        self.dtype_pool = list(rng.choice(DTYPES, size=int(rng.integers(1, 4)),
                                          replace=False))

    # Shapes and dtypes -----------------------------------------------------

    def random_shape(self, max_rank=3):
        rng = self.rng
        rank = int(rng.choice([0, 1, 1, 2, 2, 2, 3][: 2 * max_rank + 1]))
        sizes = [1, 2, 3, 4, 5, 7, 1, 2, 3, 0, 8, 16]
        shape = [int(rng.choice(sizes)) for _ in range(rank)]
        if rng.random() < 0.03:  # large enough to run on several threads
            shape = [300, 131][:max(rank, 1)] if rank else [40000]
        return tuple(shape)

    def related_shape(self):
        """A shape that broadcasts with the kernel's main shape."""
        rng = self.rng
        if rng.random() < 0.15:
            return self.random_shape()
        shape = list(self.universe)
        if shape and rng.random() < 0.3:
            shape = shape[int(rng.integers(0, len(shape) + 1)):]
        return tuple(1 if rng.random() < 0.2 else d for d in shape)

    def pick_dtype(self):
        if self.rng.random() < 0.8:
            return self.dtype_pool[int(self.rng.integers(len(self.dtype_pool)))]
        return DTYPES[int(self.rng.integers(len(DTYPES)))]

    # Parameters and constants ----------------------------------------------

    def new_param(self, shape, dtype):
        name = f"r{len(self.params)}"
        regime = str(self.rng.choice(["plain", "plain", "wide", "special"]))
        array = random_array(self.rng, shape, dtype, regime)
        self.params.append((name, array))
        self.arrays[name] = array.copy()
        self.ref_tol[name] = 0.0
        return name

    def constant(self):
        """A NumPy array the kernel captures (a constant when traced)."""
        rng = self.rng
        name = f"C{len(self.constants)}"
        dtype = self.pick_dtype()
        array = random_array(rng, self.related_shape(), dtype, "plain")
        if rng.random() < 0.2 and dtype.itemsize > 1 and dtype != bfloat16:
            array = array.astype(dtype.newbyteorder(">"))
        elif rng.random() < 0.2 and array.ndim:
            array = np.repeat(array, 2, axis=-1)[..., ::2]
        self.constants[name] = array
        return name

    # Source fragments ------------------------------------------------------

    def index_source(self, shape):
        """A NumPy basic index for an array of `shape`, as source."""
        rng = self.rng
        rank = len(shape)
        if rank == 0 or rng.random() < 0.4:
            return "..." if rank or rng.random() < 0.8 else "()"
        count = int(rng.integers(1, rank + 1))
        items = []
        for axis in range(count):
            n = shape[axis]
            if n > 0 and rng.random() < 0.3:
                items.append(str(int(rng.integers(-n, n))))
                continue
            step = int(rng.choice([1, 1, 1, 2, -1, -2, 3, 5]))
            bound = lambda: (None if rng.random() < 0.5
                             else int(rng.integers(-n - 2, n + 3)))
            start, stop = bound(), bound()
            text = ("" if start is None else str(start)) + ":" + (
                "" if stop is None else str(stop))
            if step != 1 or rng.random() < 0.1:
                text += f":{step}"
            items.append(text)
        if rng.random() < 0.2 and count < rank:
            items.insert(int(rng.integers(0, len(items) + 1)), "...")
        return ", ".join(items)

    def scalar_source(self):
        """A weak Python scalar or a strong NumPy scalar, as source."""
        rng = self.rng
        kind = rng.random()
        if kind < 0.35:
            pool = WEAK_INTS[:10] if rng.random() < 0.8 else WEAK_INTS
            return str(int(rng.choice(pool)))
        if kind < 0.65:
            pool = WEAK_FLOATS[:6] if rng.random() < 0.7 else WEAK_FLOATS
            value = float(rng.choice(pool))
            return repr(value) if math.isfinite(value) else f"float('{value}')"
        if kind < 0.72:
            return str(bool(rng.random() < 0.5))
        dtype = self.pick_dtype()
        if dtype == BOOL:
            return f"np.bool_({bool(rng.random() < 0.5)})"
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            # Picked by index: rng.choice rounds uint64's max through float64.
            pool = [0, 1, 2, -1 if info.min else 3, 5, int(info.max), int(info.min)]
            value = pool[int(rng.integers(len(pool)))]
            return f"{dtype_source(dtype)}({value})"
        value = float(rng.choice([0.5, -2.5, 3.0, 0.0, -0.0, 1e-3, 7.0]))
        return f"{dtype_source(dtype)}({value!r})"

    def operand(self, exact=False):
        """A value most of the time, else a scalar or a constant array."""
        rng = self.rng
        roll = rng.random()
        pool = [v for v in self.values if v.exact] if exact else self.values
        if pool and roll < 0.75:
            return pool[int(rng.integers(len(pool)))]
        if roll < 0.97 or not self.values:
            return self.scalar_source()
        return self.constant()

    # Evaluation ------------------------------------------------------------

    def environment(self):
        env = namespace(NumPyFunctions, self.constants)
        env.update({v.name: v.value for v in self.values})
        env.update({name: NumPyRef(array) for name, array in self.arrays.items()})
        return env

    def run_line(self, line, env):
        """Runs one statement for the oracle; Rejected if NumPy casts an
        unspecified value (NaN or out of range to an integer)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(all="warn"):
                exec(line, env)
        for warning in caught:
            if "cast" in str(warning.message):
                raise Rejected(str(warning.message))

    def keep_error(self, line, error):
        """Sometimes a statement NumPy refuses ends the kernel: picokernel
        must refuse it the same way. Refusals that are documented
        differences are never kept."""
        if isinstance(error, (NameError, AttributeError, SyntaxError)):
            raise error  # the generator's own mistake, not NumPy's refusal
        documented = (type(error).__name__ == "DTypePromotionError" or
                      isinstance(error, Rejected))
        if (not documented and self.expect_error is None and self.stored
                and self.rng.random() < 0.05):
            self.lines.append(line)
            self.expect_error = error

    def add_value(self, expression, sources=(), inexact=False):
        """Adds `vN = expression`; its tolerance comes from `sources` (the
        values it reads) and whether the operation itself is inexact."""
        name = f"v{self.counter}"
        line = f"    {name} = {expression}"
        env = self.environment()
        try:
            self.run_line(line.strip(), env)
        except Rejected:
            return None
        except Exception as error:
            self.keep_error(line, error)
            return None
        result = env[name]
        if not isinstance(result, (np.ndarray, np.generic)):
            return None
        dtype = np.asarray(result).dtype
        if dtype not in DTYPES or np.size(result) > 200000:
            return None
        tol = max([getattr(s, "tol", 0.0) for s in sources], default=0.0)
        if (inexact or tol) and is_float(dtype):
            tol = max(tol, tolerance(dtype))
        self.counter += 1
        self.lines.append(line)
        value = Val(name, result, tol)
        self.values.append(value)
        return value

    # Statements ------------------------------------------------------------

    def load(self):
        rng = self.rng
        if self.params and rng.random() < 0.7:
            name, _ = self.params[int(rng.integers(len(self.params)))]
        else:
            name = self.new_param(self.related_shape(), self.pick_dtype())
        key = self.index_source(self.arrays[name].shape)
        value = self.add_value(f"{name}[{key}]")
        if value is not None and self.ref_tol[name]:
            value.tol = max(self.ref_tol[name], tolerance(value.dtype))

    def compute(self):
        rng = self.rng
        if not self.values:
            return self.load()
        x = self.values[int(rng.integers(len(self.values)))]
        roll = rng.random()
        if roll < 0.4:
            return self.binary(x)
        if roll < 0.6:
            return self.unary(x)
        if roll < 0.7:
            return self.select()
        if roll < 0.8:
            return self.reduction(x)
        if roll < 0.87:
            return self.cast(x)
        if roll < 0.94:
            return self.add_value(f"{x.name}[{self.index_source(x.shape)}]", [x])
        return self.matmul()

    def source_of(self, operand):
        return operand.name if isinstance(operand, Val) else operand

    def binary(self, x):
        rng = self.rng
        op = str(rng.choice(["+", "-", "*", "/", "//", "%", "**", "<", "<=", ">",
                             ">=", "==", "!=", "max", "min"]))
        discontinuous = op in DISCONTINUOUS or op in ("<=", ">=")
        y = self.operand(exact=discontinuous or op in ("/", "**"))
        if (discontinuous or op == "**") and not x.exact:
            return None
        if op == "**" and (not isinstance(y, Val) or rng.random() < 0.7):
            y = str(rng.choice(["2", "0.5", "-1", "1", "0", "3", "4", "2.5", "-2",
                                "np.float32(2.0)", "True"]))
        if x.dtype == bfloat16 and not isinstance(y, Val) and is_weak_float(y):
            return None  # ml_dtypes promotes these to float32; picokernel and jax keep bfloat16
        xs, ys = x.name, self.source_of(y)
        if rng.random() < 0.3:
            xs, ys = ys, xs
        if op in ("max", "min"):
            self.uses_extremum = True
            function = {"max": "maximum", "min": "minimum"}[op]
            prefix = "np" if rng.random() < 0.6 else "pk"
            expression = f"{prefix}.{function}({xs}, {ys})"
        else:
            expression = f"{xs} {op} {ys}"
        sources = [v for v in (x, y) if isinstance(v, Val)]
        inexact = op == "**" and self.source_of(y) not in EXACT_POWERS
        return self.add_value(expression, sources, inexact)

    def unary(self, x):
        rng = self.rng
        if rng.random() < 0.5:
            template = str(rng.choice(EXACT_UNARY))
            if not x.exact and any(f in template for f in DISCONTINUOUS):
                return None
            return self.add_value(template.format(x.name), [x])
        template = str(rng.choice(INEXACT_UNARY))
        if not x.exact and any(f in template for f in DISCONTINUOUS):
            return None
        return self.add_value(template.format(x.name), [x], inexact=True)

    def select(self):
        rng = self.rng
        exact = [v for v in self.values if v.exact]
        if not exact:
            return None
        c = exact[int(rng.integers(len(exact)))]
        condition = c.name
        if c.dtype != BOOL and rng.random() < 0.7:
            condition = f"{c.name} > {self.scalar_source()}"
        a, b = self.operand(), self.operand()
        if bfloat16 is not None and any(
                isinstance(v, Val) and v.dtype == bfloat16 for v in (a, b, c)):
            if any(not isinstance(v, Val) and is_weak_float(v) for v in (a, b)):
                return None  # ml_dtypes' float32, as in binary()
        prefix = "np" if rng.random() < 0.5 else "pk"
        sources = [v for v in (c, a, b) if isinstance(v, Val)]
        return self.add_value(
            f"{prefix}.where({condition}, {self.source_of(a)}, {self.source_of(b)})",
            sources)

    def reduction(self, x):
        rng = self.rng
        kind = str(rng.choice(["sum", "max", "min", "mean"]))
        rank = len(x.shape)
        roll = rng.random()
        if roll < 0.3:
            axis = None
        elif roll < 0.4:
            axis = ()
        elif roll < 0.8 and rank:
            axis = int(rng.integers(-rank, rank))
        elif rank >= 2:
            count = int(rng.integers(1, rank + 1))
            axis = tuple(int(a) for a in rng.choice(range(rank), count, replace=False))
            axis = tuple(a - rank if rng.random() < 0.3 else a for a in axis)
        else:
            axis = [0, -1, (0,), (-1,)][int(rng.integers(0, 4))] if rng.random() < 0.3 else None
        arguments = []
        if axis is not None or rng.random() < 0.2:
            # NumPy takes any integer with __index__, alone or in a tuple.
            if isinstance(axis, int) and rng.random() < 0.15:
                arguments.append(f"axis=np.int64({axis})")
            else:
                arguments.append(f"axis={axis!r}")
        if rng.random() < 0.3:
            arguments.append("keepdims=True")
        if rng.random() < 0.7:
            expression = f"{x.name}.{kind}({', '.join(arguments)})"
        else:
            expression = f"np.{kind}({', '.join([x.name] + arguments)})"
        inexact = kind == "mean" or (kind == "sum" and is_float(x.dtype))
        if inexact and partial_sums_may_overflow(
                finite_magnitudes(x.value).sum(), np.dtype(np.float64)
                if not is_float(x.dtype) else x.dtype):
            return None
        return self.add_value(expression, [x], inexact)

    def cast(self, x):
        rng = self.rng
        target = self.pick_dtype() if rng.random() < 0.7 else \
            DTYPES[int(rng.integers(len(DTYPES)))]
        if not x.exact and not is_float(target):
            return None
        if is_float(x.dtype) and target.kind in "iu":
            # Out of the integer's range (negative to unsigned too) the cast
            # is unspecified; NumPy warns only beyond int64's range.
            info = np.iinfo(target)
            with np.errstate(all="ignore"):
                whole = np.trunc(np.asarray(x.value, dtype=np.float64))
            if np.any(np.isfinite(whole) & ((whole < info.min) | (whole > info.max))):
                return None
        return self.add_value(f"{x.name}.astype({dtype_source(target)})", [x])

    def matmul(self):
        rng = self.rng
        candidates = [v for v in self.values if len(v.shape) >= 1]
        if not candidates:
            dtype = self.pick_dtype()
            k = int(rng.choice([1, 2, 3, 5]))
            lead = tuple(int(rng.choice([1, 2, 3])) for _ in range(int(rng.integers(0, 3))))
            trail = tuple(int(rng.choice([1, 2, 4])) for _ in range(int(rng.integers(0, 2))))
            a = self.new_param(lead + (k,), dtype)
            b = self.new_param(lead[1:] + (k,) + trail if len(lead) > 1 and trail
                               else (k,) + trail, dtype)
            x = self.add_value(f"{a}[...]")
            y = self.add_value(f"{b}[...]")
            if x is None or y is None:
                return None
        else:
            x = candidates[int(rng.integers(len(candidates)))]
            y = candidates[int(rng.integers(len(candidates)))]
        if bfloat16 is not None and bfloat16 in (x.dtype, y.dtype):
            return None  # ml_dtypes' bfloat16 @ gives float32; picokernel keeps bfloat16
        result = np.result_type(x.dtype, y.dtype)
        try:
            bound = finite_magnitudes(x.value) @ finite_magnitudes(y.value)
        except ValueError:  # shapes NumPy's @ rejects: drawn as an error
            bound = 0
        if is_float(result) and partial_sums_may_overflow(bound, result):
            return None
        return self.add_value(f"{x.name} @ {y.name}", [x, y],
                              inexact=is_float(np.result_type(x.dtype, y.dtype)))

    def store(self):
        """`ref[key] = value` (or `op=`) into an existing or a new ref."""
        rng = self.rng
        if not self.values:
            self.load()
            if not self.values:
                return
        value = self.values[int(rng.integers(len(self.values)))]
        source = self.scalar_source() if rng.random() < 0.1 else value.name
        env = self.environment()
        number = eval(source, env)
        # A weak Python number stores as NumPy's default dtype of its kind
        # (np.asarray would raise for ints past int64).
        source_dtype = {bool: BOOL, int: np.dtype(np.int64),
                        float: np.dtype(np.float64)}.get(type(number))
        if source_dtype is None:
            source_dtype = np.asarray(number).dtype
        targets = [name for name, _ in self.params
                   if np.can_cast(source_dtype, self.arrays[name].dtype, "same_kind")]
        if targets and rng.random() < 0.6:
            name = targets[int(rng.integers(len(targets)))]
            key = self.index_source(self.arrays[name].shape)
        else:
            shape = value.shape
            if rng.random() < 0.2:
                shape = tuple(int(rng.choice([1, 2, 3]))
                              for _ in range(int(rng.integers(0, 2)))) + shape
            wider = [d for d in DTYPES if np.can_cast(source_dtype, d, "same_kind")]
            dtype = value.dtype if rng.random() < 0.7 or not wider else \
                wider[int(rng.integers(len(wider)))]
            if not np.can_cast(source_dtype, dtype, "same_kind"):
                return
            name = self.new_param(shape, dtype)
            key = "..."
        env = self.environment()
        target = self.arrays[name]
        op = "=" if rng.random() < 0.75 else str(rng.choice(
            ["+=", "-=", "*=", "/=", "%=", "//=", "**="]))
        if op != "=" and (not value.exact or not self.ref_tol[name] == 0):
            op = "="
        if target.dtype == bfloat16 and source != value.name and is_weak_float(source):
            return  # ml_dtypes' float32, as in binary()
        line = f"    {name}[{key}] {op} {source}"
        before = target.copy()
        try:
            self.run_line(line.strip(), env)
        except Rejected:
            target[...] = before
            return
        except OverflowError as error:
            target[...] = before
            if source != value.name:  # a Python number too large: kept
                self.keep_error(line, error)
            # NumPy's scalar assignment of an out-of-range 0-d integer array
            # raises where array assignment wraps (picokernel wraps): not kept.
            return
        except Exception as error:
            target[...] = before
            self.keep_error(line, error)
            return
        self.lines.append(line)
        self.stored.add(name)
        # A float power rounds differently on each side (pow).
        inexact = op == "**=" and is_float(target.dtype)
        if (source == value.name and value.tol) or inexact:
            self.ref_tol[name] = max(self.ref_tol[name], value.tol,
                                     tolerance(target.dtype))

    def build(self):
        rng = self.rng
        for _ in range(int(rng.integers(2, 14))):
            if self.expect_error is not None:
                break
            roll = rng.random()
            if roll < 0.25 or not self.values:
                self.load()
            elif roll < 0.8:
                self.compute()
            else:
                self.store()
        for _ in range(10):
            if self.expect_error is not None or (self.stored and rng.random() < 0.5):
                break
            self.store()
        if not self.stored:
            return None
        names = ", ".join(name for name, _ in self.params)
        return f"def kernel({names}):\n" + "\n".join(self.lines) + "\n"


#===-----------------------------------------------------------------------===#
# Argument layouts
#===-----------------------------------------------------------------------===#


class Layout:
    """How the kernel's arguments sit in memory: base arrays and, per
    parameter, the base it views and a function from the bases to the view
    passed (called anew for each run: two parameters on one view function
    are the same memory through two view objects, unless the view is the
    base itself)."""

    def __init__(self, bases, views, base_of, description):
        self.bases, self.views, self.base_of = bases, views, base_of
        self.description = description

    def materialize(self):
        bases = [b.copy(order="K") for b in self.bases]
        for base, original in zip(bases, self.bases):
            if not original.flags.writeable:
                base.flags.writeable = False
        return bases, [view(bases) for view in self.views]


KINDS = ["plain"] * 6 + ["fortran", "strided", "reversed", "offset", "bigendian",
                         "readonly", "shiftable"]


def make_layout(rng, params, written):
    """Base arrays holding the parameters' initial contents, each laid out
    in a random way: the same array as another parameter, overlapping
    another (shifted by a row, or one row of it), strided, Fortran-order,
    offset, reversed, big-endian, read-only."""
    bases, views, base_of, notes = [], [], [], []
    shiftable = {}  # parameter -> its base, padded by one row at the end
    plain = {}      # parameter -> its base, the view being the base itself
    for index, (name, array) in enumerate(params):
        roll = rng.random()
        same = [j for j, (_, other) in enumerate(params[:index])
                if other.shape == array.shape and other.dtype == array.dtype]
        if same and roll < 0.2:
            j = same[int(rng.integers(len(same)))]
            views.append(views[j])
            base_of.append(base_of[j])
            notes.append(f"{name} is {params[j][0]}")
            continue
        shifted = [j for j in same if j in shiftable and array.ndim]
        if shifted and roll < 0.3:
            j = shifted[int(rng.integers(len(shifted)))]
            n = array.shape[0]
            views.append(lambda b, i=shiftable[j], n=n: b[i][1:1 + n])
            base_of.append(shiftable[j])
            notes.append(f"{name} overlaps {params[j][0]} shifted by one row")
            continue
        rows = [j for j in plain if params[j][1].dtype == array.dtype and
                params[j][1].ndim == array.ndim + 1 and
                params[j][1].shape[1:] == array.shape and params[j][1].shape[0]]
        if rows and roll < 0.35:
            j = rows[int(rng.integers(len(rows)))]
            row = int(rng.integers(params[j][1].shape[0]))
            views.append(lambda b, i=plain[j], row=row: b[i][row, ...])
            base_of.append(plain[j])
            notes.append(f"{name} is row {row} of {params[j][0]}")
            continue
        kind = str(rng.choice(KINDS))
        if kind == "readonly" and name in written:
            kind = "plain"
        if kind == "bigendian" and (array.dtype.itemsize == 1 or array.dtype == bfloat16):
            kind = "plain"
        if array.ndim == 0 and kind in ("strided", "reversed", "offset", "shiftable"):
            kind = "plain"
        i = len(bases)
        base_of.append(i)
        if kind == "fortran":
            bases.append(np.asfortranarray(array))
            views.append(lambda b, i=i: b[i])
        elif kind == "strided":
            bases.append(np.repeat(array, 2, axis=-1))
            views.append(lambda b, i=i: b[i][..., ::2])
        elif kind == "reversed":
            bases.append(np.ascontiguousarray(np.flip(array, axis=0)))
            views.append(lambda b, i=i: b[i][::-1])
        elif kind in ("offset", "shiftable"):
            pad = array[:1] if array.shape[0] else np.zeros((1,) + array.shape[1:],
                                                              array.dtype)
            before = kind == "offset"
            bases.append(np.concatenate([pad, array] if before else [array, pad]))
            start = 1 if before else 0
            views.append(lambda b, i=i, s=start, n=array.shape[0]: b[i][s:s + n])
            if kind == "shiftable":
                shiftable[index] = i
        elif kind == "bigendian":
            bases.append(array.astype(array.dtype.newbyteorder(">")))
            views.append(lambda b, i=i: b[i])
        else:
            base = array.copy()
            if kind == "readonly":
                base.flags.writeable = False
            else:
                plain[index] = i
            bases.append(base)
            views.append(lambda b, i=i: b[i])
        if kind != "plain":
            notes.append(f"{name} {kind}")
    return Layout(bases, views, base_of, ", ".join(notes) or "plain")


#===-----------------------------------------------------------------------===#
# One case: generate, run both sides, compare
#===-----------------------------------------------------------------------===#


class Case:
    def __init__(self, seed, backend="cpu"):
        # "cpu-dynamic": the CPU, compiling for dynamic sizes from the
        # first call (dynamic=True).
        self.seed, self.backend = seed, backend.removesuffix("-dynamic")
        self.dynamic = True if backend.endswith("-dynamic") else None
        for attempt in range(20):
            rng = np.random.default_rng([seed, attempt])
            generator = Generator(rng, self.backend)
            source = generator.build()
            if source is None:
                continue
            written = generator.stored
            layout = make_layout(rng, generator.params, written)
            self.source, self.layout = source, layout
            self.constants = generator.constants
            self.uses_extremum = generator.uses_extremum
            self.param_names = [name for name, _ in generator.params]
            # Each base is compared within the tolerance of what was stored
            # through its parameters (0: bit for bit).
            self.base_tol = [0.0] * len(layout.bases)
            for (name, _), base in zip(generator.params, layout.base_of):
                self.base_tol[base] = max(self.base_tol[base],
                                          generator.ref_tol[name])
            try:
                self.expected = self.run_numpy()
            except Rejected:
                continue
            return
        raise RuntimeError(f"seed {seed}: no kernel could be generated")

    def function(self, pk):
        env = namespace(pk, self.constants)
        exec(self.source, env)
        return env["kernel"]

    def run_numpy(self):
        bases, views = self.layout.materialize()
        refs = [NumPyRef(view) for view in views]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(all="warn"):
                try:
                    self.function(NumPyFunctions)(*refs)
                    error = None
                except Exception as exc:  # the kernel errs for NumPy too
                    error = exc
        if any("cast" in str(w.message) for w in caught):
            raise Rejected("a cast of NaN or an out-of-range value")
        return error if error is not None else bases

    def run_picokernel(self):
        import picokernel

        bases, views = self.layout.materialize()
        kernel = picokernel.kernel(self.function(picokernel), backend=self.backend,
                                   dynamic=self.dynamic)
        kernel(*views)
        return bases

    def check(self):
        """'agree', 'limit' or a description of the disagreement."""
        try:
            actual = self.run_picokernel()
        except Exception as error:
            for backend, kind, fragment in LIMITS:
                if (backend in (None, self.backend) and isinstance(error, kind)
                        and fragment in str(error)):
                    return "limit"
            if isinstance(self.expected, Exception):
                if same_kind_of_error(error, self.expected):
                    return "agree"
                return (f"picokernel raised {type(error).__name__}: {error}\n"
                        f"NumPy raised {type(self.expected).__name__}: "
                        f"{self.expected}")
            return (f"picokernel raised {type(error).__name__}: {error}\n"
                    + "".join(traceback.format_exception(error))[-1500:])
        if isinstance(self.expected, Exception):
            return (f"NumPy raised {type(self.expected).__name__}: "
                    f"{self.expected}; picokernel did not")
        for index, (got, want) in enumerate(zip(actual, self.expected)):
            problem = compare(got, want, self.base_tol[index], self.uses_extremum)
            if problem:
                return f"argument base {index}: {problem}\n got: {got!r}\nwant: {want!r}"
        return "agree"

    def describe(self):
        lines = [f"seed {self.seed} ({self.backend}"
                 f"{', dynamic sizes' if self.dynamic else ''}):", self.source,
                 f"layout: {self.layout.description}"]
        for name, base in zip(self.param_names, self.layout.bases):
            lines.append(f"  base {name}: {base.dtype} {base.shape}")
        for name, constant in self.constants.items():
            lines.append(f"  {name} = np.array({constant.tolist()!r}, {constant.dtype})")
        return "\n".join(lines)


def same_kind_of_error(error, expected):
    """Whether picokernel's exception is the kind NumPy raised. A statement
    that breaks two rules (`bool_ref[::2] //= v` both casts unsafely and
    mismatches shapes) may be refused for either: NumPy checks types
    first, picokernel shapes."""
    for kind in (IndexError, OverflowError, TypeError, ValueError,
                 ZeroDivisionError):
        if isinstance(expected, kind) and isinstance(error, kind):
            return True
    both_rules = (isinstance(expected, TypeError) and "broadcast" in str(error)) or \
        ("broadcast" in str(expected) and isinstance(error, TypeError))
    # An array assigned to one element: NumPy's ValueError, but ml_dtypes'
    # bfloat16 raises TypeError ("expected number").
    element = "expected number" in str(expected) and "array element" in str(error)
    return (both_rules or element) and isinstance(error, (TypeError, ValueError))


def compare(got, want, rtol, signed_zeros_loose):
    """None if `got` agrees with `want` (bit for bit when `rtol` is 0, NaN
    payloads aside), else why not."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"shape/dtype {got.shape} {got.dtype} vs {want.shape} {want.dtype}"
    if not is_float(want.dtype):
        if np.array_equal(got, want):
            return None
        return f"{int(np.sum(got != want))} elements differ"
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return "NaN positions differ"
    finite = ~np.isnan(w)
    g, w = g[finite], w[finite]
    if not rtol:
        same = g == w
        if not signed_zeros_loose:
            same &= np.signbit(g) == np.signbit(w)
        if same.all():
            return None
        return f"{int((~same).sum())} elements differ (exact)"
    info = np.finfo(np.float32 if want.dtype == bfloat16 else want.dtype)
    huge = float(info.max) / 2
    both_inf = np.isinf(g) & np.isinf(w) & (np.sign(g) == np.sign(w))
    # Near overflow, one side may round to infinity.
    one_inf = (np.isinf(g) ^ np.isinf(w)) & (np.abs(np.where(np.isinf(g), w, g)) >= huge)
    scale = np.max(np.abs(w[np.isfinite(w)]), initial=0.0)
    close = np.zeros(g.shape, bool)
    both = np.isfinite(g) & np.isfinite(w)
    with np.errstate(all="ignore"):
        close[both] = np.abs(g[both] - w[both]) <= rtol * (np.abs(w[both]) + scale)
    ok = both_inf | one_inf | close
    if ok.all():
        return None
    return f"{int((~ok).sum())} elements differ beyond rtol {rtol}"


#===-----------------------------------------------------------------------===#
# Runs
#===-----------------------------------------------------------------------===#


def check_seed(seed, backend):
    """(outcome, description) for one seed: outcome is 'agree', 'limit',
    'numpy-raises' (agreeing on an exception) or 'fail'."""
    case = Case(seed, backend)
    outcome = case.check()
    if outcome == "agree" and isinstance(case.expected, Exception):
        return "numpy-raises", ""
    if outcome in ("agree", "limit"):
        return outcome, ""
    return "fail", f"{case.describe()}\n{outcome}"


class Worker:
    """A process checking seeds one by one, so that a crash or a hang is a
    finding about one seed instead of the end of the run."""

    def __init__(self, backend):
        import subprocess

        env = dict(os.environ)
        if backend == "vulkan-dynamic":
            # Without llvmpipe's loop limit, which a loop of a size known
            # only at dispatch cannot be checked against, reductions compile
            # for dynamic sizes too (its kernels' loops are far shorter).
            env.setdefault("PK_VULKAN_LOOP_LIMIT", "0")
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--backend", backend],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, bufsize=1, env=env)

    def check(self, seed, timeout):
        import json
        import select

        self.process.stdin.write(f"{seed}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.process.kill()
            return "fail", f"seed {seed}: no answer within {timeout} s (a hang)"
        line = self.process.stdout.readline()
        if not line:
            self.process.wait()
            stderr = self.process.stderr.read()[-2000:]
            return "fail", (f"seed {seed}: the process died with status "
                            f"{self.process.returncode}\n{stderr}")
        answer = json.loads(line)
        return answer["outcome"], answer["text"]

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait()


def serve(backend):
    import json

    for line in sys.stdin:
        seed = int(line)
        try:
            outcome, text = check_seed(seed, backend)
        except Exception:
            outcome, text = "fail", f"seed {seed}: the harness failed\n" + \
                traceback.format_exc()
        print(json.dumps({"outcome": outcome, "text": text}), flush=True)


def run(seeds, backend="cpu", deadline=None, timeout=120, isolated=True):
    """Checks the kernels of `seeds` (each in a worker process when
    `isolated`); returns (counts, failures, kernels checked)."""
    counts = {"agree": 0, "limit": 0, "numpy-raises": 0, "fail": 0}
    failures = []
    worker = None
    try:
        for seed in seeds:
            if deadline is not None and time.monotonic() > deadline:
                break
            if not isolated:
                outcome, text = check_seed(seed, backend)
            else:
                if worker is None or worker.process.poll() is not None:
                    worker = Worker(backend)
                outcome, text = worker.check(seed, timeout)
            counts[outcome] += 1
            if outcome == "fail":
                failures.append(text)
    finally:
        if worker is not None:
            worker.close()
    return counts, failures


def report(backend, counts, failures, seconds):
    total = sum(counts.values())
    agreeing = counts["agree"] + counts["numpy-raises"]
    return (f"{backend}: {total} random kernels in {seconds:.1f} s: {agreeing} agree "
            f"with NumPy ({counts['numpy-raises']} of them raising as NumPy does), "
            f"{counts['limit']} hit documented limits, {counts['fail']} disagree; "
            f"agreement {100.0 * (agreeing + counts['limit']) / max(total, 1):.2f}%")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, help="check this seed only, in this process")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seconds", type=float, help="stop after this long")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--show", type=int, default=5, help="failures printed")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return serve(args.backend)
    if args.seed is not None:
        case = Case(args.seed, args.backend)
        print(case.describe())
        print("->", case.check())
        return 0
    seeds = range(args.start, args.start + args.count)
    start = time.monotonic()
    deadline = start + args.seconds if args.seconds else None
    counts, failures = run(seeds, args.backend, deadline)
    for failure in failures[: args.show]:
        print(failure, "\n" + "-" * 70)
    print(report(args.backend, counts, failures, time.monotonic() - start))
    print("failing seeds:", [int(f.split()[1].rstrip(":")) for f in failures])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
