"""The story model shared by every source, the composer, the runner and the app."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import StoryNotFound
from .keys import normalize_key

STATUSES = ("backlog", "ready-for-dev", "in-progress", "review", "done")


@dataclass(frozen=True)
class Task:
    """One checkbox of a story's task list; ``children`` are its nested subtasks."""

    text: str
    done: bool
    children: tuple[Task, ...] = ()


@dataclass(frozen=True)
class Scenario:
    """A ``#### Scenario:`` of an OpenSpec requirement."""

    name: str
    text: str


@dataclass(frozen=True)
class Requirement:
    """A ``### Requirement:`` of an OpenSpec capability spec, with its scenarios."""

    capability: str
    name: str
    text: str
    scenarios: tuple[Scenario, ...] = ()


@dataclass(frozen=True)
class Story:
    """One unit of work an agent is given.

    Attributes:
        id: the id users type and records keep: ``1-2`` (BMAD), ``A-1``, ``add-auth:2``
            (OpenSpec ``<change>:<N>``).
        key: the canonical key used for file matching (``normalize_key``); for OpenSpec the
            change name and group number joined by ``-``.
        title: the story's title.
        status: one of :data:`STATUSES`.
        source: ``"bmad"`` or ``"openspec"``.
        group: the epic id (BMAD, e.g. ``1``) or the change name (OpenSpec).
        group_title: a readable title for the group.
        path: root-relative path of the story file (BMAD) or ``tasks.md`` (OpenSpec); None
            for a story known only from ``sprint-status.yaml``.
        tasks: the story's tasks, nested.
        files: root-relative paths of every file that belongs to the story itself (the story
            file; for OpenSpec also proposal, design and spec files).
        requirements: OpenSpec requirements and scenarios of the story's change.
        change_dir: OpenSpec change folder, root-relative.
    """

    id: str
    key: str
    title: str
    status: str
    source: str
    group: str
    group_title: str = ""
    path: str | None = None
    tasks: tuple[Task, ...] = ()
    files: tuple[str, ...] = ()
    requirements: tuple[Requirement, ...] = ()
    change_dir: str | None = None

    @property
    def record_path(self) -> str | None:
        """Where the phases append their records (kickoff insights, Dev Agent Record, review
        and failure records), root-relative.

        A BMAD story's records go to its story file. An OpenSpec story has no file of its own
        (its tasks are one group of the change's shared ``tasks.md``), so each story gets one:
        ``<change>/records/group-<N>.md``, kept with the change and archived with it, so no
        story's records pile up in a file other stories share.
        """
        if self.source == "openspec" and self.change_dir:
            number = self.id.rsplit(":", 1)[-1]
            return f"{self.change_dir.rstrip('/')}/records/group-{number}.md"
        return self.path

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of ``stories --json``."""
        group_key = "change" if self.source == "openspec" else "epic"
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "source": self.source,
            group_key: self.group,
            "path": self.path,
        }


@dataclass(frozen=True)
class SkippedFile:
    """A file discovery passed over, and why (``empty``, ``binary``, ``not-utf8``, …)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """The JSON shape used under ``"skipped"``."""
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class StoryCatalog:
    """Every story of a workspace, in display order, and the files passed over."""

    stories: tuple[Story, ...]
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def find(self, query: str) -> Story:
        """The story whose id is ``query`` (``1.2`` = ``1-2``, case-insensitive).

        Raises:
            StoryNotFound: no story, or more than one, matches.
        """
        wanted = query.strip().lower()
        exact = [s for s in self.stories if s.id.lower() == wanted]
        if len(exact) == 1:
            return exact[0]
        if ":" not in wanted:
            norm = normalize_key(wanted)
            by_key = [s for s in self.stories if s.source == "bmad" and s.key == norm]
            if len(by_key) == 1:
                return by_key[0]
        known = ", ".join(s.id for s in self.stories[:8])
        more = " …" if len(self.stories) > 8 else ""
        raise StoryNotFound(f"no story '{query}' (known: {known or 'none'}{more})")

    def in_group(self, group: str) -> tuple[Story, ...]:
        """Every story of one epic or change, in order."""
        return tuple(s for s in self.stories if s.group == group)
