// RUN: pk-opt %s --pk-unshare-inits | FileCheck %s

// Two reductions accumulating into one filled init: the second gets its own
// fill of its own empty tensor.
// CHECK-LABEL: func.func @two_sums
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<6xi64>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%[[E1]] : tensor<6xi64>)
// CHECK: linalg.generic {{.*}} outs(%[[F1]] : tensor<6xi64>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<6xi64>
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%[[E2]] : tensor<6xi64>)
// CHECK: linalg.generic {{.*}} outs(%[[F2]] : tensor<6xi64>)
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @two_sums(%x: tensor<6x8xi64>) -> (tensor<6xi64>, tensor<6xi64>) {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<6xi64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %a = linalg.generic {indexing_maps = [#map, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
  ^bb0(%in: i64, %out: i64):
    %s = arith.addi %out, %in : i64
    linalg.yield %s : i64
  } -> tensor<6xi64>
  %b = linalg.generic {indexing_maps = [#map, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
  ^bb0(%in: i64, %out: i64):
    %m = arith.maxui %out, %in : i64
    linalg.yield %m : i64
  } -> tensor<6xi64>
  return %a, %b : tensor<6xi64>, tensor<6xi64>
}

// Two fills of one empty tensor keep sharing it.
// CHECK-LABEL: func.func @two_fills
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK-NOT: tensor.empty
func.func @two_fills() -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}

// Writers in the two branches of an scf.if (only one runs) keep sharing
// the fill: empty-tensor elimination then computes either in the
// destination.
// CHECK-LABEL: func.func @either_branch
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} outs(%[[F]] : tensor<6xi64>)
// CHECK: } else {
// CHECK: linalg.generic {{.*}} outs(%[[F]] : tensor<6xi64>)
// CHECK-NOT: linalg.fill
func.func @either_branch(%x: tensor<6x8xi64>, %c: i1) -> tensor<6xi64> {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<6xi64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %r = scf.if %c -> (tensor<6xi64>) {
    %a = linalg.generic {indexing_maps = [#map, #row],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
    ^bb0(%in: i64, %out: i64):
      %s = arith.addi %out, %in : i64
      linalg.yield %s : i64
    } -> tensor<6xi64>
    scf.yield %a : tensor<6xi64>
  } else {
    %b = linalg.generic {indexing_maps = [#map, #row],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
    ^bb0(%in: i64, %out: i64):
      %m = arith.maxui %out, %in : i64
      linalg.yield %m : i64
    } -> tensor<6xi64>
    scf.yield %b : tensor<6xi64>
  }
  return %r : tensor<6xi64>
}

// Writers in the same branch still get a fill each.
// CHECK-LABEL: func.func @same_branch
// CHECK: %[[F1:.*]] = linalg.fill
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} outs(%[[F1]] : tensor<6xi64>)
// CHECK: %[[F2:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} outs(%[[F2]] : tensor<6xi64>)
func.func @same_branch(%x: tensor<6x8xi64>, %c: i1) -> (tensor<6xi64>, tensor<6xi64>) {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<6xi64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %r:2 = scf.if %c -> (tensor<6xi64>, tensor<6xi64>) {
    %a = linalg.generic {indexing_maps = [#map, #row],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
    ^bb0(%in: i64, %out: i64):
      %s = arith.addi %out, %in : i64
      linalg.yield %s : i64
    } -> tensor<6xi64>
    %b = linalg.generic {indexing_maps = [#map, #row],
                         iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
    ^bb0(%in: i64, %out: i64):
      %m = arith.maxui %out, %in : i64
      linalg.yield %m : i64
    } -> tensor<6xi64>
    scf.yield %a, %b : tensor<6xi64>, tensor<6xi64>
  } else {
    scf.yield %f, %f : tensor<6xi64>, tensor<6xi64>
  }
  return %r#0, %r#1 : tensor<6xi64>, tensor<6xi64>
}

// A loop starting from the fill (a product vectorized into an scf.for
// writing the tensor in place) is a writer too: the reduction after it
// gets its own fill.
// CHECK-LABEL: func.func @loop_and_reduction
// CHECK: %[[F1:.*]] = linalg.fill
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[F1]])
// CHECK: %[[F2:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} outs(%[[F2]] : tensor<6xi64>)
func.func @loop_and_reduction(%x: tensor<6x8xi64>, %n: index) -> (tensor<6xi64>, tensor<6xi64>) {
  %zero = arith.constant 0 : i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<6xi64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %f) -> (tensor<6xi64>) {
    %v = tensor.extract %acc[%c0] : tensor<6xi64>
    %w = arith.addi %v, %zero : i64
    %u = tensor.insert %w into %acc[%c0] : tensor<6xi64>
    scf.yield %u : tensor<6xi64>
  }
  %b = linalg.generic {indexing_maps = [#map, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
  ^bb0(%in: i64, %out: i64):
    %m = arith.addi %out, %in : i64
    linalg.yield %m : i64
  } -> tensor<6xi64>
  return %l, %b : tensor<6xi64>, tensor<6xi64>
}

// Reading a size uses no contents: no fill for a tensor.dim.
// CHECK-LABEL: func.func @size_read
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @size_read(%x: tensor<6x8xi64>) -> (tensor<6xi64>, index) {
  %zero = arith.constant 0 : i64
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<6xi64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %d = tensor.dim %f, %c0 : tensor<6xi64>
  %b = linalg.generic {indexing_maps = [#map, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
  ^bb0(%in: i64, %out: i64):
    %m = arith.addi %out, %in : i64
    linalg.yield %m : i64
  } -> tensor<6xi64>
  return %b, %d : tensor<6xi64>, index
}

// A slice taken from the fill and written back where it was taken (a
// product computed in place, tile by tile) is one writer: the insert keeps
// the fill the extract reads; a reduction after it gets a fill of its own.
// CHECK-LABEL: func.func @slice_written_back
// CHECK: %[[F1:.*]] = linalg.fill
// CHECK: %[[S:.*]] = tensor.extract_slice %[[F1]][0] [4] [1]
// CHECK: tensor.insert_slice %{{.*}} into %[[F1]][0] [4] [1]
// CHECK: %[[F2:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} outs(%[[F2]] : tensor<6xi64>)
func.func @slice_written_back(%x: tensor<6x8xi64>) -> (tensor<6xi64>, tensor<6xi64>) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %e = tensor.empty() : tensor<6xi64>
  %f = linalg.fill ins(%zero : i64) outs(%e : tensor<6xi64>) -> tensor<6xi64>
  %s = tensor.extract_slice %f[0] [4] [1] : tensor<6xi64> to tensor<4xi64>
  %t = linalg.fill ins(%one : i64) outs(%s : tensor<4xi64>) -> tensor<4xi64>
  %w = tensor.insert_slice %t into %f[0] [4] [1] : tensor<4xi64> into tensor<6xi64>
  %b = linalg.generic {indexing_maps = [#map, #row],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x8xi64>) outs(%f : tensor<6xi64>) {
  ^bb0(%in: i64, %out: i64):
    %m = arith.addi %out, %in : i64
    linalg.yield %m : i64
  } -> tensor<6xi64>
  return %w, %b : tensor<6xi64>, tensor<6xi64>
}
