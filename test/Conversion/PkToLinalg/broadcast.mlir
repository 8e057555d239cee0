// pk.broadcast becomes a generic whose input map aligns trailing dimensions
// and reads index 0 along stretched ones.
// RUN: pk-opt %s --convert-pk-to-linalg | FileCheck %s

// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1, d2) -> (0, d1, 0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcasts
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ID]]], {{.*}} ins(%{{.*}} : tensor<1x3x1xf32>)
pk.kernel @broadcasts(%row: !pk.ref<4xf32>, %col: !pk.ref<1x3x1xf32>, %o: !pk.ref<2x3x4xf32>) {
  %0 = pk.load %row : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.broadcast %0 : tensor<4xf32> -> tensor<2x3x4xf32>
  %2 = pk.load %col : !pk.ref<1x3x1xf32> -> tensor<1x3x1xf32>
  %3 = pk.broadcast %2 : tensor<1x3x1xf32> -> tensor<2x3x4xf32>
  %4 = pk.add %1, %3 : tensor<2x3x4xf32>
  pk.store %4, %o : tensor<2x3x4xf32> -> !pk.ref<2x3x4xf32>
  pk.return
}
