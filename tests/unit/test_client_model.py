"""The model a run will use, resolved as its client resolves it, and priced only from the table."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from builders import make_workspace, write_files
from promptdeck.core.cost.client_model import client_default, resolve_model
from promptdeck.core.cost.prediction import price_prompt
from promptdeck.core.cost.reported import claude_models, codex_models
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.tokens.pricing import load_prices


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "project", {"README.md": "x\n"})


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def test_with_nothing_configured_claude_2_1_197_uses_opus_4_8_from_the_dated_table(
    workspace: Workspace, home: Path
) -> None:
    resolved = resolve_model(workspace, "claude", version="2.1.197", environ=env(home))
    assert resolved.model == "claude-opus-4-8"
    assert resolved.source.startswith("claude default for 2.1.197 (client defaults table, checked")
    codex = resolve_model(workspace, "codex", version="0.171.0", environ=env(home))
    assert codex.model == "gpt-6.2-sol"
    # "0.171" and "0.171.0" are one version.
    assert client_default("codex", "0.171")[0] == "gpt-6.2-sol"


def test_an_unknown_version_or_none_is_unknown_never_a_neighbours_default(
    workspace: Workspace, home: Path
) -> None:
    for version in ("2.1.196", "9.9", None, "not-a-version"):
        resolved = resolve_model(workspace, "claude", version=version, environ=env(home))
        assert resolved.model == "" and resolved.shown == "unknown"
        assert "claude default" in resolved.source


def test_the_version_is_asked_only_when_the_default_is_needed(
    workspace: Workspace, home: Path
) -> None:
    asked: list[str] = []

    def version() -> str:
        asked.append("asked")
        return "2.1.197"

    resolve_model(workspace, "claude", version=version, environ=env(home, ANTHROPIC_MODEL="m"))
    assert asked == []
    assert resolve_model(workspace, "claude", version=version, environ=env(home)).known
    assert asked == ["asked"]


def test_claude_resolves_in_its_own_order(workspace: Workspace, home: Path) -> None:
    def resolved(**extra: str) -> tuple[str, str]:
        answer = resolve_model(workspace, "claude", version="2.1.197", environ=env(home, **extra))
        return answer.model, answer.source

    write_files(home, {".claude/settings.json": json.dumps({"model": "user-model"})})
    assert resolved() == ("user-model", "~/.claude/settings.json: model")
    write_files(workspace.root, {".claude/settings.json": json.dumps({"model": "shared"})})
    assert resolved() == ("shared", ".claude/settings.json: model")
    write_files(workspace.root, {".claude/settings.local.json": json.dumps({"model": "local"})})
    assert resolved() == ("local", ".claude/settings.local.json: model")
    assert resolved(ANTHROPIC_MODEL="from-env") == (
        "from-env",
        "ANTHROPIC_MODEL in the environment",
    )
    args = make_workspace(
        workspace.root, {}, agent_claude_args=("--permission-mode", "x", "--model", "argued")
    )
    answer = resolve_model(args, "claude", environ=env(home, ANTHROPIC_MODEL="from-env"))
    assert (answer.model, answer.source) == ("argued", "[agent] claude_args: --model")
    configured = make_workspace(workspace.root, {}, agent_claude_model="configured")
    assert resolve_model(configured, "claude", environ=env(home)).source == "[agent] claude_model"
    assert resolve_model(configured, "claude", requested="asked").model == "asked"


def test_codex_reads_its_args_then_a_trusted_projects_config_then_its_home(
    workspace: Workspace, home: Path
) -> None:
    def resolved(ws: Workspace = workspace) -> tuple[str, str]:
        answer = resolve_model(ws, "codex", version="0.171.0", environ=env(home))
        return answer.model, answer.source

    assert resolved() == ("gpt-6.2-sol", resolved()[1])
    write_files(home, {".codex/config.toml": 'model = "user-codex"\n'})
    assert resolved() == ("user-codex", "~/.codex/config.toml: model")
    write_files(workspace.root, {".codex/config.toml": 'model = "project-codex"\n'})
    assert resolved()[0] == "user-codex"  # Codex does not read an untrusted project's file
    root = json.dumps(str(workspace.root.resolve()))
    write_files(
        home,
        {
            ".codex/config.toml": f'model = "user-codex"\n[projects.{root}]\n'
            'trust_level = "trusted"\n'
        },
    )
    assert resolved() == ("project-codex", ".codex/config.toml: model (a project Codex trusts)")
    for args in (("-m", "flag"), ("--model=flag",), ("-c", 'model="flag"')):
        ws = make_workspace(workspace.root, {}, agent_codex_args=args)
        assert resolved(ws) == ("flag", "[agent] codex_args: model")


@pytest.mark.parametrize(
    "planted",
    ["{not json", "[1, 2]", '{"model": 42}', "x" * (2 * 1024 * 1024)],
    ids=["malformed", "not-an-object", "not-a-name", "huge"],
)
def test_a_bad_settings_file_is_one_note_and_the_resolution_goes_on(
    workspace: Workspace, home: Path, planted: str
) -> None:
    write_files(workspace.root, {".claude/settings.json": planted})
    write_files(home, {".claude/settings.json": json.dumps({"model": "user-model"})})
    resolved = resolve_model(workspace, "claude", environ=env(home))
    assert resolved.model == "user-model"
    assert len(resolved.notes) == 1 and resolved.notes[0].startswith(".claude/settings.json: ")


def test_a_fifo_or_a_link_out_of_the_project_is_not_read(
    workspace: Workspace, home: Path, tmp_path: Path
) -> None:
    (workspace.root / ".claude").mkdir()
    os.mkfifo(workspace.root / ".claude" / "settings.json")
    outside = tmp_path / "secret.json"
    outside.write_text(json.dumps({"model": "outside"}), encoding="utf-8")
    (workspace.root / ".claude" / "settings.local.json").symlink_to(outside)
    resolved = resolve_model(workspace, "claude", version="2.1.197", environ=env(home))
    assert resolved.model == "claude-opus-4-8"
    assert len(resolved.notes) == 2
    assert any("outside-project" in note for note in resolved.notes)


def test_a_model_without_a_price_is_unknown_never_a_stand_in(workspace: Workspace) -> None:
    table = load_prices(workspace)
    assert table.find("gpt-6.2-sol") is None  # no official price could be sourced
    cost = price_prompt(
        "dev",
        "gpt-6.2-sol",
        table.find("gpt-6.2-sol"),
        ttl="5m",
        system_tokens=5000,
        user_tokens=100,
        shared_tokens=0,
        output=(4000, "stated default"),
    )
    assert cost.dollars is None and cost.unknown == "price unknown for gpt-6.2-sol"
    opus = table.find("claude-opus-4-8")
    assert opus is not None and opus.checked and opus.source.startswith("https://")


def test_the_stream_names_the_models_used_and_bad_usage_is_unknown() -> None:
    events = [
        {"type": "assistant", "message": {"model": "claude-opus-4-8", "content": []}},
        {
            "type": "result",
            "modelUsage": {
                "claude-opus-4-8": {
                    "inputTokens": 10,
                    "outputTokens": 20,
                    "cacheReadInputTokens": 30,
                    "cacheCreationInputTokens": 40,
                },
                "claude-haiku-4-5": {
                    "inputTokens": 1,
                    "outputTokens": 2,
                    "cacheReadInputTokens": 0,
                    "cacheCreationInputTokens": 0,
                },
            },
        },
    ]
    reported = claude_models(events)
    assert reported.models == ("claude-opus-4-8", "claude-haiku-4-5")
    assert reported.usage is not None and reported.usage["claude-opus-4-8"].cache_write_tokens == 40
    events[1]["modelUsage"]["claude-haiku-4-5"]["outputTokens"] = "2"  # type: ignore[index]
    broken = claude_models(events)
    assert broken.usage is None
    assert broken.unknown == "modelUsage claude-haiku-4-5: outputTokens is not a whole number"
    assert codex_models([{"type": "turn.completed", "model": "gpt-6.2-sol"}]).models == (
        "gpt-6.2-sol",
    )
    assert codex_models([{"type": "turn.completed", "model": 7}]).models == ()


def test_a_forecast_for_a_simulation_prices_a_claude_run_and_says_so(
    workspace: Workspace, home: Path
) -> None:
    from promptdeck.core.cost.client_model import forecast_model

    asked: list[str] = []

    def version(client: str) -> str:
        asked.append(client)
        return "2.1.197"

    replay = forecast_model(workspace, "replay", version=version, environ=env(home))
    assert replay.model == "claude-opus-4-8" and asked == ["claude"]
    assert replay.source.endswith("priced as a claude run: the replay agent is a simulation")
    plain = forecast_model(workspace, None, version=version, environ=env(home))
    assert plain.model == "claude-opus-4-8" and "priced as" not in plain.source
    # A run of the simulation itself is never priced.
    assert resolve_model(workspace, "replay", version="2.1.197", environ=env(home)).model == ""


def test_a_codex_stream_without_a_model_is_read_from_its_session_log(tmp_path: Path) -> None:
    from promptdeck.core.cost.reported import reported_models

    root = tmp_path / "project"
    run = root / ".promptdeck" / "runs" / "r1"
    thread = "01a22587-969f-7222-9750-a0e90a82819c"
    write_files(
        run,
        {
            "stream.jsonl": json.dumps({"type": "thread.started", "thread_id": thread})
            + "\n"
            + json.dumps({"type": "turn.completed", "usage": {}})
            + "\n"
        },
    )
    home = tmp_path / "codex"
    assert reported_models(run, root, "codex", {"CODEX_HOME": str(home)}).models == ()
    write_files(
        home,
        {
            f"sessions/2026/11/29/rollout-2026-11-29T04-19-37-{thread}.jsonl": "\n".join(
                json.dumps(line)
                for line in (
                    {"type": "session_meta", "payload": {"model": "not-this"}},
                    {"type": "turn_context", "payload": {"model": "gpt-6.2-sol"}},
                )
            )
            + "\n"
        },
    )
    found = reported_models(run, root, "codex", {"CODEX_HOME": str(home)})
    assert found.models == ("gpt-6.2-sol",)


def test_every_client_default_row_is_dated_and_sourced() -> None:
    from promptdeck.core.cost.client_model import client_defaults

    rows = client_defaults()
    assert {(row.client, row.version) for row in rows} >= {
        ("claude", "2.1.197"),
        ("codex", "0.171.0"),
    }
    for row in rows:
        assert row.checked[:4].isdigit() and row.source
