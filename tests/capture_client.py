"""Stand-ins for a real client in capture tests: small programs that read the arguments a
Claude Code run is given and post one fixed Messages request to the loopback, as the real
client would, so a capture goes through the real loopback server and the real splitting code.

The request holds a client system prompt, one tool, promptdeck's system text as the client
appends it, the project's ``CLAUDE.md`` when there is one (in a reminder, as Claude Code sends
it) and the user turn: every byte of it is fixed by the prompt, the project and this file, so
what the capture view shows is the same on every run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app_helpers import wait_for
from promptdeck.tui.screens.capture_view import CaptureScreen
from textual.pilot import Pilot
from textual.screen import Screen

CLIENT_SYSTEM = "You are a coding client. Work in the user's repository; be brief.\n"
"""The client's own system text in the fixed request."""

POSTING_CLIENT = r"""
import json, os, pathlib, sys, urllib.request

if sys.argv[1:] == ["--version"]:
    print("2.1.197 (Claude Code)")
    sys.exit(0)
args = sys.argv[1:]
system_file = args[args.index("--append-system-prompt-file") + 1]
with open(system_file, encoding="utf-8") as handle:
    appended = handle.read()
user = sys.stdin.read()
turn = [{"type": "text", "text": user}]
memory = pathlib.Path("CLAUDE.md")
if memory.is_file():
    # As Claude Code loads it: the project's CLAUDE.md in a reminder ahead of the turn.
    reminder = "Contents of CLAUDE.md:\n\n" + memory.read_text(encoding="utf-8")
    turn.insert(0, {"type": "text", "text": "<system-reminder>" + reminder + "</system-reminder>"})
body = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 32000,
    "stream": True,
    "system": [
        {"type": "text", "text": CLIENT_SYSTEM},
        {"type": "text", "text": appended},
    ],
    "tools": [
        {
            "name": "Read",
            "description": "Read one file of the repository.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ],
    "messages": [{"role": "user", "content": turn}],
}
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages?beta=true",
    data=json.dumps(body).encode("utf-8"),
    headers={"content-type": "application/json", "x-api-key": os.environ["ANTHROPIC_API_KEY"]},
)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
opener.open(request, timeout=30).read()
"""

HANGING_CLIENT = """
import time
time.sleep(600)
"""


def client_program(folder: Path, body: str, name: str = "claude") -> Path:
    """An executable ``folder/name`` running ``body`` with this Python."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    prelude = f"#!{sys.executable}\nCLIENT_SYSTEM = {CLIENT_SYSTEM!r}\n"
    program.write_text(prelude + body, encoding="utf-8")
    program.chmod(0o755)
    return program


async def press_capture(pilot: Pilot[Any]) -> CaptureScreen:
    """Press ``C`` and wait until the capture view has its capture or its failure."""
    await pilot.press("C")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CaptureScreen), "the view")
    screen = pilot.app.screen
    assert isinstance(screen, CaptureScreen)
    await wait_for(pilot, lambda: screen.finished, "the capture")
    return screen


async def close_capture(pilot: Pilot[Any], main: Screen[Any]) -> None:
    """Escape, and wait until ``main`` is on top again."""
    await pilot.press("escape")
    await wait_for(pilot, lambda: pilot.app.screen is main, "the main screen")
