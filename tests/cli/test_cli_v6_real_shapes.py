"""``doctor``, ``stories`` and ``inspect`` on the v6 fixtures shaped like real projects:
prefixed tracks (``v6-tracks``) and BMAD's own configuration naming the output folder
(``v6-bmad-config``), from tests/fixtures/layouts/."""

from __future__ import annotations

from pathlib import Path

import pytest
from promptdeck.cli import main
from test_cli_plan_layouts import copy, run

TRACKS = "_bmad-output/implementation-artifacts"


def test_inspect_of_a_prefixed_track_story_lists_its_own_file(tmp_path: Path) -> None:
    payload = run(copy(tmp_path, "v6-tracks"), "inspect", "petition-2a-1")
    stories = [f["path"] for f in payload["files"] if f["category"] == "story"]
    assert stories == [f"{TRACKS}/stories/petition-2a-1-session-model.md"]


def test_inspect_of_a_bare_number_never_injects_a_tracks_file(tmp_path: Path) -> None:
    payload = run(copy(tmp_path, "v6-tracks"), "inspect", "1-8")
    assert not any("petition" in f["path"] for f in payload["files"]), payload["files"]


def test_doctor_json_reads_every_track_entry_once_and_no_epic_as_a_story(tmp_path: Path) -> None:
    payload = run(copy(tmp_path, "v6-tracks"), "doctor")
    assert payload["unreadable"] == []
    sources = [s["status_source"] for s in payload["stories"]]
    assert len(sources) == len(set(sources)) == 9
    assert all(s.startswith(f"{TRACKS}/sprint-status.yaml:") for s in sources)


def test_stories_follow_bmads_configured_output_folder(tmp_path: Path) -> None:
    payload = run(copy(tmp_path, "v6-bmad-config"), "stories")
    listed = {s["id"]: s["status"] for s in payload["stories"]}
    assert listed["1-1"] == "cancelled" and listed["0-4bis"] == "done"
    assert len(listed) == 8


def test_doctor_with_no_story_says_what_it_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(name, str(tmp_path / "home"))
    root = tmp_path / "empty"
    (root / "_bmad").mkdir(parents=True)
    (root / "_bmad" / "config.toml").write_text(
        '[core]\noutput_folder = "/etc"\n', encoding="utf-8"
    )
    assert main(["doctor", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "No stories found" in out
    assert "_bmad-output/implementation-artifacts/sprint-status.yaml" in out
    assert "output_folder '/etc' points outside the project; not read" in out
