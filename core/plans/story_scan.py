"""Where a BMAD plan's story files are, and which story each is: the folders searched, the
files opened, the companions told apart, and one file per story.

Story files are looked for in the artifacts folder and the folder ``story_location`` names,
each with its subfolders down to :data:`STORY_DEPTH` levels (``{project-root}`` resolved inside
the project; a location outside it, missing, or not a folder is one unreadable entry and is
never read). Only names that may be a story file's are opened (:func:`story_file_names`).
A file is a story's when its first heading says so, or when it is named after a sprint-status
entry; a companion (a context, report, review) is never a story's file
(:mod:`promptdeck.core.stories.companions`). Two files claiming one story: the better-named
wins and the other is reported (:func:`_name_rank`). Reading one file is
:mod:`.bmad_story_file`'s job; joining the files to the sprint plan is :mod:`.bmad`'s.
"""

from __future__ import annotations

import os
import re
import stat as stat_module
from collections.abc import Iterable
from dataclasses import field, replace
from pathlib import Path

from ..lean_dataclass import dataclass
from ..project.listing import folder_names
from ..project.textfiles import printable_name
from ..project.workspace import Workspace
from ..stories.companions import companion_kind, context_stem, says_context, sibling_companion
from ..stories.keys import (
    leading_key,
    leading_key_category,
    name_matches_key,
)
from ..stories.model import (
    Companion,
    SkippedFile,
    UnreadableEntry,
    relpath,
)
from .bmad_story_file import (
    StoryFile,
    named_story_file,
    read_story_file,
    v4_named_story_file,
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
class StoryFolders:
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


def story_folders(
    workspace: Workspace,
    artifacts: Path,
    names: list[str],
    story_location: tuple[str, int] | None,
    plan_rel: str,
) -> StoryFolders:
    """Where story files are looked for: the artifacts folder and the ``story_location``
    folder, each with its subfolders down to :data:`STORY_DEPTH` levels (``epic19/``,
    ``epic19/stories/``), breadth first and by name, each folder once.

    Hidden folders and ``node_modules`` are passed over; a symlinked folder is followed only
    when it stays inside the project (and is searched once, however many links reach it).
    Past :data:`FOLDER_LIMIT` folders the search stops, and says so.
    """
    roots = [artifacts]
    problem: UnreadableEntry | None = None
    if story_location is not None:
        value, line = story_location
        located, why = _resolve_location(workspace, value)
        if located is None:
            problem = UnreadableEntry(plan_rel, line, f"story_location '{value}' {why}")
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
    return StoryFolders(folders, tuple(searched), problem, note)


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
class StoryScan:
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
                    f"no-story-heading: named for story {dashed(found.id)}, whose file is "
                    f"{winner.path}; not read as a story",
                )
            )


def scan_folder(
    workspace: Workspace,
    folder: Path,
    scan: StoryScan,
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
    beside ``X.md`` is never a story's file
    (:func:`promptdeck.core.stories.companions.sibling_companion`).
    """
    # One piece: one pass over every story-like name of the folder, the hot loop of discovery;
    # each branch ends with the file's verdict (story, companion, skipped), and a helper per
    # branch would take the scan, the skipped list, the entries and the read limit each time.
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


def companions_of(
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
    scan: StoryScan,
    found: StoryFile,
    name: str,
    skipped: list[SkippedFile],
    entries_by_key: dict[str, str],
) -> None:
    """Claim a story for a file known by its name alone (no ``# Story <key>:`` heading): at
    once when it is named exactly after the entry, as BMAD names story files; else only when
    the story has no other file once every folder is scanned
    (:meth:`StoryScan.settle_name_only`)."""
    if name[:-3].lower() == entries_by_key.get(found.key, "\0").lower():
        _claim(scan, found, skipped, entries_by_key)
    else:
        scan.name_only.append(found)


def _claim(
    scan: StoryScan, found: StoryFile, skipped: list[SkippedFile], entries_by_key: dict[str, str]
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
    story_id = dashed(found.id)
    skipped.append(SkippedFile(loser.path, f"duplicate: story {story_id} is also {winner.path}"))
    scan.losers.append(
        UnreadableEntry(
            loser.path,
            None,
            f"also claims story {story_id}; {winner.path} is used ({why})",
            found.key,
        )
    )


def dashed(story_id: str) -> str:
    """A heading's id in the sprint-status style: ``10.1.5`` → ``10-1-5``, ``A.1`` → ``A-1``."""
    return re.sub(r"[._\s]+", "-", story_id.strip())
