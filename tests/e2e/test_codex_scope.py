"""End to end: the real ``codex`` CLI keeps a protected file read-only.

The loopback fake of the Responses API plays the model: it asks ``apply_patch`` to update
``sprint-status.yaml``, then to update a file the phase may write, then runs ``sed -i`` on the
sprint status, then says it is done. Codex must reject the first patch (its own policy, before
the sandbox), apply the second, and the shell command must leave the file as it was (the
sandbox mounts it read-only; where the sandbox cannot start, the command fails all the same).
The process's HTTPS proxy is the fake, so nothing leaves the loopback.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from e2e_project import TIMEOUT, agent_cli, make_project
from fake_responses import FakeResponses, ResponsesRequest, codex_provider_args
from loopback_api import agent_env
from promptdeck.core.agents.base import LaunchRequest
from promptdeck.core.agents.codex import CodexAgent
from promptdeck.core.capture import Exchange
from promptdeck.core.project.config import Config

pytestmark = pytest.mark.e2e

CODEX = agent_cli("codex", "@openai/codex")
SPRINT_REL = "_bmad-output/implementation-artifacts/sprint-status.yaml"
SPRINT = "development_status:\n  1-2-parse-lines: ready-for-dev\n"
NOTES_REL = "notes.md"


def _patch(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


STEPS: list[dict[str, Any]] = [
    {
        "type": "custom_tool_call",
        "call_id": "call_protected",
        "name": "apply_patch",
        "input": _patch(SPRINT_REL, "  1-2-parse-lines: ready-for-dev", "  1-2-parse-lines: done"),
    },
    {
        "type": "custom_tool_call",
        "call_id": "call_free",
        "name": "apply_patch",
        "input": _patch(NOTES_REL, "draft", "final"),
    },
    {
        "type": "function_call",
        "call_id": "call_shell",
        "name": "exec_command",
        "arguments": json.dumps({"cmd": f"sed -i s/ready-for-dev/done/ {SPRINT_REL}"}),
    },
]


def _events(model: str, item: dict[str, Any]) -> list[dict[str, Any]]:
    """A completed response whose only output is ``item``."""
    item = {"id": f"item_{uuid.uuid4().hex[:12]}", "status": "completed", **item}
    base = {"id": f"resp_{uuid.uuid4().hex[:24]}", "object": "response", "model": model}
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110,
    }
    return [
        {"type": "response.created", "response": {**base, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {
            "type": "response.completed",
            "response": {**base, "status": "completed", "output": [item], "usage": usage},
        },
    ]


@dataclass
class ScriptedResponses(FakeResponses):
    """Answers the n-th model call (n = the tool calls its input carries) with ``steps[n]``,
    and with the completion signal past the script."""

    steps: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, exchange: Exchange, request: ResponsesRequest) -> None:
        if not request.route.endswith("/responses"):
            super().answer(exchange, request)
            return
        calls = [
            i for i in request.items() if i.get("type") in ("custom_tool_call", "function_call")
        ]
        step = self.steps[len(calls)] if len(calls) < len(self.steps) else None
        if step is None:
            super().answer(exchange, request)
            return
        exchange.send_events(_events(str(request.body.get("model", "gpt-fake")), step))

    def outputs(self) -> dict[str, str]:
        """Every tool call's output the client sent back, by call id."""
        found: dict[str, str] = {}
        for request in self.model_requests():
            for item in request.items():
                if str(item.get("type", "")).endswith("_output"):
                    found[str(item.get("call_id"))] = str(item.get("output"))
        return found


def test_codex_refuses_to_write_a_protected_file(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Keep it small.\n", {SPRINT_REL: SPRINT, NOTES_REL: "draft\n"})
    run_dir = root / ".promptdeck" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "system.md").write_text("You are a coding agent.\n")
    (run_dir / "user.md").write_text("Implement story 1.2.")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    fake = ScriptedResponses(["Done.\nIMPLEMENTATION COMPLETE: 1.2"], steps=STEPS)
    with fake:
        provider = tuple(codex_provider_args(fake.base_url))
        env = agent_env(
            home,
            ("OPENAI_", "CODEX_"),
            ("http_proxy", "https_proxy", "all_proxy", "no_proxy"),
            CODEX_HOME=str(home / ".codex"),
            FAKE_KEY="sk-test-dummy",
            HTTPS_PROXY=fake.proxy_url,
            HTTP_PROXY=fake.proxy_url,
            ALL_PROXY=fake.proxy_url,
            NO_PROXY="127.0.0.1,localhost",
        )
        agent = CodexAgent(Config(agent_codex_bin=CODEX, agent_codex_args=provider), env)
        request = LaunchRequest(
            run_dir=run_dir,
            root=root,
            story_id="1.2",
            phase="dev",
            protected_paths=(SPRINT_REL,),
        )
        spec = agent.launch(request)
        assert spec.warnings == ()
        assert spec.scope is not None
        with spec.scope():
            done = subprocess.run(
                list(spec.argv),
                cwd=spec.cwd,
                input=spec.stdin,
                env=env,
                capture_output=True,
                timeout=TIMEOUT,
            )
        outputs = fake.outputs()
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"IMPLEMENTATION COMPLETE: 1.2" in done.stdout
    assert "patch rejected" in outputs["call_protected"]
    assert "Success" in outputs["call_free"]
    assert "call_shell" in outputs
    assert (root / SPRINT_REL).read_bytes() == SPRINT.encode()
    assert (root / NOTES_REL).read_text() == "final\n"  # the rest of the workspace stays writable
