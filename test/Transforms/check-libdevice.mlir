// RUN: mkdir -p %t/empty-toolkit
// RUN: pk-opt %s --split-input-file --pk-check-libdevice="toolkit=%t/empty-toolkit" --verify-diagnostics

// A call into libdevice needs its bitcode in the toolkit.
gpu.module @math {
  llvm.func @__nv_expf(f32) -> f32
  llvm.func @k(%x: f32) -> f32 {
    // expected-error@+1 {{the kernel calls __nv_expf, a math function of CUDA's libdevice, which was not found at}}
    %0 = llvm.call @__nv_expf(%x) : (f32) -> f32
    llvm.return %0 : f32
  }
}

// -----

// Kernels without math need no toolkit.
gpu.module @arithmetic {
  llvm.func @k(%x: f32) -> f32 {
    %0 = llvm.fadd %x, %x : f32
    llvm.return %0 : f32
  }
}
