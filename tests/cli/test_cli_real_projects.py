"""``inspect`` and ``stories`` on trimmed copies of real public projects (tests/fixtures/real/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "HOME": str(root.parent)}
    return subprocess.run(
        [PROMPTDECK, *args, "--root", str(root)],
        capture_output=True,
        env=env,
        text=True,
        timeout=120,
    )


def copy(tmp_path: Path, name: str) -> Path:
    shutil.copytree(REAL / name, tmp_path / name)
    return tmp_path / name


def test_inspect_shows_the_rules_file_found_and_the_verify_suggestion(tmp_path: Path) -> None:
    root = copy(tmp_path, "docvet")
    done = run(root, "inspect", "22-3", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["rules"]["path"] == "AGENTS.md" and payload["rules"]["status"] == "ok"
    assert len(payload["rules"]["sha256"]) == 64
    assert payload["verify"] == {
        "commands": [],
        "origin": "none",
        "detected": {"command": "pytest", "source": "pyproject.toml"},
    }
    assert any("already done" in w for w in payload["warnings"])
    paths = {f["path"]: f["category"] for f in payload["files"]}
    assert (
        paths[
            "_bmad-output/implementation-artifacts/22-3-create-agents-md-for-cross-tool-agent-discovery.md"
        ]
        == "story"
    )
    text = run(root, "inspect", "22-3")
    assert "rules AGENTS.md · ok · found in the documented order" in text.stdout
    assert "verify none configured (none) · detected `pytest` (pyproject.toml)" in text.stdout


def test_inspect_without_rules_names_the_candidates(tmp_path: Path) -> None:
    root = copy(tmp_path, "bmad-todo-app")
    done = run(root, "inspect", "2-1")
    assert done.returncode == 0, done.stderr
    assert "no workspace rules file (looked for .promptdeck/rules.md, AGENTS.md" in done.stderr
    assert "5-4-wcag" not in done.stdout


def test_stories_json_lists_skipped_changes_and_real_titles(tmp_path: Path) -> None:
    root = copy(tmp_path, "linux-health-checks")
    done = run(root, "stories", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    reasons = {f["path"]: f["reason"] for f in payload["skipped"]}
    assert reasons["openspec/changes/add-user-config-file/"].startswith("no-tasks:")
    docvet = json.loads(run(copy(tmp_path, "docvet"), "stories", "--json").stdout)
    paths = {s["id"]: s["path"] for s in docvet["stories"]}
    # The sprint-status spelling is the id; the files are the stories' own, not "discovery".
    assert paths["22-3"].endswith("22-3-create-agents-md-for-cross-tool-agent-discovery.md")
    assert paths["32-3"].endswith("32-3-fix-cli-wiring-subcommand-dry-run-and-discovery.md")
