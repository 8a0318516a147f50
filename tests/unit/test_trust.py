"""A run acts on what the project's own config chooses to start only once the user trusted
that version of the file: the settings that need it, the record, and the refusal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from promptdeck.core.agent_names import AGENT_NAMES
from promptdeck.core.errors import EXIT_UNTRUSTED_CONFIG, UntrustedConfig
from promptdeck.core.project.config import Config
from promptdeck.core.project.trust import (
    check_trusted,
    config_trust,
    forget_config,
    program_files,
    program_settings,
    trust_config,
    trust_digest,
    trust_store_path,
)
from promptdeck.core.project.workspace import open_workspace

ARGV = f'command_argv = ["{sys.executable}", "agent.py", "\\u001b]52;c;x\\u0007"]\n'


@pytest.fixture(autouse=True)
def _own_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PROMPTDECK_CLAUDE_BIN", raising=False)
    monkeypatch.delenv("PROMPTDECK_CODEX_BIN", raising=False)


def _project(tmp_path: Path, config: str) -> Path:
    root = tmp_path / "project"
    (root / ".promptdeck").mkdir(parents=True)
    (root / ".promptdeck" / "config.toml").write_text(config, encoding="utf-8")
    return root


def test_only_settings_away_from_their_defaults_that_the_agent_acts_on_count(
    tmp_path: Path,
) -> None:
    root = _project(
        tmp_path,
        '[agent]\nclaude_bin = "./tools/claude"\nclaude_args = ["--permission-mode", '
        '"acceptEdits"]\ncodex_sandbox = "danger-full-access"\n' + ARGV,
    )
    config = open_workspace(root).config
    assert program_settings(config, "claude") == ('agent.claude_bin = "./tools/claude"',)
    assert program_settings(config, "codex") == ('agent.codex_sandbox = "danger-full-access"',)
    (command,) = program_settings(config, "command")
    assert command.startswith("agent.command_argv = [") and "\x1b" not in command
    assert program_settings(config, "replay") == ()
    assert len(program_settings(config)) == 3
    # Defaults and settings built in code (no file) never need trust.
    assert program_settings(Config(agent_command_argv=("sh",)), "command") == ()


def test_every_agent_says_which_settings_choose_what_it_starts() -> None:
    config = Config(source="x")
    for name in AGENT_NAMES:
        program_settings(config, name)  # raises on a setting that does not exist


def test_the_users_own_variable_names_the_binary_instead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, '[agent]\nclaude_bin = "./tools/claude"\n')
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", "/usr/local/bin/claude")
    workspace = open_workspace(root)
    assert program_settings(workspace.config, "claude", effective=True) == ()
    assert not config_trust(workspace, "claude").needed
    # What a trust would cover still shows the file's binary: a later shell without the
    # variable would run it.
    assert program_settings(workspace.config) == ('agent.claude_bin = "./tools/claude"',)


def test_a_run_is_refused_until_this_version_is_trusted(tmp_path: Path) -> None:
    root = _project(tmp_path, "[agent]\n" + ARGV)
    workspace = open_workspace(root)
    with pytest.raises(UntrustedConfig) as refused:
        check_trusted(workspace, "command")
    assert refused.value.exit_code == EXIT_UNTRUSTED_CONFIG == 10
    assert "agent.command_argv" in str(refused.value) and "promptdeck trust" in str(refused.value)
    check_trusted(workspace, "replay")  # the simulation starts nothing the config chose

    digest = trust_config(workspace)
    assert digest == trust_digest(workspace) and digest != workspace.config.source_sha256
    stored = json.loads(trust_store_path().read_text(encoding="utf-8"))
    assert stored["configs"] == {str(root.resolve()): digest}
    check_trusted(open_workspace(root), "command")

    # Any change to the file needs trusting again, even one that changes no setting.
    (root / ".promptdeck" / "config.toml").write_text("[agent]\n" + ARGV + "# x\n")
    assert config_trust(open_workspace(root), "command").needed
    trust_config(open_workspace(root))
    assert not config_trust(open_workspace(root), "command").needed

    assert forget_config(open_workspace(root)) is True
    assert forget_config(open_workspace(root)) is False
    assert config_trust(open_workspace(root), "command").needed


def test_trust_is_kept_per_project(tmp_path: Path) -> None:
    first = _project(tmp_path / "a", "[agent]\n" + ARGV)
    second = _project(tmp_path / "b", "[agent]\n" + ARGV)
    trust_config(open_workspace(first))
    assert not config_trust(open_workspace(first), "command").needed
    assert config_trust(open_workspace(second), "command").needed


def test_a_project_without_config_has_nothing_to_trust(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    workspace = open_workspace(tmp_path / "bare")
    assert trust_config(workspace) is None
    assert not trust_store_path().exists()
    check_trusted(workspace, "claude")


def test_a_broken_trust_file_is_one_line(tmp_path: Path) -> None:
    from promptdeck.core.errors import UsageError

    root = _project(tmp_path, "[agent]\n" + ARGV)
    trust_store_path().parent.mkdir(parents=True)
    trust_store_path().write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="cannot read the trusted configs"):
        check_trusted(open_workspace(root), "command")


def test_what_is_shown_and_trusted_is_every_agents_settings_in_full(tmp_path: Path) -> None:
    padding = "x" * 300
    root = _project(
        tmp_path,
        '[agent]\nclaude_args = ["--permission-mode", "acceptEdits", "--verbose"]\n'
        'claude_model = "some-model"\n'
        f'codex_args = ["{padding}", "--dangerously-bypass-approvals-and-sandbox"]\n' + ARGV,
    )
    verdict = config_trust(open_workspace(root), "claude")
    assert verdict.needed
    keys = [line.split(" = ")[0] for line in verdict.settings]
    assert keys == [
        "agent.claude_args",
        "agent.claude_model",
        "agent.codex_args",
        "agent.command_argv",
    ]
    # Nothing is cut: the flag after the padding is shown.
    assert "--dangerously-bypass-approvals-and-sandbox" in verdict.settings[2]


def test_a_script_the_config_runs_is_trusted_as_it_is(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        f'[agent]\ncommand_argv = ["{sys.executable}", "tools/agent.py", "{{story}}"]\n',
    )
    (root / "tools").mkdir()
    script = root / "tools" / "agent.py"
    script.write_text("print('first')\n", encoding="utf-8")
    workspace = open_workspace(root)
    assert program_files(workspace) == ("tools/agent.py",)
    assert any("tools/agent.py" in line for line in config_trust(workspace, "command").settings)
    trust_config(workspace)
    assert not config_trust(open_workspace(root), "command").needed
    # The config is unchanged, the script it runs is not: trusted again first.
    script.write_text("print('changed')\n", encoding="utf-8")
    assert config_trust(open_workspace(root), "command").needed
