//===- PrintAccesses.cpp - the accesses analysis as remarks ---------------===//

#include "picokernel/Dialect/Pk/Analysis/Accesses.h"
#include "picokernel/Dialect/Pk/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKPRINTACCESSES
#include "picokernel/Dialect/Pk/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using namespace mlir::pk;

namespace {

void printTerm(llvm::raw_ostream &os, const IndexTerm &term) {
  switch (term.kind) {
  case IndexTerm::Kind::Unknown:
    os << "?";
    if (term.var >= 0)
      os << "o" << term.var;
    return;
  case IndexTerm::Kind::Constant:
    os << term.offset;
    return;
  case IndexTerm::Kind::Stored:
  case IndexTerm::Kind::Reduced:
    break;
  }
  if (term.stride != 1)
    os << term.stride << "*";
  os << (term.kind == IndexTerm::Kind::Stored ? "o" : "r") << term.var;
  if (term.offset > 0)
    os << " + " << term.offset;
  else if (term.offset < 0)
    os << " - " << -term.offset;
}

const char *nameOf(CombineKind kind) {
  switch (kind) {
  case CombineKind::Sum:
    return "sum";
  case CombineKind::Max:
    return "max";
  case CombineKind::Min:
    return "min";
  case CombineKind::Mean:
    return "mean";
  case CombineKind::None:
    break;
  }
  return "none";
}

struct PrintAccessesPass
    : public mlir::pk::impl::PkPrintAccessesBase<PrintAccessesPass> {
  void runOnOperation() override {
    KernelOp kernel = getOperation();
    FailureOr<std::vector<StoreAccesses>> stores = analyzeAccesses(kernel);
    if (failed(stores))
      return signalPassFailure();
    auto storeOps = kernel.getBodyBlock().getOps<StoreOp>();
    for (auto [store, accesses] : llvm::zip(storeOps, *stores)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "stores arg" << accesses.ref << ": reads ";
      llvm::interleaveComma(accesses.reads, os, [&](const ReadAccess &read) {
        os << "arg" << read.ref << "[";
        llvm::interleaveComma(read.indices, os,
                              [&](const IndexTerm &t) { printTerm(os, t); });
        os << "]";
      });
      if (accesses.reads.empty())
        os << "nothing";
      for (const WrittenPart &part : accesses.parts) {
        os << "; writes ";
        printTerm(os, {part.index.kind, part.index.var, 1, 0});
        if (part.before < 0)
          os << " in part";
        else
          os << " but " << part.before << " first, " << part.after << " last";
      }
      for (const ReductionIndex &r : accesses.reductions)
        os << "; r" << r.id << ": " << nameOf(r.kind) << " of " << r.size;
      if (accesses.combine != CombineKind::None) {
        os << "; blocks combine by " << nameOf(accesses.combine) << " over ";
        llvm::interleaveComma(accesses.combined, os,
                              [&](int64_t id) { os << "r" << id; });
      }
      store.emitRemark() << text;
    }
  }
};

} // namespace
