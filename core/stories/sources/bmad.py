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

This module finds the files and assigns them to stories; reading one story file is
:mod:`.bmad_story_file`'s job, and the epics' titles are :mod:`.bmad_epics`'.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...project.listing import folder_names, sorted_entries
from ...project.textfiles import DEFAULT_READ_LIMIT, TextProblem, printable_name, read_text_file
from ...project.workspace import Workspace
from ..keys import artifact_category, leading_key, name_matches_key, normalize_key
from ..model import SkippedFile, Story
from .bmad_epics import epic_of, resolve_epic_titles, sprint_epic_titles
from .bmad_story_file import (
    DEFAULT_FILE_STATUS,
    STORY_ENTRY,
    StoryFile,
    named_story_file,
    normalize_status,
    read_story_file,
)
from .common import SourceResult, natural_key, relpath
from .sprint_status import SPRINT_STATUS_NAME, SprintStatusError, parse_sprint_status

_EPIC_ENTRY = re.compile(r"^epic-[A-Za-z0-9]+$", re.IGNORECASE)
_RETRO_ENTRY = re.compile(r"-retrospective$", re.IGNORECASE)
_STORY_NAME_HINT = re.compile(
    r"(?<![a-z0-9])(?:\d+[a-z]*|[a-z]+)[-._]\d{1,4}(?![a-z0-9])", re.IGNORECASE
)
"""A story file's name holds a story key (``1-2``, ``a.3``, ``auth_12``) on key boundaries:
names without one (``notes.md``, ``standup-000123.md``) are never opened by discovery."""


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
        match = STORY_ENTRY.match(entry.name)
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
            named = named_story_file(entry.path, rel, lead, entries_by_key, workspace.root, limit)
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
    epic_titles = resolve_epic_titles(
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
