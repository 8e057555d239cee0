// Writes into the kernel's arrays move to the end of the function, each
// after every write whose source may still read the array's old contents
// (through its to_tensor, a view of it, or anything bufferized onto it).
// RUN: pk-opt %s --pk-order-ref-writes --split-input-file | FileCheck %s

// t = r[...]; r[...] = 7; o[...] = t: the write of the old r into o comes
// before r is overwritten.
// CHECK-LABEL: func.func @load_before_store
// CHECK-SAME: (%[[R:.*]]: memref<2xf32>, %[[O:.*]]: memref<2xf32>)
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[R]]
// CHECK: bufferization.materialize_in_destination %[[T]] in restrict writable %[[O]]
// CHECK-NEXT: bufferization.materialize_in_destination %{{.*}} in writable %[[R]]
// CHECK-NEXT: return
func.func @load_before_store(%r: memref<2xf32>, %o: memref<2xf32>) {
  %t = bufferization.to_tensor %r restrict writable : memref<2xf32> to tensor<2xf32>
  %seven = arith.constant dense<7.0> : tensor<2xf32>
  bufferization.materialize_in_destination %seven in writable %r : (tensor<2xf32>, memref<2xf32>) -> ()
  bufferization.materialize_in_destination %t in restrict writable %o : (tensor<2xf32>, memref<2xf32>) -> ()
  return
}

// -----

// A view of the old contents counts as reading them.
// CHECK-LABEL: func.func @slice_of_old_contents
// CHECK-SAME: (%[[R:.*]]: memref<4xf32>, %[[O:.*]]: memref<2xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice
// CHECK: bufferization.materialize_in_destination %[[S]] in restrict writable %[[O]]
// CHECK-NEXT: bufferization.materialize_in_destination %{{.*}} in writable %[[R]]
func.func @slice_of_old_contents(%r: memref<4xf32>, %o: memref<2xf32>) {
  %t = bufferization.to_tensor %r restrict writable : memref<4xf32> to tensor<4xf32>
  %s = tensor.extract_slice %t[1] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  bufferization.materialize_in_destination %zero in writable %r : (tensor<4xf32>, memref<4xf32>) -> ()
  bufferization.materialize_in_destination %s in restrict writable %o : (tensor<2xf32>, memref<2xf32>) -> ()
  return
}

// -----

// a[...] = b[...]; b[...] = a[...] (a swap): each write reads the other's
// array, so one source is copied first.
// CHECK-LABEL: func.func @swap
// CHECK-SAME: (%[[A:.*]]: memref<3xi32>, %[[B:.*]]: memref<3xi32>)
// CHECK-DAG: %[[TA:.*]] = bufferization.to_tensor %[[A]]
// CHECK-DAG: %[[TB:.*]] = bufferization.to_tensor %[[B]]
// CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[TB]])
// CHECK: bufferization.materialize_in_destination %[[TA]] in writable %[[B]]
// CHECK-NEXT: bufferization.materialize_in_destination %[[COPY]] in writable %[[A]]
func.func @swap(%a: memref<3xi32>, %b: memref<3xi32>) {
  %ta = bufferization.to_tensor %a restrict writable : memref<3xi32> to tensor<3xi32>
  %tb = bufferization.to_tensor %b restrict writable : memref<3xi32> to tensor<3xi32>
  bufferization.materialize_in_destination %tb in writable %a : (tensor<3xi32>, memref<3xi32>) -> ()
  bufferization.materialize_in_destination %ta in writable %b : (tensor<3xi32>, memref<3xi32>) -> ()
  return
}

// -----

// A computed value reads no array's buffer: the writes keep their order.
// CHECK-LABEL: func.func @independent
// CHECK: materialize_in_destination %{{.*}} in writable %arg0
// CHECK-NEXT: materialize_in_destination %{{.*}} in restrict writable %arg1
#id = affine_map<(d0) -> (d0)>
func.func @independent(%r: memref<2xf32>, %o: memref<2xf32>) {
  %t = bufferization.to_tensor %r restrict writable : memref<2xf32> to tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %doubled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%t : tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<2xf32>
  %seven = arith.constant dense<7.0> : tensor<2xf32>
  bufferization.materialize_in_destination %seven in writable %r : (tensor<2xf32>, memref<2xf32>) -> ()
  bufferization.materialize_in_destination %doubled in restrict writable %o : (tensor<2xf32>, memref<2xf32>) -> ()
  return
}
