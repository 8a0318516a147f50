"""The user's per-file choices: files of a story's injection left out or taken in by hand.

``space`` on a file row in the app, ``--exclude PATH`` / ``--include PATH`` in the CLI. A
choice is remembered per story in ``.promptdeck/file-choices.json`` and applied by every face
before composing (it is part of the :class:`~promptdeck.core.injection.model.Selection`), so the
preview, ``compose``, the run confirmation and the agent's bytes agree.

- An excluded file is any candidate of the injection except the story's own files (a story
  prompt without its story is not the story's prompt): it is listed as ``excluded`` with the
  reason ``left out by you``.
- An included file is a candidate a toggle leaves out (a discovery file while discovery is
  off), or any other project file, which is then added like ``--file``. ``--include`` of a
  file the story remembers as excluded clears that choice: the file goes back to what the
  toggles say (nothing is pinned "included by you").
- ``--exclude`` / ``--leave-out`` of a path that is no candidate of the injection (a typo, a
  folder) is refused with the nearest candidates (:func:`unknown_choices`).
- A remembered exclusion of a file that no longer exists is dropped, with a note.
- The workspace rules layer (Layer-0B, the only optional layer) may be left out the same way
  (``--exclude-layer 0B`` / ``--include-layer 0B``, the app's ``R``), remembered with the files.

The state file is read through the guarded reader and written whole (temporary file, then
rename) with ``O_NOFOLLOW``, never through a symlink, and only inside ``.promptdeck/``.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import posixpath
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..atomic import write_whole
from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..project.state_folder import state_dir
from ..project.textfiles import TextProblem, read_file_bytes
from ..vocabulary import optional_layer
from .model import Selection

CHOICES_FILE = ".promptdeck/file-choices.json"
"""Where the choices are remembered, relative to the project root."""
CHOICES_VERSION = 1
CHOICES_MAX_BYTES = 1024 * 1024
"""A larger state file is not read (a note says so): no one chooses a megabyte of paths."""
LEFT_OUT_REASON = "left out by you"
TAKEN_IN_REASON = "included by you"


@dataclass(frozen=True)
class FileChoice:
    """One story's choices.

    Attributes:
        excluded: root-relative paths left out of the injection.
        included: root-relative paths taken in although no toggle includes them.
        layers: optional layers left out (``Layer-0B``).
    """

    excluded: tuple[str, ...] = ()
    included: tuple[str, ...] = ()
    layers: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing is chosen."""
        return not self.excluded and not self.included and not self.layers

    def exclude(self, paths: Iterable[str]) -> FileChoice:
        """These choices with ``paths`` left out (and no longer taken in)."""
        names = [normal_path(p) for p in paths]
        excluded = _merged(self.excluded, names)
        included = tuple(p for p in self.included if p not in names)
        return replace(self, excluded=excluded, included=included)

    def undo_or_include(self, paths: Iterable[str]) -> FileChoice:
        """``--include``: a path left out by an earlier choice has that choice cleared (it
        goes back to what the toggles say); any other path is taken in."""
        names = [normal_path(p) for p in paths]
        cleared = [name for name in names if name in self.excluded]
        kept = replace(self, excluded=tuple(p for p in self.excluded if p not in cleared))
        return kept.include(name for name in names if name not in cleared)

    def include(self, paths: Iterable[str]) -> FileChoice:
        """These choices with ``paths`` taken in (and no longer left out)."""
        names = [normal_path(p) for p in paths]
        included = _merged(self.included, names)
        excluded = tuple(p for p in self.excluded if p not in names)
        return replace(self, excluded=excluded, included=included)

    def leave_out_layers(self, layers: Iterable[str], left_out: bool = True) -> FileChoice:
        """These choices with the optional ``layers`` left out (or, ``left_out=False``, put
        back); a name that is not an optional layer is ignored."""
        names = [name for name in (optional_layer(n) for n in layers) if name is not None]
        if left_out:
            return replace(self, layers=_merged(self.layers, names))
        return replace(self, layers=tuple(n for n in self.layers if n not in names))

    def toggle(self, path: str, included_now: bool) -> FileChoice:
        """``space`` on a file row: leave out a file that is in, take in one that is out.

        A file that is where it is only by an earlier choice goes back to what the toggles
        say, so pressing twice is no change at all.
        """
        name = normal_path(path)
        if included_now and name in self.included:
            return replace(self, included=tuple(p for p in self.included if p != name))
        if not included_now and name in self.excluded:
            return replace(self, excluded=tuple(p for p in self.excluded if p != name))
        return self.exclude([name]) if included_now else self.include([name])

    def to_dict(self) -> dict[str, list[str]]:
        """``{"exclude": [...], "include": [...]}``, and ``"exclude_layers"`` when a layer is
        left out."""
        data = {"exclude": list(self.excluded), "include": list(self.included)}
        if self.layers:
            data["exclude_layers"] = list(self.layers)
        return data


def _merged(existing: tuple[str, ...], more: Iterable[str]) -> tuple[str, ...]:
    merged = list(existing)
    for name in more:
        if name not in merged:
            merged.append(name)
    return tuple(merged)


def normal_path(path: str) -> str:
    """A root-relative path as the injection shows it: forward slashes, no ``./``."""
    return posixpath.normpath(path.replace(os.sep, "/"))


@dataclass(frozen=True)
class StoredChoices:
    """Every story's remembered choices, and anything worth saying about reading them."""

    stories: dict[str, FileChoice]
    notes: tuple[str, ...] = ()


def load_choices(root: Path) -> StoredChoices:
    """The remembered choices of the project at ``root`` (none when there is no file).

    A file that cannot be read or parsed gives no choices and one note; it is never fatal.
    """
    path = root / CHOICES_FILE
    if not os.path.lexists(path):
        return StoredChoices({})
    data = read_file_bytes(path, root, limit=CHOICES_MAX_BYTES)
    if isinstance(data, TextProblem):
        return StoredChoices({}, (f"{CHOICES_FILE}: {data}; the file choices are not applied",))
    try:
        raw = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        # Malformed JSON, bytes that are no UTF-8, a number past Python's 4,300 digits (a bare
        # ValueError) or nesting too deep for the parser: a committed file is data like any other.
        why = str(exc).split(":", 1)[0] if isinstance(exc, ValueError) else "nested too deeply"
        return StoredChoices(
            {}, (f"{CHOICES_FILE}: not valid JSON ({why}); the file choices are not applied",)
        )
    stories: dict[str, FileChoice] = {}
    entries = raw.get("stories") if isinstance(raw, dict) else None
    if not isinstance(entries, dict):
        return StoredChoices({}, (f"{CHOICES_FILE}: no 'stories' table; nothing applied",))
    for story_id, entry in entries.items():
        if not isinstance(story_id, str) or not isinstance(entry, dict):
            continue
        stories[story_id] = FileChoice(
            _paths(entry.get("exclude")), _paths(entry.get("include"))
        ).leave_out_layers(_paths(entry.get("exclude_layers")))
    return StoredChoices(stories)


def _paths(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(normal_path(item) for item in value if isinstance(item, str) and item.strip())


def story_choice(root: Path, story_id: str) -> tuple[FileChoice, tuple[str, ...]]:
    """The remembered choice of one story, and the notes about reading it.

    A remembered exclusion of a file that no longer exists is dropped (and forgotten when the
    state can be written), with a note naming it.
    """
    stored = load_choices(root)
    choice = stored.stories.get(story_id, FileChoice())
    notes = list(stored.notes)
    gone = [p for p in choice.excluded if not os.path.lexists(root / p)]
    if gone:
        kept = replace(choice, excluded=tuple(p for p in choice.excluded if p not in gone))
        notes.extend(
            f"{path}: remembered as left out of story {story_id}, but it no longer exists; "
            "the choice is dropped"
            for path in gone
        )
        with contextlib.suppress(OSError):
            remember_choice(root, story_id, kept)
        choice = kept
    return choice, tuple(notes)


def remember_choice(root: Path, story_id: str, choice: FileChoice) -> None:
    """Remember ``choice`` for ``story_id`` (an empty choice forgets the story).

    Raises:
        OSError: the state could not be written (the caller says so in one line).
    """
    stored = load_choices(root)
    stories = dict(stored.stories)
    if choice.empty:
        stories.pop(story_id, None)
    else:
        stories[story_id] = choice
    payload = {
        "version": CHOICES_VERSION,
        "stories": {key: stories[key].to_dict() for key in sorted(stories)},
    }
    write_state(root, CHOICES_FILE, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def write_state(root: Path, relative: str, text: str) -> None:
    """Write a promptdeck state file under ``root`` whole, never through a symlink.

    The folder must be a real folder inside the project (not a symlink); the text goes to a
    new temporary file opened with ``O_EXCL | O_NOFOLLOW`` and is renamed over the old one,
    so a crash leaves the old state and a planted symlink is replaced, never followed.

    Raises:
        OSError: the folder is a symlink or not inside the project, or the write failed.
    """
    target = root / relative
    folder = target.parent
    try:
        # Every folder from `.promptdeck` down is a real one: a link inside the project
        # (`.promptdeck -> docs/state`) would otherwise get the state committed.
        state_dir(root, folder)
    except UsageError as exc:
        raise OSError(str(exc)) from None
    if folder.is_symlink() or not folder.resolve().is_relative_to(root.resolve()):
        raise OSError(f"{folder} is not a folder of the project; nothing written")
    write_whole(target, text)


def chosen_selection(
    root: Path, story_id: str, selection: Selection
) -> tuple[Selection, tuple[str, ...]]:
    """``selection`` with the story's remembered choices applied, and the notes about them.

    What the selection itself names wins over what is remembered: an ``--include`` of a
    remembered exclusion clears it (the file is back to what the toggles say).
    """
    remembered, notes = story_choice(root, story_id)
    asked = FileChoice(selection.excluded, selection.included, selection.left_out_layers)
    if remembered.empty and asked.empty and not selection.put_back_layers:
        return selection, notes
    merged = remembered.exclude(asked.excluded).undo_or_include(asked.included)
    merged = merged.leave_out_layers(asked.layers)
    merged = merged.leave_out_layers(selection.put_back_layers, left_out=False)
    chosen = replace(
        selection,
        excluded=merged.excluded,
        included=merged.included,
        left_out_layers=merged.layers,
    )
    return chosen, notes


def remember_selection(
    root: Path, story_id: str, selection: Selection, own_files: Iterable[str] = ()
) -> None:
    """Remember the per-file choices ``selection`` carries for ``story_id``.

    ``own_files`` are the story's own files: an exclusion of one is not applied, so it is not
    remembered either.

    Raises:
        OSError: the state could not be written.
    """
    own = set(own_files)
    excluded = tuple(p for p in selection.excluded if p not in own)
    choice = FileChoice(excluded, selection.included).leave_out_layers(selection.left_out_layers)
    remember_choice(root, story_id, choice)


def toggle_remembered(root: Path, story_id: str, path: str, included_now: bool) -> FileChoice:
    """Flip one file's choice for ``story_id`` and remember it (the app's ``space``).

    Raises:
        OSError: the state could not be written.
    """
    choice, _ = story_choice(root, story_id)
    changed = choice.toggle(path, included_now)
    remember_choice(root, story_id, changed)
    return changed


def toggle_layer_remembered(root: Path, story_id: str, layer: str) -> FileChoice:
    """Leave the optional ``layer`` out of ``story_id``'s prompt, or put it back when it is
    out, and remember it (the app's ``R``).

    Raises:
        OSError: the state could not be written.
    """
    choice, _ = story_choice(root, story_id)
    name = optional_layer(layer)
    changed = choice.leave_out_layers([layer], left_out=name not in choice.layers)
    remember_choice(root, story_id, changed)
    return changed


NEAREST = 3
"""How many candidates a refused path is offered."""


def unknown_choices(candidates: Iterable[str], named: Iterable[str]) -> list[str]:
    """One line for each of ``named`` that is no candidate of the injection (a typo, a
    folder), with the nearest candidates: the candidates under it when it is a folder, else
    the closest by spelling."""
    known = list(dict.fromkeys(candidates))
    lines: list[str] = []
    for path in named:
        name = normal_path(path)
        if name in known:
            continue
        folder = name.rstrip("/") + "/"
        under = [c for c in known if c.startswith(folder)][:NEAREST]
        nearest = under or difflib.get_close_matches(name, known, n=NEAREST, cutoff=0.4)
        what = "a folder, not a candidate file" if under else "no candidate of the injection"
        offer = f" (nearest: {', '.join(nearest)})" if nearest else ""
        lines.append(f"{name}: {what}{offer}")
    return lines
