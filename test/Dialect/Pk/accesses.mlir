// RUN: pk-opt %s --pass-pipeline='builtin.module(pk.kernel(pk-forward-stores,pk-print-accesses))' --split-input-file --verify-diagnostics

// o[1:-1] = x[2:] - x[:-2]: the ends of o keep their contents (a read of o);
// each element reads x one place either side (a stencil's halo).
pk.kernel @stencil(%x: !pk.ref<8xf32>, %o: !pk.ref<8xf32>) {
  %v = pk.load %x : !pk.ref<8xf32> -> tensor<8xf32>
  %a = pk.extract_slice %v offsets [2] sizes [6] strides [1] : tensor<8xf32> -> tensor<6xf32>
  %b = pk.extract_slice %v offsets [0] sizes [6] strides [1] : tensor<8xf32> -> tensor<6xf32>
  %d = pk.sub %a, %b : tensor<6xf32>
  %old = pk.load %o : !pk.ref<8xf32> -> tensor<8xf32>
  %new = pk.insert_slice %d into %old offsets [1] sizes [6] strides [1] : tensor<6xf32> -> tensor<8xf32>
  // expected-remark @below {{stores arg1: reads arg0[o0 - 1], arg0[o0 + 1], arg1[o0]; writes o0 but 1 first, 1 last}}
  pk.store %new, %o : tensor<8xf32> -> !pk.ref<8xf32>
  pk.return
}

// -----

// Broadcasting: a row follows the columns; a size-1 dimension is index 0.
pk.kernel @broadcast(%x: !pk.ref<4x3xf32>, %row: !pk.ref<3xf32>, %col: !pk.ref<4x1xf32>, %o: !pk.ref<4x3xf32>) {
  %x0 = pk.load %x : !pk.ref<4x3xf32> -> tensor<4x3xf32>
  %r0 = pk.load %row : !pk.ref<3xf32> -> tensor<3xf32>
  %c0 = pk.load %col : !pk.ref<4x1xf32> -> tensor<4x1xf32>
  %r = pk.broadcast %r0 : tensor<3xf32> -> tensor<4x3xf32>
  %c = pk.broadcast %c0 : tensor<4x1xf32> -> tensor<4x3xf32>
  %m = pk.mul %x0, %r : tensor<4x3xf32>
  %s = pk.add %m, %c : tensor<4x3xf32>
  // expected-remark @below {{stores arg3: reads arg0[o0, o1], arg1[o1], arg2[o0, 0]}}
  pk.store %s, %o : tensor<4x3xf32> -> !pk.ref<4x3xf32>
  pk.return
}

// -----

// A sum over rows computed last: blocks of rows combine by a sum.
pk.kernel @column_sums(%x: !pk.ref<6x5xf64>, %o: !pk.ref<5xf64>) {
  %v = pk.load %x : !pk.ref<6x5xf64> -> tensor<6x5xf64>
  %s = pk.reduce_sum %v axes = [0] : tensor<6x5xf64> -> tensor<5xf64>
  // expected-remark @below {{stores arg1: reads arg0[r0, o0]; r0: sum of 6; blocks combine by sum over r0}}
  pk.store %s, %o : tensor<5xf64> -> !pk.ref<5xf64>
  pk.return
}

// -----

// A max inside the kernel (a softmax's): no combining of blocks.
pk.kernel @shifted(%x: !pk.ref<2x3xf32>, %o: !pk.ref<2x3xf32>) {
  %v = pk.load %x : !pk.ref<2x3xf32> -> tensor<2x3xf32>
  %m = pk.reduce_max %v axes = [1] keep_dims : tensor<2x3xf32> -> tensor<2x1xf32>
  %b = pk.broadcast %m : tensor<2x1xf32> -> tensor<2x3xf32>
  %d = pk.sub %v, %b : tensor<2x3xf32>
  // expected-remark @below {{stores arg1: reads arg0[o0, o1], arg0[o0, r0]; r0: max of 3}}
  pk.store %d, %o : tensor<2x3xf32> -> !pk.ref<2x3xf32>
  pk.return
}

// -----

// A matrix product contracts a dimension; its epilogue keeps it contracted.
pk.kernel @matmul(%a: !pk.ref<4x3xf32>, %b: !pk.ref<3x2xf32>, %o: !pk.ref<4x2xf32>) {
  %a0 = pk.load %a : !pk.ref<4x3xf32> -> tensor<4x3xf32>
  %b0 = pk.load %b : !pk.ref<3x2xf32> -> tensor<3x2xf32>
  %p = pk.matmul %a0, %b0 : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %e = pk.exp %p : tensor<4x2xf32>
  // expected-remark @below {{stores arg2: reads arg0[o0, r0], arg1[r0, o1]; r0: sum of 3}}
  pk.store %e, %o : tensor<4x2xf32> -> !pk.ref<4x2xf32>
  pk.return
}

// -----

// A mean of everything: blocks' means combine; cast to a narrower float,
// they do not (a block's part may overflow where the whole does not).
pk.kernel @mean(%x: !pk.ref<8xf64>, %o: !pk.ref<f32>, %p: !pk.ref<f64>) {
  %v = pk.load %x : !pk.ref<8xf64> -> tensor<8xf64>
  %s = pk.reduce_sum %v axes = [0] : tensor<8xf64> -> tensor<f64>
  %n = pk.constant dense<8.0> : tensor<f64>
  %m = pk.div %s, %n : tensor<f64>
  %c = pk.cast %m : tensor<f64> -> tensor<f32>
  // expected-remark @below {{stores arg1: reads arg0[r0]; r0: sum of 8}}
  pk.store %c, %o : tensor<f32> -> !pk.ref<f32>
  // expected-remark @below {{stores arg2: reads arg0[r0]; r0: sum of 8; blocks combine by mean over r0}}
  pk.store %m, %p : tensor<f64> -> !pk.ref<f64>
  pk.return
}

// -----

// Strided slices: a strided read scales the index; a strided write's source
// cannot be followed back (?o0), nor can the part it writes.
pk.kernel @strided(%x: !pk.ref<8xf32>, %o: !pk.ref<8xf32>) {
  %v = pk.load %x : !pk.ref<8xf32> -> tensor<8xf32>
  %e = pk.extract_slice %v offsets [1] sizes [4] strides [2] : tensor<8xf32> -> tensor<4xf32>
  %old = pk.load %o : !pk.ref<8xf32> -> tensor<8xf32>
  %new = pk.insert_slice %e into %old offsets [0] sizes [4] strides [2] : tensor<4xf32> -> tensor<8xf32>
  // expected-remark @below {{stores arg1: reads arg0[?o0], arg1[o0]; writes o0 in part}}
  pk.store %new, %o : tensor<8xf32> -> !pk.ref<8xf32>
  pk.return
}

// -----

// A sum divided by a constant that is not its count: still a sum (each
// block's part divided by it adds up to the whole divided by it).
pk.kernel @half_sum(%x: !pk.ref<8xf64>, %o: !pk.ref<f64>) {
  %v = pk.load %x : !pk.ref<8xf64> -> tensor<8xf64>
  %s = pk.reduce_sum %v axes = [0] : tensor<8xf64> -> tensor<f64>
  %n = pk.constant dense<2.0> : tensor<f64>
  %m = pk.div %s, %n : tensor<f64>
  // expected-remark @below {{stores arg1: reads arg0[r0]; r0: sum of 8; blocks combine by sum over r0}}
  pk.store %m, %o : tensor<f64> -> !pk.ref<f64>
  pk.return
}

// -----

// An integer sum wrapped to 8 bits and widened again: blocks' sums would
// not wrap where the whole one does.
pk.kernel @wrapped_sum(%x: !pk.ref<2xi64>, %o: !pk.ref<i64>) {
  %v = pk.load %x : !pk.ref<2xi64> -> tensor<2xi64>
  %s = pk.reduce_sum %v axes = [0] : tensor<2xi64> -> tensor<i64>
  %n = pk.cast %s : tensor<i64> -> tensor<i8>
  %w = pk.cast %n : tensor<i8> -> tensor<i64>
  // expected-remark @below {{stores arg1: reads arg0[r0]; r0: sum of 2}}
  pk.store %w, %o : tensor<i64> -> !pk.ref<i64>
  pk.return
}

// -----

// A sum of an array less its own sum: the inner sum is no final one.
pk.kernel @centered(%x: !pk.ref<4xf32>, %o: !pk.ref<f32>) {
  %v = pk.load %x : !pk.ref<4xf32> -> tensor<4xf32>
  %s = pk.reduce_sum %v axes = [0] : tensor<4xf32> -> tensor<f32>
  %b = pk.broadcast %s : tensor<f32> -> tensor<4xf32>
  %d = pk.sub %v, %b : tensor<4xf32>
  %t = pk.reduce_sum %d axes = [0] : tensor<4xf32> -> tensor<f32>
  // expected-remark @below {{stores arg1: reads arg0[r0], arg0[r1]; r0: sum of 4; r1: sum of 4; blocks combine by sum over r0}}
  pk.store %t, %o : tensor<f32> -> !pk.ref<f32>
  pk.return
}

// -----

// Divided by a constant below 1, or converted to float16, a block's part
// may overflow where the whole does not: no combining.
pk.kernel @overflowing(%x: !pk.ref<4xf64>, %i: !pk.ref<4xi64>, %o: !pk.ref<f64>, %h: !pk.ref<f16>) {
  %v = pk.load %x : !pk.ref<4xf64> -> tensor<4xf64>
  %s = pk.reduce_sum %v axes = [0] : tensor<4xf64> -> tensor<f64>
  %n = pk.constant dense<0.5> : tensor<f64>
  %m = pk.div %s, %n : tensor<f64>
  %w = pk.load %i : !pk.ref<4xi64> -> tensor<4xi64>
  %t = pk.reduce_sum %w axes = [0] : tensor<4xi64> -> tensor<i64>
  %c = pk.cast %t : tensor<i64> -> tensor<f16>
  // expected-remark @below {{stores arg2: reads arg0[r0]; r0: sum of 4}}
  pk.store %m, %o : tensor<f64> -> !pk.ref<f64>
  // expected-remark @below {{stores arg3: reads arg1[r0]; r0: sum of 4}}
  pk.store %c, %h : tensor<f16> -> !pk.ref<f16>
  pk.return
}
