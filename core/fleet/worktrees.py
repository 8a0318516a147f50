"""A story's own git worktree: ``.promptdeck/worktrees/<story>`` on branch
``promptdeck/<story>``, seeded with the project's config and the git-ignored files
``.worktreeinclude`` lists, and its state beside it (``<story>.json``).

The folder of worktrees ignores itself (a ``.gitignore`` of ``*``), so the user's checkout
never sees them. Every git call goes through the repository promptdeck opens with its safe
environment (:func:`promptdeck.core.run.gitops.open_repo`). Nothing is overwritten: a folder
already there that is not a promptdeck worktree, or a branch name already taken, is one line
and exit 2.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import shutil
import stat
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..processes import pid_alive
from ..project.state_folder import open_state_file, state_dir
from ..project.textfiles import TextProblem, read_file_bytes, read_json_object, read_text
from ..project.workspace import Workspace, ensure_inside
from ..records.writer import runs_dir
from ..run import gitops
from ..stories.keys import normalize_key
from .overlap import clean_path

WORKTREES_RELPATH = ".promptdeck/worktrees"
BRANCH_PREFIX = "promptdeck/"
INCLUDE_FILE = ".worktreeinclude"
CONFIG_RELPATH = ".promptdeck/config.toml"
_SEED_LIMIT = 64 * 1024 * 1024
STATES = ("running", "interrupted", "finished", "stopped", "merged", "conflict", "waiting")
"""A worktree's states: its flow going, its promptdeck gone mid-flow, its flow done (waiting
for the merge lane), its flow stopped short, merged back, its merge stopped by a conflict, its
merge waiting for a clean checkout."""


def slug(story_id: str) -> str:
    """The story's name for its folder and branch: its key, only safe characters."""
    key = normalize_key(story_id)
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in key).strip(".-")[:80] or "story"


@dataclass(frozen=True)
class StoryWorktree:
    """One story's worktree, as its state file records it.

    Attributes:
        story: the story id.
        path: the worktree folder.
        branch: its branch.
        base: the commit it started from.
        state: one of :data:`STATES` (``running`` read back with its promptdeck gone is
            ``interrupted``).
        pid: the promptdeck that runs it.
        note: one line: why it stopped, what conflicted.
    """

    story: str
    path: Path
    branch: str
    base: str
    state: str = "running"
    pid: int | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (the state file's, and ``runs --json``'s)."""
        data = asdict(self)
        data["path"] = str(self.path)
        return data

    def describe(self) -> str:
        """One line for ``runs`` and ``resume``."""
        note = f": {self.note}" if self.note else ""
        return f"worktree {self.story} ({self.branch}) {self.state}{note}"


def worktrees_dir(root: Path) -> Path:
    """``<root>/.promptdeck/worktrees``."""
    return root / WORKTREES_RELPATH


def _state_path(root: Path, story_id: str) -> Path:
    return worktrees_dir(root) / f"{slug(story_id)}.json"


def save(root: Path, worktree: StoryWorktree) -> StoryWorktree:
    """Write the worktree's state file (replaced whole)."""
    path = _state_path(root, worktree.story)
    ensure_inside(root, path, "the worktree state")
    state_dir(root, path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    fd = open_state_file(root, temporary, flags)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(worktree.to_dict(), indent=2) + "\n")
    os.replace(temporary, path)
    return worktree


def _read(root: Path, path: Path) -> StoryWorktree | None:
    data = read_json_object(path, root.resolve())
    if isinstance(data, TextProblem):
        return None
    try:
        pid = data.get("pid")
        found = StoryWorktree(
            story=str(data["story"]),
            path=Path(str(data["path"])),
            branch=str(data["branch"]),
            base=str(data.get("base") or ""),
            state=str(data.get("state") or "running"),
            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            note=str(data.get("note") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None
    # A record names its own folder and branch only: the ones promptdeck makes for its story.
    # (A state file is a file a repository can ship: another branch named there would be the
    # one the merge lane merges and ``resume --clean`` deletes.)
    if (
        found.path != worktrees_dir(root) / slug(found.story)
        or found.branch != f"{BRANCH_PREFIX}{slug(found.story)}"
        or found.state not in STATES
    ):
        return None
    if found.state == "running" and not pid_alive(found.pid):
        found = StoryWorktree(**{**asdict(found), "state": "interrupted"})
    return found


def load(root: Path, story_id: str) -> StoryWorktree | None:
    """The story's worktree, or None when it has none."""
    return _read(root, _state_path(root, story_id))


def list_worktrees(root: Path) -> list[StoryWorktree]:
    """Every story worktree promptdeck recorded, by story."""
    folder = worktrees_dir(root)
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".json"))
    except OSError:
        return []
    found = [_read(root, folder / name) for name in names if not name.startswith(".")]
    return [worktree for worktree in found if worktree is not None]


def _ignore_everything(root: Path) -> None:
    """The worktrees folder ignores itself: the user's ``git status`` never lists it."""
    folder = worktrees_dir(root)
    ensure_inside(root, folder, "the worktrees folder")
    state_dir(root, folder)
    path = folder / ".gitignore"
    if not path.exists():
        try:
            fd = open_state_file(root, path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write("*\n")


def _branch_taken(repo: Any, branch: str) -> bool:
    # Read from the refs themselves (loose and packed), not a git process: starting K
    # worktrees should cost git's own ``worktree add`` and little more.
    return any(head.name == branch for head in repo.heads)


def create(workspace: Workspace, story_id: str) -> tuple[StoryWorktree, list[str]]:
    """Make the story's worktree from HEAD, seeded; the worktree and one line per entry of
    ``.worktreeinclude`` not copied.

    Raises:
        UsageError: the folder exists, or the branch name is taken (exit 2); nothing is
            overwritten.
        GitError: no repository, or ``git worktree add`` failed.
    """
    root = workspace.root
    repo = gitops.require_repo(root)
    name = slug(story_id)
    path = worktrees_dir(root) / name
    branch = f"{BRANCH_PREFIX}{name}"
    rel = f"{WORKTREES_RELPATH}/{name}"
    if os.path.lexists(path):
        raise UsageError(
            f"story {story_id}: the worktree folder {rel} already exists and is not one "
            "promptdeck is running: move it away (or `promptdeck resume --clean` it)"
        )
    if _branch_taken(repo, branch):
        raise UsageError(
            f"story {story_id}: the branch {branch} already exists: promptdeck does not reuse "
            "a branch it did not make; rename or delete it"
        )
    head = gitops.head_sha(repo)
    if head is None:
        raise UsageError("the repository has no commits yet: a story worktree starts from one")
    _ignore_everything(root)
    ensure_inside(root, path, "the worktree folder")
    gitops.run_git(repo, "worktree", "add", "-q", "-b", branch, str(path), head)
    notes = seed(workspace, path, repo)
    worktree = StoryWorktree(story_id, path, branch, head, "running", os.getpid())
    return save(root, worktree), notes


def seed(workspace: Workspace, path: Path, repo: Any = None) -> list[str]:
    """Copy the project's config and the git-ignored files ``.worktreeinclude`` lists into
    the worktree at ``path``; one line per entry refused or not copied."""
    root = workspace.root
    notes: list[str] = []
    _copy(root, CONFIG_RELPATH, path, notes)
    text = read_text(root / INCLUDE_FILE, root.resolve())
    if isinstance(text, TextProblem):
        if text.reason != "missing":
            notes.append(f"{INCLUDE_FILE}: {text}; nothing seeded from it")
        return notes
    repo = repo if repo is not None else gitops.require_repo(root)
    listed = gitops.run_git(
        repo, "ls-files", "-z", "--others", "--ignored", "--exclude-standard"
    ).split("\0")
    ignored = [p for p in listed if p and not p.startswith(".promptdeck/")]
    for number, raw in enumerate(text.splitlines(), start=1):
        entry = raw.strip()
        if not entry or entry.startswith("#"):
            continue
        pattern = clean_path(entry)
        if pattern is None:
            notes.append(
                f"{INCLUDE_FILE} line {number}: {entry[:80]!r} is not a path inside the "
                "project; not copied"
            )
            continue
        folder = pattern.rstrip("/") + "/"
        matched = [
            p
            for p in ignored
            if p == pattern or p.startswith(folder) or fnmatch.fnmatch(p, pattern)
        ]
        for rel in matched:
            _copy(root, rel, path, notes)
    return notes


def _copy(root: Path, rel: str, dest_root: Path, notes: list[str]) -> None:
    data = read_file_bytes(root / rel, root.resolve(), limit=_SEED_LIMIT)
    if isinstance(data, TextProblem):
        if data.reason not in ("missing", "empty"):
            notes.append(f"{rel}: {data}; not copied into the worktree")
        if data.reason != "empty":
            return
        data = b""
    target = dest_root / rel
    try:
        ensure_inside(dest_root, target, "a seeded file")
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(target, flags, 0o644), "wb") as handle:
            handle.write(data)
    except (OSError, UsageError) as exc:
        notes.append(f"{rel}: not copied into the worktree: {exc}")


def collect_runs(workspace: Workspace, worktree: StoryWorktree) -> int:
    """Copy the worktree's run records into the project's (the ones not there yet), so
    ``runs`` and the app's history show them; how many were copied."""
    source = runs_dir(worktree.path)
    target = runs_dir(workspace.root)
    copied = 0
    # Records only from real folders of the worktree: a linked ``.promptdeck`` or ``runs``
    # there (committed, or made by its agent) would copy folders from outside the project.
    for folder in (source.parent, source):
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return 0
    try:
        entries = list(os.scandir(source))
    except OSError:
        return 0
    state_dir(workspace.root, target)
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False) or entry.name == "dry-run":
            continue
        if os.path.lexists(target / entry.name):
            continue
        shutil.copytree(entry.path, target / entry.name, symlinks=True)
        copied += 1
    return copied


def remove_worktree(workspace: Workspace, worktree: StoryWorktree, *, branch: bool) -> None:
    """Remove the worktree folder (and its branch when ``branch``); its state file goes."""
    repo = gitops.require_repo(workspace.root)
    if worktree.path.exists():
        gitops.run_git(repo, "worktree", "remove", "--force", str(worktree.path))
    gitops.run_git(repo, "worktree", "prune")
    if branch and _branch_taken(repo, worktree.branch):
        gitops.run_git(repo, "branch", "-D", worktree.branch)
    with contextlib.suppress(FileNotFoundError):
        _state_path(workspace.root, worktree.story).unlink()
