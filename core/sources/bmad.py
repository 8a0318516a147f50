"""The BMAD story source: ``sprint-status.yaml`` and story files in the artifacts folder.

Stories come from two places that usually agree:

* ``<paths_artifacts>/sprint-status.yaml`` — its ``development_status:`` mapping
  (``1-2-user-registration: done``; ``epic-1: …`` and ``epic-1-retrospective: …`` are not
  stories), read by the strict line parser of :mod:`.sprint_status`. A file it cannot read
  is a skipped file, never a crash.
* Markdown files directly in the artifacts folder whose first heading is
  ``# Story <key>: <title>`` — their ``Status:`` line and ``## Tasks / Subtasks`` checkboxes.

A story found in both is one story; where their statuses disagree, ``sprint-status.yaml``
wins (see :func:`_merge`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..keys import artifact_category, leading_key, name_matches_key, normalize_key
from ..listing import folder_names, sorted_entries
from ..stories import STATUSES, SkippedFile, Story, Task
from ..textfiles import (
    DEFAULT_READ_LIMIT,
    HEAD_BYTES,
    TextProblem,
    printable_name,
    read_text_file,
    read_text_head,
)
from ..workspace import Workspace
from .common import SourceResult, natural_key, relpath
from .markdown import (
    Heading,
    TaskNestingError,
    first_heading,
    iter_headings,
    parse_task_list,
    section_lines,
)
from .sprint_status import SPRINT_STATUS_NAME as SPRINT_STATUS_NAME
from .sprint_status import SprintStatusError, parse_sprint_status

DEFAULT_FILE_STATUS = "ready-for-dev"
"""Status of a story file with no ``Status:`` line and no sprint-status entry: BMAD's
sprint planning treats "the story file exists" as ready for development."""

# Older BMAD releases and hand-written story files use other words for the same states.
_STATUS_SYNONYMS = {
    "todo": "backlog",
    "draft": "backlog",
    "drafted": "ready-for-dev",
    "contexted": "ready-for-dev",
    "approved": "ready-for-dev",
    "ready": "ready-for-dev",
    "inprogress": "in-progress",
    "ready-for-review": "review",
    "in-review": "review",
    "complete": "done",
    "completed": "done",
    "closed": "done",
}

_STORY_HEADING = re.compile(
    r"^Story\s+(?P<key>[A-Za-z0-9]+(?:[-._][A-Za-z0-9]+)+)"
    r"(?:\s*:\s*|\s+[-–—]\s+|\s*$)(?P<title>.*)$"
)
_STORY_ENTRY = re.compile(r"^(?P<id>(?:\d+[A-Za-z]*|[A-Za-z]+)-\d+)(?:-(?P<slug>.+))?$")
_EPIC_ENTRY = re.compile(r"^epic-[A-Za-z0-9]+$", re.IGNORECASE)
_RETRO_ENTRY = re.compile(r"-retrospective$", re.IGNORECASE)
_STORYISH_NAME = re.compile(
    r"^(?:(?:story|sprint)[-_.]?)?(?:\d+|[a-z])[-._]\d+(?![a-z0-9])", re.IGNORECASE
)
_STORY_NAME_HINT = re.compile(
    r"(?<![a-z0-9])(?:\d+[a-z]*|[a-z]+)[-._]\d{1,4}(?![a-z0-9])", re.IGNORECASE
)
"""A story file's name holds a story key (``1-2``, ``a.3``, ``auth_12``) on key boundaries:
names without one (``notes.md``, ``standup-000123.md``) are never opened by discovery."""
_EPIC_HEADING = re.compile(r"^Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)(?P<title>.+)$")
_STATUS_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?\**Status\**\s*:\s*\**\s*(?P<value>.*?)\s*$", re.IGNORECASE
)
_STATUS_HEADING = re.compile(r"^Status(?:\s*:\s*(?P<value>.*))?$", re.IGNORECASE)
_TASKS_HEADING = re.compile(r"^Tasks\b", re.IGNORECASE)


def normalize_status(raw: str) -> str | None:
    """The canonical status for ``raw`` (``In Progress`` → ``in-progress``), or None."""
    words = re.sub(r"[^a-z]+", "-", raw.lower()).strip("-")
    for candidate in (words, words.split("-", 1)[0]):
        status = _STATUS_SYNONYMS.get(candidate, candidate)
        if status in STATUSES:
            return status
    return None


def epic_of(key: str) -> str:
    """The epic id of a normalized story key: ``1-2`` → ``1``, ``a-1`` → ``A``."""
    first = key.split("-", 1)[0]
    if first.isdigit():
        return str(int(first))
    return first.upper()


# --------------------------------------------------------------------------- story files


@dataclass(frozen=True)
class StoryFile:
    """What a story file says about its story."""

    id: str
    key: str
    title: str
    raw_status: str | None
    tasks: tuple[Task, ...]
    path: str


def _story_heading(heading: Heading | None) -> re.Match[str] | None:
    if heading is None or heading.level != 1:
        return None
    return _STORY_HEADING.match(heading.text)


def _file_status(lines: list[str], headings: list[Heading]) -> str | None:
    """The ``Status:`` value: before the first section, or in a ``## Status`` section."""
    first_section = next((h.line for h in headings if h.level >= 2), len(lines))
    for line in lines[:first_section]:
        match = _STATUS_LINE.match(line)
        if match and match.group("value"):
            return match.group("value")
    for heading in headings:
        if heading.level < 2:
            continue
        match = _STATUS_HEADING.match(heading.text)
        if match is None:
            continue
        if match.group("value"):
            return match.group("value")
        for line in section_lines(lines, heading, headings):
            if line.strip():
                value = _STATUS_LINE.match(line)
                return value.group("value") if value else line.strip()
    return None


def parse_story_text(text: str, path: str, named_id: str | None = None) -> StoryFile | None:
    """Parse a story file's text; None when its first heading is not ``# Story <key>: …``.

    Args:
        text: the file's text.
        path: its root-relative path.
        named_id: the story id the file's name gives it (``<entry>.md`` of a sprint-status
            entry): then a first heading of another shape is the story's title.
    """
    lines = text.splitlines()
    headings = list(iter_headings(lines))
    match = _story_heading(headings[0] if headings else None)
    if match is None:
        if named_id is None:
            return None
        first = headings[0].text if headings and headings[0].level == 1 else ""
        return _story_file(named_id, first, lines, headings, path)
    return _story_file(match.group("key"), match.group("title"), lines, headings, path)


def _story_file(
    story_id: str, title: str, lines: list[str], headings: list[Heading], path: str
) -> StoryFile:
    tasks: tuple[Task, ...] = ()
    for heading in headings:
        if heading.level == 2 and _TASKS_HEADING.match(heading.text):
            tasks = parse_task_list(section_lines(lines, heading, headings))
            break
    return StoryFile(
        id=story_id,
        key=normalize_key(story_id),
        title=title.strip().strip("*_").strip(),
        raw_status=_file_status(lines, headings),
        tasks=tasks,
        path=path,
    )


def _complete_lines(text: str, complete: bool) -> list[str]:
    lines = text.splitlines()
    if not complete and lines and not text.endswith(("\n", "\r")):
        lines.pop()  # cut by the read limit
    return lines


def _leading_heading(text: str, complete: bool) -> Heading | None:
    """The first heading of a file's head, or None when more of the file is needed.

    Most files open with their heading on the first non-blank line; that case is answered
    without splitting the whole head into lines.
    """
    start = len(text) - len(text.lstrip())
    end = text.find("\n", start)
    first = text[start:] if end < 0 else text[start:end]
    if first.startswith("#") and (end >= 0 or complete):
        quick = first_heading([first])
        if quick is not None:
            return quick
    return first_heading(_complete_lines(text, complete))


def read_story_file(
    path: str | os.PathLike[str],
    rel: str,
    *,
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
    listed: bool = False,
) -> StoryFile | SkippedFile | None:
    """Read one candidate story file, through the guarded reader.

    Only the head of the file is read until its first heading shows it is a story.

    Args:
        path: the file.
        rel: its root-relative path, used in the result.
        root: the project root the file must resolve inside (None: not checked).
        limit: the most bytes read of a whole story file.
        listed: a folder listing showed a regular, non-symlink file in a folder inside the
            root (see :func:`~promptdeck.core.textfiles.read_file_bytes`).

    Returns:
        The parsed story; a :class:`SkippedFile` when the file is not usable text or is named
        like a story but has no story heading; None for other Markdown (context documents).
    """
    head = read_text_head(path, HEAD_BYTES, root=root, limit=limit, listed=listed)
    if isinstance(head, TextProblem):
        return SkippedFile(rel, str(head))
    text, complete = head
    heading = _leading_heading(text, complete)
    if heading is None and not complete:
        full = read_text_file(path, root=root, limit=limit, listed=listed)
        if isinstance(full, TextProblem):
            return SkippedFile(rel, str(full))
        text, complete = full, True
        heading = first_heading(text.splitlines())
    if _story_heading(heading) is None:
        if _STORYISH_NAME.match(os.path.basename(path)):
            found = f"first heading is '{heading.text}'" if heading else "no heading"
            return SkippedFile(rel, f"no-story-heading: {found}, expected '# Story <key>: <title>'")
        return None
    if not complete:
        full = read_text_file(path, root=root, limit=limit, listed=listed)
        if isinstance(full, TextProblem):
            return SkippedFile(rel, str(full))
        text = full
    try:
        return parse_story_text(text, rel)
    except TaskNestingError as exc:
        return SkippedFile(rel, f"unreadable: {exc}")


def _named_story_file(
    path: str,
    rel: str,
    lead: str | None,
    entries_by_key: dict[str, str],
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
) -> StoryFile | None:
    """The story file of a sprint-status entry whose heading is not ``# Story <key>: …``.

    A file named exactly after an entry (``1-2-user-login.md`` for ``1-2-user-login``) is that
    story's file, whatever its heading says: its name says so.
    """
    if lead is None or lead not in entries_by_key:
        return None
    name = os.path.basename(path)
    if name[:-3].lower() != entries_by_key[lead].lower():
        return None
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        return None
    story_id = _STORY_ENTRY.match(entries_by_key[lead])
    try:
        return parse_story_text(text, rel, story_id.group("id") if story_id else lead)
    except TaskNestingError:
        return None


# --------------------------------------------------------------------------- the source


# `# Epic 2: Title`, and decorated: `# ── Epic 1A: Structural Refactoring ──`, `# === Epic 3 - X`.
_EPIC_COMMENT = re.compile(
    r"^\s*#[#\s=─━*-]*Epic\s+(?P<id>[A-Za-z0-9]+)\s*(?::\s*|\s+[-–—]\s+)"
    r"(?P<title>\S.*?)[\s=─━*-]*$",
    re.IGNORECASE,
)
_STORIES_SUFFIX = re.compile(r"\s*[-–—:]\s*Stories\s*$", re.IGNORECASE)


def sprint_epic_titles(text: str) -> dict[str, str]:
    """Epic titles from ``sprint-status.yaml``'s own comments (``# Epic 2: Title``), by epic id.

    BMAD's sprint planning writes one such comment above each epic's block; it is the most
    specific source of a title, since it names the epics this very file tracks.
    """
    titles: dict[str, str] = {}
    for line in text.splitlines():
        match = _EPIC_COMMENT.match(line)
        if match:
            titles.setdefault(epic_of(normalize_key(match.group("id"))), match.group("title"))
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
                title = _STORIES_SUFFIX.sub("", match.group("title")).strip()
                epic = epic_of(normalize_key(match.group("id")))
                titles = found.setdefault(epic, {})
                if not any(t.lower() == title.lower() for t in titles):
                    titles[title] = name
    return found


def _epic_titles(
    planning: Path,
    sprint_titles: dict[str, str],
    epics: set[str],
    warnings: list[str],
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
) -> dict[str, str]:
    """The title of each epic in ``epics``, from the most specific source that has one.

    ``sprint-status.yaml``'s comments first; then the planning files, when they agree on one
    title. Projects often keep several ``epics-*.md`` files that each restart at "Epic 1":
    when they give one epic different titles, none is taken (a wrong title is worse than the
    id) and a warning says so.
    """
    titles = {epic: sprint_titles[epic] for epic in epics if epic in sprint_titles}
    missing = epics - titles.keys()
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


def _slug_title(slug: str | None, story_id: str) -> str:
    if not slug:
        return f"Story {story_id}"
    words = slug.replace("_", "-").split("-")
    return " ".join(words).capitalize()


@dataclass(frozen=True)
class _Tracked:
    id: str
    slug: str | None
    status: str
    raw_status: str


def _read_sprint_status(
    root: Path,
    path: Path,
    skipped: list[SkippedFile],
    warnings: list[str],
    epic_titles: dict[str, str],
    limit: int = DEFAULT_READ_LIMIT,
) -> dict[str, _Tracked]:
    rel = relpath(root, path)
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            skipped.append(SkippedFile(rel, str(text)))
        return {}
    try:
        entries = parse_sprint_status(text)
    except SprintStatusError as exc:
        skipped.append(SkippedFile(rel, f"malformed: {exc}"))
        return {}
    epic_titles.update(sprint_epic_titles(text))
    tracked: dict[str, _Tracked] = {}
    for entry in entries:
        if _EPIC_ENTRY.match(entry.name) or _RETRO_ENTRY.search(entry.name):
            continue
        match = _STORY_ENTRY.match(entry.name)
        if match is None:
            warnings.append(f"{rel} line {entry.line}: '{entry.name}' is not a story key; ignored")
            continue
        status = normalize_status(entry.value)
        if status is None:
            warnings.append(
                f"{rel} line {entry.line}: unknown status '{entry.value}' for "
                f"'{entry.name}'; shown as backlog"
            )
            status = "backlog"
        key = normalize_key(match.group("id"))
        if key in tracked:
            warnings.append(f"{rel} line {entry.line}: story {key} listed twice; first kept")
            continue
        tracked[key] = _Tracked(match.group("id"), match.group("slug"), status, entry.value)
    return tracked


def _name_rank(name: str, key: str, entries_by_key: dict[str, str]) -> int:
    """How well a file name says it is story ``key``'s file: 0 when it is the sprint-status
    entry's name (``32-1-fix-feasibility-spike.md``), 1 when it starts with the key, 2 when
    it only holds it, 3 otherwise (lower is better)."""
    stem = name[:-3] if name.lower().endswith(".md") else name
    if stem.lower() == entries_by_key.get(key, "\0").lower():
        return 0
    if leading_key(name) == key:
        return 1
    return 2 if name_matches_key(name, key) else 3


def _may_be_story_file(name: str) -> bool:
    """Whether discovery opens ``name`` at all: a Markdown name holding a story key whose
    shape can be a story file's.

    The category comes from the name's shape: ``22-3-…-agent-discovery.md`` starts with its
    story's key and is that story's own file, while ``sprint-1-2-discovery.md`` and
    ``tech-spec-…`` are not story files.
    """
    lower = name.lower()
    if not lower.endswith(".md") or _STORY_NAME_HINT.search(name) is None:
        return False
    lead = leading_key(lower)
    if lower.startswith(("sprint-", "tech-spec", "tech_spec", "techspec")) and (
        lead is None or artifact_category(lower, lead) != "story"
    ):
        return False
    return not (lead is None and ("discovery" in lower or "tech-spec" in lower))


def _scan_story_files(
    workspace: Workspace,
    artifacts: Path,
    skipped: list[SkippedFile],
    only_key: str | None = None,
    entries_by_key: dict[str, str] | None = None,
) -> dict[str, StoryFile]:
    """Story files of the artifacts folder by key.

    A file is a story's file when its first heading says ``# Story <key>: …``; a file named
    ``<key>-<slug>.md`` after a sprint-status entry (``entries_by_key``: key → entry name)
    is that story's file even when its heading has another shape.
    """
    entries_by_key = entries_by_key or {}
    names = folder_names(artifacts)
    if names is None:
        return {}
    # Names that cannot be stories are never opened (nor sorted): this keeps discovery fast
    # in artifact folders holding thousands of logs and discovery notes.
    entries = sorted_entries(artifacts, filter(_may_be_story_file, names))
    files: dict[str, StoryFile] = {}
    # Plain strings rather than Path objects per entry: this loop sees every artifact.
    prefix = relpath(workspace.root, artifacts) + "/"
    for entry in entries:
        lead = leading_key(entry.name.lower())
        if only_key is not None and not name_matches_key(entry.name, only_key):
            continue
        rel = prefix + entry.name
        if printable_name(rel) != rel:
            skipped.append(SkippedFile(printable_name(rel), "not-utf8: the file name"))
            continue
        # A symlink is judged by the guarded reader itself (a loop, a device, a FIFO, a target
        # outside the project: each skipped with its reason, none read).
        link = entry.is_symlink()
        if not link:
            try:
                regular = entry.is_file()
            except OSError:
                regular = False
            if not regular:
                if not os.path.isdir(entry.path):
                    # A FIFO, device or socket named like a story: never opened.
                    skipped.append(SkippedFile(rel, "unreadable: not a regular file"))
                continue
        limit = workspace.config.read_max_bytes
        found = read_story_file(entry.path, rel, root=workspace.root, limit=limit, listed=not link)
        if found is None:
            continue
        if isinstance(found, SkippedFile):
            named = _named_story_file(entry.path, rel, lead, entries_by_key, workspace.root, limit)
            if named is None:
                skipped.append(found)
                continue
            found = named
        first = files.get(found.key)
        if first is not None:
            # Two files claim one key: the better-named one wins (see `_name_rank`), then the
            # first by name. The narrowed one-story lookup scans exactly those names, so both
            # lookups always pick the same file.
            if _name_rank(entry.name, found.key, entries_by_key) < _name_rank(
                Path(first.path).name, found.key, entries_by_key
            ):
                skipped.append(
                    SkippedFile(first.path, f"duplicate: story {found.id} is also {rel}")
                )
                files[found.key] = found
                continue
            skipped.append(SkippedFile(rel, f"duplicate: story {found.id} is also {first.path}"))
            continue
        files[found.key] = found
    return files


def _merge(
    key: str,
    tracked: _Tracked | None,
    story_file: StoryFile | None,
    epic_titles: dict[str, str],
    warnings: list[str],
) -> Story:
    file_status: str | None = None
    if story_file is not None and story_file.raw_status is not None:
        file_status = normalize_status(story_file.raw_status)
        if file_status is None:
            warnings.append(
                f"{story_file.path}: unknown status '{story_file.raw_status}'; "
                + ("sprint-status.yaml's is used" if tracked else f"shown as {DEFAULT_FILE_STATUS}")
            )
    # sprint-status.yaml wins a disagreement: it is the file BMAD's workflows (sprint
    # planning, dev-story, code-review) read to pick the next story and update at every
    # transition, while a story file's Status line is prose an agent may leave behind.
    if tracked is not None:
        status = tracked.status
        if file_status is not None and file_status != status and story_file is not None:
            warnings.append(
                f"story {tracked.id}: {story_file.path} says '{story_file.raw_status}', "
                f"sprint-status.yaml says '{tracked.raw_status}'; using sprint-status.yaml"
            )
    else:
        status = file_status or DEFAULT_FILE_STATUS
    # The sprint-status spelling is the id: it is BMAD's tracking key (`1-2`), the one its
    # workflows and commit messages use; a story only on file keeps its heading's spelling.
    story_id = tracked.id if tracked is not None else story_file.id if story_file else key
    if story_file is not None and story_file.title:
        title = story_file.title
    else:
        title = _slug_title(tracked.slug if tracked else None, story_id)
    epic = epic_of(key)
    return Story(
        id=story_id,
        key=key,
        title=title,
        status=status,
        source="bmad",
        group=epic,
        group_title=epic_titles.get(epic, ""),
        path=story_file.path if story_file else None,
        tasks=story_file.tasks if story_file else (),
        files=(story_file.path,) if story_file else (),
    )


def load_stories(workspace: Workspace, only_key: str | None = None) -> SourceResult:
    """Every BMAD story of the workspace, in natural key order, with skipped files.

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
        return SourceResult(skipped=tuple(skipped), warnings=tuple(warnings))
    limit = config.read_max_bytes
    sprint_titles: dict[str, str] = {}
    tracked = _read_sprint_status(
        workspace.root, artifacts / SPRINT_STATUS_NAME, skipped, warnings, sprint_titles, limit
    )
    entries = {key: f"{t.id}-{t.slug}" if t.slug else t.id for key, t in tracked.items()}
    files = _scan_story_files(workspace, artifacts, skipped, only_key, entries)
    if only_key is not None:
        tracked = {key: entry for key, entry in tracked.items() if key == only_key}
        # A name holding the key inside another story's slug (`5-4-wcag-2-1-…` for 2-1) is
        # read by the narrowed scan but is that other story's file.
        files = {key: found for key, found in files.items() if key == only_key}
    if not tracked and not files:
        return SourceResult(skipped=tuple(skipped), warnings=tuple(warnings))
    keys = sorted({*tracked, *files}, key=natural_key)
    epic_titles = _epic_titles(
        workspace.root / config.paths_planning,
        sprint_titles,
        {epic_of(key) for key in keys},
        warnings,
        workspace.root,
        limit,
    )
    stories = tuple(
        _merge(key, tracked.get(key), files.get(key), epic_titles, warnings) for key in keys
    )
    return SourceResult(stories=stories, skipped=tuple(skipped), warnings=tuple(warnings))
