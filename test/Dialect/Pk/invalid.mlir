// One case per verifier rule of the pk dialect.
// RUN: pk-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// !pk.ref
//===----------------------------------------------------------------------===//

// Signed integers are signless ones (i8); NumPy has no 128-bit integers.
// expected-error@+1 {{ref element type must be one of f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64; got 'si8'}}
pk.kernel @explicitly_signed_ref(%o: !pk.ref<4xsi8>) {
  pk.return
}

// -----

// expected-error@+1 {{ref element type must be one of f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64; got 'index'}}
pk.kernel @index_ref(%o: !pk.ref<4xindex>) {
  pk.return
}

// -----

// expected-error@+1 {{ref of shape (4611686018427387904, 4) and 'f32' elements is too large: its size in bytes overflows a signed 64-bit integer}}
pk.kernel @huge_ref(%o: !pk.ref<4611686018427387904x4xf32>) {
  pk.return
}

// -----

//===----------------------------------------------------------------------===//
// pk.kernel
//===----------------------------------------------------------------------===//

// expected-error@+1 {{'pk.kernel' op must take at least one ref: the output}}
pk.kernel @no_arguments() {
  pk.return
}

// -----

// expected-error@+1 {{'pk.kernel' op argument #1 must be a !pk.ref (kernel parameters are references to arrays), got 'tensor<4xf32>'}}
pk.kernel @tensor_argument(%o: !pk.ref<4xf32>, %t: tensor<4xf32>) {
  pk.return
}

// -----

// expected-error@+1 {{'pk.kernel' op must not return values (kernels write their results into refs), got 1 result type(s)}}
pk.kernel @returns_value(%o: !pk.ref<4xf32>) -> tensor<4xf32> {
  pk.return
}

// -----

// expected-error@+1 {{'pk.kernel' op must store to at least one ref (a kernel without a store computes nothing)}}
pk.kernel @no_store(%a: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  pk.return
}

// -----

pk.kernel @foreign_op(%o: !pk.ref<4xf32>) {
  // expected-error@+1 {{'arith.constant' op is not allowed in a kernel: a kernel body is straight-line code of pk operations}}
  %0 = arith.constant dense<1.0> : tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

// expected-error@+1 {{entry block must have 2 arguments to match function signature}}
"pk.kernel"() <{function_type = (!pk.ref<4xf32>, !pk.ref<4xf32>) -> (), sym_name = "block_arguments"}> ({
^bb0(%o: !pk.ref<4xf32>):
  %0 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}) : () -> ()

// -----

// expected-error@+1 {{'pk.kernel' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
"pk.kernel"() <{function_type = (!pk.ref<4xf32>) -> (), sym_name = "two_blocks"}> ({
^bb0(%o: !pk.ref<4xf32>):
  %0 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
^bb1:
  pk.return
}) : () -> ()

// -----

pk.kernel @no_terminator(%o: !pk.ref<4xf32>) {
  %0 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
  // expected-error@+1 {{block with no terminator}}
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
}

// -----

//===----------------------------------------------------------------------===//
// pk.return
//===----------------------------------------------------------------------===//

func.func @return_outside_kernel() {
  // expected-error@+1 {{'pk.return' op expects parent op 'pk.kernel'}}
  pk.return
}

// -----

pk.kernel @return_not_last(%o: !pk.ref<4xf32>) {
  // expected-error@+1 {{'pk.return' op must be the last operation in the parent block}}
  pk.return
  %0 = pk.load %o : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// -----

//===----------------------------------------------------------------------===//
// pk.load / pk.store
//===----------------------------------------------------------------------===//

pk.kernel @load_wrong_type(%a: !pk.ref<4xf32>, %o: !pk.ref<8xf32>) {
  // expected-error@+1 {{'pk.load' op result type 'tensor<8xf32>' does not match the ref's array type 'tensor<4xf32>'}}
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<8xf32>
  pk.store %0, %o : tensor<8xf32> -> !pk.ref<8xf32>
  pk.return
}

// -----

func.func @load_outside_kernel(%a: !pk.ref<4xf32>) {
  // expected-error@+1 {{'pk.load' op expects parent op 'pk.kernel'}}
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  return
}

// -----

pk.kernel @store_wrong_shape(%a: !pk.ref<4xf32>, %o: !pk.ref<2x2xf32>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  // expected-error@+1 {{'pk.store' op stored value of shape (4,) does not match the ref's shape (2, 2)}}
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<2x2xf32>
  pk.return
}

// -----

pk.kernel @store_wrong_element_type(%a: !pk.ref<4xf32>, %o: !pk.ref<4xf64>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  // expected-error@+1 {{'pk.store' op stored element type 'f32' does not match the ref's element type 'f64'}}
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf64>
  pk.return
}

// -----

func.func @store_outside_kernel(%v: tensor<4xf32>, %o: !pk.ref<4xf32>) {
  // expected-error@+1 {{'pk.store' op expects parent op 'pk.kernel'}}
  pk.store %v, %o : tensor<4xf32> -> !pk.ref<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pk.constant
//===----------------------------------------------------------------------===//

func.func @constant_type_mismatch() {
  // expected-error@+1 {{'pk.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "pk.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<8xf32>
  return
}

// -----

func.func @constant_unsupported_element_type() {
  // expected-error@+1 {{'pk.constant' op result #0 must be ranked tensor of pk element type values, but got 'tensor<4xui128>'}}
  %0 = pk.constant dense<1> : tensor<4xui128>
  return
}

// -----

func.func @constant_not_elements() {
  // expected-error@+1 {{invalid properties {value = 1.000000e+00 : f32} for op pk.constant: Invalid attribute `value` in property conversion}}
  %0 = "pk.constant"() <{value = 1.0 : f32}> : () -> tensor<f32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

func.func @add_mixed_types(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error@+1 {{'pk.add' op requires the same type for all operands and results}}
  %0 = "pk.add"(%x, %y) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @sub_mixed_shapes(%x: tensor<4xf32>, %y: tensor<1xf32>) {
  // expected-error@+1 {{'pk.sub' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "pk.sub"(%x, %y) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @mul_booleans(%m: tensor<4xi1>) {
  // expected-error@+1 {{'pk.mul' op operand #0 must be ranked tensor of pk numeric element type values, but got 'tensor<4xi1>'}}
  %0 = pk.mul %m, %m : tensor<4xi1>
  return
}

// -----

func.func @div_integers(%x: tensor<4xi32>) {
  // expected-error@+1 {{'pk.div' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = pk.div %x, %x : tensor<4xi32>
  return
}

// -----

func.func @neg_unranked(%x: tensor<*xf32>) {
  // expected-error@+1 {{'pk.neg' op operand #0 must be ranked tensor of pk numeric element type values, but got 'tensor<*xf32>'}}
  %0 = "pk.neg"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @neg_booleans(%m: tensor<4xi1>) {
  // expected-error@+1 {{'pk.neg' op operand #0 must be ranked tensor of pk numeric element type values, but got 'tensor<4xi1>'}}
  %0 = pk.neg %m : tensor<4xi1>
  return
}

// -----

func.func @cast_changes_shape(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.cast' op all non-scalar operands/results must have the same shape and base type}}
  %0 = pk.cast %x : tensor<4xf32> -> tensor<2x2xf64>
  return
}

// -----

func.func @cast_makes_a_size_static(%x: tensor<?xf32>) {
  // expected-error@+1 {{'pk.cast' op operand of shape (?,) does not match the result's shape (3,)}}
  %0 = pk.cast %x : tensor<?xf32> -> tensor<3xf64>
  return
}

// -----

func.func @cast_makes_a_size_dynamic(%x: tensor<8xf32>) {
  // expected-error@+1 {{'pk.cast' op operand of shape (8,) does not match the result's shape (?,)}}
  %0 = pk.cast %x : tensor<8xf32> -> tensor<?xf64>
  return
}

// -----

func.func @cast_to_unsupported_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.cast' op result #0 must be ranked tensor of pk element type values, but got 'tensor<4xsi32>'}}
  %0 = pk.cast %x : tensor<4xf32> -> tensor<4xsi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pk.broadcast
//===----------------------------------------------------------------------===//

func.func @broadcast_to_lower_rank(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'pk.broadcast' op cannot broadcast shape (2, 3) to (3,): the result has fewer dimensions than the operand}}
  %0 = pk.broadcast %x : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @broadcast_incompatible(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'pk.broadcast' op cannot broadcast shape (2, 3) to (4, 2, 4): operand dimension 1 is 3 but result dimension 2 is 4 (NumPy broadcasting needs them equal or the operand's to be 1)}}
  %0 = pk.broadcast %x : tensor<2x3xf32> -> tensor<4x2x4xf32>
  return
}

// -----

func.func @broadcast_changes_element_type(%x: tensor<3xf32>) {
  // expected-error@+1 {{'pk.broadcast' op failed to verify that all of {operand, result} have same element type}}
  %0 = pk.broadcast %x : tensor<3xf32> -> tensor<2x3xf64>
  return
}

// -----

func.func @broadcast_missing_size(%x: tensor<f32>) {
  // expected-error@+1 {{'pk.broadcast' op takes one size per dynamic result dimension: 1 for (?, 3), got 0}}
  %0 = pk.broadcast %x : tensor<f32> -> tensor<?x3xf32>
  return
}

// -----

pk.kernel @dim_out_of_range(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  // expected-error@+1 {{'pk.dim' op dimension 1 is out of range for a ref of rank 1}}
  %n = pk.dim %x[1] : !pk.ref<?xf32>
  pk.return
}

// -----

func.func @dynamic_slice_backwards(%x: tensor<?xf32>, %n: index) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 has a dynamic size from a constant offset: it must walk forwards}}
  %0 = pk.extract_slice %x offsets [4] sizes [%n] strides [-1] : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @dynamic_slice_before_the_start(%x: tensor<?xf32>, %n: index) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 starts at index -1, before the array}}
  %0 = pk.extract_slice %x offsets [-1] sizes [%n] strides [1] : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @dynamic_slice_values(%x: tensor<?xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op needs one value per dynamic size, got 0}}
  %0 = "pk.extract_slice"(%x) <{offsets = array<i64: 0>, sizes = array<i64: -9223372036854775808>, strides = array<i64: 1>, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @dynamic_offset_values(%x: tensor<?xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op needs one value per dynamic offset, got 0}}
  %0 = "pk.extract_slice"(%x) <{offsets = array<i64: -9223372036854775808>, sizes = array<i64: 2>, strides = array<i64: 1>, operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<?xf32>) -> tensor<2xf32>
  return
}

// -----

// From the end, a slice takes a constant size (x[-3:]) or walks back to
// the start (x[::-1]); x[-3:] with the size of x[3:] is neither.
func.func @dynamic_offset_and_size(%x: tensor<?xf32>, %n: index) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 starts at an index counted from the end and has a dynamic size: it must walk backwards}}
  %0 = pk.extract_slice %x offsets [%n] sizes [%n] strides [1] : tensor<?xf32> -> tensor<?xf32>
  return
}

// -----

func.func @dynamic_offset_of_static_dimension(%x: tensor<8xf32>, %n: index) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 has 8 elements: its offset must be a constant}}
  %0 = pk.extract_slice %x offsets [%n] sizes [2] strides [1] : tensor<8xf32> -> tensor<2xf32>
  return
}

// -----

// An offset from the end is the dimension's size less some elements: its
// size itself is one past the last index.
pk.kernel @offset_at_the_end(%x: !pk.ref<?xf32>, %o: !pk.ref<1xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 must start at an index counted from the end of the dimension it slices (its size less a constant)}}
  %s = pk.extract_slice %v offsets [%n] sizes [1] strides [1] : tensor<?xf32> -> tensor<1xf32>
  pk.store %s, %o : tensor<1xf32> -> !pk.ref<1xf32>
  pk.return
}

// -----

// The first index x[-(2**63 - 1)::-(2**63 - 1)] reads, n - (2**63 - 1),
// and the second, 2**63 - 1 before it, need more elements than count.
pk.kernel @slice_from_too_far(%x: !pk.ref<?xf32>, %o: !pk.ref<2xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 9223372036854775807 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 takes 2 elements from 9223372036854775807 before the end with stride -9223372036854775807: its array would have too many elements to count}}
  %s = pk.extract_slice %v offsets [%m] sizes [2] strides [-9223372036854775807] : tensor<?xf32> -> tensor<2xf32>
  pk.store %s, %o : tensor<2xf32> -> !pk.ref<2xf32>
  pk.return
}

// -----

// x[-2::-1] of n elements has n - 1 (pk.slice_size %n offset 1 step 1),
// not n.
pk.kernel @backwards_past_the_start(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 may read outside the array for some sizes: its count (of the indices from 0, 1 apart, of a size the caller gives) must count no more than the slice has room for (indices from at least 1, at least 1 apart)}}
  %s = pk.extract_slice %v offsets [%m] sizes [%n] strides [-1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %s, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

// x[-2:] has 2 elements, not 3.
pk.kernel @slice_past_the_end(%x: !pk.ref<?xf32>, %o: !pk.ref<3xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 takes 3 elements from 2 before the end with stride 1, past the end of the array}}
  %s = pk.extract_slice %v offsets [%m] sizes [3] strides [1] : tensor<?xf32> -> tensor<3xf32>
  pk.store %s, %o : tensor<3xf32> -> !pk.ref<3xf32>
  pk.return
}

// -----

// x[2::-1] of 4 elements or more walks back to index 0, not past it.
func.func @fixed_slice_before_the_start(%x: tensor<?xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 takes 4 elements from index 2 with stride -1, past the start of the array}}
  %0 = pk.extract_slice %x offsets [2] sizes [4] strides [-1] : tensor<?xf32> -> tensor<4xf32>
  return
}

// -----

// x[:4] needs 4 elements: a minimum of the class, so x[:5] of the same
// class is no error (the minimum is 5), but a size too large to count is.
pk.kernel @fixed_slice_too_far(%x: !pk.ref<?xf32>, %o: !pk.ref<1xf32>) {
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 takes index 9223372036854775807: its array would have too many elements to count}}
  %s = pk.extract_slice %v offsets [9223372036854775807] sizes [1] strides [1] : tensor<?xf32> -> tensor<1xf32>
  pk.store %s, %o : tensor<1xf32> -> !pk.ref<1xf32>
  pk.return
}

// -----

func.func @dynamic_slice_of_static_dimension(%x: tensor<8xf32>, %n: index) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 has 8 elements: its slice size must be a constant}}
  %0 = pk.extract_slice %x offsets [0] sizes [%n] strides [1] : tensor<8xf32> -> tensor<?xf32>
  return
}

// -----

// x[3:] of n elements has max(0, n - 3), not n - 2, elements.
pk.kernel @dynamic_slice_past_the_end(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 may read outside the array for some sizes: its count (of the indices from 2, 1 apart, of a size the caller gives) must count no more than the slice has room for (indices from at least 3, at least 1 apart)}}
  %s = pk.extract_slice %v offsets [3] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %w = pk.load %o : !pk.ref<?xf32> -> tensor<?xf32>
  %i = pk.insert_slice %s into %w offsets [0] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %i, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

// x[...] = x[1:] holds for no size of x but 0.
pk.kernel @slice_size_of_its_own_size(%x: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  // expected-error@+1 {{'pk.slice_size' op computes a size (from offset 1, 1 apart, of a size the caller gives) that must equal a size the caller gives: they agree for some sizes only, and no caller could be checked}}
  %m = pk.slice_size %n offset 1 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %s = pk.extract_slice %v offsets [1] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %s, %x : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

pk.kernel @slices_computed_differently(%x: !pk.ref<?xf32>, %o: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %a = pk.slice_size %n offset 1 step 1
  // expected-error@+1 {{'pk.slice_size' op computes a size (from offset 0, 2 apart, of a size the caller gives) that must equal a size computed differently: they agree for some sizes only, and no caller could be checked}}
  %b = pk.slice_size %n offset 0 step 2
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %s = pk.extract_slice %v offsets [1] sizes [%a] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %t = pk.extract_slice %v offsets [0] sizes [%b] strides [2] : tensor<?xf32> -> tensor<?xf32>
  %u = pk.add %s, %t : tensor<?xf32>
  %w = pk.load %o : !pk.ref<?xf32> -> tensor<?xf32>
  %i = pk.insert_slice %u into %w offsets [1] sizes [%a] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %i, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

func.func @dynamic_insert_slice_shape(%v: tensor<4xf32>, %o: tensor<?xf32>, %n: index) {
  // expected-error@+1 {{'pk.insert_slice' op the inserted shape (4,) is not the slice sizes (?,) with some dimensions of size 1 dropped}}
  %0 = pk.insert_slice %v into %o offsets [1] sizes [%n] strides [1] : tensor<4xf32> -> tensor<?xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// pk.matmul
//===----------------------------------------------------------------------===//

func.func @matmul_scalar(%s: tensor<f32>, %v: tensor<3xf32>) {
  // expected-error@+1 {{'pk.matmul' op operands must be at least 1-D (NumPy's @ rejects scalars), got shapes () and (3,)}}
  %0 = pk.matmul %s, %v : tensor<f32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @matmul_contracting_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+1 {{'pk.matmul' op contracting dimensions differ: lhs dimension 1 is 3 but rhs dimension 0 is 4 (shapes (2, 3) @ (4, 5))}}
  %0 = pk.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_vector_mismatch(%a: tensor<2x3xf32>, %v: tensor<4xf32>) {
  // expected-error@+1 {{'pk.matmul' op contracting dimensions differ: lhs dimension 1 is 3 but rhs dimension 0 is 4 (shapes (2, 3) @ (4,))}}
  %0 = pk.matmul %a, %v : tensor<2x3xf32>, tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @matmul_batch_mismatch(%a: tensor<5x2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error@+1 {{'pk.matmul' op batch dimensions (5,) of lhs and () of rhs differ (broadcast them explicitly with pk.broadcast)}}
  %0 = pk.matmul %a, %b : tensor<5x2x3xf32>, tensor<3x4xf32> -> tensor<5x2x4xf32>
  return
}

// -----

func.func @matmul_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error@+1 {{'pk.matmul' op result shape (4, 2) does not match (2, 4), the shape of (2, 3) @ (3, 4)}}
  %0 = pk.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @matmul_mixed_element_types(%a: tensor<2x3xf32>, %b: tensor<3x4xf64>) {
  // expected-error@+1 {{'pk.matmul' op failed to verify that all of {lhs, rhs, result} have same element type}}
  %0 = pk.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf64> -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_booleans(%a: tensor<2x3xi1>, %b: tensor<3x4xi1>) {
  // expected-error@+1 {{'pk.matmul' op operand #0 must be ranked tensor of pk numeric element type values, but got 'tensor<2x3xi1>'}}
  %0 = pk.matmul %a, %b : tensor<2x3xi1>, tensor<3x4xi1> -> tensor<2x4xi1>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Comparisons and pk.select
//===----------------------------------------------------------------------===//

func.func @compare_mixed_types(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error@+1 {{'pk.lt' op failed to verify that all of {lhs, rhs} have same type}}
  %0 = "pk.lt"(%x, %y) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_result_not_boolean(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.eq' op result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = "pk.eq"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @compare_result_shape(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.eq' op failed to verify that result is a boolean tensor of the operands' shape}}
  %0 = "pk.eq"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<2x2xi1>
  return
}

// -----

func.func @select_condition_not_boolean(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.select' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = "pk.select"(%c, %x, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_mixed_values(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error@+1 {{'pk.select' op failed to verify that all of {true_value, false_value, result} have same type}}
  %0 = "pk.select"(%c, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @select_condition_of_another_size(%c: tensor<?xi1>, %x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.select' op condition of shape (?,) does not match the result's shape (4,)}}
  %0 = pk.select %c, %x, %x : tensor<?xi1>, tensor<4xf32>
  return
}

// -----

func.func @maximum_mixed_shapes(%x: tensor<4xf32>, %y: tensor<2xf32>) {
  // expected-error@+1 {{'pk.maximum' op all non-scalar operands/results must have the same shape and base type}}
  %0 = "pk.maximum"(%x, %y) : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @exp_of_integers(%x: tensor<4xi32>) {
  // expected-error@+1 {{'pk.exp' op operand #0 must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<4xi32>'}}
  %0 = pk.exp %x : tensor<4xi32>
  return
}

// -----

func.func @pow_mixed_types(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error@+1 {{'pk.pow' op requires the same type for all operands and results}}
  %0 = "pk.pow"(%x, %y) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

func.func @reduce_axis_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'pk.reduce_sum' op axis 2 is out of range for an operand of rank 2}}
  %0 = pk.reduce_sum %x axes = [2] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_axis_repeated(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'pk.reduce_max' op axis 1 is repeated}}
  %0 = pk.reduce_max %x axes = [1, 1] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_wrong_result(%x: tensor<4x8xf32>) {
  // expected-error@+1 {{'pk.reduce_min' op result shape (4,) does not match (4, 1), the shape of (4, 8) reduced over the axes with kept dimensions}}
  %0 = pk.reduce_min %x axes = [1] keep_dims : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @reduce_sum_booleans(%x: tensor<4xi1>) {
  // expected-error@+1 {{'pk.reduce_sum' op operand #0 must be ranked tensor of pk numeric element type values, but got 'tensor<4xi1>'}}
  %0 = pk.reduce_sum %x axes = [0] : tensor<4xi1> -> tensor<i1>
  return
}

// -----

func.func @rem_booleans(%m: tensor<4xi1>) {
  // expected-error@+1 {{'pk.rem' op operand #0 must be ranked tensor of pk numeric element type values, but got 'tensor<4xi1>'}}
  %0 = pk.rem %m, %m : tensor<4xi1>
  return
}

// -----

func.func @floordiv_mixed(%x: tensor<4xi32>, %y: tensor<4xf32>) {
  // expected-error@+1 {{'pk.floordiv' op requires the same type for all operands and results}}
  %0 = "pk.floordiv"(%x, %y) : (tensor<4xi32>, tensor<4xf32>) -> tensor<4xi32>
  return
}

// -----

func.func @slice_rank(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op needs one offset, size and stride per dimension of the 2-d array, got 1, 2 and 2}}
  %0 = pk.extract_slice %x offsets [0] sizes [2, 2] strides [1, 1] : tensor<4x4xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_negative_size(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op size -1 of dimension 0 is negative}}
  %0 = pk.extract_slice %x offsets [0] sizes [-1] strides [1] : tensor<4xf32> -> tensor<1xf32>
  return
}

// -----

func.func @slice_zero_stride(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op stride of dimension 0 is zero}}
  %0 = pk.extract_slice %x offsets [0] sizes [2] strides [0] : tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @slice_past_the_end(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 1 takes 2 elements from index 1 with stride 3, outside the 4 elements of the array}}
  %0 = pk.extract_slice %x offsets [0, 1] sizes [4, 2] strides [1, 3] : tensor<4x4xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @slice_before_the_start(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 takes 3 elements from index 1 with stride -1, outside the 4 elements of the array}}
  %0 = pk.extract_slice %x offsets [1] sizes [3] strides [-1] : tensor<4xf32> -> tensor<3xf32>
  return
}

// -----

func.func @slice_negative_offset(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 takes 1 elements from index -1 with stride 1, outside the 4 elements of the array}}
  %0 = pk.extract_slice %x offsets [-1] sizes [1] strides [1] : tensor<4xf32> -> tensor<1xf32>
  return
}

// -----

func.func @slice_overflowing_stride(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op dimension 0 takes 3 elements from index 0 with stride 9223372036854775807, outside the 4 elements of the array}}
  %0 = pk.extract_slice %x offsets [0] sizes [3] strides [9223372036854775807] : tensor<4xf32> -> tensor<3xf32>
  return
}

// -----

func.func @slice_result_shape(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op the result shape (2, 1) is not the slice sizes (2, 2) with some dimensions of size 1 dropped}}
  %0 = pk.extract_slice %x offsets [0, 0] sizes [2, 2] strides [1, 1] : tensor<4x4xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @slice_drops_a_long_dimension(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op the result shape (4,) is not the slice sizes (4, 4) with some dimensions of size 1 dropped}}
  %0 = pk.extract_slice %x offsets [0, 0] sizes [4, 4] strides [1, 1] : tensor<4x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_element_type(%x: tensor<4xf32>) {
  // expected-error@+1 {{'pk.extract_slice' op failed to verify that all of {source, result} have same element type}}
  %0 = pk.extract_slice %x offsets [0] sizes [2] strides [1] : tensor<4xf32> -> tensor<2xf64>
  return
}

// -----

func.func @insert_shape(%v: tensor<3xf32>, %o: tensor<4x4xf32>) {
  // expected-error@+1 {{'pk.insert_slice' op the inserted shape (3,) is not the slice sizes (1, 4) with some dimensions of size 1 dropped}}
  %0 = pk.insert_slice %v into %o offsets [0, 0] sizes [1, 4] strides [1, 1] : tensor<3xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @insert_out_of_bounds(%v: tensor<2xf32>, %o: tensor<4xf32>) {
  // expected-error@+1 {{'pk.insert_slice' op dimension 0 takes 2 elements from index 3 with stride 1, outside the 4 elements of the array}}
  %0 = pk.insert_slice %v into %o offsets [3] sizes [2] strides [1] : tensor<2xf32> -> tensor<4xf32>
  return
}

// -----

pk.kernel @slice_size_backwards(%x: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  // expected-error@+1 {{'pk.slice_size' op step -1 must be positive: the slice walks forwards}}
  %m = pk.slice_size %n offset 0 step -1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  pk.store %v, %x : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

pk.kernel @slice_size_before_the_start(%x: !pk.ref<?xf32>) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  // expected-error@+1 {{'pk.slice_size' op offset -2 is negative: a slice starts inside its array}}
  %m = pk.slice_size %n offset -2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  pk.store %v, %x : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// -----

func.func @count_of_a_shape(%n: index) {
  // expected-error@+1 {{'pk.count' op must give a 0-d array (a number), not 'tensor<4xf32>': broadcast it to a shape}}
  %c = pk.count %n factor 1 : tensor<4xf32>
  return
}

// -----

func.func @count_of_nothing() {
  // expected-error@+1 {{'pk.count' op counts no size: a count of known size is a pk.constant}}
  %c = pk.count factor 3 : tensor<f32>
  return
}

// -----

func.func @negative_count(%n: index) {
  // expected-error@+1 {{'pk.count' op factor -2 is negative: a count is not}}
  %c = pk.count %n factor -2 : tensor<f32>
  return
}

// -----

func.func @count_as_a_bool(%n: index) {
  // expected-error@+1 {{'pk.count' op result #0 must be ranked tensor of pk numeric element type values, but got 'tensor<i1>'}}
  %c = pk.count %n factor 1 : tensor<i1>
  return
}
