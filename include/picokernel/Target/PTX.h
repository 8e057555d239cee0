//===- PTX.h - pk kernels to PTX for NVIDIA GPUs ----------------*- C++ -*-===//

#ifndef PICOKERNEL_TARGET_PTX_H
#define PICOKERNEL_TARGET_PTX_H

namespace mlir::pk {

/// Registers --pk-to-ptx (options --sm, --ptx-version).
void registerToPtxTranslation();

} // namespace mlir::pk

#endif // PICOKERNEL_TARGET_PTX_H
