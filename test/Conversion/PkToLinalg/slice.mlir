// Slices become tensor.extract_slice / tensor.insert_slice with positive
// strides; a dimension walked backwards reads from its other end and is
// reversed by a generic whose input map is `size - 1 - d`. Tensor slices
// keep every dimension: the ones an integer index drops are collapsed (or,
// for an insert, expanded) by reshapes of their own.
// RUN: pk-opt %s --convert-pk-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK: %[[X:.*]] = bufferization.to_tensor
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][1, 0] [2, 4] [1, 2] : tensor<4x8xf32> to tensor<2x4xf32>
// CHECK: bufferization.materialize_in_destination %[[S]]
pk.kernel @forward(%x: !pk.ref<4x8xf32>, %o: !pk.ref<2x4xf32>) {
  %0 = pk.load %x : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %1 = pk.extract_slice %0 offsets [1, 0] sizes [2, 4] strides [1, 2] : tensor<4x8xf32> -> tensor<2x4xf32>
  pk.store %1, %o : tensor<2x4xf32> -> !pk.ref<2x4xf32>
  pk.return
}

// -----

// x[3, ::-2] of a 4x8 array: row 3 is dropped, the columns 7, 5, 3, 1 are
// read as the forward slice 1, 3, 5, 7 reversed.
// CHECK-DAG: #[[REVERSED:.*]] = affine_map<(d0) -> (-d0 + 3)>
// CHECK-LABEL: func.func @backward
// CHECK: %[[F:.*]] = tensor.extract_slice %{{.*}}[3, 1] [1, 4] [1, 2] : tensor<4x8xf32> to tensor<1x4xf32>
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[F]] {{\[\[}}0, 1]] : tensor<1x4xf32> into tensor<4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[REVERSED]], #{{.*}}], iterator_types = ["parallel"]} ins(%[[S]] : tensor<4xf32>)
pk.kernel @backward(%x: !pk.ref<4x8xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %x : !pk.ref<4x8xf32> -> tensor<4x8xf32>
  %1 = pk.extract_slice %0 offsets [3, 7] sizes [1, 4] strides [1, -2] : tensor<4x8xf32> -> tensor<4xf32>
  pk.store %1, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// o[1] = v[::-1] on a 3x4 ref: the value is reversed, then inserted into the
// ref's current contents (a writable tensor: the ref is also stored).
// CHECK-LABEL: func.func @insert
// CHECK-SAME: (%[[V:.*]]: memref<4xi32>, %[[O:.*]]: memref<3x4xi32>)
// CHECK: %[[OLD:.*]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK: %[[REV:.*]] = linalg.generic
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[REV]] {{\[\[}}0, 1]] output_shape [1, 4] : tensor<4xi32> into tensor<1x4xi32>
// CHECK: %[[NEW:.*]] = tensor.insert_slice %[[ROW]] into %[[OLD]][1, 0] [1, 4] [1, 1] : tensor<1x4xi32> into tensor<3x4xi32>
// CHECK: bufferization.materialize_in_destination %[[NEW]] in writable %[[O]]
pk.kernel @insert(%v: !pk.ref<4xi32>, %o: !pk.ref<3x4xi32>) {
  %0 = pk.load %v : !pk.ref<4xi32> -> tensor<4xi32>
  %1 = pk.load %o : !pk.ref<3x4xi32> -> tensor<3x4xi32>
  %2 = pk.insert_slice %0 into %1 offsets [1, 3] sizes [1, 4] strides [1, -1] : tensor<4xi32> -> tensor<3x4xi32>
  pk.store %2, %o : tensor<3x4xi32> -> !pk.ref<3x4xi32>
  pk.return
}

// -----

// An empty slice may start anywhere: it is a new tensor of no elements.
// CHECK-LABEL: func.func @empty
// CHECK-NOT: tensor.extract_slice
// CHECK: tensor.empty() : tensor<0xf32>
pk.kernel @empty(%x: !pk.ref<4xf32>, %o: !pk.ref<0xf32>) {
  %0 = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.extract_slice %0 offsets [9] sizes [0] strides [-3] : tensor<4xf32> -> tensor<0xf32>
  pk.store %1, %o : tensor<0xf32> -> !pk.ref<0xf32>
  pk.return
}

// -----

// A slice of a dimension that varies: pk.slice_size is index arithmetic,
// max(0, ceil((n - offset) / step)), and the tensor slices take it as
// their size.
// CHECK-LABEL: func.func @dynamic_stencil
// CHECK: %[[N:.*]] = memref.dim %arg0, %{{.*}} : memref<?xf32>
// CHECK: %[[D:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[C:.*]] = arith.ceildivsi %[[D]], %{{.*}} : index
// CHECK: %[[M:.*]] = arith.maxsi %[[C]], %{{.*}} : index
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[1] [%[[M]]] [2] : tensor<?xf32> to tensor<?xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[1] [%[[M]]] [2] : tensor<?xf32> into tensor<?xf32>
pk.kernel @dynamic_stencil(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 1 step 2
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %s = pk.extract_slice %v offsets [1] sizes [%m] strides [2] : tensor<?xf32> -> tensor<?xf32>
  %t = pk.neg %s : tensor<?xf32>
  %w = pk.load %o : !pk.ref<?xf32> -> tensor<?xf32>
  %i = pk.insert_slice %t into %w offsets [1] sizes [%m] strides [2] : tensor<?xf32> -> tensor<?xf32>
  pk.store %i, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

// o[...] = x[1:] - x[:-1]: o's size is derived from x's (one less), and o
// is viewed with it (the caller checked that o has it).
// CHECK-LABEL: func.func @derived
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<?x3xf32>, %[[O:[a-z0-9]+]]: memref<?x3xf32>)
// CHECK: %[[N:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x3xf32>
// CHECK: %[[LESS:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[M:.*]] = arith.maxsi %[[LESS]], %{{.*}} : index
// CHECK: memref.reinterpret_cast %[[O]] to offset: [0], sizes: [%[[M]], 3], strides: [3, 1]
pk.kernel @derived(%x: !pk.ref<?x3xf32>, %o: !pk.ref<?x3xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?x3xf32>
  %m = pk.slice_size %n offset 1 step 1
  %v = pk.load %x : !pk.ref<?x3xf32> -> tensor<?x3xf32>
  %a = pk.extract_slice %v offsets [1, 0] sizes [%m, 3] strides [1, 1] : tensor<?x3xf32> -> tensor<?x3xf32>
  %b = pk.extract_slice %v offsets [0, 0] sizes [%m, 3] strides [1, 1] : tensor<?x3xf32> -> tensor<?x3xf32>
  %d = pk.sub %a, %b : tensor<?x3xf32>
  pk.store %d, %o : tensor<?x3xf32> -> !pk.ref<?x3xf32>
  pk.return
}

// -----

// Both dimensions of x one size (their counts from x's first): o's class
// is derived from it, though x's dimensions unite only while slices are
// checked.
// CHECK-LABEL: func.func @derived_square
// CHECK: %[[N:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x?xf32>
// CHECK: %[[LESS:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[M:.*]] = arith.maxsi %[[LESS]], %{{.*}} : index
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%[[M]], %[[M]]], strides: [%[[M]], 1]
pk.kernel @derived_square(%x: !pk.ref<?x?xf32>, %o: !pk.ref<?x?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?x?xf32>
  %m = pk.slice_size %n offset 1 step 1
  %v = pk.load %x : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %a = pk.extract_slice %v offsets [1, 1] sizes [%m, %m] strides [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %b = pk.extract_slice %v offsets [0, 0] sizes [%m, %m] strides [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %d = pk.sub %a, %b : tensor<?x?xf32>
  pk.store %d, %o : tensor<?x?xf32> -> !pk.ref<?x?xf32>
  pk.return
}

// -----

// Slices of no elements next to a dynamic size (x of 0 rows): a new tensor
// for an extract, nothing for an insert (tensor slices want offsets inside
// every dimension, and a dimension of size 0 has none).
// CHECK-LABEL: func.func @no_rows
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: tensor.insert_slice
// CHECK: tensor.empty(%{{.*}}) : tensor<0x?xf64>
// CHECK-NOT: tensor.extract_slice
// CHECK-NOT: tensor.insert_slice
pk.kernel @no_rows(%x: !pk.ref<0x?xf64>, %o: !pk.ref<0x?xf64>) {
  %n = pk.dim %x[1] : !pk.ref<0x?xf64>
  %m = pk.slice_size %n offset 1 step 1
  %v = pk.load %x : !pk.ref<0x?xf64> -> tensor<0x?xf64>
  %a = pk.extract_slice %v offsets [0, 1] sizes [0, %m] strides [1, 1] : tensor<0x?xf64> -> tensor<0x?xf64>
  %w = pk.load %o : !pk.ref<0x?xf64> -> tensor<0x?xf64>
  %i = pk.insert_slice %a into %w offsets [0, 1] sizes [0, %m] strides [1, 1] : tensor<0x?xf64> -> tensor<0x?xf64>
  pk.store %i, %o : tensor<0x?xf64> -> !pk.ref<0x?xf64>
  pk.return
}

// -----

// Slices counted from the end start at a value: x[-3:-1] at n - 3; x[:-3:-1]
// reads n - 2 and n - 1 forwards from n - 1 - 1, then reverses them.
// CHECK-LABEL: func.func @from_the_end
// CHECK: %[[N:.*]] = memref.dim %arg0, %{{.*}} : memref<?xf32>
// CHECK: %[[D3:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[N3:.*]] = arith.maxsi %[[D3]], %{{.*}} : index
// CHECK: %[[D1:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK: %[[N1:.*]] = arith.maxsi %[[D1]], %{{.*}} : index
// CHECK: tensor.extract_slice %{{.*}}[%[[N3]]] [2] [1] : tensor<?xf32> to tensor<2xf32>
// CHECK: %[[FIRST:.*]] = arith.addi %[[N1]], %{{.*}} : index
// CHECK: %[[B:.*]] = tensor.extract_slice %{{.*}}[%[[FIRST]]] [2] [1] : tensor<?xf32> to tensor<2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<2xf32>)
pk.kernel @from_the_end(%x: !pk.ref<?xf32>, %o: !pk.ref<2xf32>, %p: !pk.ref<2xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %n3 = pk.slice_size %n offset 3 step 1
  %n1 = pk.slice_size %n offset 1 step 1
  %0 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.extract_slice %0 offsets [%n3] sizes [2] strides [1] : tensor<?xf32> -> tensor<2xf32>
  pk.store %1, %o : tensor<2xf32> -> !pk.ref<2xf32>
  %2 = pk.extract_slice %0 offsets [%n1] sizes [2] strides [-1] : tensor<?xf32> -> tensor<2xf32>
  pk.store %2, %p : tensor<2xf32> -> !pk.ref<2xf32>
  pk.return
}

// -----

// x[::-1] of a dynamic size: the forward slice from its last index (0 when
// empty), then each element gathered from n - 1 - i.
// CHECK-LABEL: func.func @reversed
// CHECK: %[[FIRST:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[%[[FIRST]]] [%{{.*}}] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK: tensor.extract %[[S]][%[[J]]] : tensor<?xf32>
pk.kernel @reversed(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %n1 = pk.slice_size %n offset 1 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %r = pk.extract_slice %v offsets [%n1] sizes [%n] strides [-1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %r, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}
