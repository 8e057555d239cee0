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

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Runtime/CompiledKernel.h"
#include "picokernel/Support/Fork.h"
#include "picokernel/Target/Listing.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "mlir/Parser/Parser.h"

namespace nb = nanobind;

namespace pk::python {
namespace {

/// The pk module printed as `text` lowered up to `stage` (see
/// lowerToStage), in a context of its own.
std::string lowerText(const std::string &text, const std::string &stage) {
  mlir::DialectRegistry registry;
  mlir::pk::registerPkCompilerDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    throw nb::value_error(
        ("lower: the module does not parse: " + diagnostics).c_str());
  ReleaseGil release;
  pk::CompileGate gate;
  return lowerToStage(*module, stage);
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
}

} // namespace pk::python
