//===- Log.cpp - picokernel's log records ---------------------------------===//

#include "picokernel/Support/Log.h"
#include "picokernel/Support/Fork.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
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

LogSink &currentSink() {
  static LogSink sink;
  return sink;
}

} // namespace

bool logCompilesRequested() {
  const char *value = std::getenv("PK_LOG_COMPILES");
  if (!value)
    return false;
  std::string text = llvm::StringRef(value).trim().lower();
  return !(text.empty() || text == "0" || text == "false" || text == "off" ||
           text == "no");
}

void setLogSink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  currentSink() = std::move(sink);
}

void logRecord(LogLevel level, const std::string &message) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  if (currentSink()) {
    currentSink()(level, message);
    return;
  }
  if (level == LogLevel::Info && !logCompilesRequested())
    return;
  llvm::errs() << "picokernel: " << message << "\n";
}

} // namespace pk
