// RUN: pk-opt %s --split-input-file --pk-linearize-large-grids | FileCheck %s

// 2 x 70000 blocks: launched as 140000 along x; the kernel recovers its
// block index (x: the remainder by 2, y: the quotient's remainder by 70000,
// z: the quotient's quotient) and the grid sizes are the old ones.
// CHECK-LABEL: func.func @host
// CHECK: arith.constant 70000 : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ALL:.*]] = arith.constant 140000 : index
// CHECK-NEXT: gpu.launch_func @m::@k blocks in (%[[ALL]], %[[ONE]], %[[ONE]]) threads in
// CHECK: gpu.func @k(%[[A:.*]]: memref<140000xf32>) kernel attributes {known_grid_size = array<i32: 140000, 1, 1>}
// CHECK-DAG: %[[LINEAR:.*]] = gpu.block_id x
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C70000:.*]] = arith.constant 70000 : index
// CHECK: %[[REST:.*]] = arith.divui %[[LINEAR]], %[[C2]] : index
// CHECK: %[[X:.*]] = arith.remui %[[LINEAR]], %[[C2]] : index
// CHECK: %[[Y:.*]] = arith.remui %[[REST]], %[[C70000]] : index
// CHECK-NOT: gpu.block_id
// CHECK-NOT: gpu.grid_dim
// CHECK: %[[ROW:.*]] = arith.muli %[[Y]], %[[C2]] : index
// CHECK: arith.addi %[[ROW]], %[[X]] : index
module attributes {gpu.container_module} {
  func.func @host(%a: memref<140000xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c70000 = arith.constant 70000 : index
    gpu.launch_func @m::@k blocks in (%c2, %c70000, %c1) threads in (%c1, %c1, %c1) args(%a : memref<140000xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<140000xf32>) kernel attributes {known_grid_size = array<i32: 2, 70000, 1>} {
      %x = gpu.block_id x
      %y = gpu.block_id y
      %w = gpu.grid_dim x
      %row = arith.muli %y, %w : index
      %i = arith.addi %row, %x : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %a[%i] : memref<140000xf32>
      gpu.return
    }
  }
}

// -----

// Grids NVIDIA GPUs take, and dynamic ones, are left alone.
// CHECK-LABEL: func.func @fits
// CHECK: gpu.launch_func @n::@k blocks in (%c2, %c65535, %c1)
// CHECK: gpu.launch_func @n::@l blocks in (%c2, %arg1, %c1)
// CHECK: gpu.block_id y
module attributes {gpu.container_module} {
  func.func @fits(%a: memref<8xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c65535 = arith.constant 65535 : index
    gpu.launch_func @n::@k blocks in (%c2, %c65535, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    gpu.launch_func @n::@l blocks in (%c2, %n, %c1) threads in (%c1, %c1, %c1) args(%a : memref<8xf32>)
    return
  }
  gpu.module @n {
    gpu.func @k(%a: memref<8xf32>) kernel {
      %y = gpu.block_id y
      gpu.return
    }
    gpu.func @l(%a: memref<8xf32>) kernel {
      gpu.return
    }
  }
}
