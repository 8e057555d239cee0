//===- LoadBoolsAsBytes.cpp - booleans read as NumPy reads them ----------===//

#include "picokernel/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::pk {
#define GEN_PASS_DEF_PKLOADBOOLSASBYTES
#include "picokernel/Transforms/Passes.h.inc"
} // namespace mlir::pk

using namespace mlir;

namespace {

struct LoadBoolsAsBytesPass
    : public mlir::pk::impl::PkLoadBoolsAsBytesBase<LoadBoolsAsBytesPass> {
  void runOnOperation() override {
    SmallVector<LLVM::LoadOp> loads;
    getOperation().walk([&](LLVM::LoadOp load) {
      if (load.getType().isInteger(1))
        loads.push_back(load);
    });
    for (LLVM::LoadOp load : loads) {
      OpBuilder builder(load);
      Location loc = load.getLoc();
      Type byte = builder.getI8Type();
      auto wide = LLVM::LoadOp::create(
          builder, loc, byte, load.getAddr(), load.getAlignment().value_or(0),
          load.getVolatile_(), load.getNontemporal(), load.getInvariant(),
          load.getInvariantGroup(), load.getOrdering(),
          load.getSyncscope().value_or(""));
      wide->setDiscardableAttrs(load->getDiscardableAttrDictionary());
      Value zero = LLVM::ConstantOp::create(builder, loc, byte,
                                            builder.getI8IntegerAttr(0));
      Value nonzero = LLVM::ICmpOp::create(builder, loc,
                                           LLVM::ICmpPredicate::ne, wide, zero);
      load.replaceAllUsesWith(nonzero);
      load.erase();
    }
  }
};

} // namespace
