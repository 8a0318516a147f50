"""The notes a user has read, per project, so a note read once stays quiet until it changes.

A real project carries the same loading notes at every start (a draft without a heading, an
entry that is not a story key). Once the user has read them (the app's notices screen), they
are remembered here by the sha256 of their text, in the user's own state folder — never in
the project, which may be a clone the user does not own. A note whose text changes has a new
digest, so it is news again.

The file is ``$XDG_STATE_HOME/promptdeck/acknowledged/<sha256 of the project root>.json``:
a list of digests, capped at :data:`MAX_REMEMBERED` (the newest kept).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..atomic import write_whole
from ..lean_dataclass import dataclass
from .textfiles import read_text_file
from .user_dirs import state_folder

MAX_REMEMBERED = 2000
"""Most digests kept per project: a project whose notes churn cannot grow the file forever."""
READ_LIMIT = 256 * 1024
"""Largest acknowledgements file read (2,000 digests take about 140 KiB)."""


def note_digest(text: str) -> str:
    """The digest a note is remembered by."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def acknowledgements_path(root: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where the notes read in the project at ``root`` are remembered."""
    project = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    return state_folder(environ) / "acknowledged" / f"{project[:32]}.json"


@dataclass(frozen=True)
class AcknowledgedNotes:
    """The notes already read in one project.

    Attributes:
        digests: the :func:`note_digest` of each, oldest first.
    """

    digests: tuple[str, ...] = ()

    @classmethod
    def of(cls, texts: Iterable[str]) -> AcknowledgedNotes:
        """The notes ``texts`` as read."""
        return cls(tuple(note_digest(text) for text in texts))

    def is_read(self, text: str) -> bool:
        """True when a note with exactly this text was read before."""
        return note_digest(text) in self.digests


def load_acknowledged(root: Path, environ: Mapping[str, str] | None = None) -> AcknowledgedNotes:
    """The notes read in the project at ``root`` (none when the file is missing or unusable:
    a note shown once too often is better than one never shown)."""
    text = read_text_file(acknowledgements_path(root, environ), root=None, limit=READ_LIMIT)
    if not isinstance(text, str):
        return AcknowledgedNotes()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return AcknowledgedNotes()
    if not isinstance(data, list):
        return AcknowledgedNotes()
    return AcknowledgedNotes(tuple(d for d in data if isinstance(d, str)))


def acknowledge(
    root: Path, texts: Iterable[str], environ: Mapping[str, str] | None = None
) -> str | None:
    """Remember ``texts`` as read in the project at ``root``.

    Returns:
        None when remembered, else one line saying why not (the notes then show again).
    """
    known = load_acknowledged(root, environ).digests
    fresh = [note_digest(text) for text in texts]
    digests = list(dict.fromkeys([*known, *fresh]))[-MAX_REMEMBERED:]
    if digests == list(known):
        return None
    path = acknowledgements_path(root, environ)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, json.dumps(digests) + "\n")
    except OSError as exc:
        return f"{path}: cannot write ({exc.strerror}); the notes read will show again"
    return None
