// RUN: pk-opt %s --split-input-file --verify-diagnostics --pk-rename-kernel-functions | FileCheck %s

// A kernel's function (public, with a C interface) takes a symbol no C
// library defines, recording its name; its uses follow, and private
// functions keep theirs: the libm call that math.erf becomes later can be
// named erf.
// CHECK-LABEL: func.func @kernel.erf(
// CHECK-SAME: pk.kernel_name = "erf"
// CHECK: math.erf
// CHECK-LABEL: func.func private @helper
// CHECK-LABEL: func.func @kernel.caller(
// CHECK: call @kernel.erf(
func.func @erf(%x: f64) -> f64 attributes {llvm.emit_c_interface} {
  %y = math.erf %x : f64
  return %y : f64
}
func.func private @helper() {
  return
}
func.func @caller(%x: f64) -> f64 attributes {llvm.emit_c_interface} {
  %y = call @erf(%x) : (f64) -> f64
  return %y : f64
}

// -----

// Kernels `a` and `kernel.a`: the longer name moves first. A public
// function without a C interface is not a kernel's.
// CHECK-LABEL: func.func @kernel.a(
// CHECK-SAME: pk.kernel_name = "a"
// CHECK-LABEL: func.func @kernel.kernel.a(
// CHECK-SAME: pk.kernel_name = "kernel.a"
// CHECK-LABEL: func.func @plain(
func.func @a() attributes {llvm.emit_c_interface} {
  return
}
func.func @kernel.a() attributes {llvm.emit_c_interface} {
  return
}
func.func @plain() {
  return
}

// -----

// expected-error @below {{cannot be renamed 'kernel.k': the module has a symbol of that name}}
func.func @k() attributes {llvm.emit_c_interface} {
  return
}
func.func private @kernel.k()
