"""BMAD's build specs (v6.3+), quick specs, compiled epic contexts and bmad-spec folders.

* A build spec ``<artifacts>/spec-<key>-<slug>.md`` is the working document of one epic story.
  Its front matter carries ``status`` (``draft | ready-for-dev | in-progress | in-review |
  done``), optionally ``story_key`` (the sprint-status key) and ``context:`` — the files BMAD
  itself wants the implementing agent to load, as ``{project-root}/…`` paths.
* A quick spec has no key in its name (``tech-spec-<slug>.md`` of v6.0–6.2, ``spec-<slug>.md``
  since): nothing ties it to a story unless the user attaches it (``[specs] attach``).
* ``<artifacts>/epic-<N>-context.md`` is epic N's compiled context; BMAD recompiles it when a
  file of the planning folder is newer, so such a one is reported stale (by commit times
  where git knows the files unchanged: a fresh clone's file times are checkout order).
* ``tech-spec-epic-<N>.md`` (BMAD v5's epic tech context, in the artifacts folder or the
  output folder) is epic N's technical specification: every story of the epic names it in
  ``Story.epic_tech_spec``.
* A bmad-spec folder ``<output>/specs/spec-<slug>/`` holds ``SPEC.md``, ``stories.yaml`` (the
  stories in build order: ``id``, ``title``, ``description``, never a status) and
  ``stories/<id>-<slug>.md`` — each a build spec, whose ``status`` is the story's.

This module reads those files into plain records; :mod:`promptdeck.core.plans.catalog` joins them
to the stories.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..processes import resolve_program, safe_git_environment, work_tree_of
from ..project.listing import folder_names
from ..project.textfiles import TextProblem, read_text_file, read_text_head
from ..project.workspace import Workspace
from ..stories.companions import companion_kind
from ..stories.keys import leading_key, natural_key, normalize_key, number_text
from ..stories.model import (
    SecondClaim,
    SourceResult,
    Story,
    Task,
    UnreadableEntry,
    read_status,
    relpath,
)
from .epic_titles import epic_of
from .markdown import (
    PlanYamlError,
    TaskNestingError,
    YamlDocument,
    iter_headings,
    load_yaml,
    parse_task_list,
    read_front_matter,
    scalar_text,
    section_lines,
)
from .sprint_status import SPRINT_STATUS_NAME, SprintStatusError, parse_sprint_status

SPEC_PREFIX = "spec-"
TECH_SPEC_PREFIX = "tech-spec-"
EPIC_CONTEXT_NAME = re.compile(r"^epic-(?P<epic>[A-Za-z0-9]+)-context\.md$", re.IGNORECASE)
_EPIC_CONTEXT_HEADING = re.compile(r"^Epic\s+(?P<epic>[A-Za-z0-9]+)\s+Context\s*:", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"\{(?P<name>[A-Za-z_][A-Za-z0-9_-]*)\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TASKS_HEADING = re.compile(r"^Tasks\b", re.IGNORECASE)
_SPEC_ID = re.compile(r"^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*$")
EPIC_TECH_SPEC_NAME = re.compile(
    r"^tech-spec-epic-(?P<epic>[A-Za-z0-9]+)(?:-[^/]*)?\.md$", re.IGNORECASE
)
"""BMAD v5's per-epic tech spec: ``tech-spec-epic-2.md`` (``tech-spec-epic-2-payments.md``)."""
PLANNING_SCAN_LIMIT = 5000
"""Most entries of the planning folder looked at to tell whether an epic context is stale."""
STALE_MARGIN = 2.0
"""Seconds a planning file's time must pass an epic context's by to count as newer, when
only file times are known: file systems round times, and a checkout writes files in no
meaningful order within a second or two."""
GIT_TIMEOUT = 5.0
"""Most seconds one git call for commit times may take; past it, file times are used."""
GIT_LOG_LIMIT = 200
"""Most commits read back to find when an epic context and its planning files changed."""


@dataclass(frozen=True)
class ContextEntry:
    """One file a spec asks the agent to load.

    Attributes:
        path: root-relative (placeholders resolved); an absolute path stays as written, so
            the injection shows it outside the project and never reads it.
        line: the spec's line naming it.
        reason: why it is in the prompt (``context: list``, ``companions: list``).
    """

    path: str
    line: int
    reason: str


@dataclass(frozen=True)
class BuildSpec:
    """A BMAD build spec, quick spec or bmad-spec story file, as its front matter says.

    Attributes:
        path: root-relative path of the spec.
        key: the normalized story key (from ``story_key`` or the name), None for a quick spec.
        key_text: the key as the project writes it (``1-2``).
        title: front matter ``title``, else the first ``#`` heading, else the file name.
        raw_status: the ``status`` value as written, None when there is none.
        status_line: the line of ``status`` (0 when there is none).
        context: the ``context:`` files, in order.
        tasks: the checkboxes of its ``## Tasks …`` section.
        story_key: front matter ``story_key`` as written (``2-3-placement``), None without.
    """

    path: str
    key: str | None
    key_text: str | None
    title: str
    raw_status: str | None
    status_line: int
    context: tuple[ContextEntry, ...]
    tasks: tuple[Task, ...]
    story_key: str | None = None


@dataclass(frozen=True)
class EpicContext:
    """A compiled ``epic-<N>-context.md``: its path and, when stale, the newer planning file."""

    epic: str
    path: str
    newer: str | None

    @property
    def reason(self) -> str:
        """Why it is in the prompt, and whether BMAD would recompile it first."""
        if self.newer is None:
            return f"epic context of epic {self.epic}"
        return f"epic context of epic {self.epic} (stale: {self.newer} is newer)"


@dataclass
class SpecScan:
    """Everything this module found: specs with a key, quick specs, epic contexts, problems."""

    keyed: list[BuildSpec]
    quick: list[BuildSpec]
    epic_contexts: dict[str, EpicContext]
    problems: list[UnreadableEntry]
    epic_tech_specs: dict[str, str] = field(default_factory=dict)
    """Epic id → root-relative ``tech-spec-epic-<N>.md``."""
    story_tech_specs: list[tuple[str, str]] = field(default_factory=list)
    """``(path, key)`` of each ``tech-spec-<key>-….md``: seed 000's tech spec of a story,
    found by its name for that story; one naming no known story is tied to none."""


def output_folder(workspace: Workspace) -> str:
    """BMAD's ``{output_folder}``: the folder holding the artifacts folder (``_bmad-output``)."""
    parent = posixpath.dirname(workspace.config.paths_artifacts.rstrip("/"))
    return parent or "."


def resolve_context_path(raw: str, workspace: Workspace, base: str = "") -> str | None:
    """A ``context:`` path as a root-relative path, or None when it cannot name a file.

    ``{project-root}`` is the project; ``{planning_artifacts}``, ``{implementation_artifacts}``
    and ``{output_folder}`` are the configured folders. A path with no placeholder is taken
    relative to ``base`` (a spec folder's companions) or the root; an absolute path is kept
    as written, so the injection reports it outside the project rather than reading it.
    """
    text = raw.strip()
    if not text or _CONTROL.search(text):
        return None
    config = workspace.config
    folders = {
        "project-root": "",
        "project_root": "",
        "planning_artifacts": config.paths_planning,
        "implementation_artifacts": config.paths_artifacts,
        "output_folder": output_folder(workspace),
    }
    unknown = [
        m.group("name") for m in _PLACEHOLDER.finditer(text) if m.group("name") not in folders
    ]
    if unknown:
        return None
    placed = _PLACEHOLDER.search(text) is not None
    text = _PLACEHOLDER.sub(lambda m: folders[m.group("name")] + "/", text)
    if not placed and text.startswith("/"):
        return text
    joined = posixpath.join(base, text.lstrip("/")) if not placed else text.lstrip("/")
    return posixpath.normpath(joined)


MAX_CONTEXT_ENTRIES = 1000
"""Most files of one ``context:``-like list read; the rest are one problem line. Each file
is a row of the injection and a look at the disk: no real plan lists more than a few dozen."""


def context_entries(
    document: YamlDocument,
    field: str,
    reason: str,
    workspace: Workspace,
    rel: str,
    key: str | None,
    problems: list[UnreadableEntry],
    base: str = "",
) -> tuple[ContextEntry, ...]:
    """The files a ``context:``-like list of ``document`` names (``field``: ``context``,
    ``companions``), each resolved (:func:`resolve_context_path`) with its line and ``reason``;
    an entry that names no usable path, or a field that is no list, is reported in
    ``problems`` against ``rel`` and ``key``."""
    value = document.data.get(field) if isinstance(document.data, dict) else None
    if value is None:
        return ()
    line = document.line_of(field, 1)
    if not isinstance(value, list):
        problems.append(
            UnreadableEntry(rel, line, f"'{field}' is not a list of paths; not read", key)
        )
        return ()
    lines = document.item_lines.get(field, ())
    if len(value) > MAX_CONTEXT_ENTRIES:
        problems.append(
            UnreadableEntry(
                rel,
                lines[MAX_CONTEXT_ENTRIES] if len(lines) > MAX_CONTEXT_ENTRIES else line,
                f"'{field}' lists {len(value):,} files; the first {MAX_CONTEXT_ENTRIES:,} are read",
                key,
            )
        )
        value = value[:MAX_CONTEXT_ENTRIES]
    entries: list[ContextEntry] = []
    for index, item in enumerate(value):
        item_line = lines[index] if index < len(lines) else line
        path = resolve_context_path(item, workspace, base) if isinstance(item, str) else None
        if path is None:
            problems.append(
                UnreadableEntry(
                    rel, item_line, f"'{field}' entry is not a usable path; not read", key
                )
            )
            continue
        entries.append(ContextEntry(path, item_line, reason))
    return tuple(entries)


def _title(fields: dict[str, Any], lines: list[str], start: int, fallback: str) -> str:
    title = scalar_text(fields.get("title"))
    if title:
        return title
    for heading in iter_headings(lines[start:]):
        if heading.level == 1 and heading.text:
            return heading.text
    return fallback


def _tasks(lines: list[str]) -> tuple[Task, ...]:
    headings = list(iter_headings(lines))
    for heading in headings:
        if heading.level == 2 and _TASKS_HEADING.match(heading.text):
            return parse_task_list(section_lines(lines, heading, headings))
    return ()


def read_build_spec(
    path: Path,
    rel: str,
    workspace: Workspace,
    problems: list[UnreadableEntry],
    *,
    name_key: str | None,
) -> BuildSpec | None:
    """Read one spec file; None (and an unreadable entry in ``problems``) when it cannot be read.

    Args:
        path: the file.
        rel: its root-relative path.
        workspace: the workspace (root, limits, folders for placeholders).
        problems: where unreadable files and entries are reported.
        name_key: the story key its file name carries, if any; ``story_key`` in its front
            matter wins over it.
    """
    text = read_text_file(path, root=workspace.root, limit=workspace.config.read_max_bytes)
    if isinstance(text, TextProblem):
        problems.append(UnreadableEntry(rel, None, str(text), name_key))
        return None
    lines = text.splitlines()
    try:
        front = read_front_matter(lines)
    except PlanYamlError as exc:
        problems.append(UnreadableEntry(rel, exc.line, f"front matter: {exc.message}", name_key))
        return None
    fields: dict[str, Any] = front.fields if front else {}
    document = front.document if front else YamlDocument({}, {}, {})
    key_text = name_key
    story_key = scalar_text(fields.get("story_key"))
    if story_key:
        lead = leading_key(story_key) or normalize_key(story_key)
        key_text = story_key if lead == normalize_key(story_key) else story_key[: len(lead)]
    key = normalize_key(key_text) if key_text else None
    raw_status = scalar_text(fields.get("status"))
    try:
        tasks = _tasks(lines)
    except TaskNestingError as exc:
        problems.append(UnreadableEntry(rel, None, f"tasks: {exc}", key))
        tasks = ()
    context = context_entries(document, "context", "context: list", workspace, rel, key, problems)
    return BuildSpec(
        path=rel,
        key=key,
        key_text=key_text,
        title=_title(fields, lines, front.body_start if front else 0, path.stem),
        raw_status=raw_status,
        status_line=document.line_of("status", 0) if raw_status else 0,
        context=context,
        tasks=tasks,
        story_key=story_key,
    )


def _spec_name_key(name: str) -> tuple[bool, str | None]:
    """Whether ``name`` is a spec's name, and the story key it starts with (None: a quick
    spec). ``tech-spec-<key>-…`` is seed 000's tech-spec file of that story, not a spec."""
    lower = name.lower()
    if not lower.endswith(".md"):
        return False, None
    if lower.startswith(TECH_SPEC_PREFIX):
        return leading_key(name[len(TECH_SPEC_PREFIX) :]) is None, None
    if lower.startswith(SPEC_PREFIX):
        rest = name[len(SPEC_PREFIX) :]
        lead = leading_key(rest)
        if lead is None or companion_kind(name) is not None or _second_key(rest, lead):
            # A change proposal or a spec naming two stories (`spec-1-16-1-20-sprint-change-
            # proposal.md`) is no one story's spec: a quick spec.
            return True, None
        return True, rest[: len(lead)]
    return False, None


def _second_key(rest: str, lead: str) -> bool:
    """Whether another story of the same epic follows the first key: ``1-16-1-20-x``."""
    after = rest[len(lead) :].lower()
    epic = re.escape(lead.split("-", 1)[0])
    return re.match(rf"[-_.]{epic}[-_.][0-9]+(?![0-9a-z])", after) is not None


_SCANNED_STARTS = frozenset(("epic", SPEC_PREFIX[:4], TECH_SPEC_PREFIX[:4]))
# Only these first letters lower-case to one of those starts: one set lookup a name spares
# a lower-cased copy of tens of thousands of names.
_SCANNED_FIRSTS = frozenset(c for start in _SCANNED_STARTS for c in (start[0], start[0].upper()))


def scan_artifacts(workspace: Workspace) -> SpecScan:
    """The build specs, quick specs and epic contexts of the artifacts folder."""
    scan = SpecScan([], [], {}, [])
    artifacts = workspace.root / workspace.config.paths_artifacts
    if not workspace.contains(artifacts):
        return scan
    names = folder_names(artifacts)
    if not names:
        return scan
    prefix = relpath(workspace.root, artifacts) + "/"
    # Only names starting like an epic context or a spec are looked at (and sorted): an
    # artifacts folder holds thousands of logs and notes. Case-insensitive, then exact order.
    wanted = [
        name
        for name in names
        if name[:1] in _SCANNED_FIRSTS and name[:4].lower() in _SCANNED_STARTS
    ]
    readable: list[str] = []
    for name in sorted(sorted(wanted), key=str.lower):
        epic = EPIC_CONTEXT_NAME.match(name)
        if epic is not None:
            found = _epic_context(workspace, artifacts / name, prefix + name, epic.group("epic"))
            if found is not None and found[0].epic not in scan.epic_contexts:
                scan.epic_contexts[found[0].epic] = found[0]
                if found[1]:
                    readable.append(found[0].epic)
            continue
        tech_epic = EPIC_TECH_SPEC_NAME.match(name)
        if tech_epic is not None:
            scan.epic_tech_specs.setdefault(_epic_id(tech_epic.group("epic")), prefix + name)
            continue
        is_spec, name_key = _spec_name_key(name)
        if not is_spec:
            if name.lower().startswith(TECH_SPEC_PREFIX):
                lead = leading_key(name[len(TECH_SPEC_PREFIX) :])
                if lead is not None:
                    scan.story_tech_specs.append((prefix + name, lead))
            continue
        spec = read_build_spec(
            artifacts / name, prefix + name, workspace, scan.problems, name_key=name_key
        )
        if spec is not None:
            (scan.keyed if spec.key else scan.quick).append(spec)
    _epic_tech_specs_beside(workspace, artifacts, scan)
    # Whether each is stale, asked of git once for all of them.
    newer = epic_contexts_newer(
        workspace, [scan.epic_contexts[epic_id].path for epic_id in readable]
    )
    for epic_id in readable:
        context = scan.epic_contexts[epic_id]
        scan.epic_contexts[epic_id] = replace(context, newer=newer[context.path])
    return scan


def _epic_id(epic: str) -> str:
    """An epic id as stories group by it: ``02`` → ``2``, ``a`` → ``A``."""
    return number_text(epic) if epic.isdecimal() else epic.upper()


def _epic_tech_specs_beside(workspace: Workspace, artifacts: Path, scan: SpecScan) -> None:
    """The ``tech-spec-epic-<N>.md`` files of the output and planning folders (BMAD v5 wrote
    them to ``{output_folder}``, one level above ``sprint-artifacts/``); the artifacts
    folder's own come first."""
    config = workspace.config
    for rel in (output_folder(workspace), config.paths_planning.strip("/")):
        folder = workspace.root / rel
        if folder.resolve() == artifacts.resolve() or not workspace.contains(folder):
            continue
        names = folder_names(folder) or []
        for name in sorted(n for n in names if n[:15].lower() == "tech-spec-epic-"):
            match = EPIC_TECH_SPEC_NAME.match(name)
            if match is not None and (folder / name).is_file():
                path = name if rel in ("", ".") else f"{rel}/{name}"
                scan.epic_tech_specs.setdefault(_epic_id(match.group("epic")), path)


def _newest_planning_file(workspace: Workspace, than: float) -> str | None:
    """A planning-folder file modified after ``than``, or None (symlinks are not followed)."""
    planning = workspace.root / workspace.config.paths_planning
    pending = [planning]
    seen = 0
    while pending and seen < PLANNING_SCAN_LIMIT:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif (
                        entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_mtime > than
                    ):
                        return relpath(workspace.root, Path(entry.path))
        except OSError:
            continue
    return None


class _ReadOnlyGit:
    """Bounded, read-only git calls on the work tree holding the project, running none of
    the repository's own programs.

    The repository is the ``.git`` found walking up from the project root, named to git
    explicitly, so a bare repository committed inside a plan folder is never taken for it;
    the ``git`` run is the one on an absolute ``PATH`` entry outside the project; the
    repository's filter drivers are switched off (``ls-files -m`` may hash a file through
    them), as are its fsmonitor, hooks and signature checks; no remote is reached (a partial
    clone's missing tree is not fetched: the call fails, and file times decide); no lock is
    taken.
    """

    def __init__(self, workspace: Workspace) -> None:
        self._root = workspace.root.resolve()
        self._command: list[str] | None = None
        self._env: dict[str, str] = {}
        executable = resolve_program("git", self._root)
        work_tree = work_tree_of(self._root)
        if executable is None or work_tree is None:
            return
        self._command = [executable, "--no-pager", "-c", "core.quotepath=false"]
        self._env = {
            **os.environ,
            **safe_git_environment(work_tree / ".git", work_tree),
            "GIT_OPTIONAL_LOCKS": "0",
        }
        drivers = self.run("config", "--name-only", "--get-regexp", r"^filter\.", allowed=(0, 1))
        names = {line.split(".")[1] for line in (drivers or "").splitlines() if "." in line}
        if names:
            self._env.update(safe_git_environment(work_tree / ".git", work_tree, tuple(names)))

    def run(self, *args: str, allowed: tuple[int, ...] = (0,)) -> str | None:
        """What one call prints, or None (no git, no repository, a timeout, an error)."""
        if self._command is None:
            return None
        try:
            done = subprocess.run(
                [*self._command, *args],
                cwd=self._root,
                env=self._env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode not in allowed:
            return None
        return done.stdout.decode("utf-8", "replace")


def _mtime(workspace: Workspace, rel: str) -> float | None:
    try:
        return (workspace.root / rel).lstat().st_mtime
    except OSError:
        return None


@dataclass(frozen=True)
class _GitTimes:
    """What git says of the epic contexts and the planning folder: each path's newest
    commit time (among the last :data:`GIT_LOG_LIMIT` commits touching them), and the paths
    changed since (modified, staged or untracked)."""

    committed: dict[str, int]
    dirty: frozenset[str]


def _git_times(workspace: Workspace, contexts: list[str]) -> _GitTimes | None:
    """A few bounded git calls for every epic context at once; None when git cannot tell."""
    git = _ReadOnlyGit(workspace)
    paths = ["--", *contexts, workspace.config.paths_planning.strip("/")]
    log = git.run(
        "log", f"-n{GIT_LOG_LIMIT}", "--format=%x01%ct", "--name-only", "--relative", *paths
    )
    if log is None:
        return None
    changed = git.run("ls-files", "-z", "-m", "-o", "--exclude-standard", *paths)
    staged = git.run("diff", "--cached", "--name-only", "-z", "--relative", *paths)
    if changed is None or staged is None:
        return None
    committed: dict[str, int] = {}
    when = 0
    for line in log.splitlines():
        if line.startswith("\x01"):
            when = int(line[1:]) if line[1:].isdigit() else 0
        elif line.strip():
            committed.setdefault(line, when)
    dirty = frozenset(path for path in (changed + staged).split("\0") if path)
    return _GitTimes(committed, dirty)


def _newer_by_git(workspace: Workspace, times: _GitTimes, context: str) -> str | None:
    """The planning file changed after the epic context ``context``, by git's account.

    A file git holds unchanged is dated by its last commit; a changed or untracked one by
    its file time (an edit since the checkout is real evidence). Commits of the same second
    say nothing.
    """
    planning = workspace.config.paths_planning.strip("/")
    context_time: float | None
    if context in times.dirty or context not in times.committed:
        context_time = _mtime(workspace, context)
        if context_time is None:
            return None
        # A context written since its checkout: a file time, so the margin applies.
        margin = STALE_MARGIN
    else:
        context_time, margin = times.committed[context], 0.0
    newest: tuple[float, str] | None = None
    for path, commit_time in times.committed.items():
        if not path.startswith(planning + "/") or path in times.dirty:
            continue
        later = commit_time > context_time + margin
        if (
            later
            and (newest is None or commit_time > newest[0])
            and (workspace.root / path).is_file()
        ):
            newest = (commit_time, path)
    for path in sorted(times.dirty):
        if not path.startswith(planning + "/"):
            continue
        mtime = _mtime(workspace, path)
        later = mtime is not None and mtime > context_time + STALE_MARGIN
        if later and mtime is not None and (newest is None or mtime > newest[0]):
            newest = (mtime, path)
    return newest[1] if newest else None


def epic_contexts_newer(workspace: Workspace, contexts: list[str]) -> dict[str, str | None]:
    """For each epic context (root-relative), the planning file changed after it, or None:
    what makes BMAD recompile it.

    Git's commit times decide for files it holds unchanged (a fresh clone's file times are
    checkout order, no evidence); with no git, file times do, and only past
    :data:`STALE_MARGIN`.
    """
    if not contexts:
        return {}
    times = _git_times(workspace, contexts)
    newer: dict[str, str | None] = {}
    for context in contexts:
        if times is not None:
            newer[context] = _newer_by_git(workspace, times, context)
            continue
        mtime = _mtime(workspace, context)
        newer[context] = (
            None if mtime is None else _newest_planning_file(workspace, mtime + STALE_MARGIN)
        )
    return newer


def epic_context_newer(workspace: Workspace, context: str) -> str | None:
    """The planning file changed after one epic context (see :func:`epic_contexts_newer`)."""
    return epic_contexts_newer(workspace, [context])[context]


def _epic_context(
    workspace: Workspace, path: Path, rel: str, epic: str
) -> tuple[EpicContext, bool] | None:
    """Epic ``epic``'s compiled context at ``path``, and whether it could be read (then its
    staleness is asked for); None when its heading names another epic."""
    try:
        path.lstat()
    except OSError:
        return None
    epic_id = _epic_id(epic)
    head = read_text_head(path, root=workspace.root, limit=workspace.config.read_max_bytes)
    if isinstance(head, TextProblem):
        # Still named for the epic: the injection shows the row with its own reason.
        return EpicContext(epic_id, rel, None), False
    first = next(iter_headings(head[0].splitlines()), None)
    if first is not None:
        match = _EPIC_CONTEXT_HEADING.match(first.text)
        if match is not None and normalize_key(match.group("epic")) != normalize_key(epic):
            return None
    return EpicContext(epic_id, rel, None), True


# -------------------------------------------------------------------- bmad-spec folders


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
    limit = workspace.config.read_max_bytes
    if spec_rel is not None:
        text = read_text_file(spec_md, root=root, limit=limit)
        if isinstance(text, TextProblem):
            problems.append(UnreadableEntry(spec_rel, None, str(text)))
        else:
            try:
                front = read_front_matter(text.splitlines())
            except PlanYamlError as exc:
                problems.append(UnreadableEntry(spec_rel, exc.line, f"front matter: {exc.message}"))
                front = None
            if front is not None:
                companions = context_entries(
                    front.document,
                    "companions",
                    "companions: list",
                    workspace,
                    spec_rel,
                    None,
                    problems,
                    base=rel,
                )
    stories_path = folder / "stories.yaml"
    stories_rel = f"{rel}/stories.yaml"
    text = read_text_file(stories_path, root=root, limit=limit)
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


# ------------------------------------------------------------------------- stories


def spec_status(raw: str | None) -> tuple[str, bool]:
    """``(status, known)`` for a spec's ``status`` (``draft | ready-for-dev | in-progress |
    in-review | done``, read as :func:`~promptdeck.core.stories.model.read_status` reads every
    status); a spec with no status is a draft, so backlog."""
    if raw is None:
        return "backlog", True
    reading = read_status(raw)
    return reading.status, reading.known


def _where(path: str, line: int) -> str:
    return f"{path}:{line}" if line else path


def _spec_story(spec: BuildSpec, key: str, workspace: Workspace) -> Story:
    status, known = spec_status(spec.raw_status)
    return Story(
        id=spec.key_text or key,
        key=key,
        title=spec.title,
        status=status,
        source="bmad",
        group=epic_of(key),
        path=spec.path,
        tasks=spec.tasks,
        files=(spec.path,),
        layout="spec",
        status_source=_where(spec.path, spec.status_line),
        status_known=known,
        context_files=tuple(entry.path for entry in spec.context),
    )


def _with_spec(story: Story, spec: BuildSpec) -> Story:
    """``story`` with ``spec`` attached: its file, its context list, and a drift line when the
    two statuses disagree. A story known only from sprint-status becomes a ``spec`` story."""
    files = story.files if spec.path in story.files else (*story.files, spec.path)
    context = tuple(dict.fromkeys((*story.context_files, *(e.path for e in spec.context))))
    drift = story.status_drift
    if spec.raw_status is not None:
        status, _known = spec_status(spec.raw_status)
        if status != story.status:
            drift = (
                *drift,
                f"{_where(spec.path, spec.status_line)} says '{spec.raw_status}'",
            )
    if story.path is None:
        return replace(
            story,
            path=spec.path,
            tasks=spec.tasks,
            files=files,
            context_files=context,
            status_drift=drift,
            layout="spec",
            title=spec.title,
        )
    return replace(story, files=files, context_files=context, status_drift=drift)


class _EntryNames:
    """The sprint-status entry name of a story (``2-3-placement-briefing``), read only when
    two specs claim one story: the spec named for the entry is that story's."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._by_line: dict[int, str] | None = None
        path = workspace.root / workspace.config.paths_artifacts / SPRINT_STATUS_NAME
        self._rel = relpath(workspace.root, path)

    def _lines(self) -> dict[int, str]:
        if self._by_line is None:
            self._by_line = {}
            ws = self._workspace
            text = read_text_file(ws.root / self._rel, root=ws.root, limit=ws.config.read_max_bytes)
            # A malformed file is reported by the story source itself.
            with contextlib.suppress(SprintStatusError):
                if isinstance(text, str):
                    self._by_line = {e.line: e.name for e in parse_sprint_status(text)}
        return self._by_line

    def of(self, story: Story | None) -> str | None:
        """The entry ``story``'s status came from, or None (no entry: a spec-only story)."""
        if story is None or not story.status_source.startswith(self._rel + ":"):
            return None
        line = story.status_source[len(self._rel) + 1 :]
        return self._lines().get(int(line)) if line.isdigit() else None


def _spec_rank(spec: BuildSpec, entry: str | None) -> tuple[int, str]:
    """How surely ``spec`` is the story's own (lower is surer), and why."""
    stem = posixpath.basename(spec.path)[: -len(".md")]
    if entry is not None and stem.lower() == f"{SPEC_PREFIX}{entry}".lower():
        return 0, f"named for the sprint-status entry {entry}"
    written = (spec.story_key or "").strip().lower()
    if entry is not None and written == entry.lower():
        return 1, f"its story_key is the sprint-status entry {entry}"
    if written:
        return 2, f"its story_key {spec.story_key} names the story"
    return 3, "its name starts with the story's key"


def _choose_spec(
    specs: list[BuildSpec], entry: str | None, story_id: str
) -> tuple[BuildSpec, tuple[SecondClaim, ...]]:
    """The spec of a story several specs claim, and the others as second claims.

    The spec named for the sprint-status entry wins, then one whose ``story_key`` is the
    entry, then one with a ``story_key`` at all; specs as good as each other go by name.
    """
    ranked = sorted(specs, key=lambda spec: (_spec_rank(spec, entry)[0], spec.path.lower()))
    chosen = ranked[0]
    rank, why = _spec_rank(chosen, entry)
    if rank == _spec_rank(ranked[1], entry)[0]:
        why = f"{why}, as are others'; it comes first by name"
    claims = tuple(
        SecondClaim(
            spec.path,
            f"also claims story {story_id}; {chosen.path} is its spec ({why}): listed, "
            "never injected as the story's own",
        )
        for spec in ranked[1:]
    )
    return chosen, claims


def _guessed_key(spec: BuildSpec, known: dict[str, int]) -> bool:
    """Whether ``spec``'s key is only a guess from its name's words: no ``story_key``, no
    known story of that key, and a first word that is no epic number (``spec-mvp-2-…``)."""
    if spec.story_key or spec.key is None or spec.key in known:
        return False
    return not spec.key.split("-", 1)[0][:1].isdigit()


def _attach_map(workspace: Workspace) -> dict[str, str]:
    """``[specs] attach`` as {spec path or file name: story id}."""
    attach: dict[str, str] = {}
    for item in workspace.config.specs_attach:
        name, sep, story = item.partition("=")
        if sep and name.strip() and story.strip():
            attach[name.strip()] = story.strip()
    return attach


def attach_specs(
    workspace: Workspace, stories: tuple[Story, ...], scan: SpecScan
) -> tuple[tuple[Story, ...], tuple[str, ...], tuple[UnreadableEntry, ...], tuple[str, ...]]:
    """Join the artifacts folder's specs and epic contexts to the v6 stories.

    A build spec attaches to the story with its key, or is a ``spec`` story of its own; a
    quick spec attaches only where ``[specs] attach`` says so; an epic's compiled context is
    in the context of each of its stories.

    Returns:
        The stories (natural key order), the quick specs tied to no story, what could not be
        read or joined, and notes.
    """
    by_key = {story.key: index for index, story in enumerate(stories)}
    merged = list(stories)
    problems = list(scan.problems)
    notes: list[str] = []
    specs_of: dict[str, list[BuildSpec]] = {}
    quick = list(scan.quick)
    for spec in scan.keyed:
        if _guessed_key(spec, by_key):
            # `spec-mvp-2-launch.md` names no story: a quick spec, never the first story
            # of an epic "MVP" nobody planned.
            quick.append(spec)
            continue
        specs_of.setdefault(spec.key or "", []).append(spec)
    entries = _EntryNames(workspace)
    for key, specs in specs_of.items():
        index = by_key.get(key)
        story = merged[index] if index is not None else None
        spec, claims = (
            _choose_spec(specs, entries.of(story), story.id if story else key)
            if len(specs) > 1
            else (specs[0], ())
        )
        problems.extend(UnreadableEntry(c.path, None, c.reason, key) for c in claims)
        if story is None:
            by_key[key] = len(merged)
            merged.append(replace(_spec_story(spec, key, workspace), second_claims=claims))
        else:
            assert index is not None
            merged[index] = replace(
                _with_spec(story, spec), second_claims=(*story.second_claims, *claims)
            )
    attach = _attach_map(workspace)
    unattached: list[str] = []
    for path, key in scan.story_tech_specs:
        if key not in by_key and not attach.get(path) and not attach.get(posixpath.basename(path)):
            unattached.append(path)
    for spec in quick:
        target = attach.get(spec.path) or attach.get(posixpath.basename(spec.path))
        index = by_key.get(normalize_key(target)) if target else None
        if index is None:
            if target:
                notes.append(f"[specs] attach: {spec.path} names story '{target}', not known")
            unattached.append(spec.path)
            continue
        merged[index] = _with_spec(merged[index], spec)
    for index, story in enumerate(merged):
        epic = scan.epic_contexts.get(story.group)
        if epic is not None and epic.path not in story.context_files:
            story = replace(story, context_files=(*story.context_files, epic.path))
        tech_spec = scan.epic_tech_specs.get(story.group)
        if tech_spec is not None and story.epic_tech_spec is None:
            story = replace(story, epic_tech_spec=tech_spec)
        merged[index] = story
    merged.sort(key=lambda story: natural_key(story.key))
    return tuple(merged), tuple(unattached), tuple(problems), tuple(notes)


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
            source = _where(spec.path, spec.status_line)
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


def context_reason(workspace: Workspace, story: Story, path: str) -> tuple[str, tuple[str, ...]]:
    """Why a file of ``story.context_files`` is in its prompt, and its flags (``stale``).

    An epic's compiled context is checked against the planning folder now, so the mark is
    as fresh as the files sent.
    """
    name = posixpath.basename(path)
    epic = EPIC_CONTEXT_NAME.match(name)
    if epic is not None and posixpath.dirname(path) == workspace.config.paths_artifacts.rstrip("/"):
        if _mtime(workspace, path) is None:
            return f"epic context of epic {epic.group('epic')}", ()
        newer = epic_context_newer(workspace, path)
        found = EpicContext(epic.group("epic"), path, newer)
        return found.reason, ("stale",) if newer else ()
    if story.layout == "v7" and name == posixpath.basename(posixpath.dirname(path)) + ".md":
        # The epic's own file (``epic-<slug>/epic-<slug>.md``): BMAD builds a ticket from
        # its entry and its epic.
        return "epic context: the ticket's epic file", ()
    if story.layout == "bmad-spec" and story.files and story.files[0].endswith("/SPEC.md"):
        spec_md = story.files[0]
        companions: list[UnreadableEntry] = []
        text = read_text_file(
            workspace.root / spec_md, root=workspace.root, limit=workspace.config.read_max_bytes
        )
        if isinstance(text, str):
            try:
                front = read_front_matter(text.splitlines())
            except PlanYamlError:
                front = None
            if front is not None:
                base = posixpath.dirname(spec_md)
                listed = context_entries(
                    front.document, "companions", "", workspace, spec_md, None, companions, base
                )
                if any(entry.path == path for entry in listed):
                    return "companions: list", ()
    return "context: list", ()
