"""The installed client's version, remembered per program file, so a forecast names the
client's default model without starting the client each time.

``claude --version`` starts a Node program (about half a second; ``codex`` is quicker but still
a process), and a forecast (``inspect --cost``, ``plan``) asks for it only to name the model the
client's version defaults to. The answer is kept in the user's cache folder
(``$XDG_CACHE_HOME/promptdeck/client-versions.json``, never in the project) by the program's
real path with its size, modification time and inode: a client upgraded or replaced is a
different key, so it is asked again. A program that starts another one (a version manager's
shim) may not change when the client does: an entry is trusted for :data:`MAX_AGE_S` at most.

The file is never trusted: read through the guarded reader with a size bound; a link, a FIFO,
a file without this record's format mark or one that does not parse is ignored (and never
replaced: it may be someone else's file).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from ..atomic import write_whole
from ..project.textfiles import TextProblem, read_text_file
from ..project.user_dirs import cache_folder, foreign_file

FILE = "client-versions.json"
FORMAT = "promptdeck-client-versions"
_MARK = b'{"format":"promptdeck-client-versions"'
MAX_AGE_S = 24 * 3600
"""How long a remembered version is trusted without asking the client again."""
MAX_ENTRIES = 32
"""Programs remembered; the oldest answers are dropped first."""
READ_LIMIT = 64 * 1024


def _path(environ: Mapping[str, str] | None) -> Path:
    return cache_folder(environ) / FILE


def program_key(program: str) -> str | None:
    """The program file's identity: real path, size, modification time, inode; None when it
    cannot be read."""
    try:
        real = os.path.realpath(program)
        found = os.stat(real)
    except OSError:
        return None
    return f"{real}\0{found.st_size}\0{found.st_mtime_ns}\0{found.st_ino}"


def _entries(path: Path) -> dict[str, list[object]]:
    if foreign_file(path, lambda head: head.startswith(_MARK), head=len(_MARK)) is not None:
        return {}
    text = read_text_file(path, root=None, limit=READ_LIMIT)
    if isinstance(text, TextProblem):
        return {}
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(v, list) and len(v) == 2}


def _at(entry: list[object]) -> float:
    at = entry[1]
    return float(at) if isinstance(at, (int, float)) else 0.0


def remembered_version(program: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The version ``program`` said when it was last asked, while the program file is the
    same and the answer younger than :data:`MAX_AGE_S`; None otherwise."""
    key = program_key(program)
    if key is None:
        return None
    version, at = _entries(_path(environ)).get(key, (None, None))
    fresh = isinstance(at, (int, float)) and 0 <= time.time() - at <= MAX_AGE_S
    return version if isinstance(version, str) and version and fresh else None


def remember_version(program: str, version: str, environ: Mapping[str, str] | None = None) -> None:
    """Keep ``version`` as ``program``'s answer (nothing is kept when the file cannot be
    written or is not promptdeck's)."""
    key = program_key(program)
    path = _path(environ)
    if key is None or foreign_file(path, lambda h: h.startswith(_MARK), head=len(_MARK)):
        return
    entries = _entries(path)
    entries[key] = [version, time.time()]
    newest = sorted(entries.items(), key=lambda item: -_at(item[1]))
    kept = dict(newest[:MAX_ENTRIES])
    record = json.dumps({"format": FORMAT, "entries": kept}, separators=(",", ":"))
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_whole(path, record.encode("utf-8"))
