// pk kernels compiled through the whole CPU pipeline (pk-translate
// --pk-to-llvmir, then clang into a shared library), called from an MLIR
// main() run by mlir-runner.
// RUN: split-file %s %t
// RUN: pk-translate --pk-to-llvmir %t/kernels.mlir -o %t/kernels.ll
// RUN: clang -O2 -shared -fPIC %t/kernels.ll -o %t/libkernels.so -L%llvm_lib_dir -lomp -Wl,-rpath,%llvm_lib_dir
// RUN: pk-opt %t/main.mlir --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%t/libkernels.so,%mlir_runner_utils,%mlir_c_runner_utils \
// RUN:   | FileCheck %s

//--- kernels.mlir
// o = a * b + c
pk.kernel @fma(%a: !pk.ref<4xf32>, %b: !pk.ref<4xf32>, %c: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.load %b : !pk.ref<4xf32> -> tensor<4xf32>
  %2 = pk.mul %0, %1 : tensor<4xf32>
  %3 = pk.load %c : !pk.ref<4xf32> -> tensor<4xf32>
  %4 = pk.add %2, %3 : tensor<4xf32>
  pk.store %4, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// o = a @ b + bias (broadcast row)
pk.kernel @matmul_bias(%a: !pk.ref<2x3xf32>, %b: !pk.ref<3x2xf32>, %bias: !pk.ref<2xf32>, %o: !pk.ref<2x2xf32>) {
  %a0 = pk.load %a : !pk.ref<2x3xf32> -> tensor<2x3xf32>
  %b0 = pk.load %b : !pk.ref<3x2xf32> -> tensor<3x2xf32>
  %m = pk.matmul %a0, %b0 : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  %c0 = pk.load %bias : !pk.ref<2xf32> -> tensor<2xf32>
  %cb = pk.broadcast %c0 : tensor<2xf32> -> tensor<2x2xf32>
  %s = pk.add %m, %cb : tensor<2x2xf32>
  pk.store %s, %o : tensor<2x2xf32> -> !pk.ref<2x2xf32>
  pk.return
}

// o = o * 2 + x, in place; then p = o (the updated value)
pk.kernel @update(%x: !pk.ref<4xf32>, %o: !pk.ref<4xf32>, %p: !pk.ref<4xf32>) {
  %0 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
  %two = pk.constant dense<2.0> : tensor<4xf32>
  %1 = pk.mul %0, %two : tensor<4xf32>
  %2 = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %3 = pk.add %1, %2 : tensor<4xf32>
  pk.store %3, %o : tensor<4xf32> -> !pk.ref<4xf32>
  %4 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %4, %p : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// A loop nest large enough to run its outer loop through OpenMP.
pk.kernel @large(%a: !pk.ref<512x512xf32>, %o: !pk.ref<512x512xf32>) {
  %0 = pk.load %a : !pk.ref<512x512xf32> -> tensor<512x512xf32>
  %1 = pk.mul %0, %0 : tensor<512x512xf32>
  %one = pk.constant dense<1.0> : tensor<512x512xf32>
  %2 = pk.add %1, %one : tensor<512x512xf32>
  pk.store %2, %o : tensor<512x512xf32> -> !pk.ref<512x512xf32>
  pk.return
}

//--- main.mlir
memref.global "private" constant @a4 : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
memref.global "private" constant @b4 : memref<4xf32> = dense<[2.0, 4.0, 6.0, 8.0]>
memref.global "private" constant @c4 : memref<4xf32> = dense<[3.0, 2.0, 1.0, 0.5]>
memref.global "private" constant @a23 : memref<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>
memref.global "private" constant @b32 : memref<3x2xf32> = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]>
memref.global "private" constant @bias2 : memref<2xf32> = dense<[10.0, 20.0]>

func.func private @fma(memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) attributes {llvm.emit_c_interface}
func.func private @matmul_bias(memref<2x3xf32>, memref<3x2xf32>, memref<2xf32>, memref<2x2xf32>) attributes {llvm.emit_c_interface}
func.func private @update(memref<4xf32>, memref<4xf32>, memref<4xf32>) attributes {llvm.emit_c_interface}
func.func private @large(memref<512x512xf32>, memref<512x512xf32>) attributes {llvm.emit_c_interface}
func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

func.func @main() {
  %a = memref.get_global @a4 : memref<4xf32>
  %b = memref.get_global @b4 : memref<4xf32>
  %c = memref.get_global @c4 : memref<4xf32>
  %o = memref.alloc() : memref<4xf32>
  call @fma(%a, %b, %c, %o) : (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  %ou = memref.cast %o : memref<4xf32> to memref<*xf32>
  // CHECK: data =
  // CHECK-NEXT: [5,  10,  19,  32.5]
  call @printMemrefF32(%ou) : (memref<*xf32>) -> ()

  %ma = memref.get_global @a23 : memref<2x3xf32>
  %mb = memref.get_global @b32 : memref<3x2xf32>
  %bias = memref.get_global @bias2 : memref<2xf32>
  %mo = memref.alloc() : memref<2x2xf32>
  call @matmul_bias(%ma, %mb, %bias, %mo) : (memref<2x3xf32>, memref<3x2xf32>, memref<2xf32>, memref<2x2xf32>) -> ()
  %mou = memref.cast %mo : memref<2x2xf32> to memref<*xf32>
  // CHECK: data =
  // CHECK-NEXT: {{\[}}[14,   25],
  // CHECK-NEXT:  [20,   31]]
  call @printMemrefF32(%mou) : (memref<*xf32>) -> ()

  // o starts as [1, 2, 3, 4]; o = 2 * o + a = [3, 6, 9, 12]; p = o.
  %uo = memref.alloc() : memref<4xf32>
  memref.copy %a, %uo : memref<4xf32> to memref<4xf32>
  %up = memref.alloc() : memref<4xf32>
  call @update(%a, %uo, %up) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  %uou = memref.cast %uo : memref<4xf32> to memref<*xf32>
  %upu = memref.cast %up : memref<4xf32> to memref<*xf32>
  // CHECK: data =
  // CHECK-NEXT: [3,  6,  9,  12]
  call @printMemrefF32(%uou) : (memref<*xf32>) -> ()
  // CHECK: data =
  // CHECK-NEXT: [3,  6,  9,  12]
  call @printMemrefF32(%upu) : (memref<*xf32>) -> ()

  // o = a * a + 1 with a = 3 everywhere: 10 everywhere; print one row.
  %la = memref.alloc() : memref<512x512xf32>
  %lo = memref.alloc() : memref<512x512xf32>
  %three = arith.constant 3.0 : f32
  linalg.fill ins(%three : f32) outs(%la : memref<512x512xf32>)
  call @large(%la, %lo) : (memref<512x512xf32>, memref<512x512xf32>) -> ()
  %row = memref.subview %lo[511, 508] [1, 4] [1, 1] : memref<512x512xf32> to memref<1x4xf32, strided<[512, 1], offset: 262140>>
  %rowu = memref.cast %row : memref<1x4xf32, strided<[512, 1], offset: 262140>> to memref<*xf32>
  // CHECK: data =
  // CHECK-NEXT: {{\[}}[10,   10,   10,   10]]
  call @printMemrefF32(%rowu) : (memref<*xf32>) -> ()

  memref.dealloc %o : memref<4xf32>
  memref.dealloc %mo : memref<2x2xf32>
  memref.dealloc %uo : memref<4xf32>
  memref.dealloc %up : memref<4xf32>
  memref.dealloc %la : memref<512x512xf32>
  memref.dealloc %lo : memref<512x512xf32>
  return
}
