//===- Logging.cpp - picokernel's log records to Python's logging ---------===//

#include "Logging.h"

#include "Gil.h"

#include "picokernel/Support/Environment.h"
#include "picokernel/Support/Fork.h"
#include "picokernel/Support/Log.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace pk::python {
namespace {

struct Queue {
  std::mutex mutex;
  std::vector<std::pair<LogLevel, std::string>> records;
  std::atomic<bool> pending{false};
};

Queue *&queuePointer() {
  static Queue *records = new Queue; // used until exit, by any thread
  return records;
}

Queue &queue() { return *queuePointer(); }

/// Makes the queue picokernel's log sink.
void installLogSink() {
  // A forked child starts an empty queue: the parent's may be locked by a
  // thread the child does not have (records are added only under the
  // sink's lock, which a fork waits for; taking them out is not).
  registerForkHandler(ForkStage::TakeLocks,
                      {nullptr, nullptr, [] { queuePointer() = new Queue; }});
  setLogSink([](LogLevel level, const std::string &message) {
    Queue &q = queue();
    std::lock_guard<std::mutex> lock(q.mutex);
    q.records.emplace_back(level, message);
    q.pending.store(true, std::memory_order_release);
  });
}

} // namespace

void flushLogRecords() {
  Queue &q = queue();
  if (!q.pending.load(std::memory_order_acquire))
    return;
  std::vector<std::pair<LogLevel, std::string>> records;
  {
    std::lock_guard<std::mutex> lock(q.mutex);
    records.swap(q.records);
    q.pending.store(false, std::memory_order_release);
  }
  try {
    nb::object log = nb::module_::import_("picokernel").attr("_log_record");
    for (auto &[level, message] : records)
      callPython(log,
                 nb::make_tuple(level == LogLevel::Warning ? "warning" : "info",
                                message));
  } catch (nb::python_error &error) {
    error.discard_as_unraisable("picokernel's logging");
  }
}

void bindLogging(nb::module_ &module) {
  installLogSink();
  module.def("_flush_log", &flushLogRecords,
             "Hands picokernel's queued log records to logging.");
  module.def(
      "_environment_switch",
      [](const std::string &name, bool unset) {
        return environmentSwitch(name, unset);
      },
      nb::arg("name"), nb::arg("unset"),
      "Environment variable `name` read as an on/off switch, as picokernel "
      "reads PK_CACHE and PK_LOG_COMPILES: 1/0, true/false, on/off, yes/no; "
      "`unset` where it is unset or empty, or (with a warning) anything else.");
}

} // namespace pk::python
