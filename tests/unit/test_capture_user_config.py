"""The user's own client configuration as a capture reads it: read only, each rules file with
why it loads, the settings that shape the request kept and programs left out, MCP servers
listed unless asked for, and bad files one note each."""

from __future__ import annotations

import json
import os
from pathlib import Path

from builders import write_files
from promptdeck.core.capture.user_config import place_user_config, read_user_config


def _claude(home: Path, root: Path, *, with_mcp: bool = False, trusted: bool = False):  # type: ignore[no-untyped-def]
    return read_user_config(
        "claude", root, {"HOME": str(home)}, own_settings=trusted, with_mcp=with_mcp
    )


def test_the_users_memory_rules_and_model_reach_the_capture(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "project"
    write_files(
        home,
        {
            ".claude/CLAUDE.md": "# Mine\n\nAlways answer in French.\n",
            ".claude/rules/style.md": "Tabs, never spaces.\n",
            ".claude/rules/ts.md": "---\npaths:\n  - 'src/**/*.ts'\n---\nStrict.\n",
            ".claude/settings.json": json.dumps(
                {"model": "claude-opus-4-8", "hooks": {"Stop": []}, "apiKeyHelper": "x"}
            ),
            ".claude/.credentials.json": '{"token": "secret"}',
            ".claude.json": json.dumps({"mcpServers": {"docs": {"command": "docs-server"}}}),
        },
    )
    write_files(
        root,
        {
            "CLAUDE.md": "Project memory.\n",
            "CLAUDE.local.md": "Local.\n",
            ".claude/rules/big.md": "b" * 40_001,
        },
    )
    found = _claude(home, root)
    why = {rule.path: rule.loaded_because for rule in found.rules}
    assert why["~/.claude/CLAUDE.md"] == "the user's memory"
    assert why["~/.claude/rules/style.md"] == "a user rule"
    assert why["CLAUDE.md"] == "project memory"
    assert why["CLAUDE.local.md"] == "the user's local project memory"
    assert "~/.claude/rules/ts.md" not in why
    assert why[".claude/rules/big.md"] == "a project rule"
    assert (
        ".claude/rules/big.md: 40,001 characters, over Claude Code's large-file warning "
        "(about 40,000)" in found.notes
    )
    assert any("ts.md: not loaded at the start" in note for note in found.notes)
    copies = dict(found.copies)
    assert json.loads(copies[".claude/settings.json"]) == {"model": "claude-opus-4-8"}
    assert not any("credentials" in name for name in copies)
    assert "MCP server docs not started: its tools not measured" in found.notes
    assert found.mcp_config == {}
    scratch = tmp_path / "scratch"
    place_user_config(found, scratch)
    assert (scratch / ".claude/CLAUDE.md").read_text() == "# Mine\n\nAlways answer in French.\n"
    assert _claude(home, root, with_mcp=True).mcp_config == {
        "mcpServers": {"docs": {"command": "docs-server"}}
    }


def test_bad_settings_are_one_note_each_and_the_capture_goes_on(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "project"
    (home / ".claude").mkdir(parents=True)
    root.mkdir()
    (home / ".claude/settings.json").write_text("{not json")
    os.mkfifo(home / ".claude/CLAUDE.md")
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"mcpServers": {"x": {}}}')
    (home / ".claude.json").symlink_to(outside)
    found = _claude(home, root)
    assert found.rules == () and found.copies == ()
    assert len(found.notes) == 3
    assert any("settings.json: not a JSON object" in note for note in found.notes)
    assert any(".claude.json: a link out of its folder" in note for note in found.notes)


def test_codex_reads_its_chain_from_the_git_root_under_one_budget(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_files(
        tmp_path,
        {
            "AGENTS.md": "r" * (40 * 1024),
            "app/AGENTS.md": "App rules.\n",
            "codex/AGENTS.md": "My own instructions.\n",
            "codex/config.toml": 'model = "gpt-6.2-sol"\n[mcp_servers.docs]\ncommand = "d"\n',
        },
    )
    found = read_user_config(
        "codex",
        tmp_path / "app",
        {"CODEX_HOME": str(tmp_path / "codex")},
        own_settings=False,
        with_mcp=False,
    )
    assert [(r.path, r.loaded_because) for r in found.rules] == [
        ("$CODEX_HOME/AGENTS.md", "the user's instructions"),
        ("../AGENTS.md", "a folder from the git root down to Codex's"),
    ]
    assert "AGENTS.md: not sent, Codex's 32 KiB AGENTS.md budget ran out before it" in found.notes
    assert dict(found.copies)["config.toml"] == 'model = "gpt-6.2-sol"\n'


def test_a_rules_folder_too_deep_to_walk_is_one_note(tmp_path: Path) -> None:
    home, root = tmp_path / "home", tmp_path / "project"
    root.mkdir()
    deep = home / ".claude" / "rules"
    for n in range(600):
        (deep / f"d{n}").mkdir(parents=True)
    found = _claude(home, root)
    assert found.notes == ("~/.claude/rules: too many files or folders, the rest not read",)
