"""Remembered token counts: a small SQLite file under the user's cache folder.

A count is keyed by the encoding's name and the sha256 of the exact UTF-8 bytes counted, so a
remembered count is the count of those bytes and nothing shown can be stale. Only exact counts
are stored (never a bytes/4 estimate). When every count a command needs is remembered, the
encoder is never built: that is most of a cold command's time.

The file is a :class:`~promptdeck.core.tokens.store.SqliteStore`: shared by processes without
losing a count, never trusted, never fatal — a foreign or damaged file is set aside with one
line (:attr:`TokenCache.notice`, printed by the CLI on stderr) and rebuilt, and a row whose
count is impossible for its bytes (negative, or more tokens than bytes) is a miss.

The file is bounded: once it holds more than :data:`MAX_ENTRIES` counts, the oldest are
deleted (first in, first out) down to 90 % of the bound.

Location: ``$XDG_CACHE_HOME/promptdeck/token-counts.sqlite3`` (``~/.cache`` when the variable
is unset or not absolute). ``PROMPTDECK_TOKEN_CACHE=off`` turns it off;
``PROMPTDECK_TOKEN_CACHE=/some/file.sqlite3`` puts it elsewhere, unless that names an existing
file that is not this cache's (:func:`promptdeck.core.project.user_dirs.foreign_file`): it is then
refused in one line and left alone, and the cache is off.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..project.user_dirs import cache_folder, foreign_file
from ..switches import is_off
from .store import OnePerProcess, SqliteStore, is_busy

FILE_NAME = "token-counts.sqlite3"
APPLICATION_ID = 0x70644B31  # "pdK1": marks the file as this cache
ENV_VAR = "PROMPTDECK_TOKEN_CACHE"
MAX_ENTRIES = 200_000
"""The most counts kept (about 15 MB on disk)."""
FLUSH_EVERY = 256
"""New counts are written in batches of this many (and at exit, and on :meth:`flush`)."""
CLOSE_TRIES = 20
"""How often :meth:`TokenCache.close` tries again while another process holds the write lock."""


_REFUSALS_SAID: set[str] = set()


def default_path() -> Path | None:
    """Where the cache lives, or None when ``PROMPTDECK_TOKEN_CACHE`` turns it off."""
    override = os.environ.get(ENV_VAR, "").strip()
    if is_off(override):
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
                import logging

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


class TokenCache(SqliteStore):
    """A persistent map ``(encoding, sha256 of bytes) → token count``, shared by processes.

    Opened lazily on the first lookup. Thread-safe. Every method swallows the cache's own
    failures (see the module docstring): a caller only ever sees a miss.
    """

    APPLICATION_ID = APPLICATION_ID
    SCHEMA_VERSION = 1
    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS counts ("
        " id INTEGER PRIMARY KEY,"
        " encoding TEXT NOT NULL,"
        " digest BLOB NOT NULL,"
        " tokens INTEGER NOT NULL,"
        " UNIQUE (encoding, digest))"
    )
    NAME = "token cache"

    def __init__(self, path: Path | None, *, max_entries: int = MAX_ENTRIES) -> None:
        super().__init__(path)
        self.max_entries = max_entries
        self._pending: list[tuple[str, bytes, int]] = []
        self.hits = 0
        self.misses = 0

    def _disable(self, exc: BaseException) -> None:
        super()._disable(exc)
        self._pending.clear()

    # ------------------------------------------------------------------ use

    def get(self, encoding: str, digest: bytes, size: int) -> int | None:
        """The remembered count of ``size`` bytes hashing to ``digest``, or None.

        A stored count that cannot be right for ``size`` bytes (every token is at least one
        byte) is treated as a miss.
        """
        with self._lock:
            db = self._open_to_read()
            if db is None:
                return None
            try:
                row = db.execute(
                    "SELECT tokens FROM counts WHERE encoding = ? AND digest = ?",
                    (encoding, digest),
                ).fetchone()
            except Exception as exc:
                self._failed(exc)  # busy: a miss this time, the cache stays on
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
            db = self._open_to_write()
            if db is None:
                return
            rows, self._pending = self._pending, []
            try:
                with self._write_transaction(db):
                    db.executemany(
                        "INSERT OR IGNORE INTO counts (encoding, digest, tokens) VALUES (?, ?, ?)",
                        rows,
                    )
                    # ids only grow, so the span of ids bounds the row count without a scan.
                    low, high = db.execute("SELECT min(id), max(id) FROM counts").fetchone()
                    if low is not None and high - low + 1 > self.max_entries:
                        keep = int(self.max_entries * 0.9)
                        db.execute("DELETE FROM counts WHERE id <= ?", (high - keep,))
            except Exception as exc:
                if is_busy(exc):
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
            self._close_connection()


_shared = OnePerProcess(lambda: TokenCache(default_path()))


def shared_cache() -> TokenCache:
    """The process-wide cache at :func:`default_path` (read when first asked for)."""
    return _shared.get()
