// The whole CPU pipeline ends in the LLVM dialect; large loop nests run their
// outermost loop through OpenMP, small ones stay serial.
// RUN: pk-opt %s --pk-cpu-pipeline | FileCheck %s
// RUN: pk-opt %s --pk-cpu-pipeline=parallel-threshold=0 | FileCheck %s --check-prefix=SERIAL

// The kernel @erf64 below calls libm's erf.
// CHECK: llvm.func @erf(f64) -> f64
// CHECK-LABEL: llvm.func @kernel.small(
// CHECK-NOT: omp.
// CHECK: llvm.fmul
// CHECK-LABEL: llvm.func @_mlir_ciface_small
// SERIAL-LABEL: llvm.func @kernel.small(
pk.kernel @small(%a: !pk.ref<1024xf32>, %o: !pk.ref<1024xf32>) {
  %0 = pk.load %a : !pk.ref<1024xf32> -> tensor<1024xf32>
  %1 = pk.mul %0, %0 : tensor<1024xf32>
  pk.store %1, %o : tensor<1024xf32> -> !pk.ref<1024xf32>
  pk.return
}

// Each thread runs its chunk of the outermost loop; the loop body holds no
// stacksave/stackrestore (an empty alloca scope, inlined), which would
// keep LLVM from vectorizing calls.
// CHECK-LABEL: llvm.func @kernel.large(
// CHECK: omp.parallel
// CHECK: llvm.call @omp_get_thread_num
// CHECK-NOT: llvm.intr.stacksave
// CHECK: llvm.fmul
// CHECK-NOT: llvm.intr.stackrestore
// CHECK: omp.terminator
// CHECK-LABEL: llvm.func @_mlir_ciface_large
// SERIAL-LABEL: llvm.func @kernel.large(
// SERIAL-NOT: omp.
// SERIAL: llvm.func @_mlir_ciface_large
pk.kernel @large(%a: !pk.ref<1000x1000xf32>, %o: !pk.ref<1000x1000xf32>) {
  %0 = pk.load %a : !pk.ref<1000x1000xf32> -> tensor<1000x1000xf32>
  %1 = pk.mul %0, %0 : tensor<1000x1000xf32>
  pk.store %1, %o : tensor<1000x1000xf32> -> !pk.ref<1000x1000xf32>
  pk.return
}

// erf has no LLVM intrinsic: float32 erf is inline arithmetic
// (pk-inline-cpu-math), float64 erf a call to libm's erf. A kernel named
// erf is kernel.erf (pk-rename-kernel-functions), with its C interface
// named after the kernel: libm's erf (declared first) stays libm's.
// CHECK-LABEL: llvm.func @kernel.erf(
// CHECK-NOT: llvm.call @erff
// CHECK: llvm.intr.copysign
// CHECK-LABEL: llvm.func @_mlir_ciface_erf(
// CHECK-LABEL: llvm.func @kernel.erf64(
// CHECK: llvm.call @erf(
pk.kernel @erf(%a: !pk.ref<16xf32>, %o: !pk.ref<16xf32>) {
  %0 = pk.load %a : !pk.ref<16xf32> -> tensor<16xf32>
  %1 = pk.erf %0 : tensor<16xf32>
  pk.store %1, %o : tensor<16xf32> -> !pk.ref<16xf32>
  pk.return
}
pk.kernel @erf64(%a: !pk.ref<16xf64>, %o: !pk.ref<16xf64>) {
  %0 = pk.load %a : !pk.ref<16xf64> -> tensor<16xf64>
  %1 = pk.erf %0 : tensor<16xf64>
  pk.store %1, %o : tensor<16xf64> -> !pk.ref<16xf64>
  pk.return
}
