//===- Passes.td - picokernel conversion passes ------------*- tablegen -*-===//

#ifndef PICOKERNEL_CONVERSION_PASSES_TD
#define PICOKERNEL_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertPkToLinalg : Pass<"convert-pk-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower pk kernels to functions over memrefs computing with linalg";
  let description = [{
    Each `pk.kernel` becomes a `func.func` of the same name whose arguments
    are the refs as identity-layout memrefs, marked `llvm.emit_c_interface`
    so the runtime can call it. Inside, the computation is linalg on tensors
    in destination-passing style:

    - a loaded ref becomes one `bufferization.to_tensor ... restrict`
      (`writable` when the kernel also stores to it);
    - a store becomes `bufferization.materialize_in_destination` into the
      ref's memref (or into its tensor when the ref is also loaded), so that
      one-shot bufferization can compute straight into the caller's buffer;
    - elementwise operations, casts and broadcasts become `linalg.generic`
      with parallel iterators (ready for `linalg-fuse-elementwise-ops`);
    - `pk.matmul` becomes `linalg.matmul`, `batch_matmul`, `matvec`,
      `vecmat` or `dot`, or a `linalg.generic` contraction for the other
      batched shapes, accumulating into a zero-filled tensor.

    Run `pk-forward-stores` first: it guarantees that every ref is loaded
    before it is stored.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // PICOKERNEL_CONVERSION_PASSES_TD
