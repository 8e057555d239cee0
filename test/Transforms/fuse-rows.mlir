// A softmax, a norm and logsumexp are computed in tiles of rows, every step
// fused into the tile and no temporary as large as the input.
// RUN: pk-opt %s --pk-fuse-rows="tile-elements=256 min-tiles=4 parallel-threshold=1" | FileCheck %s
// RUN: pk-opt %s --pk-fuse-rows="tile-elements=256 min-tiles=4 parallel-threshold=0" | FileCheck %s --check-prefix=SERIAL
// RUN: pk-opt %s --pk-fuse-rows="tile-elements=256 min-tiles=4 parallel-threshold=1" \
// RUN:   --canonicalize --pk-bufferization-pipeline | FileCheck %s --check-prefix=BUF
// RUN: not pk-opt %s --pk-fuse-rows="tile-elements=0" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: pk-fuse-rows: tile-elements and min-tiles must be positive

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#kd3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#bc = affine_map<(d0, d1) -> (d0, 0)>

// softmax over rows of 128 (keepdims, as pk lowers it): tiles of 2 rows
// (256 elements), the max, exp, sum and division in each; exp writes into
// the output's tile, which the division rescales.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.generic
// CHECK: scf.forall (%[[I:.*]]) = (0) to (64) step (2) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<64x128xf32>)
// CHECK: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0] [2, 128] [1, 1] : tensor<64x128xf32> to tensor<2x128xf32>
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<2x128xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: arith.maximumf
// CHECK: %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [2, 128] [1, 1]
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<2x128xf32>, tensor<2xf32>) outs(%[[TILE]] : tensor<2x128xf32>)
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[EXP]] : tensor<2x128xf32>)
// CHECK: arith.addf
// CHECK: %[[DIV:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] : tensor<2x128xf32>, tensor<2xf32>) outs(%[[TILE]] : tensor<2x128xf32>)
// CHECK: arith.divf
// CHECK: tensor.parallel_insert_slice %[[DIV]] into %[[OUT]][%[[I]], 0] [2, 128] [1, 1]
// CHECK-NOT: linalg.generic
// CHECK: return
// SERIAL-LABEL: func.func @softmax
// SERIAL: scf.for %{{.*}} = %c0 to %c64 step %c2 iter_args
// After bufferization: one small buffer per tile (on the heap: an alloca in
// the loop would grow the stack every tile), nothing of 64 x 128.
// BUF-LABEL: func.func @softmax
// BUF-NOT: memref<64x128xf32> = memref.alloc
// BUF: scf.forall
// BUF: memref.alloc() {{.*}} : memref<2xf32>
// BUF-NOT: memref.alloc
// BUF: return
func.func @softmax(%arg0: memref<64x128xf32>, %arg1: memref<64x128xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<64x128xf32> to tensor<64x128xf32>
  %e0 = tensor.empty() : tensor<64xf32>
  %acc = tensor.expand_shape %e0 [[0, 1]] output_shape [64, 1] : tensor<64xf32> into tensor<64x1xf32>
  %init_max = linalg.fill ins(%ninf : f32) outs(%acc : tensor<64x1xf32>) -> tensor<64x1xf32>
  %x3 = tensor.expand_shape %x [[0, 1], [2]] output_shape [64, 1, 128] : tensor<64x128xf32> into tensor<64x1x128xf32>
  %max = linalg.generic {indexing_maps = [#id3, #kd3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x3 : tensor<64x1x128xf32>) outs(%init_max : tensor<64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in fastmath<reassoc> : f32
    linalg.yield %m : f32
  } -> tensor<64x1xf32>
  %full = tensor.empty() : tensor<64x128xf32>
  %exp = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<64x128xf32>, tensor<64x1xf32>) outs(%full : tensor<64x128xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  %init_sum = linalg.fill ins(%zero : f32) outs(%acc : tensor<64x1xf32>) -> tensor<64x1xf32>
  %exp3 = tensor.expand_shape %exp [[0, 1], [2]] output_shape [64, 1, 128] : tensor<64x128xf32> into tensor<64x1x128xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #kd3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%exp3 : tensor<64x1x128xf32>) outs(%init_sum : tensor<64x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<64x1xf32>
  %res = linalg.generic {indexing_maps = [#id, #bc, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<64x128xf32>, tensor<64x1xf32>) outs(%full : tensor<64x128xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<64x128xf32>
  bufferization.materialize_in_destination %res in restrict writable %arg1 : (tensor<64x128xf32>, memref<64x128xf32>) -> ()
  return
}

// A softmax over columns: the tiles are of columns (the loop every
// operand is indexed by), 2 columns of 128 each.
// CHECK-LABEL: func.func @column_softmax
// CHECK: scf.forall (%[[J:.*]]) = (0) to (64) step (2)
// CHECK: tensor.extract_slice %{{.*}}[0, %[[J]]] [128, 2] [1, 1] : tensor<128x64xf32> to tensor<128x2xf32>
// CHECK: iterator_types = ["reduction", "parallel"]
// CHECK: math.exp
// CHECK: iterator_types = ["reduction", "parallel"]
// CHECK: arith.divf
// CHECK: return
func.func @column_softmax(%x: tensor<128x64xf32>, %out: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %acc = tensor.empty() : tensor<64xf32>
  %init_max = linalg.fill ins(%ninf : f32) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<128x64xf32>) outs(%init_max : tensor<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %o, %in fastmath<reassoc> : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %full = tensor.empty() : tensor<128x64xf32>
  %exp = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<128x64xf32>, tensor<64xf32>) outs(%full : tensor<128x64xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<128x64xf32>
  %init_sum = linalg.fill ins(%zero : f32) outs(%acc : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%exp : tensor<128x64xf32>) outs(%init_sum : tensor<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %res = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<128x64xf32>, tensor<64xf32>) outs(%out : tensor<128x64xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<128x64xf32>
  return %res : tensor<128x64xf32>
}

// x - x.sum() needs the whole sum in every tile: nothing is tiled.
// CHECK-LABEL: func.func @full_sum_read_everywhere
// CHECK-NOT: scf.forall
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK-NOT: scf.forall
// CHECK: return
func.func @full_sum_read_everywhere(%x: tensor<64x128xf32>, %out: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<64x128xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %res = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<64x128xf32>, tensor<f32>) outs(%out : tensor<64x128xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %d = arith.subf %in, %s : f32
    linalg.yield %d : f32
  } -> tensor<64x128xf32>
  return %res : tensor<64x128xf32>
}

// No reduction is read: elementwise work stays as fusion left it.
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK-NOT: scf.forall
// CHECK: return
func.func @elementwise(%x: tensor<64x128xf32>, %out: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %res = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x128xf32>) outs(%out : tensor<64x128xf32>) {
  ^bb0(%in: f32, %o: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<64x128xf32>
  return %res : tensor<64x128xf32>
}

// Rows of 1024 are longer than a tile's 256 elements: one row per tile.
// CHECK-LABEL: func.func @rms_long_rows
// CHECK: scf.forall (%[[I:.*]]) in (8)
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], 0] [1, 1024] [1, 1]
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: math.rsqrt
// CHECK: return
func.func @rms_long_rows(%x: tensor<8x1024xf32>, %out: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%acc : tensor<8xf32>) -> tensor<8xf32>
  %ss = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x1024xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %o, %sq fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %res = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<8x1024xf32>, tensor<8xf32>) outs(%out : tensor<8x1024xf32>) {
  ^bb0(%in: f32, %s: f32, %o: f32):
    %r = math.rsqrt %s : f32
    %y = arith.mulf %in, %r : f32
    linalg.yield %y : f32
  } -> tensor<8x1024xf32>
  return %res : tensor<8x1024xf32>
}

// Rows of no elements: left alone (tiling divides by the loop ranges).
// CHECK-LABEL: func.func @empty_rows
// CHECK-NOT: scf.forall
// CHECK: return
func.func @empty_rows(%x: tensor<8x0xf32>, %out: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %acc = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%acc : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x0xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %o, %in fastmath<reassoc> : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %res = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%sum : tensor<8xf32>) outs(%out : tensor<8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %h = arith.mulf %in, %in : f32
    linalg.yield %h : f32
  } -> tensor<8xf32>
  return %res : tensor<8xf32>
}

// A dynamic number of rows: tiles of 2 rows of 128, the last one partial
// (affine.min), every step fused in; parallel tiles from
// `parallel-threshold` iterations, known when the kernel runs, serial ones
// below (a fork costs more than a small softmax). After bufferization one
// buffer per tile, of the tile's rows, and both loops write the caller's.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x128xf32>
// CHECK: %[[WORK:.*]] = arith.muli %[[N]], %c128
// CHECK: %[[LARGE:.*]] = arith.cmpi sge, %{{.*}}, %c1
// CHECK: scf.if %[[LARGE]] -> (tensor<?x128xf32>)
// CHECK: scf.forall (%[[I:.*]]) = (0) to (%[[N]]) step (2) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x128xf32>)
// CHECK: %[[ROWS:.*]] = affine.min #{{.*}}(%[[I]])[%[[N]]]
// CHECK: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0] [%[[ROWS]], 128] [1, 1] : tensor<?x128xf32> to tensor<?x128xf32>
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x128xf32>)
// CHECK: %[[SHIFTED:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] : tensor<?x128xf32>, tensor<?xf32>)
// CHECK: tensor.parallel_insert_slice %[[SHIFTED]] into %[[OUT]][%[[I]], 0] [%[[ROWS]], 128] [1, 1]
// CHECK: } else {
// CHECK: scf.for %[[J:.*]] = %c0 to %[[N]] step %c2 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x128xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK: %[[SHIFTED2:.*]] = linalg.generic
// CHECK: tensor.insert_slice %[[SHIFTED2]] into %[[ACC]][%[[J]], 0]
// CHECK-NOT: linalg.generic
// CHECK: return
// BUF-LABEL: func.func @dynamic_rows
// BUF-NOT: memref<?x128xf32> = memref.alloc
// BUF: scf.if
// BUF: scf.forall
// BUF: memref.alloc(%{{.*}}) {{.*}} : memref<?xf32>
// BUF: subview %arg1
// BUF: } else {
// BUF: scf.for
// BUF: memref.alloc(%{{.*}}) {{.*}} : memref<?xf32>
// BUF: subview %arg1
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @dynamic_rows(%arg0: memref<?x128xf32>, %arg1: memref<?x128xf32>) {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<?x128xf32> to tensor<?x128xf32>
  %n = tensor.dim %x, %c0 : tensor<?x128xf32>
  %e0 = tensor.empty(%n) : tensor<?xf32>
  %init_max = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<?xf32>) -> tensor<?xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x128xf32>) outs(%init_max : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in fastmath<reassoc> : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  %full = tensor.empty(%n) : tensor<?x128xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<?x128xf32>, tensor<?xf32>) outs(%full : tensor<?x128xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x128xf32>
  bufferization.materialize_in_destination %shifted in restrict writable %arg1 : (tensor<?x128xf32>, memref<?x128xf32>) -> ()
  return
}

// Rows of a dynamic length: rows per tile computed at run time
// (tile-elements / length, at least 1; 0 elements count as 1), every step
// fused in.
// CHECK-LABEL: func.func @dynamic_row_length
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x?xf32>
// CHECK: %[[LEN:.*]] = tensor.dim %{{.*}}, %c1 : tensor<?x?xf32>
// CHECK: %[[PER:.*]] = arith.maxui %[[LEN]], %c1
// CHECK: %[[COUNT:.*]] = arith.divui %c256, %[[PER]]
// CHECK: %[[STEP:.*]] = arith.maxui %[[COUNT]], %c1
// CHECK: %[[WORK:.*]] = arith.muli %[[N]], %[[LEN]]
// CHECK: scf.if
// CHECK: scf.forall (%[[I:.*]]) = (0) to (%[[N]]) step (%[[STEP]])
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK: tensor.parallel_insert_slice
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %[[N]] step %[[STEP]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dynamic_row_length(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %len = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e0 = tensor.empty(%n) : tensor<?xf32>
  %init_max = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<?xf32>) -> tensor<?xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<?x?xf32>) outs(%init_max : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in fastmath<reassoc> : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  %full = tensor.empty(%n, %len) : tensor<?x?xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<?x?xf32>, tensor<?xf32>) outs(%full : tensor<?x?xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %s = arith.subf %in, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %shifted : tensor<?x?xf32>
}
