// RUN: pk-opt %s --split-input-file --pk-merge-gpu-modules | FileCheck %s

// Three outlined kernels end up in the first gpu.module; a kernel whose name
// is taken there is renamed; launches follow them.
// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @first::@first
// CHECK: gpu.launch_func @first::@second
// CHECK: gpu.launch_func @first::@first_0
// CHECK: gpu.module @first {
// CHECK: gpu.func @first(%{{.*}}: memref<64xf32>) kernel
// CHECK: gpu.func @second(%{{.*}}: memref<8xf32>) kernel
// CHECK: gpu.func @first_0(%{{.*}}: memref<8xf32>) kernel
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @host(%a: memref<64xf32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @first::@first blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    gpu.launch_func @second::@second blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>)
    gpu.launch_func @third::@first blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%b : memref<8xf32>)
    return
  }
  gpu.module @first {
    gpu.func @first(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @second(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @third {
    gpu.func @first(%b: memref<8xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// One module is left as it is.
// CHECK-LABEL: func.func @one
// CHECK: gpu.launch_func @only::@only
// CHECK: gpu.module @only {
module attributes {gpu.container_module} {
  func.func @one(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @only::@only blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @only {
    gpu.func @only(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Names outlining took from any string become identifiers.
// CHECK-LABEL: func.func @"<lambda>"
// CHECK: gpu.launch_func @"<lambda>_kernel"::@_lambda__kernel
// CHECK: gpu.launch_func @"<lambda>_kernel"::@_lambda__kernel_0
// CHECK: gpu.module @"<lambda>_kernel" {
// CHECK-DAG: gpu.func @_lambda__kernel(
// CHECK-DAG: gpu.func @_lambda__kernel_0(
module attributes {gpu.container_module} {
  func.func @"<lambda>"(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @"<lambda>_kernel"::@"<lambda>_kernel" blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    gpu.launch_func @"<lambda>_kernel_0"::@"<lambda>_kernel" blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @"<lambda>_kernel" {
    gpu.func @"<lambda>_kernel"(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @"<lambda>_kernel_0" {
    gpu.func @"<lambda>_kernel"(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
}
