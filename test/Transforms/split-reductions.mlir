// Long reductions become blocks reduced in parallel plus a combine: the
// blocks' partial results (and the remainder's, reduced from the identity)
// are added pairwise (block-size=4 keeps the shapes small).
// RUN: pk-opt %s --pk-split-reductions=block-size=4 | FileCheck %s
// RUN: pk-opt %s --pk-split-reductions=block-size=4 --canonicalize --cse \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:   | FileCheck %s --check-prefix=BUF
// RUN: pk-opt %s --pk-split-reductions="block-size=4 pairwise=false" \
// RUN:   | FileCheck %s --check-prefix=ONE
// RUN: not pk-opt %s --pk-split-reductions="block-size=0" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD
// BAD: pk-split-reductions: block-size must be positive and below 2^62, got 0{{$}}

#id1 = affine_map<(d0) -> (d0)>
#s1 = affine_map<(d0) -> ()>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#s2 = affine_map<(d0, d1) -> ()>
#r2 = affine_map<(d0, d1) -> (d0)>
#c2 = affine_map<(d0, d1) -> (d1)>
#bc = affine_map<(d0, d1) -> (d0, 0)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mid = affine_map<(d0, d1, d2) -> (d1)>

// x.sum() of 10 float32: a remainder of 2 reduced from the identity, 2
// blocks of 4 into the first 2 of 3 slots, the remainder into the third,
// then pairwise: (p0 + p2) + p1, added to the initial value.
// CHECK-LABEL: func.func @full_sum
// CHECK: %[[REST:.*]] = tensor.extract_slice %{{.*}}[8] [2] [1] : tensor<10xf32> to tensor<2xf32>
// CHECK: %[[TAIL:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[REST]] : tensor<2xf32>)
// CHECK: %[[HEAD:.*]] = tensor.extract_slice %{{.*}}[0] [8] [1] : tensor<10xf32> to tensor<8xf32>
// CHECK: %[[SLOTS:.*]] = linalg.fill {{.*}} -> tensor<3xf32>
// CHECK: %[[FIRST:.*]] = tensor.extract_slice %[[SLOTS]][0] [2] [1]
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %[[HEAD]] {{\[\[}}0, 1]] output_shape [2, 4]
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[BLOCKS]] : tensor<2x4xf32>) outs(%[[FIRST]] : tensor<2xf32>)
// CHECK: %[[WITH:.*]] = tensor.insert_slice %[[PARTIAL]] into %[[SLOTS]][0] [2] [1]
// CHECK: tensor.insert_slice %[[TAIL]] into %[[WITH]][2] [1] [1] : tensor<f32> into tensor<3xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]} ins({{.*}} : tensor<1xf32>, tensor<1xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]} ins({{.*}} : tensor<1xf32>, tensor<1xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = []} ins(%{{.*}} : tensor<f32>) outs(%arg1 : tensor<f32>)
// CHECK-NOT: linalg.generic
// CHECK: return
// The blocks write their partial sums straight into the slots' buffer.
// BUF-LABEL: func.func @full_sum
// BUF: %[[SLOTS:.*]] = memref.alloc() {{.*}} : memref<3xf32>
// BUF: %[[FIRST:.*]] = memref.subview %[[SLOTS]][0] [2] [1]
// BUF: linalg.generic {{.*}}outs(%[[FIRST]] : memref<2xf32, strided<[1]>>)
func.func @full_sum(%x: tensor<10xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<10xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// 10 partial sums pairwise: 10 -> 5 -> 3 -> 2 -> 1, each level a new tensor
// (the odd middle element carried over).
// CHECK-LABEL: func.func @pairwise
// With pairwise=false the 10 partial sums are reduced into the accumulator
// by one reduction (a GPU's workgroup tree).
// ONE-LABEL: func.func @pairwise
// ONE: %[[PARTIAL:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<10x4xf64>) outs(%{{.*}} : tensor<10xf64>)
// ONE: %[[ALL:.*]] = tensor.insert_slice %[[PARTIAL]]
// ONE-NOT: iterator_types = ["parallel"]}
// ONE: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[ALL]] : tensor<10xf64>) outs(%arg1 : tensor<f64>)
// ONE: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f64
// ONE-NOT: linalg.generic
// ONE: return
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<10x4xf64>) outs(%{{.*}} : tensor<10xf64>)
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<5xf64>, tensor<5xf64>)
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<2xf64>, tensor<2xf64>)
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[2] [1] [1] : tensor<1xf64> into tensor<3xf64>
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<1xf64>, tensor<1xf64>)
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<1xf64>, tensor<1xf64>)
// CHECK: outs(%arg1 : tensor<f64>)
func.func @pairwise(%x: tensor<40xf64>, %init: tensor<f64>) -> tensor<f64> {
  %r = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<40xf64>) outs(%init : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %acc, %a fastmath<reassoc> : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %r : tensor<f64>
}

// Without reassoc, a float sum keeps its order.
// CHECK-LABEL: func.func @strict_sum
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg0 : tensor<10xf32>)
func.func @strict_sum(%x: tensor<10xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<10xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Integer sums (exact in any order) combine their partials the same way.
// CHECK-LABEL: func.func @integer_sum
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<10x4xi32>)
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<5xi32>, tensor<5xi32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addi
func.func @integer_sum(%x: tensor<40xi32>, %init: tensor<i32>) -> tensor<i32> {
  %r = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<40xi32>) outs(%init : tensor<i32>) {
  ^bb0(%a: i32, %acc: i32):
    %s = arith.addi %acc, %a : i32
    linalg.yield %s : i32
  } -> tensor<i32>
  return %r : tensor<i32>
}

// A full reduction of a 3x4 array: its two loops folded into one of 12,
// 3 blocks whose maxima combine pairwise.
// CHECK-LABEL: func.func @full_max_2d
// CHECK-DAG: arith.constant 0xFF800000 : f32
// CHECK-DAG: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 4]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK: arith.maximumf
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<1xf32>, tensor<1xf32>)
// CHECK: outs(%arg1 : tensor<f32>)
func.func @full_max_2d(%x: tensor<3x4xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id2, #s2], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<3x4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Rows of 8 (a fused x * y): the blocks' loop goes inside the rows' loop,
// the partial sums along dimension 0 of [blocks, rows], and the broadcast
// operand is split along with the rows.
// CHECK-LABEL: func.func @rows
// CHECK-DAG: tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [3, 2, 4]
// CHECK-DAG: tensor.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [2, 4]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.mulf
// CHECK: ins(%{{.*}}, %{{.*}} : tensor<1x3xf32>, tensor<1x3xf32>)
// CHECK: outs(%arg2 : tensor<3xf32>)
func.func @rows(%x: tensor<3x8xf32>, %y: tensor<8xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #c2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %y : tensor<3x8xf32>, tensor<8xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// Columns (the reduced loop outermost): the blocks' loop outermost, the
// remainder row from the identity (int64 max) in a third slot.
// CHECK-LABEL: func.func @columns
// CHECK: arith.constant 9223372036854775807 : i64
// CHECK: tensor.extract_slice %arg0[8, 0] [1, 5] [1, 1]
// CHECK: tensor.extract_slice %arg0[0, 0] [8, 5] [1, 1]
// CHECK: linalg.fill {{.*}} -> tensor<3x5xi64>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} {{.*}} outs(%{{.*}} : tensor<2x5xi64>)
// CHECK: tensor.insert_slice %{{.*}}[2, 0] [1, 5] [1, 1] : tensor<5xi64> into tensor<3x5xi64>
// CHECK: arith.minsi
// CHECK: outs(%arg1 : tensor<5xi64>)
func.func @columns(%x: tensor<9x5xi64>, %init: tensor<5xi64>) -> tensor<5xi64> {
  %r = linalg.generic {indexing_maps = [#id2, #c2], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<9x5xi64>) outs(%init : tensor<5xi64>) {
  ^bb0(%a: i64, %acc: i64):
    %s = arith.minsi %acc, %a : i64
    linalg.yield %s : i64
  } -> tensor<5xi64>
  return %r : tensor<5xi64>
}

// Fewer than two blocks: left alone.
// CHECK-LABEL: func.func @short
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.*}}ins(%arg0 : tensor<7xf32>)
func.func @short(%x: tensor<7xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<7xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// A dynamic length: split for whatever length comes. Fewer than 2 x 4
// elements reduce whole; longer ones in n/4 blocks, a rest slot that may
// be empty, and pairwise levels while more than one partial is left, two
// a step: the partials to a scratch tensor of half their rows and back,
// so that the loop carries the same two buffers (bufferized: no copy but the odd
// rows', no allocation in the loop).
// CHECK-LABEL: func.func @dynamic_length
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[LONG:.*]] = arith.cmpi sge, %[[N]], %c8
// CHECK: scf.if %[[LONG]] -> (tensor<f32>)
// CHECK: tensor.expand_shape {{.*}} into tensor<?x4xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<?x4xf32>) outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[COUNT:.*]] = affine.apply #{{.*}}()[%{{.*}}]
// CHECK: %[[SCRATCH:.*]] = tensor.empty(%{{.*}}) : tensor<?xf32>
// CHECK-NEXT: scf.while
// CHECK-SAME: ({{.*}} = %{{.*}}, %{{.*}} = %[[SCRATCH]], %{{.*}} = %[[COUNT]]) : (tensor<?xf32>, tensor<?xf32>, index)
// CHECK: arith.cmpi sgt
// CHECK: scf.condition
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]}
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]}
// CHECK: arith.maximumf
// CHECK: scf.yield
// BUF-LABEL: func.func @dynamic_length
// BUF: scf.while
// BUF-NOT: memref.alloc
// BUF: scf.yield
// CHECK: } else {
// CHECK: linalg.generic {{.*}}ins(%arg0 : tensor<?xf32>)
func.func @dynamic_length(%x: tensor<?xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %acc, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// A dynamic count of rows with a static length: split statically (2 whole
// blocks per row), the slots sized by the rows.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NOT: scf.if
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [%{{.*}}, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
// CHECK: outs(%{{.*}} : tensor<2x?xf32>)
func.func @dynamic_rows(%x: tensor<?x8xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x8xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Two dynamic reduction loops that cannot be folded into one (the second
// operand reads them transposed): left alone.
// CHECK-LABEL: func.func @two_dynamic_loops
// CHECK-NOT: scf.if
// CHECK-NOT: tensor.expand_shape
func.func @two_dynamic_loops(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x, %y : tensor<?x?xf32>, tensor<?x?xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// A keepdims operand (a row's max, read through a constant 0) loses its
// unit dim first; then the rows split as above.
// CHECK-LABEL: func.func @broadcast_unit_dim
// CHECK: tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
func.func @broadcast_unit_dim(%x: tensor<3x8xf32>, %m: tensor<3x1xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #bc, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<3x8xf32>, tensor<3x1xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %s = arith.addf %acc, %d fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// Reduced loops that cannot be folded into one (x.sum(axis=(0, 2))): the
// longest is split, the other stays a reduction inside each block (blocks
// of 4 / 2 = 2 of its iterations).
// CHECK-LABEL: func.func @separate_axes
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0, 1], [2], [3]] output_shape [3, 2, 3, 2]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<3x3xf32>)
func.func @separate_axes(%x: tensor<6x3x2xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [#id3, #mid], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : tensor<6x3x2xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// Left alone: loop indices in the body (the split would renumber them), an
// empty parallel loop, and float8 (whose max identity would be NaN).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @left_alone(%x: tensor<16xi64>, %init: tensor<i64>, %e: tensor<0x16xf32>, %ei: tensor<0xf32>,
                      %f: tensor<16xf8E4M3FN>, %fi: tensor<f8E4M3FN>) -> (tensor<i64>, tensor<0xf32>, tensor<f8E4M3FN>) {
  %r = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<16xi64>) outs(%init : tensor<i64>) {
  ^bb0(%a: i64, %acc: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %p = arith.muli %a, %c : i64
    %s = arith.addi %acc, %p : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  %q = linalg.generic {indexing_maps = [#id2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<0x16xf32>) outs(%ei : tensor<0xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<0xf32>
  %m = linalg.generic {indexing_maps = [#id1, #s1], iterator_types = ["reduction"]}
      ins(%f : tensor<16xf8E4M3FN>) outs(%fi : tensor<f8E4M3FN>) {
  ^bb0(%a: f8E4M3FN, %acc: f8E4M3FN):
    %s = arith.maximumf %acc, %a : f8E4M3FN
    linalg.yield %s : f8E4M3FN
  } -> tensor<f8E4M3FN>
  return %r, %q, %m : tensor<i64>, tensor<0xf32>, tensor<f8E4M3FN>
}

// A constant index into a dimension longer than 1 reads a slice (column 0),
// not a broadcast: collapsing it would read other elements, so the op is
// left alone.
// CHECK-LABEL: func.func @constant_column
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: return
#col0 = affine_map<(d0) -> (d0, 0)>
func.func @constant_column(%x: tensor<16x5xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#col0, #s1], iterator_types = ["reduction"]}
      ins(%x : tensor<16x5xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// A row's sum inside a tile of rows (pk-fuse-rows' loop) is split too; a
// reduction nested deeper (a loop in the tile) is left alone.
// CHECK-LABEL: func.func @in_tile_loop
// CHECK: scf.forall
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [1, 2, 4]
// CHECK: scf.for
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<1x8xf32>)
// CHECK: return
func.func @in_tile_loop(%x: tensor<4x8xf32>, %out: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = scf.forall (%i) in (4) shared_outs(%o = %out) -> (tensor<4xf32>) {
    %row = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    %acc = tensor.extract_slice %o[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
    %s = linalg.generic {indexing_maps = [#id2, #r2], iterator_types = ["parallel", "reduction"]}
        ins(%row : tensor<1x8xf32>) outs(%acc : tensor<1xf32>) {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %b, %a fastmath<reassoc> : f32
      linalg.yield %t : f32
    } -> tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d = scf.for %i = %c0 to %c4 step %c1 iter_args(%o = %out) -> (tensor<4xf32>) {
    %n = scf.for %j = %c0 to %c1 step %c1 iter_args(%p = %o) -> (tensor<4xf32>) {
      %row = tensor.extract_slice %x[%i, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
      %acc = tensor.extract_slice %p[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
      %s = linalg.generic {indexing_maps = [#id2, #r2], iterator_types = ["parallel", "reduction"]}
          ins(%row : tensor<1x8xf32>) outs(%acc : tensor<1xf32>) {
      ^bb0(%a: f32, %b: f32):
        %t = arith.addf %b, %a fastmath<reassoc> : f32
        linalg.yield %t : f32
      } -> tensor<1xf32>
      %u = tensor.insert_slice %s into %p[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
      scf.yield %u : tensor<4xf32>
    }
    scf.yield %n : tensor<4xf32>
  }
  return %r, %d : tensor<4xf32>, tensor<4xf32>
}

// A declaration has nothing to split (it crashed the pass).
// CHECK-LABEL: func.func private @declared(memref<?xf32>)
func.func private @declared(memref<?xf32>)
