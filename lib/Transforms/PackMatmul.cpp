//===- PackMatmul.cpp - register-tile panels for large matmuls ------------===//

#include "picokernel/Support/VectorWidth.h"
#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKPACKMATMUL
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

/// The widest vector registers of the host.
int64_t hostVectorBits() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  return ::pk::widestVectorBits(
      [&](const char *name) { return features.lookup(name); });
}

/// The rows and columns of C one register tile holds: two vectors per row,
/// as many rows as leave registers for a row of B and a broadcast A
/// element (x86: 32 registers with AVX-512, 16 before).
std::pair<int64_t, int64_t> registerTile(Type element, int64_t vectorBits) {
  int64_t lanes =
      std::max<int64_t>(1, vectorBits / element.getIntOrFloatBitWidth());
  int64_t rows = vectorBits >= 512 ? 8 : vectorBits >= 256 ? 6 : 4;
  return {rows, 2 * lanes};
}

/// The multiply-adds of `op` (saturating), or 0 if a size is dynamic.
int64_t multiplyAdds(linalg::LinalgOp op) {
  int64_t count = 1;
  for (int64_t size : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(size))
      return 0;
    if (size != 0 && count > INT64_MAX / size)
      return INT64_MAX;
    count *= size;
  }
  return count;
}

struct PackMatmulPass
    : public mlir::pk::impl::PkPackMatmulBase<PackMatmulPass> {
  using PkPackMatmulBase::PkPackMatmulBase;

  void runOnOperation() override {
    int64_t bits = vectorBits > 0 ? int64_t(vectorBits) : hostVectorBits();
    if (kBlock < 1) {
      getOperation().emitError("pk-pack-matmul: k-block must be positive");
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> matmuls;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
          !op.hasPureTensorSemantics())
        return;
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      if (!element.isIntOrFloat() || element.isInteger(1))
        return;
      int64_t count = multiplyAdds(op);
      if (count == 0 || count < minIterations)
        return;
      matmuls.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      Type element = getElementTypeOrSelf(op.getDpsInits()[0].getType());
      auto [rows, columns] = registerTile(element, bits);
      auto options = [&, rows = rows, columns = columns](linalg::LinalgOp)
          -> std::optional<linalg::BlockPackMatmulOptions> {
        linalg::BlockPackMatmulOptions packing;
        packing.blockFactors = {rows, columns, int64_t(kBlock)};
        packing.allowPadding = true;
        packing.rhsTransposeOuterBlocks = true;
        packing.rhsTransposeInnerBlocks = false;
        return packing;
      };
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::PackResult> packed =
          linalg::blockPackMatmul(rewriter, op, options);
      if (failed(packed)) {
        op.emitOpError("could not be packed into register tiles");
        return signalPassFailure();
      }
      packed->packedLinalgOp->setAttr(mlir::pk::kPackedMatmulAttrName,
                                      rewriter.getUnitAttr());
    }
  }
};

} // namespace
