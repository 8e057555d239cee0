//===- PkToLinalg.h - pk to linalg conversion patterns ----------*- C++ -*-===//

#ifndef PICOKERNEL_CONVERSION_PKTOLINALG_PKTOLINALG_H
#define PICOKERNEL_CONVERSION_PKTOLINALG_PKTOLINALG_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pk {

/// Converts !pk.ref<shape x type> to memref<shape x type> (identity layout)
/// and unsigned integers (ui8...ui64, alone or as the elements of a tensor or
/// ref) to the signless integers of their width, which arith and linalg
/// compute on: the lowering picks the unsigned operations where the sign
/// matters. Every other type is left alone.
class PkToLinalgTypeConverter : public TypeConverter {
public:
  PkToLinalgTypeConverter();
};

/// `type` (a scalar, a tensor or a memref type) with unsigned integer
/// elements replaced by the signless integers of their width.
Type toSignless(Type type);
RankedTensorType toSignless(RankedTensorType type);

/// Patterns lowering every pk operation (see the convert-pk-to-linalg pass).
void populatePkToLinalgConversionPatterns(const TypeConverter &typeConverter,
                                          RewritePatternSet &patterns);

} // namespace mlir::pk

#endif // PICOKERNEL_CONVERSION_PKTOLINALG_PKTOLINALG_H
