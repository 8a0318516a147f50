"""The story model shared by every source, the composer, the runner and the app."""

from __future__ import annotations

import re
from dataclasses import field
from functools import lru_cache
from pathlib import Path

from ..errors import StoryNotFound
from ..lean_dataclass import dataclass

STATUSES = ("backlog", "ready-for-dev", "in-progress", "review", "done")

LAYOUTS = ("classic", "spec", "bmad-spec", "v7", "openspec")
"""How a story is kept on disk: a v6 story file (``classic``), a v6.3+ build spec
(``spec``), a bmad-spec folder (``bmad-spec``), a v7 initiative ticket (``v7``) or an
OpenSpec change (``openspec``)."""


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
class SecondClaim:
    """A file that claims a story another file already holds (two build specs of one key):
    listed with the story and explained, never injected as the story's own.

    Attributes:
        path: root-relative path of the file.
        reason: one readable line: which file the story uses instead, and why.
    """

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """The JSON shape used under ``"second_claims"``."""
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class Companion:
    """A file that belongs to one story by its name but is not the story itself: its
    context (``<story-file-stem>.context.xml``, ``…-context.md``), a run report, a
    validation, a code review, a change proposal (see
    :func:`~promptdeck.core.stories.companions.companion_kind`). Never the story's file,
    never where its status is read.

    Attributes:
        path: root-relative path of the file.
        kind: one of :data:`~promptdeck.core.stories.companions.COMPANION_KINDS`.
    """

    path: str
    kind: str

    def to_dict(self) -> dict[str, str]:
        """The JSON shape used under ``"companions"``."""
        return {"path": self.path, "kind": self.kind}


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
        layout: how the story is kept on disk, one of :data:`LAYOUTS`.
        status_source: root-relative ``path:line`` the status was read from ("" when the
            status is a default, e.g. a story file with no ``Status:`` line).
        status_drift: one readable line per source that disagrees with ``status``.
        status_known: False when ``status`` is a value outside every known enum, kept
            verbatim (never read as backlog or done).
        status_note: how the written status was read when it is not a story status itself
            (``plan status 'built' … shown as review``); empty otherwise.
        off_grammar: why the key is past BMAD's own key grammar (a three-level key, a
            letter epic); empty when BMAD reads it too.
        context_files: root-relative files a spec's ``context:`` list asks for.
        nested_keys: keys of known stories under this one (``10-1-5`` under ``10-1``) or
            ending with it (the prefixed track key ``petition-1-8`` for ``1-8``): a file
            whose name starts with one is that story's, never this one's.
        second_claims: files that claim this story too but lost to ``path`` (a second build
            spec of the same key): listed with the reason, never injected as its own.
        companions: files named for this story (its key leads the name, or the name is its
            story file's stem with ``.context.xml`` / ``-context.md``) that are not the story
            itself: its context, reports, validations, reviews, proposals — in path order.
        epic_tech_spec: root-relative ``tech-spec-epic-<N>.md`` of the story's epic (BMAD
            v5's per-epic technical specification), None when the epic has none.
        searched: root-relative folders searched for story files (each with its subfolders,
            down to :data:`~promptdeck.core.plans.story_scan.STORY_DEPTH` levels), so a
            story with no file can say where it was looked for; empty for other sources.
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
    layout: str = "classic"
    status_source: str = ""
    status_drift: tuple[str, ...] = ()
    status_known: bool = True
    off_grammar: str = ""
    context_files: tuple[str, ...] = ()
    nested_keys: tuple[str, ...] = ()
    status_note: str = ""
    second_claims: tuple[SecondClaim, ...] = ()
    companions: tuple[Companion, ...] = ()
    epic_tech_spec: str | None = None
    searched: tuple[str, ...] = ()

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
            if ":" not in self.id:
                # A change with no tasks yet is one story of its own.
                return f"{self.change_dir.rstrip('/')}/records/change.md"
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
            "layout": self.layout,
            "status_source": self.status_source,
            "status_known": self.status_known,
            "status_note": self.status_note,
            "status_drift": list(self.status_drift),
            "off_grammar": self.off_grammar,
            "files": list(self.files),
            "context_files": list(self.context_files),
            "second_claims": [claim.to_dict() for claim in self.second_claims],
            "companions": [companion.to_dict() for companion in self.companions],
            "epic_tech_spec": self.epic_tech_spec,
            "searched": list(self.searched),
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
class UnreadableEntry:
    """A plan entry or file that could not be read as a story, and why.

    Attributes:
        path: root-relative file holding the entry (``sprint-status.yaml``, a story file, a
            ``tickets.toml``).
        line: 1-based line of the entry in ``path``, None when the whole file is meant.
        reason: one readable line.
        key: the story key the entry names, when it names one.
    """

    path: str
    line: int | None
    reason: str
    key: str | None = None

    @property
    def where(self) -> str:
        """``path:line`` (or ``path`` alone when no line is known)."""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_dict(self) -> dict[str, object]:
        """The JSON shape used under ``"unreadable"``."""
        return {"path": self.path, "line": self.line, "reason": self.reason, "key": self.key}


@dataclass(frozen=True)
class StoryCatalog:
    """Every story of a workspace, in display order, and the files passed over.

    Attributes:
        stories: every story, once.
        skipped: files discovery passed over, with their reasons.
        warnings: loading notes, one line each.
        unreadable: plan entries and files that could not be read as stories.
        unattached: root-relative quick specs tied to no story.
    """

    stories: tuple[Story, ...]
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    unreadable: tuple[UnreadableEntry, ...] = ()
    unattached: tuple[str, ...] = ()

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
            from .keys import normalize_key  # the key grammar: only for a lookup by key

            norm = normalize_key(wanted)
            by_key = [s for s in self.stories if s.source == "bmad" and s.key == norm]
            if len(by_key) == 1:
                return by_key[0]
        raise StoryNotFound(self._not_found(query))

    def _not_found(self, query: str) -> str:
        """Why ``query`` names no story: the plan entry that could not be read, with its
        line, or the nearest known ids."""
        from .keys import normalize_key

        wanted = normalize_key(query)
        for entry in self.unreadable:
            named = entry.key == wanted or (
                entry.key is None and wanted and wanted in normalize_key(entry.reason)
            )
            if named:
                return f"story '{query}' is in {entry.where} but could not be read: {entry.reason}"
        ids = [s.id for s in self.stories]
        # A prefixed track's story ends with the number asked for (`2a-1` → `petition-2a-1`).
        tails = [s.id for s in self.stories if wanted and s.key.endswith(f"-{wanted}")]
        import difflib  # only for a story id that is not found

        close = difflib.get_close_matches(query.strip(), ids, n=3, cutoff=0.5)
        near = list(dict.fromkeys([*tails, *close]))[:3]
        if near:
            return f"no story '{query}' (nearest: {', '.join(near)})"
        known = ", ".join(ids[:8])
        more = " …" if len(ids) > 8 else ""
        return f"no story '{query}' (known: {known or 'none'}{more})"

    def in_group(self, group: str) -> tuple[Story, ...]:
        """Every story of one epic or change, in order."""
        return tuple(s for s in self.stories if s.group == group)


LEGACY_STATUSES = {"drafted": "ready-for-dev", "contexted": "in-progress"}
"""BMAD v6's older story statuses, read as its sprint planning reads them."""

PLAN_BOARD = {
    "draft": "backlog",
    "in-review": "review",
    "built": "review",
}
"""A v7 plan's statuses as BMAD's board shows them (``ready-for-dev``, ``in-progress`` and
``done`` are the story statuses themselves). ``blocked`` is not here: only a v7 plan's board
shows it as in-progress (:func:`plan_status`);
anywhere else BMAD shows the value as written, so it is kept verbatim and unknown."""


def plan_status(raw: str | None) -> tuple[str, bool]:
    """``(status, known)`` for a BMAD v7 plan's ``status`` on BMAD's board (see
    :func:`read_status`): no plan at all, a draft and a plan ready for dev are backlog, and
    ``dropped`` — work that will not be done — stays ``dropped``."""
    if raw is None:
        return "backlog", True
    word = raw.strip().lower()
    if word == "dropped":
        return "dropped", True
    if word == "ready-for-dev":
        # BMAD's board: a plan that is ready but not started is still backlog.
        return "backlog", True
    if word in _V7_BOARD:
        return _V7_BOARD[word], True
    reading = read_status(raw)
    return reading.status, reading.known


_V7_BOARD = {"blocked": "in-progress"}
"""A v7 plan's own words its board shows as a story status: a blocked plan sits in
in-progress there. Other plans keep ``blocked`` as written (see
:data:`PLAN_BOARD`)."""


V4_STATUSES = {
    "draft": "backlog",
    "approved": "ready-for-dev",
    "inprogress": "in-progress",
    "ready-for-review": "review",
    "complete": "done",
}
"""BMAD v4's story words (its template's ``Draft``, ``Approved``, ``InProgress``, ``Review``,
``Done``, and ``Ready for Review``, ``✅ COMPLETE (date)`` as real files decorate them), read
as the story statuses they stand for. Only ``Draft`` is not the same state in other words (a
story written but not yet approved): it is shown as backlog, with a note keeping the word."""

_SYNONYMS = {
    # Hand-written story files: the same states in other words.
    "todo": "backlog",
    "ready": "ready-for-dev",
    "ready-for-development": "ready-for-dev",
    "completed": "done",
}
# Emphasis and code marks around the word, a trailing remark in parentheses or after a dash
# with spaces ("done (reviewed)", "Done - merged"), and leading marks such as ✅.
_MARKS = re.compile(r"[*_`]+")
# One remark or more, as in `✅ COMPLETE (v6.1.0) - All 11 Tasks Complete`; a parenthesis
# left open where the read stops (:data:`STATUS_CHARS`) is a remark too.
_REMARK = re.compile(r"(?:\s*(?:\(.*?(?:\)|$)|\s[-–—]\s.*|<!--.*?(?:-->|$)))+\s*$")
_LEADING = re.compile(r"^[^A-Za-z0-9]+")
STATUS_CHARS = 200
"""The characters of a written status its word is read from: a status is a word or two and
perhaps a remark, and the patterns above take time growing with the square of a long run of
spaces (a hostile file's megabyte would take hours)."""
STATUS_LINE_MAX = 2000
"""The characters of a story file's line looked at for a ``Status:`` value (reading and
writing it back alike); a longer line is cut there, and is never rewritten."""


@dataclass(frozen=True)
class StatusReading:
    """What one written status means.

    Attributes:
        status: one of :data:`STATUSES`, or the written value itself when unknown.
        known: False when the value is outside every known vocabulary.
        note: how the value was read when it is not a story status itself
            (``legacy 'contexted' read as in-progress``); empty otherwise.
    """

    status: str
    known: bool
    note: str = ""


@lru_cache(maxsize=4096)
def read_status(raw: str) -> StatusReading:
    """Read one written status (a sprint-status value, a story file's ``Status:`` line, a
    spec's or plan's ``status:``).

    Remembered by value: a plan of thousands of stories writes a handful of statuses."""
    written = raw.strip()
    cleaned = _LEADING.sub("", _REMARK.sub("", _MARKS.sub("", written[:STATUS_CHARS])))
    word = re.sub(r"[^a-z]+", "-", cleaned.lower()).strip("-")
    if word in STATUSES:
        return StatusReading(word, True)
    if word in LEGACY_STATUSES:
        status = LEGACY_STATUSES[word]
        return StatusReading(status, True, f"legacy '{written}' read as {status}")
    if word in V4_STATUSES and (word != "draft" or cleaned[:1].isupper()):
        # v4's template writes `Draft`; a lower-case `draft` is a spec's or a v7 plan's.
        status = V4_STATUSES[word]
        note = f"v4 '{written}' shown as {status}" if word == "draft" else ""
        return StatusReading(status, True, note)
    if word in PLAN_BOARD:
        status = PLAN_BOARD[word]
        return StatusReading(status, True, f"plan status '{written}' shown as {status}")
    if word in _SYNONYMS:
        return StatusReading(_SYNONYMS[word], True)
    return StatusReading(written, False)


@dataclass(frozen=True)
class SourceResult:
    """What one story source found: its stories in display order, skipped files, warnings,
    entries it could not read and quick specs tied to no story."""

    stories: tuple[Story, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()
    unreadable: tuple[UnreadableEntry, ...] = ()
    unattached: tuple[str, ...] = ()


def source_line(path: str, line: int) -> str:
    """Where a plan says something, as a story's ``status_source`` shows it: ``path:line``,
    or the path alone when the line is unknown (0)."""
    return f"{path}:{line}" if line else path


def relpath(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` with forward slashes, without resolving symlinks.

    Paths outside ``root`` (a configured folder such as ``../shared``) stay absolute.
    """
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
