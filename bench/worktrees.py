"""Starting story worktrees: what promptdeck adds to git's own ``git worktree add``.

Usage: ``.venv/bin/python bench/worktrees.py [--files N] [--stories K] [--rounds N]``

The project: a git repository of ``--files`` source files (2,000 by default) with a BMAD plan,
a ``.promptdeck/config.toml`` and a ``.worktreeinclude`` naming one git-ignored file. Each round
starts ``--stories`` worktrees (4 by default) twice, interleaved: with git alone (``git worktree
add -q -b <branch> <folder> HEAD``, a fresh git process each, as promptdeck runs it) and with
promptdeck's ``worktrees.create`` (the checks, the same git command, the seeding, the state
record), in one warm process — the process a parallel run already is. Every worktree is removed
between rounds. Printed: the medians per worktree and their difference, promptdeck's own time.

Target: promptdeck adds at most 100 ms a worktree to git's own time.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from promptdeck.core.fleet import worktrees
from promptdeck.core.project.workspace import open_workspace

ART = "_bmad-output/implementation-artifacts"
TARGET_MS = 100.0


def make_project(root: Path, files: int, stories: int) -> None:
    """Write the project the module's description names, committed."""
    for number in range(files):
        path = root / "src" / f"m{number // 50}" / f"f{number}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {number}\n", encoding="utf-8")
    art = root / ART
    art.mkdir(parents=True)
    status = ["development_status:", "  epic-1: in-progress"]
    for number in range(1, stories + 1):
        status.append(f"  1-{number}-s{number}: ready-for-dev")
        (art / f"1-{number}-s{number}.md").write_text(
            f"# Story 1.{number}: S{number}\n\nStatus: ready-for-dev\n", encoding="utf-8"
        )
    (art / "sprint-status.yaml").write_text("\n".join(status) + "\n", encoding="utf-8")
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text('[agent]\ndefault = "replay"\n')
    (root / ".gitignore").write_text(".env\n.promptdeck/\n")
    (root / ".env").write_text("LOCAL=1\n")
    (root / ".worktreeinclude").write_text(".env\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-q", "-m", "bench"], check=True)


def _clean(root: Path) -> None:
    subprocess.run(["git", "-C", str(root), "worktree", "prune"], check=True)
    for branch in subprocess.run(
        ["git", "-C", str(root), "branch", "--format=%(refname:short)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split():
        if branch.startswith(("promptdeck/", "plain/")):
            subprocess.run(["git", "-C", str(root), "branch", "-q", "-D", branch], check=True)


def git_alone(root: Path, stories: int, folder: Path) -> float:
    """Seconds per worktree for git's own ``worktree add``."""
    start = time.perf_counter()
    for number in range(1, stories + 1):
        target = str(folder / str(number))
        branch = f"plain/{number}"
        subprocess.run(
            ["git", "-C", str(root), "worktree", "add", "-q", "-b", branch, target, "HEAD"],
            check=True,
        )
    return (time.perf_counter() - start) / stories


def with_promptdeck(root: Path, stories: int) -> float:
    """Seconds per worktree for ``worktrees.create``."""
    workspace = open_workspace(root)
    start = time.perf_counter()
    for number in range(1, stories + 1):
        worktrees.create(workspace, f"1-{number}")
    return (time.perf_counter() - start) / stories


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--stories", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        make_project(root, args.files, args.stories)
        plain, ours = [], []
        for round_number in range(args.rounds):
            folder = Path(tmp) / f"plain-{round_number}"
            plain.append(git_alone(root, args.stories, folder))
            shutil.rmtree(folder)
            ours.append(with_promptdeck(root, args.stories))
            shutil.rmtree(worktrees.worktrees_dir(root))
            _clean(root)
    git_ms, ours_ms = statistics.median(plain) * 1000, statistics.median(ours) * 1000
    added = ours_ms - git_ms
    print(
        f"{args.stories} worktrees of a {args.files}-file project, {args.rounds} rounds "
        f"interleaved (medians per worktree)"
    )
    print(f"  git worktree add alone      {git_ms:8.1f} ms")
    print(f"  promptdeck worktrees.create {ours_ms:8.1f} ms")
    verdict = "met" if added <= TARGET_MS else "MISSED"
    print(
        f"  promptdeck's own time       {added:8.1f} ms  (target ≤ {TARGET_MS:.0f} ms: {verdict})"
    )
    return 0 if added <= TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
