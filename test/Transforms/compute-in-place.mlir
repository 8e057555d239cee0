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

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A tile loop (pk-fuse-rows' rows) stored into a ref it reads only at the
// tile each iteration writes: the loop starts from the ref's contents and
// reads the tile from its shared output, so the ref is written in place.
// CHECK-LABEL: func.func @tiles
// CHECK: %[[T:.*]] = bufferization.to_tensor %arg0 restrict writable
// CHECK: scf.forall (%[[I:.*]]) = (0) to (64) step (4) shared_outs(%[[S:.*]] = %[[T]])
// CHECK: tensor.extract_slice %[[S]][%[[I]], 0] [4, 16] [1, 1]
// CHECK-NOT: tensor.extract_slice %[[T]]
// CHECK: tensor.parallel_insert_slice
func.func @tiles(%o: memref<64x16xf32>) {
  %t = bufferization.to_tensor %o restrict writable : memref<64x16xf32> to tensor<64x16xf32>
  %e = tensor.empty() : tensor<64x16xf32>
  %r = scf.forall (%i) = (0) to (64) step (4) shared_outs(%s = %e) -> (tensor<64x16xf32>) {
    %in = tensor.extract_slice %t[%i, 0] [4, 16] [1, 1] : tensor<64x16xf32> to tensor<4x16xf32>
    %dest = tensor.extract_slice %s[%i, 0] [4, 16] [1, 1] : tensor<64x16xf32> to tensor<4x16xf32>
    %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<4x16xf32>) outs(%dest : tensor<4x16xf32>) {
    ^bb0(%x: f32, %out: f32):
      %m = arith.negf %x : f32
      linalg.yield %m : f32
    } -> tensor<4x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %n into %s[%i, 0] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<64x16xf32>
    }
  }
  bufferization.materialize_in_destination %r in writable %o : (tensor<64x16xf32>, memref<64x16xf32>) -> ()
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Reading the next tile of the ref (not the one it writes): untouched.
// CHECK-LABEL: func.func @other_tile
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64x16xf32>
// CHECK: shared_outs(%{{.*}} = %[[E]])
func.func @other_tile(%p: memref<64x16xf32>) {
  %t = bufferization.to_tensor %p restrict writable : memref<64x16xf32> to tensor<64x16xf32>
  %e = tensor.empty() : tensor<64x16xf32>
  %r = scf.forall (%i) = (0) to (60) step (4) shared_outs(%s = %e) -> (tensor<64x16xf32>) {
    %j = arith.addi %i, %i : index
    %in = tensor.extract_slice %t[%j, 0] [4, 16] [1, 1] : tensor<64x16xf32> to tensor<4x16xf32>
    %dest = tensor.extract_slice %s[%i, 0] [4, 16] [1, 1] : tensor<64x16xf32> to tensor<4x16xf32>
    %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<4x16xf32>) outs(%dest : tensor<4x16xf32>) {
    ^bb0(%x: f32, %out: f32):
      %m = arith.negf %x : f32
      linalg.yield %m : f32
    } -> tensor<4x16xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %n into %s[%i, 0] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<64x16xf32>
    }
  }
  bufferization.materialize_in_destination %r in writable %p : (tensor<64x16xf32>, memref<64x16xf32>) -> ()
  return
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Serial tiles (an scf.for yielding its insert) are computed in place too.
// CHECK-LABEL: func.func @serial_tiles
// CHECK: %[[T:.*]] = bufferization.to_tensor %arg0 restrict writable
// CHECK: scf.for %[[I:.*]] = %{{.*}} iter_args(%[[S:.*]] = %[[T]])
// CHECK: tensor.extract_slice %[[S]][%[[I]], 0] [4, 16] [1, 1]
// CHECK-NOT: tensor.extract_slice %[[T]]
// CHECK: tensor.insert_slice
func.func @serial_tiles(%o: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %t = bufferization.to_tensor %o restrict writable : memref<64x16xf32> to tensor<64x16xf32>
  %e = tensor.empty() : tensor<64x16xf32>
  %r = scf.for %i = %c0 to %c64 step %c4 iter_args(%s = %e) -> (tensor<64x16xf32>) {
    %in = tensor.extract_slice %t[%i, 0] [4, 16] [1, 1] : tensor<64x16xf32> to tensor<4x16xf32>
    %dest = tensor.extract_slice %s[%i, 0] [4, 16] [1, 1] : tensor<64x16xf32> to tensor<4x16xf32>
    %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%in : tensor<4x16xf32>) outs(%dest : tensor<4x16xf32>) {
    ^bb0(%x: f32, %out: f32):
      %m = arith.negf %x : f32
      linalg.yield %m : f32
    } -> tensor<4x16xf32>
    %u = tensor.insert_slice %n into %s[%i, 0] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<64x16xf32>
    scf.yield %u : tensor<64x16xf32>
  }
  bufferization.materialize_in_destination %r in writable %o : (tensor<64x16xf32>, memref<64x16xf32>) -> ()
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// A choice between parallel and serial tiles (pk-fuse-rows with a size
// known at run time), stored into a ref both read: each branch in place.
// CHECK-LABEL: func.func @chosen_tiles_in_place
// CHECK: %[[T:.*]] = bufferization.to_tensor %arg0 restrict writable
// CHECK: scf.if
// CHECK: scf.forall {{.*}} shared_outs(%[[S:.*]] = %[[T]])
// CHECK: tensor.extract_slice %[[S]]
// CHECK: } else {
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = %[[T]])
// CHECK: tensor.extract_slice %[[A]]
func.func @chosen_tiles_in_place(%o: memref<?xf32>, %large: i1) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %t = bufferization.to_tensor %o restrict writable : memref<?xf32> to tensor<?xf32>
  %n = tensor.dim %t, %c0 : tensor<?xf32>
  %r = scf.if %large -> (tensor<?xf32>) {
    %e = tensor.empty(%n) : tensor<?xf32>
    %p = scf.forall (%i) = (0) to (%n) step (4) shared_outs(%s = %e) -> (tensor<?xf32>) {
      %in = tensor.extract_slice %t[%i] [4] [1] : tensor<?xf32> to tensor<4xf32>
      %neg = arith.negf %in : tensor<4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %neg into %s[%i] [4] [1] : tensor<4xf32> into tensor<?xf32>
      }
    }
    scf.yield %p : tensor<?xf32>
  } else {
    %e = tensor.empty(%n) : tensor<?xf32>
    %q = scf.for %i = %c0 to %n step %c4 iter_args(%s = %e) -> (tensor<?xf32>) {
      %in = tensor.extract_slice %t[%i] [4] [1] : tensor<?xf32> to tensor<4xf32>
      %neg = arith.negf %in : tensor<4xf32>
      %u = tensor.insert_slice %neg into %s[%i] [4] [1] : tensor<4xf32> into tensor<?xf32>
      scf.yield %u : tensor<?xf32>
    }
    scf.yield %q : tensor<?xf32>
  }
  bufferization.materialize_in_destination %r in writable %o : (tensor<?xf32>, memref<?xf32>) -> ()
  return
}

// -----

// The same choice stored into a ref the kernel never loads: both loops
// start from one tensor of the ref's buffer, made where the choice is (the
// store is no longer `restrict`: that tensor is).
// CHECK-LABEL: func.func @chosen_tiles_into_destination
// CHECK: %[[D:.*]] = bufferization.to_tensor %arg1 restrict writable
// CHECK-NEXT: scf.if
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %[[D]])
// CHECK: } else {
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[D]])
// CHECK: bufferization.materialize_in_destination %{{.*}} in writable %arg1
func.func @chosen_tiles_into_destination(%x: memref<?xf32>, %o: memref<?xf32>, %large: i1) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %t = bufferization.to_tensor %x restrict : memref<?xf32> to tensor<?xf32>
  %n = tensor.dim %t, %c0 : tensor<?xf32>
  %r = scf.if %large -> (tensor<?xf32>) {
    %e = tensor.empty(%n) : tensor<?xf32>
    %p = scf.forall (%i) = (0) to (%n) step (4) shared_outs(%s = %e) -> (tensor<?xf32>) {
      %in = tensor.extract_slice %t[%i] [4] [1] : tensor<?xf32> to tensor<4xf32>
      %neg = arith.negf %in : tensor<4xf32>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %neg into %s[%i] [4] [1] : tensor<4xf32> into tensor<?xf32>
      }
    }
    scf.yield %p : tensor<?xf32>
  } else {
    %e = tensor.empty(%n) : tensor<?xf32>
    %q = scf.for %i = %c0 to %n step %c4 iter_args(%s = %e) -> (tensor<?xf32>) {
      %in = tensor.extract_slice %t[%i] [4] [1] : tensor<?xf32> to tensor<4xf32>
      %neg = arith.negf %in : tensor<4xf32>
      %u = tensor.insert_slice %neg into %s[%i] [4] [1] : tensor<4xf32> into tensor<?xf32>
      scf.yield %u : tensor<?xf32>
    }
    scf.yield %q : tensor<?xf32>
  }
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<?xf32>, memref<?xf32>) -> ()
  return
}

// -----

// pk-pack-matmul's choice: a copy of the packed product's slice into a new
// tensor, or a plain product accumulating into a fill of one. Both start
// from the ref's buffer (the fill then fills it).
// CHECK-LABEL: func.func @chosen_products_into_destination
// CHECK: %[[D:.*]] = bufferization.to_tensor %arg2 restrict writable
// CHECK-NEXT: scf.if
// CHECK: linalg.copy ins(%{{.*}} : tensor<?x?xf32>) outs(%[[D]] : tensor<?x?xf32>)
// CHECK: } else {
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[D]] : tensor<?x?xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[Z]] : tensor<?x?xf32>)
// CHECK: bufferization.materialize_in_destination %{{.*}} in writable %arg2
func.func @chosen_products_into_destination(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %o: memref<?x?xf32>, %padded: tensor<?x?xf32>, %pack: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ta = bufferization.to_tensor %a restrict : memref<?x?xf32> to tensor<?x?xf32>
  %tb = bufferization.to_tensor %b restrict : memref<?x?xf32> to tensor<?x?xf32>
  %m = tensor.dim %ta, %c0 : tensor<?x?xf32>
  %n = tensor.dim %tb, %c1 : tensor<?x?xf32>
  %r = scf.if %pack -> (tensor<?x?xf32>) {
    %e = tensor.empty(%m, %n) : tensor<?x?xf32>
    %s = tensor.extract_slice %padded[0, 0] [%m, %n] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
    %c = linalg.copy ins(%s : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %c : tensor<?x?xf32>
  } else {
    %e = tensor.empty(%m, %n) : tensor<?x?xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    %p = linalg.matmul ins(%ta, %tb : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %p : tensor<?x?xf32>
  }
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// -----

// Nested choices (packed or not; tiles that divide C or not), and a value
// computed in a tiled layout then collapsed: that one starts from the
// buffer viewed in its layout (expand_shape).
// CHECK-LABEL: func.func @nested_choices_and_tiled_layouts
// CHECK: %[[D:.*]] = bufferization.to_tensor %arg0 restrict writable
// CHECK: %[[V:.*]] = tensor.expand_shape %[[D]] {{\[\[}}0, 1], [2, 3]] output_shape [%{{.*}}, 8, %{{.*}}, 32]
// CHECK: linalg.copy ins(%arg7 : tensor<?x8x?x32xf32>) outs(%[[V]] : tensor<?x8x?x32xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[D]] : tensor<?x?xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[D]] : tensor<?x?xf32>)
// CHECK: bufferization.materialize_in_destination %{{.*}} in writable %arg0
func.func @nested_choices_and_tiled_layouts(%o: memref<?x?xf32>, %pack: i1, %divides: i1, %m8: index, %n32: index, %m: index, %n: index, %x: tensor<?x8x?x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %r = scf.if %pack -> (tensor<?x?xf32>) {
    %d = scf.if %divides -> (tensor<?x?xf32>) {
      %e = tensor.empty(%m8, %n32) : tensor<?x8x?x32xf32>
      %t = linalg.copy ins(%x : tensor<?x8x?x32xf32>) outs(%e : tensor<?x8x?x32xf32>) -> tensor<?x8x?x32xf32>
      %c = tensor.collapse_shape %t [[0, 1], [2, 3]] : tensor<?x8x?x32xf32> into tensor<?x?xf32>
      scf.yield %c : tensor<?x?xf32>
    } else {
      %e = tensor.empty(%m, %n) : tensor<?x?xf32>
      %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
      scf.yield %f : tensor<?x?xf32>
    }
    scf.yield %d : tensor<?x?xf32>
  } else {
    %e = tensor.empty(%m, %n) : tensor<?x?xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %f : tensor<?x?xf32>
  }
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<?x?xf32>, memref<?x?xf32>) -> ()
  return
}

// -----

// A branch that computes in no new tensor: the store is left to
// empty-tensor elimination.
// CHECK-LABEL: func.func @chosen_other
// CHECK-NOT: bufferization.to_tensor %arg1
// CHECK: bufferization.materialize_in_destination %{{.*}} in restrict writable %arg1
func.func @chosen_other(%x: memref<4xf32>, %o: memref<4xf32>, %large: i1) {
  %t = bufferization.to_tensor %x restrict : memref<4xf32> to tensor<4xf32>
  %r = scf.if %large -> (tensor<4xf32>) {
    %neg = arith.negf %t : tensor<4xf32>
    scf.yield %neg : tensor<4xf32>
  } else {
    scf.yield %t : tensor<4xf32>
  }
  bufferization.materialize_in_destination %r in restrict writable %o : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}
