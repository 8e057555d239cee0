//===- ForkTest.cpp - fork() while other threads compile ------------------===//
//
// A child forked while threads of its parent compile (holding a compile
// context's locks, the log's, or an unfinished cache entry) compiles and
// runs kernels itself, without waiting for those threads, which it does
// not have.
//
//===----------------------------------------------------------------------===//

#include "picokernel/Kernel/Kernel.h"
#include "picokernel/Support/Log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using pk::all;
using pk::Ref;

/// A fresh kernel adding `constant`: every call with a new kernel compiles.
pk::Kernel affine(double constant) {
  pk::KernelOptions options;
  options.dynamic = pk::DynamicSizes::Never;
  return pk::Kernel(
      "affine", [constant](Ref a, Ref o) { o[all] = a[all] * 2.0 + constant; },
      {"a", "o"}, options);
}

/// Whether `kernel` computes 2 a + constant over n elements.
bool computes(const pk::Kernel &kernel, int64_t n, double constant) {
  std::vector<double> a(n), o(n);
  for (int64_t i = 0; i < n; ++i)
    a[i] = double(i);
  pk::Shape shape = {n};
  std::vector<pk::ArrayView> views = {{a.data(), pk::f64, shape},
                                      {o.data(), pk::f64, shape}};
  kernel(views);
  for (int64_t i = 0; i < n; ++i)
    if (o[i] != 2.0 * double(i) + constant)
      return false;
  return true;
}

TEST(Fork, ChildrenCompileWhileTheParentsThreadsCompileAndLog) {
  // Every compile logs: records go through the log's lock.
  pk::setLogSink([](pk::LogLevel, const std::string &) {});
  pk::Kernel shared = affine(1.0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int64_t n = 10 + 1000 * t; !stop; ++n) {
        computes(affine(double(n)), 7, double(n)); // a new kernel
        computes(shared, n, 1.0);                  // a new shape of one
      }
    });
  int failed = 0;
  for (int trial = 0; trial < 30; ++trial) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3 * (trial % 5)));
    pid_t pid = fork();
    ASSERT_NE(pid, -1);
    if (pid == 0) {
      alarm(60); // a hang ends the child with SIGALRM
      bool right = computes(affine(-trial), 50 + trial, -trial) &&
                   computes(shared, 10 + trial, 1.0) &&
                   computes(shared, 1000 + trial, 1.0);
      _exit(right ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    failed += status != 0;
    EXPECT_EQ(status, 0) << "trial " << trial;
  }
  stop = true;
  for (std::thread &thread : threads)
    thread.join();
  pk::setLogSink({});
  EXPECT_EQ(failed, 0);
}

} // namespace
