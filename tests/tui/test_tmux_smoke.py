"""A real-terminal smoke test: tmux runs ``promptdeck demo``, keys are sent, and the screen
tmux captures shows the story tree and the layers."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.tmux

TMUX = shutil.which("tmux")
WAIT_LIMIT_SECONDS = 60.0


def _promptdeck() -> str:
    script = Path(sys.executable).with_name("promptdeck")
    return str(script) if script.exists() else "promptdeck"


def _tmux(session: str, *args: str) -> list[str]:
    """A tmux command line for ``session`` on a server of its own: the session's name is also
    the server's socket name (``-L``), so parallel workers, and anyone else's tmux on the
    machine, never share a server, its environment or its sessions with this test."""
    return [TMUX or "tmux", "-L", session, *args]


def _capture(session: str) -> str:
    done = subprocess.run(
        _tmux(session, "capture-pane", "-p", "-t", session),
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


def _alive(session: str) -> bool:
    done = subprocess.run(_tmux(session, "has-session", "-t", session), capture_output=True)
    return done.returncode == 0


def _wait_for_screen(session: str, *needles: str) -> str:
    started = time.monotonic()
    screen = ""
    while time.monotonic() - started < WAIT_LIMIT_SECONDS:
        screen = _capture(session)
        if all(needle in screen for needle in needles):
            return screen
        time.sleep(0.2)
    raise AssertionError(f"the terminal never showed {needles!r}; last screen:\n{screen}")


def _start(tmp_path: Path, width: int, height: int) -> str:
    if TMUX is None:
        pytest.skip("tmux is not installed: the real-terminal smoke test needs it")
    name = f"promptdeck-smoke-{uuid.uuid4().hex[:8]}"
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        # A tmux server started earlier keeps its own environment: say it explicitly.
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path),
        "TERM": "xterm-256color",
    }
    # COLUMNS and LINES, when the caller exported them, would override the pane's size inside
    # the app: they are removed from the app's environment (and from tmux's).
    command = " ".join(
        [
            "env",
            "-u",
            "COLUMNS",
            "-u",
            "LINES",
            *(f"{key}={shlex.quote(value)}" for key, value in env.items()),
            shlex.quote(_promptdeck()),
            "demo",
        ]
    )
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    subprocess.run(
        _tmux(
            name,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            str(width),
            "-y",
            str(height),
            command,
        ),
        check=True,
        env={**environ, "TMUX": ""},
    )
    return name


def _stop(name: str) -> None:
    # The server is the test's own: it goes with the session.
    subprocess.run(_tmux(name, "kill-server"), capture_output=True, check=False)


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    # Exported on purpose: the test must not depend on them.
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("LINES", "100")
    name = _start(tmp_path, 160, 45)
    try:
        yield name
    finally:
        _stop(name)


@pytest.fixture
def small_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("LINES", "100")
    name = _start(tmp_path, 80, 24)
    try:
        yield name
    finally:
        _stop(name)


def _quit(session: str) -> None:
    _send(session, "q")
    started = time.monotonic()
    while _alive(session) and time.monotonic() - started < WAIT_LIMIT_SECONDS:
        time.sleep(0.2)
    assert not _alive(session), "q did not quit the app"


def _send(session: str, *keys: str) -> None:
    subprocess.run(_tmux(session, "send-keys", "-t", session, *keys), check=True)


def test_demo_in_a_real_terminal_shows_tree_and_layers(session: str, tmp_path: Path) -> None:
    screen = _wait_for_screen(session, "Epic 1", "Layer-0A", "Layer-6", "demo")
    assert "1-1" in screen and "Statement import" in screen
    assert "tokens" in screen and "Workspace rules" in screen

    _send(session, "d")
    # The discovery file's row: its name starts with its story key (a narrow column cuts a
    # long name in its middle, never at the key). The start's notes toast may cover the files
    # table for its few seconds, so the row is waited for.
    _wait_for_screen(session, "discovery on", "sprint-1-1")

    _send(session, "q")
    started = time.monotonic()
    while _alive(session) and time.monotonic() - started < WAIT_LIMIT_SECONDS:
        time.sleep(0.2)
    assert not _alive(session), "q did not quit the app"
    # The demo deletes its temporary folder on quit (TMPDIR is this test's tmp_path).
    assert not list(tmp_path.glob("promptdeck-demo-*"))


def test_at_80_by_24_the_keys_that_matter_are_on_screen(small_session: str) -> None:
    # Waited for until the footer is drawn too: on a loaded machine tmux can be read between
    # the preview's rows and the footer's of one frame.
    screen = _wait_for_screen(small_session, "Layer-6", "1-1", "q Quit")
    footer = screen.rstrip("\n").splitlines()[-1]
    for key in ("r Run", "? Help", "q Quit", "n Next"):
        assert key in footer, f"{key!r} is not in the footer: {footer!r}"
    assert "c Cancel" not in footer  # offered only while a phase runs
    # The hidden phase region is named, with its key.
    assert "3 Phases" in screen and "(hidden)" in screen

    _send(small_session, "3")
    screen = _wait_for_screen(small_session, "Phases · 1-1")
    assert "kickoff" in screen and "review" in screen
    _quit(small_session)
