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

// -----

// expected-error@+1 {{unsupported target feature '+sm_90' (only +ptx<version>; the architecture is the chip)}}
gpu.module @other_features [#nvvm.target<chip = "sm_80", features = "+sm_90,+ptx70">] {
}

// -----

// expected-error@+1 {{NVIDIA GPUs are compiled for as nvptx64-nvidia-cuda (CUDA has no 32-bit PTX any more), not nvptx-nvidia-cuda}}
gpu.module @thirty_two_bits [#nvvm.target<triple = "nvptx-nvidia-cuda", chip = "sm_80">] {
}

// -----

// expected-error@+1 {{not an NVIDIA target: #rocdl.target}}
gpu.module @amd [#rocdl.target<chip = "gfx90a">] {
}

// -----

// 25 buffers of rank 6 (15 parameters each): 3000 bytes fit PTX 7.0's 4352;
// 37 do not, but fit PTX 8.1's 32764.
gpu.module @many [#nvvm.target<chip = "sm_80">] {
  // expected-error@+1 {{the kernel takes 4440 bytes of parameters (its arrays' pointers, sizes and strides), more than PTX 7.0 allows (4352): fewer arrays, or PTX 8.1 or later (ptx-version=81, for CUDA 12.1 drivers and later)}}
  gpu.func @k(%a0: memref<1x1x1x1x1x1xf32>, %a1: memref<1x1x1x1x1x1xf32>, %a2: memref<1x1x1x1x1x1xf32>, %a3: memref<1x1x1x1x1x1xf32>, %a4: memref<1x1x1x1x1x1xf32>, %a5: memref<1x1x1x1x1x1xf32>, %a6: memref<1x1x1x1x1x1xf32>, %a7: memref<1x1x1x1x1x1xf32>, %a8: memref<1x1x1x1x1x1xf32>, %a9: memref<1x1x1x1x1x1xf32>, %a10: memref<1x1x1x1x1x1xf32>, %a11: memref<1x1x1x1x1x1xf32>, %a12: memref<1x1x1x1x1x1xf32>, %a13: memref<1x1x1x1x1x1xf32>, %a14: memref<1x1x1x1x1x1xf32>, %a15: memref<1x1x1x1x1x1xf32>, %a16: memref<1x1x1x1x1x1xf32>, %a17: memref<1x1x1x1x1x1xf32>, %a18: memref<1x1x1x1x1x1xf32>, %a19: memref<1x1x1x1x1x1xf32>, %a20: memref<1x1x1x1x1x1xf32>, %a21: memref<1x1x1x1x1x1xf32>, %a22: memref<1x1x1x1x1x1xf32>, %a23: memref<1x1x1x1x1x1xf32>, %a24: memref<1x1x1x1x1x1xf32>, %a25: memref<1x1x1x1x1x1xf32>, %a26: memref<1x1x1x1x1x1xf32>, %a27: memref<1x1x1x1x1x1xf32>, %a28: memref<1x1x1x1x1x1xf32>, %a29: memref<1x1x1x1x1x1xf32>, %a30: memref<1x1x1x1x1x1xf32>, %a31: memref<1x1x1x1x1x1xf32>, %a32: memref<1x1x1x1x1x1xf32>, %a33: memref<1x1x1x1x1x1xf32>, %a34: memref<1x1x1x1x1x1xf32>, %a35: memref<1x1x1x1x1x1xf32>, %a36: memref<1x1x1x1x1x1xf32>) kernel {
    gpu.return
  }
}
