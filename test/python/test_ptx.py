"""PTX for NVIDIA GPUs: kernels drawn from the whole language
(random_language.py) and the GPU suite's kernel classes compile to PTX
(Kernel.lower(stage="ptx")) that the CUDA toolkit's ptxas accepts for sm_80
and sm_90. Nothing here runs the PTX: that needs a GPU (scripts/gpu-check).

    PK_PTX_RANDOM_KERNELS=2000 PK_RANDOM_SEED=7 pytest test_ptx.py
"""
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import picokernel as pk
import random_language
from conftest import report

COUNT = int(os.environ.get("PK_PTX_RANDOM_KERNELS", 150))
FIRST_SEED = int(os.environ.get("PK_RANDOM_SEED", 0))
ARCHITECTURES = ("sm_80", "sm_90")


def find_ptxas():
    """ptxas on PATH, else in the CUDA toolkit (CUDA_HOME, CUDA_PATH,
    /usr/local/cuda); None without one."""
    found = shutil.which("ptxas")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"):
        if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK):
            return os.path.join(root, "bin", "ptxas")
    return None


PTXAS = find_ptxas()
needs_ptxas = pytest.mark.skipif(
    PTXAS is None, reason="ptxas (the CUDA toolkit's) not found on PATH, in "
    "CUDA_HOME, CUDA_PATH or /usr/local/cuda: PTX is compiled but not checked")


def assemble(ptx, tmp_path, name):
    """None when ptxas accepts `ptx` for every architecture, else why not."""
    source = tmp_path / f"{name}.ptx"
    source.write_text(ptx)
    for arch in ARCHITECTURES:
        result = subprocess.run([PTXAS, f"-arch={arch}", str(source), "-o", os.devnull],
                                capture_output=True, text=True)
        if result.returncode:
            return f"ptxas -arch={arch}: {result.stderr.strip()[:800]}"
    return None


def entries(ptx):
    return re.findall(r"\.entry\s+(\w+)", ptx)


def random_kernel_ptx(seed, dynamic):
    """(case, PTX) of the random kernel of `seed` for its arrays, or (case,
    None) where picokernel refuses the kernel on the CPU too (NumPy raises,
    or a documented limit: random_language's own test checks which). With
    `dynamic`, the PTX of the kernel compiled for dynamic sizes."""
    case = random_language.Case(seed)
    if isinstance(case.expected, Exception):
        return case, None
    kernel = pk.kernel(case.function(pk), dynamic=dynamic)
    _, views = case.layout.materialize()
    if dynamic:
        try:
            kernel(*views)
        except Exception:  # noqa: BLE001 - a limit of the language
            return case, None
        return case, kernel.lower(stage="ptx")  # of the call's trace
    try:
        return case, kernel.lower(*views, stage="ptx")
    except Exception:
        try:
            kernel(*views)
        except Exception:  # noqa: BLE001 - a limit of the language
            return case, None
        raise


@needs_ptxas
@pytest.mark.parametrize("dynamic", [None, True], ids=["static", "dynamic"])
def test_random_kernels_assemble(dynamic, tmp_path):
    checked, copies, failures = 0, 0, []
    for seed in range(FIRST_SEED, FIRST_SEED + COUNT):
        try:
            case, ptx = random_kernel_ptx(seed, dynamic)
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(f"seed {seed}: PTX: {type(error).__name__}: {error}")
            continue
        if ptx is None:
            continue
        if not ptx:
            copies += 1  # only copies whole arrays: no GPU kernel
            continue
        problem = assemble(ptx, tmp_path, f"seed{seed}")
        if problem:
            failures.append(f"{case.describe()}\n{problem}")
        checked += 1
    sizes = "dynamic" if dynamic else "static"
    report(f"PTX of random kernels ({sizes} sizes): {checked} assembled by ptxas "
           f"for {'/'.join(ARCHITECTURES)}, {copies} only copy, {len(failures)} failed")
    assert not failures, "\n\n".join(failures[:5])
    assert checked >= COUNT // 3


def fma(a, b, c, o):
    o[...] = a[...] * b[...] + c[...]


def chain(x, o):
    v = x[...]
    for _ in range(4):
        v = pk.tanh(v) * 0.5 + pk.exp(-v * v) - pk.sqrt(abs(v) + 1.0)
    o[...] = v


def broadcast(x, row, o):
    o[...] = x[...] + row[...]


def stencil(x, o):
    o[1:-1] = x[2:] - 2 * x[1:-1] + x[:-2]


def softmax(x, o):
    v = x[...]
    e = pk.exp(v - v.max(axis=-1, keepdims=True))
    o[...] = e / e.sum(axis=-1, keepdims=True)


def full_sum(x, o):
    o[...] = x[...].sum()


def matmul_bias(a, b, bias, o):
    o[...] = a[...] @ b[...] + bias[...]


def remainder(x, y, o):
    o[...] = x[...] % y[...]


def cast(x, o):
    o[...] = x[...]


CLASSES = {
    "fma": (fma, lambda dt: [np.ones(1000, dt)] * 4),
    "chain": (chain, lambda dt: [np.ones(777, dt)] * 2),
    "broadcast": (broadcast, lambda dt: [np.ones((33, 65), dt), np.ones(65, dt),
                                         np.ones((33, 65), dt)]),
    "stencil": (stencil, lambda dt: [np.ones(1000, dt)] * 2),
    "softmax": (softmax, lambda dt: [np.ones((16, 1000), dt)] * 2),
    "full_sum": (full_sum, lambda dt: [np.ones(100000, dt), np.ones((), dt)]),
    "matmul_bias": (matmul_bias, lambda dt: [np.ones((100, 70), dt), np.ones((70, 33), dt),
                                             np.ones(33, dt), np.ones((100, 33), dt)]),
    "remainder": (remainder, lambda dt: [np.ones(100, dt)] * 3),
}
FLOATS = [np.float16, np.float32, np.float64, "bfloat16"]


def dtype_of(name):
    if name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return np.dtype(name)


@needs_ptxas
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(CLASSES))
def test_kernel_classes_assemble(name, dtype, tmp_path):
    function, arrays = CLASSES[name]
    ptx = pk.kernel(function).lower(*arrays(dtype_of(dtype)), stage="ptx")
    assert entries(ptx), ptx[:2000]
    assert ".extern" not in ptx  # libdevice linked in: nothing left to resolve
    problem = assemble(ptx, tmp_path, name)
    assert problem is None, problem


@needs_ptxas
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "bool"])
def test_integer_kernels_assemble(dtype, tmp_path):
    @pk.kernel
    def mixed(a, b, o, total):
        x, y = a[...], b[...]
        o[...] = x == y if dtype == "bool" else x // y + x % y
        total[...] = x.sum()

    a = np.ones((40, 30), dtype)
    total = np.zeros((), np.uint64 if dtype == "uint8" else np.int64)
    ptx = mixed.lower(a, a.copy(), np.empty_like(a), total, stage="ptx")
    problem = assemble(ptx, tmp_path, "mixed")
    assert problem is None, problem


def test_copies_only_have_no_ptx():
    x = np.ones(10, np.float32)
    assert pk.kernel(cast).lower(x, np.empty_like(x), stage="ptx") == ""


def test_one_module_with_an_entry_per_launch():
    """Kernels of several launches (a matmul, then its epilogue) come as one
    PTX module, an entry point each."""
    a, b = np.ones((100, 70), np.float32), np.ones((70, 33), np.float32)
    ptx = pk.kernel(matmul_bias).lower(a, b, np.ones(33, np.float32),
                                       np.empty((100, 33), np.float32), stage="ptx")
    assert ptx.count(".version") == 1
    assert len(entries(ptx)) >= 1
    # The matmul stages its tiles in shared memory, not in malloc'd memory.
    assert ".shared" in ptx and "malloc" not in ptx


def lower_exp_with_toolkit(toolkit):
    """The error (on stdout) of lowering a kernel calling exp to PTX in a
    process whose CUDA_HOME is `toolkit`."""
    script = (
        "import numpy as np, picokernel as pk\n"
        "x = np.ones(8, np.float32)\n"
        "k = pk.kernel(lambda x, o: o.__setitem__(..., pk.exp(x[...])))\n"
        "try:\n"
        "    k.lower(x, np.empty_like(x), stage='ptx')\n"
        "except RuntimeError as e:\n"
        "    print(e)\n")
    env = dict(os.environ, CUDA_HOME=str(toolkit), CUDA_ROOT="", CUDA_PATH="")
    out = subprocess.run([os.sys.executable, "-c", script], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out


def test_a_toolkit_without_libdevice_is_a_clear_error(tmp_path):
    """Math calls need CUDA's libdevice: with CUDA_HOME at a directory
    without one, lowering raises an error naming the function and the path
    (MLIR's serializer looks there for every kernel)."""
    out = lower_exp_with_toolkit(tmp_path)
    assert "calls __nv_expf, a math function of CUDA's libdevice, which was not found at " \
        f"{tmp_path}/nvvm/libdevice/libdevice.10.bc" in out.stdout, out.stdout + out.stderr


def test_lower_ptx_of_the_most_recent_trace():
    x = np.ones(64, np.float32)
    k = pk.kernel(fma)
    k(x, x, x, np.empty_like(x))
    assert entries(k.lower(stage="ptx"))


@pytest.mark.parametrize("chip, version, message", [
    ("sm_80", 60, "PTX 6.0 is older than sm_80 allows (7.0 and later)"),
    ("sm_90", 70, "PTX 7.0 is older than sm_90 allows (7.8 and later)"),
    ("sm_999", 0, "unsupported NVIDIA architecture 'sm_999'"),
    ("sm_80", 999, "unknown PTX version 99.9"),
])
def test_targets_llvm_would_abort_on_are_errors(chip, version, message):
    """LLVM's NVPTX backend aborts the process on a PTX version older than
    the architecture allows: the compile checks first and raises."""
    x = np.ones(8, np.float32)
    k = pk.kernel(fma)
    k(x, x, x, np.empty_like(x))
    with pytest.raises(RuntimeError, match=re.escape(message)):
        pk._picokernel._ptx(k.ir.mlir, chip, version)


@needs_ptxas
@pytest.mark.parametrize("shape, axis", [((70000, 2, 3), None), ((70000, 3, 40), -1),
                                         ((3, 70000, 2), None)])
def test_grids_taller_than_65535_blocks_launch_along_x(shape, axis, tmp_path):
    """The GPU tiling puts a leading dimension in the grid's y, which NVIDIA
    GPUs cap at 65535 blocks: such grids launch along x instead."""
    def body(x, o):
        v = x[...] * 2 + 1
        o[...] = v if axis is None else v.sum(axis=axis, keepdims=True)

    x = np.ones(shape, np.float32)
    out = np.empty(shape if axis is None else shape[:-1] + (1,), np.float32)
    ptx = pk.kernel(body).lower(x, out, stage="ptx")
    problem = assemble(ptx, tmp_path, "tall")
    assert problem is None, problem


def many_arrays(count):
    """A kernel summing `count` arrays into one, and its arrays."""
    names = [f"a{i}" for i in range(count)]
    source = (f"def kernel({', '.join(names)}, o):\n"
              f"    o[...] = {' + '.join(n + '[...]' for n in names)}\n")
    scope = {}
    exec(source, scope)  # noqa: S102 - the test's own source
    arrays = [np.ones((4, 4, 4), np.float32) for _ in range(count + 1)]
    return pk.kernel(scope["kernel"]), arrays


@needs_ptxas
def test_parameters_beyond_what_ptx_allows_are_an_error(tmp_path):
    """Each array is a memref descriptor of 9 parameters (rank 3): 61 of
    them take 4392 bytes, more than PTX before 8.1 allows per kernel
    (ptxas refused it); PTX 8.1 takes them."""
    kernel, arrays = many_arrays(60)
    with pytest.raises(RuntimeError, match="4392 bytes of parameters"):
        kernel.lower(*arrays, stage="ptx")
    ptx = pk._picokernel._ptx(kernel.ir.mlir, "sm_80", 81)
    assert assemble(ptx, tmp_path, "many") is None
    kernel, arrays = many_arrays(59)
    assert assemble(kernel.lower(*arrays, stage="ptx"), tmp_path, "fewer") is None


def test_a_libdevice_that_is_not_cuda_s_is_an_error(tmp_path):
    """An empty file where libdevice should be: the math stays unresolved,
    and the compile says so instead of returning PTX ptxas refuses."""
    library = tmp_path / "nvvm" / "libdevice"
    library.mkdir(parents=True)
    (library / "libdevice.10.bc").write_bytes(b"")
    out = lower_exp_with_toolkit(tmp_path)
    assert "calls __nv_expf, which the toolkit's libdevice did not define" in out.stdout, \
        out.stdout + out.stderr
