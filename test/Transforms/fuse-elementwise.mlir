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

// Named products keep the reshapes of their operands and results: folded
// into them, the batch_matmul would become a generic contraction (with two
// row dimensions) that pk-pack-matmul does not pack.
// FUSED-LABEL: func.func @product_reshapes
// FUSED: %[[A:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2], [3]]
// FUSED: %[[P:.*]] = linalg.batch_matmul ins(%[[A]], %arg1 : tensor<3x2x8xf32>, tensor<3x8x5xf32>)
// FUSED: tensor.expand_shape %[[P]] {{\[\[}}0], [1, 2], [3]]
func.func @product_reshapes(%a: tensor<3x2x1x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<3x2x1x5xf32> {
  %zero = arith.constant 0.0 : f32
  %am = tensor.collapse_shape %a [[0], [1, 2], [3]] : tensor<3x2x1x8xf32> into tensor<3x2x8xf32>
  %e = tensor.empty() : tensor<3x2x5xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2x5xf32>) -> tensor<3x2x5xf32>
  %p = linalg.batch_matmul ins(%am, %b : tensor<3x2x8xf32>, tensor<3x8x5xf32>) outs(%c : tensor<3x2x5xf32>) -> tensor<3x2x5xf32>
  %r = tensor.expand_shape %p [[0], [1, 2], [3]] output_shape [3, 2, 1, 5] : tensor<3x2x5xf32> into tensor<3x2x1x5xf32>
  return %r : tensor<3x2x1x5xf32>
}
