"""The CLI called in the test's own process, its output captured as a pipe would take it."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path
from unittest import mock

from promptdeck.cli import main


def cli_in_process(
    root: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``promptdeck ARGS`` run in ``root`` with its output piped, as a subprocess would run it,
    but called in this process: for tests of what a command does, which need not pay for a new
    interpreter (and a new token encoder) each time. The tests of the process boundary (exit
    codes, error lines, limits) keep real subprocesses. The agents a command launches are real
    processes either way."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    given = io.TextIOWrapper(io.BytesIO((stdin or "").encode("utf-8")), encoding="utf-8")
    with contextlib.chdir(root), mock.patch.multiple(sys, stdout=out, stderr=err, stdin=given):
        try:
            code = main(list(args))
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    return subprocess.CompletedProcess(
        list(args),
        code,
        _written(out),
        _written(err),
    )


def _written(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    # As subprocess.run(text=True) reads a pipe: universal newlines.
    return buffer.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
