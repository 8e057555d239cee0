//===- Log.h - log records --------------------------------------*- C++ -*-===//
//
// What picokernel reports besides errors: every compile and its reason,
// disk-cache loads, evictions (Info), and warnings. Records go to one sink:
// by default stderr (Info records only with PK_LOG_COMPILES=1 in the
// environment); the Python package installs a sink that hands them to
// logging.getLogger("picokernel").
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_LOG_H
#define PICOKERNEL_SUPPORT_LOG_H

#include <functional>
#include <string>

namespace pk {

enum class LogLevel { Info, Warning };

/// Receives every record; may be called from any thread, with locks of
/// picokernel's held (it must not call back into picokernel or block on
/// another thread).
using LogSink = std::function<void(LogLevel, const std::string &message)>;

/// Replaces the sink (an empty one restores the default).
void setLogSink(LogSink sink);

/// Sends a record (its message without a trailing newline) to the sink.
void logRecord(LogLevel level, const std::string &message);

/// Whether PK_LOG_COMPILES asks the default sink for Info records (a
/// switch, off when unset: see environmentSwitch; read at every record, so
/// that programs can switch it on and off).
bool logCompilesRequested();

} // namespace pk

#endif // PICOKERNEL_SUPPORT_LOG_H
