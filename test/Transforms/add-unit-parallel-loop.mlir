// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-add-unit-parallel-loop))' | FileCheck %s

// A reduction to a 0-d array and the fill of its accumulator get a leading
// parallel loop of one iteration, through a 1-element view of the output.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[UNIT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[INPUT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[OUTPUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @full_sum
// CHECK: %[[FILLED:.*]] = memref.expand_shape %{{.*}} [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #[[UNIT]]], iterator_types = ["parallel"]} ins(%{{.*}} : f32) outs(%[[FILLED]] : memref<1xf32>)
// CHECK: %[[SUMMED:.*]] = memref.expand_shape %{{.*}} [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[INPUT]], #[[OUTPUT]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: outs(%[[SUMMED]] : memref<1xf32>)
// CHECK: arith.addf
func.func @full_sum(%x: memref<4x8xf32>, %s: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sum = arith.addf %acc, %in : f32
    linalg.yield %sum : f32
  }
  return
}

// keepdims: the output keeps its unit dimensions, the new one is merged
// into the first; ops with a parallel loop are left alone.
// CHECK-LABEL: func.func @keepdims_and_parallel
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 1, 1] : memref<1x1xf32> into memref<1x1x1xf32>
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-NOT: memref.expand_shape
// CHECK: iterator_types = ["parallel", "parallel"]
func.func @keepdims_and_parallel(%x: memref<4x8xf32>, %k: memref<1x1xf32>, %o: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, 0)>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%k : memref<1x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %max = arith.maximumf %acc, %in : f32
    linalg.yield %max : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%o : memref<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
