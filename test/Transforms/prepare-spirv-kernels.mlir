// RUN: pk-opt %s --pk-prepare-spirv-kernels | FileCheck %s
// RUN: pk-opt %s --pk-prepare-spirv-kernels=vulkan-version=1.0 | FileCheck %s --check-prefix=V10

// Each kernel of the module gets the entry-point ABI of its block size; the
// module the target environment.
// CHECK: module attributes {gpu.container_module, spirv.target_env = #spirv.target_env<#spirv.vce<v1.3, [Shader, Int8, Int16, Int64, Float16, Float64, StorageBuffer8BitAccess, StorageBuffer16BitAccess, SignedZeroInfNanPreserve]
// V10: spirv.vce<v1.0,
// CHECK: gpu.module @first {
// CHECK: gpu.func @first(%{{.*}}: memref<64xf32>) kernel attributes {{{.*}}spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>}
// CHECK: gpu.func @second(%{{.*}}: memref<8xf32>) kernel attributes {{{.*}}spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [8, 1, 1]>}
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @host(%a: memref<64xf32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @first::@first blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    gpu.launch_func @first::@second blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>)
    return
  }
  gpu.module @first {
    gpu.func @first(%a: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      gpu.return
    }
    gpu.func @second(%b: memref<8xf32>) kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
      gpu.return
    }
  }
}

