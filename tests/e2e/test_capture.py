"""``promptdeck capture`` with the real ``claude`` CLI: the request it records holds
``compose --part system`` byte for byte, and its parts sum to the request's size."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from e2e_project import PROMPTDECK, TIMEOUT, agent_cli, compose, make_project

pytestmark = pytest.mark.e2e

CLAUDE = agent_cli("claude", "@anthropic-ai/claude-code")


def _capture(root: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "PROMPTDECK_"))}
    env.update(HOME=str(home), PROMPTDECK_CLAUDE_BIN=CLAUDE, NO_COLOR="1")
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [*PROMPTDECK, "capture", "--client", "claude", "--story", "1.2", "--phase", "dev", *extra],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )


def test_the_captured_system_text_holds_compose_and_the_parts_sum(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Keep functions small. Überprüfe alles.\n")
    expected = compose(root)
    before = sorted(p.relative_to(root) for p in root.rglob("*") if ".git" not in p.parts)
    done = _capture(root, tmp_path / "home", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    parts = {part["name"]: part for part in report["parts"]}
    assert parts["promptdeck system"]["bytes"] == len(expected.encode("utf-8"))
    assert parts["client system"]["bytes"] > 0  # the client's own prompt came with ours
    assert parts["tools"]["bytes"] > 0
    assert sum(part["bytes"] for part in report["parts"]) == report["request_bytes"]
    assert parts["envelope"]["bytes"] >= 0
    # Nothing was written to the project.
    after = sorted(p.relative_to(root) for p in root.rglob("*") if ".git" not in p.parts)
    assert after == before


def test_a_missing_client_is_one_line(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Rules.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTDECK_")}
    env.update(HOME=str(tmp_path / "home"), PROMPTDECK_CLAUDE_BIN=str(tmp_path / "no-claude"))
    done = subprocess.run(
        [*PROMPTDECK, "capture", "--story", "1.2"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 12
    assert len(done.stderr.strip().splitlines()) == 1
    assert "claude CLI was not found" in done.stderr
