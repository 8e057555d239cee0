//===- SPIRV.h - pk kernels to SPIR-V, MSL and GLSL -------------*- C++ -*-===//

#ifndef PICOKERNEL_TARGET_SPIRV_H
#define PICOKERNEL_TARGET_SPIRV_H

#include "picokernel/Compiler/SpirvCompiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir::pk {

enum class ShadingLanguage { MSL, GLSL };

/// SPIR-V to source through SPIRV-Cross: Metal Shading Language (2.0, every
/// entry point in one source) or GLSL 450 (one source per entry point).
FailureOr<std::string> crossCompile(ArrayRef<uint32_t> binary,
                                    ShadingLanguage language,
                                    std::string &error);

/// Registers --pk-to-spirv, --pk-to-msl and --pk-to-glsl.
void registerToSpirvTranslations();

} // namespace mlir::pk

#endif // PICOKERNEL_TARGET_SPIRV_H
