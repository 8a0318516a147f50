"""Remembered token counts: a small SQLite file under the user's cache folder.

A count is keyed by the encoding's name and the sha256 of the exact UTF-8 bytes counted, so a
remembered count is the count of those bytes and nothing shown can be stale. Only exact counts
are stored (never a bytes/4 estimate). When every count a command needs is remembered, the
encoder is never built: that is most of a cold command's time.

Why SQLite (stdlib ``sqlite3``) in WAL mode rather than files replaced by atomic rename: several
promptdeck processes (the app, ``inspect`` in another terminal, a run) add counts at the same
time. With one file rewritten by rename, the last writer wins and the others' new counts are
lost; with one file per count, a large workspace leaves thousands of tiny files. SQLite's own
locking lets every process add rows without losing any, readers never wait for a writer in WAL
mode, and a lookup is one indexed read, not a load of the whole file.

The cache is never trusted blindly and never fatal:

* a file that is not an SQLite database, or one without this cache's application id and
  schema version (a foreign or older file), is deleted and rebuilt;
* a row whose count is impossible for its bytes (negative, or more tokens than bytes) is a
  miss;
* any other error (a locked or read-only database, a full disk, a folder that cannot be
  created or written) turns the cache off for the rest of the process; counts are then
  simply computed.

The file is bounded: once it holds more than :data:`MAX_ENTRIES` counts, the oldest are
deleted (first in, first out) down to 90 % of the bound.

Location: ``$XDG_CACHE_HOME/promptdeck/token-counts.sqlite3`` (``~/.cache`` when the variable
is unset or not absolute). ``PROMPTDECK_TOKEN_CACHE=off`` turns it off;
``PROMPTDECK_TOKEN_CACHE=/some/file.sqlite3`` puts it elsewhere, unless that names an existing
file that is not this cache's (:func:`promptdeck.core.project.user_dirs.foreign_file`): it is then
refused in one line and left alone, and the cache is off.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from ..project.user_dirs import cache_folder, foreign_file

FILE_NAME = "token-counts.sqlite3"
ENV_VAR = "PROMPTDECK_TOKEN_CACHE"
MAX_ENTRIES = 200_000
"""The most counts kept (about 15 MB on disk)."""
APPLICATION_ID = 0x70644B31  # "pdK1": marks the file as this cache
SCHEMA_VERSION = 1
FLUSH_EVERY = 256
"""New counts are written in batches of this many (and at exit, and on :meth:`flush`)."""
BUSY_TIMEOUT_MS = 2000
CLOSE_TRIES = 20
"""How often :meth:`TokenCache.close` tries again while another process holds the write lock."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS counts ("
    " id INTEGER PRIMARY KEY,"
    " encoding TEXT NOT NULL,"
    " digest BLOB NOT NULL,"
    " tokens INTEGER NOT NULL,"
    " UNIQUE (encoding, digest))"
)


_REFUSALS_SAID: set[str] = set()


def default_path() -> Path | None:
    """Where the cache lives, or None when ``PROMPTDECK_TOKEN_CACHE`` turns it off."""
    override = os.environ.get(ENV_VAR, "").strip()
    if override.lower() in ("off", "0", "no", "false", "none"):
        return None
    if override:
        path = Path(override).expanduser()
        # A path from the environment may name a file of the user's: never open (and so
        # never rebuild over) anything but a cache of promptdeck's own.
        refusal = foreign_file(path, is_cache_file)
        if refusal is not None:
            shown = refusal.encode("unicode_escape", "backslashreplace").decode("ascii")
            # Said once per process: several readers (counts, remembered scans) ask for the path.
            if shown not in _REFUSALS_SAID:
                _REFUSALS_SAID.add(shown)
                logging.getLogger("promptdeck").warning(
                    "promptdeck: warning: %s=%s", ENV_VAR, shown
                )
            return None
        return path
    return cache_folder() / FILE_NAME


def is_cache_file(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) is this cache's: an SQLite database with its
    application id. An empty file is not: it may be the user's, and SQLite would fill it."""
    return (
        head.startswith(b"SQLite format 3\0")
        and len(head) >= 72
        and int.from_bytes(head[68:72], "big") == APPLICATION_ID
    )


class TokenCache:
    """A persistent map ``(encoding, sha256 of bytes) → token count``, shared by processes.

    Opened lazily on the first lookup. Thread-safe. Every method swallows the cache's own
    failures (see the module docstring): a caller only ever sees a miss.
    """

    def __init__(self, path: Path | None, *, max_entries: int = MAX_ENTRIES) -> None:
        self.path = path
        self.max_entries = max_entries
        self.disabled: str | None = None if path is not None else "turned off"
        """Why the cache is off, or None while it works."""
        self._db: Any = None
        self._lock = threading.Lock()
        self._pending: list[tuple[str, bytes, int]] = []
        self.hits = 0
        self.misses = 0

    # ------------------------------------------------------------------ opening

    def _connect(self) -> Any:
        import sqlite3

        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(
            str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
        try:
            db.isolation_level = None  # explicit transactions only
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # A cache need not survive a power cut: no fsync at each commit (WAL keeps the
            # file consistent either way; a lost count is counted again).
            db.execute("PRAGMA synchronous = NORMAL")
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if app_id == APPLICATION_ID and version == SCHEMA_VERSION:
                return db
            if app_id != 0 or version != 0:
                raise _Foreign(f"application id {app_id:#x}, version {version}")
            # A new, empty file (or one another process is creating right now): create the
            # schema under a write lock, then check again what is there.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("BEGIN IMMEDIATE")
            try:
                tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
                app_id = db.execute("PRAGMA application_id").fetchone()[0]
                if app_id == 0 and not tables:
                    db.execute(_SCHEMA)
                    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                elif app_id != APPLICATION_ID:
                    raise _Foreign(f"tables {tables} without this cache's id")
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return db
        except BaseException:
            db.close()
            raise

    def _open(self) -> Any:
        """The connection, opening (and if need be rebuilding) the file; None when off."""
        if self._db is not None or self.disabled is not None:
            return self._db
        import sqlite3

        try:
            try:
                self._db = self._connect()
            except (_Foreign, sqlite3.DatabaseError) as exc:
                if isinstance(exc, sqlite3.OperationalError) and not _is_corrupt(exc):
                    raise
                # Not this cache's file, or a damaged one: start again with an empty file.
                self._remove_files()
                self._db = self._connect()
        except (OSError, sqlite3.Error, _Foreign) as exc:
            if not _is_busy(exc):
                self._disable(exc)
            # Busy: another process is creating or writing the file; try again next time.
        return self._db

    def _remove_files(self) -> None:
        assert self.path is not None
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def _disable(self, exc: BaseException) -> None:
        self.disabled = f"{type(exc).__name__}: {exc}"
        self._pending.clear()
        if self._db is not None:
            # Closing a broken connection must not raise either.
            with contextlib.suppress(Exception):
                self._db.close()
            self._db = None

    def _failed(self, exc: BaseException) -> None:
        """An error while using an open cache: rebuild a damaged file next time, stop now."""
        import sqlite3

        corrupt = isinstance(exc, sqlite3.DatabaseError) and (
            not isinstance(exc, sqlite3.OperationalError) or _is_corrupt(exc)
        )
        self._disable(exc)
        if corrupt:
            with contextlib.suppress(OSError):
                self._remove_files()

    # ------------------------------------------------------------------ use

    def get(self, encoding: str, digest: bytes, size: int) -> int | None:
        """The remembered count of ``size`` bytes hashing to ``digest``, or None.

        A stored count that cannot be right for ``size`` bytes (every token is at least one
        byte) is treated as a miss.
        """
        with self._lock:
            db = self._open()
            if db is None:
                return None
            try:
                row = db.execute(
                    "SELECT tokens FROM counts WHERE encoding = ? AND digest = ?",
                    (encoding, digest),
                ).fetchone()
            except Exception as exc:
                if not _is_busy(exc):  # busy: a miss this time, the cache stays on
                    self._failed(exc)
                return None
        if row is None or not isinstance(row[0], int):
            self.misses += 1
            return None
        tokens: int = row[0]
        if tokens < 0 or tokens > size or (size > 0 and tokens == 0):
            self.misses += 1
            return None
        self.hits += 1
        return tokens

    def put(self, encoding: str, digest: bytes, tokens: int) -> None:
        """Remember an exact count (written in a batch; see :data:`FLUSH_EVERY`)."""
        with self._lock:
            if self.disabled is not None:
                return
            self._pending.append((encoding, digest, tokens))
            full = len(self._pending) >= FLUSH_EVERY
        if full:
            self.flush()

    def flush(self) -> None:
        """Write the counts not yet written, then trim the file to its bound."""
        with self._lock:
            if not self._pending:
                return
            db = self._open()
            if db is None:
                return
            rows, self._pending = self._pending, []
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany(
                        "INSERT OR IGNORE INTO counts (encoding, digest, tokens) VALUES (?, ?, ?)",
                        rows,
                    )
                    # ids only grow, so the span of ids bounds the row count without a scan.
                    low, high = db.execute("SELECT min(id), max(id) FROM counts").fetchone()
                    if low is not None and high - low + 1 > self.max_entries:
                        keep = int(self.max_entries * 0.9)
                        db.execute("DELETE FROM counts WHERE id <= ?", (high - keep,))
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except Exception as exc:
                if _is_busy(exc):
                    # Another process held the write lock longer than the busy timeout (a
                    # loaded machine): keep the counts for the next flush, never turn off.
                    self._pending = rows + self._pending
                    return
                self._failed(exc)

    def close(self) -> None:
        """Flush and close (the cache reopens on next use); while another process holds the
        write lock, try again a few times, then leave the counts uncached (never an error)."""
        for attempt in range(CLOSE_TRIES):
            self.flush()
            with self._lock:
                if not self._pending or self.disabled is not None:
                    break
            time.sleep(0.05 * (attempt + 1))
        with self._lock:
            self._pending.clear()
            if self._db is not None:
                # At exit, a broken connection must not raise.
                with contextlib.suppress(Exception):
                    self._db.close()
                self._db = None


class _Foreign(Exception):
    """The file is an SQLite database, but not this cache's."""


def _is_busy(exc: BaseException) -> bool:
    """Another connection holds the lock: a passing state, not a broken cache."""
    import sqlite3

    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _is_corrupt(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


_shared: TokenCache | None = None
_shared_lock = threading.Lock()


def shared_cache() -> TokenCache:
    """The process-wide cache at :func:`default_path` (read when first asked for)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = TokenCache(default_path())
            atexit.register(_shared.close)
        return _shared
