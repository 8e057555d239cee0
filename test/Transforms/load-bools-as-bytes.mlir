// Booleans are read as NumPy reads them: a byte compared with zero (LLVM
// reads an i1 as the byte's low bit). Other loads, and stores, as they were.
// RUN: pk-opt %s --pk-load-bools-as-bytes | FileCheck %s

// CHECK-LABEL: llvm.func @bools
// CHECK: %[[BYTE:.*]] = llvm.load %arg0 {alignment = 1 : i64} : !llvm.ptr -> i8
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i8) : i8
// CHECK: %[[BOOL:.*]] = llvm.icmp "ne" %[[BYTE]], %[[ZERO]] : i8
// CHECK: %[[WORD:.*]] = llvm.load %arg1 : !llvm.ptr -> i32
// CHECK: llvm.select %[[BOOL]], %[[WORD]]
// CHECK: llvm.store %[[BOOL]], %arg2 : i1, !llvm.ptr
// CHECK-NOT: -> i1
llvm.func @bools(%p: !llvm.ptr, %q: !llvm.ptr, %r: !llvm.ptr) -> i32 {
  %b = llvm.load %p {alignment = 1 : i64} : !llvm.ptr -> i1
  %w = llvm.load %q : !llvm.ptr -> i32
  %z = llvm.mlir.constant(0 : i32) : i32
  %s = llvm.select %b, %w, %z : i1, i32
  llvm.store %b, %r : i1, !llvm.ptr
  llvm.return %s : i32
}
