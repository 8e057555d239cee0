// RUN: pk-opt %s --pk-prepare-spirv-kernels=vulkan-version=0.9 --verify-diagnostics

// expected-error@+1 {{unsupported vulkan-version '0.9' (supported: 1.0, 1.1, 1.2, 1.3)}}
module attributes {gpu.container_module} {
  gpu.module @k {
  }
}
