//===- Log.cpp - picokernel's log records ---------------------------------===//

#include "picokernel/Support/Log.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>

namespace pk {
namespace {

std::mutex &sinkMutex() {
  static std::mutex mutex;
  return mutex;
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
