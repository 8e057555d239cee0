// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-tile-parallel-loops-for-gpu{workgroup-size=64}))' --split-input-file --verify-diagnostics | FileCheck %s

// A 1-D loop: workgroups of 64 threads along x (the canonicalizer merges
// the two tile loops into one with a block and a thread dimension).
// CHECK-LABEL: func.func @one_dim
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c1024, %c64) step (%c64, %c1)
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
func.func @one_dim(%a: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %x = memref.load %a[%i] : memref<1024xf32>
    memref.store %x, %a[%i] : memref<1024xf32>
  }
  return
}

// -----

// 2-D, not a multiple of 64: rows on block y, column tiles on block x, a
// bounded thread loop (the GPU conversion guards the last tile).
// CHECK-LABEL: func.func @two_dims
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c10, %c100) step (%c1, %c64)
// CHECK: affine.min
// CHECK: scf.parallel (%{{.*}}) =
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x
func.func @two_dims(%a: memref<10x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c100 = arith.constant 100 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c10, %c100) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<10x100xf32>
    memref.store %x, %a[%i, %j] : memref<10x100xf32>
  }
  return
}

// -----

// Fewer elements than a workgroup: one workgroup of that many threads.
// CHECK-LABEL: func.func @small
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1)
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_x
func.func @small(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// One iteration (a reduction to a 0-d array): kept, not folded into the
// host function, and run as a single thread.
// CHECK-LABEL: func.func @single_thread
// CHECK: scf.parallel (%[[I:.*]]) = (%c0) to (%c1) step (%c1)
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<1xf32>
// CHECK: {mapping = [#gpu.loop_dim_map<processor = thread_x
func.func @single_thread(%x: memref<16xf32>, %s: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%j] : memref<16xf32>
      %acc = memref.load %s[%i] : memref<1xf32>
      %sum = arith.addf %acc, %v : f32
      memref.store %sum, %s[%i] : memref<1xf32>
    }
  }
  return
}

// -----

// More than three dimensions: the leading ones are linearized into one
// (2 * 2 = 4 iterations), then tiled as three.
// CHECK-LABEL: func.func @four_dims
// CHECK: scf.parallel (%[[IJ:.*]], %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c4, %c2, %c2)
// CHECK-DAG: arith.remsi %[[IJ]], %c2
// CHECK-DAG: arith.divsi %[[IJ]], %c2
// CHECK: mapping = [#gpu.loop_dim_map<processor = block_y
func.func @four_dims(%a: memref<2x2x2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c2, %c2, %c2, %c2) step (%c1, %c1, %c1, %c1) {
    %x = memref.load %a[%i, %j, %k, %l] : memref<2x2x2x2xf32>
    memref.store %x, %a[%i, %j, %k, %l] : memref<2x2x2x2xf32>
  }
  return
}

// -----

// A trailing unit dimension: the threads run along the last dimension with
// more than one index (tiling the unit one made a single workgroup of
// 65536 threads).
// CHECK-LABEL: func.func @trailing_unit
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c65536, %c64) step (%c64, %c1)
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_x
func.func @trailing_unit(%a: memref<65536x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c65536 = arith.constant 65536 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c65536, %c1) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<65536x1xf32>
    memref.store %x, %a[%i, %j] : memref<65536x1xf32>
  }
  return
}

// -----

// Dynamic sizes: rows on block y, columns in tiles of 64 threads whose
// bounds are constants under a guard (no loop of min(1, n - i) iterations
// left in a thread); the grid is the host's to compute.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %c0
// CHECK: %[[M:.*]] = memref.dim %{{.*}}, %c1
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]], %[[T:.*]]) = (%c0, %c0, %c0) to (%[[N]], %[[M]], %c64) step (%c1, %c64, %c1)
// CHECK-NOT: affine.min
// CHECK: %[[COL:.*]] = arith.addi %[[T]], %[[J]]
// CHECK: scf.if
// CHECK: memref.load %{{.*}}[%[[I]], %[[COL]]]
// CHECK: {mapping = [#gpu.loop_dim_map<processor = block_y, {{.*}}>, #gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = thread_x
func.func @dynamic(%a: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<?x?xf32>
    memref.store %x, %a[%i, %j] : memref<?x?xf32>
  }
  return
}

// -----

// A tiled loop nest the first folding erases (it only writes a buffer that
// nothing reads) is not canonicalized again afterwards: that was a double
// free. The single-thread loops stay, untiled.
// CHECK-LABEL: func.func @dead_tiled_loop
// CHECK-NOT: memref<1x3xi32>
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK-NOT: pk.single_thread
func.func @dead_tiled_loop(%arg0: memref<1x7xi32>, %arg1: memref<1xi64>) {
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c1_i64 = arith.constant 1 : i64
  %c0_i64 = arith.constant 0 : i64
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x3xi32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c3) step (%c1, %c1) {
    %0 = affine.apply affine_map<(d0) -> (-d0 + 6)>(%j)
    %1 = memref.load %arg0[%i, %0] : memref<1x7xi32>
    memref.store %1, %alloc[%i, %j] : memref<1x3xi32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %c0_i64, %arg1[%i] : memref<1xi64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    scf.for %k = %c0 to %c3 step %c1 {
      %0 = memref.load %arg1[%i] : memref<1xi64>
      %1 = arith.addi %0, %c1_i64 : i64
      memref.store %1, %arg1[%i] : memref<1xi64>
    }
    scf.reduce
  }
  memref.dealloc %alloc : memref<1x3xi32>
  return
}
