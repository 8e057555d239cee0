// An elementwise generic stored into a ref it reads takes the ref's loaded
// tensor as its init; anything else keeps its empty init.
// RUN: pk-opt %s --pk-compute-in-place --split-input-file | FileCheck %s

#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (7 - d0)>

// CHECK-LABEL: func.func @update
// CHECK: %[[T:.*]] = bufferization.to_tensor %arg1 restrict writable
// CHECK: linalg.generic {{.*}} outs(%[[T]] : tensor<8xf32>)
func.func @update(%a: memref<8xf32>, %o: memref<8xf32>) {
  %ta = bufferization.to_tensor %a restrict : memref<8xf32> to tensor<8xf32>
  %to = bufferization.to_tensor %o restrict writable : memref<8xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%to, %ta : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  bufferization.materialize_in_destination %r in writable %o : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (7 - d0)>

// Reading other elements of the ref than it writes (a reversal): untouched.
// CHECK-LABEL: func.func @reversed
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<8xf32>)
func.func @reversed(%o: memref<8xf32>) {
  %to = bufferization.to_tensor %o restrict writable : memref<8xf32> to tensor<8xf32>
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel"]}
      ins(%to : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<8xf32>
  bufferization.materialize_in_destination %r in writable %o : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// Reading the ref through a view (a slice of it): untouched.
// CHECK-LABEL: func.func @through_a_view
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
func.func @through_a_view(%o: memref<4xf32>) {
  %to = bufferization.to_tensor %o restrict writable : memref<4xf32> to tensor<4xf32>
  %s = tensor.extract_slice %to[0] [4] [1] : tensor<4xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %out: f32):
    %d = arith.addf %x, %x : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  bufferization.materialize_in_destination %r in writable %o : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// A ref that is only read is no destination (its tensor is not writable).
// CHECK-LABEL: func.func @not_writable
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
func.func @not_writable(%o: memref<4xf32>) {
  %to = bufferization.to_tensor %o restrict : memref<4xf32> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%to : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  bufferization.materialize_in_destination %r in writable %o : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}
