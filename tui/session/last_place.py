"""Where the user left the app in a project — the story and the phase on screen — so that the
next start reopens there.

Kept per project in the user's own state folder (``$XDG_STATE_HOME/promptdeck/last-place/``,
beside the notes already read), never in the project: a clone the user does not own must not
decide where the app opens, and the app writes nothing into it for this. The file is a small
JSON object, written whole (a new file renamed over the old, so a crash leaves the old one and
a planted symlink is replaced, never followed) and only when the place changes; it is read
through the guarded reader (regular files only, under a small size line), so a FIFO, a
symlink, a huge or malformed file, or a place naming a story or phase that no longer exists
opens the app on the first story with one note.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from promptdeck.core.layers import MODES
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.phases import PHASE_NAMES

if TYPE_CHECKING:
    from promptdeck.core.stories import Story, StoryCatalog

READ_LIMIT = 4096
"""Largest place file read: a story id and a phase take well under a hundred bytes."""

FORMAT = "promptdeck last place 1"
"""The file's format mark: a file without it is not promptdeck's."""

NOTICE_SOURCE = "reopening"
"""The notices' source for what could not be reopened."""

RESUMED = "resumed"
"""Why the preview shows the phase it opens on, when it is the one the user left."""


@dataclass(frozen=True)
class LastPlace:
    """Where the user left the app.

    Attributes:
        story_id: the story on screen.
        phase: its phase on screen.
        mode: ``create`` or ``optimize``.
    """

    story_id: str
    phase: str
    mode: str = "create"


def last_place_path(root: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where the place left in the project at ``root`` is kept (in the user's state folder)."""
    from promptdeck.core.project import user_state_folder

    project = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    return user_state_folder(environ) / "last-place" / f"{project[:32]}.json"


def load_last_place(
    root: Path, environ: Mapping[str, str] | None = None
) -> tuple[LastPlace | None, str]:
    """The place left in the project at ``root``, and one note when the file could not be
    used (none for a missing file: a first start)."""
    from promptdeck.core.project import TextProblem, read_text_file

    path = last_place_path(root, environ)
    if not os.path.lexists(path):
        return None, ""
    if path.is_symlink():
        # The guarded reader follows a link when no project root bounds it: refused here.
        return None, _unused(path, "a symlink, not promptdeck's own file")
    text = read_text_file(path, root=None, limit=READ_LIMIT)
    if isinstance(text, TextProblem):
        return None, _unused(path, str(text))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None, _unused(path, "not JSON")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None, _unused(path, "not a place promptdeck wrote")
    story, phase, mode = data.get("story"), data.get("phase"), data.get("mode", "create")
    if not (isinstance(story, str) and story and isinstance(phase, str)):
        return None, _unused(path, "no story and phase in it")
    if not isinstance(mode, str) or mode not in MODES:
        mode = "create"
    return LastPlace(story, phase, mode), ""


def _unused(path: Path, why: str) -> str:
    return f"{path}: {why}; opening on the first story"


def remember_last_place(
    root: Path, place: LastPlace, environ: Mapping[str, str] | None = None
) -> str | None:
    """Keep ``place`` for the project at ``root``: None when kept, else one line saying why
    not (the next start then opens on the first story)."""
    path = last_place_path(root, environ)
    body = {"format": FORMAT, "story": place.story_id, "phase": place.phase, "mode": place.mode}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # mkstemp opens its new file with O_EXCL: nothing planted there is followed.
        descriptor, temporary = tempfile.mkstemp(prefix=".place-", dir=path.parent)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(body, ensure_ascii=False) + "\n")
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        why = exc.strerror or exc
        return f"{path}: cannot write ({why}); the next start opens on the first story"
    return None


def place_in(catalog: StoryCatalog, place: LastPlace | None) -> tuple[Story | None, str]:
    """The story ``place`` names in ``catalog`` (None: open on the first story), and one note
    when the place names a story or phase that no longer exists."""
    if place is None:
        return None, ""
    story = next((s for s in catalog.stories if s.id == place.story_id), None)
    if story is None:
        return None, f"story {place.story_id} (where the app was left) no longer exists; " + (
            "opening on the first story"
        )
    if place.phase not in PHASE_NAMES:
        return None, f"phase {place.phase!r} (where the app was left) is not a phase; " + (
            "opening on the first story"
        )
    return story, ""


class PlaceKeeper:
    """Keeps the place of the project at ``root`` as the user moves: written only when it
    changes (a keypress that changes nothing writes nothing).

    Args:
        root: the project root.
        kept: the place kept already (read at start): not written again.
        environ: the environment naming the state folder (default: this process's).
    """

    def __init__(
        self,
        root: Path,
        *,
        kept: LastPlace | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._root = root
        self._environ = environ
        self._kept = kept
        self._failed = False

    def moved(self, place: LastPlace) -> str | None:
        """The user is now at ``place``: keep it. Returns one line the first time it cannot
        be kept (then it stops trying: one note, not one per keypress)."""
        if place == self._kept or self._failed:
            return None
        problem = remember_last_place(self._root, place, self._environ)
        if problem:
            self._failed = True
            return problem
        self._kept = place
        return None
