// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-tile-matmul-for-gpu{tile-rows=16 tile-columns=16 thread-rows=8 thread-columns=8 tile-depth=8 shared-bytes=1024},canonicalize,cse))' --split-input-file | FileCheck %s
// RUN: not pk-opt %s --pass-pipeline='builtin.module(func.func(pk-tile-matmul-for-gpu{tile-rows=20 thread-rows=8}))' --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not pk-opt %s --pass-pipeline='builtin.module(func.func(pk-tile-matmul-for-gpu{tile-depth=0}))' --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: the tile sizes must be positive multiples of the thread counts

// Tiles that divide C: a grid of 4 x 8 workgroups of 8 x 8 threads, each
// thread 2 x 2 sums that start from the fill's zero (the fill is gone). Per
// step of 8 along K, A's 16 x 8 and B's 8 x 16 tiles are copied to
// workgroup memory (two elements per thread each, no bounds checks) between
// barriers, and the sums take the products in order along K.
// CHECK-LABEL: func.func @divides
// CHECK-NOT: linalg.
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c8, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c8, %{{.*}} = %c8, %{{.*}} = %c1)
// CHECK: %[[AT:.*]] = memref.alloc() : memref<16x8xf32, 3>
// CHECK: %[[BT:.*]] = memref.alloc() : memref<8x16xf32, 3>
// CHECK-NOT: scf.if
// CHECK: scf.for %[[K:.*]] = %c0 to %c32 step %c8 iter_args(%{{.*}} = %cst, %{{.*}} = %cst, %{{.*}} = %cst, %{{.*}} = %cst) -> (f32, f32, f32, f32)
// CHECK-COUNT-2: memref.store %{{.*}}, %[[AT]]
// CHECK-COUNT-2: memref.store %{{.*}}, %[[BT]]
// CHECK: gpu.barrier
// CHECK: scf.for %[[KK:.*]] = %c0 to %c8 step %c1
// CHECK-COUNT-2: memref.load %[[AT]][%{{.*}}, %[[KK]]]
// CHECK-COUNT-2: memref.load %[[BT]][%[[KK]], %{{.*}}]
// CHECK-COUNT-4: arith.mulf
// CHECK: gpu.barrier
// CHECK-NOT: scf.if
// CHECK-COUNT-4: memref.store %{{.*}}, %arg2
// CHECK: gpu.terminator
func.func @divides(%a: memref<128x32xf32>, %b: memref<32x64xf32>, %c: memref<128x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x64xf32>)
  linalg.matmul ins(%a, %b : memref<128x32xf32>, memref<32x64xf32>) outs(%c : memref<128x64xf32>)
  return
}

// -----

// Tiles that do not divide C (20 x 18) or K (11 = 8 + 3): C's old values
// are the starting sums, elements outside A, B and C load as zero and are
// not stored, and a last step of depth 3 takes the rest of K.
// CHECK-LABEL: func.func @ragged
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c2, %{{.*}} = %c1)
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: scf.if %[[IN]] -> (f32) {
// CHECK-NEXT: memref.load %arg2
// CHECK: memref.load %arg0{{.*}} : memref<20x11xf32>
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %cst : f32
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %c48 : index
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1
// CHECK: gpu.barrier
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: memref.store %{{.*}}, %arg2
func.func @ragged(%a: memref<20x11xf32>, %b: memref<11x18xf32>, %c: memref<20x18xf32>) {
  linalg.matmul ins(%a, %b : memref<20x11xf32>, memref<11x18xf32>) outs(%c : memref<20x18xf32>)
  return
}

// -----

// Batches on the grid's z; float64 tiles as deep as 1024 bytes hold (4).
// CHECK-LABEL: func.func @batch
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[Z:.*]]) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c3)
// CHECK: memref.alloc() : memref<16x4xf64, 3>
// CHECK: memref.alloc() : memref<4x16xf64, 3>
// CHECK: scf.for %[[K:.*]] = %c0 to %c8 step %c4
// CHECK: memref.load %arg0[%[[Z]], %{{.*}}, %{{.*}}] : memref<3x16x8xf64>
// CHECK: memref.store %{{.*}}, %arg2[%[[Z]], %{{.*}}, %{{.*}}] : memref<3x16x16xf64>
func.func @batch(%a: memref<3x16x8xf64>, %b: memref<3x8x16xf64>, %c: memref<3x16x16xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<3x16x16xf64>)
  linalg.batch_matmul ins(%a, %b : memref<3x16x8xf64>, memref<3x8x16xf64>) outs(%c : memref<3x16x16xf64>)
  return
}

// -----

// Any body and operand maps: float16 tiles of a transposed A (read as
// A[k, m]), products summed in float32 by the op's own body.
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @mixed
// CHECK: %[[AT:.*]] = memref.alloc() : memref<16x8xf16, 3>
// CHECK: %[[R:.*]] = arith.divui
// CHECK: %[[C:.*]] = arith.remui
// CHECK: %[[V:.*]] = memref.load %arg0[%[[C]], %[[R]]] : memref<8x16xf16>
// CHECK: memref.store %[[V]], %[[AT]][%[[R]], %[[C]]]
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
func.func @mixed(%a: memref<8x16xf16>, %b: memref<8x16xf16>, %c: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf16>, memref<8x16xf16>) outs(%c : memref<16x16xf32>) {
  ^bb0(%x: f16, %y: f16, %s: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %s, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// What keeps the generic path: matrix-vector products, bodies that read
// the loop indices, boolean operands. A fill that is not just before the
// product stays, and the sums start from C.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: gpu.launch
// CHECK: linalg.matvec
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul {{.*}} memref<8x8xi1>
// CHECK-NOT: gpu.launch
// CHECK: linalg.fill
// CHECK-NOT: gpu.launch
// CHECK: linalg.copy
// CHECK: gpu.launch
// CHECK: memref.load %arg3
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @kept(%a: memref<8x8xf32>, %x: memref<8xf32>, %y: memref<8xf32>, %c: memref<8x8xf32>, %p: memref<8x8xi1>, %q: memref<8x8xi1>) {
  linalg.matvec ins(%a, %x : memref<8x8xf32>, memref<8xf32>) outs(%y : memref<8xf32>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %s: f32):
    %k = linalg.index 2 : index
    %i = arith.index_cast %k : index to i32
    %f = arith.sitofp %i : i32 to f32
    %t = arith.mulf %u, %f : f32
    %r = arith.addf %s, %t : f32
    linalg.yield %r : f32
  }
  linalg.matmul ins(%p, %p : memref<8x8xi1>, memref<8x8xi1>) outs(%q : memref<8x8xi1>)
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<8x8xf32>)
  linalg.copy ins(%a : memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}
