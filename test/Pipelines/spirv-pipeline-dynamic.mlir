// The SPIR-V pipeline on dynamic sizes: the host reads the sizes and
// computes the grid, the kernel takes each size it needs as an argument (a
// storage buffer of one i32) and indexes its buffers as runtime arrays, at
// linear indices computed from the sizes for 2-D ones.
// RUN: pk-opt %s --pk-spirv-pipeline --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @fma
// CHECK: %[[N:.*]] = memref.dim %arg0, %c0
// CHECK: arith.divsi %{{.*}}, %c64
// CHECK: gpu.launch_func @fma_kernel::@fma_kernel blocks in (%{{.*}}, %c1, %c1) threads in (%c64, %c1, %c1) args(%[[N]] : index, %arg0 : memref<?xf32>
// CHECK: spirv.module @__spv__fma_kernel
// CHECK-DAG: spirv.GlobalVariable @fma_kernel_arg_0 bind(0, 0) : !spirv.ptr<!spirv.struct<(i32 [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @fma_kernel_arg_1 bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, StorageBuffer>
// The thread's index against the size read from its buffer.
// CHECK: spirv.func @fma_kernel()
// CHECK: %[[SIZE:.*]] = spirv.Load "StorageBuffer" %{{.*}} : i32
// CHECK: %[[AT:.*]] = spirv.IAdd
// CHECK: spirv.ULessThan %[[AT]], %[[SIZE]]
// CHECK: spirv.FMul
pk.kernel @fma(%a: !pk.ref<?xf32>, %b: !pk.ref<?xf32>, %c: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %0 = pk.load %a : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.load %b : !pk.ref<?xf32> -> tensor<?xf32>
  %2 = pk.load %c : !pk.ref<?xf32> -> tensor<?xf32>
  %3 = pk.mul %0, %1 : tensor<?xf32>
  %4 = pk.add %3, %2 : tensor<?xf32>
  pk.store %4, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

// Both sizes vary: rows on workgroups y, columns in tiles of 64 on x; the
// buffers are collapsed to one dimension on the host.
// CHECK-LABEL: func.func @add
// CHECK-DAG: memref.collapse_shape %arg0 {{\[}}[0, 1]]
// CHECK-DAG: memref.collapse_shape %arg2 {{\[}}[0, 1]]
// CHECK: gpu.launch_func @add_kernel::@add_kernel blocks in (%{{.*}}, %{{.*}}, %c1) threads in (%c64, %c1, %c1) args({{.*}} : index, {{.*}} : memref<?xf32>, {{.*}} : memref<?xf32>, {{.*}} : memref<?xf32>)
// CHECK: spirv.func @add_kernel()
// CHECK: spirv.IMul
// CHECK: spirv.IAdd
// CHECK: spirv.AccessChain {{.*}} -> !spirv.ptr<f32, StorageBuffer>
// CHECK: spirv.FAdd
pk.kernel @add(%a: !pk.ref<?x?xf32>, %b: !pk.ref<?x?xf32>, %o: !pk.ref<?x?xf32>) {
  %0 = pk.load %a : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.load %b : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %2 = pk.add %0, %1 : tensor<?x?xf32>
  pk.store %2, %o : tensor<?x?xf32> -> !pk.ref<?x?xf32>
  pk.return
}
