"""The one way promptdeck keeps a cache in SQLite: the token counts (:mod:`.cache`) and the
remembered results (:mod:`.results`) are both a :class:`SqliteStore`.

Why SQLite (stdlib ``sqlite3``) in WAL mode rather than files replaced by atomic rename: several
promptdeck processes (the app, ``inspect`` in another terminal, a run) add entries at the same
time. With one file rewritten by rename, the last writer wins and the others' new entries are
lost; with one file per entry, a large workspace leaves thousands of tiny files behind. SQLite's
own locking lets every process add rows without losing any, a reader never waits for a writer
in WAL mode, and a lookup is one indexed read, not a load of the whole file.

A cache file is never trusted and never fatal:

* a file that is not an SQLite database, or one without the store's application id and schema
  version (a foreign or older file), is set aside — deleted with its ``-wal`` and ``-shm``
  files — and rebuilt empty, and :attr:`SqliteStore.notice` says so in one line (the CLI prints
  every store's, :func:`store_notices`, on stderr after the command's output);
* a file found damaged while in use turns the store off for the rest of the process and is set
  aside the same way, so the next process starts a new one;
* another process holding the write lock longer than the busy timeout is a passing state: the
  operation is a miss (or is tried again), the store stays on;
* any other error (a read-only or full disk, a folder that cannot be created) turns the store
  off for the rest of the process: values are then simply computed again.

A subclass names its file's mark (:attr:`SqliteStore.APPLICATION_ID`,
:attr:`SqliteStore.SCHEMA_VERSION`), its table (:attr:`SqliteStore.SCHEMA`) and what it is
called in the notice (:attr:`SqliteStore.NAME`), and reads and writes through :meth:`_open`,
reporting an error met on the way to :meth:`_failed`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

BUSY_TIMEOUT_MS = 2000
"""How long an operation waits for another process's write lock before it is a miss."""

_notices: list[str] = []
_notices_lock = threading.Lock()


def store_notices() -> list[str]:
    """The notice of every store of this process that set its file aside, oldest first."""
    with _notices_lock:
        return list(_notices)


class Foreign(Exception):
    """The file is an SQLite database, but not this store's."""


class SqliteStore:
    """A cache in one SQLite file, shared by processes and threads (see the module docstring).

    Opened on first use. Every method swallows the store's own failures: a caller only ever
    sees a miss, and a write that could not be made is simply not kept.
    """

    APPLICATION_ID: ClassVar[int]
    """Marks the file as this store's (``PRAGMA application_id``)."""
    SCHEMA_VERSION: ClassVar[int]
    """The layout of the file (``PRAGMA user_version``); another one is a foreign file."""
    SCHEMA: ClassVar[str]
    """The ``CREATE TABLE`` statement of a new file."""
    NAME: ClassVar[str]
    """What the store is called in its notice (``token cache``)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.disabled: str | None = None if path is not None else "turned off"
        """Why the store is off, or None while it works."""
        self.notice: str | None = None
        """One line saying the file was foreign or damaged and was set aside (else None)."""
        self._db: Any = None
        self._lock = threading.Lock()
        self._new = False
        # True from creating the file until this store first writes to it: every lookup is a
        # miss then, so none is made (an entry another process adds meanwhile is computed again).

    # ------------------------------------------------------------------ opening

    def _connect(self) -> Any:
        import sqlite3

        assert self.path is not None
        # Private when made here: remembered answers and openings hold the project's text.
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        db = sqlite3.connect(
            str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
        try:
            db.isolation_level = None  # explicit transactions only
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # A cache need not survive a power cut: no fsync at each commit (WAL keeps the
            # file consistent either way; a lost entry is computed again).
            db.execute("PRAGMA synchronous = NORMAL")
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if (app_id, version) == (self.APPLICATION_ID, self.SCHEMA_VERSION):
                return db
            if app_id != 0 or version != 0:
                raise Foreign(f"application id {app_id:#x}, version {version}")
            # A new, empty file (or one another process is creating right now): create the
            # schema under the write lock, then look again at what is there.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("BEGIN IMMEDIATE")
            try:
                tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
                app_id = db.execute("PRAGMA application_id").fetchone()[0]
                if app_id == 0 and not tables:
                    db.execute(self.SCHEMA)
                    db.execute(f"PRAGMA application_id = {self.APPLICATION_ID}")
                    db.execute(f"PRAGMA user_version = {self.SCHEMA_VERSION}")
                    self._new = True
                elif app_id != self.APPLICATION_ID:
                    raise Foreign(f"tables {', '.join(tables)} without this store's id")
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
        """The connection, opening (and if need be rebuilding) the file; None when off or
        while another process holds the file's lock. Call with ``self._lock`` held."""
        if self._db is not None or self.disabled is not None:
            return self._db
        import sqlite3

        try:
            try:
                self._db = self._connect()
            except (Foreign, sqlite3.DatabaseError) as exc:
                if isinstance(exc, sqlite3.OperationalError) and not is_corrupt(exc):
                    raise
                self._set_aside(exc)
                self._db = self._connect()
        except (OSError, sqlite3.Error, Foreign) as exc:
            if not is_busy(exc):
                self._disable(exc)
            # Busy: another process is creating or writing the file; try again next time.
        return self._db

    def _open_to_read(self) -> Any:
        """:meth:`_open`, but None while the file is one this store has just created and not
        written to yet (a lookup there is a miss). Call with ``self._lock`` held."""
        db = self._open()
        return None if self._new else db

    def _open_to_write(self) -> Any:
        """:meth:`_open`, for a write: lookups are made from here on. Call with ``self._lock``
        held."""
        db = self._open()
        self._new = False
        return db

    def _set_aside(self, exc: BaseException) -> None:
        """Delete a foreign or damaged file (and its WAL files) and say so in :attr:`notice`."""
        assert self.path is not None
        reason = f"not a promptdeck {self.NAME} file" if isinstance(exc, Foreign) else "damaged"
        self.notice = f"the {self.NAME} {self.path} was {reason}; it was rebuilt"
        with _notices_lock:
            _notices.append(self.notice)
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def _disable(self, exc: BaseException) -> None:
        """Turn the store off for the rest of the process."""
        self.disabled = f"{type(exc).__name__}: {exc}"
        self._close_connection()

    def _failed(self, exc: BaseException) -> None:
        """An error while using an open store: busy passes; damage turns the store off and sets
        the file aside for the next process; anything else turns the store off."""
        import sqlite3

        if is_busy(exc):
            return
        corrupt = isinstance(exc, sqlite3.DatabaseError) and (
            not isinstance(exc, sqlite3.OperationalError) or is_corrupt(exc)
        )
        self._disable(exc)
        if corrupt:
            with contextlib.suppress(OSError):
                self._set_aside(exc)

    @staticmethod
    @contextlib.contextmanager
    def _write_transaction(db: Any) -> Iterator[None]:
        """One write: ``BEGIN IMMEDIATE`` (the write lock taken up front, so a busy store fails
        here and not half-way), ``COMMIT`` at the end, rolled back on any exception, which
        goes on to the caller."""
        db.execute("BEGIN IMMEDIATE")
        try:
            yield
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _close_connection(self) -> None:
        if self._db is not None:
            # Closing a broken connection (at exit, too) must not raise.
            with contextlib.suppress(Exception):
                self._db.close()
            self._db = None

    def close(self) -> None:
        """Close the connection (the store reopens on next use); never raises."""
        with self._lock:
            self._close_connection()


_Store = TypeVar("_Store", bound=SqliteStore)


class OnePerProcess(Generic[_Store]):
    """The one store of its kind in a process: opened when first asked for (so a command that
    never needs it never opens the file), shared by every thread, closed at exit."""

    def __init__(self, open_store: Callable[[], _Store]) -> None:
        self._open = open_store
        self._store: _Store | None = None
        self._lock = threading.Lock()

    def get(self) -> _Store:
        """The store, opened on the first call."""
        with self._lock:
            if self._store is None:
                self._store = self._open()
                atexit.register(self._store.close)
            return self._store

    @property
    def opened(self) -> _Store | None:
        """The store if this process has opened it, else None (never opens it)."""
        return self._store


def is_busy(exc: BaseException) -> bool:
    """Another connection holds the lock: a passing state, not a broken store."""
    import sqlite3

    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def is_corrupt(exc: BaseException) -> bool:
    """The file is not an SQLite database, or a damaged one."""
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text
