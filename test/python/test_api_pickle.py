"""Issue 20, item 9: kernels pickle by reference to their function, as
functions do (multiprocessing, distributed schedulers), useful reprs and
docstrings, and the package's typing (py.typed and the extension's .pyi)."""

import concurrent.futures
import importlib.util
import multiprocessing
import pathlib
import pickle

import numpy as np
import pytest

import picokernel


@picokernel.kernel(dynamic=False, max_cache_entries=3)
def scaled(x, o):
    """Twice x."""
    o[...] = 2 * x[...]


def run_scaled(n):
    x, o = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    scaled(x, o)
    return o


def test_a_module_level_kernel_pickles_by_reference():
    assert pickle.loads(pickle.dumps(scaled)) is scaled
    assert scaled.__qualname__ == "scaled" and scaled.__module__ == __name__
    assert scaled.__doc__ == "Twice x."


def test_kernels_run_in_spawned_processes():
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        results = list(pool.map(run_scaled, [3, 5]))
        # The kernel itself, pickled by reference into the child.
        o = pool.submit(scaled, np.ones(2, np.float32), np.zeros(2, np.float32)).result()
    np.testing.assert_array_equal(results[1], 2 * np.arange(5, dtype=np.float32))
    assert o is None


def test_a_local_kernel_pickles_as_its_function_and_options():
    def make():
        @picokernel.kernel(backend="numpy", max_cache_entries=5)
        def local(x, o):
            o[...] = x[...] + 1
        return local

    local = make()
    # Plain pickle cannot pickle a local function (as for any function) ...
    with pytest.raises((pickle.PicklingError, AttributeError), match="local"):
        pickle.dumps(local)
    # ... cloudpickle (Dask's, Ray's) pickles it by value, options kept.
    if importlib.util.find_spec("cloudpickle") is None:
        pytest.skip("cloudpickle is not installed")
    import cloudpickle
    copy = pickle.loads(cloudpickle.dumps(local))
    assert copy is not local and copy.backend == "numpy"
    assert copy._options == local._options
    o = np.zeros(2)
    copy(np.ones(2), o)
    assert o.tolist() == [2.0, 2.0]


def test_reprs_and_docstrings():
    assert repr(scaled) == "<picokernel.Kernel scaled backend='cpu'>"
    interpreted = picokernel.kernel(lambda x, o: None, backend="numpy")
    assert repr(interpreted) == ("<picokernel.InterpretedKernel "
                                "test_reprs_and_docstrings.<locals>.<lambda> backend='numpy'>")
    public = [getattr(picokernel, name) for name in picokernel.__all__]
    for item in public:
        if callable(item):
            assert item.__doc__ and item.__doc__.strip(), item
    for name in picokernel._picokernel.MATH_FUNCTIONS:
        assert getattr(picokernel, name).__doc__, name


def test_typing_files_are_installed():
    package = pathlib.Path(picokernel.__file__).parent
    assert (package / "py.typed").exists()
    stub = package / "_picokernel.pyi"
    assert stub.exists(), "the extension's stub is not installed"
    text = stub.read_text()
    assert "class Kernel" in text and "def where(" in text
