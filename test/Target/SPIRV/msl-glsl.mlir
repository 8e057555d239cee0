// REQUIRES: spirv-cross
// Metal Shading Language for Apple GPUs and GLSL, through SPIRV-Cross.
// RUN: pk-translate --pk-to-msl %s | FileCheck %s --check-prefix=MSL
// RUN: pk-translate --pk-to-glsl %s | FileCheck %s --check-prefix=GLSL

// MSL: #include <metal_stdlib>
// MSL: kernel void fma_kernel(device {{.*}}& fma_kernel_arg_0 {{\[\[}}buffer(0){{\]\]}}, device {{.*}}& fma_kernel_arg_1 {{\[\[}}buffer(1){{\]\]}}, device {{.*}}& fma_kernel_arg_2 {{\[\[}}buffer(2){{\]\]}}, device {{.*}}& fma_kernel_arg_3 {{\[\[}}buffer(3){{\]\]}}
// Arithmetic is NoContraction (pk-ieee-floats-for-spirv), which
// SPIRV-Cross keeps: MSL helpers that round each operation, GLSL `precise`.
// MSL: fma_kernel_arg_3.{{.*}} = spvFAdd(spvFMul(fma_kernel_arg_0.{{.*}}, fma_kernel_arg_1.{{.*}}), fma_kernel_arg_2.{{.*}});

// GLSL: // kernel fma_kernel
// GLSL: #version 450
// GLSL: layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
// GLSL: layout(binding = 3, std430) buffer
// GLSL: void main()
// GLSL: precise float {{.*}} = {{.*}} * {{.*}};
pk.kernel @fma(%a: !pk.ref<256xf32>, %b: !pk.ref<256xf32>, %c: !pk.ref<256xf32>, %o: !pk.ref<256xf32>) {
  %0 = pk.load %a : !pk.ref<256xf32> -> tensor<256xf32>
  %1 = pk.load %b : !pk.ref<256xf32> -> tensor<256xf32>
  %2 = pk.mul %0, %1 : tensor<256xf32>
  %3 = pk.load %c : !pk.ref<256xf32> -> tensor<256xf32>
  %4 = pk.add %2, %3 : tensor<256xf32>
  pk.store %4, %o : tensor<256xf32> -> !pk.ref<256xf32>
  pk.return
}
