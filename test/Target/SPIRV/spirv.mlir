// pk-translate emits SPIR-V binaries that spirv-val accepts for Vulkan.
// RUN: split-file %s %t
// RUN: pk-translate --pk-to-spirv %t/fma.mlir -o %t/fma.spv
// RUN: spirv-val --target-env vulkan1.1 %t/fma.spv
// RUN: spirv-dis %t/fma.spv | FileCheck %s --check-prefix=FMA
// RUN: pk-translate --pk-to-spirv %t/mixed.mlir -o %t/mixed.spv
// RUN: spirv-val --target-env vulkan1.1 %t/mixed.spv
// RUN: spirv-dis %t/mixed.spv | FileCheck %s --check-prefix=MIXED
// RUN: pk-translate --pk-to-spirv --pk-vulkan-version=1.3 %t/fma.mlir -o %t/fma13.spv
// RUN: spirv-val --target-env vulkan1.3 %t/fma13.spv
// RUN: not pk-translate --pk-to-spirv %t/copy.mlir -o %t/copy.spv 2>&1 | FileCheck %s --check-prefix=COPY
// RUN: pk-translate --pk-to-spirv %t/dynamic.mlir -o %t/dynamic.spv
// RUN: spirv-val --target-env vulkan1.1 %t/dynamic.spv
// RUN: spirv-dis %t/dynamic.spv | FileCheck %s --check-prefix=DYNAMIC

// FMA: OpEntryPoint GLCompute %{{.*}} "fma_kernel"
// FMA: OpExecutionMode %{{.*}} LocalSize 64 1 1
// FMA: OpDecorate %{{.*}} Binding 3
// FMA: OpFMul
// FMA: OpFAdd

// MIXED-DAG: OpCapability Float64
// MIXED-DAG: OpCapability Int16
// MIXED: OpEntryPoint GLCompute
// MIXED: OpConvertSToF
// COPY: error: the kernel has no loop nest to run on the GPU
// Dynamic sizes: runtime arrays, and the size as a buffer of one int.
// DYNAMIC: OpEntryPoint GLCompute %double_kernel "double_kernel"
// DYNAMIC-DAG: OpTypeRuntimeArray %float
// DYNAMIC-DAG: OpTypeStruct %uint

//--- fma.mlir
pk.kernel @fma(%a: !pk.ref<1000xf32>, %b: !pk.ref<1000xf32>, %c: !pk.ref<1000xf32>, %o: !pk.ref<1000xf32>) {
  %0 = pk.load %a : !pk.ref<1000xf32> -> tensor<1000xf32>
  %1 = pk.load %b : !pk.ref<1000xf32> -> tensor<1000xf32>
  %2 = pk.mul %0, %1 : tensor<1000xf32>
  %3 = pk.load %c : !pk.ref<1000xf32> -> tensor<1000xf32>
  %4 = pk.add %2, %3 : tensor<1000xf32>
  pk.store %4, %o : tensor<1000xf32> -> !pk.ref<1000xf32>
  pk.return
}

//--- mixed.mlir
pk.kernel @mixed(%x: !pk.ref<3x7xi16>, %row: !pk.ref<7xf64>, %o: !pk.ref<3x7xf64>) {
  %0 = pk.load %x : !pk.ref<3x7xi16> -> tensor<3x7xi16>
  %1 = pk.cast %0 : tensor<3x7xi16> -> tensor<3x7xf64>
  %2 = pk.load %row : !pk.ref<7xf64> -> tensor<7xf64>
  %3 = pk.broadcast %2 : tensor<7xf64> -> tensor<3x7xf64>
  %4 = pk.div %1, %3 : tensor<3x7xf64>
  pk.store %4, %o : tensor<3x7xf64> -> !pk.ref<3x7xf64>
  pk.return
}

//--- copy.mlir
pk.kernel @copy(%x: !pk.ref<f32>, %o: !pk.ref<f32>) {
  %0 = pk.load %x : !pk.ref<f32> -> tensor<f32>
  pk.store %0, %o : tensor<f32> -> !pk.ref<f32>
  pk.return
}

//--- dynamic.mlir
pk.kernel @double(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %0 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.add %0, %0 : tensor<?xf32>
  pk.store %1, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}
