"""Hostile workspaces for the reading, terminal and secret cases, built the way a user gets
them: files (and symlinks) committed to a git repository, then ``git clone``d. What git cannot
carry (a FIFO, a sparse file) is made in the clone afterwards, as a build step or another
tool of the user's would.

:func:`run_cli` runs the real ``promptdeck`` console script in a subprocess under a wall-clock
limit and an address-space limit (``RLIMIT_AS``), with a fixed environment.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PROMPTDECK = Path(sys.executable).with_name("promptdeck")
MEMORY_LIMIT = 1024 * 1024 * 1024
"""Address space allowed to one CLI run: far above a normal run, far below a runaway read."""
TIME_LIMIT = 60.0

ARTIFACTS = "_bmad-output/implementation-artifacts"
PLANNING = "_bmad-output/planning-artifacts"
CANARY = "CANARY-7f3a9c-outside-the-project"
"""Text of a file outside the project: it must never appear in any output."""

BASE_FILES: dict[str, str] = {
    f"{ARTIFACTS}/sprint-status.yaml": (
        "development_status:\n  epic-1: in-progress\n  1-1-first-story: ready-for-dev\n"
        "  1-2-second-story: backlog\n"
    ),
    f"{ARTIFACTS}/1-1-first-story.md": (
        "# Story 1.1: First story\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n"
        "- [ ] Task one\n  - [ ] Subtask\n"
    ),
    f"{PLANNING}/epics.md": "# Epics\n\n## Epic 1: The first epic\n",
}


def git_env(home: Path) -> dict[str, str]:
    """An environment independent of the caller's: HOME, git identity, terminal size."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "COLUMNS": "120",
        "LINES": "40",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return env


@dataclass(frozen=True)
class Hostile:
    """A cloned hostile workspace, and the canary file outside it."""

    root: Path
    outside: Path
    canary_file: Path
    env: dict[str, str]


def make_cloned(
    tmp: Path,
    files: Mapping[str, str | bytes],
    *,
    symlinks: Mapping[str, str] = {},
    base: bool = True,
) -> Hostile:
    """Commit ``files`` and ``symlinks`` (path → target, ``{outside}`` replaced by the outside
    folder) to a repository under ``tmp``, clone it, and return the clone."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    outside = tmp / "outside"
    outside.mkdir(exist_ok=True)
    canary_file = outside / "secret.md"
    canary_file.write_text(f"# Story 1.1: {CANARY}\n\n- [ ] {CANARY}\n", encoding="utf-8")
    (outside / "sprint-status.yaml").write_text(
        f"development_status:\n  1-9-{CANARY.lower()}: done\n", encoding="utf-8"
    )
    env = git_env(home)
    origin = tmp / "origin"
    origin.mkdir()
    for rel, content in {**(BASE_FILES if base else {}), **files}.items():
        path = origin / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    for rel, target in symlinks.items():
        path = origin / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        os.symlink(target.replace("{outside}", str(outside)), path)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "hostile"]):
        subprocess.run(["git", *args], cwd=origin, env=env, check=True, capture_output=True)
    clone = tmp / "clone"
    subprocess.run(
        ["git", "clone", "-q", str(origin), str(clone)], env=env, check=True, capture_output=True
    )
    return Hostile(clone.resolve(), outside, canary_file, env)


def _limit_memory() -> None:  # runs in the child before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@dataclass(frozen=True)
class CliResult:
    """What one CLI run gave."""

    code: int
    stdout: str
    stderr: str


def run_cli(
    hostile: Hostile,
    args: Sequence[str],
    *,
    timeout: float = TIME_LIMIT,
    stdin: bytes = b"",
) -> CliResult:
    """Run ``promptdeck ARGS --root <clone>`` in the clone under the time and memory limits.

    A run that outlives ``timeout`` fails the test (``subprocess.TimeoutExpired``).
    """
    done = subprocess.run(
        [str(PROMPTDECK), *args, "--root", str(hostile.root)],
        cwd=hostile.root,
        env=hostile.env,
        input=stdin,
        capture_output=True,
        timeout=timeout,
        preexec_fn=_limit_memory,
        check=False,
    )
    return CliResult(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def has_terminal_controls(text: str) -> bool:
    """True when ``text`` holds ESC or any other C0 (but newline, tab) or C1 control."""
    return any(
        (ord(char) < 0x20 and char not in "\n\t") or 0x7F <= ord(char) <= 0x9F for char in text
    )


def assert_clean(result: CliResult, hostile: Hostile, codes: Sequence[int]) -> None:
    """The common promises: a documented exit code, no traceback, no terminal control, no
    canary text, and an error as one line."""
    both = result.stdout + result.stderr
    assert result.code in codes, (result.code, result.stderr[-2000:])
    assert "Traceback" not in both, result.stderr[-3000:]
    assert not has_terminal_controls(both), repr(both[:2000])
    assert "CANARY" not in both.upper(), both[:2000]
    if result.code not in (0, 3):
        errors = [line for line in result.stderr.splitlines() if line.startswith("promptdeck: ")]
        assert errors and len(errors[-1]) < 1000, result.stderr


def skipped_reasons(stories_json: str) -> dict[str, str]:
    """``path → reason`` of the ``skipped`` list of ``stories --json``."""
    import json

    return {item["path"]: item["reason"] for item in json.loads(stories_json)["skipped"]}
