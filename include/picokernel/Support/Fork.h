//===- Fork.h - fork() while other threads compile ------------------------===//
//
// A forked child has only the thread that forked. Whatever another thread
// held at that moment stays held in the child for ever: picokernel's locks,
// and LLVM's and MLIR's one-time initializations (function-local statics,
// pass registration) that a compile was running. So a fork first waits for
// every compile to leave LLVM and MLIR (the compile gate), then takes
// picokernel's locks; the child renews them.
//
// What a fork handler uses is made when the library loads: made lazily by
// a function-local static, it could be half made by one thread when another
// forks, and the child would wait for that static's guard for ever.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_FORK_H
#define PICOKERNEL_SUPPORT_FORK_H

#include <mutex>

namespace pk {

/// When a fork handler runs: before a fork, every WaitForCompiles handler
/// (in registration order) before every TakeLocks one; after it, the
/// TakeLocks handlers first, in reverse.
enum class ForkStage { WaitForCompiles, TakeLocks };

struct ForkHandler {
  void (*prepare)() = nullptr;
  void (*parent)() = nullptr;
  /// In the child: make the locks anew rather than unlock them (glibc hands
  /// an unlocked rwlock to the parent's waiting threads, which the child
  /// does not have).
  void (*child)() = nullptr;
};

/// Registers `handler`. Call it while the library loads (from a
/// namespace-scope initializer; see the file comment).
void registerForkHandler(ForkStage stage, ForkHandler handler);

/// A mutex for picokernel's state that threads change outside the compile
/// gate: a fork takes every one (ForkStage::TakeLocks) and the child makes
/// them anew, so a child never inherits one held by a thread it does not
/// have, nor the state it guards half changed. Two are never held at once.
class ForkSafeMutex {
public:
  ForkSafeMutex();
  ~ForkSafeMutex();
  ForkSafeMutex(const ForkSafeMutex &) = delete;
  ForkSafeMutex &operator=(const ForkSafeMutex &) = delete;

  void lock() { mutex.lock(); }
  void unlock() { mutex.unlock(); }
  bool try_lock() { return mutex.try_lock(); }

private:
  friend struct LiveForkSafeMutexes;
  std::mutex mutex;
};

/// Marks a thread's work inside LLVM or MLIR (tracing, pipelines, code
/// generation): a fork waits until no thread is inside. Nests; code inside
/// must not wait for anything a forking thread may hold (Python's GIL, a
/// compile of another thread): it steps out with CompileGate::Outside.
class CompileGate {
public:
  CompileGate();
  ~CompileGate();
  CompileGate(const CompileGate &) = delete;
  CompileGate &operator=(const CompileGate &) = delete;

  /// Leaves the gate for its lifetime (if inside), to wait or call Python.
  class Outside {
  public:
    Outside();
    ~Outside();
    Outside(const Outside &) = delete;
    Outside &operator=(const Outside &) = delete;

  private:
    int depth;
  };
};

} // namespace pk

#endif // PICOKERNEL_SUPPORT_FORK_H
