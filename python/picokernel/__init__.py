"""picokernel: kernels over whole-array refs, compiled by MLIR.

A kernel is straight-line Python over refs: every parameter is a ref,
``ref[...]`` loads or stores the whole array (``ref[1:3]``, ``ref[:, ::2]``,
``ref[0]`` a part of it, with constant indices), and the kernel returns nothing.
The first call for given shapes and dtypes traces the function into the
``pk`` MLIR dialect, fuses it into one loop nest writing straight into the
output and compiles it for this CPU; later calls with the same shapes and
dtypes run the compiled code directly.

    import numpy as np
    import picokernel

    @picokernel.kernel
    def fma(a_ref, b_ref, c_ref, o_ref):
        o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]

    a, b, c = (np.random.rand(1000).astype(np.float32) for _ in range(3))
    o = np.empty_like(a)
    fma(a, b, c, o)            # returns None; o holds a * b + c
    print(fma.show_ir(a, b, c, o))
"""

import collections
import inspect
import operator
import os
import sys
from collections import namedtuple

import numpy as np

from . import _interpreter, _picokernel
from ._picokernel import Ref, Value


# Logging (the "picokernel" logger): _log_record is what the runtime calls.
from ._logging import _log_record, _switched_on  # noqa: E402,F401


def _traced_or_numpy(name, traced, numpy_function):
    """picokernel.<name>: traced on traced values; on NumPy arrays (a kernel
    run by NumPy, see _interpreter) the NumPy function."""

    def function(*args):
        if any(isinstance(arg, Value) for arg in args):
            return traced(*args)
        return numpy_function(*args)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = traced.__doc__
    return function


_pk = _picokernel
where = _traced_or_numpy("where", _pk.where, np.where)
maximum = _traced_or_numpy("maximum", _pk.maximum, np.maximum)
minimum = _traced_or_numpy("minimum", _pk.minimum, np.minimum)
# The math functions of the op table (PkElementwiseOps.def): exp, log, log1p,
# expm1, sqrt, rsqrt, tanh, sin, cos, floor, ceil, sigmoid, erf. Outside a
# trace each is NumPy's (or the interpreter's, where NumPy has none).
for _name in _pk.MATH_FUNCTIONS:
    globals()[_name] = _traced_or_numpy(
        _name, getattr(_pk, _name),
        getattr(_interpreter, _name, None) or getattr(np, _name))
del _pk, _name

__all__ = [
    *_picokernel.MATH_FUNCTIONS,
    "CacheInfo",
    "InterpretedKernel",
    "Kernel",
    "KernelIR",
    "Ref",
    "Value",
    "kernel",
    "maximum",
    "minimum",
    "stages",
    "trace_kernel",
    "vulkan_available",
    "vulkan_device",
    "where",
]

# The C++ library's PICOKERNEL_VERSION: CMakeLists.txt's project version,
# which the package's metadata reads too.
__version__ = _picokernel.VERSION

# "numpy" runs the kernel's Python function on the arrays themselves, as
# the original picokernel's default backend computes (through NumPy, without
# compiling); PK_DISABLE_JIT=1 makes it every kernel's backend.
BACKENDS = ("cpu", "vulkan", "numpy")

CacheInfo = namedtuple(
    "CacheInfo",
    "hits misses evictions entries trace_seconds compile_seconds "
    "pipeline_seconds codegen_seconds disk_loads",
)
CacheInfo.__doc__ = "Counters of a kernel's compile cache."


# NumPy functions on traced values: the ufuncs and np.where trace like the
# picokernel functions; anything else raises a TypeError naming it.
_BINARY_UFUNCS = {
    "add": ("__add__", "__radd__"),
    "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"),
    "true_divide": ("__truediv__", "__rtruediv__"),
    "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"),
    "remainder": ("__mod__", "__rmod__"),
    "power": ("__pow__", "__rpow__"),
    "matmul": ("__matmul__", "__rmatmul__"),
    "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"),
    "less": ("__lt__", "__gt__"),
    "less_equal": ("__le__", "__ge__"),
    "equal": ("__eq__", "__eq__"),
    "not_equal": ("__ne__", "__ne__"),
}
_OTHER_UFUNCS = {
    "negative": operator.neg,
    "positive": operator.pos,
    "absolute": abs,
    "maximum": maximum,
    "minimum": minimum,
    "fmax": None,
    "exp": exp,
    "log": log,
    "log1p": log1p,
    "expm1": expm1,
    "sqrt": sqrt,
    "tanh": tanh,
    "erf": erf,  # scipy.special.erf
    "sin": sin,
    "cos": cos,
    "floor": floor,
    "ceil": ceil,
}


def _error(kind, message):
    """`kind` of exception whose message starts with the user's line, found
    as the tracer's errors find it."""
    file, line = _picokernel._user_location()
    if not file:
        return kind(message)
    return kind(f"{file}:{line}: error: {message}")


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    name = ufunc.__name__
    if method != "__call__" or kwargs:
        raise _error(TypeError, f"picokernel: numpy.{name}.{method} with arguments "
                                f"{sorted(kwargs)} is not supported inside kernels")
    if name in _BINARY_UFUNCS and len(inputs) == 2:
        forward, reflected = _BINARY_UFUNCS[name]
        lhs, rhs = inputs
        result = (getattr(lhs, forward)(rhs) if isinstance(lhs, Value)
                  else getattr(rhs, reflected)(lhs))
        if result is NotImplemented:
            raise _error(TypeError, f"picokernel: numpy.{name} of "
                                    f"{type(lhs).__name__} and "
                                    f"{type(rhs).__name__} is not supported")
        return result
    function = _OTHER_UFUNCS.get(name)
    if function is None:
        raise _error(TypeError, f"picokernel: numpy.{name} is not supported "
                                "inside kernels")
    return function(*inputs)


_REDUCTIONS = {"sum": "sum", "max": "max", "amax": "max", "min": "min",
               "amin": "min", "mean": "mean"}


def _array_function(self, func, types, args, kwargs):
    name = func.__name__
    if name == "where" and len(args) == 3 and not kwargs:
        return where(*args)
    if name == "where" and len(args) == 2 and not kwargs:
        raise _error(ValueError, "numpy.where: either both or neither of x and "
                                 "y should be given")
    if name in _REDUCTIONS and args and isinstance(args[0], Value):
        options = dict(kwargs)
        if len(args) > 1:
            options["axis"] = args[1]
        unsupported = set(options) - {"axis", "keepdims"}
        if len(args) > 2 or unsupported:
            raise _error(TypeError, f"picokernel: numpy.{name} supports only axis "
                                    f"and keepdims inside kernels, got "
                                    f"{sorted(unsupported)}")
        return getattr(args[0], _REDUCTIONS[name])(**options)
    raise _error(TypeError, f"picokernel: numpy.{name} is not supported inside "
                            f"kernels{_view_hint(name)}")


# The ndarray attributes and NumPy functions that only change a layout: a
# view of the argument, made before the call, does what they would.
_LAYOUT_ATTRIBUTES = frozenset({"T", "mT", "reshape", "transpose", "swapaxes",
                                "ravel", "flatten", "squeeze", "moveaxis",
                                "expand_dims", "permute_dims", "matrix_transpose"})


def _view_hint(name):
    return (" (pass a transposed or reshaped view of the array as the argument "
            "instead)" if name in _LAYOUT_ATTRIBUTES else "")


def _missing_attribute(self, name):
    # An ndarray's attribute that kernels lack (.T, .reshape, .argmax) is a
    # clear error at the user's line; any other name an AttributeError.
    if not name.startswith("__") and hasattr(np.ndarray, name):
        raise _error(TypeError, f"picokernel: ndarray.{name} is not supported "
                                f"inside kernels{_view_hint(name)}")
    raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


Value.__array_ufunc__ = _array_ufunc
Value.__array_function__ = _array_function
Value.__getattr__ = _missing_attribute
Ref.__getattr__ = _missing_attribute


def _not_loaded(self, *args, **kwargs):
    # A ref used as an array (`x * 2`, `np.exp(x)`, `x.sum()` without
    # `[...]`): say how to load it, at the user's line.
    raise _error(TypeError, f"ref '{self.name}' is a reference to an array, not "
                            f"its value: load it with {self.name}[...] (as in "
                            f"{self.name}[...] * 2)")


for _ref in (Ref, _interpreter.InterpretedRef):
    for _operator in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                      "matmul", "and", "or", "xor", "lshift", "rshift"):
        setattr(_ref, f"__{_operator}__", _not_loaded)
        setattr(_ref, f"__r{_operator}__", _not_loaded)
    for _operator in ("neg", "pos", "abs", "invert", "lt", "le", "gt", "ge",
                      "float", "int", "bool", "iter", "array"):
        setattr(_ref, f"__{_operator}__", _not_loaded)
    _ref.__array_ufunc__ = _not_loaded
    _ref.__array_function__ = _not_loaded
    for _method in ("sum", "max", "min", "mean", "astype"):
        setattr(_ref, _method, _not_loaded)


def _ref_len(self):
    if not self.shape:
        raise _error(TypeError, f"len() of ref '{self.name}', which is 0-d")
    return self.shape[0]


Ref.__len__ = _ref_len  # as len(x.shape) reads it
del _ref, _operator, _method


def vulkan_available():
    """(True, "") if a Vulkan device can run kernels, else (False, why)."""
    return _picokernel.vulkan_available()


def vulkan_device():
    """The name of the Vulkan device that backend='vulkan' kernels run on
    (PK_VULKAN_DEVICE picks one: an index or part of its name)."""
    return _picokernel.vulkan_device()


def stages():
    """The names of the compilation stages, in order (see Kernel.lower)."""
    return list(_picokernel.stages())


class KernelIR:
    """A traced kernel: ``listing`` in the seed post's style
    (``v2<4:float32> = MUL(v0, v1)``) and ``mlir``, the pk dialect module."""

    def __init__(self, listing, mlir):
        self.listing = listing
        self.mlir = mlir

    def __str__(self):
        return self.listing

    def __repr__(self):
        return f"KernelIR(\n{self.listing})"


def _param_names(fn):
    if not callable(fn):
        raise TypeError(f"picokernel.kernel expects a function, got {type(fn).__name__}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as error:
        raise TypeError(f"cannot read the parameters of {fn!r}: {error}") from None
    names = []
    for parameter in signature.parameters.values():
        if parameter.kind not in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            raise TypeError(
                f"kernel {fn.__name__!r}: parameter {parameter.name!r} must be a plain "
                "positional parameter (every parameter of a kernel is a ref)"
            )
        names.append(parameter.name)
    if not names:
        raise TypeError(f"kernel {fn.__name__!r} takes no refs; it needs at least the output")
    return names


def _jit_disabled():
    return _switched_on("PK_DISABLE_JIT")


class Kernel(_picokernel.Kernel):
    """A compiled kernel. Call it with NumPy arrays, the output last:
    ``k(a, b, o)`` writes into ``o`` and returns None; or by parameter name,
    ``k(a, b, o=o)``. Arguments the kernel only reads may be array-likes,
    converted by NumPy once per call: Python numbers and NumPy scalars (0-d
    arrays: a Python float is float64, an int int64), lists, objects with
    ``__array__`` or ``__dlpack__``; an argument it writes must be a
    writable NumPy array. Called with Dask arrays, it runs nothing and
    returns the Dask arrays it stores (picokernel.dask)."""

    def __new__(cls, fn, *, backend="cpu", **options):
        # backend="numpy" (or PK_DISABLE_JIT=1): a kernel that interprets.
        if cls is Kernel and (backend == "numpy" or _jit_disabled()):
            cls = InterpretedKernel
        return super().__new__(cls)

    def __init__(self, fn, *, backend="cpu",
                 parallel_threshold=_picokernel.DEFAULT_PARALLEL_THRESHOLD,
                 max_cache_entries=_picokernel.DEFAULT_MAX_CACHE_ENTRIES,
                 workgroup_size=_picokernel.DEFAULT_WORKGROUP_SIZE,
                 max_device_bytes=_picokernel.DEFAULT_MAX_DEVICE_BYTES,
                 dynamic=None):
        if backend not in BACKENDS:
            raise ValueError(
                f"unknown backend {backend!r}; available: {', '.join(map(repr, BACKENDS))}"
            )
        if dynamic is not None and not isinstance(dynamic, bool):
            raise TypeError(
                f"dynamic must be None (automatic), True or False, not {dynamic!r}")
        if isinstance(self, InterpretedKernel):
            backend = "numpy"
        names = _param_names(fn)
        # (An interpreting kernel traces as the CPU's: show_ir and lower.)
        super().__init__(fn, getattr(fn, "__name__", "kernel"), names,
                         int(parallel_threshold), int(max_cache_entries),
                         "cpu" if backend == "numpy" else backend,
                         int(workgroup_size), int(max_device_bytes),
                         {None: "automatic", True: "always", False: "never"}[dynamic])
        self.backend = backend
        self.dynamic = dynamic
        self.__name__ = self.name
        self.__qualname__ = getattr(fn, "__qualname__", self.name)
        self.__module__ = getattr(fn, "__module__", None)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn
        self._options = dict(backend=backend, parallel_threshold=parallel_threshold,
                             max_cache_entries=max_cache_entries,
                             workgroup_size=workgroup_size,
                             max_device_bytes=max_device_bytes, dynamic=dynamic)
        self._param_names = names
        self._recent = None
        # (os.urandom: the uuid module loads libuuid, a library the wheel
        # does not carry.)
        self._token = os.urandom(16).hex()

    def _compiles(self):
        info = self._cache_info()
        return info["misses"] + info["disk_loads"]

    def _traced(self, arrays):
        """(listing, mlir) of the kernel traced for `arrays`, remembered as
        the most recent trace."""
        traced = self._trace(*arrays)
        self._recent = (traced, self._compiles())
        return traced

    def _most_recent(self):
        """(listing, mlir) of the most recent compile or show_ir/trace call,
        or None before any."""
        if self._recent is None or self._recent[1] != self._compiles():
            last = self._last_ir()
            if last is not None:
                return last
        return None if self._recent is None else self._recent[0]

    def _most_recent_or_raise(self, method):
        recent = self._most_recent()
        if recent is None:
            how = ("pass the arrays" if isinstance(self, InterpretedKernel)
                   else "call it, or pass the arrays")
            raise RuntimeError(
                f"{method}() of kernel {self.name!r} without arrays shows its most "
                f"recent trace, and it has not been traced yet: {how} "
                f"({method}(*arrays))")
        return recent

    def show_ir(self, *arrays):
        """The kernel traced for these arrays, as a seed-style listing;
        without arrays, the most recent trace (of a call that compiled, or
        of show_ir, trace)."""
        if not arrays:
            return self._most_recent_or_raise("show_ir")[0]
        return self._traced(arrays)[0]

    def lower(self, *arrays, stage="llvm"):
        """MLIR text of the kernel for these arrays after a compilation
        stage: 'pk' (as traced), 'linalg', 'fused', 'tiled', 'bufferized' or
        'llvm' (MLIR's LLVM dialect); 'llvmir' (LLVM IR as LLVM optimizes it
        for this CPU) or 'asm' (this CPU's assembly), as the JIT compiles
        it; or 'ptx': its GPU kernels as PTX for NVIDIA GPUs (sm_80 and
        later; the CUDA toolkit's libdevice for math functions). Without
        arrays, of the most recent trace (see show_ir).
        PK_PERF=1 when kernels compile shows them by name in `perf report`
        (LLVM's jitdump) and in debuggers (GDB's JIT interface)."""
        if stage == "ptx":
            traced = self._traced(arrays) if arrays else \
                self._most_recent_or_raise("lower")
            return _picokernel._ptx(traced[1])
        if not arrays:
            mlir = self._most_recent_or_raise("lower")[1]
            return _picokernel._lower_mlir(mlir, stage)
        return self._lower(*arrays, stage=stage)

    def trace(self, *arrays):
        """The kernel traced for these arrays (shapes and dtypes only), as
        a KernelIR; without arrays, the most recent trace (see show_ir)."""
        if not arrays:
            return KernelIR(*self._most_recent_or_raise("trace"))
        return KernelIR(*self._traced(arrays))

    @property
    def ir(self):
        """The KernelIR of the most recent trace (see show_ir); None before
        any."""
        recent = self._most_recent()
        return None if recent is None else KernelIR(*recent)

    def _bound(self, args, named):
        """A call's arguments in parameter order, as many as it has."""
        names = self._param_names
        if named:
            return _picokernel._bind_keywords(self.name, names, args, named)
        if len(args) != len(names):
            raise TypeError(f"{self.name}() takes {len(names)} arrays "
                            f"({', '.join(names)}), got {len(args)}")
        return args

    def cache_info(self):
        """Hits, misses, evictions, entries and time spent tracing and
        compiling (compile = MLIR pass pipeline + LLVM code generation)."""
        return CacheInfo(**self._cache_info())

    def __repr__(self):
        kind = type(self).__name__
        return f"<picokernel.{kind} {self.__qualname__} backend={self.backend!r}>"

    def __reduce__(self):
        # By reference, as functions pickle, where the kernel is its
        # module's global of that name (a decorated function); else as its
        # function and options (a local or lambda function then pickles
        # only with cloudpickle, as Dask's and Ray's schedulers do). Its
        # compiled variants are not pickled: a new process compiles (or
        # loads from the disk cache) its own.
        # A kernel of __main__ (a script, a notebook) goes by value too: a
        # worker process's __main__ is another program.
        module = sys.modules.get(self.__module__ or "")
        found = module
        for part in self.__qualname__.split("."):
            found = getattr(found, part, None)
        if found is self and self.__module__ != "__main__":
            return self.__qualname__
        return (_rebuild_kernel, (self.__wrapped__, self._options, self._token))

    def __dask_tokenize__(self):
        # Dask names a graph's keys by its functions' tokens: two kernels
        # (a notebook cell redefining one) must not share them.
        return ("picokernel.Kernel", self.__qualname__, self._token)


class InterpretedKernel(Kernel):
    """A kernel with backend="numpy": each call runs its Python function on
    the arrays themselves, every ``ref[...]`` a NumPy load (a copy) or store,
    nothing compiled (the original picokernel's default backend; a way to
    debug a kernel with print and pdb). show_ir and lower trace it as the
    CPU backend compiles it."""

    def __call__(self, /, *args, **named):
        names = self._param_names
        args = self._bound(args, named)
        if any(hasattr(arg, "__dask_graph__") for arg in args):
            from picokernel import dask
            return dask._apply(self, args)
        arrays = [arg if isinstance(arg, np.ndarray)
                  else _picokernel._as_array(arg, name)
                  for name, arg in zip(names, args)]
        converted = [None if isinstance(arg, np.ndarray) else type(arg)
                     for arg in args]
        _interpreter.run(self.__wrapped__, names, arrays, converted, _error)


# Kernels unpickled by value in this process, by their token: a Dask worker
# unpickles one per task, and each would compile anew.
_REBUILT = collections.OrderedDict()


def _rebuild_kernel(fn, options, token=None):
    if token is None:
        return Kernel(fn, **options)
    kernel = _REBUILT.pop(token, None)
    if kernel is None:
        kernel = Kernel(fn, **options)
        kernel._token = token
    _REBUILT[token] = kernel
    while len(_REBUILT) > 256:
        _REBUILT.popitem(last=False)
    return kernel


def kernel(fn=None, *, backend="cpu", **options):
    """Decorator: ``@picokernel.kernel`` or ``@picokernel.kernel(backend=...)``.

    Backends: ``"cpu"`` (the default: LLVM JIT for this CPU), ``"vulkan"``
    (SPIR-V on a Vulkan device: any GPU driver, or lavapipe on the CPU) and
    ``"numpy"`` (the function run on the arrays by NumPy, nothing compiled:
    the original picokernel's default, and a way to debug a kernel;
    ``PK_DISABLE_JIT=1`` in the environment when a kernel is defined makes
    it its backend).
    Options: ``parallel_threshold`` (CPU: loop iterations from which a kernel
    runs on all cores), ``workgroup_size`` (Vulkan: threads per workgroup),
    ``max_cache_entries`` (compiled variants kept) and ``max_device_bytes``
    (Vulkan: bytes of device buffers the variants keep, 256 MiB by default;
    the least recently used variants go first).

    ``dynamic`` says when a kernel compiles for dynamic sizes, one compile
    serving every size with the same ranks, dtypes, aliasing, sizes 0 and 1
    (broadcasting) and equalities between sizes: ``None`` (the default)
    compiles for the first call's sizes and, when a second size comes for
    the same pattern, once for dynamic sizes that serve every later size
    (sizes that varied once stay dynamic in later compiles);
    ``True`` compiles for dynamic sizes from the first call; ``False``
    compiles once per shape. Kernels whose code reads sizes (``x.shape``,
    ``len(x)``) or catches errors of its trace compile per shape whatever
    the policy; slices from one end to a bound counted from the other
    (``x[-5:4]``) keep just the sizes they involve static; slices of a constant size (``x[:4]``,
    ``x[2]``, ``x[-3:]``, ``x[-1]``) serve every size long enough to hold
    them, and each shorter size compiles for itself; a size that is
    another's plus a constant (``o`` in ``o[...] = x[1:] - x[:-1]``) is
    computed from it, one compile serving every size where that holds;
    on a Vulkan device that limits loop iterations (llvmpipe), kernels
    with loops over a varying size (sums, products) stay static;
    ``PK_LOG_COMPILES=1`` logs each compile and why.

    NumPy arrays and numbers the kernel reads from its globals or closure
    are constants, frozen when it is traced for a shape and dtype (as in
    ``jax.jit``): later changes to them change no compiled variant. Pass
    what changes as an argument.
    """
    if fn is None:
        return lambda f: Kernel(f, backend=backend, **options)
    return Kernel(fn, backend=backend, **options)


def trace_kernel(fn, shapes, dtypes=None):
    """Traces ``fn`` (a function or a kernel) for arrays of the given shapes
    and dtypes (float32 where not given, as in the original picokernel;
    nothing is compiled or run) and returns its KernelIR."""
    if isinstance(fn, Kernel):
        fn = fn.__wrapped__
    if dtypes is None:
        dtypes = [np.float32] * len(shapes)
    names = _param_names(fn)
    listing, mlir, _ = _picokernel._trace_function(
        fn, getattr(fn, "__name__", "kernel"), names,
        [tuple(shape) for shape in shapes], list(dtypes))
    return KernelIR(listing, mlir)
