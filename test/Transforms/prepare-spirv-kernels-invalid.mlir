// RUN: pk-opt %s --pk-prepare-spirv-kernels=vulkan-version=0.9 --split-input-file --verify-diagnostics

// expected-error@+1 {{unsupported vulkan-version '0.9' (supported: 1.0, 1.1, 1.2, 1.3)}}
module attributes {gpu.container_module} {
  gpu.module @k {
  }
}

// -----

// Kernels spread over modules: pk-merge-gpu-modules gathers them first.
module attributes {gpu.container_module} {
  gpu.module @k {
  }
  // expected-error@+1 {{expected one gpu.module of kernels (run pk-merge-gpu-modules first)}}
  gpu.module @l {
  }
}
