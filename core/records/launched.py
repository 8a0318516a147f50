"""The runs promptdeck launched for this user: the one record of a run no agent can forge.

A run's folder lives inside the project (``.promptdeck/runs/<id>/``), where an agent at work
writes too. A folder it makes there, with a dead process id and a ``system.md`` of its choosing,
would look like a run promptdeck was killed in — and ``resume`` would send that text as the
system prompt of the next session. So every run promptdeck launches is also noted here, in the
user's state folder (``$XDG_STATE_HOME/promptdeck/launched-runs``), outside every project: only
a noted run is announced at start or resumed. Run ids are unique across projects (time and a
random part), so one list serves them all, worktrees included.

The list is appended to, one id a line, through a descriptor that follows no link; it is read
from its end, at most :data:`READ_LIMIT` bytes, so a damaged or huge file costs a bounded read
and forgets only the oldest runs.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from ..atomic import write_whole
from ..project.user_dirs import state_folder

LAUNCHED_NAME = "launched-runs"
READ_LIMIT = 1024 * 1024
"""The most of the list read: about 25,000 runs, far more than are ever interrupted at once."""

_RUN_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9]{6}-[0-9A-Za-z][0-9A-Za-z._-]{0,200}")
_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def launched_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the list of launched runs is kept."""
    return state_folder(environ) / LAUNCHED_NAME


def note_launched(run_id: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Add ``run_id`` to the launched runs; one line saying why it could not be, else None.

    A run that cannot be noted still runs: it just cannot be resumed after a crash.
    """
    path = launched_path(environ)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FLAGS, 0o600)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                return f"{path} is not a regular file: run {run_id} cannot be resumed after a crash"
            size = os.fstat(descriptor).st_size
            os.write(descriptor, f"{run_id}\n".encode("ascii", "replace"))
        finally:
            os.close(descriptor)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}: run {run_id} cannot be resumed after a crash"
    if size > 2 * READ_LIMIT:
        # Keep the newest runs only: the file never grows past twice what is read.
        _keep_newest(path)
    return None


def launched_runs(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The ids of the runs promptdeck launched for this user (the newest, up to the read
    limit); empty when the list is missing, a link, or not a regular file."""
    text = _tail(launched_path(environ))
    return frozenset(line for line in text.splitlines() if _RUN_ID.fullmatch(line))


def _tail(path: Path) -> str:
    try:
        descriptor = os.open(path, os.O_RDONLY | _FLAGS)
    except OSError:
        return ""
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return ""
        start = max(0, info.st_size - READ_LIMIT)
        data = os.pread(descriptor, READ_LIMIT, start)
    except OSError:
        return ""
    finally:
        os.close(descriptor)
    if start:
        data = data.partition(b"\n")[2]  # the first line read may be cut
    return data.decode("ascii", "replace")


def _keep_newest(path: Path) -> None:
    kept = _tail(path)
    # A failed rewrite is tried again at the next launch; reading stays bounded either way.
    with contextlib.suppress(OSError):
        write_whole(path, kept.encode("ascii", "replace"), mode=0o600)
