"""Git between phases, with GitPython (seed 002: the staging area carries code from dev to
review; promptdeck commits after a passed review).

- before a phase: record HEAD and the files already changed (the phase did not make those);
- after a dev phase that signalled completion: stage only the paths the phase changed (their
  fingerprints differ from before), never files dirty before it, secret-looking files, files
  over ``git.max_file_bytes`` or ignored files — each left out is listed with its reason;
- after a passed review: stage the review's own changes the same way, then commit the index
  with ``git.commit_template`` (formatted by :func:`commit_message`, bounded);
- a merge, rebase, cherry-pick, revert or bisect in progress, unmerged paths, or a repository
  with no commit yet: the git step is refused (exit 6), the run's own outcome is kept;
- never commit after a failure; promptdeck's run records are never staged
  (``.promptdeck/.gitignore``).

Git runs none of the repository's own programs (:func:`open_repo`, the one way promptdeck
opens a repository): the repository is the ``.git`` found walking up from the project root,
named to git explicitly (``GIT_DIR``, ``GIT_WORK_TREE``), so a bare repository committed
inside a plan folder is never taken for it; and every git process GitPython starts for it —
promptdeck's own commands and GitPython's object readers alike — gets configuration that
outranks the repository's: no ``core.fsmonitor``, ``core.hooksPath`` at ``/dev/null`` (no
hook runs, a commit's ``pre-commit`` and ``commit-msg`` included), no filter driver the
repository's config names, ``safe.bareRepository=explicit``. The configuration travels in
``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n`` set on the repository's
``Git`` object rather than as ``-c`` arguments of each command: GitPython starts git processes
of its own (``cat-file --batch`` to read objects) that no ``-c`` of ours would reach.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import string
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from ..errors import EXIT_GIT, GitError
from ..lean_dataclass import dataclass
from ..processes import git_module, safe_git_environment, work_tree_of
from ..records.writer import GITIGNORE_RELPATH, RUNS_RELPATH
from ..secrets.paths import secret_content_reason, secret_name_reason
from ..terminal import printable_line


@dataclass(frozen=True)
class GitSnapshot:
    """The repository's state before a phase: what the phase did not make.

    Attributes:
        head: HEAD's SHA (None on a repository with no commits).
        dirty: paths whose working copy differed from the index (untracked included).
        staged: paths whose index differed from HEAD.
        fingerprints: for every path git listed, its working copy's fingerprint (None when
            absent): after the phase, a path whose fingerprint changed is the phase's work.
        problem: why the git step cannot run here (a merge in progress …), or None.
        carried: changed paths still exactly as an earlier run of the same story left them:
            the story's work, not the user's — staged with this phase's.
    """

    head: str | None
    dirty: tuple[str, ...]
    staged: tuple[str, ...] = ()
    fingerprints: Mapping[str, str | None] = field(default_factory=dict)
    problem: str | None = None
    carried: tuple[str, ...] = ()


@dataclass(frozen=True)
class StageReport:
    """What staging after a phase did.

    Attributes:
        staged: the phase's own changed paths now in the index.
        left: paths left unstaged, each with its reason.
        stat: ``git diff --staged --stat``.
    """

    staged: tuple[str, ...]
    left: tuple[tuple[str, str], ...]
    stat: str

    def describe(self) -> str:
        """Lines for the run's log: what was staged, and each path left out and why."""
        lines = [f"staged {len(self.staged)} path(s) the phase changed:", self.stat or "(none)"]
        for path, reason in self.left:
            lines.append(f"not staged: {path}: {reason}")
        return "\n".join(lines)


class GitStepError(GitError):
    """The git step after a phase failed or was refused (exit 6); ``output`` holds what git
    (or a hook) printed."""

    exit_code = EXIT_GIT

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


GIT_TIMEOUT = 300.0
"""Seconds a git command (a commit hook included) may take before it is stopped."""
_FINGERPRINT_HASH_MAX = 16 * 1024 * 1024
_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase (or git am)"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
    ("BISECT_LOG", "a bisect"),
)
_OWN_PREFIXES = (RUNS_RELPATH + "/", ".promptdeck/locks/")


def _filter_drivers(repo: Any) -> list[str]:
    """The filter drivers the repository's own config names (``[filter "lfs"]``): git would
    run their ``clean``/``smudge``/``process`` programs on ``add`` and ``status``."""
    try:
        reader = repo.config_reader("repository")
        sections = reader.sections()
    except Exception:  # an unreadable config: git itself will say so
        return []
    found = []
    for section in sections:
        head, _, rest = str(section).partition(" ")
        if head == "filter" and rest.startswith('"') and rest.endswith('"') and len(rest) > 2:
            found.append(rest[1:-1])
    return found


_SIGNING_PROGRAMS = {
    "gpg": ("program",),
    'gpg "openpgp"': ("program",),
    'gpg "x509"': ("program",),
    'gpg "ssh"': ("program", "defaultkeycommand"),
}
"""The settings of a repository's own config that name a program signing a commit runs."""


def signing_programs(repo: Any) -> list[str]:
    """The signing programs the repository's own config names (``gpg.program``,
    ``gpg.ssh.defaultKeyCommand`` …): a signed commit would run them, so promptdeck's commits
    in such a repository are not signed (the user's own settings name theirs elsewhere)."""
    try:
        reader = repo.config_reader("repository")
        found = []
        for section in reader.sections():
            options = _SIGNING_PROGRAMS.get(str(section))
            if options is None:
                continue
            for option in reader.options(section):
                if option.lower() in options:
                    head, _, rest = str(section).partition(" ")
                    name = head + (f".{rest.strip(chr(34))}" if rest else "")
                    found.append(f"{name}.{option}")
    except Exception:  # an unreadable config: git itself will say so
        return []
    return found


def open_repo(root: Path) -> Any | None:
    """The repository whose ``.git`` holds ``root`` (:func:`work_tree_of`), set so that none
    of its programs run (see the module's description); None when there is none (or git is
    unusable)."""
    work_tree = work_tree_of(root)
    if work_tree is None:
        return None
    try:
        git = git_module(root)
    except ImportError:
        return None
    try:
        repo = git.Repo(work_tree, search_parent_directories=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandNotFound):
        return None
    except git.GitError:  # a linked worktree's admin folder, and the like
        return None
    if repo.working_tree_dir is None or Path(str(repo.working_tree_dir)).resolve() != work_tree:
        return None  # core.worktree elsewhere: not the work tree promptdeck found
    env = safe_git_environment(
        Path(str(repo.git_dir)).resolve(),
        work_tree,
        tuple(_filter_drivers(repo)),
        unsigned=bool(signing_programs(repo)),
    )
    repo.git.update_environment(**env)
    return repo


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


def _run(repo: Any, *args: str, step: bool = False) -> str:
    # The absolute git resolved by git_module, never a bare "git" the system would search
    # for on PATH (a relative entry finds the repository's own bin/git).
    status, out, err = repo.git.execute(
        [str(repo.git.GIT_PYTHON_GIT_EXECUTABLE), *args],
        with_extended_output=True,
        with_exceptions=False,
        kill_after_timeout=GIT_TIMEOUT,
    )
    if status == 0:
        return str(out)
    output = "\n".join(part.strip() for part in (str(out), str(err)) if part.strip())
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    said = next((line for line in lines if line.startswith(("fatal:", "error:"))), None)
    said = said or (lines[-1] if lines else f"exit status {status}")
    command = next((arg for arg in args if not arg.startswith("-")), "")
    message = f"git {command} failed: {said}"
    if step:
        raise GitStepError(message, output)
    raise GitError(message)


def run_git(repo: Any, *args: str) -> str:
    """``git ARGS`` in ``repo`` with its safe environment; its output.

    Raises:
        GitError: git failed (its first ``fatal:``/``error:`` line).
    """
    return _run(repo, *args)


def _status(repo: Any) -> dict[str, str]:
    """``git status`` as ``{path: XY}`` (untracked included, ignored files never)."""
    output = _run(repo, "status", "--porcelain", "-z", "--untracked-files=all")
    status: dict[str, str] = {}
    entries = output.split("\0")
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if "R" in code or "C" in code:
            index += 1  # a rename is followed by its source path
        if path.startswith(_OWN_PREFIXES):
            continue
        status[path] = code
    return status


def dirty_paths(repo: Any) -> tuple[str, ...]:
    """Paths (repository-relative) with changes, staged or not, untracked included."""
    return tuple(sorted(_status(repo)))


def _root(repo: Any) -> Path:
    return Path(str(repo.working_tree_dir))


def fingerprint(path: Path) -> str | None:
    """What a working copy is now, cheaply comparable: None when absent; the link text of a
    symlink; a content hash of a regular file (size and mtime beyond 16 MB)."""
    try:
        info = os.lstat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(info.st_mode):
        try:
            return "link:" + os.readlink(path)
        except OSError:
            return "link:?"
    if not stat.S_ISREG(info.st_mode):
        return f"other:{stat.S_IFMT(info.st_mode)}:{info.st_mtime_ns}"
    if info.st_size > _FINGERPRINT_HASH_MAX:
        return f"big:{info.st_size}:{info.st_mtime_ns}"
    digest = hashlib.sha256()
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
        with os.fdopen(fd, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return f"unreadable:{info.st_size}:{info.st_mtime_ns}"
    return digest.hexdigest()


def in_progress(repo: Any, status: Mapping[str, str] | None = None) -> str | None:
    """Why git's state forbids the git step (a merge, rebase, cherry-pick, revert or bisect
    in progress, unmerged paths, no commit yet), or None."""
    git_dir = Path(str(repo.git_dir))
    for name, what in _IN_PROGRESS:
        if (git_dir / name).exists():
            return f"{what} is in progress"
    status = _status(repo) if status is None else status
    unmerged = sorted(p for p, c in status.items() if "U" in c or c in ("AA", "DD"))
    if unmerged:
        return f"{len(unmerged)} unmerged path(s), e.g. {unmerged[0]}"
    if head_sha(repo) is None:
        return (
            "the repository has no commits yet (make a first commit of the project yourself: "
            "promptdeck commits only a story's own work)"
        )
    return None


def snapshot(repo: Any, earlier: Mapping[str, str | None] | None = None) -> GitSnapshot:
    """HEAD, the changed files and their fingerprints before a phase.

    ``earlier`` maps paths earlier runs of the story changed to the fingerprint they left:
    a changed path still carrying it is the story's work (``carried``), not a user's edit.

    promptdeck's own ``.promptdeck/.gitignore`` (made or extended just before the phase so
    that run records stay out of git) is not a change of the user's to warn about; it is
    staged with the phase's work, so later clones ignore the records too.
    """
    status = _status(repo)
    root = _root(repo)
    prints = {path: fingerprint(root / path) for path in status}
    earlier = earlier or {}
    carried = tuple(sorted(p for p in prints if p in earlier and earlier[p] == prints[p]))
    dirty = tuple(
        sorted(
            p
            for p, c in status.items()
            if c[1] != " " and p != GITIGNORE_RELPATH and p not in carried
        )
    )
    staged = tuple(sorted(p for p, c in status.items() if c[0] not in " ?"))
    problem = in_progress(repo, status)
    return GitSnapshot(head_sha(repo), dirty, staged, prints, problem, carried)


def phase_changes(repo: Any, before: GitSnapshot) -> dict[str, str | None]:
    """The paths the phase changed since ``before``, with their fingerprints now (None:
    deleted). Files dirty before it count only when the phase changed them further."""
    root = _root(repo)
    after = _status(repo)
    changes: dict[str, str | None] = {}
    for path in sorted(set(after) | set(before.fingerprints)):
        now = fingerprint(root / path)
        if path in before.fingerprints:
            if now != before.fingerprints[path]:
                changes[path] = now
        elif path in after:
            changes[path] = now
    return changes


def _left_reason(root: Path, path: str, max_bytes: int) -> str | None:
    reason = secret_name_reason(path)
    if reason:
        return reason
    try:
        info = os.lstat(root / path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
        return f"{info.st_size:,} bytes, over git.max_file_bytes ({max_bytes:,})"
    if stat.S_ISREG(info.st_mode):
        return secret_content_reason(root / path)
    return None


def stage_phase(
    repo: Any,
    before: GitSnapshot,
    max_bytes: int,
    changes: Mapping[str, str | None] | None = None,
) -> StageReport:
    """Stage exactly what the phase changed since ``before``.

    Staged too: paths earlier runs of the story changed and left as they are now
    (``before.carried``). Left unstaged, each with its reason: files already changed before
    the phase (the user's own edits), files that look like secrets (by name or content),
    files over ``max_bytes``. ``changes``: :func:`phase_changes`, when already known.
    Files ``.gitignore`` ignores are never listed by git, so never staged.

    Raises:
        GitStepError: ``git add`` failed (exit 6).
    """
    root = _root(repo)
    after = _status(repo)
    if changes is None:
        changes = phase_changes(repo, before)
    stage: list[str] = []
    left: list[tuple[str, str]] = []
    wanted = set(changes) | set(before.carried)
    if GITIGNORE_RELPATH in after:
        wanted.add(GITIGNORE_RELPATH)  # promptdeck's own, made just before the phase
    for path in sorted(wanted):
        if path in before.dirty and path != GITIGNORE_RELPATH:
            left.append((path, "already changed before this phase: left for you to stage"))
            continue
        if path not in after:
            continue  # back as it is in the index: nothing to stage
        now = changes[path] if path in changes else fingerprint(root / path)
        reason = None if now is None else _left_reason(root, path, max_bytes)
        if reason:
            left.append((path, reason))
        else:
            stage.append(path)
    for start in range(0, len(stage), 200):
        _run(repo, "--literal-pathspecs", "add", "-A", "--", *stage[start : start + 200], step=True)
    stat_text = (
        _run(repo, "diff", "--no-ext-diff", "--no-textconv", "--staged", "--stat", step=True)
        if stage
        else ""
    )
    return StageReport(tuple(stage), tuple(left), stat_text)


_TEMPLATE_FIELDS = ("story", "title")
MOST_TEMPLATE_WIDTH = 200
"""The widest a format spec of the commit template may ask for (``{title:<72}``, ``{title:.50}``):
the template is the repository's, and ``{title:>1500000000}`` would allocate gigabytes."""
MOST_COMMIT_MESSAGE = 16_384
"""The longest commit message promptdeck writes; a longer one is cut there."""
_SPEC_NUMBER = re.compile(r"\d+")


def commit_message(template: str, story_id: str, title: str) -> str:
    """The commit message from ``git.commit_template`` (``{story}``, ``{title}``), formatted
    by a bounded formatter: only those two fields, no ``!r``-style conversion, no attribute or
    index, a format spec only up to :data:`MOST_TEMPLATE_WIDTH` wide; the message is cut at
    :data:`MOST_COMMIT_MESSAGE` characters.

    Raises:
        GitError: the template names another placeholder, is malformed or asks for too much
            (one line, the template shortened).
    """
    values = {"story": story_id, "title": title}
    pieces: list[str] = []
    try:
        for literal, field, spec, conversion in string.Formatter().parse(template):
            pieces.append(literal)
            if field is None:
                continue
            if field not in _TEMPLATE_FIELDS:
                raise ValueError(f"unknown field {printable_line(field)[:40]!r}")
            if conversion is not None:
                raise ValueError("no conversion (!r, !s, !a) can be used")
            if any(int(n) > MOST_TEMPLATE_WIDTH for n in _SPEC_NUMBER.findall(spec or "")):
                raise ValueError(f"a format wider than {MOST_TEMPLATE_WIDTH} characters")
            if "{" in (spec or ""):
                raise ValueError("no nested field can be used")
            pieces.append(format(values[field], spec or ""))
    except ValueError as exc:
        shown = printable_line(template)
        shown = shown if len(shown) <= 80 else shown[:79] + "…"
        raise GitError(
            f"git.commit_template {shown!r}: only {{story}} and {{title}} can be used, with a "
            f"format up to {MOST_TEMPLATE_WIDTH} wide ({exc})"
        ) from None
    return "".join(pieces).strip()[:MOST_COMMIT_MESSAGE]


def commit_staged(repo: Any, message: str) -> str | None:
    """Commit the index (no hook of the repository runs); returns the new HEAD, or None when
    nothing is staged.

    Raises:
        GitStepError: the commit failed — no identity … (exit 6); its ``output`` holds what
            git printed.
    """
    if not _run(repo, "diff", "--no-ext-diff", "--staged", "--name-only", step=True).strip():
        return None
    # --no-verify as well as the empty hooks path: a commit never runs pre-commit/commit-msg.
    _run(repo, "commit", "-q", "--no-verify", "-m", message, step=True)
    return head_sha(repo)
