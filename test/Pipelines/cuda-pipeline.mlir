// The CUDA pipeline: the GPU kernels of a pk kernel in one gpu.module of NVVM
// (stage 'nvvm'), then serialized to PTX in a gpu.binary; a host function
// launches them.
// RUN: pk-opt %s --pk-to-linalg-pipeline --pk-fusion-pipeline --pk-bufferization-pipeline --pk-to-nvvm-pipeline --split-input-file | FileCheck %s --check-prefix=NVVM
// RUN: pk-opt %s --pk-cuda-pipeline --split-input-file | FileCheck %s --check-prefix=PTX
// RUN: pk-opt %s --pk-cuda-pipeline="chip=sm_90 ptx-version=80 block-size=256" --split-input-file | FileCheck %s --check-prefix=SM90

// NVVM-LABEL: func.func @fma
// NVVM: gpu.launch_func @fma_kernel::@fma_kernel blocks in (%c8, %c1, %c1) threads in (%c128, %c1, %c1) args(%arg0 : memref<1000xf32>, %arg1 : memref<1000xf32>, %arg2 : memref<1000xf32>, %arg3 : memref<1000xf32>)
// NVVM: gpu.module @fma_kernel [#nvvm.target<O = 3, chip = "sm_80">]
// NVVM: llvm.func @fma_kernel(
// NVVM-SAME: gpu.kernel
// NVVM: nvvm.read.ptx.sreg.ctaid.x
// NVVM: nvvm.read.ptx.sreg.tid.x
// NVVM: llvm.fmul
// NVVM: llvm.fadd
// PTX-LABEL: func.func @fma
// PTX: gpu.binary @fma_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.visible .entry fma_kernel({{.*}}.maxntid 128, 1, 1{{.*}}mul.rn.f32{{.*}}add.rn.f32
// SM90: .version 8.0\0A.target sm_90{{.*}}.maxntid 256, 1, 1
pk.kernel @fma(%a: !pk.ref<1000xf32>, %b: !pk.ref<1000xf32>, %c: !pk.ref<1000xf32>, %o: !pk.ref<1000xf32>) {
  %0 = pk.load %a : !pk.ref<1000xf32> -> tensor<1000xf32>
  %1 = pk.load %b : !pk.ref<1000xf32> -> tensor<1000xf32>
  %2 = pk.mul %0, %1 : tensor<1000xf32>
  %3 = pk.load %c : !pk.ref<1000xf32> -> tensor<1000xf32>
  %4 = pk.add %2, %3 : tensor<1000xf32>
  pk.store %4, %o : tensor<1000xf32> -> !pk.ref<1000xf32>
  pk.return
}

// -----

// Dynamic sizes: buffers as memref descriptors, a size as an argument.
// NVVM-LABEL: func.func @scale
// NVVM: gpu.launch_func @scale_kernel::@scale_kernel
// NVVM: llvm.func @scale_kernel(%{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64,
// PTX-LABEL: func.func @scale
// PTX: gpu.binary @scale_kernel
pk.kernel @scale(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %0 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.add %0, %0 : tensor<?xf32>
  pk.store %1, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}
