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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...project.textfiles import TextProblem, printable_name, read_text_file
from ...project.workspace import Workspace
from ..keys import normalize_key
from ..model import Requirement, Scenario, SkippedFile, SourceResult, Story, relpath
from .markdown import (
    Heading,
    PlanYamlError,
    TaskNestingError,
    YamlDocument,
    count_tasks,
    iter_headings,
    load_yaml,
    parse_task_list,
    scalar_text,
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


CHANGE_META = ".openspec.yaml"
DEFAULT_SCHEMA = "spec-driven"
# OpenSpec's built-in spec-driven schema; its specs are the `spec.md` of each capability
# folder, however deep (`specs/<area>/<capability>/spec.md`), as OpenSpec's own change
# parser reads them.
_DEFAULT_ARTIFACTS = (
    ("proposal", "proposal.md"),
    ("specs", "specs/**/spec.md"),
    ("design", "design.md"),
    ("tasks", "tasks.md"),
)
_DEFAULT_TRACKS = "tasks.md"
WALK_LIMIT = 5000
"""Most entries of one change folder looked at while matching its schema's ``generates``."""


@dataclass(frozen=True)
class ChangeSchema:
    """What a change's schema generates: ``(artifact id, generates glob)`` pairs in the
    schema's order, and the file ``apply`` tracks (the tasks)."""

    name: str
    artifacts: tuple[tuple[str, str], ...]
    tracks: str


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``generates`` as a regex over change-relative paths: ``**/`` any folders, ``*`` and
    ``?`` within one name."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif pattern[index] == "*":
            out.append("[^/]*")
            index += 1
        elif pattern[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(pattern[index]))
            index += 1
    return re.compile("".join(out) + r"\Z")


def _yaml_file(
    path: Path, root: Path, limit: int, skipped: list[SkippedFile]
) -> YamlDocument | None:
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            skipped.append(SkippedFile(relpath(root, path), str(text)))
        return None
    try:
        return load_yaml(text)
    except PlanYamlError as exc:
        skipped.append(SkippedFile(relpath(root, path), f"malformed: {exc}"))
        return None


def change_schema(workspace: Workspace, name: str, skipped: list[SkippedFile]) -> ChangeSchema:
    """The schema called ``name``: the project's own ``<openspec>/schemas/<name>/schema.yaml``
    when there is one, else OpenSpec's built-in ``spec-driven`` layout."""
    root = workspace.root
    path = root / workspace.config.paths_openspec / "schemas" / name / "schema.yaml"
    document = (
        _yaml_file(path, root, workspace.config.read_max_bytes, skipped)
        if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name)
        else None
    )
    data = document.data if document is not None else None
    if not isinstance(data, dict):
        return ChangeSchema(name, _DEFAULT_ARTIFACTS, _DEFAULT_TRACKS)
    artifacts: list[tuple[str, str]] = []
    for item in data.get("artifacts") or []:
        if isinstance(item, dict):
            artifact = scalar_text(item.get("id"))
            generates = scalar_text(item.get("generates"))
            if artifact and generates and not generates.startswith("/") and ".." not in generates:
                artifacts.append((artifact, generates))
    apply = data.get("apply")
    tracks = scalar_text(apply.get("tracks")) if isinstance(apply, dict) else None
    if tracks is None:
        tracks = next((g for a, g in artifacts if a == "tasks"), _DEFAULT_TRACKS)
    return ChangeSchema(name, tuple(artifacts), tracks)


def _change_files(change_dir: Path) -> list[str]:
    """Every regular file of a change folder, change-relative, sorted; symlinked folders are
    not entered and names that are not UTF-8 are left out."""
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(change_dir, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "records")
        base = Path(folder).relative_to(change_dir).as_posix()
        for name in files:
            seen += 1
            if seen > WALK_LIMIT:
                return sorted(found)
            rel = name if base == "." else f"{base}/{name}"
            if printable_name(rel) == rel and not name.startswith("."):
                found.append(rel)
    return sorted(found)


def _generated(schema: ChangeSchema, files: list[str]) -> list[str]:
    """The change's files its schema generates, in the schema's artifact order; the tracked
    tasks file is left out (the prompt carries the story's own group of it)."""
    out: list[str] = []
    for _artifact, pattern in schema.artifacts:
        regex = _glob_regex(pattern)
        for rel in files:
            if rel != schema.tracks and rel not in out and regex.match(rel):
                out.append(rel)
    return out


def _change_meta(
    change_dir: Path, root: Path, limit: int, skipped: list[SkippedFile]
) -> dict[str, Any]:
    document = _yaml_file(change_dir / CHANGE_META, root, limit, skipped)
    data = document.data if document is not None else None
    return data if isinstance(data, dict) else {}


def project_schema(workspace: Workspace, skipped: list[SkippedFile]) -> str:
    """The project's default schema: ``schema`` of ``<openspec>/config.yaml``, else
    ``spec-driven``."""
    config = workspace.root / workspace.config.paths_openspec / "config.yaml"
    document = _yaml_file(config, workspace.root, workspace.config.read_max_bytes, skipped)
    data = document.data if document is not None else None
    name = scalar_text(data.get("schema")) if isinstance(data, dict) else None
    return name or DEFAULT_SCHEMA


def load_change(
    workspace: Workspace, change_dir: Path, default_schema: str | None = None
) -> SourceResult:
    """The stories of one change folder.

    Each ``## N.`` group of the tasks file its schema tracks is a story. A change with no
    tasks yet (only ``.openspec.yaml``, from ``openspec new change``) is one story with the
    change's name as its id, planned, so it is listed rather than dropped.
    """
    root = workspace.root
    change = change_dir.name
    skipped: list[SkippedFile] = []
    warnings: list[str] = []
    limit = workspace.config.read_max_bytes
    meta = _change_meta(change_dir, root, limit, skipped)
    schema_name = scalar_text(meta.get("schema")) or default_schema
    if schema_name is None:
        schema_name = project_schema(workspace, skipped)
    schema = change_schema(workspace, schema_name, skipped)
    generated = _generated(schema, _change_files(change_dir))
    change_rel = relpath(root, change_dir)
    files = [f"{change_rel}/{name}" for name in generated]
    requirements: list[Requirement] = []
    for rel in generated:
        parts = rel.split("/")
        if parts[-1] != "spec.md" or len(parts) < 3 or parts[0] != "specs":
            continue
        spec_path = change_dir / rel
        spec_text = read_text_file(spec_path, root=root, limit=limit)
        if isinstance(spec_text, TextProblem):
            skipped.append(SkippedFile(f"{change_rel}/{rel}", str(spec_text)))
            continue
        # Nested capabilities keep their path: specs/<area>/<capability>/spec.md.
        requirements.extend(parse_requirements(spec_text, "/".join(parts[1:-1])))
    title = _change_title(change_dir, root, skipped, limit) or scalar_text(meta.get("goal"))
    title = title or change

    tasks_path = change_dir / schema.tracks
    tasks_rel = relpath(root, tasks_path)
    if not os.path.lexists(tasks_path):
        if not os.path.lexists(change_dir / CHANGE_META):
            # Before OpenSpec 1.x wrote .openspec.yaml, a change with no tasks was a proposal
            # only: listed as passed over, with the reason, never silently left out.
            reason = "no-tasks: the change has no tasks.md yet, so it has no stories"
            return SourceResult(skipped=(SkippedFile(change_rel + "/", reason),))
        story = Story(
            id=change,
            key=normalize_key(change),
            title=title,
            status="backlog",
            source="openspec",
            group=change,
            group_title=title,
            path=None,
            files=tuple(files),
            requirements=tuple(requirements),
            change_dir=change_rel,
            layout="openspec",
            status_source=relpath(root, change_dir / CHANGE_META),
        )
        return SourceResult((story,), tuple(skipped), tuple(warnings))
    text = read_text_file(tasks_path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        return SourceResult(skipped=(*skipped, SkippedFile(tasks_rel, str(text))))
    lines = text.splitlines()
    headings = list(iter_headings(lines))
    groups = _groups(headings)
    if not groups:
        reason = "no-task-groups: no '## N. Title' headings"
        return SourceResult(skipped=(*skipped, SkippedFile(tasks_rel, reason)))

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
                layout="openspec",
                status_source=tasks_rel,
            )
        )
    return SourceResult(tuple(stories), tuple(skipped), tuple(warnings))


@dataclass(frozen=True)
class ConfigText:
    """Text of ``<openspec>/config.yaml`` that OpenSpec hands the agent: its ``context``
    (every artifact, apply, archive) or the ``rules`` of one artifact (that artifact's
    creation only)."""

    label: str
    text: str
    reason: str
    given_when_applying: bool


CONFIG_CONTEXT_MAX = 50 * 1024
"""OpenSpec's own cap on ``context``: larger text is refused by its loader."""


def config_texts(workspace: Workspace) -> tuple[tuple[ConfigText, ...], tuple[SkippedFile, ...]]:
    """The ``context`` and ``rules`` of ``<openspec>/config.yaml``, read fresh, as the text
    OpenSpec wraps in ``<project_context>`` and ``<rules>``; and what could not be read."""
    skipped: list[SkippedFile] = []
    rel = f"{workspace.config.paths_openspec.rstrip('/')}/config.yaml"
    path = workspace.root / rel
    if not os.path.lexists(path):
        return (), ()
    document = _yaml_file(path, workspace.root, workspace.config.read_max_bytes, skipped)
    data = document.data if document is not None else None
    if not isinstance(data, dict):
        return (), tuple(skipped)
    texts: list[ConfigText] = []
    context = data.get("context")
    if isinstance(context, str) and context.strip():
        if len(context.encode("utf-8")) > CONFIG_CONTEXT_MAX:
            skipped.append(
                SkippedFile(
                    rel, f"context over OpenSpec's {CONFIG_CONTEXT_MAX:,}-byte cap; not sent"
                )
            )
        else:
            texts.append(ConfigText(f"{rel} (context)", context, "openspec config: context", True))
    rules = data.get("rules")
    if isinstance(rules, dict):
        for artifact, items in rules.items():
            if not isinstance(artifact, str) or not isinstance(items, list):
                continue
            lines = [f"- {item}" for item in items if isinstance(item, str) and item.strip()]
            if lines:
                texts.append(
                    ConfigText(
                        f"{rel} (rules: {artifact})",
                        "\n".join(lines) + "\n",
                        f"openspec config: rules for {artifact}; OpenSpec gives them only when "
                        f"it writes {artifact}",
                        False,
                    )
                )
    return tuple(texts), tuple(skipped)


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
    skipped_default: list[SkippedFile] = []
    default_schema = project_schema(workspace, skipped_default)
    skipped: tuple[SkippedFile, ...] = tuple(skipped_default)
    warnings: tuple[str, ...] = ()
    for name in names:
        if name == ARCHIVE_DIR:
            continue
        if printable_name(name) != name:
            rel = relpath(workspace.root, changes_dir / printable_name(name))
            skipped += (SkippedFile(rel, "not-utf8: the change folder's name"),)
            continue
        result = load_change(workspace, changes_dir / name, default_schema)
        stories += result.stories
        skipped += result.skipped
        warnings += result.warnings
    return SourceResult(stories, skipped, warnings)
