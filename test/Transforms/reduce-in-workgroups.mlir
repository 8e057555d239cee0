// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-reduce-in-workgroups{threads=4},canonicalize,cse))' --split-input-file | FileCheck %s
// RUN: pk-opt %s --pass-pipeline='builtin.module(func.func(pk-reduce-in-workgroups))' --split-input-file | FileCheck %s --check-prefix=SHORT
// RUN: not pk-opt %s --pass-pipeline='builtin.module(func.func(pk-reduce-in-workgroups{threads=6}))' --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: threads must be a power of two, and min-length and elements-per-thread positive

// -----

// A row sum: a workgroup of 4 threads per row; thread t adds elements t,
// t + 4, ... from zero, the partial sums meet in a tree in workgroup memory,
// and thread 0 adds the total to the output element.
// CHECK-LABEL: func.func @rows
// CHECK-NOT: linalg.
// CHECK: gpu.launch blocks(%[[ROW:[^,]*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c8, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[T:[^,]*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: %[[PART:.*]] = scf.for %[[J:.*]] = %[[T]] to %c1000 step %c4 iter_args(%[[ACC:.*]] = %cst) -> (f32)
// CHECK: %[[X:.*]] = memref.load %arg0[%[[ROW]], %[[J]]]
// CHECK: arith.addf %[[ACC]], %[[X]] fastmath<reassoc>
// CHECK: } {pk.max_trip_count = 250 : i64}
// CHECK: %[[TREE:.*]] = memref.alloc() : memref<4xf32, 3>
// CHECK: memref.store %[[PART]], %[[TREE]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: %[[LOW:.*]] = arith.cmpi ult, %[[T]], %c2
// CHECK: scf.if %[[LOW]]
// CHECK: %[[UP:.*]] = arith.addi %[[T]], %c2
// CHECK: memref.load %[[TREE]][%[[UP]]]
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[TREE]][%[[T]]]
// CHECK: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[T]], %c1
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[T0:.*]] = memref.load %[[TREE]][%c0]
// CHECK: %[[T1:.*]] = memref.load %[[TREE]][%c1]
// CHECK: %[[TOTAL:.*]] = arith.addf %[[T0]], %[[T1]] fastmath<reassoc>
// CHECK: %[[INIT:.*]] = memref.load %arg1[%[[ROW]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[INIT]], %[[TOTAL]] fastmath<reassoc>
// CHECK: memref.store %[[SUM]], %arg1[%[[ROW]]]
// CHECK-NOT: gpu.barrier
// CHECK: gpu.terminator
func.func @rows(%x: memref<8x1000xf32>, %o: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x1000xf32>) outs(%o : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Elementwise work fused into the reduction runs in each thread's loop; a
// keepdims operand is read at index 0 of its unit dimension.
// CHECK-LABEL: func.func @fused_body
// CHECK: gpu.launch blocks(%[[ROW:[^,]*]], %{{.*}}, %{{.*}}) in
// CHECK: scf.for
// CHECK: memref.load %arg1[%[[ROW]], %c0]
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: } {pk.max_trip_count = 75 : i64}
func.func @fused_body(%x: memref<4x300xf32>, %m: memref<4x1xf32>, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<4x300xf32>, memref<4x1xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %0 = arith.subf %in, %max : f32
    %1 = math.exp %0 : f32
    %2 = arith.addf %out, %1 fastmath<reassoc> : f32
    linalg.yield %2 : f32
  }
  return
}

// -----

// Several reduced loops around the parallel one: a thread's position in the
// 9 x 30 reduced elements is delinearized; integer max starts from INT_MIN.
// CHECK-LABEL: func.func @middle_axes
// CHECK: %[[MIN:.*]] = arith.constant -2147483648 : i32
// CHECK: gpu.launch blocks(%[[B:[^,]*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c20,
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %c270 step %c4 iter_args(%{{.*}} = %[[MIN]])
// CHECK: %[[K:.*]] = arith.remui %[[E]], %c30
// CHECK: %[[I:.*]] = arith.divui %[[E]], %c30
// CHECK: memref.load %arg0[%[[I]], %[[B]], %[[K]]]
// CHECK: arith.maxsi
// CHECK: memref.alloc() : memref<4xi32, 3>
func.func @middle_axes(%x: memref<9x20x30xi32>, %o: memref<20xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : memref<9x20x30xi32>) outs(%o : memref<20xi32>) {
  ^bb0(%in: i32, %out: i32):
    %0 = arith.maxsi %out, %in : i32
    linalg.yield %0 : i32
  }
  return
}

// -----

// A full reduction: one workgroup; minimumf starts from +inf.
// CHECK-LABEL: func.func @full
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[INF]])
// CHECK: arith.minimumf
// CHECK: memref.load %arg1[]
// CHECK: memref.store %{{.*}}, %arg1[]
func.func @full(%x: memref<100xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<100xf32>) outs(%o : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.minimumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// More outputs than one grid dimension counts: 35000 x 2 workgroups.
// CHECK-LABEL: func.func @many_rows
// CHECK: gpu.launch blocks(%[[BX:[^,]*]], %[[BY:[^,]*]], %{{.*}}) in (%{{.*}} = %c35000, %{{.*}} = %c2, %{{.*}} = %c1)
// CHECK: %[[SCALED:.*]] = arith.muli %[[BY]], %c35000
// CHECK: %[[ROW:.*]] = arith.addi %[[SCALED]], %[[BX]]
// CHECK: memref.load %arg0[%[[ROW]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %arg1[%[[ROW]]]
func.func @many_rows(%x: memref<70000x64xf32>, %o: memref<70000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<70000x64xf32>) outs(%o : memref<70000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: gpu.launch
func.func @left_alone(%x: memref<3000x2000xf32>, %cols: memref<2000xf32>,
                      %b: memref<8x100xi1>, %any: memref<8xi1>,
                      %s: memref<8x100xf32>, %strict: memref<8xf32>,
                      %short: memref<8x63xf32>, %shorts: memref<8xf32>) {
  // A column sum with many outputs: a thread per column reads contiguously.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<3000x2000xf32>) outs(%cols : memref<2000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  // Booleans have no shared-memory layout.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<8x100xi1>) outs(%any : memref<8xi1>) {
  ^bb0(%in: i1, %out: i1):
    %0 = arith.ori %out, %in : i1
    linalg.yield %0 : i1
  }
  // A float sum that may not be regrouped.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : memref<8x100xf32>) outs(%strict : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  // Fewer than min-length elements per output.
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<8x63xf32>) outs(%shorts : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A reversed input (a negative-step slice fused into the reduction) is read
// through an affine.apply of the thread's element.
// CHECK-LABEL: func.func @reversed
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %c1000 step %c4
// CHECK: %[[R:.*]] = affine.apply #{{.*}}(%[[E]])
// CHECK: memref.load %arg0[%[[R]]]
// CHECK: memref.load %arg1[%[[E]]]
// With the default 128 threads, a reduction of 64 elements per output gets
// 8 threads of 8 elements each; one of 1000, 64 threads.
// SHORT-LABEL: func.func @reversed
// SHORT: threads({{.*}}) in (%{{.*}} = %c64,
// SHORT-LABEL: func.func @short
// SHORT: threads({{.*}}) in (%{{.*}} = %c8,
func.func @reversed(%x: memref<1000xf32>, %y: memref<1000xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (-d0 + 999)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x, %y : memref<1000xf32>, memref<1000xf32>) outs(%o : memref<f32>) {
  ^bb0(%in: f32, %w: f32, %out: f32):
    %0 = arith.mulf %in, %w : f32
    %1 = arith.addf %out, %0 fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  return
}
func.func @short(%x: memref<5x64xf32>, %o: memref<5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<5x64xf32>) outs(%o : memref<5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  return
}
