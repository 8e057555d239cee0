//===- PkTypes.cpp - picokernel dialect types -----------------------------===//

#include "picokernel/Dialect/Pk/IR/PkTypes.h"
#include "picokernel/Dialect/Pk/IR/PkDialect.h"
#include "picokernel/Support/Shape.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

static_assert(::pk::kDynamicSize == mlir::ShapedType::kDynamic,
              "pk::kDynamicSize must be MLIR's dynamic size");

using namespace mlir;
using namespace mlir::pk;
using ::pk::formatShape;

#define GET_TYPEDEF_CLASSES
#include "picokernel/Dialect/Pk/IR/PkTypes.cpp.inc"

void PkDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "picokernel/Dialect/Pk/IR/PkTypes.cpp.inc"
      >();
}

namespace mlir::pk {
#include "picokernel/Dialect/Pk/IR/PkTypeConstraints.cpp.inc"
} // namespace mlir::pk

//===----------------------------------------------------------------------===//
// RefType
//===----------------------------------------------------------------------===//

RankedTensorType RefType::getTensorType() const {
  return RankedTensorType::get(getShape(), getElementType());
}

LogicalResult RefType::verify(function_ref<InFlightDiagnostic()> emitError,
                              ArrayRef<int64_t> shape, Type elementType) {
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (!ShapedType::isDynamic(dim) && dim < 0)
      return emitError() << "ref dimension " << i << " is negative (" << dim
                         << ")";
  }
  if (!isPkElementType(elementType))
    return emitError() << "ref element type must be one of f16, bf16, f32, "
                          "f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, "
                          "ui64; got "
                       << elementType;
  // Sizes must be computable in bytes without overflow, or every later
  // stage would have to re-check them.
  // (Dynamic sizes are checked by whoever runs the kernel.)
  if (llvm::is_contained(shape, 0))
    return success();
  uint64_t bytes = llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8);
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim))
      continue;
    if (bytes > uint64_t(INT64_MAX) / uint64_t(dim))
      return emitError() << "ref of shape " << formatShape(shape) << " and "
                         << elementType
                         << " elements is too large: its size in bytes "
                            "overflows a signed 64-bit integer";
    bytes *= uint64_t(dim);
  }
  return success();
}

Type RefType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    shape, elementType);
}

void RefType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t dim : getShape()) {
    if (ShapedType::isDynamic(dim))
      printer << "?";
    else
      printer << dim;
    printer << "x";
  }
  printer << getElementType() << ">";
}
