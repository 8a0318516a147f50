"""End to end: an interrupted ``claude`` run resumed with ``promptdeck resume``.

The real ``claude`` CLI talks to :class:`FakeAnthropic` on 127.0.0.1. A first run is left as a
``kill -9`` leaves it (no ``result.json``, its promptdeck gone); ``promptdeck resume`` then
continues it with ``--resume <session>``, and the API receives the same system text again (the
CLI drops an appended system prompt across ``--resume`` unless it is passed again).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from e2e_project import (
    PROMPTDECK,
    TIMEOUT,
    agent_cli,
    as_if_killed,
    compose,
    make_project,
    run_folders,
)
from fake_anthropic import FakeAnthropic, claude_env
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace

pytestmark = pytest.mark.e2e

CLAUDE = agent_cli("claude", "@anthropic-ai/claude-code")


def test_a_resumed_claude_run_receives_the_same_system_text(tmp_path: Path) -> None:
    config = f'[agent]\nclaude_bin = "{CLAUDE}"\ntimeout = 150.0\n'
    root = make_project(tmp_path, "Keep functions small.\n", {".promptdeck/config.toml": config})
    trust_config(open_workspace(root))
    expected = compose(root)
    home = tmp_path / "home"
    with FakeAnthropic(
        reply="Still working on the parser.", is_main=lambda r: expected[:2000] in r.system_text()
    ) as fake:
        env = claude_env(fake, home)
        first = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "claude"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert first.returncode == 5, first.stderr[-2000:]  # no signal
        [folder] = run_folders(root)
        session = as_if_killed(folder)
        fake.reply = "Finished the parser.\nIMPLEMENTATION COMPLETE: 1.2"
        resumed = subprocess.run(
            [*PROMPTDECK, "resume", folder.name],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        main = fake.main_requests()
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"session {session}" in resumed.stdout
    assert len(main) >= 2
    assert expected in main[-1].system_text()
    # The CLI's own part of the system prompt may vary; promptdeck's system.md is in both whole.
    sent = (folder / "system.md").read_text(encoding="utf-8")
    assert sent in main[0].system_text() and sent in main[-1].system_text()
    [second] = [p for p in run_folders(root) if p != folder]
    argv = json.loads((second / "meta.json").read_text())["argv"]
    assert argv[argv.index("--resume") + 1] == session
    assert json.loads((second / "meta.json").read_text())["continues"] == folder.name
