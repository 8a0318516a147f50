"""The merge lane: a finished story's branch brought back into the user's branch, one at a
time, never leaving a conflict marker.

:func:`merge_story` refuses a checkout with uncommitted changes (one line; the story waits,
nothing is overwritten) and a repository mid-merge or mid-rebase. It merges with
``--no-ff``; when git stops on conflicts, the only ones it settles itself are in
``sprint-status.yaml`` — each story's branch changes its own line there, and neighbouring
lines collide — by keeping the user's file and setting the story's line to the branch's value.
Any other conflict aborts the merge: the files are named, the branch is left as it is, and the
checkout is as it was. HEAD moves only when a merge commit is made.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..errors import GitError
from ..lean_dataclass import dataclass
from ..plans.sprint_status import (
    SPRINT_STATUS_NAME,
    SprintStatusError,
    parse_sprint_status,
)
from ..plans.writeback import set_sprint_status
from ..project.state_folder import STATE_DIRNAME
from ..project.workspace import Workspace
from ..run import gitops
from ..stories.keys import story_entry_keys
from .worktrees import StoryWorktree


@dataclass(frozen=True)
class MergeOutcome:
    """What the merge lane did with one story.

    Attributes:
        story: the story.
        merged: its branch is in the user's branch now.
        commit: the merge commit (None when nothing was merged).
        conflicts: the files that stopped the merge.
        waiting: the merge did not start (a dirty checkout, git mid-operation).
        note: one line.
    """

    story: str
    merged: bool
    commit: str | None = None
    conflicts: tuple[str, ...] = ()
    waiting: bool = False
    note: str = ""


def _unmerged(repo: Any) -> list[str]:
    out = gitops.run_git(repo, "diff", "--name-only", "-z", "--diff-filter=U")
    return [path for path in out.split("\0") if path]


def _settle_status(repo: Any, path: str) -> bool:
    """Settle a conflicted ``sprint-status.yaml``: the user's file with the story's entries
    set to the branch's values. False when that is not possible (left for the abort)."""
    try:
        ours = gitops.run_git(repo, "show", f":2:{path}")
        theirs = gitops.run_git(repo, "show", f":3:{path}")
        base = gitops.run_git(repo, "show", f":1:{path}")
        before = {e.name: e.value for e in parse_sprint_status(base)}
        entries = parse_sprint_status(theirs)
        text = ours
        for entry, read in zip(entries, story_entry_keys([e.name for e in entries]), strict=True):
            if read is None or before.get(entry.name) == entry.value:
                continue
            updated = set_sprint_status(text, read.key, entry.value)
            if updated is not None:
                text = updated[0]
    except (GitError, SprintStatusError):
        return False
    top = Path(str(repo.working_tree_dir))
    try:
        (top / path).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        gitops.run_git(repo, "add", "--", path)
    except (OSError, GitError):
        return False
    return True


def _make_way(repo: Any, root: Path, tip: str) -> list[str]:
    """Remove each untracked file of ``.promptdeck/`` that the branch adds with the very same
    bytes (its ``.gitignore``, made by promptdeck in the checkout and in the worktree alike):
    git refuses a merge that would overwrite an untracked file, and the merge puts it back as
    it was. A file that differs is left, and returned: the merge stops on it."""
    left: list[str] = []
    top = Path(str(repo.working_tree_dir))
    state = str(root.resolve() / STATE_DIRNAME)
    try:
        added = gitops.run_git(
            repo, "diff", "--name-only", "-z", "--diff-filter=A", f"HEAD...{tip}", "--", state
        )
        untracked = set(
            gitops.run_git(
                repo, "ls-files", "-z", "--others", "--exclude-standard", "--", state
            ).split("\0")
        )
        for path in (p for p in added.split("\0") if p and p in untracked):
            local = top / path
            if not stat.S_ISREG(os.lstat(local).st_mode):
                continue
            mine = gitops.run_git(repo, "hash-object", "--no-filters", "--", path).strip()
            if mine == gitops.run_git(repo, "rev-parse", f"{tip}:{path}").strip():
                local.unlink()
            else:
                left.append(path)
    except (GitError, OSError):
        return left
    return left


def merge_story(workspace: Workspace, worktree: StoryWorktree, title: str = "") -> MergeOutcome:
    """Merge the story's branch into the checked-out branch (see the module's description)."""
    story = worktree.story
    repo = gitops.require_repo(workspace.root)
    dirty = [p for p in gitops.dirty_paths(repo) if not p.startswith(".promptdeck/")]
    if dirty:
        more = f" and {len(dirty) - 3} more" if len(dirty) > 3 else ""
        return MergeOutcome(
            story,
            False,
            waiting=True,
            note=(
                f"story {story} not merged: your checkout has uncommitted changes "
                f"({', '.join(dirty[:3])}{more}); commit or stash them, then run the epic again "
                f"(its branch {worktree.branch} waits)"
            ),
        )
    busy = gitops.in_progress(repo)
    if busy is not None:
        return MergeOutcome(story, False, waiting=True, note=f"story {story} not merged: {busy}")
    head = gitops.head_sha(repo)
    tip = gitops.run_git(repo, "rev-parse", "--verify", f"refs/heads/{worktree.branch}").strip()
    if gitops.run_git(repo, "merge-base", head or tip, tip).strip() == tip:
        return MergeOutcome(story, True, note=f"story {story}: nothing new on {worktree.branch}")
    in_the_way = _make_way(repo, workspace.root, tip)
    message = f"promptdeck: merge story {story}" + (f": {title}" if title else "")
    # Cut as a phase's commit message is: a title is plan text, and an argument of over
    # 128 KiB is one the system refuses to pass to git.
    message = message[: gitops.MOST_COMMIT_MESSAGE]
    try:
        gitops.run_git(repo, "merge", "--no-ff", "--no-verify", "-m", message, worktree.branch)
    except GitError as refused:
        if not _merging(repo):  # git refused before it began (an untracked file in the way)
            return MergeOutcome(
                story,
                False,
                waiting=True,
                note=(
                    f"story {story} not merged: "
                    + (
                        f"your untracked {', '.join(in_the_way[:3])} is in the way (the branch "
                        "adds it): move it away, then run the epic again"
                        if in_the_way
                        else str(refused)
                    )
                    + f"; its branch {worktree.branch} is left as it is"
                ),
            )
        conflicts = _unmerged(repo)
        status_name = f"/{SPRINT_STATUS_NAME}"
        settled = conflicts and all(
            (p.endswith(status_name) or p == SPRINT_STATUS_NAME) and _settle_status(repo, p)
            for p in conflicts
        )
        if not settled:
            _abort(repo)
            named = ", ".join(conflicts[:5]) or "no file named by git"
            more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
            return MergeOutcome(
                story,
                False,
                conflicts=tuple(conflicts),
                note=(
                    f"story {story} not merged: conflict in {named}{more}; its branch "
                    f"{worktree.branch} is left as it is"
                ),
            )
        gitops.run_git(repo, "commit", "-q", "--no-verify", "--no-edit")
    commit = gitops.head_sha(repo)
    return MergeOutcome(story, True, commit, note=f"story {story} merged: {str(commit)[:10]}")


def _merging(repo: Any) -> bool:
    try:
        gitops.run_git(repo, "rev-parse", "-q", "--verify", "MERGE_HEAD")
    except GitError:
        return False
    return True


def _abort(repo: Any) -> None:
    try:
        gitops.run_git(repo, "merge", "--abort")
    except GitError:
        gitops.run_git(repo, "reset", "--merge")
