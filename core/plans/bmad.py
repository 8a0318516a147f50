"""The BMAD story source: ``sprint-status.yaml`` and the story files where the project keeps
them.

Stories come from two places that usually agree:

* ``<paths_artifacts>/sprint-status.yaml`` — its ``development_status:`` mapping
  (``1-2-user-registration: done``; ``epic-1: …`` and ``epic-1-retrospective: …`` are not
  stories), read by the strict line parser of :mod:`.sprint_status`. Keys are read by BMAD's
  own grammar first and leniently past it (:func:`~promptdeck.core.stories.keys.read_entry_keys`);
  an entry that names no story is an :class:`~promptdeck.core.stories.model.UnreadableEntry` with
  its line, never silently dropped.
* Markdown story files whose first heading is ``# Story <key>: <title>`` (or named after a
  sprint-status entry: exactly, or starting with its key when the story has no other file),
  in the artifacts folder and the folder ``story_location`` names, each with its subfolders
  down to :data:`STORY_DEPTH` levels (``stories/``, ``epic19/stories/``; ``{project-root}``
  resolved inside the project; a location outside it, missing, or not a folder is one
  unreadable entry and is never read).
* Companions (:mod:`promptdeck.core.stories.companions`): a story's context (``<stem>.context.xml``,
  ``<stem>-context.md``), reports, validations, reviews and proposals named for it. They may
  open like the story, but they are never its file and never give its status; they are
  listed on the story (``Story.companions``) when their name starts with its key. A file
  whose name only ends like a context and that is headed as its own story, with no other
  file for that story (v4's ``2.4.conversation-context.md``, ``# Story 2.4: …``), is the
  story's own file; one whose name is in a report's words loses the story to one whose name
  is not (:func:`_name_rank`).

A story found in both is one story; where their statuses disagree, ``sprint-status.yaml``
wins and the story says where its status came from and that the file drifts (see
:func:`_merge`). Statuses are read as written (:func:`..model.read_status`): an unknown one
is kept verbatim and marked, never read as backlog or done.

This module finds the files and assigns them to stories; reading one story file is
:mod:`.bmad_story_file`'s job; the epics' titles come last in this module.
"""

from __future__ import annotations

import bisect
import os
import re
import stat as stat_module
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from ..project.bmad_folders import split_where
from ..project.listing import folder_names
from ..project.textfiles import DEFAULT_READ_LIMIT, TextProblem, printable_name, read_text_file
from ..project.workspace import Workspace
from ..stories.companions import companion_kind, context_stem, says_context, sibling_companion
from ..stories.keys import (
    epic_tracks,
    grammar_note,
    is_story_entry,
    leading_key,
    leading_key_category,
    name_matches_key,
    natural_key,
    normalize_key,
    number_text,
    read_entry_keys,
)
from ..stories.model import (
    Companion,
    SecondClaim,
    SkippedFile,
    SourceResult,
    StatusReading,
    Story,
    UnreadableEntry,
    read_status,
    relpath,
)
from .bmad_story_file import (
    DEFAULT_FILE_STATUS,
    StoryFile,
    named_story_file,
    read_story_file,
    v4_named_story_file,
)
from .markdown import iter_headings
from .sprint_status import (
    SPRINT_STATUS_NAME,
    SprintStatusError,
    parse_plan_entries,
    top_level_value,
)

_STORY_NAME_HINT = re.compile(
    r"(?<![a-z0-9])(?:\d+[a-z]*|[a-z]+)[-._]\d{1,4}[a-z]*(?![a-z0-9])", re.IGNORECASE
)
"""A story file's name holds a story key (``1-2``, ``a.3``, ``auth_12``, ``1bis-3bis``) on key
boundaries:
names without one (``notes.md``, ``standup-000123.md``) are never opened by discovery."""
_MARKDOWN_ENDINGS = (".md", ".MD", ".Md", ".mD")
"""Every spelling of ``.md``: ``name.endswith`` of these is ``name.lower().endswith(".md")``
(no other character lower-cases to ``.``, ``m`` or ``d``), without a lower-cased copy."""
_KEY_NUMBER = re.compile(r"[-._][0-9]{1,4}+(?![0-9])")
"""What every ASCII name :data:`_STORY_NAME_HINT` finds holds: a separator, then a story
number of one to four digits. One cheap search, where the hint's backtracking over each word
costs microseconds a name (non-ASCII names, whose digits and letters are Unicode's, skip it)."""
_PLACEHOLDER = re.compile(r"\{[^}]*\}")


def _slug_title(slug: str | None, story_id: str) -> str:
    if not slug:
        return f"Story {story_id}"
    words = slug.replace("_", "-").split("-")
    return " ".join(words).capitalize()


@dataclass(frozen=True)
class _Tracked:
    """One story entry of ``sprint-status.yaml``."""

    id: str
    name: str
    slug: str | None
    raw_status: str
    reading: StatusReading
    line: int
    off_grammar: str
    epic: str = ""


@dataclass
class _SprintPlan:
    """What ``sprint-status.yaml`` says: its story entries by key, the entries it could not
    read, its epic titles and its ``story_location``."""

    rel: str
    tracked: dict[str, _Tracked] = field(default_factory=dict)
    unreadable: list[UnreadableEntry] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    story_location: tuple[str, int] | None = None


_LISTED_NOTE = (
    "listed as a story under 'epics:' in sprint-status.yaml: BMAD's workflows read only its"
    " development_status mapping"
)


def _read_sprint_status(
    root: Path, path: Path, skipped: list[SkippedFile], limit: int = DEFAULT_READ_LIMIT
) -> _SprintPlan:
    plan = _SprintPlan(relpath(root, path))
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            skipped.append(SkippedFile(plan.rel, str(text)))
            plan.unreadable.append(UnreadableEntry(plan.rel, None, str(text)))
        return plan
    try:
        entries, listed = parse_plan_entries(text)
    except SprintStatusError as exc:
        skipped.append(SkippedFile(plan.rel, f"malformed: {exc}"))
        plan.unreadable.append(UnreadableEntry(plan.rel, exc.line or None, f"malformed: {exc}"))
        return plan
    plan.titles = sprint_epic_titles(text)
    plan.story_location = top_level_value(text, "story_location")
    stories = [entry for entry in entries if is_story_entry(entry.name)]
    tracks = epic_tracks([entry.name for entry in entries])
    keys = read_entry_keys([e.name for e in stories], tracks)
    for entry, key in zip(stories, keys, strict=True):
        if key is None:
            plan.unreadable.append(
                UnreadableEntry(
                    plan.rel,
                    entry.line,
                    f"'{entry.name}' is not a story key (BMAD's stories are "
                    "<epic>-<story>-<slug>, e.g. 1-2-user-login)",
                )
            )
            continue
        first = plan.tracked.get(key.key)
        if first is not None:
            plan.unreadable.append(
                UnreadableEntry(
                    plan.rel,
                    entry.line,
                    f"'{entry.name}' is story {first.id} again (first on line {first.line}, "
                    f"'{first.name}'); the first is used",
                    key.key,
                )
            )
            continue
        plan.tracked[key.key] = _Tracked(
            key.id,
            entry.name,
            key.slug,
            entry.value,
            read_status(entry.value),
            entry.line,
            _LISTED_NOTE if listed else key.off_grammar,
            key.epic,
        )
    return plan


def _name_rank(name: str, key: str, entries_by_key: dict[str, str]) -> tuple[int, str]:
    """How well a file name says it is story ``key``'s file (lower is better), and why."""
    stem = name[:-3] if name.lower().endswith(".md") else name
    if stem.lower() == entries_by_key.get(key, "\0").lower():
        return 0, "its name is the sprint-status entry's"
    # A name in a companion's words (`1-6-code-review-fixes-report.md`) may head itself like
    # the story; beside a file whose name is not, it never wins the story.
    worded = companion_kind(name) is not None
    if leading_key(name, entries_by_key.keys()) == key:
        return (2 if worded else 1), "its name starts with the story's key"
    if name_matches_key(name, key):
        return 3, "its name holds the story's key"
    return 4, "it comes first by name"


def _may_be_story_file(name: str) -> bool:
    """Whether discovery opens ``name`` at all: a Markdown name holding a story key whose
    shape can be a story file's.

    ``22-3-…-agent-discovery.md`` starts with a story key and may be that story's own file
    (its heading says), while ``sprint-1-2-discovery.md`` and ``tech-spec-…`` are not story
    files.
    """
    lower = name.lower()
    if not lower.endswith(".md") or _STORY_NAME_HINT.search(name) is None:
        return False
    lead, category = leading_key_category(lower)
    if lower.startswith(("sprint-", "tech-spec", "tech_spec", "techspec")) and (
        lead is None or category != "story"
    ):
        return False
    return not (lead is None and ("discovery" in lower or "tech-spec" in lower))


def story_file_names(names: Iterable[str]) -> list[str]:
    """The names discovery opens (:func:`_may_be_story_file`), in the order given.

    Two necessary tests come first, each far cheaper than the exact one: an artifacts
    folder holds tens of thousands of logs, records and notes, and few of them are Markdown
    names holding a story number.
    """
    return [
        name
        for name in names
        if name.endswith(_MARKDOWN_ENDINGS)
        and (not name.isascii() or _KEY_NUMBER.search(name) is not None)
        and _may_be_story_file(name)
    ]


STORY_DEPTH = 4
"""How many folder levels below the artifacts folder (and ``story_location``) story files
are looked for: ``epic19/stories/19-1-….md`` is two."""
FOLDER_LIMIT = 2000
"""Most folders one search for story files lists; past it, one line says the search
stopped."""
_SKIPPED_FOLDERS = frozenset({"node_modules", "__pycache__"})
# Names ending like a file are never stat-ed as folders: an artifacts folder holds thousands
# of them. Any other name (`epic19`, `stories`, `v1.2`) is looked at.
_FILE_SUFFIXES = tuple(
    f".{ending}"
    for word in (
        "md markdown txt yaml yml json xml toml csv log html htm png jpg jpeg gif svg pdf",
        "py js ts sh zip gz",
    )
    for lower in word.split()
    for ending in (lower, lower.upper())
)


@dataclass
class _Folders:
    """Where story files are looked for, in search order, and what the search says."""

    folders: list[Path]
    roots: tuple[str, ...]
    problem: UnreadableEntry | None = None
    note: str | None = None


def _subfolder_names(names: list[str]) -> list[str]:
    """The names of a listing that may be folders to search, sorted."""
    # One C-level `endswith` per name: the artifacts folder lists tens of thousands.
    found = [name for name in names if not name.endswith(_FILE_SUFFIXES)]
    return sorted(
        name for name in found if not name.startswith(".") and name not in _SKIPPED_FOLDERS
    )


def _story_folders(
    workspace: Workspace, artifacts: Path, names: list[str], plan: _SprintPlan
) -> _Folders:
    """Where story files are looked for: the artifacts folder and the ``story_location``
    folder, each with its subfolders down to :data:`STORY_DEPTH` levels (``epic19/``,
    ``epic19/stories/``), breadth first and by name, each folder once.

    Hidden folders and ``node_modules`` are passed over; a symlinked folder is followed only
    when it stays inside the project (and is searched once, however many links reach it).
    Past :data:`FOLDER_LIMIT` folders the search stops, and says so.
    """
    roots = [artifacts]
    problem: UnreadableEntry | None = None
    if plan.story_location is not None:
        value, line = plan.story_location
        located, why = _resolve_location(workspace, value)
        if located is None:
            problem = UnreadableEntry(plan.rel, line, f"story_location '{value}' {why}")
        else:
            roots.append(located)
    folders: list[Path] = []
    # Real paths (`realpath` never raises, even on a loop): a folder linked twice is searched
    # once.
    seen: set[str] = set()
    searched: list[str] = []
    note: str | None = None
    for root in roots:
        if os.path.realpath(root) in seen:
            continue
        searched.append(relpath(workspace.root, root))
        level: list[Path] = [root]
        for depth in range(STORY_DEPTH + 1):
            below: list[Path] = []
            for folder in level:
                real = os.path.realpath(folder)
                if real in seen:
                    continue
                if len(seen) >= FOLDER_LIMIT:
                    note = (
                        f"story files: the search stopped after {FOLDER_LIMIT} folders; "
                        f"{relpath(workspace.root, folder)} and the folders after it were not "
                        "searched"
                    )
                    break
                seen.add(real)
                folders.append(folder)
                if depth == STORY_DEPTH:
                    continue
                listed = names if folder == artifacts else folder_names(folder)
                for name in _subfolder_names(listed or []):
                    path = folder / name
                    if os.path.isdir(path) and workspace.contains(path):
                        below.append(path)
            if note is not None:
                break
            level = below
        if note is not None:
            break
    return _Folders(folders, tuple(searched), problem, note)


def _resolve_location(workspace: Workspace, value: str) -> tuple[Path | None, str]:
    """The folder ``story_location`` names, inside the project, or None and why not."""
    text = value.replace("{project-root}", str(workspace.root)).replace(
        "{project_root}", str(workspace.root)
    )
    unknown = _PLACEHOLDER.search(text)
    if unknown is not None:
        return None, f"holds the placeholder {unknown.group(0)}, which promptdeck cannot fill"
    path = Path(text)
    if not path.is_absolute():
        path = workspace.root / path
    if not workspace.contains(path):
        artifacts = workspace.config.paths_artifacts.strip("/")
        if path.as_posix().rstrip("/").endswith("/" + artifacts):
            # A path written on another machine (a dev container's /workspaces/…) whose tail
            # is this project's artifacts folder: that folder is read anyway, never the path.
            return None, (
                f"points outside the project; not read (its tail is this project's {artifacts},"
                " which is read)"
            )
        return None, "points outside the project; not read"
    if not path.exists():
        return None, "does not exist"
    if not path.is_dir():
        return None, "is not a folder (a file, device or FIFO); not read"
    return path, ""


@dataclass
class _Scan:
    """The story files found, by key, the files that claimed a story another file won, and
    the companion files met on the way (root-relative path, kind)."""

    files: dict[str, StoryFile] = field(default_factory=dict)
    losers: list[UnreadableEntry] = field(default_factory=list)
    companions: list[Companion] = field(default_factory=list)
    context_named: list[StoryFile] = field(default_factory=list)
    """Files named like a context but headed as the story their name holds (see
    :func:`_story_about_a_context`): settled once every folder is scanned."""
    name_only: list[StoryFile] = field(default_factory=list)
    """Files with no story heading whose name starts with an entry's key but is not the
    entry's name (``1-2-notes.md``): the story's file only when it has no other, settled once
    every folder is scanned."""

    def settle_context_named(self, skipped: list[SkippedFile], entries: dict[str, str]) -> None:
        """Each file of :attr:`context_named` is its story's own file when no other file is
        (``# Story 2.4: Conversation context`` in ``2.4.conversation-context.md``), else
        that story's context."""
        for found in self.context_named:
            if found.key in self.files:
                self.companions.append(Companion(found.path, "context"))
            else:
                _claim(self, found, skipped, entries)

    def settle_name_only(self, skipped: list[SkippedFile]) -> None:
        """Each file of :attr:`name_only` is its story's own file when no other file is,
        else one skipped line naming the file the story has."""
        for found in self.name_only:
            winner = self.files.get(found.key)
            if winner is None:
                self.files[found.key] = found
                continue
            skipped.append(
                SkippedFile(
                    found.path,
                    f"no-story-heading: named for story {_dashed(found.id)}, whose file is "
                    f"{winner.path}; not read as a story",
                )
            )


def _scan_folder(
    workspace: Workspace,
    folder: Path,
    scan: _Scan,
    skipped: list[SkippedFile],
    only_key: str | None,
    entries_by_key: dict[str, str],
    names: list[str] | None = None,
) -> None:
    """Read the story files of one folder into ``scan``.

    A file is a story's file when its first heading says ``# Story <key>: …``; a file named
    ``<key>-<slug>.md`` after a sprint-status entry (``entries_by_key``: key → entry name)
    is that story's file even when its heading has another shape, and so is one whose name
    only starts with the entry's key, when the story has no other file. ``X-report.md``
    beside ``X.md`` is never a story's file (:func:`..companions.sibling_companion`).
    """
    if names is None:
        names = folder_names(folder)
    if names is None:
        return
    # Names that cannot be stories are never opened (nor sorted): this keeps discovery fast
    # in artifact folders holding thousands of logs and discovery notes. Case-insensitive
    # order, then exact: two stable sorts with C-level keys.
    kept = sorted(sorted(story_file_names(names)), key=str.lower)
    stems = {name[:-3].lower() for name in kept}
    # Plain strings rather than Path objects per entry: this loop sees every story file.
    base = os.fspath(folder)
    prefix = relpath(workspace.root, folder) + "/"
    known = entries_by_key.keys()
    limit = workspace.config.read_max_bytes
    # BMAD v5's story context (`<story-file-stem>.context.xml`) is never opened here: its
    # name says what it is, and whose.
    xml = (n for n in names if n.endswith((".xml", ".XML", ".Xml")))
    for name in sorted(n for n in xml if n.lower().endswith(_CONTEXT_XML)):
        rel = prefix + name
        if (only_key is None or name_matches_key(name, only_key)) and printable_name(rel) == rel:
            scan.companions.append(Companion(rel, "context"))
    for name in kept:
        if only_key is not None and not name_matches_key(name, only_key):
            continue
        rel = prefix + name
        if printable_name(rel) != rel:
            skipped.append(SkippedFile(printable_name(rel), "not-utf8: the file name"))
            continue
        # `X-report.md` beside `X.md` is X's report, however it is headed; a name that is
        # exactly a sprint-status entry's is the story's whatever its words.
        sibling = sibling_companion(name, stems)
        if sibling is not None and not any(
            name[:-3].lower() == entry.lower() for entry in entries_by_key.values()
        ):
            scan.companions.append(Companion(rel, sibling))
            continue
        path = os.path.join(base, name)
        # One `lstat` tells a symlink, a regular file and anything else apart. A symlink is
        # judged by the guarded reader itself (a loop, a device, a FIFO, a target outside the
        # project: each skipped with its reason, none read).
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = 0
        link = stat_module.S_ISLNK(mode)
        if not link and not stat_module.S_ISREG(mode):
            if not stat_module.S_ISDIR(mode):
                # A FIFO, device or socket named like a story (or gone): never opened.
                skipped.append(SkippedFile(rel, "unreadable: not a regular file"))
            continue
        found = read_story_file(path, rel, root=workspace.root, limit=limit, listed=not link)
        if found is None:
            # No story heading and no story-like name: the file of the entry whose key its
            # name starts with (`TD-15b-1-….md`, `debug-2-….md`), else a companion only by
            # its name's words.
            lead = leading_key(name.lower(), known)
            exact = name[:-3].lower() == entries_by_key.get(lead or "", "\0").lower()
            # Named exactly after its entry, it is the story's whatever its words (see
            # `_is_companion`): `TD-15b-37-…-validation-gaps.md`.
            kind = None if exact else companion_kind(name)
            named = None
            if kind is None and lead in known:
                named = named_story_file(path, rel, lead, entries_by_key, workspace.root, limit)
                if named is not None and not exact:
                    kind = companion_kind(name, named.heading)
            if kind is not None:
                scan.companions.append(Companion(rel, kind))
            elif named is not None:
                _claim_named(scan, named, name, skipped, entries_by_key)
            continue
        lead = leading_key(name.lower(), known)
        if _is_companion(name, found, lead, entries_by_key):
            kind = _companion_of(name, found)
            if (
                kind == "context"
                and isinstance(found, StoryFile)
                and _story_about_a_context(name, found, lead, entries_by_key)
            ):
                scan.context_named.append(found)
                continue
            # A context, report, review … never claims the story, nor gives its status.
            scan.companions.append(Companion(rel, kind))
            continue
        if isinstance(found, SkippedFile):
            named = named_story_file(path, rel, lead, entries_by_key, workspace.root, limit)
            if named is None and not entries_by_key and found.reason.startswith("no-story"):
                # No sprint-status (BMAD v4: the story files are the plan): a v4 name says
                # which story a file is when its heading names no key.
                named = v4_named_story_file(path, rel, workspace.root, limit)
            if named is None:
                skipped.append(found)
            else:
                _claim_named(scan, named, name, skipped, entries_by_key)
            continue
        if lead in known and found.key != lead and not found.key.startswith(f"{lead}-"):
            # The name carries another known story's key (`petition-1-8-x.md` headed
            # `# Story 1.8: …`, a track numbering its stories its own way): the file is that
            # story's, never the story its heading's bare number names.
            found = replace(found, id=lead, key=lead)
        _claim(scan, found, skipped, entries_by_key)


_CONTEXT_XML = "context.xml"


def _companion_of(name: str, found: StoryFile | SkippedFile) -> str:
    kind = companion_kind(name, found.heading if isinstance(found, StoryFile) else None)
    return kind or "context"


def _is_companion(
    name: str,
    found: StoryFile | SkippedFile,
    lead: str | None,
    entries_by_key: dict[str, str],
) -> bool:
    """Whether the candidate ``name`` is a companion rather than a story file.

    A file named exactly after its sprint-status entry is that story's (BMAD names it so),
    whatever its words; a file that could not be read is reported as it is today; anything
    else is a companion when its name or heading says so (:func:`companion_kind`)."""
    if lead is not None and name[:-3].lower() == entries_by_key.get(lead, "\0").lower():
        return False
    if isinstance(found, SkippedFile) and not found.reason.startswith("no-story-heading"):
        return False
    heading = found.heading if isinstance(found, StoryFile) else None
    return companion_kind(name, heading) is not None


def _story_about_a_context(
    name: str, found: StoryFile, lead: str | None, entries_by_key: dict[str, str]
) -> bool:
    """Whether a file named like a story's context (``…-context.md``) may be a story about a
    context instead: headed as the story its name holds, with a heading that does not call
    it a context, and not named ``<entry>-context.md`` after that story's sprint-status
    entry (BMAD's own name for the context)."""
    if says_context(found.heading) or not name_matches_key(name, found.key):
        return False
    stem = context_stem(name)
    return stem is None or stem.lower() != entries_by_key.get(lead or "", "").lower()


def _companions_of(
    companions: list[Companion], files: dict[str, StoryFile], every_key: set[str]
) -> dict[str, tuple[Companion, ...]]:
    """Each story's companions: those named ``<story-file-stem>.context.xml`` or
    ``<stem>-context.md`` after its file, and those whose name starts with its key. A
    companion that names no story by its start (an epic retrospective, a run report with the
    key inside its name) is no story's."""
    by_stem = {found.path.rsplit("/", 1)[-1][:-3].lower(): key for key, found in files.items()}
    owned: dict[str, list[Companion]] = {}
    for companion in sorted(companions, key=lambda c: c.path):
        name = companion.path.rsplit("/", 1)[-1]
        lower = name.lower()
        stem = context_stem(lower)
        key = by_stem.get(stem) if stem is not None else None
        if key is None:
            key = leading_key(lower, every_key)
        if key is not None and key in every_key:
            owned.setdefault(key, []).append(companion)
    return {key: tuple(found) for key, found in owned.items()}


def _claim_named(
    scan: _Scan,
    found: StoryFile,
    name: str,
    skipped: list[SkippedFile],
    entries_by_key: dict[str, str],
) -> None:
    """Claim a story for a file known by its name alone (no ``# Story <key>:`` heading): at
    once when it is named exactly after the entry, as BMAD names story files; else only when
    the story has no other file once every folder is scanned (:meth:`_Scan.settle_name_only`)."""
    if name[:-3].lower() == entries_by_key.get(found.key, "\0").lower():
        _claim(scan, found, skipped, entries_by_key)
    else:
        scan.name_only.append(found)


def _claim(
    scan: _Scan, found: StoryFile, skipped: list[SkippedFile], entries_by_key: dict[str, str]
) -> None:
    """Record ``found`` as its story's file, or, when another file already claims the story,
    keep the better-named one and say why the other was passed over."""
    first = scan.files.get(found.key)
    if first is None:
        scan.files[found.key] = found
        return
    # Two files claim one key: the better-named one wins (see `_name_rank`), then the first
    # by folder and name. The narrowed one-story lookup scans exactly those names, so both
    # lookups always pick the same file.
    new_rank, new_why = _name_rank(Path(found.path).name, found.key, entries_by_key)
    old_rank, old_why = _name_rank(Path(first.path).name, found.key, entries_by_key)
    if new_rank < old_rank:
        winner, loser, why = found, first, new_why
    elif new_rank > old_rank:
        winner, loser, why = first, found, old_why
    else:
        winner, loser = first, found
        why = f"both names are as good; {winner.path} comes first by folder and name"
    scan.files[found.key] = winner
    story_id = _dashed(found.id)
    skipped.append(SkippedFile(loser.path, f"duplicate: story {story_id} is also {winner.path}"))
    scan.losers.append(
        UnreadableEntry(
            loser.path,
            None,
            f"also claims story {story_id}; {winner.path} is used ({why})",
            found.key,
        )
    )


def _key_note(key: str, story_id: str) -> str:
    """Why a key known only from a story file is past BMAD's grammar ("" when it is not),
    saying what BMAD's grammar does with an entry of that key."""
    parts = key.split("-")
    words = 0
    while words < len(parts) and not parts[words][:1].isdigit():
        words += 1
    if words > 1 or (words == 1 and len(parts[0]) > 3):
        return grammar_note(key, f"{key}-x", f"prefixed track key {story_id}")
    if words == 0 and len(parts) > 2 and parts[1].isalpha() and len(parts[1]) > 1:
        return grammar_note(key, f"{key}-x", f"track key {story_id}")
    if not parts[0].isdigit():
        return f"letter epic '{parts[0]}': BMAD's grammar wants an epic number"
    if len(parts) > 2:
        return grammar_note(key, f"{key}-x", f"three-level key {key}")
    if not re.fullmatch(r"\d+[a-z]?", parts[-1]):
        return f"story number '{parts[-1]}': BMAD's grammar wants a number and at most one letter"
    return ""


def _with_claims(story: Story, claims: list[SecondClaim] | tuple[()]) -> Story:
    """``story`` with the files that lost their claim on it, after any it already names."""
    if not claims:
        return story
    return replace(story, second_claims=(*story.second_claims, *claims))


def _merge(
    key: str,
    tracked: _Tracked | None,
    story_file: StoryFile | None,
    epic_titles: dict[str, str],
    plan_rel: str,
    nested: tuple[str, ...],
    companions: tuple[Companion, ...] = (),
    searched: tuple[str, ...] = (),
) -> Story:
    file_reading = None
    file_where = ""
    if story_file is not None and story_file.raw_status is not None:
        file_reading = read_status(story_file.raw_status)
        file_where = story_file.path + (
            f":{story_file.status_line}" if story_file.status_line else ""
        )
    drift: tuple[str, ...] = ()
    # sprint-status.yaml wins a disagreement: it is the file BMAD's workflows (sprint
    # planning, dev-story, code-review) read to pick the next story and update at every
    # transition, while a story file's Status line is prose an agent may leave behind.
    if tracked is not None:
        reading = tracked.reading
        source = f"{plan_rel}:{tracked.line}"
        if (
            file_reading is not None
            and story_file is not None
            and (file_reading.status != reading.status)
        ):
            noted = f" ({story_file.status_note})" if story_file.status_note else ""
            drift = (
                f"{file_where} says '{story_file.raw_status}'{noted}; "
                f"{source} says '{tracked.raw_status}'",
            )
    elif file_reading is not None:
        reading, source = file_reading, file_where
    else:
        # BMAD's sprint planning treats "the story file exists" as ready for development.
        reading, source = StatusReading(DEFAULT_FILE_STATUS, True), ""
    # The sprint-status spelling is the id: it is BMAD's tracking key (`1-2`), the one its
    # workflows and commit messages use; a story only on file keeps its heading's spelling,
    # in the same dashed style (`10.1.5` → `10-1-5`), so one id style shows everywhere.
    story_id = tracked.id if tracked is not None else _dashed(story_file.id) if story_file else key
    if story_file is not None and story_file.title:
        title = story_file.title
    else:
        title = _slug_title(tracked.slug if tracked else None, story_id)
    epic = tracked.epic if tracked is not None and tracked.epic else epic_of(key)
    return Story(
        id=story_id,
        key=key,
        title=title,
        status=reading.status,
        source="bmad",
        group=epic,
        group_title=epic_titles.get(epic, ""),
        path=story_file.path if story_file else None,
        tasks=story_file.tasks if story_file else (),
        files=(story_file.path,) if story_file else (),
        layout="classic",
        status_source=source,
        status_drift=drift,
        status_known=reading.known,
        status_note=reading.note,
        off_grammar=tracked.off_grammar if tracked is not None else _key_note(key, story_id),
        nested_keys=nested,
        companions=companions,
        searched=searched,
    )


def _dashed(story_id: str) -> str:
    """A heading's id in the sprint-status style: ``10.1.5`` → ``10-1-5``, ``A.1`` → ``A-1``."""
    return re.sub(r"[._\s]+", "-", story_id.strip())


def _rekey_entries(plan: _SprintPlan, files: dict[str, StoryFile]) -> None:
    """An entry named exactly like a story file whose heading gives a deeper key
    (``10-5-a-nav`` alone is story 10-5 by BMAD's grammar; its file says ``Story 10.5.a``)
    is that deeper story: the file's heading settles what the lone entry left open.

    A heading whose key is an entry's whole name (``# Story 7-1-arkit-video: …`` for entry
    ``7-1-arkit-video``) names that entry's story, not a deeper one: the file moves to the
    entry's key. A file with no entry headed with a lone letter as a third level but named
    with it joined (``# Story 105.3.b`` in ``story-105-3b-fix.md``) is the split story
    ``105-3b`` its name writes in BMAD's form (``2-6a``)."""
    by_name = {t.name.lower(): key for key, t in plan.tracked.items()}
    whole = {normalize_key(t.name): key for key, t in plan.tracked.items()}
    for key, story_file in list(files.items()):
        if key in plan.tracked:
            continue
        moved = whole.get(key) or _split_letter_key(key, story_file)
        if moved is not None and moved != key:
            if moved not in files:
                story_id = plan.tracked[moved].id if moved in plan.tracked else moved
                files[moved] = replace(story_file, id=story_id, key=moved)
                del files[key]
            continue
        stem = story_file.path.rsplit("/", 1)[-1][:-3].lower()
        old = by_name.get(stem)
        if old is None or old in files or not key.startswith(old + "-"):
            continue
        entry = plan.tracked.pop(old)
        note = grammar_note(
            key, entry.name, f"three-level key {key} (from {story_file.path}'s heading)"
        )
        plan.tracked[key] = _Tracked(
            _dashed(story_file.id),
            entry.name,
            entry.slug,
            entry.raw_status,
            entry.reading,
            entry.line,
            note,
        )


def _split_letter_key(key: str, story_file: StoryFile) -> str | None:
    """The split-story key (``105-3b``) a story file's name starts with when its heading
    writes the letter as a level of its own (``105-3-b``); None otherwise."""
    parts = key.split("-")
    if len(parts) < 3 or len(parts[-1]) != 1 or not parts[-1].isalpha():
        return None
    if not parts[-2].isdigit():
        return None
    joined = "-".join([*parts[:-2], parts[-2] + parts[-1]])
    name = story_file.path.rsplit("/", 1)[-1].lower()
    return joined if leading_key(name, (joined,)) == joined else None


def _nested_keys(every_key: set[str], keys: list[str]) -> dict[str, tuple[str, ...]]:
    """For each of ``keys``, the known keys under it (``10-1-5`` under ``10-1``) and the
    prefixed track keys that end with it (``petition-1-8`` for ``1-8``): a file named by one
    of them is that story's, never this one's.

    Keys under one key are neighbours in text order, so one sort and a binary search per
    key find them: a plan of thousands of stories is not compared pair by pair.
    """
    ordered = sorted(every_key)
    tracked_tails: dict[str, list[str]] = {}
    for known in every_key:
        parts = known.split("-")
        for start in range(1, len(parts) - 1):
            if parts[start - 1][:1].isdigit():
                break  # only the words of a track come before the tail
            tracked_tails.setdefault("-".join(parts[start:]), []).append(known)
    found: dict[str, tuple[str, ...]] = {}
    for key in keys:
        prefix = key + "-"
        start = bisect.bisect_left(ordered, prefix)
        end = bisect.bisect_left(ordered, key + ".")  # "." sorts right after "-"
        under = {*ordered[start:end], *tracked_tails.get(key, ())}
        found[key] = tuple(sorted(under, key=natural_key))
    return found


def load_stories(workspace: Workspace, only_key: str | None = None) -> SourceResult:
    """Every BMAD story of the workspace, in natural key order, with skipped files and the
    entries that could not be read.

    Args:
        workspace: the workspace; ``paths_artifacts`` and ``paths_planning`` name the folders.
        only_key: narrow the scan to story files whose names hold this normalized key (and
            the sprint-status entry of that key): a fast lookup of one story.
    """
    config = workspace.config
    artifacts = workspace.root / config.paths_artifacts
    skipped: list[SkippedFile] = []
    warnings: list[str] = []
    if not workspace.contains(artifacts):
        # A symlinked or configured folder outside the project is never read: its text would
        # reach the prompt although the user never saw it in their project.
        rel = relpath(workspace.root, artifacts)
        if artifacts.exists():
            skipped.append(SkippedFile(rel, "outside-project: the artifacts folder; not read"))
            outside = UnreadableEntry(rel, None, "the artifacts folder is outside the project")
            return SourceResult(skipped=tuple(skipped), unreadable=(outside,))
        return SourceResult(skipped=tuple(skipped))
    limit = config.read_max_bytes
    plan = _read_sprint_status(workspace.root, artifacts / SPRINT_STATUS_NAME, skipped, limit)
    entries = {key: t.name for key, t in plan.tracked.items()}
    # One listing of the artifacts folder serves both the search for subfolders and its scan.
    artifact_names = folder_names(artifacts) or []
    found = _story_folders(workspace, artifacts, artifact_names, plan)
    unreadable = list(plan.unreadable)
    unreadable.extend(UnreadableEntry(*split_where(at), why) for at, why in config.bmad_problems)
    if found.problem is not None:
        unreadable.append(found.problem)
    if found.note is not None:
        warnings.append(found.note)
    scan = _Scan()
    for folder in found.folders:
        names = artifact_names if folder == artifacts else None
        _scan_folder(workspace, folder, scan, skipped, only_key, entries, names)
    scan.settle_context_named(skipped, entries)
    scan.settle_name_only(skipped)
    unreadable.extend(scan.losers)
    files = scan.files
    _rekey_entries(plan, files)
    tracked = plan.tracked
    every_key = {*tracked, *files}
    if only_key is not None:
        tracked = {key: entry for key, entry in tracked.items() if key == only_key}
        # A name holding the key inside another story's slug (`5-4-wcag-2-1-…` for 2-1) is
        # read by the narrowed scan but is that other story's file.
        files = {key: found for key, found in files.items() if key == only_key}
        unreadable = [u for u in unreadable if u.key == only_key]
    if not tracked and not files:
        return SourceResult(
            skipped=tuple(skipped), warnings=tuple(warnings), unreadable=tuple(unreadable)
        )
    keys = sorted({*tracked, *files}, key=natural_key)
    epic_titles = resolve_epic_titles(
        workspace.root / config.paths_planning,
        plan.titles,
        {epic_of(key) for key in keys},
        warnings,
        workspace.root,
        limit,
    )
    nested = _nested_keys(every_key, keys)
    # A file named for a story that lost its claim to another file of that story is named on
    # the story as well as under "could not be read": the injection's key scan would find it
    # by its name, so it becomes a row saying which file the story uses, never sent (doctor
    # and inspect agree). A file that claims the story only by its heading is never found by
    # that scan, and the narrowed one-story lookup does not read it, so it is not named here.
    claims: dict[str, list[SecondClaim]] = {}
    for loser in scan.losers:
        named_for = leading_key(Path(loser.path).name.lower(), every_key)
        if loser.key is not None and named_for == loser.key:
            claims.setdefault(loser.key, []).append(SecondClaim(loser.path, loser.reason))
    companions = _companions_of(scan.companions, scan.files, every_key)
    stories = tuple(
        _with_claims(
            _merge(
                key,
                tracked.get(key),
                files.get(key),
                epic_titles,
                plan.rel,
                nested[key],
                companions.get(key, ()),
                found.roots,
            ),
            claims.get(key, ()),
        )
        for key in keys
    )
    return SourceResult(
        stories=stories,
        skipped=tuple(skipped),
        warnings=tuple(warnings),
        unreadable=tuple(unreadable),
    )


_EPIC_HEADING = re.compile(r"^Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)(?P<title>.+)$")


@lru_cache(maxsize=4096)
def epic_of(key: str) -> str:
    """The epic id of a normalized story key: ``1-2`` → ``1``, ``a-1`` → ``A``."""
    first = key.split("-", 1)[0]
    if first.isdecimal():
        return number_text(first)
    return first.upper()


# `# Epic 2: Title`, and decorated: `# ── Epic 1A: Structural Refactoring ──`, `# === Epic 3 - X`.
_EPIC_COMMENT = re.compile(
    r"^\s*#[#\s=─━*-]*Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)"
    r"(?P<title>\S.*?)[\s=─━*-]*$",
    re.IGNORECASE,
)
_STORIES_SUFFIX = re.compile(r"\s*[-–—:]\s*Stories\s*$", re.IGNORECASE)
# What sprint-status comments add after a title: a count or size (`(9 stories)`,
# `(~57 points, 10 stories)`, `— 3 stories`, `[5/9 done]`), a state (`(DONE)`, `- COMPLETE`)
# or a review note (`— reviewed 2026-01-12 by PM`); none of it is the epic's title.
_STATE_WORDS = (
    r"done|complete[d]?|in[- ]progress|backlog|reviewed|approved|updated|revised|added"
    r"|deferred|closed|merged|blocked|cancell?ed|superseded"
)
_COMMENT_EXTRAS = re.compile(
    r"(?:\s*(?:\((?:[^()]*\d[^()]*\b(?:stor(?:y|ies)|points?|pts|sp)\b[^()]*"
    rf"|(?:{_STATE_WORDS})\b[^()]*)\)"
    r"|\[[^\]]*\]"
    r"|[-–—]\s*~?\d+\s*(?:stor(?:y|ies)|points?|pts)\b.*"
    rf"|[-–—]\s*(?:{_STATE_WORDS})\b.*))+\s*$",
    re.IGNORECASE,
)


def clean_epic_title(title: str) -> str:
    """An epic title without the extras a comment carries: ``Auth (9 stories)`` → ``Auth``."""
    cleaned = _COMMENT_EXTRAS.sub("", title).strip()
    return cleaned or title.strip()


def sprint_epic_titles(text: str) -> dict[str, str]:
    """Epic titles from ``sprint-status.yaml``'s own comments (``# Epic 2: Title``), by epic id.

    BMAD's sprint planning writes one such comment above each epic's block; it is the most
    specific source of a title, since it names the epics this very file tracks.
    """
    titles: dict[str, str] = {}
    for line in text.splitlines():
        match = _EPIC_COMMENT.match(line)
        if match:
            title = clean_epic_title(match.group("title"))
            titles.setdefault(epic_of(normalize_key(match.group("id"))), title)
    return titles


def _planning_epic_titles(
    planning: Path, root: Path | None = None, limit: int = DEFAULT_READ_LIMIT
) -> dict[str, dict[str, str]]:
    """Every title each ``*epic*.md`` planning file gives each epic: id → {title: file}."""
    found: dict[str, dict[str, str]] = {}
    try:
        names = sorted(
            entry.name
            for entry in os.scandir(planning)
            if "epic" in entry.name.lower() and entry.name.lower().endswith(".md")
        )
    except OSError:
        return found
    for name in names:
        text = read_text_file(planning / name, root=root, limit=limit)
        if isinstance(text, TextProblem):
            continue
        for heading in iter_headings(text.splitlines()):
            match = _EPIC_HEADING.match(heading.text) if heading.level <= 3 else None
            if match:
                # `## Epic 21: CLI Output — Stories` is the same epic as `### Epic 21: CLI Output`.
                title = clean_epic_title(_STORIES_SUFFIX.sub("", match.group("title")))
                epic = epic_of(normalize_key(match.group("id")))
                titles = found.setdefault(epic, {})
                if not any(t.lower() == title.lower() for t in titles):
                    titles[title] = name
    return found


def resolve_epic_titles(
    planning: Path,
    sprint_titles: dict[str, str],
    epics: set[str],
    warnings: list[str],
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
) -> dict[str, str]:
    """The title of each epic in ``epics``, from the cleanest source that has one.

    The planning files' ``## Epic N: Title`` headings first, when they agree on one title:
    they are the titles as planned, where ``sprint-status.yaml``'s comments carry notes
    (sizes, review dates) around them; then those comments, cleaned
    (:func:`clean_epic_title`). Projects often keep several ``epics-*.md`` files that each
    restart at "Epic 1": when they give one epic different titles, none of theirs is taken
    (a wrong title is worse than the id), and with no comment either a warning says so.
    """
    titles: dict[str, str] = {}
    missing = set(epics)
    if not missing:
        return titles
    planned = _planning_epic_titles(planning, root, limit)
    # A file that gives some epic another title than a second file does restarts its own
    # numbering ("Epic 1" of epics-next.md is not the project's epic 1): none of its titles
    # is taken.
    clashing = {
        name
        for candidates in planned.values()
        if len(candidates) > 1
        for name in candidates.values()
    }
    for epic in sorted(missing, key=natural_key):
        candidates = planned.get(epic, {})
        trusted = {title: name for title, name in candidates.items() if name not in clashing}
        if len(candidates) == 1 and len(trusted) == 1:
            titles[epic] = next(iter(trusted))
        elif epic in sprint_titles:
            titles[epic] = sprint_titles[epic]
        elif candidates:
            listed = "; ".join(f"'{title}' in {name}" for title, name in candidates.items())
            why = (
                "the planning files disagree on its title"
                if len(candidates) > 1
                else "its planning file restarts the epic numbers of another"
            )
            warnings.append(
                f"epic {epic}: {why} ({listed}); showing the id only (a '# Epic N: Title' "
                "comment in sprint-status.yaml settles it)"
            )
    return titles
