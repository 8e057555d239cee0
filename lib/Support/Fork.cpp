//===- Fork.cpp - fork() while other threads compile ----------------------===//

#include "picokernel/Support/Fork.h"

#include "llvm/ADT/STLExtras.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <condition_variable>
#include <mutex>
#include <new>
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
  gate.inside = gateDepth > 0 ? 1 : 0;
}

void enter() {
  if (gateDepth++ > 0)
    return;
  Gate &gate = Gate::get();
  std::unique_lock<std::mutex> lock(gate.mutex);
  gate.changed.wait(lock, [&] { return !gate.forking; });
  ++gate.inside;
}

void leave() {
  if (--gateDepth > 0)
    return;
  Gate &gate = Gate::get();
  std::lock_guard<std::mutex> lock(gate.mutex);
  if (--gate.inside == 0)
    gate.changed.notify_all();
}

} // namespace

/// The ForkSafeMutexes alive.
struct LiveForkSafeMutexes {
  std::mutex mutex;
  llvm::SmallPtrSet<ForkSafeMutex *, 16> mutexes;

  static LiveForkSafeMutexes &get() {
    static LiveForkSafeMutexes *live = [] {
      auto *created = new LiveForkSafeMutexes; // never destroyed
      registerForkHandler(ForkStage::TakeLocks, {lockAll, unlockAll, renewAll});
      return created;
    }();
    return *live;
  }
  static void lockAll() {
    LiveForkSafeMutexes &live = get();
    live.mutex.lock();
    for (ForkSafeMutex *each : live.mutexes)
      each->mutex.lock();
  }
  static void unlockAll() {
    LiveForkSafeMutexes &live = get();
    for (ForkSafeMutex *each : live.mutexes)
      each->mutex.unlock();
    live.mutex.unlock();
  }
  static void renewAll() {
    LiveForkSafeMutexes &live = get();
    for (ForkSafeMutex *each : live.mutexes)
      new (&each->mutex) std::mutex;
    new (&live.mutex) std::mutex;
  }
};

namespace {
/// Made while the library loads (see Fork.h): the gate and the live
/// mutexes, whose first use is outside the gate.
[[maybe_unused]] const bool madeAtLoad =
    (Gate::get(), LiveForkSafeMutexes::get(), true);
} // namespace

ForkSafeMutex::ForkSafeMutex() {
  LiveForkSafeMutexes &live = LiveForkSafeMutexes::get();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.mutexes.insert(this);
}

ForkSafeMutex::~ForkSafeMutex() {
  LiveForkSafeMutexes &live = LiveForkSafeMutexes::get();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.mutexes.erase(this);
}

void registerForkHandler(ForkStage stage, ForkHandler handler) {
  Handlers &handlers = Handlers::get();
  std::lock_guard<std::mutex> lock(handlers.mutex);
  handlers.stages[int(stage)].push_back(handler);
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
