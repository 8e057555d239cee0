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

    A kernel with dynamic sizes reads each size class's size once
    (`memref.dim` of the first memref of the class) and uses every other
    memref with dynamic sizes through a `memref.reinterpret_cast` with those
    sizes and the row-major strides computed from them (refs are
    C-contiguous); `pk.dim` becomes that size.

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

def ConvertParallelLoopsToOpenMP
    : Pass<"convert-parallel-loops-to-openmp", "::mlir::ModuleOp"> {
  let summary = "Run 1-D parallel loops as one chunk per OpenMP thread";
  let description = [{
    Rewrites each 1-D `scf.parallel` without reductions into an
    `omp.parallel` region in which each thread computes its chunk of the
    iterations (thread `t` of `T` runs iterations `[t c, min((t + 1) c, n))`
    with `c = ceil(n / T)`, the static schedule) and runs it as an
    `scf.for`, each iteration in a `memref.alloca_scope`. The thread's
    number and the team's size come from `omp_get_thread_num` and
    `omp_get_num_threads` (declared as private functions).

    Upstream's `convert-scf-to-openmp` makes a work-sharing loop instead:
    every thread calls `__kmpc_for_static_init`, which Debian's libomp
    (built with KMP_DEBUG) spends most of a microsecond in formatting trace
    strings, and the loop ends with a barrier before the region's own. A
    parallel region costs about 2.3 us that way on 2 threads, 1.5 us this
    way. Loops nested in another parallel loop (already on one thread)
    become `scf.for`; multi-dimensional loops and loops with reductions are
    left to upstream.

    ```mlir
    scf.parallel (%i) = (%lb) to (%ub) step (%s) { ... }
    // becomes
    omp.parallel {
      %t = func.call @omp_get_thread_num() : () -> i32
      %n = func.call @omp_get_num_threads() : () -> i32
      ... (first and last of this thread's chunk)
      scf.for %i = %first to %last step %s {
        memref.alloca_scope { ... }
      }
      omp.terminator
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::omp::OpenMPDialect",
    "::mlir::scf::SCFDialect",
  ];
}

#endif // PICOKERNEL_CONVERSION_PASSES_TD
