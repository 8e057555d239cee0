// RUN: pk-opt %s --convert-parallel-loops-to-openmp --split-input-file | FileCheck %s

// A 1-D parallel loop: each thread of the region runs iterations
// [t c, min((t + 1) c, n)) of n = ceil((ub - lb) / step), c = ceil(n / T),
// as an scf.for from lb + first * step, each iteration in an alloca scope.
// CHECK-LABEL: func.func @chunks
// CHECK-SAME: (%[[LB:.*]]: index, %[[UB:.*]]: index, %[[STEP:.*]]: index, %[[M:.*]]: memref<?xf32>)
// CHECK: %[[SPAN:.*]] = arith.subi %[[UB]], %[[LB]]
// CHECK: %[[N0:.*]] = arith.ceildivsi %[[SPAN]], %[[STEP]]
// CHECK: %[[N:.*]] = arith.maxsi %[[N0]], %{{.*}}
// CHECK: omp.parallel {
// CHECK: %[[T32:.*]] = func.call @omp_get_thread_num() : () -> i32
// CHECK: %[[T:.*]] = arith.index_cast %[[T32]] : i32 to index
// CHECK: %[[TS32:.*]] = func.call @omp_get_num_threads() : () -> i32
// CHECK: %[[TS:.*]] = arith.index_cast %[[TS32]] : i32 to index
// CHECK: %[[C:.*]] = arith.ceildivsi %[[N]], %[[TS]]
// CHECK: %[[TC:.*]] = arith.muli %[[T]], %[[C]]
// CHECK: %[[FIRST:.*]] = arith.minsi %[[TC]], %[[N]]
// CHECK: %[[END:.*]] = arith.addi %[[FIRST]], %[[C]]
// CHECK: %[[LAST:.*]] = arith.minsi %[[END]], %[[N]]
// CHECK: %[[F:.*]] = arith.muli %[[FIRST]], %[[STEP]]
// CHECK: %[[FROM:.*]] = arith.addi %[[LB]], %[[F]]
// CHECK: %[[L:.*]] = arith.muli %[[LAST]], %[[STEP]]
// CHECK: %[[TO:.*]] = arith.addi %[[LB]], %[[L]]
// CHECK: scf.for %[[I:.*]] = %[[FROM]] to %[[TO]] step %[[STEP]] {
// CHECK: memref.alloca_scope {
// CHECK: memref.store %{{.*}}, %[[M]][%[[I]]]
// CHECK-NOT: scf.reduce
// CHECK: omp.terminator
// CHECK: func.func private @omp_get_thread_num() -> i32
// CHECK: func.func private @omp_get_num_threads() -> i32
func.func @chunks(%lb: index, %ub: index, %step: index, %m: memref<?xf32>) {
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%lb) to (%ub) step (%step) {
    memref.store %one, %m[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A loop nested in a parallel one runs on its thread: an scf.for. The
// runtime functions are declared once.
// CHECK-LABEL: func.func @nested
// CHECK: omp.parallel {
// CHECK: scf.for
// CHECK-NOT: omp.parallel
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK: memref.store
// CHECK-NOT: scf.parallel
// CHECK-COUNT-1: func.func private @omp_get_thread_num
func.func @nested(%m: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      memref.store %one, %m[%i, %j] : memref<16x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// Multi-dimensional loops and loops with reductions are left to upstream's
// convert-scf-to-openmp.
// CHECK-LABEL: func.func @left
// CHECK-NOT: omp.parallel
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK: scf.parallel (%{{.*}}) = {{.*}} init
func.func @left(%m: memref<4x4xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    memref.store %zero, %m[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %x = memref.load %m[%i, %i] : memref<4x4xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
