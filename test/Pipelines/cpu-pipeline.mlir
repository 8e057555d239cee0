// The whole CPU pipeline ends in the LLVM dialect; large loop nests run their
// outermost loop through OpenMP, small ones stay serial.
// RUN: pk-opt %s --pk-cpu-pipeline | FileCheck %s
// RUN: pk-opt %s --pk-cpu-pipeline=parallel-threshold=0 | FileCheck %s --check-prefix=SERIAL

// CHECK-LABEL: llvm.func @small
// CHECK-NOT: omp.
// CHECK: llvm.fmul
// CHECK-LABEL: llvm.func @_mlir_ciface_small
// SERIAL-LABEL: llvm.func @small
pk.kernel @small(%a: !pk.ref<1024xf32>, %o: !pk.ref<1024xf32>) {
  %0 = pk.load %a : !pk.ref<1024xf32> -> tensor<1024xf32>
  %1 = pk.mul %0, %0 : tensor<1024xf32>
  pk.store %1, %o : tensor<1024xf32> -> !pk.ref<1024xf32>
  pk.return
}

// Each thread runs its chunk of the outermost loop; the loop body holds no
// stacksave/stackrestore (an empty alloca scope, inlined), which would
// keep LLVM from vectorizing calls.
// CHECK-LABEL: llvm.func @large
// CHECK: omp.parallel
// CHECK: llvm.call @omp_get_thread_num
// CHECK-NOT: llvm.intr.stacksave
// CHECK: llvm.fmul
// CHECK-NOT: llvm.intr.stackrestore
// CHECK: omp.terminator
// CHECK-LABEL: llvm.func @_mlir_ciface_large
// SERIAL-LABEL: llvm.func @large
// SERIAL-NOT: omp.
// SERIAL: llvm.func @_mlir_ciface_large
pk.kernel @large(%a: !pk.ref<1000x1000xf32>, %o: !pk.ref<1000x1000xf32>) {
  %0 = pk.load %a : !pk.ref<1000x1000xf32> -> tensor<1000x1000xf32>
  %1 = pk.mul %0, %0 : tensor<1000x1000xf32>
  pk.store %1, %o : tensor<1000x1000xf32> -> !pk.ref<1000x1000xf32>
  pk.return
}

// erf has no LLVM intrinsic: it becomes a call to libm's erff.
// CHECK-LABEL: llvm.func @erf
// CHECK: llvm.call @erff
pk.kernel @erf(%a: !pk.ref<16xf32>, %o: !pk.ref<16xf32>) {
  %0 = pk.load %a : !pk.ref<16xf32> -> tensor<16xf32>
  %1 = pk.erf %0 : tensor<16xf32>
  pk.store %1, %o : tensor<16xf32> -> !pk.ref<16xf32>
  pk.return
}
