"""The writer of a run record: ``.promptdeck/runs/<id>/``, written as the run goes.

One folder per run (DESIGN.md → Runs)::

    system.md      the exact system prompt sent
    user.md        the exact user message sent
    meta.json      story, phase, attempt, mode, agent, argv, names of env vars set, layer
                   signatures, start time, promptdeck's pid
    stream.jsonl   the agent's raw stdout (stream.log for plain-text agents), line by line
    stderr.log     the agent's raw stderr
    signals.jsonl  each signal, with its time
    session.log    notes of the run: git, story-file checks, re-injections
    result.json    exit code, duration, usage, cost, final signal, outcome, SHAs before/after
    story.before.md  the story file as it was, kept only when the phase changed earlier content

Every line is handed to the operating system as soon as it arrives (unbuffered appends), so a
``kill -9`` of the agent or of promptdeck loses nothing printed before it. Run ids start with
the UTC time to the microsecond, so they sort by time, and end with random hex, so they are
unique. The shapes of ``meta.json`` and ``result.json`` are :mod:`promptdeck.core.records.schema`;
reading records back is :mod:`promptdeck.core.records`.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from ..atomic import write_whole
from ..project.state_folder import check_state_path, open_state_file, state_dir
from ..project.textfiles import TextProblem, read_text
from ..project.workspace import ensure_inside
from .schema import finite_json

RUNS_RELPATH = ".promptdeck/runs"
DRY_RUN_DIR = "dry-run"
"""A dry run's id; older versions kept its files in ``runs/dry-run``, never listed as a run."""
GITIGNORE_RELPATH = ".promptdeck/.gitignore"
GITIGNORE_LINES = ("runs/", "exports/", "locks/")


def runs_dir(root: Path) -> Path:
    """``<root>/.promptdeck/runs``."""
    return root / RUNS_RELPATH


_GITIGNORE_LIMIT = 1024 * 1024


def ensure_gitignore(root: Path) -> bool:
    """Make sure ``.promptdeck/.gitignore`` ignores ``runs/`` and ``exports/``; True when it
    was changed.

    The file is promptdeck's own: created when absent, missing lines appended. Run records
    and exported prompts must never be staged by a dev phase's ``git add -A``.

    Raises:
        UsageError: the file, or ``.promptdeck``, leads outside the project or is a symlink
            (a link to ``.git/config`` would be appended to): nothing is written (exit 2).
    """
    path = root / GITIGNORE_RELPATH
    ensure_inside(root, path, "the file")  # before any mkdir: never create outside
    state_dir(root, path.parent)
    ensure_inside(root, path, "the file")
    check_state_path(root, path)
    # Guarded: the repository may have put a FIFO or a link to a device in its place.
    read = read_text(path, root.resolve(), limit=_GITIGNORE_LIMIT)
    if isinstance(read, TextProblem) and read.reason not in ("missing", "empty"):
        raise OSError(errno.EINVAL, f"{GITIGNORE_RELPATH}: {read}", str(path))
    current = read if isinstance(read, str) else ""
    present = {line.strip().strip("/") for line in current.splitlines()}
    missing = [line for line in GITIGNORE_LINES if line.strip("/") not in present]
    if not missing:
        return False
    prefix = "" if not current or current.endswith("\n") else "\n"
    fd = open_state_file(root, path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(prefix + "".join(line + "\n" for line in missing))
    return True


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:40] or "x"


def new_run_id(story_id: str, phase: str, now: float | None = None) -> str:
    """``20250102-030405-123456-dev-1-2-a1b2c3``: time first (sortable), random last (unique)."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, UTC)
    return f"{moment:%Y%m%d-%H%M%S-%f}-{_slug(phase)}-{_slug(story_id)}-{secrets.token_hex(3)}"


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _write_json_atomic(path: Path, payload: Mapping[str, Any]) -> None:
    # An agent may report a cost of Infinity: the record stays JSON and keeps it as text.
    kept = finite_json(payload, keep_as_text=True)
    text = json.dumps(kept, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_whole(path, text.encode("utf-8"))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")


class RunRecord:
    """The writer of one run folder. Thread-safe: reader threads append concurrently."""

    def __init__(self, folder: Path, run_id: str, stream_format: str = "jsonl") -> None:
        self.dir = folder
        self.id = run_id
        self.stream_path = folder / ("stream.jsonl" if stream_format == "jsonl" else "stream.log")
        self._lock = threading.Lock()
        self._stream: BinaryIO | None = None
        self._stream_fd = -1
        self._stderr: BinaryIO | None = None
        self._signals: BinaryIO | None = None
        self._log: BinaryIO | None = None
        self.write_error: str | None = None
        """The first append that failed, or None: such a record is incomplete."""
        self._stream_last = b""
        self._stderr_last = b""

    @classmethod
    def create(
        cls, root: Path, story_id: str, phase: str, *, stream_format: str = "jsonl"
    ) -> RunRecord:
        """Make a new, uniquely named run folder under ``<root>/.promptdeck/runs``.

        Raises:
            UsageError: the runs folder (or ``.promptdeck``, or its ``.gitignore``) leads
                outside the project or is a symlink — a link to ``docs/records`` would get
                the records committed (exit 2).
        """
        base = runs_dir(root)
        ensure_inside(root, base, "the runs folder")  # before any mkdir: never outside
        state_dir(root, base)
        ensure_inside(root, base, "the runs folder")
        ensure_gitignore(root)
        while True:
            run_id = new_run_id(story_id, phase)
            folder = base / run_id
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            return cls(folder, run_id, stream_format)

    @classmethod
    def dry_run(cls) -> RunRecord:
        """A fresh temporary folder for ``--dry-run``'s prompt files, outside the project: a
        dry run writes nothing into the project (``promptdeck-dry-run-…`` in the system's
        temporary folder, private to the user, left for the user to read)."""
        import tempfile

        return cls(Path(tempfile.mkdtemp(prefix="promptdeck-dry-run-")), DRY_RUN_DIR)

    def discard(self) -> None:
        """Remove the run folder of a run that never started (its prompt files could not be
        written, its launch could not be built): no empty run folders are left behind."""
        import shutil

        self.close()
        if self.id != DRY_RUN_DIR:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- files written once -------------------------------------------------------------

    def write_prompt(self, system: str, user: str) -> tuple[Path, Path]:
        """Write ``system.md`` and ``user.md``: exactly these strings, UTF-8, nothing added."""
        system_path, user_path = self.dir / "system.md", self.dir / "user.md"
        write_whole(system_path, system.encode("utf-8"))
        write_whole(user_path, user.encode("utf-8"))
        return system_path, user_path

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        """Write (or replace) ``meta.json`` atomically."""
        _write_json_atomic(self.dir / "meta.json", meta)

    def write_json(self, name: str, payload: Mapping[str, Any]) -> None:
        """Write (or replace) one small JSON file of the record atomically (``resume.json``)."""
        _write_json_atomic(self.dir / name, payload)

    def write_result(self, result: Mapping[str, Any]) -> None:
        """Write ``result.json`` atomically: its presence marks a finished run."""
        _write_json_atomic(self.dir / "result.json", result)

    def keep_story_before(self, content: bytes) -> Path:
        """Keep the story file's prior version as ``story.before.md``."""
        path = self.dir / "story.before.md"
        write_whole(path, content)
        return path

    def keep_scope_violations(self, diff: str) -> Path:
        """Keep what the agent tried to change outside its write scope as
        ``scope-violations.diff`` (the files themselves were put back)."""
        path = self.dir / "scope-violations.diff"
        write_whole(path, diff.encode("utf-8", errors="replace"))
        return path

    # -- files appended line by line ------------------------------------------------------

    def _open(self, path: Path) -> BinaryIO:
        # Unbuffered: every write is one write(2), in the OS before the call returns.
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o644)
        return os.fdopen(fd, "ab", buffering=0)

    def _failed(self, exc: OSError) -> None:
        # A record that cannot be written (the folder removed, the disk full) must not stop
        # the run: the agent's output is still parsed and the outcome still decided.
        if self.write_error is None:
            self.write_error = f"{exc.strerror or exc} ({exc.filename or self.dir})"

    def append_stream(self, raw: bytes) -> None:
        """Append one raw stdout line (a newline is added when it lacks one)."""
        if raw[-1:] != b"\n":
            raw += b"\n"
        with self._lock:
            try:
                if self._stream is None:
                    self._stream = self._open(self.stream_path)
                    self._stream_fd = self._stream.fileno()
                os.write(self._stream_fd, raw)
            except OSError as exc:
                self._failed(exc)

    def write_stream(self, raw: bytes) -> None:
        """Append raw stdout bytes exactly as read, a partial line included: on disk at once,
        so a ``kill -9`` of promptdeck loses none of it."""
        if not raw:
            return
        with self._lock:
            try:
                if self._stream is None:
                    self._stream = self._open(self.stream_path)
                    self._stream_fd = self._stream.fileno()
                _write_all(self._stream_fd, raw)
                self._stream_last = raw[-1:]
            except OSError as exc:
                self._failed(exc)

    def write_stderr(self, raw: bytes) -> None:
        """Append raw stderr bytes exactly as read (see :meth:`write_stream`)."""
        if not raw:
            return
        with self._lock:
            try:
                if self._stderr is None:
                    self._stderr = self._open(self.dir / "stderr.log")
                _write_all(self._stderr.fileno(), raw)
                self._stderr_last = raw[-1:]
            except OSError as exc:
                self._failed(exc)

    def end_stream(self) -> None:
        """End the stdout record with a newline when its last line had none."""
        if self._stream_last not in (b"", b"\n"):
            self.write_stream(b"\n")

    def end_stderr(self) -> None:
        """End the stderr record with a newline when its last line had none."""
        if self._stderr_last not in (b"", b"\n"):
            self.write_stderr(b"\n")

    def append_stderr(self, raw: bytes) -> None:
        """Append one raw stderr line."""
        if not raw.endswith(b"\n"):
            raw += b"\n"
        with self._lock:
            try:
                if self._stderr is None:
                    self._stderr = self._open(self.dir / "stderr.log")
                self._stderr.write(raw)
            except OSError as exc:
                self._failed(exc)

    def append_signal(self, signal: Mapping[str, Any], at: float) -> None:
        """Append one signal with its time to ``signals.jsonl``."""
        line = json.dumps({"at": _iso(at), **signal}, ensure_ascii=False) + "\n"
        with self._lock:
            try:
                if self._signals is None:
                    self._signals = self._open(self.dir / "signals.jsonl")
                self._signals.write(line.encode("utf-8"))
            except OSError as exc:
                self._failed(exc)

    def log(self, message: str, at: float | None = None) -> None:
        """Append a timestamped line to ``session.log``."""
        line = f"{_iso(time.time() if at is None else at)} {message}\n"
        with self._lock:
            try:
                if self._log is None:
                    self._log = self._open(self.dir / "session.log")
                self._log.write(line.encode("utf-8"))
            except OSError as exc:
                self._failed(exc)

    def close(self) -> None:
        """Close the appended files."""
        with self._lock:
            for handle in (self._stream, self._stderr, self._signals, self._log):
                if handle is not None:
                    handle.close()
            self._stream = self._stderr = self._signals = self._log = None


def iso_time(ts: float) -> str:
    """An epoch time as ISO 8601 UTC with milliseconds (as records write it)."""
    return _iso(ts)
