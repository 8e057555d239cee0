//===- TileMatmulForGpu.cpp - matmuls as shared-memory GPU kernels --------===//

#include "picokernel/Transforms/Passes.h"

#include "GpuKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKTILEMATMULFORGPU
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;
using mlir::pk::hasSelfContainedBody;
using mlir::pk::isStorableInSharedMemory;
using mlir::pk::kWorkgroupMemorySpace;

namespace {

/// The loops of a contraction C[b, m, n] (op)= A[b, m, k] * B[b, k, n] (the
/// batch optional, operands through any projected-permutation maps), and
/// their extents.
struct MatmulLoops {
  std::optional<unsigned> batch;
  unsigned row = 0, column = 0, depth = 0;
  int64_t batches = 1, rows = 0, columns = 0, depths = 0;
};

/// The tile a workgroup computes, the threads it has, and the depth of the
/// operand tiles it stages in shared memory per step.
struct GpuTile {
  int64_t rows, columns, threadRows, threadColumns, depth;
  int64_t threads() const { return threadRows * threadColumns; }
  /// Rows and columns of C each thread keeps in registers.
  int64_t rowsPerThread() const { return rows / threadRows; }
  int64_t columnsPerThread() const { return columns / threadColumns; }
};

FailureOr<MatmulLoops> matchMatmul(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumRegions() != 1 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 1 ||
      op.getNumLoops() != 3 + dims->batch.size())
    return failure();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic) ||
      llvm::any_of(sizes, [](int64_t size) { return size == 0; }))
    return failure();
  for (OpOperand &operand : op->getOpOperands())
    if (!isStorableInSharedMemory(getElementTypeOrSelf(operand.get())))
      return failure();
  if (!hasSelfContainedBody(op))
    return failure();
  MatmulLoops loops;
  if (!dims->batch.empty()) {
    loops.batch = dims->batch.front();
    loops.batches = sizes[*loops.batch];
  }
  loops.row = dims->m.front();
  loops.column = dims->n.front();
  loops.depth = dims->k.front();
  loops.rows = sizes[loops.row];
  loops.columns = sizes[loops.column];
  loops.depths = sizes[loops.depth];
  return loops;
}

/// The constant a `linalg.fill` fills the contraction's output with just
/// before it, which the kernel starts its sums from instead (the fill is
/// erased: the contraction writes every element).
std::optional<TypedAttr> takeInitialFill(linalg::LinalgOp op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInitOperand(0)->get() != op.getDpsInitOperand(0)->get())
    return std::nullopt;
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  if (!constant || constant.getType() !=
                       getElementTypeOrSelf(op.getDpsInitOperand(0)->get()))
    return std::nullopt;
  TypedAttr value = constant.getValue();
  fill->erase();
  return value;
}

/// Builds the body of one workgroup's kernel: its tile of C summed over K
/// in steps of `tile.depth`, the operands' tiles staged in shared memory.
class TileKernelBuilder {
public:
  TileKernelBuilder(OpBuilder &builder, linalg::LinalgOp op,
                    const MatmulLoops &loops, const GpuTile &tile,
                    gpu::LaunchOp launch)
      : b(builder), loc(op.getLoc()), op(op), loops(loops), tile(tile) {
    gpu::KernelDim3 blockIds = launch.getBlockIds();
    gpu::KernelDim3 threadIds = launch.getThreadIds();
    batch = blockIds.z;
    rowBase = muli(blockIds.y, index(tile.rows));
    columnBase = muli(blockIds.x, index(tile.columns));
    threadRow = threadIds.y;
    threadColumn = threadIds.x;
    threadId = arith::AddIOp::create(
        b, loc, muli(threadRow, index(tile.threadColumns)), threadColumn);
    lhsTile = sharedTile(op.getDpsInputOperand(0), tile.rows, tile.depth);
    rhsTile = sharedTile(op.getDpsInputOperand(1), tile.depth, tile.columns);
  }

  void build(std::optional<TypedAttr> initialFill) {
    SmallVector<Value> sums = initialSums(initialFill);
    int64_t wholeSteps = loops.depths / tile.depth * tile.depth;
    if (wholeSteps > 0) {
      auto loop = scf::ForOp::create(
          b, loc, index(0), index(wholeSteps), index(tile.depth), sums,
          [&](OpBuilder &nested, Location, Value k, ValueRange carried) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nested.getInsertionBlock(),
                                nested.getInsertionPoint());
            SmallVector<Value> next = step(k, tile.depth, carried);
            scf::YieldOp::create(b, loc, next);
          });
      sums = loop.getResults();
    }
    if (int64_t rest = loops.depths - wholeSteps)
      sums = step(index(wholeSteps), rest, sums);
    storeSums(sums);
  }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value muli(Value lhs, Value rhs) {
    return arith::MulIOp::create(b, loc, lhs, rhs);
  }
  Value addi(Value lhs, Value rhs) {
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }
  Value below(Value value, int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, value,
                                 index(bound));
  }

  Value sharedTile(OpOperand *operand, int64_t rows, int64_t columns) {
    Type element = getElementTypeOrSelf(operand->get());
    auto type =
        MemRefType::get({rows, columns}, element, MemRefLayoutAttrInterface(),
                        b.getI64IntegerAttr(kWorkgroupMemorySpace));
    return memref::AllocOp::create(b, loc, type);
  }

  /// The element of `operand` at the given loop indices (the loops its map
  /// does not read may be null), or zero where `inBounds` is false.
  Value load(OpOperand *operand, ArrayRef<Value> loopIndices, Value inBounds) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> indices;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      indices.push_back(loopIndices[map.getDimPosition(i)]);
    Value memref = operand->get();
    if (!inBounds)
      return memref::LoadOp::create(b, loc, memref, indices);
    Type element = getElementTypeOrSelf(memref);
    auto branch = scf::IfOp::create(
        b, loc, inBounds,
        [&](OpBuilder &nested, Location nestedLoc) {
          Value value =
              memref::LoadOp::create(nested, nestedLoc, memref, indices);
          scf::YieldOp::create(nested, nestedLoc, value);
        },
        [&](OpBuilder &nested, Location nestedLoc) {
          Value zero = arith::ConstantOp::create(
              nested, nestedLoc, element,
              cast<TypedAttr>(nested.getZeroAttr(element)));
          scf::YieldOp::create(nested, nestedLoc, zero);
        });
    return branch.getResult(0);
  }

  SmallVector<Value> loopIndices(Value row, Value column, Value depth) {
    SmallVector<Value> indices(op.getNumLoops());
    if (loops.batch)
      indices[*loops.batch] = batch;
    indices[loops.row] = row;
    indices[loops.column] = column;
    indices[loops.depth] = depth;
    return indices;
  }

  /// Row `i` and column `j` of this thread's part of the tile, in C.
  Value sumRow(int64_t i) {
    return addi(rowBase, addi(threadRow, index(i * tile.threadRows)));
  }
  Value sumColumn(int64_t j) {
    return addi(columnBase, addi(threadColumn, index(j * tile.threadColumns)));
  }
  /// Whether `position` lies below `extent`, or null where tiles of
  /// `tileSize` divide the extent (no check needed).
  Value within(Value position, int64_t extent, int64_t tileSize) {
    return extent % tileSize != 0 ? below(position, extent) : Value();
  }
  /// Whether (row, column) lies in C, or null where the tiles divide it.
  Value inC(Value row, Value column) {
    Value rowIn = within(row, loops.rows, tile.rows);
    Value columnIn = within(column, loops.columns, tile.columns);
    if (rowIn && columnIn)
      return arith::AndIOp::create(b, loc, rowIn, columnIn);
    return rowIn ? rowIn : columnIn;
  }

  SmallVector<Value> initialSums(std::optional<TypedAttr> initialFill) {
    SmallVector<Value> sums;
    for (int64_t i = 0; i < tile.rowsPerThread(); ++i)
      for (int64_t j = 0; j < tile.columnsPerThread(); ++j) {
        if (initialFill) {
          sums.push_back(arith::ConstantOp::create(b, loc, *initialFill));
          continue;
        }
        Value row = sumRow(i), column = sumColumn(j);
        sums.push_back(load(op.getDpsInitOperand(0),
                            loopIndices(row, column, nullptr),
                            inC(row, column)));
      }
    return sums;
  }

  void storeSums(ValueRange sums) {
    OpOperand *output = op.getDpsInitOperand(0);
    AffineMap map = op.getMatchingIndexingMap(output);
    for (int64_t i = 0; i < tile.rowsPerThread(); ++i)
      for (int64_t j = 0; j < tile.columnsPerThread(); ++j) {
        Value row = sumRow(i), column = sumColumn(j);
        SmallVector<Value> all = loopIndices(row, column, nullptr);
        SmallVector<Value> indices;
        for (unsigned r = 0; r < map.getNumResults(); ++r)
          indices.push_back(all[map.getDimPosition(r)]);
        Value sum = sums[i * tile.columnsPerThread() + j];
        Value inBounds = inC(row, column);
        if (!inBounds) {
          memref::StoreOp::create(b, loc, sum, output->get(), indices);
          continue;
        }
        scf::IfOp::create(b, loc, inBounds,
                          [&](OpBuilder &nested, Location nestedLoc) {
                            memref::StoreOp::create(nested, nestedLoc, sum,
                                                    output->get(), indices);
                            scf::YieldOp::create(nested, nestedLoc);
                          });
      }
  }

  /// Copies the `rows` x `columns` block of an operand that starts at
  /// (`rowBase`, `columnBase`) of the tile's coordinates into `shared`,
  /// each thread a strided share of its elements; `global` maps a block
  /// position to the operand's loop indices and their bounds check.
  void stage(
      OpOperand *operand, Value shared, int64_t rows, int64_t columns,
      function_ref<std::pair<SmallVector<Value>, Value>(Value, Value)> global) {
    int64_t elements = rows * columns;
    for (int64_t first = 0; first < elements; first += tile.threads()) {
      Value position = addi(threadId, index(first));
      auto copy = [&] {
        Value row = arith::DivUIOp::create(b, loc, position, index(columns));
        Value column = arith::RemUIOp::create(b, loc, position, index(columns));
        auto [indices, inBounds] = global(row, column);
        Value value = load(operand, indices, inBounds);
        memref::StoreOp::create(b, loc, value, shared, ValueRange{row, column});
      };
      if (first + tile.threads() <= elements) {
        copy();
        continue;
      }
      auto guard = scf::IfOp::create(b, loc, below(position, elements),
                                     /*withElseRegion=*/false);
      OpBuilder::InsertionGuard insertion(b);
      b.setInsertionPointToStart(guard.thenBlock());
      copy();
    }
  }

  /// One step along K: stages A's and B's tiles for depths [k, k + depth)
  /// and adds their products to the sums.
  SmallVector<Value> step(Value k, int64_t depth, ValueRange sums) {
    stage(op.getDpsInputOperand(0), lhsTile, tile.rows, depth,
          [&](Value row, Value column) {
            Value globalRow = addi(rowBase, row);
            return std::make_pair(
                loopIndices(globalRow, nullptr, addi(k, column)),
                within(globalRow, loops.rows, tile.rows));
          });
    stage(op.getDpsInputOperand(1), rhsTile, depth, tile.columns,
          [&](Value row, Value column) {
            Value globalColumn = addi(columnBase, column);
            return std::make_pair(
                loopIndices(nullptr, globalColumn, addi(k, row)),
                within(globalColumn, loops.columns, tile.columns));
          });
    gpu::BarrierOp::create(b, loc);
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(depth), index(1), sums,
        [&](OpBuilder &nested, Location, Value kk, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, multiplyAdd(kk, carried));
        });
    gpu::BarrierOp::create(b, loc);
    return loop.getResults();
  }

  /// The sums after one depth `kk` of the staged tiles: the op's body on
  /// each pair of operands and each sum.
  SmallVector<Value> multiplyAdd(Value kk, ValueRange sums) {
    SmallVector<Value> lhs, rhs;
    for (int64_t i = 0; i < tile.rowsPerThread(); ++i)
      lhs.push_back(memref::LoadOp::create(
          b, loc, lhsTile,
          ValueRange{addi(threadRow, index(i * tile.threadRows)), kk}));
    for (int64_t j = 0; j < tile.columnsPerThread(); ++j)
      rhs.push_back(memref::LoadOp::create(
          b, loc, rhsTile,
          ValueRange{kk, addi(threadColumn, index(j * tile.threadColumns))}));
    Block &body = op->getRegion(0).front();
    SmallVector<Value> next;
    for (int64_t i = 0; i < tile.rowsPerThread(); ++i)
      for (int64_t j = 0; j < tile.columnsPerThread(); ++j) {
        IRMapping mapping;
        mapping.map(body.getArgument(0), lhs[i]);
        mapping.map(body.getArgument(1), rhs[j]);
        mapping.map(body.getArgument(2), sums[i * tile.columnsPerThread() + j]);
        for (Operation &inner : body.without_terminator())
          b.clone(inner, mapping);
        next.push_back(
            mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
      }
    return next;
  }

  OpBuilder &b;
  Location loc;
  linalg::LinalgOp op;
  const MatmulLoops &loops;
  const GpuTile &tile;
  Value batch, rowBase, columnBase, threadRow, threadColumn, threadId;
  Value lhsTile, rhsTile;
};

struct TileMatmulForGpuPass
    : public mlir::pk::impl::PkTileMatmulForGpuBase<TileMatmulForGpuPass> {
  using PkTileMatmulForGpuBase::PkTileMatmulForGpuBase;

  void runOnOperation() override {
    if (tileRows < 1 || tileColumns < 1 || threadRows < 1 ||
        threadColumns < 1 || tileRows % threadRows != 0 ||
        tileColumns % threadColumns != 0 || tileDepth < 1 || sharedBytes < 1) {
      getOperation().emitError(
          "the tile sizes must be positive multiples of the thread counts, "
          "and tile-depth and shared-bytes positive");
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    for (linalg::LinalgOp op : candidates) {
      FailureOr<MatmulLoops> loops = matchMatmul(op);
      if (succeeded(loops))
        rewrite(op, *loops);
    }
  }

  /// The depth of the operand tiles: as deep as `shared-bytes` holds, at
  /// most `tile-depth`.
  GpuTile tileFor(linalg::LinalgOp op) const {
    int64_t bytes = 0;
    for (OpOperand *input : op.getDpsInputOperands()) {
      int64_t width =
          getElementTypeOrSelf(input->get()).getIntOrFloatBitWidth();
      bytes = std::max<int64_t>(bytes, width / 8);
    }
    int64_t depth = sharedBytes / ((tileRows + tileColumns) * bytes);
    return {tileRows, tileColumns, threadRows, threadColumns,
            std::clamp<int64_t>(depth, 1, tileDepth)};
  }

  void rewrite(linalg::LinalgOp op, const MatmulLoops &loops) {
    GpuTile tile = tileFor(op);
    std::optional<TypedAttr> initialFill = takeInitialFill(op);
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto index = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    auto launch = gpu::LaunchOp::create(
        b, loc, index(llvm::divideCeil(loops.columns, tile.columns)),
        index(llvm::divideCeil(loops.rows, tile.rows)), index(loops.batches),
        index(tile.threadColumns), index(tile.threadRows), index(1));
    b.setInsertionPointToStart(&launch.getBody().front());
    TileKernelBuilder(b, op, loops, tile, launch).build(initialFill);
    gpu::TerminatorOp::create(b, loc);
    op->erase();
  }
};

} // namespace
