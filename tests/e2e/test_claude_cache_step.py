"""The cache ``inspect --cache`` predicts is the cache the real ``claude`` gets: story 1.2
stepped through dev then review (git on, status write-back on, cache-aware delivery) against
the loopback fake; the two phases' requests share, up to the last breakpoint before the first
block that differs, what was predicted before dev ran (within 1 %)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from e2e_project import PROMPTDECK, TIMEOUT, agent_cli, make_project
from fake_anthropic import FakeAnthropic, claude_env
from promptdeck.core.capture import measured_shared
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.tokens import get_counter

pytestmark = pytest.mark.e2e

CLAUDE = agent_cli("claude", "@anthropic-ai/claude-code")
CONTEXT = "_bmad-output/planning-artifacts/sprint-project-context.md"
REPLIES = {"dev": "Done.\nIMPLEMENTATION COMPLETE: 1.2", "review": "Fine.\nREVIEW PASSED: 1.2"}


def _project(tmp_path: Path, stable: bool) -> Path:
    config = f'delivery = "cache-aware"\n\n[agent]\nclaude_bin = "{CLAUDE}"\ntimeout = 150.0\n' + (
        "claude_stable_prefix = true\n" if stable else ""
    )
    files = {
        ".promptdeck/config.toml": config,
        # A context file no phase writes, big enough to be worth caching.
        CONTEXT: "# Project context\n\n" + "Python 3.11, pytest, no ORM. " * 400 + "\n",
    }
    root = make_project(tmp_path, "Keep functions small.\n", files)
    trust_config(open_workspace(root))
    return root


def _promptdeck(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROMPTDECK, *args], cwd=root, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.mark.parametrize("stable", [False, True], ids=["git-status-in-system", "stable-prefix"])
def test_dev_then_review_share_what_inspect_predicted(tmp_path: Path, stable: bool) -> None:
    root = _project(tmp_path, stable)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "CLAUDE_", "PROMPTDECK_"))
    }
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), NO_COLOR="1")
    env["PROMPTDECK_CLAUDE_BIN"] = CLAUDE
    captured = _promptdeck(root, env, "capture", "--story", "1.2", "--phase", "dev")
    assert captured.returncode == 0, captured.stderr[-2000:]
    inspected = _promptdeck(
        root, env, "inspect", "1.2", "--cache", "--json", "--phases", "dev,review"
    )
    assert inspected.returncode == 0, inspected.stderr[-2000:]
    (pair,) = json.loads(inspected.stdout)["client_cache"]["pairs"]
    bodies = []
    for phase in ("dev", "review"):
        with FakeAnthropic(reply=REPLIES[phase]) as fake:
            done = _promptdeck(
                root,
                {**env, **claude_env(fake, home)},
                "run",
                "1.2",
                "--phase",
                phase,
                "--agent",
                "claude",
            )
            assert done.returncode == 0, done.stderr[-2000:]
            bodies.append(fake.main_requests()[0].body)
    size, tokens, parts_at = measured_shared(bodies[0], bodies[1], get_counter(), "anthropic")
    print(f"predicted {pair['bytes']:,} B {pair['tokens']:,} tok, sent {size:,} B {tokens:,} tok")
    assert abs(pair["bytes"] - size) <= 0.01 * size, (pair, size, parts_at)
    assert abs(pair["tokens"] - tokens) <= 0.01 * tokens, (pair, tokens)
    assert pair["parts_at"] == parts_at
    # Where the client's git status shares the block with promptdeck's text, the read ends
    # before that block; with the switch it reaches past the whole system prompt.
    assert parts_at == ("messages[0][0]" if stable else "system[2]")
