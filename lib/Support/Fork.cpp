//===- Fork.cpp - fork() while other threads compile ----------------------===//

#include "picokernel/Support/Fork.h"

#include "llvm/ADT/STLExtras.h"

#include "llvm/ADT/DenseMap.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include <pthread.h>

namespace pk {
namespace {

/// The handlers, run by one pthread_atfork registration in stage order.
struct Handlers {
  std::mutex mutex; // held from before a fork to after it
  std::vector<ForkHandler> stages[2];

  static Handlers &get() {
    // (Made by the first registration, while the library loads.)
    static Handlers *handlers = [] {
      auto *created = new Handlers; // never destroyed: forks may use it
      pthread_atfork(prepareAll, parentAll, childAll);
      return created;
    }();
    return *handlers;
  }
  static void prepareAll() {
    Handlers &handlers = get();
    // Waiting for compiles happens without the lock: a compile may
    // register a handler (a first use) before it leaves.
    std::vector<ForkHandler> waits;
    {
      std::lock_guard<std::mutex> lock(handlers.mutex);
      waits = handlers.stages[int(ForkStage::WaitForCompiles)];
    }
    for (const ForkHandler &handler : waits)
      handler.prepare();
    handlers.mutex.lock();
    for (const ForkHandler &handler :
         handlers.stages[int(ForkStage::TakeLocks)])
      if (handler.prepare)
        handler.prepare();
  }
  template <typename Member> static void afterAll(Member member) {
    Handlers &handlers = get();
    for (int stage = 1; stage >= 0; --stage)
      for (const ForkHandler &handler : llvm::reverse(handlers.stages[stage]))
        if (handler.*member)
          (handler.*member)();
  }
  static void parentAll() {
    afterAll(&ForkHandler::parent);
    get().mutex.unlock();
  }
  static void childAll() {
    afterAll(&ForkHandler::child);
    new (&get().mutex) std::mutex;
  }
};

/// Threads inside LLVM or MLIR; a pending fork keeps new ones out.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  int inside = 0;
  bool forking = false;
  bool closed = false; // for good, to all but the thread that exits
  std::thread::id exiting;

  /// Whether the calling thread may enter now.
  bool open() const {
    return !forking && (!closed || std::this_thread::get_id() == exiting);
  }

  static Gate &get() {
    static Gate *gate = [] {
      auto *created = new Gate; // never destroyed: forks may use it
      registerForkHandler(ForkStage::WaitForCompiles,
                          {waitUntilEmpty, reopen, reopenInChild});
      return created;
    }();
    return *gate;
  }
  static void waitUntilEmpty();
  static void reopen();
  static void reopenInChild();
};

/// How deep this thread is inside the gate.
thread_local int gateDepth = 0;

void Gate::waitUntilEmpty() {
  Gate &gate = get();
  std::unique_lock<std::mutex> lock(gate.mutex);
  gate.forking = true;
  // (A thread that forks from inside waits only for the others.)
  int own = gateDepth > 0 ? 1 : 0;
  gate.changed.wait(lock, [&] { return gate.inside == own; });
  lock.release(); // held until after the fork
}

void Gate::reopen() {
  Gate &gate = get();
  gate.forking = false;
  gate.mutex.unlock();
  gate.changed.notify_all();
}

void Gate::reopenInChild() {
  Gate &gate = get();
  new (&gate.mutex) std::mutex;
  new (&gate.changed) std::condition_variable;
  gate.forking = false;
  gate.closed = false;
  gate.inside = gateDepth > 0 ? 1 : 0;
}

/// What destroyInsideGate could not destroy at once (a fork was pending):
/// the next thread to enter the gate destroys it.
struct Deferred {
  void *object;
  void (*destroy)(void *);
  Deferred *next;
};
std::atomic<Deferred *> deferred{nullptr};

void destroyDeferred() {
  Deferred *list = deferred.exchange(nullptr, std::memory_order_acquire);
  while (list) {
    list->destroy(list->object);
    delete std::exchange(list, list->next);
  }
}

void enter() {
  if (gateDepth++ > 0)
    return;
  Gate &gate = Gate::get();
  {
    std::unique_lock<std::mutex> lock(gate.mutex);
    gate.changed.wait(lock, [&] { return gate.open(); });
    ++gate.inside;
  }
  if (deferred.load(std::memory_order_relaxed))
    destroyDeferred();
}

/// Enters the gate unless that means waiting (for a pending fork, or a
/// few tries at its lock).
bool enterWithoutWaiting() {
  if (gateDepth > 0) {
    ++gateDepth;
    return true;
  }
  Gate &gate = Gate::get();
  for (int attempt = 0; attempt < 64; ++attempt) {
    std::unique_lock<std::mutex> lock(gate.mutex, std::try_to_lock);
    if (!lock.owns_lock()) {
      std::this_thread::yield();
      continue;
    }
    if (!gate.open())
      return false;
    ++gate.inside;
    gateDepth = 1;
    return true;
  }
  return false;
}

void leave() {
  if (--gateDepth > 0)
    return;
  Gate &gate = Gate::get();
  std::lock_guard<std::mutex> lock(gate.mutex);
  // (A fork or an exit from inside the gate waits for one thread inside.)
  if (--gate.inside <= 1)
    gate.changed.notify_all();
}

} // namespace

namespace {
/// The ForkSafe locks alive.
struct LiveLocks {
  std::mutex mutex;
  llvm::DenseMap<void *, detail::ForkTakenLock> locks;

  static LiveLocks &get() {
    static LiveLocks *live = [] {
      auto *created = new LiveLocks; // never destroyed: forks may use it
      registerForkHandler(ForkStage::TakeLocks, {lockAll, unlockAll, renewAll});
      return created;
    }();
    return *live;
  }
  static void lockAll() {
    LiveLocks &live = get();
    live.mutex.lock();
    for (auto &[mutex, lock] : live.locks)
      lock.lock(mutex);
  }
  static void unlockAll() {
    LiveLocks &live = get();
    for (auto &[mutex, lock] : live.locks)
      lock.unlock(mutex);
    live.mutex.unlock();
  }
  static void renewAll() {
    LiveLocks &live = get();
    for (auto &[mutex, lock] : live.locks)
      lock.renew(mutex);
    new (&live.mutex) std::mutex;
  }
};

/// Made while the library loads (see Fork.h): the gate and the live locks,
/// whose first use is outside the gate.
[[maybe_unused]] const bool madeAtLoad = (Gate::get(), LiveLocks::get(), true);
} // namespace

void detail::addForkTakenLock(const ForkTakenLock &lock) {
  LiveLocks &live = LiveLocks::get();
  std::lock_guard<std::mutex> guard(live.mutex);
  live.locks[lock.mutex] = lock;
}

void detail::removeForkTakenLock(void *mutex) {
  LiveLocks &live = LiveLocks::get();
  std::lock_guard<std::mutex> guard(live.mutex);
  live.locks.erase(mutex);
}

void destroyInsideGate(void *object, void (*destroy)(void *)) {
  if (enterWithoutWaiting()) {
    destroy(object);
    leave();
    return;
  }
  auto *later = new Deferred{object, destroy, deferred.load()};
  while (!deferred.compare_exchange_weak(later->next, later,
                                         std::memory_order_release))
    ;
}

void registerForkHandler(ForkStage stage, ForkHandler handler) {
  Handlers &handlers = Handlers::get();
  std::lock_guard<std::mutex> lock(handlers.mutex);
  handlers.stages[int(stage)].push_back(handler);
}

void closeCompileGateForExit() {
  Gate &gate = Gate::get();
  std::unique_lock<std::mutex> lock(gate.mutex);
  gate.closed = true;
  gate.exiting = std::this_thread::get_id();
  int own = gateDepth > 0 ? 1 : 0;
  gate.changed.wait(lock, [&] { return gate.inside == own; });
}

CompileGate::CompileGate() { enter(); }
CompileGate::~CompileGate() { leave(); }

CompileGate::Outside::Outside() : depth(gateDepth) {
  if (depth == 0)
    return;
  gateDepth = 1;
  leave();
}

CompileGate::Outside::~Outside() {
  if (depth == 0)
    return;
  enter();
  gateDepth = depth;
}

} // namespace pk
