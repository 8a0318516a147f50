"""Answering ``inspect``, ``compose`` and ``stories`` from a remembered copy
(:mod:`promptdeck.core.tokens.answers`).

A command whose output goes to a pipe or a file is looked up first: when the copy is proven
current (one ``stat`` per path the first run read), its bytes are written and the command ends
without importing the engine. Otherwise it runs as usual while its reads are recorded and its
output is copied; a run that exits 0 or 3 (over the error line, report printed) is remembered.
Output to a terminal is never answered from a copy (its width and colours belong to that
terminal). ``PROMPTDECK_ANSWER_CACHE=off`` turns this off.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..core.errors import EXIT_OK, EXIT_TOO_LARGE
from ..core.switches import ANSWER_CACHE, turned_off
from .streams import StreamProxy

ANSWERED_COMMANDS = ("inspect", "compose", "stories")
ENV_VAR = ANSWER_CACHE


def answerable(argv: Sequence[str]) -> bool:
    """True when ``argv`` is a command whose answer may come from a remembered copy."""
    if not argv or argv[0] not in ANSWERED_COMMANDS:
        return False
    if turned_off(ENV_VAR):
        return False
    # An asked-for exact count is the API's answer of now, never a remembered one.
    if any(arg in ("-h", "--help", "--exact-claude") for arg in argv):
        return False
    try:
        sys.stdout.fileno()  # a stream that is no file (replaced, captured) is never answered
        return not _to_terminal()
    except (AttributeError, OSError, ValueError):
        return False


def _to_terminal() -> bool:
    """Whether stdout is a terminal, asked the way the tables ask it when their module is
    already loaded (so that both always agree), else of the stream itself (not importing the
    table module keeps an answered command light)."""
    table = sys.modules.get(f"{__package__}.table")
    check = getattr(table, "is_terminal", None)
    if callable(check):
        return bool(check())
    return sys.stdout.isatty()


def replay(argv: Sequence[str]) -> int | None:
    """Write the remembered answer of ``argv`` and return its exit code, or None (no proven
    copy: run the command)."""
    from ..core.tokens import answer_key, remembered

    answer = remembered(answer_key(argv))
    if answer is None:
        return None
    sys.stdout.flush()
    sys.stdout.buffer.write(answer.stdout)
    sys.stdout.buffer.flush()
    sys.stderr.flush()
    sys.stderr.buffer.write(answer.stderr)
    sys.stderr.buffer.flush()
    return answer.code


def record(argv: Sequence[str], run: Callable[[], int]) -> int:
    """Run the command with its reads recorded and its output copied; remember the answer."""
    from ..core.tokens import Answer, ReadRecorder, answer_key, own_cache_files, remember

    key = answer_key(argv)  # before the run: the code and files as they were when it started
    recorder = ReadRecorder(own_cache_files())
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with recorder.recording():
            code = run()
    finally:
        sys.stdout, sys.stderr = saved
    if code in (EXIT_OK, EXIT_TOO_LARGE) and out.complete and err.complete:
        remember(key, Answer(bytes(out.copy), bytes(err.copy), code), recorder)
    return code


class _Tee(StreamProxy):
    """A text stream that writes through to ``stream`` and keeps a copy of the bytes, text
    and raw (``.buffer``) writes alike, in the order they were made."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.copy = bytearray()
        self.complete = True
        """False once something could not be copied exactly (the answer is then not kept)."""
        self.buffer = _BufferTee(stream, self)

    def write(self, text: str) -> int:
        written = self._stream.write(text)
        try:
            self.copy += text.encode(self.encoding, self.errors or "strict")
        except (UnicodeError, LookupError):
            self.complete = False
        return written


class _BufferTee:
    def __init__(self, stream: TextIO, tee: _Tee) -> None:
        self._raw: Any = stream.buffer
        self._tee = tee

    def write(self, data: bytes) -> int:
        written: int = self._raw.write(data)
        self._tee.copy += data
        return written

    def flush(self) -> None:
        self._raw.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)
