"""``doctor``, ``stories`` and ``inspect`` on the v6 fixtures shaped like real projects:
prefixed tracks (``v6-tracks``) and BMAD's own configuration naming the output folder
(``v6-bmad-config``), from tests/fixtures/layouts/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
TRACKS = "_bmad-output/implementation-artifacts"


def promptdeck(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "HOME": str(root.parent),
        "XDG_CONFIG_HOME": str(root.parent / "config"),
        "XDG_CACHE_HOME": str(root.parent / "cache"),
    }
    return subprocess.run(
        [PROMPTDECK, *args, "--root", str(root)],
        capture_output=True,
        env=env,
        text=True,
        timeout=120,
    )


def copy(tmp_path: Path, name: str) -> Path:
    shutil.copytree(LAYOUTS / name, tmp_path / name)
    return tmp_path / name


def test_inspect_of_a_prefixed_track_story_lists_its_own_file(tmp_path: Path) -> None:
    root = copy(tmp_path, "v6-tracks")
    done = promptdeck(root, "inspect", "petition-2a-1", "--json")
    assert done.returncode == 0, done.stderr
    stories = [f["path"] for f in json.loads(done.stdout)["files"] if f["category"] == "story"]
    assert stories == [f"{TRACKS}/stories/petition-2a-1-session-model.md"]


def test_inspect_of_a_bare_number_never_injects_a_tracks_file(tmp_path: Path) -> None:
    root = copy(tmp_path, "v6-tracks")
    done = promptdeck(root, "inspect", "1-8", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert not any("petition" in f["path"] for f in payload["files"]), payload["files"]


def test_doctor_json_reads_every_track_entry_once_and_no_epic_as_a_story(tmp_path: Path) -> None:
    root = copy(tmp_path, "v6-tracks")
    done = promptdeck(root, "doctor", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["unreadable"] == []
    sources = [s["status_source"] for s in payload["stories"]]
    assert len(sources) == len(set(sources)) == 9
    assert all(s.startswith(f"{TRACKS}/sprint-status.yaml:") for s in sources)


def test_stories_follow_bmads_configured_output_folder(tmp_path: Path) -> None:
    root = copy(tmp_path, "v6-bmad-config")
    done = promptdeck(root, "stories", "--json")
    assert done.returncode == 0, done.stderr
    listed = {s["id"]: s["status"] for s in json.loads(done.stdout)["stories"]}
    assert listed["1-1"] == "cancelled" and listed["0-4bis"] == "done"
    assert len(listed) == 8


def test_doctor_with_no_story_says_what_it_looked_at(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    (root / "_bmad").mkdir(parents=True)
    (root / "_bmad" / "config.toml").write_text(
        '[core]\noutput_folder = "/etc"\n', encoding="utf-8"
    )
    done = promptdeck(root, "doctor")
    assert done.returncode == 0, done.stderr
    assert "No stories found" in done.stdout
    assert "_bmad-output/implementation-artifacts/sprint-status.yaml" in done.stdout
    assert "_bmad/config.toml" in done.stdout
    assert "output_folder '/etc' points outside the project; not read" in done.stdout
