// Embedding picokernel: trace the seed post's kernel from C++ and print
// what the compiler sees.
#include <picokernel/picokernel.h>

#include <iostream>

int main() {
  using pk::all;
  pk::Signature signature = {{"a", {4}, pk::f32},
                             {"b", {4}, pk::f32},
                             {"c", {4}, pk::f32},
                             {"o", {4}, pk::f32}};
  auto fma = pk::trace(
      "fma",
      [](pk::Ref a, pk::Ref b, pk::Ref c, pk::Ref o) {
        o[all] = a[all] * b[all] + c[all];
      },
      signature);
  std::cout << pk::listing(*fma) << "\n" << pk::printModule(*fma);

  // Bad input is an exception that names the operation and this file's line.
  try {
    pk::trace(
        "bad",
        [](pk::Ref a, pk::Ref o) { o[all] = pk::matmul(a[all], a[all]); },
        {{"a", {2, 3}, pk::f32}, {"o", {2, 3}, pk::f32}});
  } catch (const pk::TraceError &error) {
    std::cout << "\ncaught: " << error.what() << "\n";
    return 0;
  }
  return 1;
}
