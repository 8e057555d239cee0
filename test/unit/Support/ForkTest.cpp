//===- ForkTest.cpp - picokernel's locks across fork() --------------------===//
//
// A ForkSafeMutex that another thread holds when this one forks: the fork
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

TEST(ForkSafeMutex, AForkWaitsForItsHolderAndTheChildTakesIt) {
  pk::ForkSafeMutex mutex;
  std::atomic<bool> held{false}, released{false};
  std::thread holder([&] {
    std::lock_guard<pk::ForkSafeMutex> lock(mutex);
    held = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    released = true;
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
  ASSERT_GT(pid, 0);
  holder.join();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child hung or crashed: " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the fork did not wait for the holder";
  // The parent's mutex works as before.
  EXPECT_TRUE(mutex.try_lock());
  mutex.unlock();
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

} // namespace
