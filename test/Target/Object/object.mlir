// Ahead-of-time compilation: an object file exporting only pk_<kernel>, and
// the C header declaring it (const for arrays the kernel only reads).
// RUN: split-file %s %t
// RUN: pk-translate --pk-to-object %t/kernels.mlir -o %t/kernels.o
// RUN: llvm-nm --defined-only --extern-only %t/kernels.o | FileCheck %s --check-prefix=SYMBOLS
// RUN: pk-translate --pk-to-c-header %t/kernels.mlir | FileCheck %s --check-prefix=HEADER
// RUN: not pk-translate --pk-to-object %t/empty.mlir -o %t/empty.o 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not pk-translate --pk-to-object %t/nested.mlir -o %t/nested.o 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not pk-translate --pk-to-c-header %t/nested.mlir 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not pk-translate --pk-to-c-header %t/injected.mlir 2>&1 | FileCheck %s --check-prefix=INJECTED
// RUN: not pk-translate --pk-to-object %t/injected.mlir -o %t/injected.o 2>&1 | FileCheck %s --check-prefix=INJECTED
// RUN: not pk-translate --pk-to-c-header %t/keyword.mlir 2>&1 | FileCheck %s --check-prefix=KEYWORD
// RUN: pk-translate --pk-to-c-header %t/dynamic.mlir | FileCheck %s --check-prefix=DYNAMIC
// RUN: pk-translate --pk-to-object %t/dynamic.mlir -o %t/dynamic.o
// RUN: llvm-nm --defined-only --extern-only %t/dynamic.o | FileCheck %s --check-prefix=DYNAMIC-SYMBOLS
// RUN: pk-translate --pk-to-c-header %t/unsigned.mlir | FileCheck %s --check-prefix=UNSIGNED
// RUN: pk-translate --pk-to-object %t/unsigned.mlir -o %t/unsigned.o
// RUN: pk-translate --pk-to-object %t/libm.mlir -o %t/libm.o
// RUN: llvm-nm %t/libm.o | FileCheck %s --check-prefix=LIBM

//--- kernels.mlir
// SYMBOLS-NOT: {{ }}scale{{$}}
// SYMBOLS: T pk_mask
// SYMBOLS-NEXT: T pk_scale
// SYMBOLS-NOT: {{.}}

// HEADER: #ifndef PK_KERNELS_SCALE_MASK_H
// HEADER: #include <stdbool.h>
// HEADER: extern "C" {
// HEADER: /* scale(x: float64[2, 3], o: float64[2, 3]); writes o */
// HEADER-NEXT: void pk_scale(const double *x, double *o);
// HEADER: /* mask(v: int16[5], m: bool[5], h: float16[5]); writes m, h */
// HEADER-NEXT: void pk_mask(const int16_t *v, bool *m, uint16_t *h);
pk.kernel @scale(%x: !pk.ref<2x3xf64> loc("x"), %o: !pk.ref<2x3xf64> loc("o")) {
  %0 = pk.load %x : !pk.ref<2x3xf64> -> tensor<2x3xf64>
  %1 = pk.constant dense<2.0> : tensor<2x3xf64>
  %2 = pk.mul %0, %1 : tensor<2x3xf64>
  pk.store %2, %o : tensor<2x3xf64> -> !pk.ref<2x3xf64>
  pk.return
}
pk.kernel @mask(%v: !pk.ref<5xi16> loc("v"), %m: !pk.ref<5xi1> loc("m"), %h: !pk.ref<5xf16> loc("h")) {
  %0 = pk.load %v : !pk.ref<5xi16> -> tensor<5xi16>
  %1 = pk.constant dense<0> : tensor<5xi16>
  %2 = pk.gt %0, %1 : tensor<5xi16>
  pk.store %2, %m : tensor<5xi1> -> !pk.ref<5xi1>
  %3 = pk.cast %0 : tensor<5xi16> -> tensor<5xf16>
  pk.store %3, %h : tensor<5xf16> -> !pk.ref<5xf16>
  pk.return
}

//--- empty.mlir
// EMPTY: error: no pk.kernel to compile
module {
}

//--- nested.mlir
// A kernel in a nested module once crashed the object writer.
// NESTED: error: kernels compiled ahead of time must be at the top level of the module
module {
  module {
    pk.kernel @k(%a: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
      %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
      pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
      pk.return
    }
  }
}

//--- injected.mlir
// Names are pasted into C: one that is not an identifier could inject code.
// INJECTED: error: kernel name 'x; int evil(void) { return 1; } void k' is not a C identifier
pk.kernel @"x; int evil(void) { return 1; } void k"(%a: !pk.ref<4xf32>, %o: !pk.ref<4xf32>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

//--- keyword.mlir
// KEYWORD: error: parameter name 'int' of kernel 'k' is not a C identifier
pk.kernel @k(%a: !pk.ref<4xf32> loc("int"), %o: !pk.ref<4xf32> loc("o")) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  pk.store %0, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

//--- dynamic.mlir
// Dynamic sizes: one argument per class of sizes the kernel needs equal
// (the rows of x and o; the columns of x, w and o; w2's own length), named
// unlike any parameter.
// DYNAMIC: /* scale(x: float32[n0, n1], w: float32[n1], n: float32[n2, 4], o: float32[n0, n1]); writes o */
// DYNAMIC-NEXT: int pk_scale(int64_t n0, int64_t n1, int64_t n2, const float *x, const float *w, const float *n, float *o);
// DYNAMIC-SYMBOLS-DAG: T pk_scale
pk.kernel @scale(%x: !pk.ref<?x?xf32> loc("x"), %w: !pk.ref<?xf32> loc("w"),
                 %n: !pk.ref<?x4xf32> loc("n"), %o: !pk.ref<?x?xf32> loc("o")) {
  %rows = pk.dim %x[0] : !pk.ref<?x?xf32>
  %0 = pk.load %x : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.load %w : !pk.ref<?xf32> -> tensor<?xf32>
  %cols = pk.dim %w[0] : !pk.ref<?xf32>
  %2 = pk.broadcast %1 sizes(%rows, %cols) : tensor<?xf32> -> tensor<?x?xf32>
  %3 = pk.mul %0, %2 : tensor<?x?xf32>
  pk.store %3, %o : tensor<?x?xf32> -> !pk.ref<?x?xf32>
  pk.return
}

// Slices of a constant size (x[:4] of the rows, x[:, 2] of the columns)
// need that many rows and columns: the entry point checks them.
// DYNAMIC: /* head(x: float32[n0, n1], o: float32[4]); writes o; n0 >= 4; n1 >= 3 */
// DYNAMIC-NEXT: int pk_head(int64_t n0, int64_t n1, const float *x, float *o);
// DYNAMIC-SYMBOLS-DAG: T pk_head
pk.kernel @head(%x: !pk.ref<?x?xf32> loc("x"), %o: !pk.ref<4xf32> loc("o")) {
  %0 = pk.load %x : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.extract_slice %0 offsets [0, 2] sizes [4, 1] strides [1, 1] : tensor<?x?xf32> -> tensor<4xf32>
  pk.store %1, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}

// x[-3:] needs 3 elements, x[-5:-4] 5.
// DYNAMIC: /* tail(x: float32[n], o: float32[3], p: float32[1]); writes o, p; n >= 5 */
// DYNAMIC-NEXT: int pk_tail(int64_t n, const float *x, float *o, float *p);
// DYNAMIC-SYMBOLS-DAG: T pk_tail
pk.kernel @tail(%x: !pk.ref<?xf32> loc("x"), %o: !pk.ref<3xf32> loc("o"), %p: !pk.ref<1xf32> loc("p")) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %n3 = pk.slice_size %n offset 3 step 1
  %n5 = pk.slice_size %n offset 5 step 1
  %0 = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %1 = pk.extract_slice %0 offsets [%n3] sizes [3] strides [1] : tensor<?xf32> -> tensor<3xf32>
  pk.store %1, %o : tensor<3xf32> -> !pk.ref<3xf32>
  %2 = pk.extract_slice %0 offsets [%n5] sizes [1] strides [1] : tensor<?xf32> -> tensor<1xf32>
  pk.store %2, %p : tensor<1xf32> -> !pk.ref<1xf32>
  pk.return
}

// A parameter's size computed from another's: o[...] = x[1:] - x[:-1] and
// p[2:-2] = y (y has 4 elements less than p, or none) take sizes for x and
// p, and compute o's and y's.
// DYNAMIC: /* diff(x: float32[n0], o: float32[max(0, n0 - 1)], y: float32[max(0, n1 - 4)], p: float32[n1]); writes o, p */
// DYNAMIC-NEXT: int pk_diff(int64_t n0, int64_t n1, const float *x, float *o, const float *y, float *p);
// DYNAMIC-SYMBOLS-DAG: T pk_diff
pk.kernel @diff(%x: !pk.ref<?xf32> loc("x"), %o: !pk.ref<?xf32> loc("o"), %y: !pk.ref<?xf32> loc("y"), %p: !pk.ref<?xf32> loc("p")) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 1 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %a = pk.extract_slice %v offsets [1] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %b = pk.extract_slice %v offsets [0] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %d = pk.sub %a, %b : tensor<?xf32>
  pk.store %d, %o : tensor<?xf32> -> !pk.ref<?xf32>
  %k = pk.dim %p[0] : !pk.ref<?xf32>
  %inner = pk.slice_size %k offset 4 step 1
  %w = pk.load %y : !pk.ref<?xf32> -> tensor<?xf32>
  %q = pk.load %p : !pk.ref<?xf32> -> tensor<?xf32>
  %i = pk.insert_slice %w into %q offsets [2] sizes [%inner] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %i, %p : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// A max needs an element: x[2:].max() needs 3.
// DYNAMIC: /* top(x: float32[n], o: float32[]); writes o; n >= 3 */
// DYNAMIC-NEXT: int pk_top(int64_t n, const float *x, float *o);
pk.kernel @top(%x: !pk.ref<?xf32> loc("x"), %o: !pk.ref<f32> loc("o")) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %s = pk.extract_slice %v offsets [2] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %t = pk.reduce_max %s axes = [0] : tensor<?xf32> -> tensor<f32>
  pk.store %t, %o : tensor<f32> -> !pk.ref<f32>
  pk.return
}

// A count of every index from 0 is the size itself: one class, not one
// derived from another.
// DYNAMIC: /* whole(x: float32[n], o: float32[n]); writes o */
// DYNAMIC-NEXT: int pk_whole(int64_t n, const float *x, float *o);
pk.kernel @whole(%x: !pk.ref<?xf32> loc("x"), %o: !pk.ref<?xf32> loc("o")) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 0 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %s = pk.extract_slice %v offsets [0] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %s, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// A slice's size is computed from the size it slices: o[1:-1] = x[:-2] +
// x[2:] takes one size for x and o.
// DYNAMIC: /* stencil(x: float32[n], o: float32[n]); writes o */
// DYNAMIC-NEXT: int pk_stencil(int64_t n, const float *x, float *o);
// DYNAMIC-SYMBOLS-DAG: T pk_stencil
pk.kernel @stencil(%x: !pk.ref<?xf32> loc("x"), %o: !pk.ref<?xf32> loc("o")) {
  %n = pk.dim %x[0] : !pk.ref<?xf32>
  %m = pk.slice_size %n offset 2 step 1
  %v = pk.load %x : !pk.ref<?xf32> -> tensor<?xf32>
  %l = pk.extract_slice %v offsets [0] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %r = pk.extract_slice %v offsets [2] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  %s = pk.add %l, %r : tensor<?xf32>
  %w = pk.load %o : !pk.ref<?xf32> -> tensor<?xf32>
  %i = pk.insert_slice %s into %w offsets [1] sizes [%m] strides [1] : tensor<?xf32> -> tensor<?xf32>
  pk.store %i, %o : tensor<?xf32> -> !pk.ref<?xf32>
  pk.return
}

// A product's sizes: A's rows, the contracted length and B's columns, one
// class each (o is A's rows by B's columns), a batch for a batched one.
// DYNAMIC: /* matmul(a: float32[n0, n1], b: float32[n1, n2], o: float32[n0, n2]); writes o */
// DYNAMIC-NEXT: int pk_matmul(int64_t n0, int64_t n1, int64_t n2, const float *a, const float *b, float *o);
// DYNAMIC: /* batched(a: float64[n0, n1, n2], x: float64[n2], o: float64[n0, n1]); writes o */
// DYNAMIC-NEXT: int pk_batched(int64_t n0, int64_t n1, int64_t n2, const double *a, const double *x, double *o);
// DYNAMIC-SYMBOLS-DAG: T pk_batched
// DYNAMIC-SYMBOLS-DAG: T pk_matmul
pk.kernel @matmul(%a: !pk.ref<?x?xf32> loc("a"), %b: !pk.ref<?x?xf32> loc("b"), %o: !pk.ref<?x?xf32> loc("o")) {
  %0 = pk.load %a : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.load %b : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %2 = pk.matmul %0, %1 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  pk.store %2, %o : tensor<?x?xf32> -> !pk.ref<?x?xf32>
  pk.return
}

pk.kernel @batched(%a: !pk.ref<?x?x?xf64> loc("a"), %x: !pk.ref<?xf64> loc("x"), %o: !pk.ref<?x?xf64> loc("o")) {
  %0 = pk.load %a : !pk.ref<?x?x?xf64> -> tensor<?x?x?xf64>
  %1 = pk.load %x : !pk.ref<?xf64> -> tensor<?xf64>
  %2 = pk.matmul %0, %1 : tensor<?x?x?xf64>, tensor<?xf64> -> tensor<?x?xf64>
  pk.store %2, %o : tensor<?x?xf64> -> !pk.ref<?x?xf64>
  pk.return
}

//--- unsigned.mlir
// Unsigned integers are C's unsigned fixed-width types.
// UNSIGNED: /* halve(x: uint8[4], o: uint64[4]); writes o */
// UNSIGNED-NEXT: void pk_halve(const uint8_t *x, uint64_t *o);
pk.kernel @halve(%x: !pk.ref<4xui8> loc("x"), %o: !pk.ref<4xui64> loc("o")) {
  %0 = pk.load %x : !pk.ref<4xui8> -> tensor<4xui8>
  %1 = pk.cast %0 : tensor<4xui8> -> tensor<4xui64>
  %2 = pk.constant dense<2> : tensor<4xui64>
  %3 = pk.floordiv %1, %2 : tensor<4xui64>
  pk.store %3, %o : tensor<4xui64> -> !pk.ref<4xui64>
  pk.return
}

//--- libm.mlir
// A kernel named like the libm function it calls exports pk_erf and calls
// libm's erf (it once called itself).
// LIBM-NOT: {{ }}kernel.erf{{$}}
// LIBM: U erf{{$}}
// LIBM: T pk_erf{{$}}
pk.kernel @erf(%x: !pk.ref<8xf64> loc("x"), %o: !pk.ref<8xf64> loc("o")) {
  %0 = pk.load %x : !pk.ref<8xf64> -> tensor<8xf64>
  %1 = pk.erf %0 : tensor<8xf64>
  pk.store %1, %o : tensor<8xf64> -> !pk.ref<8xf64>
  pk.return
}
