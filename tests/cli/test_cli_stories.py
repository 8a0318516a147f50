"""``promptdeck stories`` through a subprocess: the table, the JSON shape, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
ARTIFACTS = "_bmad-output/implementation-artifacts"
FILES: dict[str, str | bytes] = {
    f"{ARTIFACTS}/sprint-status.yaml": (
        "development_status:\n"
        "  epic-1: in-progress\n"
        "  1-1-login: done\n"
        "  1-2-register: ready-for-dev\n"
        "  epic-1-retrospective: optional\n"
    ),
    f"{ARTIFACTS}/1-2-register.md": (
        "# Story 1.2: Register\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Form\n"
    ),
    f"{ARTIFACTS}/3-9-draft.md": "planning notes, no heading\n",
    f"{ARTIFACTS}/1-3-binary.md": b"# Story 1.3: x\x00",
    f"{ARTIFACTS}/1-4-latin1.md": "# Story 1.4: Café\n".encode("latin-1"),
    f"{ARTIFACTS}/1-5-empty.md": b"",
    f"{ARTIFACTS}/sprint-1-2-discovery-story.md": "# Discovery\n",
    "_bmad-output/planning-artifacts/epics.md": "## Epic 1: Accounts\n",
    "openspec/changes/add-auth/proposal.md": "# Change: Add auth\n",
    "openspec/changes/add-auth/tasks.md": "## 1. Login\n- [x] 1.1 a\n## 2. Logout\n- [ ] 2.1 b\n",
    "openspec/changes/archive/2024-01-01-old/tasks.md": "## 1. Old\n",
}


def promptdeck(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [PROMPTDECK, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel, content in FILES.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return tmp_path


def test_json_shape(root: Path) -> None:
    result = promptdeck("stories", "--root", str(root), "--json")
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) >= {"stories", "skipped"}
    shown = ("id", "title", "status", "source", "epic", "change", "path")
    assert [s["layout"] for s in payload["stories"]] == [
        "classic",
        "classic",
        "openspec",
        "openspec",
    ]
    assert [{k: s[k] for k in shown if k in s} for s in payload["stories"]] == [
        {
            "id": "1-1",
            "title": "Login",
            "status": "done",
            "source": "bmad",
            "epic": "1",
            "path": None,
        },
        {
            "id": "1-2",
            "title": "Register",
            "status": "ready-for-dev",
            "source": "bmad",
            "epic": "1",
            "path": f"{ARTIFACTS}/1-2-register.md",
        },
        {
            "id": "add-auth:1",
            "title": "Login",
            "status": "done",
            "source": "openspec",
            "change": "add-auth",
            "path": "openspec/changes/add-auth/tasks.md",
        },
        {
            "id": "add-auth:2",
            "title": "Logout",
            "status": "ready-for-dev",
            "source": "openspec",
            "change": "add-auth",
            "path": "openspec/changes/add-auth/tasks.md",
        },
    ]


def test_malformed_files_are_listed_under_skipped_and_exit_0(root: Path) -> None:
    result = promptdeck("stories", "--root", str(root), "--json")
    assert result.returncode == 0
    skipped = {item["path"]: item["reason"] for item in json.loads(result.stdout)["skipped"]}
    assert {path.rsplit("/", 1)[1]: reason.split(":")[0] for path, reason in skipped.items()} == {
        "1-3-binary.md": "binary",
        "1-4-latin1.md": "not-utf8",
        "1-5-empty.md": "empty",
        "3-9-draft.md": "no-story-heading",
    }
    assert all(set(item) == {"path", "reason"} for item in json.loads(result.stdout)["skipped"])


def test_table_groups_stories_and_lists_skipped_files(root: Path) -> None:
    result = promptdeck("stories", "--root", str(root))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for text in ("1-1", "1-2", "add-auth:1", "1 · Accounts", "add-auth · Add auth", "skipped"):
        assert text in out
    assert out.index("1-2") < out.index("add-auth:1") < out.index("skipped\t")
    assert "3-9-draft.md" in out.split("skipped\t", 1)[1]
    assert "2024-01-01-old" not in out


def test_root_found_from_the_current_folder(root: Path) -> None:
    result = promptdeck("stories", "--json", cwd=root / ARTIFACTS)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["stories"]) == 4


def test_missing_root_is_exit_2_with_one_line(tmp_path: Path) -> None:
    result = promptdeck("stories", "--root", str(tmp_path / "missing"), "--json")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "missing" in lines[0] and "not a folder" in lines[0]
    assert "Traceback" not in result.stderr


def test_malformed_config_is_exit_2_naming_the_file(root: Path) -> None:
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck/config.toml").write_text("[paths]\nartifacts = 3\n", encoding="utf-8")
    result = promptdeck("stories", "--root", str(root))
    assert result.returncode == 2
    assert "config.toml" in result.stderr and "paths.artifacts" in result.stderr
    assert "Traceback" not in result.stderr


def test_catalog_warnings_go_to_stderr_not_into_the_table(root: Path) -> None:
    story = root / ARTIFACTS / "1-2-register.md"
    story.write_text("# Story 1.2: Register\n\nStatus: done\n", encoding="utf-8")
    result = promptdeck("stories", "--root", str(root))
    assert result.returncode == 0
    # A single drift is shown itself; kinds with several notes are one counted line each.
    assert "1-2-register.md:3 says 'done'" in result.stderr
    assert "sprint-status.yaml:4 is used" in result.stderr
    assert "files passed over (details: promptdeck doctor)" in result.stderr
    assert "1-2-register.md:3" not in result.stdout
    payload = json.loads(promptdeck("stories", "--root", str(root), "--json").stdout)
    [story] = [s for s in payload["stories"] if s["id"] == "1-2"]
    assert story["status_source"] == f"{ARTIFACTS}/sprint-status.yaml:4"
    assert story["status_drift"] == [
        f"{ARTIFACTS}/1-2-register.md:3 says 'done'; {ARTIFACTS}/sprint-status.yaml:4 says "
        "'ready-for-dev'"
    ]


def test_doctor_lists_every_story_once_and_what_could_not_be_read(root: Path) -> None:
    (root / ARTIFACTS / "sprint-status.yaml").write_text(
        "development_status:\n  1-1-login: done\n  not-a-story: backlog\n"
        "  1-2-register: shipped-ish\n"
    )
    payload = json.loads(promptdeck("doctor", "--root", str(root), "--json").stdout)
    rows = {s["id"]: (s["layout"], s["status"], s["status_known"]) for s in payload["stories"]}
    assert rows["1-2"] == ("classic", "shipped-ish", False)
    assert len(payload["stories"]) == len(rows)
    [entry] = [u for u in payload["unreadable"] if u["line"] == 3]
    assert entry["path"] == f"{ARTIFACTS}/sprint-status.yaml"
    table = promptdeck("doctor", "--root", str(root))
    assert table.returncode == 0
    assert "shipped-ish (unknown status)" in table.stdout
    assert f"unreadable\t{ARTIFACTS}/sprint-status.yaml:3\t" in table.stdout
    missing = promptdeck("inspect", "not-a-story", "--root", str(root))
    assert missing.returncode == 2
    assert "sprint-status.yaml:3 but could not be read" in missing.stderr
