"""The files a plan asks the implementing agent to load, and why each is in the prompt.

* A ``context:`` list (a build spec's, a v7 plan's) or a bmad-spec ``SPEC.md``'s
  ``companions:``: each entry a path (``{project-root}/…``, ``{planning_artifacts}/…``)
  resolved inside the project (:func:`context_entries`), or reported with its line.
* ``<artifacts>/epic-<N>-context.md`` is epic N's compiled context; BMAD recompiles it when a
  file of the planning folder is newer, so such a one is reported stale (by commit times
  where git knows the files unchanged: a fresh clone's file times are checkout order).

:func:`context_reason` says why a file of a story's context is in its prompt.
"""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
from pathlib import Path

from ..lean_dataclass import dataclass
from ..processes import resolve_program, safe_git_environment, work_tree_of
from ..project.textfiles import TextProblem, read_text_file, read_text_head
from ..project.workspace import Workspace
from ..stories.keys import normalize_key, number_text
from ..stories.model import (
    Story,
    UnreadableEntry,
    relpath,
)
from .markdown import (
    PlanYamlError,
    YamlDocument,
    iter_headings,
    read_front_matter,
)

_PLACEHOLDER = re.compile(r"\{(?P<name>[A-Za-z_][A-Za-z0-9_-]*)\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
EPIC_CONTEXT_NAME = re.compile(r"^epic-(?P<epic>[A-Za-z0-9]+)-context\.md$", re.IGNORECASE)
_EPIC_CONTEXT_HEADING = re.compile(r"^Epic\s+(?P<epic>[A-Za-z0-9]+)\s+Context\s*:", re.IGNORECASE)
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


def grouped_epic_id(epic: str) -> str:
    """An epic id as stories group by it: ``02`` → ``2``, ``a`` → ``A``."""
    return number_text(epic) if epic.isdecimal() else epic.upper()


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


def epic_context_of(
    workspace: Workspace, path: Path, rel: str, epic: str
) -> tuple[EpicContext, bool] | None:
    """Epic ``epic``'s compiled context at ``path``, and whether it could be read (then its
    staleness is asked for); None when its heading names another epic."""
    try:
        path.lstat()
    except OSError:
        return None
    epic_id = grouped_epic_id(epic)
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
