"""What an agent's phase may write in the plan: :func:`write_scope`.

Protected in every agent phase: ``sprint-status.yaml``, every ``tickets.toml``, the planning
artifacts (every file of ``paths.planning``; ``epic-N-context.md`` wherever the plan keeps
it), every other story's files, and ``.promptdeck/`` — but for promptdeck's own records and
locks (``runs/``, ``locks/``, ``exports/``: written by this run and by any other running at
the same time), where of the runs only the settled ones' ``meta.json`` and ``result.json``
are kept (the flow reads them), and the shared learnings file the agent is asked to append
to, and the file choices the app remembers (written whenever the user picks a file). The
phase's own story file stays writable, but its ``<frozen-after-approval …>`` blocks
must stay byte for byte. ``[scope] protect`` adds globs, ``[scope] allow`` takes paths out
(a widening: ``promptdeck trust`` covers it).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat as stat_module
from pathlib import Path
from typing import Any

from ..injection.choices import CHOICES_FILE
from ..lean_dataclass import dataclass
from ..plans.catalog import load_catalog
from ..project.textfiles import TextProblem, printable_name, read_file_bytes
from ..project.workspace import Workspace
from ..prompt.learnings import learnings_path
from ..stories.model import Story
from ..terminal import printable_line
from .frozen import FROZEN_MARK

MOST_PROTECTED = 20_000
"""The most protected files one run records; past it one note says how many were left out."""
MOST_WALKED = 100_000
"""The most entries the scope's folder walks look at, all folders together."""

SPRINT_STATUS = "sprint-status.yaml"
TICKETS = "tickets.toml"
_STATE = ".promptdeck"
_STATE_OWN = ("runs", "locks", "exports")
"""promptdeck's records, locks and exports: written by this run and by others at once."""
_SETTLED_RECORDS = ("meta.json", "result.json")
_EPIC_CONTEXT = re.compile(r"^epic-[^/]*-context\.md$")
_WILD = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class WriteScope:
    """What one agent phase may and may not write in the plan.

    Attributes:
        protected: root-relative files (``/`` separators) the phase may not create, change or
            delete; sorted.
        frozen: root-relative files the phase may write, whose ``<frozen-after-approval …>``
            … ``</frozen-after-approval>`` blocks must stay byte-identical.
        allowed: root-relative files and globs the phase may write in the plan (its own story
            files, the learnings file, ``[scope] allow``).
        notes: one line for each thing the scope could not do as asked (a glob outside the
            project, a plan too large to record whole).
    """

    protected: tuple[str, ...] = ()
    frozen: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (``run --dry-run --json``'s ``scope``)."""
        return {
            "protected": list(self.protected),
            "allowed": list(self.allowed),
            "frozen": list(self.frozen),
            "notes": list(self.notes),
        }

    def lines(self, shown: int = 3) -> tuple[str, ...]:
        """The confirmation's lines, short enough for a narrow screen: how many files are
        protected with the first ``shown`` by name (the status files first), what is frozen,
        what the agent may write, and the notes (``run --dry-run --json`` lists every path)."""

        def rank(path: str) -> tuple[int, str]:
            name = path.rsplit("/", 1)[-1]
            first = 0 if name in (SPRINT_STATUS, TICKETS) else 2 if path.startswith(_STATE) else 1
            return first, path

        def names(paths: tuple[str, ...] | list[str]) -> str:
            return ", ".join(path.rsplit("/", 1)[-1] for path in paths)

        sample: list[str] = []
        for path in sorted(self.protected, key=rank):
            if len(sample) == shown:
                break
            if path.rsplit("/", 1)[-1] not in names(sample).split(", "):
                sample.append(path)
        more = len(self.protected) - len(sample)
        lines = [
            f"write scope: {len(self.protected)} protected file(s), put back if the agent "
            f"changes them: {names(sample)}" + (f" and {more} more" if more else "")
            if self.protected
            else "write scope: no protected file"
        ]
        if self.frozen:
            lines.append(f"  frozen blocks kept: {names(self.frozen)}")
        if self.allowed:
            lines.append(f"  the agent may write: {names(self.allowed)}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return tuple(printable_line(line) for line in lines)


# -- the scope -------------------------------------------------------------------------------


def _inside_rel(rel: str) -> str | None:
    """``rel`` as a clean root-relative path, or None when it names no path inside the root
    (absolute, ``..``, empty)."""
    if not rel or "\0" in rel or rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        return None
    parts = [part for part in rel.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


class _Walker:
    """Folder walks inside the root, never through a link, within one shared budget."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.budget = MOST_WALKED
        self.cut = False

    def spend(self) -> bool:
        """Count one entry looked at; False once the walks' budget is spent (they stop, and
        :attr:`cut` says so)."""
        self.budget -= 1
        if self.budget < 0:
            self.cut = True
            return False
        return True

    def folder_ok(self, rel: str) -> bool:
        """True when ``rel`` is a real folder (no link on the way) inside the root."""
        current = self.root
        for part in rel.split("/"):
            current = current / part
            try:
                info = os.lstat(current)
            except OSError:
                return False
            if not stat_module.S_ISDIR(info.st_mode):
                return False
        return True

    def files(self, rel: str, skip: tuple[str, ...] = ()) -> list[str]:
        """Every non-folder entry under ``rel`` (root-relative), links and FIFOs included as
        entries, folders named in ``skip`` (root-relative) not entered."""
        found: list[str] = []
        if not rel or not self.folder_ok(rel):
            return found
        pending = [rel]
        while pending and not self.cut:
            folder = pending.pop()
            try:
                with os.scandir(self.root / folder) as entries:
                    for entry in entries:
                        if not self.spend():
                            break
                        child = f"{folder}/{entry.name}"
                        try:
                            is_dir = entry.is_dir(follow_symlinks=False)
                        except OSError:
                            is_dir = False
                        if is_dir:
                            if child not in skip:
                                pending.append(child)
                        else:
                            found.append(child)
            except OSError:
                continue
        return found


def _story_paths(story: Story) -> set[str]:
    paths = {story.path, story.record_path, *story.files}
    return {clean for path in paths if path and (clean := _inside_rel(path)) is not None}


def _glob_matches(walker: _Walker, glob: str) -> list[str]:
    """The files ``glob`` names: itself when it has no wildcard, else the files under its
    fixed leading folders that match (``*`` crosses folders)."""
    parts = glob.split("/")
    fixed: list[str] = []
    for part in parts:
        if _WILD.search(part):
            break
        fixed.append(part)
    if len(fixed) == len(parts):
        return [glob]
    return [path for path in walker.files("/".join(fixed)) if fnmatch.fnmatchcase(path, glob)]


def _checked_globs(globs: tuple[str, ...], key: str, notes: list[str]) -> list[str]:
    kept: list[str] = []
    for glob in globs:
        clean = _inside_rel(glob)
        if clean is None:
            notes.append(
                f"[scope] {key} = {printable_name(repr(glob))} names a path outside the "
                "project; refused"
            )
        else:
            kept.append(clean)
    return kept


def _has_frozen(workspace: Workspace, rel: str) -> bool:
    data = read_file_bytes(
        workspace.root / rel, workspace.root.resolve(), limit=workspace.config.read_max_bytes
    )
    return not isinstance(data, TextProblem) and FROZEN_MARK in data


def write_scope(workspace: Workspace, story: Story, phase: str) -> WriteScope:
    """The write scope of ``phase`` of ``story``: what the agent may not change in the plan.

    Never raises: a plan that cannot be read whole still gets the files that could be found,
    and a note says what was not.

    Args:
        workspace: the workspace (its config names the plan's folders and ``[scope]``).
        story: the story the phase works on; its own files stay writable.
        phase: the phase (every agent phase gets the same protection today).
    """
    del phase  # every agent phase protects the same bookkeeping; kept for the contract
    config = workspace.config
    notes: list[str] = []
    walker = _Walker(workspace.root)
    own = _story_paths(story)
    allowed: list[str] = sorted(own)
    learnings = _inside_rel(learnings_path(workspace, story))
    if learnings is not None:
        allowed.append(learnings)
    protected: set[str] = set()
    artifacts = _inside_rel(config.paths_artifacts)
    planning = _inside_rel(config.paths_planning)
    if artifacts is None and _inside_rel(f"{config.paths_artifacts}/x") == "x":
        protected.add(SPRINT_STATUS)  # the artifacts folder is the root itself
    if artifacts is not None:
        protected.add(f"{artifacts}/{SPRINT_STATUS}")
        for path in walker.files(artifacts):
            name = path.rsplit("/", 1)[-1]
            if name in (SPRINT_STATUS, TICKETS) or _EPIC_CONTEXT.match(name):
                protected.add(path)
    if planning is not None:
        protected.update(walker.files(planning))
    try:
        stories: tuple[Story, ...] = tuple(load_catalog(workspace).stories)
    except Exception as exc:  # the plan that cannot be read still gets the rest checked
        notes.append(f"the story catalog could not be read ({exc}); other stories unprotected")
        stories = ()
    folders: set[str] = set()
    for other in stories:
        paths = _story_paths(other)
        for path in paths:
            parent = path.rpartition("/")[0]
            folders.add(parent)
            folders.add(parent.rpartition("/")[0])
        if other.id != story.id:
            protected.update(paths)
    for folder in folders:
        # A v7 plan keeps its tickets.toml beside the stories and one folder up.
        tickets = f"{folder}/{TICKETS}" if folder else TICKETS
        if os.path.lexists(workspace.root / tickets):
            protected.add(tickets)
    skip = tuple(f"{_STATE}/{name}" for name in _STATE_OWN)
    protected.update(walker.files(_STATE, skip))
    protected.update(_settled_records(walker))
    for glob in _checked_globs(config.scope_protect, "protect", notes):
        protected.update(_glob_matches(walker, glob))
    allow = _checked_globs(config.scope_allow, "allow", notes)
    allowed.extend(allow)
    if walker.cut:
        notes.append(
            f"the plan's folders hold more than {MOST_WALKED:,} entries; only the first were "
            "looked at"
        )
    # The plan's own files first, promptdeck's after: the confirmation names the first few.
    kept = sorted(
        (
            path
            for path in protected
            if path not in own
            and path not in (learnings, CHOICES_FILE)
            and not any(fnmatch.fnmatchcase(path, glob) for glob in allow)
        ),
        key=lambda path: (path.startswith(f"{_STATE}/"), path),
    )
    if len(kept) > MOST_PROTECTED:
        notes.append(
            f"{len(kept) - MOST_PROTECTED:,} protected file(s) past the first "
            f"{MOST_PROTECTED:,} are not recorded or checked"
        )
        kept = kept[:MOST_PROTECTED]
    frozen = tuple(
        sorted(
            path
            for path in own
            if not any(fnmatch.fnmatchcase(path, glob) for glob in allow)
            and _has_frozen(workspace, path)
        )
    )
    return WriteScope(tuple(kept), frozen, tuple(dict.fromkeys(allowed)), tuple(notes))


def _settled_records(walker: _Walker) -> list[str]:
    """The records of runs that have settled (their ``result.json`` written): the flow reads
    them, and no run writes them again."""
    runs = f"{_STATE}/runs"
    if not walker.folder_ok(runs):
        return []
    found: list[str] = []
    try:
        with os.scandir(walker.root / runs) as entries:
            for entry in entries:
                if not walker.spend():
                    break
                if not entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    os.lstat(os.path.join(entry.path, "result.json"))
                except OSError:
                    continue
                found.extend(f"{runs}/{entry.name}/{name}" for name in _SETTLED_RECORDS)
    except OSError:
        return found
    return found


__all__ = ["WriteScope", "write_scope"]
