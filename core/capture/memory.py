"""The last capture per client and client version, kept in the user's cache folder.

A capture costs a run of the real client; the app's meters show the client's overhead from the
last one kept instead of running it again. One file per client and version:
``$XDG_CACHE_HOME/promptdeck/captures/<client>-<version>.json`` (never in the project, which
may be a clone the user does not own). A newer capture of the same version replaces it; at
most :data:`KEPT_PER_CLIENT` versions of a client are kept, the oldest captures dropped first.

The files are never trusted: each is read through the guarded reader with a size bound; a
link, a FIFO, a file without this record's format mark or one that does not parse as a
capture is ignored with one line (and never replaced: it may be someone else's file).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..atomic import write_whole
from ..project.textfiles import TextProblem, read_text_file
from ..project.user_dirs import cache_folder, foreign_file
from .loopback import CapturedRequest
from .model import PART_KINDS, Capture, DuplicateText, RequestPart, compact_json

FORMAT = "promptdeck-capture"
FORMAT_VERSION = 1
_MARK = b'{"format":"promptdeck-capture"'
FOLDER = "captures"
KEPT_PER_CLIENT = 8
"""Client versions kept per client (each file one capture)."""
READ_LIMIT = 24 * 1024 * 1024
"""Largest capture file read back: a real one is a few hundred KiB."""
TEXT_BUDGET = 8 * 1024 * 1024
"""The most request and part text one file keeps; past it the texts are left out (the sizes,
tokens and duplicates stay), so a request near the memory bound cannot make a huge file."""
LISTED_LIMIT = 256
"""The most files of the captures folder looked at (a folder filled by something else costs
no more than this)."""
_VERSION_SLUG = re.compile(r"[^A-Za-z0-9._+-]+")


def captures_folder(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/promptdeck/captures``."""
    return cache_folder(environ) / FOLDER


def capture_path(client: str, version: str, environ: Mapping[str, str] | None = None) -> Path:
    """The file that keeps ``client`` at ``version``'s last capture."""
    slug = _VERSION_SLUG.sub("_", version).strip("._") or "unknown"
    return captures_folder(environ) / f"{client}-{slug[:64]}.json"


def _is_own(head: bytes) -> bool:
    return head.startswith(_MARK)


def _record(capture: Capture) -> dict[str, Any]:
    texts = len(capture.request.body) + sum(len(part.text) for part in capture.parts)
    keep_text = texts <= TEXT_BUDGET
    body = capture.request.body.decode("utf-8", "surrogateescape") if keep_text else ""
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "client": capture.client,
        "client_version": capture.client_version,
        "story": capture.story_id,
        "phase": capture.phase,
        "model": capture.model,
        "window": capture.window,
        "requests": capture.requests,
        "captured_at": capture.captured_at,
        "request": {
            "method": capture.request.method,
            "path": capture.request.path,
            "size": capture.request.size,
            "cut": capture.request.cut,
            "body": body,
        },
        "parts": [
            {
                "name": part.name,
                "kind": part.kind,
                "text": part.text if keep_text else "",
                "bytes": part.bytes,
                "tokens": part.tokens,
                "note": part.note,
                "loaded_because": part.loaded_because,
            }
            for part in capture.parts
        ],
        "duplicates": [duplicate.to_dict() for duplicate in capture.duplicates],
    }


def remember_capture(capture: Capture, environ: Mapping[str, str] | None = None) -> str | None:
    """Keep ``capture`` as the last one of its client and version.

    Returns:
        None when kept, else one line saying why not (the capture itself is unaffected).
    """
    path = capture_path(capture.client, capture.client_version, environ)
    refused = foreign_file(path, _is_own, head=len(_MARK))
    if refused is not None:
        return f"capture not kept: {refused}"
    try:
        # Private when made here, as the other caches (a capture holds the project's text).
        cache_folder(environ).mkdir(mode=0o700, parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_whole(path, compact_json(_record(capture)).encode("utf-8", "surrogateescape"))
    except OSError as exc:
        return f"capture not kept: {path}: {exc.strerror or exc}"
    _prune(capture.client, path.parent)
    return None


def _own_files(client: str, folder: Path) -> list[Path]:
    """The capture files of ``client`` in ``folder`` (regular files, not links), newest first."""
    found: list[tuple[float, Path]] = []
    try:
        with os.scandir(folder) as entries:
            for count, entry in enumerate(entries):
                if count >= LISTED_LIMIT:
                    break
                name = entry.name
                if not (name.startswith(f"{client}-") and name.endswith(".json")):
                    continue
                with contextlib.suppress(OSError):
                    if entry.is_file(follow_symlinks=False):
                        found.append((entry.stat(follow_symlinks=False).st_mtime, Path(entry)))
    except OSError:
        return []
    return [path for _, path in sorted(found, key=lambda item: item[0], reverse=True)]


def _prune(client: str, folder: Path) -> None:
    for path in _own_files(client, folder)[KEPT_PER_CLIENT:]:
        if foreign_file(path, _is_own, head=len(_MARK)) is None:
            with contextlib.suppress(OSError):
                path.unlink()


class _NotACapture(ValueError):
    """The file parses, but not as a capture record."""


def _field(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise _NotACapture(f"field {key!r}")
    return value


def _capture(data: Mapping[str, Any]) -> Capture:
    if data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
        raise _NotACapture("format mark")
    request = _field(data, "request", dict)
    parts = []
    for item in _field(data, "parts", list):
        if not isinstance(item, dict) or item.get("kind") not in PART_KINDS:
            raise _NotACapture("a part")
        parts.append(
            RequestPart(
                name=_field(item, "name", str),
                kind=item["kind"],
                text=_field(item, "text", str),
                bytes=_field(item, "bytes", int),
                tokens=_field(item, "tokens", int),
                note=_field(item, "note", str),
                loaded_because=str(item.get("loaded_because") or ""),
            )
        )
    duplicates = []
    for item in _field(data, "duplicates", list):
        if not isinstance(item, dict):
            raise _NotACapture("a duplicate")
        duplicates.append(
            DuplicateText(
                first=_field(item, "first", str),
                second=_field(item, "second", str),
                paragraphs=_field(item, "paragraphs", int),
                bytes=_field(item, "bytes", int),
            )
        )
    return Capture(
        client=_field(data, "client", str),
        client_version=_field(data, "client_version", str),
        story_id=_field(data, "story", str),
        phase=_field(data, "phase", str),
        model=_field(data, "model", str),
        window=_field(data, "window", int),
        request=CapturedRequest(
            method=_field(request, "method", str),
            path=_field(request, "path", str),
            body=_field(request, "body", str).encode("utf-8", "surrogateescape"),
            size=_field(request, "size", int),
            cut=_field(request, "cut", bool),
        ),
        parts=tuple(parts),
        duplicates=tuple(duplicates),
        requests=_field(data, "requests", int),
        captured_at=float(_field(data, "captured_at", (int, float))),
    )


def _read(path: Path) -> Capture | str:
    """The capture in ``path``, or one line saying why it is ignored."""
    refused = foreign_file(path, _is_own, head=len(_MARK))
    if refused is not None:
        return f"remembered capture ignored: {refused}"
    text = read_text_file(path, root=None, limit=READ_LIMIT)
    if isinstance(text, TextProblem):
        return f"remembered capture ignored: {path}: {text}"
    try:
        return _capture(json.loads(text))
    except (ValueError, RecursionError, TypeError, KeyError) as exc:
        why = str(exc) if isinstance(exc, _NotACapture) else "does not parse"
        return f"remembered capture ignored: {path}: not a capture record ({why})"


def remembered_capture(
    client: str,
    version: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    notes: list[str] | None = None,
) -> Capture | None:
    """The last capture kept for ``client``: the one of ``version`` when one is kept for it,
    else the newest of any version. Its ``client_version`` (and :meth:`Capture.origin`) says
    which; None when none is kept.

    Args:
        client: ``claude`` or ``codex``.
        version: the client's installed version, when the caller knows it.
        environ: the environment naming the cache folder (the process's when None).
        notes: receives one line per kept file that was ignored (foreign or damaged).
    """
    folder = captures_folder(environ)
    candidates = _own_files(client, folder)
    if version is not None:
        exact = capture_path(client, version, environ)
        candidates = [exact, *(path for path in candidates if path != exact)]
    for path in candidates:
        if not path.exists() and not path.is_symlink():
            continue
        found = _read(path)
        if isinstance(found, Capture) and found.client == client:
            return found
        if notes is not None:
            notes.append(
                found if isinstance(found, str) else f"{path}: a capture of another client"
            )
    return None
