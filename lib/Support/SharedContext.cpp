//===- SharedContext.cpp - MLIR contexts shared by threads, safe in forks -===//

#include "picokernel/Support/SharedContext.h"

#include "llvm/Support/ThreadPool.h"

namespace pk {
namespace {

/// A "pool" that runs each task at once in the thread that submits it:
/// stateless, so one instance serves every context and thread.
class CallerThreadExecutor final : public llvm::ThreadPoolInterface {
public:
  void wait() override {}
  void wait(llvm::ThreadPoolTaskGroup &) override {}
  unsigned getMaxConcurrency() const override { return 1; }

private:
  void asyncEnqueue(llvm::unique_function<void()> task,
                    llvm::ThreadPoolTaskGroup *) override {
    task();
  }
};

CallerThreadExecutor &callerThreadExecutor() {
  // Never destroyed: contexts that use it may outlive static destruction.
  static auto *executor = new CallerThreadExecutor;
  return *executor;
}

} // namespace

void shareWithoutThreads(mlir::MLIRContext &context) {
  // setThreadPool enables multithreading (locking uniquers) unless
  // --mlir-disable-threading disabled it for the whole process.
  context.setThreadPool(callerThreadExecutor());
}

} // namespace pk
