"""``promptdeck capture`` with the real ``claude`` sees the user's own configuration as a run
does: the user's ``~/.claude/CLAUDE.md`` is a part of its own, with why it was loaded, and the
user's home is never written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e_project import make_project
from test_capture import _capture

pytestmark = pytest.mark.e2e

MINE = "# My own rules\n\nAnswer briefly, and name every file you touched at the end.\n"


def test_the_users_claude_md_is_its_own_part(tmp_path: Path) -> None:
    root = make_project(tmp_path, "Rules.\n")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text(MINE)
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"docs": {"command": "x"}}}))
    before = sorted(p.relative_to(home) for p in (home / ".claude").rglob("*"))
    done, _ = _capture(root, home, "claude", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    part = next(p for p in report["parts"] if p["name"] == "~/.claude/CLAUDE.md")
    assert part["kind"] == "rules" and part["bytes"] == len(MINE.encode("utf-8"))
    assert part["loaded_because"] == "the user's memory"
    assert sum(p["bytes"] for p in report["parts"]) == report["request_bytes"]
    assert "MCP server docs not started: its tools not measured" in report["notes"]
    assert sorted(p.relative_to(home) for p in (home / ".claude").rglob("*")) == before
