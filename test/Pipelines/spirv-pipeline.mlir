// The SPIR-V pipeline: one spirv.module per pk kernel, one entry point per
// dispatch, buffers at (set 0, binding i), and a host function launching them.
// RUN: pk-opt %s --pk-spirv-pipeline --split-input-file | FileCheck %s
// RUN: pk-opt %s --pk-spirv-pipeline=workgroup-size=128 --split-input-file | FileCheck %s --check-prefix=WG128

// CHECK-LABEL: func.func @fma
// CHECK: gpu.launch_func @fma_kernel::@fma_kernel blocks in (%c16, %c1, %c1) threads in (%c64, %c1, %c1) args(%arg0 : memref<1024xf32>, %arg1 : memref<1024xf32>, %arg2 : memref<1024xf32>, %arg3 : memref<1024xf32>)
// CHECK: spirv.module @__spv__fma_kernel Logical GLSL450
// CHECK-DAG: spirv.GlobalVariable @fma_kernel_arg_0 bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<1024 x f32, stride=4> [0])>, StorageBuffer>
// CHECK-DAG: spirv.GlobalVariable @fma_kernel_arg_3 bind(0, 3)
// CHECK: spirv.func @fma_kernel()
// CHECK: spirv.FMul
// CHECK: spirv.FAdd
// CHECK: spirv.EntryPoint "GLCompute" @fma_kernel
// CHECK: spirv.ExecutionMode @fma_kernel "LocalSize", 64, 1, 1
// WG128: gpu.launch_func @fma_kernel::@fma_kernel blocks in (%c8, %c1, %c1) threads in (%c128, %c1, %c1)
// WG128: spirv.ExecutionMode @fma_kernel "LocalSize", 128, 1, 1
pk.kernel @fma(%a: !pk.ref<1024xf32>, %b: !pk.ref<1024xf32>, %c: !pk.ref<1024xf32>, %o: !pk.ref<1024xf32>) {
  %0 = pk.load %a : !pk.ref<1024xf32> -> tensor<1024xf32>
  %1 = pk.load %b : !pk.ref<1024xf32> -> tensor<1024xf32>
  %2 = pk.mul %0, %1 : tensor<1024xf32>
  %3 = pk.load %c : !pk.ref<1024xf32> -> tensor<1024xf32>
  %4 = pk.add %2, %3 : tensor<1024xf32>
  pk.store %4, %o : tensor<1024xf32> -> !pk.ref<1024xf32>
  pk.return
}

// -----

// Two dispatches (the tiled matmul, which starts from the fill's zero, and
// the bias) and a temporary on the host side. The matmul stages its operand
// tiles in workgroup memory between barriers.
// CHECK-LABEL: func.func @matmul_bias
// CHECK: %[[P:.*]] = memref.alloc()
// CHECK: gpu.launch_func @matmul_bias_kernel::@matmul_bias_kernel blocks in (%c1, %c1, %c1) threads in (%c16, %c8, %c1)
// CHECK: gpu.launch_func @matmul_bias_kernel::@matmul_bias_kernel_0
// CHECK-NOT: gpu.launch_func
// CHECK: memref.dealloc %[[P]]
// CHECK: spirv.module @__spv__matmul_bias_kernel
// CHECK-DAG: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<1024 x f32>)>, Workgroup>
// CHECK: spirv.func @matmul_bias_kernel()
// CHECK: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// CHECK: spirv.EntryPoint "GLCompute" @matmul_bias_kernel,
// CHECK: spirv.ExecutionMode @matmul_bias_kernel "LocalSize", 16, 8, 1
// CHECK: spirv.EntryPoint "GLCompute" @matmul_bias_kernel_0,
pk.kernel @matmul_bias(%a: !pk.ref<4x3xf32>, %b: !pk.ref<3x5xf32>, %c: !pk.ref<5xf32>, %o: !pk.ref<4x5xf32>) {
  %a0 = pk.load %a : !pk.ref<4x3xf32> -> tensor<4x3xf32>
  %b0 = pk.load %b : !pk.ref<3x5xf32> -> tensor<3x5xf32>
  %m = pk.matmul %a0, %b0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %c0 = pk.load %c : !pk.ref<5xf32> -> tensor<5xf32>
  %cb = pk.broadcast %c0 : tensor<5xf32> -> tensor<4x5xf32>
  %s = pk.add %m, %cb : tensor<4x5xf32>
  pk.store %s, %o : tensor<4x5xf32> -> !pk.ref<4x5xf32>
  pk.return
}

// -----

// Slices reach the GPU as whole buffers: loads and stores through views are
// folded into indices of the buffers (x[3, 4] reads element 22 of x).
// CHECK-LABEL: func.func @element
// CHECK-NOT: memref.subview
// CHECK: gpu.launch_func @element_kernel::@element_kernel {{.*}} args(%arg0 : memref<5x6xf32>, %arg1 : memref<2xf32>)
// CHECK: spirv.module @__spv__element_kernel
// CHECK-DAG: %[[C22:.*]] = spirv.Constant 22 : i32
// CHECK: spirv.AccessChain %{{.*}}[%{{.*}}, %[[C22]]]
pk.kernel @element(%x: !pk.ref<5x6xf32>, %o: !pk.ref<2xf32>) {
  %0 = pk.load %x : !pk.ref<5x6xf32> -> tensor<5x6xf32>
  %1 = pk.extract_slice %0 offsets [3, 4] sizes [1, 1] strides [1, 1] : tensor<5x6xf32> -> tensor<f32>
  %2 = pk.broadcast %1 : tensor<f32> -> tensor<2xf32>
  pk.store %2, %o : tensor<2xf32> -> !pk.ref<2xf32>
  pk.return
}
