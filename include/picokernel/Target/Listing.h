//===- Listing.h - the seed-style listing of a pk kernel --------*- C++ -*-===//
//
// A compact, human-oriented view of a traced kernel in the style of the
// original picokernel, in its exact format (NumPy's dtype names, sizes
// separated by commas, a splat constant listed as the scalar it broadcasts,
// `TRUEDIV` for `/`, no newline after the last line):
//
//   kernel fma(a, b, c, o):
//     v0<4:float32> = LOAD [a]()
//     v1<4:float32> = LOAD [b]()
//     v2<4:float32> = MUL(v0, v1)
//     v3<4:float32> = LOAD [c]()
//     v4<4:float32> = ADD(v2, v3)
//     STORE [o](v4)
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_TARGET_LISTING_H
#define PICOKERNEL_TARGET_LISTING_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::pk {

/// Prints `kernel` as a listing (without a final newline). Parameter names come
/// from the NameLocs the tracers attach to the kernel's arguments (`argN`
/// otherwise).
void printListing(KernelOp kernel, llvm::raw_ostream &os);

/// Registers `--pk-to-listing` with mlir-translate style drivers.
void registerToListingTranslation();

} // namespace mlir::pk

namespace pk {

/// The listing of every kernel in `module` (blank lines between kernels),
/// one line per operation:
/// `v2<4:float32> = MUL(v0, v1)`.
std::string listing(mlir::ModuleOp module);

} // namespace pk

#endif // PICOKERNEL_TARGET_LISTING_H
