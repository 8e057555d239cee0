// RUN: pk-opt %s --split-input-file --pk-check-nvvm-target --verify-diagnostics | FileCheck %s

// What NVIDIA GPUs allow passes untouched.
// CHECK-LABEL: gpu.module @fine
module attributes {gpu.container_module} {
  func.func @host(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c1024 = arith.constant 1024 : index
    %c65535 = arith.constant 65535 : index
    gpu.launch_func @fine::@k blocks in (%c65535, %c65535, %c65535) threads in (%c1024, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @fine [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @k(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// expected-error@+1 {{PTX 6.0 is older than sm_80 allows (7.0 and later)}}
gpu.module @old_ptx [#nvvm.target<chip = "sm_80", features = "+ptx60">] {
}

// -----

// expected-error@+1 {{unknown PTX version 7.9 (ptx-version 79; LLVM knows}}
gpu.module @unknown_ptx [#nvvm.target<chip = "sm_80", features = "+ptx79">] {
}

// -----

// expected-error@+1 {{unsupported NVIDIA architecture 'sm_999' (sm_70 and later that LLVM knows, such as sm_80 or sm_90)}}
gpu.module @unknown_chip [#nvvm.target<chip = "sm_999">] {
}

// -----

// expected-error@+1 {{unsupported NVIDIA architecture 'sm_60'}}
gpu.module @old_chip [#nvvm.target<chip = "sm_60">] {
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c2048 = arith.constant 2048 : index
    // expected-error@+1 {{a block of 2048 threads in x: NVIDIA GPUs allow 1024}}
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c2048, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    // expected-error@+1 {{a block of 4096 threads: NVIDIA GPUs allow 1024}}
    gpu.launch_func @m::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c64, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%a: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c70000 = arith.constant 70000 : index
    // expected-error@+1 {{a grid of 70000 blocks in y: NVIDIA GPUs allow 65535}}
    gpu.launch_func @m::@k blocks in (%c1, %c70000, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    return
  }
  gpu.module @m {
    gpu.func @k(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
}
