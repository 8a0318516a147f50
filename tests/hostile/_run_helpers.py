"""Helpers for the hostile suites of runs and git: workspaces built the way a user gets them
(files committed to a git repository, then ``git clone``d) and the real ``promptdeck`` CLI run
in a subprocess with a wall-clock limit and an address-space limit (``RLIMIT_AS``)."""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

PROMPTDECK = Path(sys.executable).with_name("promptdeck")
"""The installed console script: the CLI exactly as a user runs it."""
WALL_SECONDS = 90.0
MEMORY_BYTES = 2 * 1024**3
"""``RLIMIT_AS`` for every CLI run (threads reserve address space well beyond their use)."""
STORY_REL = "_bmad-output/implementation-artifacts/1-1-parse-lines.md"
STORY = (
    "# Story 1.1: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n"
    "- [x] Read the format\n- [ ] Write the parser\n"
)
IDENTITY = ("Dev", "dev@example.com")
_CONTROL = re.compile(r"[\x1b\x80-\x9f]")


def git_env(home: Path) -> dict[str, str]:
    """An environment that depends on nothing of the caller's: HOME, git identity, terminal."""
    name, email = IDENTITY
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "COLUMNS": "120",
        "LINES": "40",
        "NO_COLOR": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        # No real agent on this machine, whatever the caller's PATH holds.
        "PROMPTDECK_CLAUDE_BIN": str(home / "no-such-claude"),
    }


def git(root: Path, *args: str, check: bool = True) -> str:
    """Run git in ``root`` (own identity, no user config); its stdout."""
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        env=git_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def cloned_workspace(
    tmp_path: Path,
    files: Mapping[str, str | bytes],
    *,
    empty: bool = False,
    trusted: bool = True,
) -> Path:
    """``files`` committed in an origin repository, then ``git clone``d: the clone's path.
    ``empty``: an origin with no commit at all (the files are then written into the clone,
    uncommitted). ``trusted``: the user has run ``promptdeck trust`` in the clone, so a run
    may start the agent its config names (these cases drive their own ``command`` agent)."""
    origin = tmp_path / "origin"
    origin.mkdir()
    everything = dict(files)
    target = tmp_path / "clone"
    git(origin, "init", "-q", "-b", "main")
    if not empty:
        _write(origin, everything)
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", "base")
    git(tmp_path, "clone", "-q", str(origin), str(target))
    if empty:
        _write(target, everything)
    if trusted and ".promptdeck/config.toml" in everything:
        done = cli(target, "trust")
        assert done.code == 0 or "config.toml" in done.stderr, done.stderr
    return target


def _write(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def agent_files(script: str, extra_config: str = "") -> dict[str, str]:
    """Files selecting the ``command`` backend that runs ``script`` (a Python program given
    the story id and the root as arguments), kept at ``.promptdeck/agent.py``."""
    config = (
        '[agent]\ndefault = "command"\n'
        f'command_argv = ["{sys.executable}", ".promptdeck/agent.py", "{{story}}", "{{root}}"]\n'
        + extra_config
    )
    return {
        ".promptdeck/config.toml": config,
        ".promptdeck/agent.py": script,
        ".promptdeck/rules.md": "# Rules\n\nKeep changes small.\n",
    }


@dataclass(frozen=True)
class Done:
    """A finished CLI run."""

    code: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        """stderr's non-empty lines."""
        return [line for line in self.stderr.splitlines() if line.strip()]


def _limits(memory: int, file_size: int | None) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    return apply


def start_cli(
    root: Path,
    *args: str,
    memory: int = MEMORY_BYTES,
    file_size: int | None = None,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdin_fd: int | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``promptdeck ARGS`` in ``root`` (or ``cwd``) with the limits; the caller waits.
    ``env``: variables set over the fixed environment (a hostile ``PATH``); ``stdin_fd``: a
    descriptor for stdin (a FIFO no one writes to), instead of ``stdin``."""
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    return subprocess.Popen(
        [str(PROMPTDECK), *args],
        cwd=cwd or root,
        env={**git_env(home), **(env or {})},
        stdin=(
            stdin_fd
            if stdin_fd is not None
            else subprocess.PIPE
            if stdin is not None
            else subprocess.DEVNULL
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limits(memory, file_size),
    )


def finish(proc: subprocess.Popen[bytes], stdin: bytes | None = None) -> Done:
    """Wait (at most :data:`WALL_SECONDS`) and check what every hostile case must hold: it
    ended, no traceback, no escape or C1 byte on either stream."""
    try:
        out, err = proc.communicate(stdin, timeout=WALL_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"promptdeck did not finish within {WALL_SECONDS:g} s") from None
    done = Done(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
    assert "Traceback" not in done.stderr, done.stderr
    assert not _CONTROL.search(done.stdout + done.stderr), "a control byte reached the terminal"
    return done


def cli(
    root: Path,
    *args: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    **limits: int | None,
) -> Done:
    """``promptdeck ARGS`` in ``root``, finished and checked (see :func:`finish`)."""
    proc = start_cli(root, *args, stdin=stdin, env=env, cwd=cwd, **limits)  # type: ignore[arg-type]
    return finish(proc, stdin)


def one_line(done: Done) -> str:
    """The single line on stderr of a refused command (asserted to be one)."""
    assert len(done.lines) == 1, done.stderr
    assert done.stdout == "", done.stdout
    return done.lines[0]


def run_folders(root: Path) -> list[Path]:
    """The run folders under ``.promptdeck/runs`` (``dry-run`` excluded)."""
    base = root / ".promptdeck" / "runs"
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_dir() and p.name != "dry-run")


def wait_until(check: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    """Poll ``check`` until true; fail naming ``what`` after ``seconds`` (a bound, not a
    timing assertion)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"gave up waiting for {what}")


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Clean up a process the test left running (its own, by pid)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
