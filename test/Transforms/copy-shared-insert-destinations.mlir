// An insert whose destination is also stored (directly or through a view)
// updates a copy of it; one whose destination is only read stays in place.
// RUN: pk-opt %s --pk-copy-shared-insert-destinations | FileCheck %s

// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[V:.*]]: tensor<3xf64>, %[[W:.*]]: tensor<1xf64>, %[[R1:.*]]: memref<3xf64>, %[[R2:.*]]: memref<3xf64>)
// CHECK: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[V]]) : tensor<3xf64>
// CHECK: %[[I:.*]] = tensor.insert_slice %[[W]] into %[[C]][0] [1] [1]
// CHECK: bufferization.materialize_in_destination %[[I]] in restrict writable %[[R1]]
// CHECK: bufferization.materialize_in_destination %[[V]] in restrict writable %[[R2]]
func.func @shared(%v: tensor<3xf64>, %w: tensor<1xf64>, %r1: memref<3xf64>, %r2: memref<3xf64>) {
  %i = tensor.insert_slice %w into %v[0] [1] [1] : tensor<1xf64> into tensor<3xf64>
  bufferization.materialize_in_destination %i in restrict writable %r1 : (tensor<3xf64>, memref<3xf64>) -> ()
  bufferization.materialize_in_destination %v in restrict writable %r2 : (tensor<3xf64>, memref<3xf64>) -> ()
  return
}

// CHECK-LABEL: func.func @through_a_view
// CHECK: bufferization.alloc_tensor() copy
func.func @through_a_view(%v: tensor<3xf64>, %w: tensor<1xf64>, %r1: memref<3xf64>, %r2: memref<2xf64>) {
  %i = tensor.insert_slice %w into %v[0] [1] [1] : tensor<1xf64> into tensor<3xf64>
  %s = tensor.extract_slice %v[1] [2] [1] : tensor<3xf64> to tensor<2xf64>
  bufferization.materialize_in_destination %i in restrict writable %r1 : (tensor<3xf64>, memref<3xf64>) -> ()
  bufferization.materialize_in_destination %s in restrict writable %r2 : (tensor<2xf64>, memref<2xf64>) -> ()
  return
}

// CHECK-LABEL: func.func @only_read
// CHECK-NOT: alloc_tensor
// CHECK: tensor.insert_slice
func.func @only_read(%v: tensor<3xf64>, %w: tensor<1xf64>, %r1: memref<3xf64>) {
  %e = tensor.extract_slice %v[0] [1] [1] : tensor<3xf64> to tensor<1xf64>
  %i = tensor.insert_slice %e into %v[2] [1] [1] : tensor<1xf64> into tensor<3xf64>
  bufferization.materialize_in_destination %i in restrict writable %r1 : (tensor<3xf64>, memref<3xf64>) -> ()
  return
}

// An insert into the contents of a ref the kernel only reads goes into a
// copy in an empty tensor, which empty-tensor elimination can place in the
// stored ref; an insert into a writable ref's contents stays in place.
// CHECK-LABEL: func.func @into_a_read_only_ref
// CHECK-SAME: (%[[X:.*]]: memref<8xf32>, %[[W:.*]]: tensor<6xf32>, %[[O:.*]]: memref<8xf32>)
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[X]] restrict
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[C:.*]] = linalg.copy ins(%[[T]] : tensor<8xf32>) outs(%[[E]] : tensor<8xf32>)
// CHECK: tensor.insert_slice %[[W]] into %[[C]][1] [6] [1]
func.func @into_a_read_only_ref(%x: memref<8xf32>, %w: tensor<6xf32>, %o: memref<8xf32>) {
  %t = bufferization.to_tensor %x restrict : memref<8xf32> to tensor<8xf32>
  %i = tensor.insert_slice %w into %t[1] [6] [1] : tensor<6xf32> into tensor<8xf32>
  bufferization.materialize_in_destination %i in restrict writable %o : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @into_the_stored_ref
// CHECK-NOT: linalg.copy
// CHECK: tensor.insert_slice
func.func @into_the_stored_ref(%w: tensor<6xf32>, %o: memref<8xf32>) {
  %t = bufferization.to_tensor %o restrict writable : memref<8xf32> to tensor<8xf32>
  %i = tensor.insert_slice %w into %t[1] [6] [1] : tensor<6xf32> into tensor<8xf32>
  bufferization.materialize_in_destination %i in restrict writable %o : (tensor<8xf32>, memref<8xf32>) -> ()
  return
}
