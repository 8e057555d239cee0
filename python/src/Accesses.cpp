//===- Accesses.cpp - the accesses analysis, for picokernel.dask ----------===//
//
// picokernel.dask plans a kernel's Dask graph from what each array it
// stores reads: the analysis runs on the pk module a trace printed, parsed
// in a context of its own, after pk-forward-stores.
//
//===----------------------------------------------------------------------===//

#include "Accesses.h"

#include "picokernel/Compiler/Registry.h"
#include "picokernel/Dialect/Pk/Analysis/Accesses.h"
#include "picokernel/Dialect/Pk/Transforms/Passes.h"

#include <nanobind/stl/string.h>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

namespace nb = nanobind;
using namespace mlir;
using namespace mlir::pk;

namespace {

const char *nameOf(IndexTerm::Kind kind) {
  switch (kind) {
  case IndexTerm::Kind::Stored:
    return "stored";
  case IndexTerm::Kind::Reduced:
    return "reduced";
  case IndexTerm::Kind::Constant:
    return "constant";
  case IndexTerm::Kind::Unknown:
    return "unknown";
  }
  return "unknown";
}

nb::object nameOf(CombineKind kind) {
  switch (kind) {
  case CombineKind::None:
    return nb::none();
  case CombineKind::Sum:
    return nb::str("sum");
  case CombineKind::Max:
    return nb::str("max");
  case CombineKind::Min:
    return nb::str("min");
  case CombineKind::Mean:
    return nb::str("mean");
  }
  return nb::none();
}

nb::dict toPython(const StoreAccesses &store) {
  nb::list reads;
  for (const ReadAccess &read : store.reads) {
    nb::list indices;
    for (const IndexTerm &term : read.indices)
      indices.append(nb::make_tuple(nameOf(term.kind), term.var, term.stride,
                                    term.offset));
    reads.append(nb::make_tuple(read.ref, indices));
  }
  nb::list parts;
  for (const WrittenPart &part : store.parts)
    parts.append(nb::make_tuple(nameOf(part.index.kind), part.index.var,
                                part.before, part.after));
  nb::list reductions;
  for (const ReductionIndex &reduction : store.reductions)
    reductions.append(
        nb::make_tuple(reduction.id, nameOf(reduction.kind), reduction.size));
  nb::list combined;
  for (int64_t id : store.combined)
    combined.append(id);
  nb::dict result;
  result["ref"] = store.ref;
  result["reads"] = reads;
  result["parts"] = parts;
  result["reductions"] = reductions;
  result["combine"] = nameOf(store.combine);
  result["combined"] = combined;
  return result;
}

/// The accesses of the one kernel in the pk module printed as `text`.
nb::list accesses(const std::string &text) {
  DialectRegistry registry;
  registerPkCompilerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    throw nb::value_error(
        ("the module does not parse: " + diagnostics).c_str());
  PassManager pm(&context);
  pm.addNestedPass<KernelOp>(createPkForwardStores());
  if (failed(pm.run(*module)))
    throw nb::value_error(("pk-forward-stores failed: " + diagnostics).c_str());
  auto kernels = module->getOps<KernelOp>();
  if (std::distance(kernels.begin(), kernels.end()) != 1)
    throw nb::value_error("the module must hold exactly one pk.kernel");
  FailureOr<std::vector<StoreAccesses>> stores =
      analyzeAccesses(*kernels.begin());
  if (failed(stores))
    throw nb::value_error(("the analysis failed: " + diagnostics).c_str());
  nb::list result;
  for (const StoreAccesses &store : *stores)
    result.append(toPython(store));
  return result;
}

} // namespace

namespace pk::python {

void bindAccesses(nb::module_ &module) {
  module.def("_accesses", &accesses, nb::arg("mlir"),
             "What each array the kernel in the pk module `mlir` stores "
             "reads: one dict per stored ref (see picokernel.dask).");
}

} // namespace pk::python
