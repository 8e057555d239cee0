// RUN: pk-opt %s --split-input-file --verify-diagnostics --pk-name-c-interfaces-after-kernels | FileCheck %s

// The C interface of a renamed kernel is named after the kernel again (its
// recorded name, then dropped); the kernel's function, libm's erf and other
// functions keep their symbols, whatever their names look like.
// CHECK: llvm.func @erf(f64) -> f64
// CHECK-LABEL: llvm.func @kernel.erf(
// CHECK-NOT: pk.kernel_name
// CHECK-LABEL: llvm.func @_mlir_ciface_erf(
// CHECK: llvm.call @kernel.erf(
// CHECK-LABEL: llvm.func @_mlir_ciface_kernel.other(
llvm.func @erf(f64) -> f64
llvm.func @kernel.erf(%x: f64) -> f64 attributes {llvm.emit_c_interface, pk.kernel_name = "erf"} {
  %y = llvm.call @erf(%x) : (f64) -> f64
  llvm.return %y : f64
}
llvm.func @_mlir_ciface_kernel.erf(%x: f64) -> f64 attributes {llvm.emit_c_interface} {
  %y = llvm.call @kernel.erf(%x) : (f64) -> f64
  llvm.return %y : f64
}
llvm.func @_mlir_ciface_kernel.other() {
  llvm.return
}

// -----

llvm.func @kernel.k() attributes {pk.kernel_name = "k"} {
  llvm.return
}
// expected-error @below {{cannot be renamed '_mlir_ciface_k': the module has a symbol of that name}}
llvm.func @_mlir_ciface_kernel.k() {
  llvm.return
}
llvm.func @_mlir_ciface_k()
