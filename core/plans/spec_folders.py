"""bmad-spec folders: ``<output>/specs/spec-<slug>/`` holds ``SPEC.md``, ``stories.yaml`` (the
stories in build order: ``id``, ``title``, ``description``, never a status) and
``stories/<id>-<slug>.md`` — each a build spec (:mod:`.bmad_spec`), whose ``status`` is the
story's. Each entry is a ``bmad-spec`` story: ``<folder name>:<entry id>``.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Any

from ..lean_dataclass import dataclass
from ..project.listing import folder_names
from ..project.textfiles import TextProblem, read_text_file
from ..project.workspace import Workspace
from ..stories.keys import normalize_key
from ..stories.model import (
    SourceResult,
    Story,
    UnreadableEntry,
    relpath,
    source_line,
)
from .bmad_spec import SPEC_PREFIX, BuildSpec, read_build_spec, spec_status
from .context_files import ContextEntry, context_entries, output_folder
from .markdown import (
    PlanYamlError,
    load_yaml,
    read_front_matter,
    scalar_text,
)

_SPEC_ID = re.compile(r"^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*$")


@dataclass(frozen=True)
class SpecFolderStory:
    """One ``stories.yaml`` entry of a bmad-spec folder, with its story spec file if any."""

    folder: str
    spec_path: str | None
    entry_id: str
    title: str
    description: str
    line: int
    story_spec: BuildSpec | None
    companions: tuple[ContextEntry, ...]

    @property
    def story_id(self) -> str:
        """``<folder name>:<entry id>``, the id users type (``spec-rate-limits:2``)."""
        return f"{posixpath.basename(self.folder)}:{self.entry_id}"


def _story_spec_files(folder: Path, ids: list[str]) -> dict[str, list[str]]:
    """``stories/<id>-*.md`` names by id; a name goes to the longest id it starts with."""
    names = folder_names(folder / "stories") or []
    by_id: dict[str, list[str]] = {}
    longest_first = sorted(ids, key=len, reverse=True)
    for name in sorted(names):
        if not name.lower().endswith(".md"):
            continue
        for entry_id in longest_first:
            if name.startswith(entry_id + "-"):
                by_id.setdefault(entry_id, []).append(name)
                break
    return by_id


def load_spec_folder(
    workspace: Workspace, folder: Path, problems: list[UnreadableEntry]
) -> list[SpecFolderStory]:
    """The stories of one bmad-spec folder, in ``stories.yaml`` order."""
    root = workspace.root
    rel = relpath(root, folder)
    spec_md = folder / "SPEC.md"
    spec_rel = f"{rel}/SPEC.md" if os.path.lexists(spec_md) else None
    companions: tuple[ContextEntry, ...] = ()
    if spec_rel is not None:
        companions = _spec_companions(workspace, spec_md, spec_rel, problems)
    entries = _story_entries(workspace, folder, problems)
    files = _story_spec_files(folder, [entry_id for entry_id, _, _ in entries])
    found: list[SpecFolderStory] = []
    for entry_id, item, line in entries:
        story_spec: BuildSpec | None = None
        names = files.get(entry_id, [])
        if len(names) > 1:
            problems.append(
                UnreadableEntry(
                    f"{rel}/stories/{names[1]}",
                    None,
                    f"story {entry_id} has two spec files; {names[0]} is read (first by name)",
                    entry_id,
                )
            )
        if names:
            story_spec = read_build_spec(
                folder / "stories" / names[0],
                f"{rel}/stories/{names[0]}",
                workspace,
                problems,
                name_key=None,
            )
        found.append(
            SpecFolderStory(
                folder=rel,
                spec_path=spec_rel,
                entry_id=entry_id,
                title=scalar_text(item.get("title")) or f"Story {entry_id}",
                description=scalar_text(item.get("description")) or "",
                line=line,
                story_spec=story_spec,
                companions=companions,
            )
        )
    return found


def _spec_companions(
    workspace: Workspace, spec_md: Path, spec_rel: str, problems: list[UnreadableEntry]
) -> tuple[ContextEntry, ...]:
    """The ``companions:`` list of the folder's SPEC.md front matter."""
    text = read_text_file(spec_md, root=workspace.root, limit=workspace.config.read_max_bytes)
    if isinstance(text, TextProblem):
        problems.append(UnreadableEntry(spec_rel, None, str(text)))
        return ()
    try:
        front = read_front_matter(text.splitlines())
    except PlanYamlError as exc:
        problems.append(UnreadableEntry(spec_rel, exc.line, f"front matter: {exc.message}"))
        return ()
    if front is None:
        return ()
    return context_entries(
        front.document,
        "companions",
        "companions: list",
        workspace,
        spec_rel,
        None,
        problems,
        base=relpath(workspace.root, spec_md.parent),
    )


def _story_entries(
    workspace: Workspace, folder: Path, problems: list[UnreadableEntry]
) -> list[tuple[str, dict[str, Any], int]]:
    """The entries of the folder's ``stories.yaml`` with a usable id, each once: the id, the
    entry and its line."""
    stories_rel = f"{relpath(workspace.root, folder)}/stories.yaml"
    text = read_text_file(
        folder / "stories.yaml", root=workspace.root, limit=workspace.config.read_max_bytes
    )
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            problems.append(UnreadableEntry(stories_rel, None, str(text)))
        return []
    try:
        document = load_yaml(text)
    except PlanYamlError as exc:
        problems.append(UnreadableEntry(stories_rel, exc.line, exc.message))
        return []
    if document.data is None:
        return []
    if not isinstance(document.data, list):
        problems.append(UnreadableEntry(stories_rel, 1, "not a list of stories"))
        return []
    lines = document.item_lines.get("", ())
    entries: list[tuple[str, dict[str, Any], int]] = []
    seen: set[str] = set()
    for index, item in enumerate(document.data):
        line = lines[index] if index < len(lines) else 1
        entry_id = scalar_text(item.get("id")) if isinstance(item, dict) else None
        if entry_id is None or not _SPEC_ID.match(entry_id) or not isinstance(item, dict):
            problems.append(
                UnreadableEntry(stories_rel, line, "entry has no usable 'id'; not read")
            )
            continue
        if entry_id in seen:
            problems.append(
                UnreadableEntry(
                    stories_rel, line, f"id '{entry_id}' appears twice; the first is kept"
                )
            )
            continue
        seen.add(entry_id)
        entries.append((entry_id, item, line))
    return entries


def load_spec_folders(workspace: Workspace) -> tuple[list[SpecFolderStory], list[UnreadableEntry]]:
    """Every bmad-spec folder's stories (folders by name), and what could not be read."""
    specs = workspace.root / output_folder(workspace) / "specs"
    problems: list[UnreadableEntry] = []
    if not workspace.contains(specs):
        return [], problems
    names = folder_names(specs) or []
    stories: list[SpecFolderStory] = []
    for name in sorted(names, key=lambda n: (n.lower(), n)):
        folder = specs / name
        if not name.startswith(SPEC_PREFIX) or folder.is_symlink() or not folder.is_dir():
            continue
        stories.extend(load_spec_folder(workspace, folder, problems))
    return stories, problems


def spec_folder_stories(workspace: Workspace) -> SourceResult:
    """The stories of every bmad-spec folder, as ``bmad-spec`` stories."""
    found, problems = load_spec_folders(workspace)
    stories: list[Story] = []
    for entry in found:
        name = posixpath.basename(entry.folder)
        spec = entry.story_spec
        files = tuple(p for p in (entry.spec_path, spec.path if spec else None) if p)
        context = tuple(
            dict.fromkeys(
                [c.path for c in entry.companions]
                + [c.path for c in (spec.context if spec else ())]
            )
        )
        if spec is not None:
            status, known = spec_status(spec.raw_status)
            source = source_line(spec.path, spec.status_line)
        else:
            # stories.yaml carries no status: an entry with no story spec yet is planned.
            status, known = "backlog", True
            source = f"{entry.folder}/stories.yaml:{entry.line}"
        stories.append(
            Story(
                id=entry.story_id,
                key=normalize_key(f"{name}-{entry.entry_id}"),
                title=entry.title,
                status=status,
                source="bmad",
                group=name,
                group_title=name.removeprefix(SPEC_PREFIX).replace("-", " ").capitalize(),
                path=spec.path if spec else None,
                tasks=spec.tasks if spec else (),
                files=files,
                layout="bmad-spec",
                status_source=source,
                status_known=known,
                context_files=context,
            )
        )
    return SourceResult(stories=tuple(stories), unreadable=tuple(problems))
