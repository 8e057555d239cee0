//===- CopyViewsWithLinalg.cpp - view copies as loop nests ---------------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKCOPYVIEWSWITHLINALG
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// Views have strided layouts, even a contiguous view that starts at offset
/// 0 (`strided<[1]>`); whole buffers have the default identity map.
bool isWholeBuffer(Value memref) {
  MemRefLayoutAttrInterface layout =
      cast<MemRefType>(memref.getType()).getLayout();
  return isa<AffineMapAttr>(layout) && layout.isIdentity();
}

struct CopyViewsWithLinalgPass
    : public mlir::pk::impl::PkCopyViewsWithLinalgBase<
          CopyViewsWithLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (!isWholeBuffer(copy.getSource()) || !isWholeBuffer(copy.getTarget()))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
  }
};

} // namespace
