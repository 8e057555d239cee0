// Upstream's elementwise fusion, except where the fused body would exceed
// max-body-ops operations: here 2 fit (mulf, addf) and 3 do not.
// RUN: pk-opt %s --pk-fuse-elementwise | FileCheck %s --check-prefix=FUSED
// RUN: pk-opt %s --pk-fuse-elementwise=max-body-ops=2 | FileCheck %s --check-prefix=BOUNDED

#id = affine_map<(d0) -> (d0)>
// FUSED-LABEL: func.func @chain
// FUSED: linalg.generic
// FUSED: arith.mulf
// FUSED-NEXT: arith.addf
// FUSED-NEXT: arith.subf
// FUSED-NOT: linalg.generic
// BOUNDED-LABEL: func.func @chain
// BOUNDED: linalg.generic
// BOUNDED: arith.mulf
// BOUNDED-NEXT: arith.addf
// BOUNDED-NEXT: linalg.yield
// BOUNDED: linalg.generic
// BOUNDED: arith.subf
// BOUNDED-NEXT: linalg.yield
func.func @chain(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%0, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%1, %a : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %d = arith.subf %x, %y : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  return %2 : tensor<8xf32>
}
