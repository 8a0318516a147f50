"""A text stream standing in for another: the base of the CLI's output wrappers (the escaping
stream, and the copy a remembered answer keeps). Plain ``io`` only, so the quickest paths of the
CLI can use it without loading anything else."""

from __future__ import annotations

import io
from typing import TextIO


class StreamProxy(io.TextIOBase):
    """A text stream standing in for another (``sys.stdout``): it answers for the wrapped
    stream's encoding, terminal and descriptor, so Rich and ``print`` treat it as that stream.
    Subclasses say what a write does."""

    def __init__(self, stream: TextIO) -> None:
        """Stand in for ``stream``."""
        super().__init__()
        self._stream = stream

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._stream, "errors", None)
