"""A bounded reader of JSON lines: a recorded stream, a client's transcript.

The file is checked by the guarded reader's rules before it is opened (a regular file inside
the given folder: never a FIFO, a device, or a symlink leading out of it), then read in chunks
up to a cap, so a transcript of a gigabyte costs no more than the cap; a line longer than the
line cap is skipped whole, never held in memory. Each line that is a JSON object is handed out;
every other line is counted, and what was skipped is said in :attr:`JsonLines.notes`.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path
from typing import Any

from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, stat_regular

MB = 1024 * 1024
STREAM_CAP = 512 * MB
"""The most of a recorded stream read."""
TRANSCRIPT_CAP = 256 * MB
"""The most of a client's transcript read."""
LINE_CAP = 32 * MB
"""A longer line is skipped whole."""
_CHUNK = 8 * MB
_NO_LIMIT = 1 << 62
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass
class JsonLines:
    """What a read met, filled while its lines are iterated.

    Attributes:
        problem: why the file was not read at all (None when it was).
        cut: the file was longer than the cap (its rest unread), or its last line ended
            without a newline.
        malformed: lines that were not JSON objects.
        long_lines: lines skipped for their length.
        notes: one line per thing skipped.
    """

    problem: TextProblem | None = None
    cut: bool = False
    malformed: int = 0
    long_lines: int = 0
    notes: list[str] = field(default_factory=list)


def _raw_lines(descriptor: int, cap: int, line_cap: int, seen: JsonLines) -> Iterator[bytes]:
    """The lines of the open file, up to ``cap`` bytes; over-long lines skipped unbuffered."""
    pending: list[bytes] = []
    pending_size = 0
    skipping = False
    read = 0
    while read < cap:
        chunk = os.read(descriptor, min(_CHUNK, cap - read))
        if not chunk:
            break
        read += len(chunk)
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                rest = len(chunk) - start
                if not skipping and pending_size + rest > line_cap:
                    skipping, pending, pending_size = True, [], 0
                    seen.long_lines += 1
                if not skipping and rest:
                    pending.append(chunk[start:])
                    pending_size += rest
                break
            if skipping:
                skipping = False
            elif pending:
                pending.append(chunk[start:end])
                line = b"".join(pending)
                pending, pending_size = [], 0
                if len(line) > line_cap:
                    seen.long_lines += 1
                else:
                    yield line
            elif end - start > line_cap:
                seen.long_lines += 1
            else:
                yield chunk[start:end]
            start = end + 1
    if read >= cap and os.read(descriptor, 1):
        seen.cut = True
        seen.notes.append(f"read up to its cap of {cap // MB} MB; the rest was not read")
    elif pending or skipping:
        seen.cut = True  # the last line has no newline: the writer may have been stopped


def json_lines(
    path: Path,
    folder: Path,
    seen: JsonLines,
    *,
    cap: int = STREAM_CAP,
    line_cap: int = LINE_CAP,
) -> Iterator[dict[str, Any]]:
    """Each JSON object line of ``path``, which must be a regular file inside ``folder``.

    Problems go into ``seen`` (never raised): the file refused or unreadable, lines skipped.
    """
    checked = stat_regular(path, folder.resolve(), _NO_LIMIT)
    if isinstance(checked, TextProblem):
        seen.problem = checked
        return
    real, _ = checked
    try:
        descriptor = os.open(real, _FLAGS | _NOFOLLOW)
    except OSError as exc:
        seen.problem = TextProblem("unreadable", exc.strerror or str(exc))
        return
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            seen.problem = TextProblem("unreadable", "not a regular file")
            return
        loads = json.loads
        for raw in _raw_lines(descriptor, cap, line_cap, seen):
            if not raw.strip():
                continue
            try:
                data = loads(raw)
            except (ValueError, RecursionError):
                seen.malformed += 1
                continue
            if isinstance(data, dict):
                yield data
            else:
                seen.malformed += 1
    except OSError as exc:
        seen.problem = TextProblem("unreadable", exc.strerror or str(exc))
    finally:
        os.close(descriptor)
    if seen.long_lines:
        seen.notes.append(f"{seen.long_lines} line(s) over {line_cap // MB} MB skipped")
    if seen.malformed:
        seen.notes.append(f"{seen.malformed} line(s) that are not JSON objects skipped")
