//===- Module.cpp - the picokernel._picokernel extension module -----------===//
//
// Binds the C++ tracer and runtime: kernels are pk::Kernel objects whose
// body calls the Python function on Ref proxies. A call stays in C++ on a
// cache hit: NumPy arrays are checked and viewed through the NumPy C API and
// the compiled function runs (with the GIL released unless the run is short).
//
//===----------------------------------------------------------------------===//

#define PICOKERNEL_PYTHON_IMPORTS_NUMPY
#include "Accesses.h"
#include "Arguments.h"
#include "Errors.h"
#include "Exit.h"
#include "Gil.h"
#include "Introspection.h"
#include "Logging.h"
#include "NumPy.h"
#include "Tracing.h"

#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Runtime/CompiledKernel.h"
#include "picokernel/Support/Environment.h"
#include "picokernel/Support/Fork.h"
#include "picokernel/Target/Listing.h"
#include "picokernel/Version.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "llvm/ADT/SmallVector.h"
#include <cxxabi.h>

namespace nb = nanobind;
using namespace pk;
using namespace pk::python;

namespace {

/// A picokernel kernel of a Python function.
class PyKernel {
public:
  PyKernel(nb::callable function, std::string name,
           std::vector<std::string> paramNames, int64_t parallelThreshold,
           size_t maxCacheEntries, const std::string &backend,
           int64_t workgroupSize, uint64_t maxDeviceBytes,
           const std::string &dynamic)
      : function(function), paramNames(paramNames),
        kernel(name, makeBody(), std::move(paramNames),
               options(parallelThreshold, maxCacheEntries, backend,
                       workgroupSize, maxDeviceBytes, dynamic,
                       definitionOf(function))) {}

  // A kernel's function usually refers back to the kernel through its
  // module's globals: let Python's cycle collector see that reference.
  static int traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    if (!nb::inst_ready(self))
      return 0;
    Py_VISIT(nb::inst_ptr<PyKernel>(self)->function.ptr());
    return 0;
  }

  /// The type's call slot: a call goes straight to call(), with no method
  /// lookup, bound method or argument conversion on the way (a `__call__`
  /// method costs about 100 ns a call).
  static PyObject *callSlot(PyObject *self, PyObject *args, PyObject *kwargs) {
    if (!nb::inst_ready(self)) {
      PyErr_SetString(PyExc_TypeError, "the kernel is not initialized");
      return nullptr;
    }
    try {
      PyKernel *kernel = nb::inst_ptr<PyKernel>(self);
      nb::object result =
          kwargs && PyDict_GET_SIZE(kwargs) != 0
              ? kernel->call(bindKeywords(kernel->name(), kernel->paramNames,
                                          args, kwargs))
              : kernel->call(nb::borrow<nb::args>(args));
      flushLogRecords();
      return result.release().ptr();
    } catch (abi::__forced_unwind &) {
      // A thread Python ends at exit (a daemon thread waiting for the GIL)
      // unwinds through here: that must go on.
      throw;
    } catch (...) {
      flushLogRecords();
      raisePythonError();
      return nullptr;
    }
  }

  static int clear(PyObject *self) {
    nb::inst_ptr<PyKernel>(self)->function = nb::callable();
    return 0;
  }

  /// Runs the kernel on the arrays `args`: None; or, where some are Dask
  /// arrays, builds its Dask graph (picokernel.dask) and returns the Dask
  /// arrays it stores.
  nb::object call(nb::args args) {
    size_t count = args.size();
    if (count != paramNames.size())
      throw nb::type_error((kernel.name() + "() takes " +
                            std::to_string(paramNames.size()) + " arrays (" +
                            joinedNames() + "), got " + std::to_string(count))
                               .c_str());
    llvm::SmallVector<ArrayView, 8> views(count);
    llvm::SmallVector<int64_t, 64> dims;
    size_t totalDims = 0;
    int64_t bytes = 0;
    bool direct = true;
    for (size_t i = 0; i < count; ++i) {
      PyObject *object = args[i].ptr();
      if (!PyArray_Check(object))
        return callOnArrayLikes(args);
      totalDims += PyArray_NDIM((PyArrayObject *)object);
      bytes += PyArray_NBYTES((PyArrayObject *)object);
    }
    dims.reserve(totalDims); // the views' shapes point into it
    for (size_t i = 0; i < count; ++i) {
      auto *array = (PyArrayObject *)args[i].ptr();
      std::optional<DType> dtype = fromNumPy(PyArray_DESCR(array));
      if (!dtype)
        throw nb::type_error(("argument '" + paramNames[i] + "' has dtype " +
                              numpyName(PyArray_DESCR(array)) +
                              ", which picokernel does not support")
                                 .c_str());
      size_t start = dims.size();
      dims.append(PyArray_DIMS(array),
                  PyArray_DIMS(array) + PyArray_NDIM(array));
      views[i] = ArrayView{
          PyArray_DATA(array),
          *dtype,
          std::span<const int64_t>(dims.data() + start, dims.size() - start),
          {},
          !PyArray_ISWRITEABLE(array)};
      // Compiled code reads native, aligned, C-contiguous arrays; others
      // (strided, Fortran-order, byte-swapped, misaligned) run on copies.
      direct &= PyArray_IS_C_CONTIGUOUS(array) && PyArray_ISNOTSWAPPED(array) &&
                PyArray_ISALIGNED(array);
    }
    if (!direct) {
      callOnCopies(args);
      return nb::none();
    }
    try {
      if (bytes < defaults::kKeepGilBytes && kernel.runIfCompiled(views))
        return nb::none();
      ReleaseGil release;
      kernel(views);
    } catch (const OverlapError &) {
      callOnCopies(args);
    }
    return nb::none();
  }

  // show_ir, lower and ir trace into a context of their own, freed
  // afterwards: the shared one would keep every new shape's types.
  std::pair<std::string, std::string> traceArrays(nb::args args) {
    return describe(kernel.trace(signatureOf(args), TraceContext::Own));
  }

  std::string lower(nb::args args, const std::string &stage) {
    Module module = kernel.trace(signatureOf(args), TraceContext::Own);
    ReleaseGil release;
    pk::CompileGate gate;
    return lowerToStage(module, stage);
  }

  std::optional<std::pair<std::string, std::string>> lastIR() {
    Module module = kernel.lastCompiledModule(TraceContext::Own);
    if (!module)
      return std::nullopt;
    return describe(module);
  }

  nb::dict cacheInfo() {
    CacheStats stats = kernel.stats();
    nb::dict info;
    info["hits"] = stats.hits;
    info["misses"] = stats.misses;
    info["evictions"] = stats.evictions;
    info["disk_loads"] = stats.diskLoads;
    info["entries"] = stats.entries;
    info["trace_seconds"] = stats.traceSeconds;
    info["compile_seconds"] = stats.pipelineSeconds + stats.codegenSeconds;
    info["pipeline_seconds"] = stats.pipelineSeconds;
    info["codegen_seconds"] = stats.codegenSeconds;
    return info;
  }

  void clearCache() { kernel.clearCache(); }
  const std::string &name() const { return kernel.name(); }
  nb::callable pythonFunction() const { return function; }

private:
  static KernelOptions options(int64_t parallelThreshold,
                               size_t maxCacheEntries,
                               const std::string &backend,
                               int64_t workgroupSize, uint64_t maxDeviceBytes,
                               const std::string &dynamic,
                               SourceLoc definedAt) {
    KernelOptions options;
    options.definedAt = std::move(definedAt);
    if (dynamic == "always")
      options.dynamic = DynamicSizes::Always;
    else if (dynamic == "never")
      options.dynamic = DynamicSizes::Never;
    else if (dynamic != "automatic")
      throw nb::value_error(("unknown dynamic-sizes policy '" + dynamic +
                             "'; available: 'automatic', 'always', 'never'")
                                .c_str());
    options.compile.parallelThreshold = parallelThreshold;
    options.maxCacheEntries = maxCacheEntries;
    options.maxDeviceBytes = maxDeviceBytes;
    // Ctrl-C during a long compile: its KeyboardInterrupt abandons the
    // compile between stages (the main thread's; others see no signals).
    options.compile.checkInterrupt = [] {
      // Out of the compile gate first: a fork holds the GIL while it
      // waits for the gate.
      pk::CompileGate::Outside outside;
      AcquireGil acquire;
      if (PyErr_CheckSignals() != 0)
        throw nb::python_error();
    };
    if (backend == "vulkan")
      options.backend = Backend::Vulkan;
    else if (backend != "cpu")
      throw nb::value_error(
          ("unknown backend '" + backend + "'; available: 'cpu', 'vulkan'")
              .c_str());
    if (workgroupSize < 1)
      throw nb::value_error("workgroup_size must be positive");
    options.vulkan.workgroupSize = workgroupSize;
    return options;
  }

  /// Runs the Python function on the refs; called by the tracer on a miss,
  /// with the GIL released by the caller. (The kernel object, which owns
  /// the function, outlives every call.)
  /// A Python exception that is not an Exception (KeyboardInterrupt,
  /// SystemExit): it ends the call, whichever trace raised it.
  struct AbortingError : nb::python_error, TraceAbort {
    using nb::python_error::python_error;
  };

  Kernel::Body makeBody() {
    return [this](const std::vector<Ref> &refs) {
      // Out of the compile gate first: a fork holds the GIL while it
      // waits for the gate.
      pk::CompileGate::Outside outside;
      AcquireGil acquire;
      if (!function.is_valid())
        raise(PyExc_RuntimeError, "kernel is being destroyed");
      nb::list arguments;
      for (const Ref &ref : refs)
        arguments.append(nb::cast(ref));
      try {
        nb::object result = callPython(function, nb::tuple(arguments));
        if (!result.is_none())
          throw TraceError(
              "kernel '" + kernel.name() +
                  "' returns a value: a kernel returns nothing and stores "
                  "its result into a ref instead (`" +
                  paramNames.back() + "[...] = value`)",
              definitionOf(function), TraceError::Category::Type);
      } catch (nb::python_error &error) {
        if (error.matches(PyExc_Exception))
          throw;
        error.restore();
        throw AbortingError();
      }
    };
  }

  std::string joinedNames() const {
    std::string text;
    for (const std::string &name : paramNames)
      text += (text.empty() ? "" : ", ") + name;
    return text;
  }

  /// A call with arguments that are not NumPy arrays: each converted once
  /// (asArray), for the kernel to read; one it writes must be an array.
  nb::object callOnArrayLikes(nb::args args) {
    for (nb::handle arg : args)
      if (nb::hasattr(arg, "__dask_graph__"))
        return nb::module_::import_("picokernel.dask")
            .attr("apply")(nb::find(this), *args);
    nb::list arrays;
    std::vector<bool> converted(args.size(), false);
    for (size_t i = 0; i < args.size(); ++i) {
      converted[i] = !PyArray_Check(args[i].ptr());
      arrays.append(converted[i] ? asArray(args[i], paramNames[i])
                                 : nb::borrow(args[i]));
    }
    auto asArrays = nb::borrow<nb::args>(nb::tuple(arrays));
    std::vector<bool> written = writtenOf(asArrays);
    for (size_t i = 0; i < args.size(); ++i)
      if (converted[i] && written[i])
        throw nb::type_error(
            ("argument '" + paramNames[i] +
             "' must be a writable "
             "numpy.ndarray: kernel '" +
             name() + "' writes to it (got " +
             nb::cast<std::string>(nb::type_name(args[i].type())) + ")")
                .c_str());
    return call(asArrays);
  }

  /// NumPy's answer for arrays the compiled code cannot take as they are
  /// (strided, byte-swapped, misaligned, partially overlapping): arguments
  /// that view the same memory the same way are one array; the kernel runs
  /// on a native C-contiguous copy of each, and the copies it writes are
  /// copied back. When two different views overlap and one is written, no
  /// copying keeps the order of their loads and stores: NumPy runs the
  /// kernel on the arrays themselves (picokernel._interpreter).
  void callOnCopies(nb::args args) {
    nb::object numpy = nb::module_::import_("numpy");
    std::vector<size_t> groupOf;
    std::vector<nb::handle> groups; // one argument per group
    for (size_t i = 0; i < args.size(); ++i) {
      size_t found = groups.size();
      for (size_t g = 0; g < groups.size() && found == groups.size(); ++g)
        if (sameView(args[i], groups[g]))
          found = g;
      if (found == groups.size())
        groups.push_back(args[i]);
      groupOf.push_back(found);
    }
    nb::list copies;
    for (nb::handle array : groups) {
      nb::object dtype = array.attr("dtype").attr("newbyteorder")("=");
      copies.append(numpy.attr("array")(array, nb::arg("dtype") = dtype,
                                        nb::arg("copy") = true,
                                        nb::arg("order") = "C"));
    }
    nb::list arguments;
    for (size_t i = 0; i < args.size(); ++i)
      arguments.append(copies[groupOf[i]]);
    nb::args copied = nb::borrow<nb::args>(nb::tuple(arguments));
    std::vector<bool> written = writtenOf(copied);
    std::vector<bool> groupWritten(groups.size(), false);
    for (size_t i = 0; i < args.size(); ++i) {
      if (written[i] && !PyArray_ISWRITEABLE((PyArrayObject *)args[i].ptr()))
        throw nb::value_error(("argument '" + paramNames[i] +
                               "' is read-only, but kernel '" + name() +
                               "' writes to it")
                                  .c_str());
      groupWritten[groupOf[i]] = groupWritten[groupOf[i]] || written[i];
    }
    for (size_t g = 0; g < groups.size(); ++g)
      for (size_t h = 0; h < g; ++h)
        if ((groupWritten[g] || groupWritten[h]) &&
            mayOverlap(numpy, groups[g], groups[h])) {
          nb::module_::import_("picokernel._interpreter")
              .attr("run")(function, paramNames, args);
          return;
        }
    call(copied);
    for (size_t g = 0; g < groups.size(); ++g)
      if (groupWritten[g])
        numpy.attr("copyto")(groups[g], copies[g]);
  }

  /// Whether two arrays are the same view of the same memory (the kernel
  /// sees one array).
  static bool sameView(nb::handle a, nb::handle b) {
    auto *x = (PyArrayObject *)a.ptr(), *y = (PyArrayObject *)b.ptr();
    int rank = PyArray_NDIM(x);
    return a.is(b) ||
           (PyArray_DATA(x) == PyArray_DATA(y) && rank == PyArray_NDIM(y) &&
            PyArray_EquivTypes(PyArray_DESCR(x), PyArray_DESCR(y)) &&
            std::equal(PyArray_DIMS(x), PyArray_DIMS(x) + rank,
                       PyArray_DIMS(y)) &&
            std::equal(PyArray_STRIDES(x), PyArray_STRIDES(x) + rank,
                       PyArray_STRIDES(y)));
  }

  /// Whether two arrays share memory (when NumPy cannot tell cheaply, they
  /// are taken to).
  static bool mayOverlap(nb::handle numpy, nb::handle a, nb::handle b) {
    try {
      return nb::cast<bool>(
          numpy.attr("shares_memory")(a, b, nb::arg("max_work") = 4096));
    } catch (nb::python_error &) {
      return true; // numpy.exceptions.TooHardError
    }
  }

  std::vector<bool> writtenOf(nb::args args) {
    Signature signature = signatureOf(args);
    llvm::SmallVector<ArrayView, 8> views;
    for (size_t i = 0; i < args.size(); ++i) {
      auto *array = (PyArrayObject *)args[i].ptr();
      views.push_back(
          {PyArray_DATA(array), signature[i].dtype,
           std::span<const int64_t>(PyArray_DIMS(array), PyArray_NDIM(array))});
    }
    ReleaseGil release;
    return kernel.writtenArguments(views);
  }

  /// Names, shapes and dtypes of arrays (or of objects with shape and
  /// dtype), for tracing without running.
  Signature signatureOf(nb::args args) {
    if (args.size() != paramNames.size())
      throw nb::type_error((kernel.name() + "() takes " +
                            std::to_string(paramNames.size()) + " arrays (" +
                            joinedNames() + "), got " +
                            std::to_string(args.size()))
                               .c_str());
    nb::object numpy = nb::module_::import_("numpy");
    Signature signature;
    for (size_t i = 0; i < args.size(); ++i) {
      if (!nb::hasattr(args[i], "shape") || !nb::hasattr(args[i], "dtype"))
        throw nb::type_error(("argument '" + paramNames[i] +
                              "' must be an array (with shape and dtype)")
                                 .c_str());
      nb::object descr = numpy.attr("dtype")(args[i].attr("dtype"));
      std::optional<DType> dtype = fromNumPy((PyArray_Descr *)descr.ptr());
      if (!dtype)
        throw nb::type_error(("argument '" + paramNames[i] + "' has dtype " +
                              numpyName((PyArray_Descr *)descr.ptr()) +
                              ", which picokernel does not support")
                                 .c_str());
      Shape shape;
      for (nb::handle dim : args[i].attr("shape"))
        shape.push_back(nb::cast<int64_t>(dim));
      int aliasOf = -1;
      for (size_t j = 0; j < i && aliasOf < 0; ++j)
        if (args[j].is(args[i]))
          aliasOf = signature[j].aliasOf >= 0 ? signature[j].aliasOf : int(j);
      signature.push_back({paramNames[i], shape, *dtype, aliasOf});
    }
    return signature;
  }

  static std::pair<std::string, std::string> describe(const Module &module) {
    return {listing(module), printModule(module)};
  }

  nb::callable function;
  std::vector<std::string> paramNames;
  Kernel kernel;
};

} // namespace

NB_MODULE(_picokernel, m) {
  m.doc() = "picokernel's C++ tracer and CPU runtime";
  if (_import_array() < 0)
    throw nb::python_error();
  nb::register_exception_translator(translateErrors);

  bindTracing(m);
  bindLogging(m);
  bindAccesses(m);
  bindIntrospection(m);
  // Kernels that threads still hold when Python exits (daemon threads) are
  // not leaks of ours: nanobind's report of them at exit is off unless
  // PK_LEAK_WARNINGS asks for it (the tests ask).
  nb::set_leak_warnings(environmentSwitch("PK_LEAK_WARNINGS", false));

  static PyType_Slot kernelSlots[] = {
      {Py_tp_traverse, (void *)PyKernel::traverse},
      {Py_tp_clear, (void *)PyKernel::clear},
      {Py_tp_call, (void *)PyKernel::callSlot},
      {0, nullptr}};
  nb::class_<PyKernel>(m, "Kernel", nb::is_weak_referenceable(),
                       nb::type_slots(kernelSlots),
                       "A kernel compiled on first use for each combination "
                       "of shapes and dtypes.")
      .def(nb::init<nb::callable, std::string, std::vector<std::string>,
                    int64_t, size_t, const std::string &, int64_t, uint64_t,
                    const std::string &>(),
           nb::arg("function"), nb::arg("name"), nb::arg("param_names"),
           nb::arg("parallel_threshold") = defaults::kParallelThreshold,
           nb::arg("max_cache_entries") = defaults::kMaxCacheEntries,
           nb::arg("backend") = "cpu",
           nb::arg("workgroup_size") = defaults::kWorkgroupSize,
           nb::arg("max_device_bytes") = defaults::kMaxDeviceBytes,
           nb::arg("dynamic") = "automatic")
      .def("_trace", &PyKernel::traceArrays)
      .def("_lower", &PyKernel::lower, nb::arg("args"), nb::arg("stage"))
      .def("_last_ir", &PyKernel::lastIR)
      .def("_cache_info", &PyKernel::cacheInfo)
      .def("clear_cache", &PyKernel::clearCache)
      .def_prop_ro("name", &PyKernel::name)
      .def_prop_ro("function", &PyKernel::pythonFunction);

  m.attr("VERSION") = PICOKERNEL_VERSION; // picokernel.__version__
  // The defaults of the Python API (Support/Defaults.h).
  m.attr("DEFAULT_PARALLEL_THRESHOLD") = defaults::kParallelThreshold;
  m.attr("DEFAULT_MAX_CACHE_ENTRIES") = defaults::kMaxCacheEntries;
  m.attr("DEFAULT_WORKGROUP_SIZE") = defaults::kWorkgroupSize;
  m.attr("DEFAULT_MAX_DEVICE_BYTES") = defaults::kMaxDeviceBytes;

  m.def(
      "_bind_keywords",
      [](const std::string &name, const std::vector<std::string> &params,
         nb::tuple args,
         nb::dict kwargs) { return bindKeywords(name, params, args, kwargs); },
      "A call's arguments in parameter order (see Kernel.__call__).");
  m.def("_as_array", &asArray,
        "An argument that is not a NumPy array as one (see Kernel.__call__).");
  m.def(
      "_user_location",
      [] {
        SourceLoc where = pythonLocation();
        return std::make_pair(where.file, where.line);
      },
      "The user's line: the innermost frame outside picokernel's package, "
      "as (file, line); ('', 0) when there is none.");
  m.def(
      "vulkan_device", [] { return vulkanDeviceName(); },
      "The Vulkan device kernels with backend='vulkan' run on.");
  m.def("vulkan_available", [] {
    std::string why;
    bool available = vulkanAvailable(&why);
    return std::make_pair(available, why);
  });
  closeCompileGateAtExit();
  m.def(
      "stages", [] { return stageNames(); },
      "The names of the compilation stages, in order.");
}
