// Folds and canonicalizations of the pk dialect: only rewrites that are
// exact for every input (no float identities that change -0.0 or NaNs).
// RUN: pk-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: pk.kernel @fold_float_arithmetic
// CHECK-DAG: %[[SUM:.*]] = pk.constant dense<3.500000e+00> : tensor<4xf32>
// CHECK-DAG: %[[QUOT:.*]] = pk.constant dense<0x7F800000> : tensor<4xf32>
// CHECK-DAG: %[[NEG:.*]] = pk.constant dense<-1.500000e+00> : tensor<4xf32>
// CHECK: pk.store %[[SUM]], %{{.*}}
// CHECK: pk.store %[[QUOT]], %{{.*}}
// CHECK: pk.store %[[NEG]], %{{.*}}
// CHECK-NOT: pk.add
// CHECK-NOT: pk.div
// CHECK-NOT: pk.neg
pk.kernel @fold_float_arithmetic(%o: !pk.ref<4xf32>, %p: !pk.ref<4xf32>, %q: !pk.ref<4xf32>) {
  %0 = pk.constant dense<1.5> : tensor<4xf32>
  %1 = pk.constant dense<2.0> : tensor<4xf32>
  %2 = pk.add %0, %1 : tensor<4xf32>
  pk.store %2, %o : tensor<4xf32> -> !pk.ref<4xf32>
  %zero = pk.constant dense<0.0> : tensor<4xf32>
  %3 = pk.div %1, %zero : tensor<4xf32>
  pk.store %3, %p : tensor<4xf32> -> !pk.ref<4xf32>
  %4 = pk.neg %0 : tensor<4xf32>
  pk.store %4, %q : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// Dense (non-splat) operands fold element by element.
// CHECK-LABEL: pk.kernel @fold_dense
// CHECK: %[[C:.*]] = pk.constant dense<[4, 10, 18]> : tensor<3xi32>
// CHECK: pk.store %[[C]]
pk.kernel @fold_dense(%o: !pk.ref<3xi32>) {
  %0 = pk.constant dense<[1, 2, 3]> : tensor<3xi32>
  %1 = pk.constant dense<[4, 5, 6]> : tensor<3xi32>
  %2 = pk.mul %0, %1 : tensor<3xi32>
  pk.store %2, %o : tensor<3xi32> -> !pk.ref<3xi32>
  pk.return
}

// -----

// Folding rounds in the element's own format and wraps integers, like the
// generated code: f16 1.0 + 2^-11 is a tie that rounds to even (1.0), and
// i8 127 + 1 is -128.
// CHECK-LABEL: pk.kernel @fold_in_element_format
// CHECK-DAG: %[[H:.*]] = pk.constant dense<1.000000e+00> : tensor<2xf16>
// CHECK-DAG: %[[I:.*]] = pk.constant dense<-128> : tensor<2xi8>
// CHECK: pk.store %[[H]]
// CHECK: pk.store %[[I]]
pk.kernel @fold_in_element_format(%h: !pk.ref<2xf16>, %i: !pk.ref<2xi8>) {
  %0 = pk.constant dense<1.0> : tensor<2xf16>
  %1 = pk.constant dense<4.8828125E-4> : tensor<2xf16>
  %2 = pk.add %0, %1 : tensor<2xf16>
  pk.store %2, %h : tensor<2xf16> -> !pk.ref<2xf16>
  %3 = pk.constant dense<127> : tensor<2xi8>
  %4 = pk.constant dense<1> : tensor<2xi8>
  %5 = pk.add %3, %4 : tensor<2xi8>
  pk.store %5, %i : tensor<2xi8> -> !pk.ref<2xi8>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @integer_identities
// CHECK-SAME: (%[[X:.*]]: !pk.ref<4xi32>, %[[O1:.*]]: !pk.ref<4xi32>, %[[O2:.*]]: !pk.ref<4xi32>, %[[O3:.*]]: !pk.ref<4xi32>, %[[O4:.*]]: !pk.ref<4xi32>)
// CHECK: %[[V:.*]] = pk.load %[[X]]
// CHECK-NEXT: pk.store %[[V]], %[[O1]]
// CHECK-NEXT: pk.store %[[V]], %[[O2]]
// CHECK-NEXT: pk.store %[[V]], %[[O3]]
// CHECK-NEXT: pk.store %[[V]], %[[O4]]
pk.kernel @integer_identities(%x: !pk.ref<4xi32>, %o1: !pk.ref<4xi32>, %o2: !pk.ref<4xi32>, %o3: !pk.ref<4xi32>, %o4: !pk.ref<4xi32>) {
  %v = pk.load %x : !pk.ref<4xi32> -> tensor<4xi32>
  %zero = pk.constant dense<0> : tensor<4xi32>
  %one = pk.constant dense<1> : tensor<4xi32>
  %0 = pk.add %v, %zero : tensor<4xi32>
  pk.store %0, %o1 : tensor<4xi32> -> !pk.ref<4xi32>
  %1 = pk.add %zero, %v : tensor<4xi32>
  pk.store %1, %o2 : tensor<4xi32> -> !pk.ref<4xi32>
  %2 = pk.sub %v, %zero : tensor<4xi32>
  pk.store %2, %o3 : tensor<4xi32> -> !pk.ref<4xi32>
  %3 = pk.mul %one, %v : tensor<4xi32>
  pk.store %3, %o4 : tensor<4xi32> -> !pk.ref<4xi32>
  pk.return
}

// -----

// The same identities are NOT applied to floats: -0.0 + 0.0 is +0.0, and
// x * 1.0 quiets a signaling NaN.
// CHECK-LABEL: pk.kernel @no_float_identities
// CHECK: pk.add
// CHECK: pk.mul
pk.kernel @no_float_identities(%x: !pk.ref<4xf32>, %o1: !pk.ref<4xf32>, %o2: !pk.ref<4xf32>) {
  %v = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %zero = pk.constant dense<0.0> : tensor<4xf32>
  %one = pk.constant dense<1.0> : tensor<4xf32>
  %0 = pk.add %v, %zero : tensor<4xf32>
  pk.store %0, %o1 : tensor<4xf32> -> !pk.ref<4xf32>
  %1 = pk.mul %v, %one : tensor<4xf32>
  pk.store %1, %o2 : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @double_negation
// CHECK-SAME: (%[[X:.*]]: !pk.ref<4xf32>, %[[O:.*]]: !pk.ref<4xf32>)
// CHECK-NEXT: %[[V:.*]] = pk.load %[[X]]
// CHECK-NEXT: pk.store %[[V]], %[[O]]
pk.kernel @double_negation(%x: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %v = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %0 = pk.neg %v : tensor<4xf32>
  %1 = pk.neg %0 : tensor<4xf32>
  pk.store %1, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @broadcast_same_shape
// CHECK-SAME: (%[[X:.*]]: !pk.ref<2x3xf32>, %[[O:.*]]: !pk.ref<2x3xf32>)
// CHECK-NEXT: %[[V:.*]] = pk.load %[[X]]
// CHECK-NEXT: pk.store %[[V]], %[[O]]
pk.kernel @broadcast_same_shape(%x: !pk.ref<2x3xf32>, %o: !pk.ref<2x3xf32>) {
  %v = pk.load %x : !pk.ref<2x3xf32> -> tensor<2x3xf32>
  %0 = pk.broadcast %v : tensor<2x3xf32> -> tensor<2x3xf32>
  pk.store %0, %o : tensor<2x3xf32> -> !pk.ref<2x3xf32>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @broadcast_of_broadcast
// CHECK: %[[V:.*]] = pk.load
// CHECK-NEXT: %[[B:.*]] = pk.broadcast %[[V]] : tensor<3xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: pk.store %[[B]]
pk.kernel @broadcast_of_broadcast(%x: !pk.ref<3xf32>, %o: !pk.ref<4x2x3xf32>) {
  %v = pk.load %x : !pk.ref<3xf32> -> tensor<3xf32>
  %0 = pk.broadcast %v : tensor<3xf32> -> tensor<2x3xf32>
  %1 = pk.broadcast %0 : tensor<2x3xf32> -> tensor<4x2x3xf32>
  pk.store %1, %o : tensor<4x2x3xf32> -> !pk.ref<4x2x3xf32>
  pk.return
}

// -----

// CHECK-LABEL: pk.kernel @broadcast_of_splat
// CHECK: %[[C:.*]] = pk.constant dense<2.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT: pk.store %[[C]]
pk.kernel @broadcast_of_splat(%o: !pk.ref<2x3xf32>) {
  %0 = pk.constant dense<2.0> : tensor<f32>
  %1 = pk.broadcast %0 : tensor<f32> -> tensor<2x3xf32>
  pk.store %1, %o : tensor<2x3xf32> -> !pk.ref<2x3xf32>
  pk.return
}

// -----

// Loads whose value is unused go away; stores never do, and every store to
// a ref is kept in order (the last one wins at run time).
// CHECK-LABEL: pk.kernel @effects_kept
// CHECK-NOT: pk.load %{{.*}} : !pk.ref<4xf64>
// CHECK: pk.store %{{.*}}, %[[O:.*]] :
// CHECK-NEXT: pk.add
// CHECK-NEXT: pk.store %{{.*}}, %[[O]] :
pk.kernel @effects_kept(%x: !pk.ref<4xf32>, %unused: !pk.ref<4xf64>, %o: !pk.ref<4xf32>) {
  %v = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %u = pk.load %unused : !pk.ref<4xf64> -> tensor<4xf64>
  pk.store %v, %o : tensor<4xf32> -> !pk.ref<4xf32>
  %w = pk.add %v, %v : tensor<4xf32>
  pk.store %w, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// A cast to the same type is the value; a round trip through a narrower type
// is not (it may round or wrap).
// CHECK-LABEL: pk.kernel @casts
// CHECK: %[[V:.*]] = pk.load
// CHECK-NEXT: pk.store %[[V]], %{{.*}} :
// CHECK-NEXT: %[[N:.*]] = pk.cast %[[V]] : tensor<4xf64> -> tensor<4xf32>
// CHECK-NEXT: %[[W:.*]] = pk.cast %[[N]] : tensor<4xf32> -> tensor<4xf64>
// CHECK-NEXT: pk.store %[[W]]
pk.kernel @casts(%x: !pk.ref<4xf64>, %o1: !pk.ref<4xf64>, %o2: !pk.ref<4xf64>) {
  %v = pk.load %x : !pk.ref<4xf64> -> tensor<4xf64>
  %0 = pk.cast %v : tensor<4xf64> -> tensor<4xf64>
  pk.store %0, %o1 : tensor<4xf64> -> !pk.ref<4xf64>
  %1 = pk.cast %v : tensor<4xf64> -> tensor<4xf32>
  %2 = pk.cast %1 : tensor<4xf32> -> tensor<4xf64>
  pk.store %2, %o2 : tensor<4xf64> -> !pk.ref<4xf64>
  pk.return
}

// -----

// A slice of the whole array in order is the array; inserting a whole array
// leaves nothing of the destination; a slice of a splat is a splat. A
// reversed whole array is not the array.
// CHECK-LABEL: pk.kernel @fold_slices
// CHECK-SAME: (%[[X:.*]]: !pk.ref<4x4xf32>, %[[O:.*]]: !pk.ref<4x4xf32>, %[[P:.*]]: !pk.ref<2xf32>, %[[Q:.*]]: !pk.ref<4x4xf32>)
// CHECK-DAG: %[[SPLAT:.*]] = pk.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK-DAG: %[[V:.*]] = pk.load %[[X]]
// CHECK: pk.store %[[V]], %[[O]]
// CHECK: pk.store %[[SPLAT]], %[[P]]
// CHECK: %[[REV:.*]] = pk.extract_slice %[[V]] offsets [3, 0] sizes [4, 4] strides [-1, 1]
// CHECK: pk.store %[[REV]], %[[Q]]
// CHECK-NOT: pk.insert_slice
pk.kernel @fold_slices(%x: !pk.ref<4x4xf32>, %o: !pk.ref<4x4xf32>, %p: !pk.ref<2xf32>, %q: !pk.ref<4x4xf32>) {
  %0 = pk.load %x : !pk.ref<4x4xf32> -> tensor<4x4xf32>
  %1 = pk.extract_slice %0 offsets [0, 0] sizes [4, 4] strides [1, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
  %2 = pk.constant dense<1.0> : tensor<4x4xf32>
  %3 = pk.insert_slice %1 into %2 offsets [0, 0] sizes [4, 4] strides [1, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
  pk.store %3, %o : tensor<4x4xf32> -> !pk.ref<4x4xf32>
  %4 = pk.constant dense<3.0> : tensor<4x4xf32>
  %5 = pk.extract_slice %4 offsets [1, 0] sizes [1, 2] strides [1, 2] : tensor<4x4xf32> -> tensor<2xf32>
  pk.store %5, %p : tensor<2xf32> -> !pk.ref<2xf32>
  %6 = pk.extract_slice %0 offsets [3, 0] sizes [4, 4] strides [-1, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
  pk.store %6, %q : tensor<4x4xf32> -> !pk.ref<4x4xf32>
  pk.return
}

// -----

// Arrays without elements have no values: anything computing one (a load
// included) is an empty constant, and inserting one changes nothing.
// CHECK-LABEL: pk.kernel @empty_arrays
// CHECK-SAME: (%[[X:.*]]: !pk.ref<2x0xf32>, %[[O:.*]]: !pk.ref<0xf32>, %[[P:.*]]: !pk.ref<3xf32>)
// CHECK: %[[EMPTY:.*]] = pk.constant dense<> : tensor<0xf32>
// CHECK: pk.store %[[EMPTY]], %[[O]]
// CHECK: %[[V:.*]] = pk.load %[[P]]
// CHECK: pk.store %[[V]], %[[P]]
// CHECK-NOT: pk.extract_slice
// CHECK-NOT: pk.insert_slice
// CHECK-NOT: pk.exp
pk.kernel @empty_arrays(%x: !pk.ref<2x0xf32>, %o: !pk.ref<0xf32>, %p: !pk.ref<3xf32>) {
  %0 = pk.load %x : !pk.ref<2x0xf32> -> tensor<2x0xf32>
  %1 = pk.extract_slice %0 offsets [1, 0] sizes [1, 0] strides [1, 1] : tensor<2x0xf32> -> tensor<0xf32>
  %2 = pk.exp %1 : tensor<0xf32>
  pk.store %2, %o : tensor<0xf32> -> !pk.ref<0xf32>
  %3 = pk.load %p : !pk.ref<3xf32> -> tensor<3xf32>
  %4 = pk.insert_slice %2 into %3 offsets [2] sizes [0] strides [1] : tensor<0xf32> -> tensor<3xf32>
  pk.store %4, %p : tensor<3xf32> -> !pk.ref<3xf32>
  pk.return
}

// -----

// A widened integer compared with a constant compares in its own type when
// the constant fits it, and is a constant when it does not (int32 values
// are all below 2^40).
// CHECK-LABEL: pk.kernel @narrow_comparisons
// CHECK-DAG: %[[TWO:.*]] = pk.constant dense<2> : tensor<3xi32>
// CHECK-DAG: %[[TRUE:.*]] = pk.constant dense<true> : tensor<3xi1>
// CHECK-DAG: %[[FALSE:.*]] = pk.constant dense<false> : tensor<3xi1>
// CHECK-DAG: %[[X:.*]] = pk.load
// CHECK: %[[LT:.*]] = pk.lt %[[X]], %[[TWO]] : tensor<3xi32>
// CHECK: pk.store %[[LT]]
// CHECK: pk.store %[[TRUE]]
// CHECK: pk.store %[[FALSE]]
// CHECK-NOT: pk.cast
pk.kernel @narrow_comparisons(%x: !pk.ref<3xi32>, %o: !pk.ref<3xi1>, %p: !pk.ref<3xi1>, %q: !pk.ref<3xi1>) {
  %0 = pk.load %x : !pk.ref<3xi32> -> tensor<3xi32>
  %1 = pk.cast %0 : tensor<3xi32> -> tensor<3xi64>
  %2 = pk.constant dense<2> : tensor<3xi64>
  %3 = pk.lt %1, %2 : tensor<3xi64>
  pk.store %3, %o : tensor<3xi1> -> !pk.ref<3xi1>
  %big = pk.constant dense<1099511627776> : tensor<3xi64>
  %4 = pk.lt %1, %big : tensor<3xi64>
  pk.store %4, %p : tensor<3xi1> -> !pk.ref<3xi1>
  %5 = pk.ge %1, %big : tensor<3xi64>
  pk.store %5, %q : tensor<3xi1> -> !pk.ref<3xi1>
  pk.return
}

// -----

// A float remainder by zero is NaN whatever the dividend.
// CHECK-LABEL: pk.kernel @remainder_by_zero
// CHECK: %[[NAN:.*]] = pk.constant dense<0x7FC00000> : tensor<4xf32>
// CHECK: pk.store %[[NAN]]
pk.kernel @remainder_by_zero(%x: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.constant dense<-0.0> : tensor<4xf32>
  %2 = pk.rem %0, %1 : tensor<4xf32>
  pk.store %2, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// Counting every index from 0 is the size itself.
// CHECK-LABEL: pk.kernel @whole_slice_size
// CHECK: %[[N:.*]] = pk.dim
// CHECK-NOT: pk.slice_size
// CHECK: pk.extract_slice %{{.*}} offsets [0] sizes [%[[N]]] strides [1]
pk.kernel @whole_slice_size(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 0 step 1
  %0 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.extract_slice %0 offsets [0] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %2 = pk.exp %1 : tensor<?xf32>
  pk.store %2, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}
