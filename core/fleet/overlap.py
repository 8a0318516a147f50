"""Which stories of an epic may run at the same time: their predicted file footprints, the
pairs whose footprints meet, and the waves that follow.

A story's footprint is what its plan says it will touch — the paths of its File List and Code
Map sections, the paths its tasks name, its ``context:`` list — and the files its own earlier
runs changed. A BMAD v7 entry's ``after`` (``tickets.toml``) names prerequisites: a story runs
in a later wave than each of them. Two stories whose footprints meet never share a wave; nor
does a story whose footprint is unknown (the plan names no path for it): it runs alone. It is a
prediction from the plan's words, shown as one, never a guarantee.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import PurePosixPath
from typing import Any

from ..lean_dataclass import dataclass
from ..plans.markdown import iter_headings, section_lines
from ..project.textfiles import TextProblem, read_text
from ..project.workspace import Workspace
from ..records.reader import list_runs
from ..stories.keys import normalize_key
from ..stories.model import Story, Task

FOOTPRINT_SECTIONS = re.compile(r"\b(file list|code map|files? to (change|touch|create))\b", re.I)
"""Headings whose sections list the files a story touches."""
_PATH = re.compile(
    r"(?<![\w/.@:-])((?:\.{0,2}/)?(?:[\w.@-]+/)+[\w.@-]*|[\w@-][\w.@-]*[\w@-]\.[A-Za-z][A-Za-z0-9]{0,7})"
    r"(?![\w/])"
)
_MOST_PATHS = 500
"""At most this many paths per story: a plan that names thousands says nothing narrower."""
_STORY_TEXT_LIMIT = 2 * 1024 * 1024


@dataclass(frozen=True)
class Footprint:
    """The files one story is predicted to touch.

    Attributes:
        story: the story id.
        paths: root-relative paths (a path ending in ``/`` is a whole folder).
        sources: where they came from (``file list``, ``tasks``, ``context``, ``runs``).
        after: the stories (ids) this one must come after.
    """

    story: str
    paths: frozenset[str]
    sources: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        """False when the plan names no path for the story: it must run alone."""
        return bool(self.paths)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "story": self.story,
            "known": self.known,
            "paths": sorted(self.paths),
            "sources": list(self.sources),
            "after": list(self.after),
        }


@dataclass(frozen=True)
class Overlap:
    """Two stories that may not run at the same time, and why."""

    first: str
    second: str
    shared: tuple[str, ...]
    """The paths both touch; empty when one footprint is unknown."""

    def reason(self) -> str:
        """One line."""
        if not self.shared:
            return "a footprint is unknown"
        more = f" and {len(self.shared) - 3} more" if len(self.shared) > 3 else ""
        return ", ".join(self.shared[:3]) + more


@dataclass(frozen=True)
class OverlapPlan:
    """An epic's footprints, the overlapping pairs and the waves, in plan order.

    Attributes:
        epic: the epic.
        footprints: one per story, in plan order.
        overlaps: each pair of stories that may not share a wave.
        waves: the stories of each wave, in plan order; a wave starts after the one before
            it has finished.
        problems: one line per prerequisite that could not be honoured (a cycle, a story
            outside the epic).
    """

    epic: str
    footprints: tuple[Footprint, ...]
    overlaps: tuple[Overlap, ...]
    waves: tuple[tuple[str, ...], ...]
    problems: tuple[str, ...] = field(default=())

    def wave_of(self, story: str) -> int:
        """The wave (0-based) a story runs in."""
        for number, wave in enumerate(self.waves):
            if story in wave:
                return number
        raise KeyError(story)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``plan --overlap --json``."""
        return {
            "epic": self.epic,
            "footprints": [f.to_dict() for f in self.footprints],
            "overlaps": [
                {"stories": [o.first, o.second], "shared": list(o.shared), "reason": o.reason()}
                for o in self.overlaps
            ],
            "waves": [list(wave) for wave in self.waves],
            "problems": list(self.problems),
            "prediction": "from the plan's words; not a guarantee",
        }


def clean_path(raw: str) -> str | None:
    """``raw`` as a root-relative POSIX path, or None when it is none (a URL, absolute,
    leading out with ``..``, a version number)."""
    text = raw.strip().strip("`'\"()[]<>,;:").replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    if not text or "://" in text or text.startswith(("/", "~")) or len(text) > 300:
        return None
    folder = text.endswith("/")
    parts = PurePosixPath(text).parts
    if not parts or ".." in parts or any(part.startswith("-") for part in parts):
        return None
    clean = "/".join(parts)
    return clean + "/" if folder else clean


def paths_in(text: str) -> list[str]:
    """The path-like words of a line of prose (backticked or bare)."""
    found: list[str] = []
    for match in _PATH.finditer(text):
        path = clean_path(match.group(1))
        if path is not None and path.strip("/"):
            found.append(path)
    return found


def _task_texts(tasks: Iterable[Task]) -> Iterable[str]:
    for task in tasks:
        yield task.text
        yield from _task_texts(task.children)


def _section_paths(text: str) -> list[str]:
    lines = text.splitlines()
    headings = list(iter_headings(lines))
    found: list[str] = []
    for heading in headings:
        if FOOTPRINT_SECTIONS.search(heading.text):
            for line in section_lines(lines, heading, headings):
                found.extend(paths_in(line))
    return found


def footprint(
    workspace: Workspace,
    story: Story,
    changed: Mapping[str, Iterable[str]] | None = None,
    after: Sequence[str] = (),
) -> Footprint:
    """The story's predicted footprint (see the module's description).

    Args:
        changed: the paths each story's earlier runs changed, by story key.
        after: the stories this one comes after.
    """
    own = {*(p for p in story.files), *([story.path] if story.path else [])}
    sources: list[str] = []
    paths: list[str] = []

    def add(source: str, found: Iterable[str]) -> None:
        new = [p for p in found if p not in own]
        if new:
            sources.append(source)
            paths.extend(new)

    if story.path:
        text = read_text(workspace.root / story.path, workspace.root, limit=_STORY_TEXT_LIMIT)
        if not isinstance(text, TextProblem):
            add("file list", _section_paths(text))
    add("tasks", (p for line in _task_texts(story.tasks) for p in paths_in(line)))
    context = [clean_path(p) for p in story.context_files]
    add("context", (p for p in context if p is not None))
    if changed is not None:
        add("runs", changed.get(normalize_key(story.id), ()))
    kept = frozenset(list(dict.fromkeys(paths))[:_MOST_PATHS])
    return Footprint(story.id, kept, tuple(sources), tuple(after))


def _meet(first: frozenset[str], second: frozenset[str]) -> tuple[str, ...]:
    """The paths of two footprints that meet: the same path, or a folder holding a path."""
    shared = set(first & second)
    folders_a = [p for p in first if p.endswith("/")]
    folders_b = [p for p in second if p.endswith("/")]
    for folder in folders_a:
        shared.update(p for p in second if p.startswith(folder))
    for folder in folders_b:
        shared.update(p for p in first if p.startswith(folder))
    return tuple(sorted(shared))


def overlaps(footprints: Sequence[Footprint]) -> tuple[Overlap, ...]:
    """Every pair that may not share a wave, in plan order.

    Paths are indexed once (a path → the stories naming it), so an epic of hundreds of
    stories costs its paths, not the square of its stories, except for folders and unknowns.
    """
    by_path: dict[str, list[int]] = {}
    folders: list[tuple[str, int]] = []
    for index, foot in enumerate(footprints):
        for path in foot.paths:
            by_path.setdefault(path, []).append(index)
            if path.endswith("/"):
                folders.append((path, index))
    shared: dict[tuple[int, int], set[str]] = {}
    for path, owners in by_path.items():
        for a_pos, a in enumerate(owners):
            for b in owners[a_pos + 1 :]:
                shared.setdefault((min(a, b), max(a, b)), set()).add(path)
    for folder, owner in folders:
        for path, owners in by_path.items():
            if path.startswith(folder):
                for other in owners:
                    if other != owner:
                        pair = (min(owner, other), max(owner, other))
                        shared.setdefault(pair, set()).add(path)
    unknown = [index for index, foot in enumerate(footprints) if not foot.known]
    for index in unknown:
        for other in range(len(footprints)):
            if other != index:
                shared.setdefault((min(index, other), max(index, other)), set())
    return tuple(
        Overlap(footprints[a].story, footprints[b].story, tuple(sorted(paths)))
        for (a, b), paths in sorted(shared.items())
    )


def waves(
    footprints: Sequence[Footprint], pairs: Iterable[Overlap]
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """The waves, in plan order, and one line per prerequisite passed over.

    Each story goes in the first wave after all its prerequisites' waves that holds no story
    it overlaps.
    """
    order = {foot.story: index for index, foot in enumerate(footprints)}
    keyed = {normalize_key(foot.story): foot.story for foot in footprints}
    conflicts: dict[str, set[str]] = {foot.story: set() for foot in footprints}
    for pair in pairs:
        conflicts[pair.first].add(pair.second)
        conflicts[pair.second].add(pair.first)
    placed: dict[str, int] = {}
    problems: list[str] = []
    members: list[set[str]] = []
    visiting: set[str] = set()

    def place(story: str) -> int:
        if story in placed:
            return placed[story]
        visiting.add(story)
        earliest = 0
        for wanted in footprints[order[story]].after:
            prerequisite = keyed.get(normalize_key(wanted))
            if prerequisite is None:
                problems.append(f"{story}: after {wanted}, which is not a story of this epic")
                continue
            if prerequisite in visiting:
                problems.append(f"{story}: after {wanted} makes a cycle; that order is ignored")
                continue
            earliest = max(earliest, place(prerequisite) + 1)
        wave = earliest
        while wave < len(members) and members[wave] & conflicts[story]:
            wave += 1
        if wave == len(members):
            members.append(set())
        members[wave].add(story)
        placed[story] = wave
        visiting.discard(story)
        return wave

    for foot in footprints:
        place(foot.story)
    shaped = tuple(tuple(sorted(wave, key=order.__getitem__)) for wave in members)
    return tuple(wave for wave in shaped if wave), tuple(problems)


def plan_overlap(
    workspace: Workspace,
    epic: str,
    stories: Sequence[Story],
    after: Mapping[str, Sequence[str]] | None = None,
) -> OverlapPlan:
    """The epic's footprints, overlapping pairs and waves, for ``stories`` in plan order.

    Args:
        after: each story's prerequisites by story key; default: the v7 plan's ``after``.
    """
    prerequisites = v7_after(workspace) if after is None else after
    changed: dict[str, list[str]] = {}
    for run in list_runs(workspace.root):
        result = run.run_result
        if result is not None and result.changed_paths:
            changed.setdefault(normalize_key(run.story), []).extend(result.changed_paths)
    footprints = tuple(
        footprint(workspace, story, changed, prerequisites.get(normalize_key(story.id), ()))
        for story in stories
    )
    pairs = overlaps(footprints)
    shaped, problems = waves(footprints, pairs)
    return OverlapPlan(epic, footprints, pairs, shaped, problems)


def v7_after(workspace: Workspace) -> dict[str, tuple[str, ...]]:
    """Each v7 story's prerequisites (its entry's ``after``), by story key, as story ids."""
    from ..plans.bmad_v7 import load_tree

    tree = load_tree(workspace)
    if tree is None:
        return {}
    found: dict[str, tuple[str, ...]] = {}
    for ticket in tree.tickets:
        if not ticket.after or ticket.epic_id == "backlog":
            continue
        story = f"{ticket.epic_id}-{ticket.entry_id}" if ticket.epic_id else ticket.entry_id
        named = []
        for item in ticket.after:
            epic, dot, entry = item.partition(".")
            if dot:
                named.append(f"{epic}-{entry}")
            else:
                named.append(f"{ticket.epic_id}-{item}" if ticket.epic_id else item)
        found[normalize_key(story)] = tuple(named)
    return found


def epic_overlap(workspace: Workspace, epic: str) -> OverlapPlan:
    """:func:`plan_overlap` for every story of ``epic`` in the catalog, in plan order.

    Raises:
        StoryNotFound: the epic has no stories (exit 2).
    """
    from ..errors import StoryNotFound
    from ..plans.catalog import load_catalog

    catalog = load_catalog(workspace)
    stories = catalog.in_group(epic)
    if not stories:
        groups = ", ".join(dict.fromkeys(s.group for s in catalog.stories)) or "none"
        raise StoryNotFound(f"no stories in epic '{epic}' (epics: {groups})")
    return plan_overlap(workspace, epic, stories)
