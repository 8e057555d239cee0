//===- Introspection.cpp - tracing and lowering without a kernel ----------===//
//
// Traces of a Python function for given shapes and dtypes, and lowering of
// a printed pk module, each in an MLIR context of its own (the shared one
// would keep every new shape's types).
//
//===----------------------------------------------------------------------===//

#include "Introspection.h"
#include "Gil.h"
#include "NumPy.h"
#include "Tracing.h"

#include "picokernel/Compiler/CudaCompiler.h"
#include "picokernel/Compiler/Registry.h"
#include "picokernel/Runtime/CompiledKernel.h"
#include "picokernel/Support/CompileError.h"
#include "picokernel/Support/Fork.h"
#include "picokernel/Target/Listing.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "mlir/Parser/Parser.h"

namespace nb = nanobind;

namespace pk::python {
namespace {

/// Parses the pk module printed as `text` into `context` (which owns it
/// and whose diagnostics `diagnostics` collects); `what` names the caller
/// in the error.
mlir::OwningOpRef<mlir::ModuleOp> parseText(const std::string &text,
                                            mlir::MLIRContext &context,
                                            const std::string &diagnostics,
                                            const char *what) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    throw nb::value_error(
        (std::string(what) + ": the module does not parse: " + diagnostics)
            .c_str());
  return module;
}

/// A context of its own for a printed module, which collects diagnostics.
struct OwnContext {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler capture{&context, [this](mlir::Diagnostic &d) {
                                          diagnostics += d.str() + "\n";
                                          return mlir::success();
                                        }};
  OwnContext() {
    mlir::DialectRegistry registry;
    mlir::pk::registerPkCompilerDialects(registry);
    context.appendDialectRegistry(registry);
  }
};

/// The pk module printed as `text` lowered up to `stage` (see
/// lowerToStage), in a context of its own.
std::string lowerText(const std::string &text, const std::string &stage) {
  OwnContext own;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parseText(text, own.context, own.diagnostics, "lower");
  ReleaseGil release;
  pk::CompileGate gate;
  return lowerToStage(*module, stage);
}

/// The PTX of the pk module printed as `text` (mlir::pk::compileToPtx), for
/// `chip` ("": the default) and a PTX version (0: the chip's oldest).
std::string ptxText(const std::string &text, const std::string &chip,
                    unsigned ptxVersion) {
  OwnContext own;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parseText(text, own.context, own.diagnostics, "lower");
  mlir::pk::CudaPipelineOptions options;
  if (!chip.empty())
    options.chip = chip;
  options.ptxVersion = ptxVersion;
  std::string ptx;
  bool failed;
  {
    ReleaseGil release;
    pk::CompileGate gate;
    failed = mlir::failed(mlir::pk::compileToPtx(*module, options, ptx));
  }
  if (failed)
    throw pk::CompileError("lower: PTX: " + own.diagnostics);
  return ptx;
}

/// Traces `function` for arrays of the given shapes and dtypes: its
/// listing, its module and whether its code read sizes (Tracer::readSizes).
std::tuple<std::string, std::string, bool>
traceFunction(nb::callable function, std::string name,
              std::vector<std::string> paramNames, nb::sequence shapes,
              nb::sequence dtypes) {
  nb::object numpy = nb::module_::import_("numpy");
  Signature signature;
  size_t count = nb::len(shapes);
  if (nb::len(dtypes) != count)
    throw nb::value_error(("trace_kernel: " + std::to_string(count) +
                           " shapes but " + std::to_string(nb::len(dtypes)) +
                           " dtypes")
                              .c_str());
  if (count != paramNames.size())
    throw nb::type_error((name + " takes " + std::to_string(paramNames.size()) +
                          " refs, but trace_kernel got " +
                          std::to_string(count) + " shapes")
                             .c_str());
  for (size_t i = 0; i < count; ++i) {
    Shape shape;
    for (nb::handle dim : shapes[i]) {
      int64_t size = 0;
      if (!PyLong_Check(dim.ptr()) || !nb::try_cast(dim, size) || size < 0)
        throw nb::type_error(("trace_kernel: the shape of argument '" +
                              paramNames[i] +
                              "' must hold sizes that are non-negative "
                              "integers below 2**63, got " +
                              nb::cast<std::string>(nb::repr(shapes[i])))
                                 .c_str());
      shape.push_back(size);
    }
    nb::object descr = numpy.attr("dtype")(dtypes[i]);
    std::optional<DType> dtype = fromNumPy((PyArray_Descr *)descr.ptr());
    if (!dtype)
      throw nb::type_error(("trace_kernel: dtype " +
                            numpyName((PyArray_Descr *)descr.ptr()) +
                            " is not supported")
                               .c_str());
    signature.push_back({paramNames[i], std::move(shape), *dtype});
  }
  // A context of its own: the shared one would keep every new shape's types.
  Tracer tracer(name, signature, pythonLocation(), TraceContext::Own);
  nb::list refs;
  for (const Ref &ref : tracer.refs())
    refs.append(nb::cast(ref));
  try {
    callPython(function, nb::tuple(refs));
  } catch (...) {
    tracer.abandon();
    throw;
  }
  bool readSizes = tracer.readSizes();
  Module module = tracer.finish();
  return {listing(module), printModule(module), readSizes};
}

} // namespace

void bindIntrospection(nb::module_ &m) {
  m.def("_trace_function", &traceFunction);
  m.def("_lower_mlir", &lowerText, nb::arg("mlir"), nb::arg("stage"),
        "The pk module `mlir` (a KernelIR's) lowered up to `stage`.");
  m.def("_ptx", &ptxText, nb::arg("mlir"), nb::arg("chip") = "",
        nb::arg("ptx_version") = 0,
        "The PTX of the pk module `mlir` (a KernelIR's) for NVIDIA GPUs.");
}

} // namespace pk::python
