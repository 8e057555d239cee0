//===- ObjectTest.cpp - ahead-of-time compilation of traced kernels -------===//

#include "picokernel/Compiler/TargetMachine.h"
#include "picokernel/picokernel.h"

#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {

using pk::all;
using pk::Ref;

TEST(Object, TracedKernelsCompileAheadOfTime) {
  auto module = pk::trace(
      "axpy", [](Ref x, Ref y, Ref o) { o[all] = 2.5f * x[all] + y[all]; },
      {{"x", {16}, pk::f32}, {"y", {16}, pk::f32}, {"o", {16}, pk::f32}});

  std::string header;
  llvm::raw_string_ostream os(header);
  ASSERT_TRUE(mlir::succeeded(mlir::pk::writeCHeader(*module, os)));
  EXPECT_NE(header.find("/* axpy(x: float32[16], y: float32[16], "
                        "o: float32[16]); writes o */\n"
                        "void pk_axpy(const float *x, const float *y, "
                        "float *o);"),
            std::string::npos)
      << header;

  llvm::SmallVector<char> object;
  mlir::pk::ObjectOptions options;
  options.cpu = "x86-64"; // a portable object
  ASSERT_TRUE(
      mlir::succeeded(mlir::pk::compileToObject(*module, options, object)));
  ASSERT_GT(object.size(), 64u);
  EXPECT_EQ(std::memcmp(object.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);
  llvm::StringRef bytes(object.data(), object.size());
  EXPECT_TRUE(bytes.contains("pk_axpy"));
}

TEST(Object, ModulesWithoutKernelsAreAnError) {
  mlir::MLIRContext &context = pk::defaultContext();
  mlir::OwningOpRef<mlir::ModuleOp> empty =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
    diagnostics += d.str();
    return mlir::success();
  });
  llvm::SmallVector<char> object;
  EXPECT_TRUE(mlir::failed(mlir::pk::compileToObject(*empty, {}, object)));
  EXPECT_EQ(diagnostics, "no pk.kernel to compile");
}

} // namespace

namespace {

// The AOT compile sizes matmul register tiles for the target CPU's vectors.
TEST(Object, VectorWidthComesFromTheTargetCpu) {
  for (auto [cpu, bits] : {std::pair<const char *, int64_t>{"x86-64", 128},
                           {"haswell", 256},
                           {"skylake-avx512", 512}}) {
    mlir::pk::TargetMachineOptions options;
    options.cpu = cpu;
    auto machine = mlir::pk::createTargetMachine(options);
    ASSERT_TRUE(bool(machine)) << llvm::toString(machine.takeError());
    EXPECT_EQ(mlir::pk::vectorBitsOf(**machine), bits) << cpu;
  }
}

} // namespace
