"""The flight recorder end to end with the real ``codex`` CLI against the scripted Responses
fake: the phase runs a shell call printing a file promptdeck injected, then signals; with
Codex's own session rollout, ``show --turns --json`` lists each model call the fake answered,
in order, with the usage it reported, and flags nothing it cannot tell (a shell read is tool
output, not a file read)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from e2e_project import PROMPTDECK, TIMEOUT, agent_cli, compose, make_project
from fake_flight import ScriptedResponses
from loopback_session import _config, _env
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace

pytestmark = pytest.mark.e2e

CODEX = agent_cli("codex", "@openai/codex")


def test_each_model_call_the_fake_answered_is_listed_with_its_usage(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Keep functions small.\n", {"docs/screen.txt": "x\n"})
    injected = re.search(r'<file path="([^"]+)">', compose(root))
    assert injected is not None
    home = tmp_path / "home"
    spec = {"root": str(root), "home": str(home), "codex": CODEX}
    with ScriptedResponses(["unused"], read_path=str(root / injected.group(1))) as fake:
        (root / ".promptdeck" / "config.toml").write_text(_config(spec, fake), encoding="utf-8")
        trust_config(open_workspace(root))
        env = _env(spec, fake)
        done = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "codex", "--no-git"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        answered = list(fake.answered)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    shown = subprocess.run(
        [*PROMPTDECK, "show", "last", "--turns", "--json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert [a.answer for a in answered] == ["shell", "text"]
    assert data["sources"] == ["stream", "transcript"], data["notes"]
    assert data["format"].startswith("codex exec --json 0.")
    got = [
        (
            r["usage"]["input_tokens"] + r["usage"]["cache_read_tokens"],
            r["usage"]["cache_read_tokens"],
            r["usage"]["output_tokens"],
        )
        for r in data["requests"]
    ]
    assert got == [
        (a.usage["input_tokens"], a.usage["cached"], a.usage["output_tokens"]) for a in answered
    ]
    (added,) = data["requests"][1]["added"]
    assert injected.group(1) in added["source"] and added["bytes"] > 0
    spend = data["spend"]
    assert sum(c["tokens"] for c in spend["categories"]) == spend["total_tokens"]
    assert spend["main_tokens"] == spend["reported_tokens"]
