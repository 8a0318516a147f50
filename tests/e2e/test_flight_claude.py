"""The flight recorder end to end with the real ``claude`` CLI against the scripted fake: the
phase reads a file promptdeck injected, runs a subagent, then signals; ``show --turns --json``
lists every request the fake answered, in order, with the usage it reported, flags the read of
the injected file, nests the subagent's requests under the call that started it, and its
spend sums to the usage reported."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from e2e_project import PROMPTDECK, TIMEOUT, agent_cli, compose, make_project
from fake_anthropic import claude_env
from fake_flight import ScriptedAnthropic
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace

pytestmark = pytest.mark.e2e

CLAUDE = agent_cli("claude", "@anthropic-ai/claude-code")
MODEL = "claude-sonnet-4-6"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    config = (
        f'[agent]\nclaude_bin = "{CLAUDE}"\ntimeout = 150.0\n\n[pricing]\nmodel = "{MODEL}"\n\n'
        "[status]\nwrite_back = false\n"
    )
    root = make_project(tmp_path, "Keep functions small.\n", {".promptdeck/config.toml": config})
    trust_config(open_workspace(root))
    return root


def _usage(request: dict[str, object]) -> dict[str, object]:
    usage = request["usage"]
    assert isinstance(usage, dict)
    return usage


def test_every_request_the_fake_answered_is_listed_with_its_usage(
    project: Path, tmp_path: Path
) -> None:
    injected = re.search(r'<file path="([^"]+)">', compose(project))
    assert injected is not None
    home = tmp_path / "home"
    with ScriptedAnthropic(reply="", read_path=str(project / injected.group(1))) as fake:
        env = claude_env(fake, home)
        done = subprocess.run(
            [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "claude", "--no-git"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        answered = list(fake.answered)
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    # The run keeps its turn list when it ends.
    assert len(list((project / ".promptdeck" / "runs").glob("*/turns.json"))) == 1
    shown = subprocess.run(
        [*PROMPTDECK, "show", "last", "--turns", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    main = [a for a in answered if a.thread == "main"]
    sub = [a for a in answered if a.thread == "subagent"]
    assert [a.answer for a in main] == ["Read", main[1].answer, "text"]
    assert len(sub) == 2
    requests = data["requests"]
    assert len(requests) == len(main)

    def reported(entry: dict[str, object]) -> dict[str, object]:
        usage = _usage(entry)
        return {
            "input_tokens": usage["input_tokens"],
            "cache_creation_input_tokens": usage["cache_write_tokens"],
            "cache_read_input_tokens": usage["cache_read_tokens"],
        }

    def sent(answer: object) -> dict[str, int]:
        usage = dict(answer.usage)  # type: ignore[attr-defined]
        usage.pop("output_tokens")
        return usage

    assert [reported(r) for r in requests] == [sent(a) for a in main]
    (subagent,) = requests[1]["subagents"]
    assert [reported(r) for r in subagent["requests"]] == [sent(a) for a in sub]
    flags = data["spend"]["flags"]
    rel = injected.group(1)
    size = len((project / rel).read_bytes())
    assert any(
        f"read {rel}, which promptdeck had already injected unchanged" in f
        and f"{size:,} bytes paid twice" in f
        for f in flags
    ), flags
    spend = data["spend"]
    assert sum(c["tokens"] for c in spend["categories"]) == spend["total_tokens"]
    # The client's own end-of-run usage covers the main thread; the subagent's is its own.
    assert spend["main_tokens"] == spend["reported_tokens"], data
    everything = [*main, *sub]
    assert spend["total_tokens"] == sum(sum(a.usage.values()) for a in everything)
