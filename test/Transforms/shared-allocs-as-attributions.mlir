// RUN: pk-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(pk-shared-allocs-as-attributions))' | FileCheck %s

// Shared-memory tiles (memory space 3, or the GPU dialect's workgroup address
// space), wherever they are allocated in a kernel, become workgroup
// attributions aligned for vector loads (16 bytes, or the alloc's alignment
// where larger); their deallocations go. Other allocations stay.
// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @tiles(%[[A:.*]]: memref<64xf32>) workgroup(%[[T0:.*]] : memref<64x16xf32, 3> {llvm.align = 16 : i64}, %[[T1:.*]] : memref<8xi32, #gpu.address_space<workgroup>> {llvm.align = 32 : i64}) kernel
// CHECK-NOT: memref.alloc() : memref<64x16xf32, 3>
// CHECK: %[[P:.*]] = memref.alloca() : memref<4xf32, 5>
// CHECK: memref.store %{{.*}}, %[[T0]]
// CHECK: scf.for
// CHECK-NOT: memref.alloc
// CHECK: memref.store %{{.*}}, %[[T1]]
// CHECK-NOT: memref.dealloc
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tiles(%a: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %v = arith.constant 1.0 : f32
      %i = arith.constant 7 : i32
      %tile = memref.alloc() : memref<64x16xf32, 3>
      %private = memref.alloca() : memref<4xf32, 5>
      memref.store %v, %tile[%c0, %c0] : memref<64x16xf32, 3>
      scf.for %k = %c0 to %c4 step %c1 {
        %inner = memref.alloc() {alignment = 32 : i64} : memref<8xi32, #gpu.address_space<workgroup>>
        memref.store %i, %inner[%c0] : memref<8xi32, #gpu.address_space<workgroup>>
      }
      memref.dealloc %tile : memref<64x16xf32, 3>
      gpu.return
    }
  }
}
