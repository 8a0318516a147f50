"""A real terminal on a private tmux server: sprint-status.yaml edited from outside the app
changes the tree, and the cursor stays on the story it was on."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.tmux

TMUX = shutil.which("tmux")
WAIT_LIMIT_SECONDS = 60.0
SPRINT = "_bmad-output/implementation-artifacts/sprint-status.yaml"


class PrivateTmux:
    """One tmux server of this test's own (``tmux -L``), so no other session is touched."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            [TMUX or "tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            check=check,
            env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")},
        )
        return done.stdout

    def wait_for(self, *needles: str) -> str:
        started = time.monotonic()
        screen = ""
        while time.monotonic() - started < WAIT_LIMIT_SECONDS:
            screen = self("capture-pane", "-p", "-t", "deck", check=False)
            if all(needle in screen for needle in needles):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"the terminal never showed {needles!r}; last screen:\n{screen}")


@pytest.fixture
def workspace(tmp_path: Path, copy_demo: Callable[[Path], Path]) -> Path:
    return copy_demo(tmp_path / "ledgerline")


@pytest.fixture
def tmux(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workspace: Path) -> Iterator[PrivateTmux]:
    if TMUX is None:
        pytest.skip("tmux is not installed: the real-terminal test needs it")
    # Exported on purpose: the app must follow the pane's size, not these.
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("LINES", "100")
    server = PrivateTmux(f"promptdeck-test-{uuid.uuid4().hex[:8]}")
    script = Path(sys.executable).with_name("promptdeck")
    env = {
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "TERM": "xterm-256color",
    }
    command = " ".join(
        [
            "env",
            "-u",
            "COLUMNS",
            "-u",
            "LINES",
            *(f"{key}={shlex.quote(value)}" for key, value in env.items()),
            shlex.quote(str(script)),
            shlex.quote(str(workspace)),
        ]
    )
    server("new-session", "-d", "-s", "deck", "-x", "120", "-y", "40", command)
    try:
        yield server
    finally:
        server("kill-server", check=False)


def test_an_outside_edit_changes_the_tree_and_keeps_the_cursor(
    tmux: PrivateTmux, workspace: Path
) -> None:
    tmux.wait_for("Layer-6", "1-1 Parse CSV")
    tmux("send-keys", "-t", "deck", "Down", "Down")
    tmux.wait_for("· 1-3 ·")
    screen = tmux.wait_for("◐ 1-3 Detect")

    sprint = workspace / SPRINT
    text = sprint.read_text(encoding="utf-8")
    edited = text.replace(
        "1-3-detect-duplicate-transactions: in-progress",
        "1-3-detect-duplicate-transactions: review",
    )
    assert edited != text
    sprint.write_text(edited, encoding="utf-8")

    screen = tmux.wait_for("◎ 1-3 Detect")
    assert "◐ 1-3" not in screen
    # The cursor stayed on 1-3: one step down is the story after it.
    tmux("send-keys", "-t", "deck", "Down")
    tmux.wait_for("· 1-4 ·")
