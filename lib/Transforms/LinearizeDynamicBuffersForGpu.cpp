//===- LinearizeDynamicBuffersForGpu.cpp - runtime arrays, linear indices -===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLINEARIZEDYNAMICBUFFERSFORGPU
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Where the elements of a buffer (of identity layout: a parameter or an
/// allocation) or of a view of one lie in it.
struct Layout {
  Value flat; // the whole buffer, one-dimensional
  OpFoldResult offset;
  SmallVector<OpFoldResult> strides;
};

/// Whether SPIR-V cannot index `type` itself: rank two or more with a
/// dynamic size, stride or offset, or a view of one dimension with a
/// dynamic stride or offset.
bool needsLinearIndex(MemRefType type) {
  if (type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return true;
  bool dynamicLayout = ShapedType::isDynamic(offset) ||
                       llvm::any_of(strides, ShapedType::isDynamic);
  return dynamicLayout || (type.getRank() > 1 && !type.hasStaticShape());
}

class Linearizer {
public:
  explicit Linearizer(func::FuncOp function) : function(function) {}

  FailureOr<Layout> layoutOf(Value memref) {
    if (auto cast = memref.getDefiningOp<memref::ReinterpretCastOp>()) {
      FailureOr<Layout> source = rootLayout(cast.getSource());
      if (failed(source))
        return failure();
      return Layout{source->flat, cast.getMixedOffsets().front(),
                    cast.getMixedStrides()};
    }
    return rootLayout(memref);
  }

private:
  /// The layout of a parameter or an allocation, its flat buffer and sizes
  /// read once after its definition.
  FailureOr<Layout> rootLayout(Value root) {
    auto found = roots.find(root);
    if (found != roots.end())
      return found->second;
    auto type = dyn_cast<MemRefType>(root.getType());
    bool isParameter = isa<BlockArgument>(root) &&
                       root.getParentRegion() == &function.getBody();
    bool isAllocation = root.getDefiningOp<memref::AllocOp>() != nullptr ||
                        root.getDefiningOp<memref::AllocaOp>() != nullptr;
    if (!type || !type.getLayout().isIdentity() ||
        !(isParameter || isAllocation))
      return failure();
    OpBuilder builder(function.getContext());
    if (isParameter)
      builder.setInsertionPointToStart(&function.getBody().front());
    else
      builder.setInsertionPointAfterValue(root);
    Location loc = root.getLoc();
    int64_t rank = type.getRank();
    Layout layout{root, builder.getIndexAttr(0), {}};
    layout.strides.assign(rank, builder.getIndexAttr(1));
    for (int64_t d = rank - 1; d > 0; --d) {
      OpFoldResult size =
          type.isDynamicDim(d)
              ? OpFoldResult(memref::DimOp::create(builder, loc, root, d))
              : OpFoldResult(builder.getIndexAttr(type.getDimSize(d)));
      layout.strides[d - 1] = multiply(builder, loc, layout.strides[d], size);
    }
    if (rank > 1) {
      ReassociationIndices all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
      layout.flat = memref::CollapseShapeOp::create(
          builder, loc, root, ArrayRef<ReassociationIndices>{all});
    }
    roots[root] = layout;
    return layout;
  }

  static OpFoldResult multiply(OpBuilder &builder, Location loc, OpFoldResult a,
                               OpFoldResult b) {
    std::optional<int64_t> x = getConstantIntValue(a),
                           y = getConstantIntValue(b);
    if (x && y)
      return builder.getIndexAttr(*x * *y);
    if (x == 1)
      return b;
    if (y == 1)
      return a;
    return arith::MulIOp::create(
               builder, loc, getValueOrCreateConstantIndexOp(builder, loc, a),
               getValueOrCreateConstantIndexOp(builder, loc, b))
        .getResult();
  }

  func::FuncOp function;
  llvm::DenseMap<Value, Layout> roots;
};

/// offset + sum(indices[k] * strides[k]), at the access.
Value linearIndex(OpBuilder &builder, Location loc, const Layout &layout,
                  ValueRange indices) {
  auto value = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(builder, loc, v);
  };
  Value index;
  if (!isConstantIntValue(layout.offset, 0))
    index = value(layout.offset);
  for (auto [i, stride] : llvm::zip(indices, layout.strides)) {
    Value term =
        isConstantIntValue(stride, 1)
            ? i
            : arith::MulIOp::create(builder, loc, i, value(stride)).getResult();
    index = index ? arith::AddIOp::create(builder, loc, index, term).getResult()
                  : term;
  }
  return index ? index : value(builder.getIndexAttr(0));
}

struct LinearizeDynamicBuffersForGpuPass
    : public mlir::pk::impl::PkLinearizeDynamicBuffersForGpuBase<
          LinearizeDynamicBuffersForGpuPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    Linearizer linearizer(function);
    SmallVector<Operation *> accesses;
    function.walk([&](Operation *op) {
      if (auto load = dyn_cast<memref::LoadOp>(op);
          load && needsLinearIndex(load.getMemRefType()))
        accesses.push_back(op);
      if (auto store = dyn_cast<memref::StoreOp>(op);
          store && needsLinearIndex(store.getMemRefType()))
        accesses.push_back(op);
    });
    for (Operation *op : accesses) {
      Value memref = isa<memref::LoadOp>(op)
                         ? cast<memref::LoadOp>(op).getMemRef()
                         : cast<memref::StoreOp>(op).getMemRef();
      FailureOr<Layout> layout = linearizer.layoutOf(memref);
      if (failed(layout)) {
        op->emitOpError("indexes a buffer of dynamic sizes that is neither "
                        "a parameter, an allocation nor a view of one: the "
                        "GPU cannot compute its layout");
        return signalPassFailure();
      }
      OpBuilder builder(op);
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        Value index =
            linearIndex(builder, load.getLoc(), *layout, load.getIndices());
        load.replaceAllUsesWith(
            memref::LoadOp::create(builder, load.getLoc(), layout->flat, index)
                .getResult());
      } else {
        auto store = cast<memref::StoreOp>(op);
        Value index =
            linearIndex(builder, store.getLoc(), *layout, store.getIndices());
        memref::StoreOp::create(builder, store.getLoc(),
                                store.getValueToStore(), layout->flat, index);
      }
      op->erase();
    }
  }
};

} // namespace
