// The seed post's kernel, `o_ref[...] = a_ref[...] * b_ref[...] + c_ref[...]`,
// written in the pk dialect, plus a scalar operand that canonicalization
// folds into a splat constant.
pk.kernel @fma(%a: !pk.ref<4xf32>, %b: !pk.ref<4xf32>, %c: !pk.ref<4xf32>,
               %o: !pk.ref<4xf32>) {
  %0 = pk.load %a : !pk.ref<4xf32> -> tensor<4xf32>
  %1 = pk.load %b : !pk.ref<4xf32> -> tensor<4xf32>
  %2 = pk.mul %0, %1 : tensor<4xf32>
  %3 = pk.load %c : !pk.ref<4xf32> -> tensor<4xf32>
  %4 = pk.add %2, %3 : tensor<4xf32>
  %two = pk.constant dense<2.0> : tensor<f32>
  %5 = pk.broadcast %two : tensor<f32> -> tensor<4xf32>
  %6 = pk.mul %4, %5 : tensor<4xf32>
  pk.store %6, %o : tensor<4xf32> -> !pk.ref<4xf32>
  pk.return
}
