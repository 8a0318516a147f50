"""Claude Code's launch with protected files: its own settings file of deny rules.

The rule shapes pinned here were measured against the real client (see
``core/agents/claude.py``); ``tests/e2e/test_claude_scope.py`` runs the real client on them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from promptdeck.core.agent_names import CLAUDE_BIN_ENV
from promptdeck.core.agents import claude as claude_module
from promptdeck.core.agents.base import LaunchRequest
from promptdeck.core.agents.claude import SETTINGS_FILE, ClaudeAgent, deny_rules
from promptdeck.core.project.config import Config


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = (tmp_path / "project").resolve()
    folder.mkdir()
    return folder


def _request(root: Path, *protected: str, resume: str | None = None) -> LaunchRequest:
    run_dir = root / ".promptdeck" / "runs" / "r1"
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "system.md").write_text("SYSTEM\n")
    (run_dir / "user.md").write_text("Implement story 1-2.")
    return LaunchRequest(
        run_dir=run_dir,
        root=root,
        story_id="1-2",
        phase="dev",
        resume_session=resume,
        protected_paths=protected,
    )


def _settings(request: LaunchRequest) -> dict[str, object]:
    return json.loads((request.run_dir / SETTINGS_FILE).read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _plain_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CLAUDE_BIN_ENV, raising=False)


def test_each_protected_file_gets_an_edit_and_a_write_rule_by_absolute_path(root: Path) -> None:
    request = _request(root, "_bmad-output/sprint-status.yaml", "docs/epics.md")
    spec = ClaudeAgent(Config()).launch(request)
    assert _settings(request) == {
        "permissions": {
            "deny": [
                f"Edit(/{root}/_bmad-output/sprint-status.yaml)",
                f"Write(/{root}/_bmad-output/sprint-status.yaml)",
                f"Edit(/{root}/docs/epics.md)",
                f"Write(/{root}/docs/epics.md)",
            ]
        }
    }
    assert spec.warnings == ()
    # ``/<abs>`` after ``Edit(``: the doubled slash names an absolute path (a single one
    # would be relative to the settings file's folder, the run folder).
    assert all(
        rule.split("(", 1)[1].startswith("//") for rule in _settings(request)["permissions"]["deny"]
    )  # type: ignore[index]


def test_argv_carries_the_settings_file_after_the_permission_args_and_before_resume(
    root: Path,
) -> None:
    config = Config(agent_claude_args=("--permission-mode", "acceptEdits"))
    request = _request(root, "sprint-status.yaml", resume="abc-123")
    argv = ClaudeAgent(config).launch(request).argv
    at = argv.index("--settings")
    assert argv[at + 1] == str(request.run_dir / SETTINGS_FILE)
    assert argv[at - 2 : at] == ("--permission-mode", "acceptEdits")
    assert argv[at + 2 : at + 4] == ("--resume", "abc-123")
    # The system prompt's file flag is untouched, and still first among the options.
    assert argv[5:7] == ("--append-system-prompt-file", str(request.system_file))


def test_nothing_protected_keeps_todays_argv_and_writes_no_settings(root: Path) -> None:
    config = Config(agent_claude_model="sonnet", agent_claude_args=("--permission-mode", "plan"))
    request = _request(root)
    spec = ClaudeAgent(config).launch(request)
    assert spec.argv == (
        "claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--append-system-prompt-file",
        str(request.system_file),
        "--model",
        "sonnet",
        "--permission-mode",
        "plan",
    )
    assert not (request.run_dir / SETTINGS_FILE).exists()
    assert spec.warnings == ()


def test_characters_special_to_the_rule_syntax_are_escaped(root: Path) -> None:
    rules, left_out = deny_rules(root, ("a b/(draft)*.md", "#notes [1].md", "!x\\y.md", "end "))
    assert left_out == ()
    edits = [rule for rule in rules if rule.startswith("Edit(")]
    assert edits == [
        # Parentheses escaped for the rule; ``*`` made literal for the path pattern (its
        # backslash then doubled for the rule); spaces inside a name need nothing.
        f"Edit(/{root}/a b/\\(draft\\)\\\\*.md)",
        f"Edit(/{root}/\\\\#notes \\\\[1\\\\].md)",
        f"Edit(/{root}/\\\\!x\\\\\\\\y.md)",
        # A trailing space would be dropped from the pattern: escaped.
        f"Edit(/{root}/end\\\\ )",
    ]


def test_a_root_with_parentheses_is_escaped_too(tmp_path: Path) -> None:
    folder = (tmp_path / "my (old) work").resolve()
    folder.mkdir()
    rules, _ = deny_rules(folder, ("sprint-status.yaml",))
    assert rules[0] == f"Edit(/{tmp_path.resolve()}/my \\(old\\) work/sprint-status.yaml)"


def test_a_path_no_rule_can_name_is_left_out_with_one_warning(root: Path) -> None:
    request = _request(root, "sprint-status.yaml", "what?.md", "x\nEdit(//etc).md", "../up.md")
    spec = ClaudeAgent(Config()).launch(request)
    deny = _settings(request)["permissions"]["deny"]  # type: ignore[index]
    assert deny == [f"Edit(/{root}/sprint-status.yaml)", f"Write(/{root}/sprint-status.yaml)"]
    assert len(spec.warnings) == 1
    warning = spec.warnings[0]
    assert warning.startswith("claude: 3 protected file(s) cannot be named")
    assert "'what?.md'" in warning and "\\n" in warning and "\n" not in warning
    assert "checks and restores them after the phase" in warning


def test_only_unnameable_paths_write_no_settings_but_warn(root: Path) -> None:
    request = _request(root, "what?.md")
    spec = ClaudeAgent(Config()).launch(request)
    assert "--settings" not in spec.argv
    assert not (request.run_dir / SETTINGS_FILE).exists()
    assert len(spec.warnings) == 1


def test_a_root_reached_through_a_link_is_named_both_ways(tmp_path: Path) -> None:
    real = (tmp_path / "real").resolve()
    real.mkdir()
    link = tmp_path.resolve() / "link"
    link.symlink_to(real)
    rules, _ = deny_rules(link, ("sprint-status.yaml",))
    assert rules == (
        f"Edit(/{link}/sprint-status.yaml)",
        f"Write(/{link}/sprint-status.yaml)",
        f"Edit(/{real}/sprint-status.yaml)",
        f"Write(/{real}/sprint-status.yaml)",
    )


def test_past_the_most_named_paths_the_rest_are_left_to_the_after_check(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_module, "MOST_RULED_PATHS", 2)
    rules, left_out = deny_rules(root, ("a.md", "b.md", "c.md", "d.md"))
    assert len(rules) == 4
    assert left_out == ("c.md", "d.md")


def test_the_settings_file_is_never_written_through_a_link(root: Path, tmp_path: Path) -> None:
    request = _request(root, "sprint-status.yaml")
    victim = tmp_path / "victim.json"
    victim.write_text("keep me\n")
    (request.run_dir / SETTINGS_FILE).symlink_to(victim)
    ClaudeAgent(Config()).launch(request)
    assert victim.read_text() == "keep me\n"
    written = request.run_dir / SETTINGS_FILE
    assert not written.is_symlink()
    assert "sprint-status.yaml" in written.read_text()


def test_a_dry_runs_earlier_settings_are_replaced(root: Path) -> None:
    ClaudeAgent(Config()).launch(_request(root, "old.md"))
    request = _request(root, "new.md")
    ClaudeAgent(Config()).launch(request)
    deny = _settings(request)["permissions"]["deny"]  # type: ignore[index]
    assert deny == [f"Edit(/{root}/new.md)", f"Write(/{root}/new.md)"]


def test_past_the_most_named_paths_the_sprint_status_comes_first(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_module, "MOST_RULED_PATHS", 1)
    rules, left_out = deny_rules(root, ("a.md", "plan/sprint-status.yaml"))
    assert rules == (
        f"Edit(/{root}/plan/sprint-status.yaml)",
        f"Write(/{root}/plan/sprint-status.yaml)",
    )
    assert left_out == ("a.md",)
