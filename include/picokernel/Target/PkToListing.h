//===- PkToListing.h - pk kernels as seed-style listings --------*- C++ -*-===//
//
// The listing printer behind pk::listing (Target/Listing.h, which shows
// the format) and pk-translate's --pk-to-listing.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_TARGET_PKTOLISTING_H
#define PICOKERNEL_TARGET_PKTOLISTING_H

#include "picokernel/Dialect/Pk/IR/PkOps.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::pk {

void printListing(KernelOp kernel, llvm::raw_ostream &os);

void registerToListingTranslation();

} // namespace mlir::pk

namespace pk {

/// The listing of every kernel in `module`, a blank line between two.
std::string listing(mlir::ModuleOp module);

} // namespace pk

#endif // PICOKERNEL_TARGET_PKTOLISTING_H
