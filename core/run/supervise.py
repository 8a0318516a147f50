"""Process supervision for a run: the supervisor itself lives in
:mod:`promptdeck.core.supervisor`, below capture and run, which both use it."""

from __future__ import annotations

from ..supervisor import (
    CANCEL_GRACE,
    POLL_SECONDS,
    READ_CHUNK,
    READER_JOIN_SECONDS,
    ProcessExit,
    ProcessSupervisor,
    start_watchdog,
    stop_watchdog,
)

__all__ = [
    "CANCEL_GRACE",
    "POLL_SECONDS",
    "READER_JOIN_SECONDS",
    "READ_CHUNK",
    "ProcessExit",
    "ProcessSupervisor",
    "start_watchdog",
    "stop_watchdog",
]
