"""A run's output as it streams: lines cut from the pipes' chunks, parsed by the agent's
parser, recorded, and told to the listener as :class:`RunEvent` values.

:class:`StreamProcessor` is the runner's per-line work, apart from the process handling
(:mod:`promptdeck.core.run.supervise`) so the benchmark measures exactly what a run does. It
gathers what the output says — signals, usage, the session id, the cost, an agent's error —
for the settling (:mod:`promptdeck.core.run.policy`) to read once the process has ended.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ..agents.base import (
    RESULT,
    SESSION,
    TEXT,
    USAGE,
    AgentEvent,
    OutputParser,
    Usage,
    fast_factory,
)
from ..lean_dataclass import dataclass
from ..phases.signals import Signal, SignalParser
from ..records.schema import RunResult
from ..records.writer import RunRecord
from ..units import context_share
from ..vocabulary import RunEventKind, Stream

LINE_CAP = 1024 * 1024
"""Bytes of one output line held in memory to parse and show; the record on disk keeps the
whole line, however long: memory stays flat whatever the agent prints."""

Listener = Callable[["RunEvent"], None]


@dataclass(frozen=True)
class RunEvent:
    """What the runner tells its listener, from the reader threads.

    Attributes:
        kind: ``line`` (an output line), ``signal``, ``usage``, ``session``, ``notice``
            (promptdeck's own messages: git, warnings) or ``end``.
        text: the line or message.
        stream: ``stdout``, ``stderr`` or ``promptdeck``.
        agent_text: the line is the agent's own text (where signals count).
        line_kind: for ``line``: the parsed kind (``text``, ``tool_use``, ``tool_result``,
            ``info``, ``result``, ``session``, ``usage``).
        signal: for ``signal``.
        usage: for ``usage``: the latest message's usage.
        context_tokens: tokens in the context window, when known.
        context_window: the window size, when known.
        session_id: for ``session``.
        cost_usd: the run's cost, when reported.
        result: for ``end``.
        at: the time (epoch seconds).
    """

    kind: RunEventKind
    text: str = ""
    stream: Stream = "stdout"
    agent_text: bool = False
    line_kind: str = ""
    signal: Signal | None = None
    usage: Usage | None = None
    context_tokens: int | None = None
    context_window: int | None = None
    session_id: str | None = None
    cost_usd: float | None = None
    result: RunResult | None = None
    at: float = 0.0

    @property
    def context_used(self) -> float | None:
        """Context use as a fraction of the window, when both are known."""
        return context_share(self.context_tokens, self.context_window)


_event = fast_factory(RunEvent)


class LineSplitter:
    """Cuts raw chunks into lines, holding at most ``cap`` bytes of any one line; the bytes
    beyond are counted, not kept."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._parts: list[bytes] = []
        self._held = 0
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[tuple[bytes, int]]:
        """The lines ``chunk`` completes: (the line's first ``cap`` bytes, bytes dropped)."""
        lines: list[tuple[bytes, int]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end + 1
            self._keep(chunk, start, stop)
            if end < 0:
                return lines
            lines.append(self._take())
            start = stop

    def finish(self) -> tuple[bytes, int] | None:
        """The unterminated last line, if any."""
        return self._take() if self._parts or self._dropped else None

    def _keep(self, chunk: bytes, start: int, stop: int) -> None:
        room = self.cap - self._held
        size = stop - start
        if room > 0 and size:
            kept = chunk[start : start + min(room, size)]
            self._parts.append(kept)
            self._held += len(kept)
            size -= len(kept)
        self._dropped += size

    def _take(self) -> tuple[bytes, int]:
        line = b"".join(self._parts)
        dropped = self._dropped
        self._parts, self._held, self._dropped = [], 0, 0
        return line, dropped


class StreamProcessor:
    """Parses, records and reports output lines: the runner's per-line work.

    Separate from the process handling so the benchmark measures exactly what a run does.
    Thread-safe: stdout and stderr reader threads call it concurrently.
    """

    def __init__(
        self,
        parser: OutputParser,
        record: RunRecord,
        listener: Listener | None = None,
        *,
        stream_format: str = "jsonl",
    ) -> None:
        self.parser = parser
        self.record = record
        self.listener = listener
        self.signal_parser = SignalParser()
        self.session_id: str | None = None
        self.usage: Usage | None = None
        self.total_usage: Usage | None = None
        self.context_tokens: int | None = None
        self.context_window: int | None = None
        self.cost_usd: float | None = None
        self.agent_error = False
        self.lines = 0
        self._stdout_lines = LineSplitter(LINE_CAP)
        self._stderr_lines = LineSplitter(LINE_CAP)
        self._plain = stream_format == "text"
        self._lock = threading.Lock()

    def emit(self, event: RunEvent) -> None:
        """Tell the listener; a listener that raises is logged and dropped, never fatal."""
        if self.listener is None:
            return
        try:
            self.listener(event)
        except Exception as exc:  # a listener's bug must not stop the recording
            self.record.log(f"listener error: {exc!r}")
            self.listener = None

    def notice(self, text: str) -> None:
        """One of promptdeck's own lines (git, warnings): into the session log and to the
        listener."""
        self.record.log(text)
        self.emit(RunEvent("notice", text, stream="promptdeck", at=time.time()))

    def stdout_chunk(self, raw: bytes) -> None:
        """Raw stdout bytes as read: recorded as they are at once (a partial last line
        included), parsed line by line with at most :data:`LINE_CAP` bytes of a line held."""
        self.record.write_stream(raw)
        for line, dropped in self._stdout_lines.feed(raw):
            self._parse_stdout(line, dropped)

    def stderr_chunk(self, raw: bytes) -> None:
        """Raw stderr bytes as read (see :meth:`stdout_chunk`)."""
        self.record.write_stderr(raw)
        for line, dropped in self._stderr_lines.feed(raw):
            self._show_stderr(line, dropped)

    def end_of_stream(self, is_stdout: bool) -> None:
        """The pipe closed: an unterminated last line is parsed (or shown) now."""
        lines = self._stdout_lines if is_stdout else self._stderr_lines
        last = lines.finish()
        if is_stdout:
            self.record.end_stream()
            if last is not None:
                self._parse_stdout(*last)
        else:
            self.record.end_stderr()
            if last is not None:
                self._show_stderr(*last)

    def _decode(self, raw: bytes, dropped: int, where: str) -> str:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if dropped:
            line += f" … [{dropped:,} more bytes of this line are kept in {where}]"
        return line

    def _parse_stdout(self, raw: bytes, dropped: int) -> None:
        now = time.time()
        line = self._decode(raw, dropped, self.record.stream_path.name)
        with self._lock:
            self.lines += 1
            for event in self.parser.parse(line):
                self._handle(event, now)

    def _show_stderr(self, raw: bytes, dropped: int) -> None:
        now = time.time()
        line = self._decode(raw, dropped, "stderr.log")
        with self._lock:
            self.emit(RunEvent("line", line, stream="stderr", line_kind="info", at=now))

    def _handle(self, event: AgentEvent, now: float) -> None:
        kind = event.kind
        listening = self.listener is not None
        if kind == TEXT:
            if listening:
                self.emit(
                    _event(kind="line", text=event.text, agent_text=True, line_kind=TEXT, at=now)
                )
            if self._plain:
                found = self.signal_parser.feed(event.text + "\n")
            else:
                found = self.signal_parser.feed(event.text)
                found += self.signal_parser.flush()
            for signal in found:
                self.record.append_signal(signal.to_dict(), now)
                self.emit(RunEvent("signal", signal.line, signal=signal, at=now))
            return
        if kind == USAGE:
            self.usage = event.usage
            changed = False
            if event.context_tokens is not None and event.context_tokens != self.context_tokens:
                self.context_tokens = event.context_tokens
                changed = True
            if event.context_window and event.context_window != self.context_window:
                self.context_window = event.context_window
                changed = True
            # Every content block of a message repeats its usage: report changes only.
            if listening and changed:
                self.emit(
                    _event(
                        kind="usage",
                        usage=event.usage,
                        context_tokens=self.context_tokens,
                        context_window=self.context_window,
                        at=now,
                    )
                )
            return
        if kind == SESSION:
            if event.session_id:
                self.session_id = event.session_id
                self.emit(RunEvent("session", event.text, session_id=event.session_id, at=now))
            return
        if kind == RESULT:
            if event.session_id:
                self.session_id = event.session_id
            if event.usage is not None:
                self.total_usage = event.usage
            if event.cost_usd is not None:
                self.cost_usd = event.cost_usd
            self.agent_error = self.agent_error or event.is_error
        if listening:
            self.emit(
                _event(
                    kind="line", text=event.text, line_kind=kind, cost_usd=event.cost_usd, at=now
                )
            )

    def finish(self) -> None:
        """End of output: a last unterminated line of plain text is judged too."""
        with self._lock:
            now = time.time()
            for signal in self.signal_parser.flush():
                self.record.append_signal(signal.to_dict(), now)
                self.emit(RunEvent("signal", signal.line, signal=signal, at=now))
