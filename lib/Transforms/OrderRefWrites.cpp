//===- OrderRefWrites.cpp - write arrays after reading them ---------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKORDERREFWRITES
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using bufferization::MaterializeInDestinationOp;

namespace {

/// The arrays (memrefs behind `to_tensor`) whose buffers `value` may be
/// when bufferized in place.
llvm::SmallSetVector<Value, 4>
arraysReadBy(Value value, const bufferization::AnalysisState &state) {
  llvm::SmallSetVector<Value, 4> arrays;
  llvm::SmallVector<Value> worklist = {value};
  llvm::DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (!seen.insert(current).second || !isa<TensorType>(current.getType()))
      continue;
    if (auto toTensor = current.getDefiningOp<bufferization::ToTensorOp>()) {
      arrays.insert(toTensor.getBuffer());
      continue;
    }
    if (isa<BlockArgument>(current))
      continue;
    for (const bufferization::AliasingOpOperand &alias :
         state.getAliasingOpOperands(current))
      worklist.push_back(alias.opOperand->get());
  }
  return arrays;
}

struct OrderRefWritesPass
    : public mlir::pk::impl::PkOrderRefWritesBase<OrderRefWritesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    llvm::SmallVector<MaterializeInDestinationOp> writes;
    func.walk([&](MaterializeInDestinationOp op) {
      if (isa<BaseMemRefType>(op.getDest().getType()))
        writes.push_back(op);
    });

    bufferization::BufferizationOptions options;
    bufferization::AnalysisState state(options);
    // reads[i]: the arrays other than its own that write i's source reads.
    llvm::SmallVector<llvm::SmallSetVector<Value, 4>> reads;
    for (MaterializeInDestinationOp write : writes) {
      reads.push_back(arraysReadBy(write.getSource(), state));
      reads.back().remove(write.getDest());
    }

    // Writes are placed one by one before the terminator; copies that
    // break cycles go before the first of them.
    Operation *end = func.getBody().back().getTerminator();
    Operation *firstWrite = nullptr;
    llvm::SmallVector<bool> placed(writes.size(), false);
    auto isReady = [&](size_t i) {
      for (size_t j = 0; j < writes.size(); ++j)
        if (!placed[j] && j != i && reads[j].contains(writes[i].getDest()))
          return false;
      return true;
    };
    for (size_t count = 0; count < writes.size();) {
      std::optional<size_t> ready;
      for (size_t i = 0; i < writes.size() && !ready; ++i)
        if (!placed[i] && isReady(i))
          ready = i;
      if (ready) {
        writes[*ready]->moveBefore(end);
        firstWrite = firstWrite ? firstWrite : writes[*ready].getOperation();
        placed[*ready] = true;
        ++count;
        continue;
      }
      // A cycle: the first waiting write that reads another's array reads
      // a copy of its source instead.
      size_t i = 0;
      while (placed[i] || reads[i].empty())
        ++i;
      OpBuilder builder(firstWrite ? firstWrite : end);
      Value source = writes[i].getSource();
      Value copy = bufferization::AllocTensorOp::create(
          builder, writes[i].getLoc(), cast<RankedTensorType>(source.getType()),
          ValueRange(), source);
      writes[i].getSourceMutable().assign(copy);
      reads[i].clear();
    }
  }
};

} // namespace
