//===- Log.cpp - picokernel's log records ---------------------------------===//

#include "picokernel/Support/Log.h"
#include "picokernel/Support/Environment.h"
#include "picokernel/Support/Fork.h"

#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <new>

namespace pk {
namespace {

/// Held while a record goes to the sink. A fork takes it: the sink's own
/// locks (taken inside it) are then free in the child.
std::mutex &sinkMutex() {
  static std::mutex *mutex = [] {
    auto *created = new std::mutex; // never destroyed: forks may use it
    registerForkHandler(ForkStage::TakeLocks,
                        {[] { sinkMutex().lock(); },
                         [] { sinkMutex().unlock(); },
                         [] { new (&sinkMutex()) std::mutex; }});
    return created;
  }();
  return *mutex;
}

/// Made while the library loads (see Support/Fork.h).
[[maybe_unused]] const bool sinkMutexMadeAtLoad = (sinkMutex(), true);

LogSink &currentSink() {
  static LogSink sink;
  return sink;
}

} // namespace

bool logCompilesRequested() {
  return environmentSwitch("PK_LOG_COMPILES", false);
}

void setLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  currentSink() = std::move(sink);
}

void logRecord(LogLevel level, const std::string &message) {
  // (Read before the lock: reading may warn, which logs a record.)
  bool printed = level != LogLevel::Info || logCompilesRequested();
  std::lock_guard<std::mutex> lock(sinkMutex());
  if (currentSink()) {
    currentSink()(level, message);
    return;
  }
  if (!printed)
    return;
  llvm::errs() << "picokernel: " << message << "\n";
}

} // namespace pk
