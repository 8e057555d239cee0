// REQUIRES: ptxas, libdevice
// pk-translate emits PTX that the CUDA toolkit's ptxas accepts, for Ampere
// (the default, sm_80) and Hopper (sm_90, PTX 8.0).
// RUN: split-file %s %t
// RUN: pk-translate --pk-to-ptx %t/fma.mlir -o %t/fma.ptx
// RUN: %ptxas -arch=sm_80 %t/fma.ptx -o %t/fma.cubin
// RUN: FileCheck %s --check-prefix=FMA < %t/fma.ptx
// RUN: pk-translate --pk-to-ptx --sm=90 --ptx-version=80 %t/fma.mlir -o %t/fma90.ptx
// RUN: %ptxas -arch=sm_90 %t/fma90.ptx -o %t/fma90.cubin
// RUN: FileCheck %s --check-prefix=SM90 < %t/fma90.ptx
// RUN: pk-translate --pk-to-ptx %t/mixed.mlir -o %t/mixed.ptx
// RUN: %ptxas -arch=sm_80 %t/mixed.ptx -o %t/mixed.cubin
// RUN: %ptxas -arch=sm_90 %t/mixed.ptx -o %t/mixed90.cubin
// RUN: FileCheck %s --check-prefix=MIXED < %t/mixed.ptx
// RUN: not pk-translate --pk-to-ptx %t/copy.mlir -o %t/copy.ptx 2>&1 | FileCheck %s --check-prefix=COPY
// RUN: not pk-translate --pk-to-ptx %t/empty.mlir -o %t/empty.ptx 2>&1 | FileCheck %s --check-prefix=EMPTY
// Options LLVM would abort on are errors.
// RUN: not pk-translate --pk-to-ptx --sm=90 --ptx-version=70 %t/fma.mlir 2>&1 | FileCheck %s --check-prefix=OLD-PTX

// FMA: .version 7.0
// FMA: .target sm_80
// FMA: .visible .entry fma_kernel(
// Rounded as NumPy computes: no contraction into fma.
// FMA: mul.rn.f32
// FMA: add.rn.f32
// SM90: .version 8.0
// SM90: .target sm_90

// Every launch an entry of one module: a reduction per row in shared memory,
// math from libdevice linked in, float64 and float16 (computed in float32).
// MIXED-NOT: .extern
// MIXED: .visible .entry
// MIXED: .shared
// MIXED: .visible .entry
// MIXED-NOT: .version

// COPY: error: the kernel has no loop nest to run on the GPU (it only copies arrays)
// EMPTY: error: no pk.kernel to compile
// OLD-PTX: error: PTX 7.0 is older than sm_90 allows (7.8 and later)

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
pk.kernel @mixed(%x: !pk.ref<16x300xf64>, %h: !pk.ref<300xf16>, %o: !pk.ref<16x300xf64>, %p: !pk.ref<300xf16>) {
  %0 = pk.load %x : !pk.ref<16x300xf64> -> tensor<16x300xf64>
  %1 = pk.reduce_max %0 axes = [1] keep_dims : tensor<16x300xf64> -> tensor<16x1xf64>
  %2 = pk.broadcast %1 : tensor<16x1xf64> -> tensor<16x300xf64>
  %3 = pk.sub %0, %2 : tensor<16x300xf64>
  %4 = pk.exp %3 : tensor<16x300xf64>
  pk.store %4, %o : tensor<16x300xf64> -> !pk.ref<16x300xf64>
  %5 = pk.load %h : !pk.ref<300xf16> -> tensor<300xf16>
  %6 = pk.tanh %5 : tensor<300xf16>
  pk.store %6, %p : tensor<300xf16> -> !pk.ref<300xf16>
  pk.return
}

//--- copy.mlir
pk.kernel @copy(%a: !pk.ref<8xf32>, %o: !pk.ref<8xf32>) {
  %0 = pk.load %a : !pk.ref<8xf32> -> tensor<8xf32>
  pk.store %0, %o : tensor<8xf32> -> !pk.ref<8xf32>
  pk.return
}

//--- empty.mlir
module {
}
