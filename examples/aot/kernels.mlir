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
