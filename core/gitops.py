"""Git between phases, with GitPython (seed 002: the staging area carries code from dev to
review; promptdeck commits after a passed review).

- before a phase: record HEAD and the files already changed (the phase did not make those);
- after a dev phase that signalled completion: ``git add -A``, then ``git diff --staged --stat``;
- after a passed review: stage, then commit with ``git.commit_template``;
- never commit after a failure; promptdeck's run records are never staged
  (``.promptdeck/.gitignore``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import GitError
from .records import GITIGNORE_RELPATH, RUNS_RELPATH


@dataclass(frozen=True)
class GitSnapshot:
    """The repository's state before a phase."""

    head: str | None
    dirty: tuple[str, ...]


def open_repo(root: Path) -> Any | None:
    """The repository holding ``root``, or None when there is none (or git is unusable)."""
    try:
        import git
    except ImportError:  # pragma: no cover - GitPython is a dependency; no git binary lands here
        return None
    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandNotFound):
        return None


def require_repo(root: Path) -> Any:
    """The repository holding ``root``.

    Raises:
        GitError: ``root`` is not inside a git repository (exit 2).
    """
    repo = open_repo(root)
    if repo is None:
        raise GitError(
            f"{root} is not inside a git repository: run `git init` there, "
            "or pass --no-git to run without staging and commits"
        )
    return repo


def head_sha(repo: Any) -> str | None:
    """HEAD's commit SHA, or None on an unborn branch."""
    try:
        return str(repo.head.commit.hexsha)
    except ValueError:
        return None


def _run(repo: Any, *args: str) -> str:
    import git

    try:
        return str(repo.git.execute(["git", *args]))
    except git.GitCommandError as exc:
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()
        raise GitError(f"git {' '.join(args)} failed: {detail[-1] if detail else exc}") from None


def dirty_paths(repo: Any) -> tuple[str, ...]:
    """Paths (repository-relative) with changes, staged or not, untracked included."""
    output = _run(repo, "status", "--porcelain", "-z", "--untracked-files=all")
    paths: list[str] = []
    entries = output.split("\0")
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        if "R" in status or "C" in status:
            index += 1  # a rename is followed by its source path
        if RUNS_RELPATH in path:
            continue
        paths.append(path)
    return tuple(sorted(paths))


def snapshot(repo: Any) -> GitSnapshot:
    """HEAD and the changed files before a phase.

    promptdeck's own ``.promptdeck/.gitignore`` (made or extended just before the phase so
    that run records stay out of git) is not a change of the user's to warn about; it is
    staged with the phase's work, so later clones ignore the records too.
    """
    dirty = tuple(path for path in dirty_paths(repo) if path != GITIGNORE_RELPATH)
    return GitSnapshot(head_sha(repo), dirty)


def stage_all(repo: Any) -> str:
    """``git add -A``; returns ``git diff --staged --stat``."""
    _run(repo, "add", "-A")
    return _run(repo, "diff", "--staged", "--stat")


def commit_message(template: str, story_id: str, title: str) -> str:
    """The commit message from ``git.commit_template`` (``{story}``, ``{title}``).

    Raises:
        GitError: the template names another placeholder or is malformed.
    """
    try:
        return template.format(story=story_id, title=title).strip()
    except (KeyError, IndexError, ValueError) as exc:
        raise GitError(
            f"git.commit_template {template!r}: only {{story}} and {{title}} can be used ({exc})"
        ) from None


def commit(repo: Any, message: str) -> str | None:
    """Stage everything and commit; returns the new HEAD, or None when nothing was staged."""
    stage_all(repo)
    if not _run(repo, "diff", "--staged", "--name-only").strip():
        return None
    _run(repo, "commit", "-q", "-m", message)
    return head_sha(repo)
