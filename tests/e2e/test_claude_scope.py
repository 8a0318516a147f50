"""End to end: the real ``claude`` CLI refuses to edit a file the phase may not write.

The loopback fake plays the model: it reads ``sprint-status.yaml``, then asks for an ``Edit``
(or a ``Write``) of it, then says the phase's completion signal. The client must answer the
edit with an error tool result — the refusal of promptdeck's deny rules — before it touches the
file, so the file is byte for byte what it was (and promptdeck's check after the phase has
nothing to put back). Without protected files the same script does edit it: the refusal is the
rules', not the script's.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from e2e_project import PROMPTDECK, TIMEOUT, agent_cli, make_project
from fake_anthropic import AnthropicRequest, FakeAnthropic, claude_env
from promptdeck.core.agents.base import LaunchRequest
from promptdeck.core.agents.claude import SETTINGS_FILE, ClaudeAgent
from promptdeck.core.capture import Exchange
from promptdeck.core.project.config import Config
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace

pytestmark = pytest.mark.e2e

CLAUDE = agent_cli("claude", "@anthropic-ai/claude-code")
SPRINT_REL = "_bmad-output/implementation-artifacts/sprint-status.yaml"
SPRINT = (
    "development_status:\n  epic-1: in-progress\n  1-1-read-input: done\n"
    "  1-2-parse-lines: ready-for-dev\n"
)
DONE = "Implemented the parser.\nIMPLEMENTATION COMPLETE: 1.2"
DENIED = "denied by your permission settings"


def _events(model: str, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The stream of one assistant message holding ``block`` (a text or a tool call)."""
    tool = block["type"] == "tool_use"
    usage = {"input_tokens": 1200, "output_tokens": 1}
    yield {
        "type": "message_start",
        "message": {
            "id": f"msg_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": dict(usage, cache_creation_input_tokens=0, cache_read_input_tokens=0),
        },
    }
    if tool:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    yield {"type": "content_block_start", "index": 0, "content_block": start}
    yield {"type": "content_block_delta", "index": 0, "delta": delta}
    yield {"type": "content_block_stop", "index": 0}
    yield {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 20},
    }
    yield {"type": "message_stop"}


@dataclass
class ScriptedFake(FakeAnthropic):
    """Answers the main conversation's n-th request (n = the assistant turns it carries) with
    ``steps[n]``, and with the completion signal past the script."""

    steps: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, exchange: Exchange, request: AnthropicRequest) -> None:
        body = request.body
        if not (request.route.endswith("/v1/messages") and isinstance(body, dict)):
            super().answer(exchange, request)
            return
        if not (self.is_main(request) and body.get("stream")):
            super().answer(exchange, request)
            return
        turns = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
        step = self.steps[turns] if turns < len(self.steps) else {"type": "text", "text": DONE}
        exchange.send_events(_events(str(body.get("model") or "claude-fake"), step))

    def tool_results(self) -> dict[str, dict[str, Any]]:
        """Every ``tool_result`` block the client sent, by tool call id (the latest kept)."""
        found: dict[str, dict[str, Any]] = {}
        for request in self.main_requests():
            for message in request.body.get("messages", ()):
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found[str(block.get("tool_use_id"))] = block
        return found


def _script(path: Path, tool: str) -> list[dict[str, Any]]:
    """Read the file (Claude Code edits only what was read), then edit or overwrite it."""
    if tool == "Edit":
        change = {
            "file_path": str(path),
            "old_string": "1-2-parse-lines: ready-for-dev",
            "new_string": "1-2-parse-lines: done",
        }
    else:
        change = {"file_path": str(path), "content": "development_status: {}\n"}
    return [
        {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": str(path)}},
        {"type": "tool_use", "id": "toolu_change", "name": tool, "input": change},
    ]


def _text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


def _launch(root: Path, run_dir: Path, home: Path, tool: str, *protected: str) -> ScriptedFake:
    """The agent's own launch (argv, stdin, working folder) run as it is, against the fake."""
    run_dir.mkdir(parents=True)
    (run_dir / "system.md").write_text("You are a coding agent. Implement the story.\n")
    (run_dir / "user.md").write_text("Implement story 1.2.")
    request = LaunchRequest(
        run_dir=run_dir, root=root, story_id="1.2", phase="dev", protected_paths=protected
    )
    spec = ClaudeAgent(Config(agent_claude_bin=CLAUDE)).launch(request)
    assert spec.warnings == ()
    fake = ScriptedFake(reply=DONE, steps=_script(root / SPRINT_REL, tool))
    with fake:
        done = subprocess.run(
            list(spec.argv),
            cwd=spec.cwd,
            input=spec.stdin,
            env=claude_env(fake, home),
            capture_output=True,
            timeout=TIMEOUT,
        )
        fake.tool_results()  # read the recording while the server is open
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"IMPLEMENTATION COMPLETE: 1.2" in done.stdout
    return fake


@pytest.mark.parametrize("tool", ["Edit", "Write"])
def test_the_client_refuses_to_change_a_protected_file(tmp_path: Path, tool: str) -> None:
    root = make_project(tmp_path, "Keep it small.\n", {SPRINT_REL: SPRINT})
    run_dir = root / ".promptdeck" / "runs" / "r1"
    fake = _launch(root, run_dir, tmp_path / "home", tool, SPRINT_REL)
    results = fake.tool_results()
    assert "toolu_read" in results and not results["toolu_read"].get("is_error")
    refused = results["toolu_change"]
    assert refused.get("is_error") is True
    assert DENIED in _text(refused)
    assert (root / SPRINT_REL).read_bytes() == SPRINT.encode()
    assert (run_dir / SETTINGS_FILE).is_file()


def test_without_protected_files_the_same_script_edits_it(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Keep it small.\n", {SPRINT_REL: SPRINT})
    run_dir = root / ".promptdeck" / "runs" / "r1"
    fake = _launch(root, run_dir, tmp_path / "home", "Edit")
    assert not fake.tool_results()["toolu_change"].get("is_error")
    assert "1-2-parse-lines: done" in (root / SPRINT_REL).read_text()
    assert not (run_dir / SETTINGS_FILE).exists()


def test_promptdeck_run_passes_the_scope_to_the_client(tmp_path: Path) -> None:
    """Through ``promptdeck run``: the run's own scope becomes the client's deny rules."""
    config = f'[agent]\nclaude_bin = "{CLAUDE}"\ntimeout = 150.0\n'
    root = make_project(
        tmp_path,
        "Keep it small.\n",
        {SPRINT_REL: SPRINT, ".promptdeck/config.toml": config},
    )
    trust_config(open_workspace(root))  # the config names the binary: the user trusts it
    fake = ScriptedFake(
        reply=DONE,
        steps=_script(root / SPRINT_REL, "Edit"),
        is_main=lambda r: "Implement" in str(r.body.get("messages")) and bool(r.body.get("tools")),
    )
    with fake:
        done = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "claude"],
            cwd=root,
            env=claude_env(fake, tmp_path / "home"),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        results = fake.tool_results()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    refused = results["toolu_change"]
    assert refused.get("is_error") is True and DENIED in _text(refused)
    (run_dir,) = [meta.parent for meta in (root / ".promptdeck" / "runs").glob("*/meta.json")]
    meta = json.loads((run_dir / "meta.json").read_text())
    argv = meta["launch"]["argv"] if "launch" in meta else meta["argv"]
    assert argv[argv.index("--settings") + 1] == str(run_dir / SETTINGS_FILE)
    # The refusal is in the run's own record of the stream too.
    assert DENIED in (run_dir / "stream.jsonl").read_text()
    # The agent's edit never landed: only promptdeck's own status write-back changed the file.
    before, after = SPRINT.splitlines(), (root / SPRINT_REL).read_text().splitlines()
    assert len(before) == len(after)
    changed = [old for old, new in zip(before, after, strict=True) if old != new]
    assert changed in ([], ["  1-2-parse-lines: ready-for-dev"])
    assert "1-2-parse-lines: done" not in after
