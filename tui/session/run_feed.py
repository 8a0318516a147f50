"""The hand-off between a run's reader thread and the UI: lines queue here and the phase
panel takes them in batches on a timer, so a fast agent never floods the event loop."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import field
from typing import TYPE_CHECKING

from promptdeck.core.lean_dataclass import dataclass

if TYPE_CHECKING:
    from promptdeck.core.run import RunEvent

FLUSH_INTERVAL = 1 / 30
"""Seconds between flushes of queued lines into the log (~30 Hz)."""

MAX_QUEUED_LINES = 20_000
"""Lines kept between two flushes; older ones are dropped from the view only (the run record
holds the whole stream)."""

MAX_SHOWN_CHARS = 2_000
"""Characters of one line shown in the phase log; the rest is marked, not kept: the log holds
thousands of lines, and an agent's megabyte-long lines must not multiply into gigabytes."""


def shown_line(line: str) -> str:
    """``line``, cut to :data:`MAX_SHOWN_CHARS` with a mark saying how much more there is."""
    if len(line) <= MAX_SHOWN_CHARS:
        return line
    rest = len(line) - MAX_SHOWN_CHARS
    return f"{line[:MAX_SHOWN_CHARS]} … [{rest:,} more characters in the run record]"


@dataclass
class FeedBatch:
    """What arrived since the last flush.

    Attributes:
        lines: output lines, oldest first.
        dropped: lines dropped from the view because the queue was full.
        events: other run events (signals, usage, the end), in order.
    """

    lines: list[str] = field(default_factory=list)
    dropped: int = 0
    events: list[RunEvent] = field(default_factory=list)


class RunFeed:
    """A thread-safe queue of output lines and events (written by the reader thread)."""

    def __init__(self, max_lines: int = MAX_QUEUED_LINES) -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._events: list[RunEvent] = []
        self._dropped = 0
        self._lock = threading.Lock()

    def push_line(self, line: str) -> None:
        """Queue one output line (called from the reader thread)."""
        with self._lock:
            if len(self._lines) == self._lines.maxlen:
                self._dropped += 1
            self._lines.append(shown_line(line))

    def push_event(self, event: RunEvent) -> None:
        """Queue a non-line event (called from the reader thread)."""
        with self._lock:
            self._events.append(event)

    def drain(self) -> FeedBatch:
        """Take everything queued so far (called on the UI's timer)."""
        with self._lock:
            batch = FeedBatch(list(self._lines), self._dropped, self._events)
            self._lines.clear()
            self._events = []
            self._dropped = 0
        return batch
