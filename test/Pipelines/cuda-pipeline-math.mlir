// REQUIRES: libdevice
// The CUDA pipeline's math: calls to CUDA's libdevice, linked in from the
// toolkit when the kernels are serialized.
// RUN: pk-opt %s --pk-to-linalg-pipeline --pk-fusion-pipeline --pk-bufferization-pipeline --pk-to-nvvm-pipeline | FileCheck %s --check-prefix=NVVM
// RUN: pk-opt %s --pk-cuda-pipeline | FileCheck %s --check-prefix=PTX

// Two launches (the tiled matmul, its tiles in shared memory, then the bias)
// in one module; math as libdevice calls, linked in when serialized.
// NVVM-LABEL: func.func @matmul_bias_exp
// NVVM: gpu.launch_func @matmul_bias_exp_kernel::@matmul_bias_exp_kernel
// NVVM: gpu.launch_func @matmul_bias_exp_kernel::@matmul_bias_exp_kernel_0
// NVVM: gpu.module @matmul_bias_exp_kernel
// NVVM: llvm.mlir.global internal @__wg_matmul_bias_exp_kernel_0() {addr_space = 3 : i32
// NVVM: llvm.func @matmul_bias_exp_kernel(
// NVVM: nvvm.barrier0
// NVVM: llvm.call @__nv_expf
// NVVM-NOT: gpu.module
// PTX-LABEL: func.func @matmul_bias_exp
// PTX: gpu.binary @matmul_bias_exp_kernel
// PTX-SAME: .shared .align
// PTX-NOT: malloc
// PTX-NOT: .extern
// PTX-SAME: ">]
pk.kernel @matmul_bias_exp(%a: !pk.ref<4x3xf32>, %b: !pk.ref<3x5xf32>, %c: !pk.ref<5xf32>, %o: !pk.ref<4x5xf32>) {
  %a0 = pk.load %a : !pk.ref<4x3xf32> -> tensor<4x3xf32>
  %b0 = pk.load %b : !pk.ref<3x5xf32> -> tensor<3x5xf32>
  %m = pk.matmul %a0, %b0 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %c0 = pk.load %c : !pk.ref<5xf32> -> tensor<5xf32>
  %cb = pk.broadcast %c0 : tensor<5xf32> -> tensor<4x5xf32>
  %s = pk.add %m, %cb : tensor<4x5xf32>
  %e = pk.exp %s : tensor<4x5xf32>
  pk.store %e, %o : tensor<4x5xf32> -> !pk.ref<4x5xf32>
  pk.return
}

