//===- ReduceInWorkgroups.cpp - reductions as shared-memory trees ---------===//
//
// The generic GPU path runs one thread per output of a reduction, which then
// reads all its elements alone: rows are read with a stride across threads,
// and a reduction to a few outputs runs on a few threads. Here a workgroup
// reduces each output: its threads stride over the reduced elements
// together, and their partial results meet in a tree in shared memory.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Transforms/Passes.h"

#include "GpuKernels.h"
#include "Reductions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/bit.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKREDUCEINWORKGROUPS
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Workgroups one grid dimension may count (Vulkan's guaranteed
/// maxComputeWorkGroupCount).
constexpr int64_t kMaxGridSize = 65535;

/// A reduction's loops split into its parallel ones (which index the
/// outputs) and its reduction ones, each in loop order, and their extents.
struct ReductionLoops {
  SmallVector<unsigned> parallel, reduction;
  SmallVector<int64_t> ranges;
  int64_t outputs = 1, length = 1;
};

/// Whether every result of `map` is a loop or a constant 0 indexing a unit
/// dimension of `shape` (a broadcast from a keepdims result).
bool isLoopOrUnitIndex(AffineMap map, ArrayRef<int64_t> shape) {
  for (auto [index, expr] : llvm::enumerate(map.getResults())) {
    if (isa<AffineDimExpr>(expr))
      continue;
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0 || shape[index] != 1)
      return false;
  }
  return true;
}

/// Whether some input's innermost dimension is reduced, so that threads
/// striding together over the reduction read contiguous elements.
bool readsReductionContiguously(linalg::GenericOp op) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (dim && op.getIteratorTypesArray()[dim.getPosition()] ==
                   utils::IteratorType::reduction)
      return true;
  }
  return false;
}

/// The loops of a reduction this pass can rewrite, or failure.
FailureOr<ReductionLoops> analyzeReduction(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() == 0 || op.hasIndexSemantics())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, [](int64_t size) {
        return ShapedType::isDynamic(size) || size == 0;
      }))
    return failure();
  // Inputs may be read through any affine map (a reversed slice); the
  // output only through the parallel loops.
  OpOperand *output = op.getDpsInitOperand(0);
  AffineMap outputMap = op.getMatchingIndexingMap(output);
  if (!outputMap.isProjectedPermutation(/*allowZeroInResults=*/true) ||
      !isLoopOrUnitIndex(outputMap, op.getShape(output)) ||
      llvm::any_of(op.getIndexingMapsArray(),
                   [](AffineMap map) { return map.getNumSymbols() != 0; }))
    return failure();
  Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  if (!mlir::pk::isStorableInSharedMemory(element) ||
      !mlir::pk::hasPlainIdentity(element) ||
      !mlir::pk::hasRegroupableCombiner(op) ||
      !mlir::pk::hasSelfContainedBody(op))
    return failure();
  ReductionLoops loops;
  loops.ranges = ranges;
  for (auto [position, iterator] :
       llvm::enumerate(op.getIteratorTypesArray())) {
    if (iterator == utils::IteratorType::reduction) {
      loops.reduction.push_back(position);
      loops.length *= ranges[position];
    } else {
      loops.parallel.push_back(position);
      loops.outputs *= ranges[position];
    }
  }
  return loops;
}

/// Builds one workgroup's kernel: the output element of workgroup `block`,
/// reduced by `threads` threads and a tree in shared memory.
class WorkgroupReductionBuilder {
public:
  WorkgroupReductionBuilder(OpBuilder &builder, linalg::GenericOp op,
                            const ReductionLoops &loops, int64_t threads)
      : b(builder), loc(op.getLoc()), op(op), loops(loops), threads(threads),
        combiner(mlir::pk::getCombiner(op)),
        accumulator(op.getRegionOutputArgs().front()),
        indices(op.getNumLoops()) {}

  void build(Value block, Value thread) {
    delinearize(block, loops.parallel);
    Value partial = threadPartial(thread);
    Type element = partial.getType();
    auto treeType =
        MemRefType::get({threads}, element, MemRefLayoutAttrInterface(),
                        b.getI64IntegerAttr(mlir::pk::kWorkgroupMemorySpace));
    Value tree = memref::AllocOp::create(b, loc, treeType);
    memref::StoreOp::create(b, loc, partial, tree, thread);
    gpu::BarrierOp::create(b, loc);
    // Each level halves the threads at work; the last two partial results
    // are left to thread 0, which adds them to the output element.
    for (int64_t half = threads / 2; half >= 2; half /= 2) {
      ifThreadBelow(thread, half, [&] {
        Value mine = memref::LoadOp::create(b, loc, tree, thread);
        Value other = memref::LoadOp::create(
            b, loc, tree, ValueRange{addi(thread, index(half))});
        memref::StoreOp::create(b, loc, combine(mine, other), tree, thread);
      });
      gpu::BarrierOp::create(b, loc);
    }
    ifThreadBelow(thread, 1, [&] {
      Value total = memref::LoadOp::create(b, loc, tree, ValueRange{index(0)});
      if (threads > 1)
        total = combine(
            total, memref::LoadOp::create(b, loc, tree, ValueRange{index(1)}));
      OpOperand *output = op.getDpsInitOperand(0);
      SmallVector<Value> at = operandIndices(output);
      Value initial = memref::LoadOp::create(b, loc, output->get(), at);
      memref::StoreOp::create(b, loc, combine(initial, total), output->get(),
                              at);
    });
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value addi(Value lhs, Value rhs) {
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }

  /// Sets `indices` of the loops in `positions` to the row-major
  /// coordinates of `linear` in their extents.
  void delinearize(Value linear, ArrayRef<unsigned> positions) {
    for (unsigned position : llvm::reverse(positions)) {
      int64_t range = loops.ranges[position];
      if (position == positions.front()) {
        indices[position] = linear;
        break;
      }
      indices[position] = arith::RemUIOp::create(b, loc, linear, index(range));
      linear = arith::DivUIOp::create(b, loc, linear, index(range));
    }
  }

  /// The indices of `operand` at the current loop indices (those of the
  /// loops its map reads are set).
  SmallVector<Value> operandIndices(OpOperand *operand) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> result;
    for (AffineExpr expr : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        result.push_back(indices[dim.getPosition()]);
        continue;
      }
      if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
        result.push_back(index(constant.getValue()));
        continue;
      }
      result.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, expr), indices));
    }
    return result;
  }

  /// `combiner` on two partial results.
  Value combine(Value lhs, Value rhs) {
    IRMapping mapping;
    for (Value operand : combiner->getOperands())
      mapping.map(operand, operand == accumulator ? lhs : rhs);
    return b.clone(*combiner, mapping)->getResult(0);
  }

  void ifThreadBelow(Value thread, int64_t bound, function_ref<void()> body) {
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        thread, index(bound));
    auto branch = scf::IfOp::create(b, loc, below, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    body();
  }

  /// The thread's partial result: the op's body over the reduced elements
  /// `thread`, `thread + threads`, ..., from the combiner's identity.
  Value threadPartial(Value thread) {
    Value identity =
        arith::ConstantOp::create(b, loc, *arith::getNeutralElement(combiner));
    auto loop = scf::ForOp::create(
        b, loc, thread, index(loops.length), index(threads),
        ValueRange{identity},
        [&](OpBuilder &nested, Location, Value element, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          delinearize(element, loops.reduction);
          Block &body = op->getRegion(0).front();
          IRMapping mapping;
          for (OpOperand *input : op.getDpsInputOperands())
            mapping.map(body.getArgument(input->getOperandNumber()),
                        memref::LoadOp::create(b, loc, input->get(),
                                               operandIndices(input)));
          mapping.map(accumulator, carried.front());
          for (Operation &inner : body.without_terminator())
            b.clone(inner, mapping);
          scf::YieldOp::create(
              b, loc,
              mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
        });
    loop->setAttr(mlir::pk::kMaxTripCountAttrName,
                  b.getI64IntegerAttr(llvm::divideCeil(loops.length, threads)));
    return loop.getResult(0);
  }

  OpBuilder &b;
  Location loc;
  linalg::GenericOp op;
  const ReductionLoops &loops;
  int64_t threads;
  Operation *combiner;
  BlockArgument accumulator;
  /// The loop indices at the point being built (parallel ones from the
  /// workgroup, reduction ones inside the thread's loop).
  SmallVector<Value> indices;
};

struct ReduceInWorkgroupsPass
    : public mlir::pk::impl::PkReduceInWorkgroupsBase<ReduceInWorkgroupsPass> {
  using PkReduceInWorkgroupsBase::PkReduceInWorkgroupsBase;

  void runOnOperation() override {
    if (threads < 1 || !llvm::has_single_bit(static_cast<uint64_t>(threads)) ||
        minLength < 1 || elementsPerThread < 1 || maxStridedOutputs < 0) {
      getOperation().emitError("threads must be a power of two, and "
                               "min-length and elements-per-thread positive");
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      // Only ops outside kernels (a matmul's kernel has its own loops).
      if (!op->getParentOfType<gpu::LaunchOp>())
        candidates.push_back(op);
    });
    for (linalg::GenericOp op : candidates) {
      FailureOr<ReductionLoops> loops = analyzeReduction(op);
      if (failed(loops) || loops->length < minLength ||
          (loops->outputs >= maxStridedOutputs &&
           !readsReductionContiguously(op)))
        continue;
      rewrite(op, *loops);
    }
  }

  void rewrite(linalg::GenericOp op, const ReductionLoops &loops) {
    int64_t workgroupThreads = std::min<int64_t>(
        threads, llvm::bit_floor(static_cast<uint64_t>(
                     std::max<int64_t>(1, loops.length / elementsPerThread))));
    int64_t gridRows = llvm::divideCeil(loops.outputs, kMaxGridSize);
    int64_t gridColumns = llvm::divideCeil(loops.outputs, gridRows);
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    auto launch = gpu::LaunchOp::create(
        b, loc, index(gridColumns), index(gridRows), index(1),
        index(workgroupThreads), index(1), index(1));
    b.setInsertionPointToStart(&launch.getBody().front());
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    Value block = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blockIds.y, index(gridColumns)),
        blockIds.x);
    WorkgroupReductionBuilder kernel(b, op, loops, workgroupThreads);
    if (gridRows * gridColumns == loops.outputs) {
      kernel.build(block, launch.getThreadIds().x);
    } else {
      // The last grid row is partly past the outputs; the condition is the
      // same for a whole workgroup, so its barriers stay uniform.
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           block, index(loops.outputs));
      auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(branch.thenBlock());
      kernel.build(block, launch.getThreadIds().x);
    }
    gpu::TerminatorOp::create(b, loc);
    op->erase();
  }
};

} // namespace
