// Floor and ceiling divisions become truncating ones (SPIR-V has no other),
// checked by structure and by running them on the CPU.
// RUN: pk-opt %s --pk-expand-floor-div-for-spirv | FileCheck %s
// RUN: pk-opt %s --pk-expand-floor-div-for-spirv --convert-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @divide
// CHECK-NOT: arith.floordivsi
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.ceildivui
// CHECK: arith.divsi
// CHECK: return
func.func @divide(%a: i64, %b: i64) -> (i64, i64, i64) {
  %f = arith.floordivsi %a, %b : i64
  %c = arith.ceildivsi %a, %b : i64
  %u = arith.ceildivui %a, %b : i64
  return %f, %c, %u : i64, i64, i64
}

func.func private @printI64(i64)
func.func private @printNewline()

// -7 // 2 = -4, ceil(-7 / 2) = -3, 7 // -2 = -4, ceil(7 / 2) = 4 (unsigned).
// EXEC: -4
// EXEC-NEXT: -3
// EXEC-NEXT: -4
// EXEC-NEXT: 4
func.func @main() {
  %m7 = arith.constant -7 : i64
  %p7 = arith.constant 7 : i64
  %p2 = arith.constant 2 : i64
  %m2 = arith.constant -2 : i64
  %f0, %c0, %u0 = func.call @divide(%m7, %p2) : (i64, i64) -> (i64, i64, i64)
  %f1, %c1, %u1 = func.call @divide(%p7, %m2) : (i64, i64) -> (i64, i64, i64)
  %f2, %c2, %u2 = func.call @divide(%p7, %p2) : (i64, i64) -> (i64, i64, i64)
  func.call @printI64(%f0) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%c0) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%f1) : (i64) -> ()
  func.call @printNewline() : () -> ()
  func.call @printI64(%u2) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
