// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-lower-linalg-to-loops{parallel-threshold=100}))' | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>

// Outer loops are never unrolled (the innermost is left to LLVM): a short
// outer loop would copy the vectorized inner one.
// CHECK-DAG: #[[DISABLE:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[NOUNROLL:.*]] = #llvm.loop_annotation<unroll = #[[DISABLE]]>
// An elementwise innermost loop of unknown length takes two vectors a step.
// CHECK-DAG: #[[TWICE:.*]] = #llvm.loop_interleave<count = 2 : i32>
// CHECK-DAG: #[[TWOVECTORS:.*]] = #llvm.loop_annotation<interleave = #[[TWICE]]>

// Below the threshold: scf.for only.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: linalg.generic
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: } {loop_annotation = #[[NOUNROLL]]}
func.func @small(%a: memref<4x4xf32>, %o: memref<4x4xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x4xf32>) outs(%o : memref<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  }
  return
}

// At or above it: the outermost loop is parallel, the inner one stays a for.
// CHECK-LABEL: func.func @large
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: scf.for %[[J:.*]] =
// CHECK: memref.load %arg0
// CHECK-NOT: linalg.generic
func.func @large(%a: memref<10x10xf32>, %o: memref<10x10xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<10x10xf32>) outs(%o : memref<10x10xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  }
  return
}

// A reduction as the outermost loop is never made parallel.
// CHECK-LABEL: func.func @reduction_outermost
// CHECK-NOT: scf.parallel
#red = affine_map<(d0, d1) -> (d1)>
func.func @reduction_outermost(%a: memref<100x10xf32>, %o: memref<10xf32>) {
  linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<100x10xf32>) outs(%o : memref<10xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  }
  return
}

// Inside a parallel loop already (a tile of rows from pk-fuse-rows): serial.
// CHECK-LABEL: func.func @inside_forall
// CHECK: scf.forall
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: linalg.generic
func.func @inside_forall(%a: memref<4x10x10xf32>, %o: memref<4x10x10xf32>) {
  scf.forall (%i) in (4) {
    %sa = memref.subview %a[%i, 0, 0] [1, 10, 10] [1, 1, 1] : memref<4x10x10xf32> to memref<10x10xf32, strided<[10, 1], offset: ?>>
    %so = memref.subview %o[%i, 0, 0] [1, 10, 10] [1, 1, 1] : memref<4x10x10xf32> to memref<10x10xf32, strided<[10, 1], offset: ?>>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%sa : memref<10x10xf32, strided<[10, 1], offset: ?>>) outs(%so : memref<10x10xf32, strided<[10, 1], offset: ?>>) {
    ^bb0(%x: f32, %y: f32):
      %0 = arith.mulf %x, %x : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// Dynamic sizes: the iteration count is known only when the kernel runs,
// which then takes the parallel nest from the threshold on, else the serial
// one.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<?x?xf32>
// CHECK-DAG: %[[N:.*]] = memref.dim %[[A]], %c0
// CHECK-DAG: %[[M:.*]] = memref.dim %[[A]], %c1
// CHECK: %[[NM:.*]] = arith.muli %{{.*}}, %[[M]] : index
// CHECK: %[[LARGE:.*]] = arith.cmpi sge, %[[NM]], %c100 : index
// CHECK: scf.if %[[LARGE]] {
// CHECK: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%[[N]])
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[M]]
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[N]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %[[M]]
// CHECK: } {loop_annotation = #[[TWOVECTORS]]}
// CHECK-NEXT: } {loop_annotation = #[[NOUNROLL]]}
// CHECK-NOT: linalg.generic
func.func @dynamic(%a: memref<?x?xf32>, %o: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x?xf32>) outs(%o : memref<?x?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  }
  return
}

// A reduction's innermost loop keeps LLVM's interleaving (partial sums
// hide the adds' latency).
// CHECK-LABEL: func.func @dynamic_reduction
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: #[[TWOVECTORS]]
// CHECK: return
#rows = affine_map<(d0, d1) -> (d0)>
func.func @dynamic_reduction(%a: memref<?x?xf32>, %o: memref<?xf32>) {
  linalg.generic {indexing_maps = [#map, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<?x?xf32>) outs(%o : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  }
  return
}
