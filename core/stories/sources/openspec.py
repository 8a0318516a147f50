"""The OpenSpec story source: task groups of ``<openspec>/changes/<change>/tasks.md``.

Each ``## N. Title`` group of a change's ``tasks.md`` (also ``## Phase N: Title``), with its
``- [ ] N.M …`` items, is one story with id ``<change>:<N>``. The change's ``proposal.md``,
``design.md`` and every ``specs/<capability>/spec.md`` belong to each of its stories (and its
record file ``records/group-<N>.md`` once a phase wrote it; ``tasks.md`` is its ``path``, and
the prompt carries its own group of it), and the specs' ``### Requirement:`` blocks with their
``#### Scenario:`` blocks are its requirements.
``changes/archive/`` holds finished changes and is not a source.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...project.textfiles import TextProblem, printable_name, read_text_file
from ...project.workspace import Workspace
from ..keys import normalize_key
from ..model import Requirement, Scenario, SkippedFile, Story
from .common import SourceResult, relpath
from .markdown import (
    Heading,
    TaskNestingError,
    count_tasks,
    iter_headings,
    parse_task_list,
    section_lines,
)

ARCHIVE_DIR = "archive"
_GROUP_HEADING = re.compile(
    r"^(?:(?:Phase|Group|Stage|Part|Step)\s+)?(?P<number>\d+)[.):]?\s+(?P<title>.+)$", re.IGNORECASE
)
_REQUIREMENT = re.compile(r"^Requirement:\s*(?P<name>.+)$")
_SCENARIO = re.compile(r"^Scenario:\s*(?P<name>.+)$")
_REMOVED_SECTION = re.compile(r"^REMOVED\b", re.IGNORECASE)
_TITLE_PREFIX = re.compile(r"^(?:Change|Proposal)\s*:\s*", re.IGNORECASE)


def status_from_tasks(done: int, total: int) -> str:
    """``ready-for-dev`` when nothing is checked, ``done`` when all is, else ``in-progress``."""
    if done == 0:
        return "ready-for-dev"
    return "done" if done == total else "in-progress"


def parse_requirements(text: str, capability: str) -> tuple[Requirement, ...]:
    """Every ``### Requirement:`` of a spec with its ``#### Scenario:`` blocks.

    Requirements under a ``## REMOVED Requirements`` section of a change's delta are left
    out: they are being deleted, not built.
    """
    lines = text.splitlines()
    headings = list(iter_headings(lines))
    requirements: list[Requirement] = []
    removed = False
    for index, heading in enumerate(headings):
        if heading.level <= 2:
            removed = bool(_REMOVED_SECTION.match(heading.text))
            continue
        match = _REQUIREMENT.match(heading.text) if heading.level == 3 else None
        if match is None or removed:
            continue
        body = section_lines(lines, heading, headings[index + 1 :])
        scenarios: list[Scenario] = []
        intro_end = len(body)
        for inner in headings[index + 1 :]:
            if inner.level <= 3:
                break
            scenario = _SCENARIO.match(inner.text) if inner.level == 4 else None
            if scenario is None:
                continue
            intro_end = min(intro_end, inner.line - heading.line - 1)
            scenario_lines = section_lines(lines, inner, headings[index + 1 :])
            scenarios.append(
                Scenario(scenario.group("name").strip(), "\n".join(scenario_lines).strip())
            )
        requirements.append(
            Requirement(
                capability=capability,
                name=match.group("name").strip(),
                text="\n".join(body[:intro_end]).strip(),
                scenarios=tuple(scenarios),
            )
        )
    return tuple(requirements)


def _groups(headings: list[Heading]) -> list[tuple[Heading, re.Match[str]]]:
    return [
        (heading, match)
        for heading in headings
        if heading.level == 2 and (match := _GROUP_HEADING.match(heading.text))
    ]


def _change_title(
    change_dir: Path, root: Path, skipped: list[SkippedFile], limit: int
) -> str | None:
    proposal = change_dir / "proposal.md"
    text = read_text_file(proposal, root=root, limit=limit)
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            skipped.append(SkippedFile(relpath(root, proposal), str(text)))
        return None
    for heading in iter_headings(text.splitlines()):
        if heading.level == 1:
            return _TITLE_PREFIX.sub("", heading.text).strip() or None
    return None


def _spec_files(change_dir: Path) -> list[tuple[str, Path]]:
    specs = change_dir / "specs"
    try:
        with os.scandir(specs) as scan:
            capabilities = sorted(e.name for e in scan if e.is_dir() and not e.name.startswith("."))
    except OSError:
        return []
    # A capability whose folder name is not UTF-8 cannot be named in a prompt: left out.
    return [
        (name, specs / name / "spec.md")
        for name in capabilities
        if printable_name(name) == name and os.path.lexists(specs / name / "spec.md")
    ]


def load_change(workspace: Workspace, change_dir: Path) -> SourceResult:
    """The stories of one change folder (none when it has no ``tasks.md``)."""
    root = workspace.root
    change = change_dir.name
    tasks_path = change_dir / "tasks.md"
    tasks_rel = relpath(root, tasks_path)
    skipped: list[SkippedFile] = []
    warnings: list[str] = []
    limit = workspace.config.read_max_bytes
    if not os.path.lexists(tasks_path):
        # A change at the proposal stage has no tasks yet: listed, never silently left out.
        reason = "no-tasks: the change has no tasks.md yet, so it has no stories"
        return SourceResult(skipped=(SkippedFile(relpath(root, change_dir) + "/", reason),))
    text = read_text_file(tasks_path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        return SourceResult(skipped=(SkippedFile(tasks_rel, str(text)),))
    lines = text.splitlines()
    headings = list(iter_headings(lines))
    groups = _groups(headings)
    if not groups:
        reason = "no-task-groups: no '## N. Title' headings"
        return SourceResult(skipped=(SkippedFile(tasks_rel, reason),))

    # tasks.md is not among the story's files: the story prompt carries this story's own
    # group of it, and injecting the whole file would say those tasks twice.
    files = [relpath(root, change_dir / name) for name in ("proposal.md", "design.md")]
    # A listed file that is not a regular file inside the project is shown in the injection
    # with its reason (outside-project, unreadable), never read.
    files = [f for f in files if os.path.lexists(root / f)]
    requirements: list[Requirement] = []
    for capability, spec_path in _spec_files(change_dir):
        spec_rel = relpath(root, spec_path)
        files.append(spec_rel)
        spec_text = read_text_file(spec_path, root=root, limit=limit)
        if isinstance(spec_text, TextProblem):
            skipped.append(SkippedFile(spec_rel, str(spec_text)))
            continue
        requirements.extend(parse_requirements(spec_text, capability))
    title = _change_title(change_dir, root, skipped, limit) or change
    change_rel = relpath(root, change_dir)

    stories: list[Story] = []
    seen: set[str] = set()
    for heading, match in groups:
        number = str(int(match.group("number")))
        if number in seen:
            warnings.append(
                f"{tasks_rel} line {heading.line + 1}: group {number} appears twice; "
                "the first is kept"
            )
            continue
        seen.add(number)
        try:
            tasks = parse_task_list(section_lines(lines, heading, headings))
        except TaskNestingError as exc:
            skipped.append(SkippedFile(tasks_rel, f"unreadable: group {number}: {exc}"))
            continue
        # The story's own record file (see Story.record_path), once a phase has written it.
        record = f"{change_rel}/records/group-{number}.md"
        own = (*files, record) if (root / record).is_file() else tuple(files)
        stories.append(
            Story(
                id=f"{change}:{number}",
                key=normalize_key(f"{change}-{number}"),
                title=match.group("title").strip(),
                status=status_from_tasks(*count_tasks(tasks)),
                source="openspec",
                group=change,
                group_title=title,
                path=tasks_rel,
                tasks=tasks,
                files=own,
                requirements=tuple(requirements),
                change_dir=change_rel,
            )
        )
    return SourceResult(tuple(stories), tuple(skipped), tuple(warnings))


def load_stories(workspace: Workspace) -> SourceResult:
    """Every OpenSpec story: changes alphabetically, groups in ``tasks.md`` order.

    Args:
        workspace: the workspace; ``paths_openspec`` names the OpenSpec root.
    """
    changes_dir = workspace.root / workspace.config.paths_openspec / "changes"
    try:
        with os.scandir(changes_dir) as scan:
            names = sorted(
                (e.name for e in scan if e.is_dir() and not e.name.startswith(".")),
                key=lambda name: (name.lower(), name),
            )
    except OSError:
        return SourceResult()
    stories: tuple[Story, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()
    for name in names:
        if name == ARCHIVE_DIR:
            continue
        if printable_name(name) != name:
            rel = relpath(workspace.root, changes_dir / printable_name(name))
            skipped += (SkippedFile(rel, "not-utf8: the change folder's name"),)
            continue
        result = load_change(workspace, changes_dir / name)
        stories += result.stories
        skipped += result.skipped
        warnings += result.warnings
    return SourceResult(stories, skipped, warnings)
