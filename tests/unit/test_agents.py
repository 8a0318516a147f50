"""Agent backends: launch specs (argv, env, stdin) and output parsing on recorded lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from promptdeck.core.agent_names import CLAUDE_BIN_ENV
from promptdeck.core.agents.base import (
    RESULT,
    SESSION,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    USAGE,
    LaunchRequest,
    PlainTextParser,
)
from promptdeck.core.agents.claude import ClaudeAgent, StreamJsonParser
from promptdeck.core.agents.codex_stream import CodexJsonParser
from promptdeck.core.agents.command import CommandAgent
from promptdeck.core.agents.registry import get_agent
from promptdeck.core.agents.replay import ReplayAgent, outcome_for, parse_script
from promptdeck.core.errors import UsageError
from promptdeck.core.phases.signals import parse_text
from promptdeck.core.project.config import Config


@pytest.fixture
def request_(tmp_path: Path) -> LaunchRequest:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "system.md").write_bytes("SYSTEM — ü\n".encode())
    (run_dir / "user.md").write_bytes(b"Implement story 1-2.")
    return LaunchRequest(
        run_dir=run_dir,
        root=tmp_path,
        story_id="1-2",
        phase="dev",
        story_path="stories/1-2.md",
        epic="1",
    )


def test_claude_argv_uses_the_system_file_and_sends_the_user_message_on_stdin(
    request_: LaunchRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CLAUDE_BIN_ENV, raising=False)
    config = Config(agent_claude_model="sonnet", agent_claude_args=("--permission-mode", "plan"))
    spec = ClaudeAgent(config).launch(request_)
    assert spec.argv[:5] == ("claude", "-p", "--output-format", "stream-json", "--verbose")
    at = spec.argv.index("--append-system-prompt-file")
    assert spec.argv[at + 1] == str(request_.run_dir / "system.md")
    assert spec.argv[spec.argv.index("--model") + 1] == "sonnet"
    assert spec.argv[-2:] == ("--permission-mode", "plan")
    assert spec.stdin == b"Implement story 1-2."
    assert "SYSTEM" not in " ".join(spec.argv)
    assert spec.cwd == request_.root


def test_claude_binary_from_config_and_env_override(
    request_: LaunchRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CLAUDE_BIN_ENV, raising=False)
    assert ClaudeAgent(Config(agent_claude_bin="/opt/cc")).launch(request_).argv[0] == "/opt/cc"
    monkeypatch.setenv(CLAUDE_BIN_ENV, "/env/claude")
    assert ClaudeAgent(Config(agent_claude_bin="/opt/cc")).launch(request_).argv[0] == "/env/claude"


def test_claude_resume_passes_the_session_and_still_the_system_file(
    request_: LaunchRequest,
) -> None:
    resumed = LaunchRequest(**{**request_.__dict__, "resume_session": "abc-123"})
    argv = ClaudeAgent(Config(agent_claude_model="")).launch(resumed).argv
    assert argv[argv.index("--resume") + 1] == "abc-123"
    assert "--append-system-prompt-file" in argv
    assert "--model" not in argv


CLAUDE_LINES = [
    {
        "type": "system",
        "subtype": "init",
        "session_id": "8cf8d734",
        "model": "claude-opus-4-8",
        "tools": ["Bash"],
    },
    {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
            ],
            "usage": {
                "input_tokens": 10,
                "cache_read_input_tokens": 1000,
                "cache_creation_input_tokens": 90,
                "output_tokens": 5,
            },
        },
        "session_id": "8cf8d734",
    },
    {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "REVIEW PASSED: 1-2"}
            ],
        },
    },
    {
        "type": "assistant",
        "message": {
            "content": [{"type": "text", "text": "Done.\nIMPLEMENTATION COMPLETE: 1-2"}],
            "usage": {
                "input_tokens": 20,
                "cache_read_input_tokens": 3000,
                "cache_creation_input_tokens": 0,
                "output_tokens": 9,
            },
        },
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Done.\nIMPLEMENTATION COMPLETE: 1-2",
        "session_id": "8cf8d734",
        "total_cost_usd": 0.0123,
        "usage": {
            "input_tokens": 30,
            "cache_read_input_tokens": 4000,
            "cache_creation_input_tokens": 90,
            "output_tokens": 14,
        },
    },
]


def _parse_all(parser: StreamJsonParser | CodexJsonParser, lines: list[dict]) -> list:  # type: ignore[type-arg]
    events = []
    for line in lines:
        events += parser.parse(json.dumps(line))
    return events


def test_claude_stream_json_events() -> None:
    events = _parse_all(StreamJsonParser(200_000), CLAUDE_LINES)
    kinds = [e.kind for e in events]
    assert kinds[0] == SESSION and events[0].session_id == "8cf8d734"
    assert events[0].model == "claude-opus-4-8"
    assert TOOL_USE in kinds and TOOL_RESULT in kinds
    texts = [e.text for e in events if e.kind == TEXT]
    # The result repeats the last message: it is not read a second time.
    assert texts == ["Done.\nIMPLEMENTATION COMPLETE: 1-2"]
    result = next(e for e in events if e.kind == RESULT)
    assert result.cost_usd == pytest.approx(0.0123)
    assert result.usage is not None and result.usage.cache_read_tokens == 4000


def test_claude_context_use_is_the_latest_message_not_the_cumulative_total() -> None:
    events = _parse_all(StreamJsonParser(200_000), CLAUDE_LINES)
    usages = [e for e in events if e.kind == USAGE]
    assert [u.context_tokens for u in usages] == [1100, 3020]
    assert usages[-1].context_window == 200_000


def test_tool_results_never_reach_the_signal_parser() -> None:
    events = _parse_all(StreamJsonParser(200_000), CLAUDE_LINES)
    agent_text = "\n".join(e.text for e in events if e.kind == TEXT)
    assert [s.kind for s in parse_text(agent_text)] == ["implementation-complete"]
    tool_text = " ".join(e.text for e in events if e.kind == TOOL_RESULT)
    assert "REVIEW PASSED" in tool_text


def test_claude_result_with_new_text_is_read() -> None:
    parser = StreamJsonParser(200_000)
    events = parser.parse(json.dumps({"type": "result", "result": "REVIEW FAILED: 1-2 - x"}))
    assert [e.text for e in events if e.kind == TEXT] == ["REVIEW FAILED: 1-2 - x"]


def test_non_json_lines_are_shown_not_parsed() -> None:
    events = StreamJsonParser(1).parse("Warning: something")
    assert [(e.kind, e.text) for e in events] == [("info", "Warning: something")]
    assert StreamJsonParser(1).parse("   ") == []


CODEX_LINES = [
    {"type": "thread.started", "thread_id": "th_abc"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "Thinking"}},
    {
        "type": "item.completed",
        "item": {
            "id": "i1",
            "type": "command_execution",
            "command": "pytest -q",
            "aggregated_output": "IMPLEMENTATION COMPLETE: 1-2\n3 passed",
            "exit_code": 0,
            "status": "completed",
        },
    },
    {
        "type": "item.completed",
        "item": {"id": "i2", "type": "agent_message", "text": "IMPLEMENTATION COMPLETE: 1-2"},
    },
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 5000, "cached_input_tokens": 4000, "output_tokens": 300},
    },
]


def test_codex_jsonl_events() -> None:
    events = _parse_all(CodexJsonParser(), CODEX_LINES)
    assert events[0].kind == SESSION and events[0].session_id == "th_abc"
    texts = [e.text for e in events if e.kind == TEXT]
    assert texts == ["IMPLEMENTATION COMPLETE: 1-2"]
    usage = next(e for e in events if e.kind == USAGE).usage
    assert usage is not None
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (1000, 4000, 300)
    failed = CodexJsonParser().parse(json.dumps({"type": "turn.failed", "error": {"message": "x"}}))
    assert failed[0].kind == RESULT and failed[0].is_error


def test_command_template_placeholders(request_: LaunchRequest) -> None:
    config = Config(
        agent_command_argv=("agent", "--sys={system_file}", "{user_file}", "{story}/{phase}")
    )
    spec = CommandAgent(config).launch(request_)
    assert spec.argv == (
        "agent",
        f"--sys={request_.run_dir / 'system.md'}",
        str(request_.run_dir / "user.md"),
        "1-2/dev",
    )
    assert spec.stdin is None
    assert [e.kind for e in PlainTextParser().parse("IMPLEMENTATION COMPLETE: 1-2")] == [TEXT]


def test_command_template_errors_are_usage_errors(request_: LaunchRequest) -> None:
    with pytest.raises(UsageError, match="command_argv is empty"):
        CommandAgent(Config()).launch(request_)
    with pytest.raises(UsageError, match="unknown placeholder"):
        CommandAgent(Config(agent_command_argv=("x", "{nope}"))).launch(request_)


def test_replay_runs_as_a_python_subprocess(request_: LaunchRequest) -> None:
    spec = ReplayAgent(Config(agent_replay_delay=0.0), script="dev=blocked").launch(request_)
    # -P: the project root (its cwd) is never on the simulation's import path.
    assert spec.argv[:4] == (sys.executable, "-P", "-m", "promptdeck.core.agents.replay_main")
    assert spec.argv[spec.argv.index("--outcome") + 1] == "blocked"
    assert spec.argv[spec.argv.index("--story-file") + 1] == "stories/1-2.md"


def test_replay_script_parsing() -> None:
    assert parse_script("dev=blocked:1, review=fail") == {
        "dev": ("blocked", 1),
        "review": ("fail", None),
    }
    assert outcome_for("dev=blocked:1", "dev", 1) == "blocked"
    assert outcome_for("dev=blocked:1", "dev", 2) == "ok"
    assert outcome_for("", "review", 1) == "ok"
    for bad in ("dev", "dev=explode", "nophase=ok", "dev=fail:x"):
        with pytest.raises(UsageError):
            parse_script(bad)


def test_get_agent_names() -> None:
    config = Config()
    assert [get_agent(n, config).name for n in ("claude", "codex", "command", "replay")] == [
        "claude",
        "codex",
        "command",
        "replay",
    ]
    with pytest.raises(UsageError):
        get_agent("gpt", config)
