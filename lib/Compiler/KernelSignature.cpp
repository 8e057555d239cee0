//===- KernelSignature.cpp - what a compiled kernel takes -----------------===//

#include "picokernel/Compiler/KernelSignature.h"
#include "picokernel/Dialect/Pk/IR/PkOps.h"
#include "picokernel/Support/DTypeIR.h"

size_t pk::CompiledParam::elements() const {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= size_t(dim);
  return count;
}

pk::KernelSignature pk::signatureOf(mlir::pk::KernelOp kernel) {
  KernelSignature signature{kernel.getSymName().str(), {}};
  for (mlir::BlockArgument arg : kernel.getBodyBlock().getArguments()) {
    auto ref = llvm::cast<mlir::pk::RefType>(arg.getType());
    CompiledParam param;
    param.name = kernel.getParameterName(arg.getArgNumber());
    param.shape.assign(ref.getShape().begin(), ref.getShape().end());
    param.dtype = *fromMlirType(ref.getElementType());
    param.read = llvm::any_of(arg.getUsers(), llvm::IsaPred<mlir::pk::LoadOp>);
    param.written = kernel.isStoredTo(arg.getArgNumber());
    signature.params.push_back(std::move(param));
  }
  return signature;
}
