// Embedding picokernel: the seed post's kernel, traced, printed, compiled
// and run from a program built against an installed picokernel.
// It includes only picokernel.h: no MLIR or LLVM header is needed.
#include <picokernel/picokernel.h>

#include <iostream>
#include <vector>

int main() {
  std::cout << "picokernel " << PICOKERNEL_VERSION << "\n";
  using pk::all;
  pk::Kernel fma("fma",
                 [](pk::Ref a, pk::Ref b, pk::Ref c, pk::Ref o) {
                   o[all] = a[all] * b[all] + c[all];
                 },
                 {"a", "b", "c", "o"});

  std::vector<float> a = {1, 2, 3, 4}, b = {2, 4, 6, 8}, c = {3, 2, 1, 0.5},
                     o(4);
  std::vector<int64_t> shape = {4};
  std::vector<pk::ArrayView> arrays = {{a.data(), pk::f32, shape},
                                       {b.data(), pk::f32, shape},
                                       {c.data(), pk::f32, shape},
                                       {o.data(), pk::f32, shape}};
  pk::Module module = fma.trace(arrays);
  std::cout << pk::listing(module) << "\n" << pk::printModule(module);

  // Ahead of time: the kernel as an object file for this CPU, with its C
  // header (Target/Object.h).
  std::vector<char> object = pk::compileToObject(module);
  std::string header = pk::cHeader(module);
  std::cout << "object: " << (object.size() > 0 ? "ELF" : "empty") << ", "
            << header.substr(header.find("void pk_fma("), 12) << "...\n";

  fma(arrays);
  std::cout << "\no =";
  for (float x : o)
    std::cout << " " << x;
  std::cout << "\n";

  // Bad input is an exception that names the operation and this file's line.
  try {
    pk::trace("bad",
              [](pk::Ref x, pk::Ref y) { y[all] = pk::matmul(x[all], x[all]); },
              {{"x", {2, 3}, pk::f32}, {"y", {2, 3}, pk::f32}});
  } catch (const pk::TraceError &error) {
    std::cout << "caught: " << error.what() << "\n";
    return 0;
  }
  return 1;
}
