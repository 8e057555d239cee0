//===- PkToLinalg.h - pk to linalg conversion patterns ----------*- C++ -*-===//

#ifndef PICOKERNEL_CONVERSION_PKTOLINALG_PKTOLINALG_H
#define PICOKERNEL_CONVERSION_PKTOLINALG_PKTOLINALG_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::pk {

/// Converts !pk.ref<shape x type> to memref<shape x type> (identity layout)
/// and leaves every other type alone.
class PkToLinalgTypeConverter : public TypeConverter {
public:
  PkToLinalgTypeConverter();
};

/// Patterns lowering every pk operation (see the convert-pk-to-linalg pass).
void populatePkToLinalgConversionPatterns(const TypeConverter &typeConverter,
                                          RewritePatternSet &patterns);

} // namespace mlir::pk

#endif // PICOKERNEL_CONVERSION_PKTOLINALG_PKTOLINALG_H
