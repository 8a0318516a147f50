"""Status written back after a phase's success: one value on one line, every other byte kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.plans.writeback import (
    set_sprint_status,
    set_story_file_status,
    tick_group_tasks,
    write_back,
    write_start,
)
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.runner import start_run

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
ART = "_bmad-output/implementation-artifacts"
WAIT = 60.0


def real(tmp_path: Path, name: str, **config: object) -> Workspace:
    root = tmp_path / name
    shutil.copytree(REAL / name, root)
    return Workspace(root=root.resolve(), config=Config(**config))  # type: ignore[arg-type]


def only_line_changed(before: bytes, after: bytes) -> int:
    """The 0-based index of the one line that differs; every other byte must be identical."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    assert len(changed) == 1, changed
    index = changed[0]
    assert b"".join(old[:index]) == b"".join(new[:index])
    assert b"".join(old[index + 1 :]) == b"".join(new[index + 1 :])
    return index


def test_sprint_status_edit_keeps_every_other_byte_of_a_real_file() -> None:
    original = (REAL / "docvet" / ART / "sprint-status.yaml").read_bytes()
    changed = set_sprint_status(original.decode(), "32-4", "done")
    assert changed is not None
    text, line, before, after = changed
    index = only_line_changed(original, text.encode())
    assert index + 1 == line
    assert before == "  32-4-inline-suppression-comments: review"
    assert after == "  32-4-inline-suppression-comments: done"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("  1-2-login: ready-for-dev  # moved up\r\n", "  1-2-login: review  # moved up\r\n"),
        ("  '1-2-login': 'ready-for-dev'\n", "  '1-2-login': 'review'\n"),
        ('  1-2-login:   "in-progress" # x\n', '  1-2-login:   "review" # x\n'),
    ],
)
def test_sprint_status_edit_keeps_quotes_comments_and_line_endings(
    line: str, expected: str
) -> None:
    head = "# Sprint\r\ngenerated: 2026-01-01\n\ndevelopment_status:\n  # Epic 1: X\n  epic-1: x\n"
    tail = "  1-3-other: backlog\n"
    changed = set_sprint_status(head + line + tail, "1-2", "review")
    assert changed is not None
    assert changed[0] == head + expected + tail


def test_sprint_status_without_the_entry_or_already_set_is_unchanged() -> None:
    text = "development_status:\n  1-2-login: review\n"
    assert set_sprint_status(text, "1-2", "review") is None
    assert set_sprint_status(text, "9-9", "done") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# Story 1.2: X\n\nStatus: review\n\n## Story\n",
            "# Story 1.2: X\n\nStatus: done\n\n## Story\n",
        ),
        (
            "# Story 1.2: X\r\n\r\n**Status:** review\r\n",
            "# Story 1.2: X\r\n\r\n**Status:** done\r\n",
        ),
        (
            "# Story 1.2: X\n\n## Status\n\nreview\n\n## Tasks\n",
            "# Story 1.2: X\n\n## Status\n\ndone\n\n## Tasks\n",
        ),
    ],
)
def test_story_file_status_line_edit(text: str, expected: str) -> None:
    changed = set_story_file_status(text, "done")
    assert changed is not None and changed[0] == expected
    only_line_changed(text.encode(), changed[0].encode())


def test_a_status_word_in_a_later_section_is_not_touched() -> None:
    text = "# Story 1.2: X\n\n## Notes\n\nStatus: of the parser\n"
    assert set_story_file_status(text, "done") is None


def test_dev_then_review_write_review_then_done(tmp_path: Path) -> None:
    ws = real(tmp_path, "bmad-todo-app")
    story = load_catalog(ws).find("2-2")
    sprint = ws.root / ART / "sprint-status.yaml"
    story_file = ws.root / ART / "2-2-create-task.md"
    sprint.write_text(
        sprint.read_text().replace("2-2-create-task: done", "2-2-create-task: in-progress")
    )
    story_file.write_text(story_file.read_text().replace("Status: done", "Status: in-progress"))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    update = write_back(ws, story, "dev", True, run_dir)
    assert update is not None and update.status == "review"
    assert [(e.path, e.after.strip()) for e in update.edits] == [
        (f"{ART}/sprint-status.yaml", "2-2-create-task: review"),
        (f"{ART}/2-2-create-task.md", "Status: review"),
    ]
    recorded = json.loads((run_dir / "status.json").read_text())
    assert recorded["status"] == "review" and len(recorded["edits"]) == 2
    assert load_catalog(ws).find("2-2").status == "review"
    write_back(ws, story, "review", True, None)
    assert load_catalog(ws).find("2-2").status == "done"
    assert "Status: done" in story_file.read_text()


def test_nothing_is_written_after_a_failure_or_when_switched_off(tmp_path: Path) -> None:
    ws = real(tmp_path, "bmad-todo-app")
    before = {p: p.read_bytes() for p in (ws.root / ART).iterdir()}
    story = load_catalog(ws).find("5-4")
    assert write_back(ws, story, "dev", False) is None
    off = real(tmp_path / "off", "bmad-todo-app", status_write_back=False)
    assert write_back(off, load_catalog(off).find("5-4"), "review", True) is None
    assert write_back(ws, story, "kickoff", True) is None
    assert {p: p.read_bytes() for p in (ws.root / ART).iterdir()} == before


def test_openspec_dev_ticks_only_the_tasks_the_agent_left_open(tmp_path: Path) -> None:
    ws = real(tmp_path, "expense-tracker")
    story = load_catalog(ws).find("add-monthly-cashflow-chart:2")
    tasks = ws.root / story.path  # type: ignore[operator]
    text = tasks.read_text().replace("- [ ] 2.1", "- [x] 2.1")
    tasks.write_text(text)
    update = write_back(ws, story, "dev", True)
    assert update is not None
    assert [e.after.split()[2] for e in update.edits] == ["2.2", "2.3", "2.4", "2.5", "2.6"]
    assert "ticked 5 task(s) of group 2" in update.notes[0]
    after = load_catalog(ws)
    assert after.find("add-monthly-cashflow-chart:2").status == "done"
    assert after.find("add-monthly-cashflow-chart:1").status == "ready-for-dev"
    again = write_back(ws, after.find("add-monthly-cashflow-chart:2"), "dev", True)
    assert again is not None and "ticked every task" in again.notes[0]


def test_tick_group_tasks_changes_only_the_boxes() -> None:
    text = "# Tasks\n\n## 1. A\n- [ ] 1.1 a\n  - [ ] 1.1.1 deep\n\n## 2. B\n- [ ] 2.1 b\n"
    new, ticked = tick_group_tasks(text, "1")
    assert new == "# Tasks\n\n## 1. A\n- [x] 1.1 a\n  - [x] 1.1.1 deep\n\n## 2. B\n- [ ] 2.1 b\n"
    assert [line for line, _, _ in ticked] == [4, 5]


def test_runs_write_the_status_and_commit_it_with_the_review(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(REAL / "bmad-todo-app", root)
    sprint = root / ART / "sprint-status.yaml"
    sprint.write_text(
        sprint.read_text().replace("2-2-create-task: done", "2-2-create-task: ready-for-dev")
    )
    story_file = root / ART / "2-2-create-task.md"
    story_file.write_text(story_file.read_text().replace("Status: done", "Status: ready-for-dev"))
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text(
        "[agent]\nreplay_delay = 0.0\nreplay_git = true\n"  # the simulation may commit here
    )
    commit_all(root)
    ws = open_workspace(root)
    for phase, status in (("dev", "review"), ("review", "done")):
        prompt = compose_prompt(ws, None, PromptRequest("2-2", phase=phase), count_tokens=False)
        result = start_run(ws, prompt, agent="replay").wait(WAIT)
        assert result.outcome == "success"
        assert load_catalog(ws).find("2-2").status == status
        recorded = json.loads((result.run_dir / "status.json").read_text())
        assert recorded["status"] == status
    assert result.commit is not None
    import subprocess

    shown = subprocess.run(
        ["git", "show", "--format=", "--", f"{ART}/sprint-status.yaml"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "+  2-2-create-task: done" in shown and "-  2-2-create-task: ready-for-dev" in shown


def test_config_keys_of_this_feature_parse_from_toml() -> None:
    from promptdeck.core.project.config import config_from_mapping

    config = config_from_mapping(
        {"status": {"write_back": False}, "verify": {"use_detected": True}}, "config.toml"
    )
    assert config.status_write_back is False and config.verify_use_detected is True
    assert Config().status_write_back is True and Config().verify_use_detected is False
    assert Config().paths_rules == ""  # found in the documented order


def test_run_records_name_the_rules_file_found_with_its_sha256(tmp_path: Path) -> None:
    import hashlib

    root = tmp_path / "docvet"
    shutil.copytree(REAL / "docvet", root)
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text(
        "[agent]\nreplay_delay = 0.0\nreplay_git = true\n"  # the simulation may commit here
    )
    commit_all(root)
    ws = open_workspace(root)
    prompt = compose_prompt(ws, None, PromptRequest("32-4", phase="kickoff"), count_tokens=False)
    result = start_run(ws, prompt, agent="replay").wait(WAIT)
    meta = json.loads((result.run_dir / "meta.json").read_text())
    assert meta["rules"]["path"] == "AGENTS.md" and meta["rules"]["status"] == "ok"
    assert meta["rules"]["sha256"] == hashlib.sha256((root / "AGENTS.md").read_bytes()).hexdigest()
    # A kickoff changes no status.
    assert not (result.run_dir / "status.json").exists()


def test_dev_start_marks_the_story_in_progress_and_nothing_else(tmp_path: Path) -> None:
    ws = real(tmp_path, "bmad-todo-app")
    sprint = ws.root / ART / "sprint-status.yaml"
    sprint.write_text(
        sprint.read_text().replace("2-2-create-task: done", "2-2-create-task: ready-for-dev")
    )
    story_file = ws.root / ART / "2-2-create-task.md"
    story_file.write_text(story_file.read_text().replace("Status: done", "Status: ready-for-dev"))
    before_sprint, before_story = sprint.read_bytes(), story_file.read_bytes()
    story = load_catalog(ws).find("2-2")
    update = write_start(ws, story, "dev")
    assert update is not None and update.status == "in-progress"
    only_line_changed(before_sprint, sprint.read_bytes())
    only_line_changed(before_story, story_file.read_bytes())
    assert load_catalog(ws).find("2-2").status == "in-progress"
    # Other phases, switched off, or a story already done: nothing is written.
    assert write_start(ws, story, "review") is None
    off = real(tmp_path / "off", "bmad-todo-app", status_write_back=False)
    assert write_start(off, load_catalog(off).find("5-4"), "dev") is None
    done = load_catalog(ws).find("2-1")
    assert done.status == "done" and write_start(ws, done, "dev") is None


def test_a_simulation_writes_no_status_into_a_real_project(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(REAL / "bmad-todo-app", root)
    sprint = root / ART / "sprint-status.yaml"
    sprint.write_text(
        sprint.read_text().replace("2-2-create-task: done", "2-2-create-task: ready-for-dev")
    )
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text("[agent]\nreplay_delay = 0.0\n")
    commit_all(root)
    before = sprint.read_bytes()
    ws = open_workspace(root)
    prompt = compose_prompt(ws, None, PromptRequest("2-2", phase="dev"), count_tokens=False)
    result = start_run(ws, prompt, agent="replay").wait(WAIT)
    assert result.outcome == "success"
    assert sprint.read_bytes() == before
    assert not (result.run_dir / "status.json").exists()
