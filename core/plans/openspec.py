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
from typing import Any

from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, printable_name, read_text_file
from ..project.workspace import Workspace
from ..stories.keys import normalize_key
from ..stories.model import Requirement, Scenario, SkippedFile, SourceResult, Story, relpath
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
    section_ends,
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
    ends = section_ends(headings, len(lines))
    requirements: list[Requirement] = []
    removed = False
    for index, heading in enumerate(headings):
        if heading.level <= 2:
            removed = bool(_REMOVED_SECTION.match(heading.text))
            continue
        match = _REQUIREMENT.match(heading.text) if heading.level == 3 else None
        if match is None or removed:
            continue
        scenarios: list[Scenario] = []
        intro_end = ends[index]
        # The headings under this requirement, up to the next of level 3 or higher: each
        # heading is looked at by one requirement at most, so a spec is read in one pass.
        inner = index + 1
        while inner < len(headings) and headings[inner].level > 3:
            scenario = _SCENARIO.match(headings[inner].text) if headings[inner].level == 4 else None
            if scenario is not None:
                intro_end = min(intro_end, headings[inner].line)
                scenario_lines = lines[headings[inner].line + 1 : ends[inner]]
                scenarios.append(
                    Scenario(scenario.group("name").strip(), "\n".join(scenario_lines).strip())
                )
            inner += 1
        requirements.append(
            Requirement(
                capability=capability,
                name=match.group("name").strip(),
                text="\n".join(lines[heading.line + 1 : intro_end]).strip(),
                scenarios=tuple(scenarios),
            )
        )
    return tuple(requirements)


def _groups(headings: list[Heading]) -> list[tuple[int, re.Match[str]]]:
    """The task groups among ``headings``: each one's index and its heading's match."""
    return [
        (index, match)
        for index, heading in enumerate(headings)
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
MAX_GROUP_DIGITS = 18
"""Longest group number (``## 12. Title``) read; a longer one is a warning line."""
WALK_LIMIT = 5000
"""Most entries of one change folder looked at while matching its schema's ``generates``."""


@dataclass(frozen=True)
class ChangeSchema:
    """What a change's schema generates: ``(artifact id, generates glob)`` pairs in the
    schema's order, and the file ``apply`` tracks (the tasks)."""

    name: str
    artifacts: tuple[tuple[str, str], ...]
    tracks: str


MAX_GLOB_CHARS = 200
"""Longest ``generates`` glob of a schema matched; a longer one is a skipped line."""
MAX_SCHEMA_ARTIFACTS = 32
"""Most artifacts of one schema read; the rest are a skipped line."""
_GLOBSTAR = None
"""A ``**`` path segment: any number of folders, none included."""


def _glob_chunk(text: str) -> tuple[re.Pattern[str], int]:
    """One star-free piece of a glob segment (literals, ``?``, ``[…]``) as a regex with no
    repetition, and the characters it matches: trying it at a position costs at most its
    length, so nothing backtracks."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        close = text.find("]", index + 2) if char == "[" else -1
        if char == "?":
            out.append(".")
        elif close != -1:
            body = text[index + 1 : close]
            negate = body[:1] in ("!", "^")
            body = body[1:] if negate else body
            items: list[str] = []
            at = 0
            while at < len(body):
                if at + 2 < len(body) and body[at + 1] == "-" and body[at] <= body[at + 2]:
                    items.append(f"{re.escape(body[at])}-{re.escape(body[at + 2])}")
                    at += 3
                else:
                    items.append(re.escape(body[at]))
                    at += 1
            out.append(f"[{'^' if negate else ''}{''.join(items)}]" if items else "(?!)")
            index = close
        else:
            out.append(re.escape(char))
        index += 1
    # Each atom (a literal, `?`, a class) matches one character.
    return re.compile("".join(out), re.DOTALL), len(out)


@dataclass(frozen=True)
class _Segment:
    """One ``/``-separated part of a glob, split at its stars: the pieces between them (one
    piece when it has no star), each with the length it matches."""

    pieces: tuple[tuple[re.Pattern[str], int], ...]

    def matches(self, name: str) -> bool:
        """Whether one path part (no ``/``) matches, in time linear in the two lengths times
        the pieces: with stars only between fixed-length pieces, the leftmost place of each
        middle piece is as good as any (nothing to backtrack into)."""
        pieces = self.pieces
        first, first_len = pieces[0]
        if len(pieces) == 1:
            return len(name) == first_len and first.match(name) is not None
        last, last_len = pieces[-1]
        stop = len(name) - last_len
        if first_len > stop or first.match(name) is None or last.match(name, stop) is None:
            return False
        at = first_len
        for piece, length in pieces[1:-1]:
            found = piece.search(name, at, stop)
            if found is None:
                return False
            at = found.start() + length
        return True


@dataclass(frozen=True)
class Glob:
    """A ``generates`` glob over change-relative paths: ``*`` and ``?`` and ``[…]`` within
    one name, a ``**`` part any number of folders.

    Matched part by part, never through a backtracking regex: a glob like
    ``*a*a*a*a*a*a*b`` costs time linear in the path, not exponential.
    """

    parts: tuple[_Segment | None, ...]

    @classmethod
    def parse(cls, pattern: str) -> Glob:
        """The glob ``pattern`` (at most :data:`MAX_GLOB_CHARS` characters, checked by the
        caller)."""
        parts: list[_Segment | None] = []
        for part in pattern.split("/"):
            if part == "**":
                if not parts or parts[-1] is not _GLOBSTAR:
                    parts.append(_GLOBSTAR)
                continue
            pieces = tuple(_glob_chunk(chunk) for chunk in part.split("*"))
            parts.append(_Segment(pieces))
        return cls(tuple(parts))

    def matches(self, path: str) -> bool:
        """Whether the change-relative ``path`` matches: the parts walked as a set of states,
        each path part looked at once per state."""
        parts = self.parts
        states = self._closure({0})
        for name in path.split("/"):
            following: set[int] = set()
            for state in states:
                if state == len(parts):
                    continue
                part = parts[state]
                if part is _GLOBSTAR:
                    following.add(state)
                elif part.matches(name):
                    following.add(state + 1)
            if not following:
                return False
            states = self._closure(following)
        return len(parts) in states

    def _closure(self, states: set[int]) -> set[int]:
        """``states`` with the state past each ``**`` part they stand on (it may match no
        folder at all)."""
        found = set(states)
        for state in sorted(states):
            while state < len(self.parts) and self.parts[state] is _GLOBSTAR:
                state += 1
                found.add(state)
        return found


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
    listed = data.get("artifacts")
    rel = relpath(root, path)
    if isinstance(listed, list) and len(listed) > MAX_SCHEMA_ARTIFACTS:
        skipped.append(
            SkippedFile(
                rel,
                f"{len(listed):,} artifacts; the first {MAX_SCHEMA_ARTIFACTS} are read",
            )
        )
        listed = listed[:MAX_SCHEMA_ARTIFACTS]
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict):
            artifact = scalar_text(item.get("id"))
            generates = scalar_text(item.get("generates"))
            if generates is not None and len(generates) > MAX_GLOB_CHARS:
                skipped.append(
                    SkippedFile(
                        rel,
                        f"artifact {str(artifact)[:40]!r}: a 'generates' glob over "
                        f"{MAX_GLOB_CHARS} characters; not matched",
                    )
                )
                continue
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
    taken = {schema.tracks}
    for _artifact, pattern in schema.artifacts:
        glob = Glob.parse(pattern)
        for rel in files:
            if rel not in taken and glob.matches(rel):
                out.append(rel)
                taken.add(rel)
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
    # One piece: the tasks-less story and the group stories share the title, files and
    # requirements read above, and the module sits at its 600-line limit: a helper here
    # would push it over.
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

    ends = section_ends(headings, len(lines))
    stories: list[Story] = []
    seen: set[str] = set()
    for index, match in groups:
        heading = headings[index]
        digits = match.group("number")
        if len(digits) > MAX_GROUP_DIGITS:
            # Python refuses to turn a number past 4,300 digits into an int; no real group
            # number comes near the bound.
            warnings.append(
                f"{tasks_rel} line {heading.line + 1}: a group number of more than "
                f"{MAX_GROUP_DIGITS} digits; the group is not read"
            )
            continue
        number = str(int(digits))
        if number in seen:
            warnings.append(
                f"{tasks_rel} line {heading.line + 1}: group {number} appears twice; "
                "the first is kept"
            )
            continue
        seen.add(number)
        try:
            tasks = parse_task_list(lines[heading.line + 1 : ends[index]])
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
