"""picokernel's logging: every compile and its reason, disk-cache loads and
evictions at INFO, and warnings, go to the "picokernel" logger (the C++
runtime queues them; calls hand them over as they return, through
_log_record). PK_LOG_COMPILES=1 shows the INFO records on stderr whatever
the logger's level; warnings reach stderr as Python's do when logging is
not configured."""

import atexit
import logging
import sys

from . import _picokernel

_logger = logging.getLogger("picokernel")


def _switched_on(name):
    """Whether environment variable `name` (a switch, off when unset) is on,
    read as the runtime reads PK_CACHE."""
    return _picokernel._environment_switch(name, False)


def _log_compiles():
    return _switched_on("PK_LOG_COMPILES")


class _StderrHandler(logging.Handler):
    """picokernel's warnings on sys.stderr, as "picokernel: message", where
    logging has no handler of its own (as Python's last-resort handler would
    print them, which a handler here otherwise stops)."""

    def emit(self, record):
        if (record.levelno < logging.WARNING or logging.getLogger().handlers
                or len(_logger.handlers) > 1):
            return
        try:
            sys.stderr.write(f"picokernel: {record.getMessage()}\n")
        except Exception:
            self.handleError(record)


_logger.addHandler(_StderrHandler())


def _log_record(level, message):
    """Logs one of the runtime's records ("info" or "warning"); with
    PK_LOG_COMPILES=1 an INFO record is also printed on stderr, whatever
    logging's configuration."""
    if level == "warning":
        _logger.warning(message)
        return
    if _log_compiles():
        sys.stderr.write(f"picokernel: {message}\n")
    _logger.info(message)


atexit.register(lambda: _picokernel._flush_log())
