//===- PkDialect.cpp - picokernel dialect ---------------------------------===//

#include "picokernel/Dialect/Pk/IR/PkDialect.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"

using namespace mlir;
using namespace mlir::pk;

#include "picokernel/Dialect/Pk/IR/PkDialect.cpp.inc"

void PkDialect::initialize() {
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "picokernel/Dialect/Pk/IR/PkOps.cpp.inc"
      >();
}

Operation *PkDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
