//===- ObjectTest.cpp - ahead-of-time compilation of traced kernels -------===//

#include "picokernel/Compiler/TargetMachine.h"
#include "picokernel/Frontend/TraceIR.h"
#include "picokernel/Target/PkToObject.h"
#include "picokernel/picokernel.h"

#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using pk::all;
using pk::Ref;

TEST(Object, TracedKernelsCompileAheadOfTime) {
  auto module = pk::trace(
      "axpy", [](Ref x, Ref y, Ref o) { o[all] = 2.5f * x[all] + y[all]; },
      {{"x", {16}, pk::f32}, {"y", {16}, pk::f32}, {"o", {16}, pk::f32}});

  std::string header = pk::cHeader(module);
  EXPECT_NE(header.find("/* axpy(x: float32[16], y: float32[16], "
                        "o: float32[16]); writes o */\n"
                        "void pk_axpy(const float *x, const float *y, "
                        "float *o);"),
            std::string::npos)
      << header;

  pk::ObjectOptions options;
  options.cpu = "x86-64"; // a portable object
  std::vector<char> object = pk::compileToObject(module, options);
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

// At the API's edge the same failures are CompileErrors with the
// diagnostics as their message, and an empty pk::Module is one too.
TEST(Object, FailuresAreCompileErrorsAtTheApi) {
  auto expectError = [](const std::function<void()> &compile,
                        const std::string &message) {
    try {
      compile();
      ADD_FAILURE() << "no CompileError; expected: " << message;
    } catch (const pk::CompileError &error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << error.what();
    }
  };
  pk::Module none;
  expectError([&] { pk::compileToObject(none); },
              "compileToObject: the module is empty");
  expectError([&] { pk::cHeader(none); }, "cHeader: the module is empty");

  pk::Module noKernel = pk::wrapModule(
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&pk::defaultContext())));
  expectError([&] { pk::compileToObject(noKernel); },
              "no pk.kernel to compile");
  expectError([&] { pk::cHeader(noKernel); }, "no pk.kernel");

  auto module = pk::trace("copy", [](Ref x, Ref o) { o[all] = x[all]; },
                          {{"x", {4}, pk::f32}, {"o", {4}, pk::f32}});
  pk::ObjectOptions unknownCpu;
  unknownCpu.triple = "no-such-triple";
  expectError([&] { pk::compileToObject(module, unknownCpu); },
              "compileToObject: ");
  EXPECT_FALSE(pk::compileToObject(module).empty()); // still compiles
}

// Threads failing at once in the shared context each get their own
// diagnostics (a context's handlers are shared by its threads).
TEST(Object, ConcurrentFailuresKeepTheirOwnMessages) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong = 0;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &wrong] {
      std::string name = "bad-name-" + std::to_string(t);
      auto module = pk::trace(name, [](Ref x, Ref o) { o[all] = x[all]; },
                              {{"x", {4}, pk::f32}, {"o", {4}, pk::f32}});
      for (int i = 0; i < 1000; ++i)
        try {
          pk::cHeader(module);
          ++wrong;
        } catch (const pk::CompileError &error) {
          if (std::string(error.what()).find("'" + name + "'") ==
              std::string::npos)
            ++wrong;
        }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong, 0);
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
