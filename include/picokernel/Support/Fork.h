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
#include <new>
#include <shared_mutex>
#include <type_traits>

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

/// Runs `destroy(object)` inside the compile gate without waiting: at once,
/// or, while a fork is pending, when a thread next enters the gate. For
/// teardown that must not overlap a fork (a compiled kernel's takes libgcc's
/// unwinder lock, for ever in a child forked meanwhile) but may happen under
/// a lock a fork takes, where entering the gate could wait for that fork.
void destroyInsideGate(void *object, void (*destroy)(void *));

/// A smart pointer's deleter that deletes through destroyInsideGate.
struct DeleteInsideGate {
  template <typename T> void operator()(T *object) const {
    using Mutable = std::remove_const_t<T>;
    destroyInsideGate(const_cast<Mutable *>(object),
                      [](void *p) { delete static_cast<Mutable *>(p); });
  }
};

namespace detail {
/// How a fork takes, gives back and renews one ForkSafe lock.
struct ForkTakenLock {
  void *mutex;
  void (*lock)(void *);
  void (*unlock)(void *);
  void (*renew)(void *);
};
void addForkTakenLock(const ForkTakenLock &lock);
void removeForkTakenLock(void *mutex);
} // namespace detail

/// A mutex (std::mutex, std::shared_mutex) for picokernel's state that
/// threads change outside the compile gate: a fork takes every one
/// (ForkStage::TakeLocks) and the child makes them anew, so a child never
/// inherits one held by a thread it does not have, nor the state it guards
/// half changed. A thread never holds two at once (a fork takes them in no
/// set order), nor makes or destroys one while it holds one.
template <typename Mutex> class ForkSafe {
public:
  ForkSafe() {
    detail::addForkTakenLock(
        {&mutex, [](void *m) { static_cast<Mutex *>(m)->lock(); },
         [](void *m) { static_cast<Mutex *>(m)->unlock(); },
         [](void *m) { new (m) Mutex; }});
  }
  ~ForkSafe() { detail::removeForkTakenLock(&mutex); }
  ForkSafe(const ForkSafe &) = delete;
  ForkSafe &operator=(const ForkSafe &) = delete;

  void lock() { mutex.lock(); }
  void unlock() { mutex.unlock(); }
  bool try_lock() { return mutex.try_lock(); }
  void lock_shared() { mutex.lock_shared(); }
  void unlock_shared() { mutex.unlock_shared(); }
  bool try_lock_shared() { return mutex.try_lock_shared(); }

private:
  Mutex mutex;
};

using ForkSafeMutex = ForkSafe<std::mutex>;
using ForkSafeSharedMutex = ForkSafe<std::shared_mutex>;

/// For a process about to exit while other threads may still compile
/// (Python's daemon threads): waits until no other thread is inside the
/// compile gate and keeps them out from then on (they wait for ever), so
/// that none runs LLVM or MLIR while exit destroys their libraries' state.
/// The calling thread may still compile; a child forked afterwards opens
/// the gate again.
void closeCompileGateForExit();

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
