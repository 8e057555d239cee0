// Generics get their parallel loops first and their reductions last (one
// GPU thread per result element): a.max(axis=0) of a 3x4 array, and
// a.max(axis=-2) of a rank-3 one.
// RUN: pk-opt %s --pk-parallel-loops-outermost | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[IN3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[OUT3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @leading_axis
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @leading_axis(%a: memref<3x4xf32>, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<3x4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  }
  return
}

// CHECK-LABEL: func.func @middle_axis
// CHECK: linalg.generic {indexing_maps = [#[[IN3]], #[[OUT3]]], iterator_types = ["parallel", "parallel", "reduction"]}
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @middle_axis(%a: memref<2x3x4xf32>, %o: memref<2x4xf32>) {
  linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a : memref<2x3x4xf32>) outs(%o : memref<2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  }
  return
}

// Already in order: untouched.
// CHECK-LABEL: func.func @rows
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}} : memref<3x4xf32>)
func.func @rows(%a: memref<3x4xf32>, %o: memref<3xf32>) {
  linalg.generic {indexing_maps = [#in, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<3x4xf32>) outs(%o : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  }
  return
}
