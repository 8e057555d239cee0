//===- Logging.h - picokernel's log records to Python's logging -*- C++ -*-===//
//
// The extension's log sink (Support/Log.h): records wait in a queue, since
// they come from any thread, often with picokernel's locks held and without
// the GIL, and go to picokernel._log_record (logging.getLogger("picokernel"))
// when a call returns to Python.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_PYTHON_LOGGING_H
#define PICOKERNEL_PYTHON_LOGGING_H

#include <nanobind/nanobind.h>

namespace pk::python {

/// Makes the queue picokernel's log sink, and defines the module's
/// _flush_log and _environment_switch (PK_LOG_COMPILES as the runtime reads
/// it) for the package's logging.
void bindLogging(nanobind::module_ &module);

/// Hands the queued records to Python's logging (the GIL held); cheap when
/// there are none. An error of a logging handler is reported as unraisable.
void flushLogRecords();

} // namespace pk::python

#endif // PICOKERNEL_PYTHON_LOGGING_H
