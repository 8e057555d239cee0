//===- Bufferization.h - facts about bufferized kernels ----------*- C++
//-*-===//
//
// Small queries over the IR a kernel lowers to, shared by the conversion
// from pk and the transforms after it.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_BUFFERIZATION_H
#define PICOKERNEL_SUPPORT_BUFFERIZATION_H

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

namespace mlir::pk {

/// The loaded contents of a kernel's `memref` argument: the one
/// `bufferization.to_tensor` of it that the pk lowering creates when the
/// kernel loads the ref; null if the kernel never loads it.
inline bufferization::ToTensorOp loadedContents(Value memref) {
  for (Operation *user : memref.getUsers())
    if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(user))
      return toTensor;
  return {};
}

} // namespace mlir::pk

#endif // PICOKERNEL_SUPPORT_BUFFERIZATION_H
