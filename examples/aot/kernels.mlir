// Two kernels compiled ahead of time (see CMakeLists.txt):
//   pk-translate --pk-to-object kernels.mlir -o kernels.o
//   pk-translate --pk-to-c-header kernels.mlir -o kernels.h
// Parameter names come from the `loc("...")` after each type.

// The seed's o = a * b + c.
pk.kernel @fma(%a: !pk.ref<4096xf32> loc("a"), %b: !pk.ref<4096xf32> loc("b"),
               %c: !pk.ref<4096xf32> loc("c"), %o: !pk.ref<4096xf32> loc("o")) {
  %0 = pk.load %a : !pk.ref<4096xf32> -> tensor<4096xf32>
  %1 = pk.load %b : !pk.ref<4096xf32> -> tensor<4096xf32>
  %2 = pk.mul %0, %1 : tensor<4096xf32>
  %3 = pk.load %c : !pk.ref<4096xf32> -> tensor<4096xf32>
  %4 = pk.add %2, %3 : tensor<4096xf32>
  pk.store %4, %o : tensor<4096xf32> -> !pk.ref<4096xf32>
  pk.return
}

// softplus(x) = max(x, 0) + log1p(exp(-|x|)) over rows, and each row's sum:
// math calls go to libm, the reduction writes a second output.
pk.kernel @softplus(%x: !pk.ref<8x256xf64> loc("x"), %y: !pk.ref<8x256xf64> loc("y"),
                    %sums: !pk.ref<8xf64> loc("sums")) {
  %0 = pk.load %x : !pk.ref<8x256xf64> -> tensor<8x256xf64>
  %zero = pk.constant dense<0.0> : tensor<8x256xf64>
  %1 = pk.maximum %0, %zero : tensor<8x256xf64>
  %2 = pk.abs %0 : tensor<8x256xf64>
  %3 = pk.neg %2 : tensor<8x256xf64>
  %4 = pk.exp %3 : tensor<8x256xf64>
  %5 = pk.log1p %4 : tensor<8x256xf64>
  %6 = pk.add %1, %5 : tensor<8x256xf64>
  pk.store %6, %y : tensor<8x256xf64> -> !pk.ref<8x256xf64>
  %7 = pk.reduce_sum %6 axes = [1] : tensor<8x256xf64> -> tensor<8xf64>
  pk.store %7, %sums : tensor<8xf64> -> !pk.ref<8xf64>
  pk.return
}

// Dynamic sizes: one object serves every number of rows and columns. The
// entry point takes the sizes first, `int pk_scale_rows(int64_t n0,
// int64_t n1, ...)`, and returns 1 without running for invalid ones.
pk.kernel @scale_rows(%m: !pk.ref<?x?xf32> loc("m"), %w: !pk.ref<?xf32> loc("w"),
                      %out: !pk.ref<?x?xf32> loc("out")) {
  %rows = pk.dim %m[0] : !pk.ref<?x?xf32>
  %cols = pk.dim %m[1] : !pk.ref<?x?xf32>
  %0 = pk.load %m : !pk.ref<?x?xf32> -> tensor<?x?xf32>
  %1 = pk.load %w : !pk.ref<?xf32> -> tensor<?xf32>
  %2 = pk.broadcast %1 sizes(%rows, %cols) : tensor<?xf32> -> tensor<?x?xf32>
  %3 = pk.mul %0, %2 : tensor<?x?xf32>
  %4 = pk.reduce_max %3 axes = [1] keep_dims : tensor<?x?xf32> -> tensor<?x1xf32>
  %5 = pk.broadcast %4 sizes(%rows, %cols) : tensor<?x1xf32> -> tensor<?x?xf32>
  %6 = pk.sub %3, %5 : tensor<?x?xf32>
  pk.store %6, %out : tensor<?x?xf32> -> !pk.ref<?x?xf32>
  pk.return
}
