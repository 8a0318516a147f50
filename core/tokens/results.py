"""Remembered results: a small SQLite file of derived data under the user's cache folder.

What is kept here is always derived from its input: a secret scan keyed by the text's sha256
(a changed text is a different key), a composed answer or the app's opening kept with the
signature of every path it read (used only while one ``stat`` per path shows them unchanged,
:mod:`.answers`). Values are JSON, checked on the way out by their user; an entry that does
not parse is a miss. Bytes loaded with more trust than JSON (the app's opening, pickled) are
stored sealed (:mod:`.seal`) and never loaded without their seal.

The file is a :class:`~promptdeck.core.tokens.store.SqliteStore`: shared by processes without
losing an entry, never trusted, never fatal — a foreign or damaged file is set aside with one
line (:attr:`ResultCache.notice`, printed by the CLI on stderr) and rebuilt.

Each kind of result is bounded on its own (:data:`LIMITS`): past its bound the oldest entries
of that kind are deleted, first in first out.

Location: ``$XDG_CACHE_HOME/promptdeck/results.sqlite3`` (``~/.cache`` when the variable is
unset or not absolute). ``PROMPTDECK_RESULT_CACHE=off`` turns it off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..project.user_dirs import cache_folder
from ..switches import turned_off
from .store import OnePerProcess, SqliteStore

FILE_NAME = "results.sqlite3"
APPLICATION_ID = 0x70645231  # "pdR1": marks the file as this store
ENV_VAR = "PROMPTDECK_RESULT_CACHE"
LIMITS = {"secret-scan": 50_000, "composed": 200, "app-opening": 8, "app-styles": 4}
"""How many entries of each kind are kept (a composed result holds a whole prompt; the app's
opening, its catalog and first prompt, up to a few MB for a large plan; its parsed stylesheet
some 150 KB, one per theme and promptdeck version)."""
DEFAULT_LIMIT = 1_000


def results_path() -> Path | None:
    """Where the store lives, or None when ``PROMPTDECK_RESULT_CACHE`` turns it off."""
    if turned_off(ENV_VAR):
        return None
    return cache_folder() / FILE_NAME


class ResultCache(SqliteStore):
    """A persistent map ``(kind, key) → JSON value``, shared by processes and threads.

    Opened on first use. Every method swallows the store's own failures: a caller only ever
    sees a miss, and a write that could not be made is simply not remembered.
    """

    APPLICATION_ID = APPLICATION_ID
    SCHEMA_VERSION = 1
    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS results ("
        " id INTEGER PRIMARY KEY,"
        " kind TEXT NOT NULL,"
        " key BLOB NOT NULL,"
        " value TEXT NOT NULL,"
        " UNIQUE (kind, key))"
    )
    NAME = "result cache"

    def get(self, kind: str, key: bytes) -> Any:
        """The remembered JSON value for ``(kind, key)``, or None."""
        with self._lock:
            db = self._open_to_read()
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
            db = self._open_to_write()
            if db is None:
                return
            try:
                with self._write_transaction(db):
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
            except Exception as exc:
                self._failed(exc)


_shared = OnePerProcess(lambda: ResultCache(results_path()))


def shared_results() -> ResultCache:
    """The process-wide store at :func:`results_path` (read when first asked for)."""
    return _shared.get()


def result_cache_notice() -> str | None:
    """The one line to show if this process found the store foreign or damaged, else None."""
    store = _shared.opened
    return store.notice if store is not None else None
