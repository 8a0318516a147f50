"""Remembered results: a small SQLite file of derived data under the user's cache folder.

What is kept here is always derived from content that is named in the key (a secret scan of a
text keyed by the text's sha256, a composed prompt keyed by everything composing read), so a
remembered result is the result of that input and nothing shown can be stale: a changed input
is a different key. Values are JSON, checked on the way out by their user; an entry that does
not parse is a miss.

Why SQLite (stdlib ``sqlite3``) in WAL mode rather than files replaced by atomic rename: the app,
``inspect`` in another terminal and a run add results at the same time. One file rewritten by
rename loses the other writers' entries (the last rename wins); one file per result leaves
thousands of small files behind. SQLite's locking lets every process add rows without losing
any, a reader never waits for a writer in WAL mode, and a lookup is one indexed read rather
than a load of the whole file.

The file is never trusted and never fatal:

* a file that is not an SQLite database, or one without this store's application id and
  schema version (a foreign or older file), is set aside with one line (:attr:`ResultCache.notice`,
  printed by the CLI on stderr) and rebuilt empty;
* any other error (a locked or read-only database, a full disk) turns the store off for the
  rest of the process: results are then simply computed again.

Each kind of result is bounded on its own (:data:`LIMITS`): past its bound the oldest entries
of that kind are deleted, first in first out.

Location: ``$XDG_CACHE_HOME/promptdeck/results.sqlite3`` (``~/.cache`` when the variable is
unset or not absolute). ``PROMPTDECK_RESULT_CACHE=off`` turns it off.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from ..project.user_dirs import cache_folder

FILE_NAME = "results.sqlite3"
ENV_VAR = "PROMPTDECK_RESULT_CACHE"
APPLICATION_ID = 0x70645231  # "pdR1": marks the file as this store
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 2000
LIMITS = {"secret-scan": 50_000, "composed": 200}
"""How many entries of each kind are kept (a composed result holds a whole prompt)."""
DEFAULT_LIMIT = 1_000

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS results ("
    " id INTEGER PRIMARY KEY,"
    " kind TEXT NOT NULL,"
    " key BLOB NOT NULL,"
    " value TEXT NOT NULL,"
    " UNIQUE (kind, key))"
)


def results_path() -> Path | None:
    """Where the store lives, or None when ``PROMPTDECK_RESULT_CACHE`` turns it off."""
    if os.environ.get(ENV_VAR, "").strip().lower() in ("off", "0", "no", "false", "none"):
        return None
    return cache_folder() / FILE_NAME


class _Foreign(Exception):
    """The file is an SQLite database, but not this store's."""


class ResultCache:
    """A persistent map ``(kind, key) → JSON value``, shared by processes and threads.

    Opened on first use. Every method swallows the store's own failures: a caller only ever
    sees a miss, and a write that could not be made is simply not remembered.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.disabled: str | None = None if path is not None else "turned off"
        """Why the store is off, or None while it works."""
        self.notice: str | None = None
        """One line saying the file was foreign or damaged and was rebuilt (else None)."""
        self._db: Any = None
        self._lock = threading.Lock()

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
            db.execute("PRAGMA synchronous = NORMAL")  # a lost entry is computed again
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if (app_id, version) == (APPLICATION_ID, SCHEMA_VERSION):
                return db
            if app_id != 0 or version != 0:
                raise _Foreign(f"application id {app_id:#x}, version {version}")
            # New and empty (or being created by another process right now): create the
            # schema under the write lock, then look again at what is there.
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
                    raise _Foreign(f"tables {', '.join(tables)} without this store's id")
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
        if self._db is not None or self.disabled is not None:
            return self._db
        import sqlite3

        try:
            try:
                self._db = self._connect()
            except (_Foreign, sqlite3.DatabaseError) as exc:
                if isinstance(exc, sqlite3.OperationalError) and not _is_corrupt(exc):
                    raise
                self._rebuild(exc)
                self._db = self._connect()
        except (OSError, sqlite3.Error, _Foreign) as exc:
            if not _is_busy(exc):
                self._disable(exc)
        return self._db

    def _rebuild(self, exc: BaseException) -> None:
        assert self.path is not None
        reason = "not a promptdeck results file" if isinstance(exc, _Foreign) else "damaged"
        self.notice = f"the result cache {self.path} was {reason}; it was rebuilt"
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def _disable(self, exc: BaseException) -> None:
        self.disabled = f"{type(exc).__name__}: {exc}"
        if self._db is not None:
            with contextlib.suppress(Exception):
                self._db.close()
            self._db = None

    def _failed(self, exc: BaseException) -> None:
        """An error while using an open store: busy passes; damage rebuilds next process."""
        import sqlite3

        if _is_busy(exc):
            return
        corrupt = isinstance(exc, sqlite3.DatabaseError) and (
            not isinstance(exc, sqlite3.OperationalError) or _is_corrupt(exc)
        )
        self._disable(exc)
        if corrupt:
            self._rebuild(exc)

    def get(self, kind: str, key: bytes) -> Any:
        """The remembered JSON value for ``(kind, key)``, or None."""
        with self._lock:
            db = self._open()
            if db is None:
                return None
            try:
                row = db.execute(
                    "SELECT value FROM results WHERE kind = ? AND key = ?", (kind, key)
                ).fetchone()
            except Exception as exc:
                self._failed(exc)
                return None
        if row is None or not isinstance(row[0], str):
            return None
        try:
            return json.loads(row[0])
        except ValueError:
            return None

    def put(self, kind: str, key: bytes, value: Any) -> None:
        """Remember ``value`` (JSON-serialisable) for ``(kind, key)``, replacing an older one."""
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            db = self._open()
            if db is None:
                return
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute(
                        "INSERT OR REPLACE INTO results (kind, key, value) VALUES (?, ?, ?)",
                        (kind, key, text),
                    )
                    limit = LIMITS.get(kind, DEFAULT_LIMIT)
                    (count,) = db.execute(
                        "SELECT count(*) FROM results WHERE kind = ?", (kind,)
                    ).fetchone()
                    if count > limit:
                        db.execute(
                            "DELETE FROM results WHERE id IN (SELECT id FROM results"
                            " WHERE kind = ? ORDER BY id LIMIT ?)",
                            (kind, count - int(limit * 0.9)),
                        )
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except Exception as exc:
                self._failed(exc)

    def close(self) -> None:
        """Close the connection (the store reopens on next use); never raises."""
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(Exception):
                    self._db.close()
                self._db = None


def _is_busy(exc: BaseException) -> bool:
    import sqlite3

    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _is_corrupt(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


_shared: ResultCache | None = None
_shared_lock = threading.Lock()


def shared_results() -> ResultCache:
    """The process-wide store at :func:`results_path` (read when first asked for)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ResultCache(results_path())
            atexit.register(_shared.close)
        return _shared


def result_cache_notice() -> str | None:
    """The one line to show if this process found the store foreign or damaged, else None."""
    return _shared.notice if _shared is not None else None
