//===- ForkTest.cpp - picokernel's locks across fork() --------------------===//
//
// A ForkSafe mutex that another thread holds when this one forks: the fork
// waits until it is free, and the child can take it (a plain mutex stays
// held for ever in the child: the thread holding it is not there).
//
//===----------------------------------------------------------------------===//

#include "picokernel/Support/Fork.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace {

/// Another thread holds `mutex` (shared or not) for a while; this one forks
/// meanwhile. Returns the child's exit status: 0 if the fork waited for the
/// holder and the child could take the mutex.
template <typename Mutex, bool Shared> int forkWhileAnotherThreadHolds() {
  Mutex mutex;
  std::atomic<bool> held{false}, released{false};
  std::thread holder([&] {
    if constexpr (Shared)
      mutex.lock_shared();
    else
      mutex.lock();
    held = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    released = true;
    if constexpr (Shared)
      mutex.unlock_shared();
    else
      mutex.unlock();
  });
  while (!held)
    std::this_thread::yield();
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30); // a child waiting for ever ends with SIGALRM
    bool waited = released;
    mutex.lock();
    mutex.unlock();
    _exit(waited ? 0 : 2);
  }
  holder.join();
  int status = -1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid)
    return -1;
  // The parent's mutex works as before.
  if (!mutex.try_lock())
    return -2;
  mutex.unlock();
  return status;
}

TEST(ForkSafeMutex, AForkWaitsForItsHolderAndTheChildTakesIt) {
  EXPECT_EQ((forkWhileAnotherThreadHolds<pk::ForkSafeMutex, false>()), 0)
      << "256 * 2: the fork did not wait; 14: the child hung";
}

TEST(ForkSafeMutex, ASharedOneHeldSharedToo) {
  EXPECT_EQ((forkWhileAnotherThreadHolds<pk::ForkSafeSharedMutex, true>()), 0);
  EXPECT_EQ((forkWhileAnotherThreadHolds<pk::ForkSafeSharedMutex, false>()), 0);
}

TEST(ForkSafeMutex, OnesMadeAndDestroyedAroundForksStayUsable) {
  for (int round = 0; round < 3; ++round) {
    auto *made = new pk::ForkSafeMutex;
    pid_t pid = fork();
    if (pid == 0) {
      alarm(30);
      made->lock();
      pk::ForkSafeMutex another;
      another.lock();
      another.unlock();
      made->unlock();
      _exit(0);
    }
    ASSERT_GT(pid, 0);
    delete made; // no longer taken by later forks
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
}

TEST(DestroyInsideGate, NeverWaitsForAPendingFork) {
  // A thread is inside the gate for a second; another forks meanwhile (the
  // fork waits for the gate to empty); this one destroys an object: it
  // returns at once, and the object is destroyed by then or by the next
  // entry into the gate.
  std::atomic<bool> inside{false};
  std::thread compiling([&] {
    pk::CompileGate gate;
    inside = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  });
  while (!inside)
    std::this_thread::yield();
  pid_t pid = -1;
  std::thread forking([&] {
    pid = fork();
    if (pid == 0)
      _exit(0);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  static std::atomic<bool> destroyed;
  destroyed = false;
  auto start = std::chrono::steady_clock::now();
  pk::destroyInsideGate(nullptr, [](void *) { destroyed = true; });
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, std::chrono::milliseconds(500));
  compiling.join();
  forking.join();
  int status = -1;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(status, 0);
  {
    pk::CompileGate next;
  }
  EXPECT_TRUE(destroyed);
}

} // namespace
