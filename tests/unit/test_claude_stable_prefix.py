"""``[agent] claude_stable_prefix``: Claude Code 2.1.98 and later get the switch that moves
their per-run sections out of the system prompt; an older or unknown one gets a line instead."""

from __future__ import annotations

from pathlib import Path

from promptdeck.core.agents.base import LaunchRequest
from promptdeck.core.agents.claude import ClaudeAgent
from promptdeck.core.client_loads import CLAUDE_STABLE_PREFIX_FLAG, version_at_least
from promptdeck.core.project.config import Config, config_from_mapping


def _request(tmp_path: Path) -> LaunchRequest:
    (tmp_path / "system.md").write_text("SYSTEM")
    (tmp_path / "user.md").write_text("TASK")
    return LaunchRequest(run_dir=tmp_path, root=tmp_path, story_id="1-2", phase="dev")


def test_the_switch_is_passed_from_2_1_98(tmp_path: Path) -> None:
    config = config_from_mapping({"agent": {"claude_stable_prefix": True}}, "test")
    spec = ClaudeAgent(config, "2.1.197").launch(_request(tmp_path))
    assert CLAUDE_STABLE_PREFIX_FLAG in spec.argv and not spec.warnings
    older = ClaudeAgent(config, "2.1.97").launch(_request(tmp_path))
    assert CLAUDE_STABLE_PREFIX_FLAG not in older.argv
    assert "needs Claude Code 2.1.98 or later (this is 2.1.97)" in older.warnings[0]


def test_off_by_default(tmp_path: Path) -> None:
    spec = ClaudeAgent(Config(), "2.1.197").launch(_request(tmp_path))
    assert CLAUDE_STABLE_PREFIX_FLAG not in spec.argv


def test_versions_compare_by_number() -> None:
    assert version_at_least("2.1.197 (Claude Code)", (2, 1, 98))
    assert version_at_least("2.1.98", (2, 1, 98))
    assert not version_at_least("2.1.9", (2, 1, 98))
    assert not version_at_least("unknown", (2, 1, 98))
