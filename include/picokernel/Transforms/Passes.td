//===- Passes.td - picokernel transformations on upstream IR -*- tablegen -*-===//

#ifndef PICOKERNEL_TRANSFORMS_PASSES_TD
#define PICOKERNEL_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def PkLowerLinalgToLoops : Pass<"pk-lower-linalg-to-loops",
                                "::mlir::func::FuncOp"> {
  let summary = "Lower bufferized linalg ops to loops, parallel when large";
  let description = [{
    Every linalg op on memrefs becomes a loop nest of `scf.for`. When the
    op's iteration space has at least `parallel-threshold` points and its
    outermost loop is parallel, that outermost loop becomes an
    `scf.parallel` instead (for `convert-scf-to-openmp`): small kernels stay
    serial and free of thread start-up costs, large ones use every core,
    with the inner loops left for LLVM to vectorize.
  }];
  let options = [
    Option<"parallelThreshold", "parallel-threshold", "int64_t",
           /*default=*/"1 << 15",
           "Iteration count from which the outermost loop runs in parallel "
           "(0: never)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // PICOKERNEL_TRANSFORMS_PASSES_TD
