"""``stories`` and ``doctor`` on projects whose plan is where BMAD v4 and v5 put it, with no
promptdeck configuration: the stories are listed, and both commands say which folder was the
plan and why (``"plan"`` in their JSON, a line or a row in their text)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from builders import write_files
from in_process import cli_in_process

V4_FILES = {
    ".bmad-core/core-config.yaml": (
        "prd:\n  prdFile: docs/prd.md\n  prdSharded: false\n"
        "devLoadAlwaysFiles:\n  - docs/architecture/coding-standards.md\n"
        "devStoryLocation: docs/stories\n"
    ),
    "docs/stories/1.1.first.md": "# Story 1.1: First\n\n## Status\n\nApproved\n",
}
V5_FILES = {
    "docs/sprint-artifacts/sprint-status.yaml": (
        "development_status:\n  epic-1: in-progress\n  1-1-first: ready-for-dev\n"
    ),
    "docs/sprint-artifacts/1-1-first.md": "# Story 1.1: First\n\nStatus: ready-for-dev\n",
}


def test_a_v4_project_lists_its_stories_and_says_where_from(tmp_path: Path) -> None:
    write_files(tmp_path, V4_FILES)
    done = cli_in_process(tmp_path / "docs" / "stories", "stories", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert [(s["id"], s["path"]) for s in payload["stories"]] == [
        ("1-1", "docs/stories/1.1.first.md")
    ]
    assert payload["plan"] == {
        "folder": "docs/stories",
        "origin": "devStoryLocation in .bmad-core/core-config.yaml:6",
        "alternatives": [],
        "openspec": "openspec",
    }


def test_a_v5_project_with_no_config_is_found_by_search(tmp_path: Path) -> None:
    write_files(tmp_path, V5_FILES)
    (tmp_path / ".promptdeck").mkdir()
    done = cli_in_process(tmp_path, "stories", "--json")
    payload = json.loads(done.stdout)
    assert [s["id"] for s in payload["stories"]] == ["1-1"]
    assert payload["plan"]["origin"] == (
        "found by search: docs/sprint-artifacts/sprint-status.yaml"
    )
    text = cli_in_process(tmp_path, "stories")
    assert (
        "promptdeck: plan: docs/sprint-artifacts (found by search:"
        " docs/sprint-artifacts/sprint-status.yaml)" in text.stderr
    )


def test_doctor_names_the_plan_and_the_plans_passed_over(tmp_path: Path) -> None:
    write_files(tmp_path, V5_FILES)
    write_files(tmp_path, {f"old/{rel}": text for rel, text in V5_FILES.items()})
    (tmp_path / ".promptdeck").mkdir()
    old = tmp_path / "old/docs/sprint-artifacts/sprint-status.yaml"
    os.utime(old, (old.stat().st_mtime - 86_400,) * 2)
    payload = json.loads(cli_in_process(tmp_path, "doctor", "--json").stdout)
    assert payload["plan"]["folder"] == "docs/sprint-artifacts"
    [alternative] = payload["plan"]["alternatives"]
    assert alternative["folder"] == "old/docs/sprint-artifacts"
    assert "changed" in alternative["why"]
    rows = cli_in_process(tmp_path, "doctor").stdout.splitlines()
    assert rows[0].startswith("plan\tdocs/sprint-artifacts\tfound by search:")
    assert rows[1].startswith("alternative\told/docs/sprint-artifacts\tsprint-status ")


def test_an_empty_project_says_which_folder_it_looked_at_and_why(tmp_path: Path) -> None:
    write_files(tmp_path, {".promptdeck/rules.md": "be kind\n", "docs/readme.md": "x\n"})
    done = cli_in_process(tmp_path, "stories")
    assert done.returncode == 0
    assert (
        "(the plan folder is _bmad-output/implementation-artifacts:"
        " default (the search found no plan))" in done.stdout
    )
    assert "[paths] artifacts" in done.stdout


def test_a_toml_number_of_5000_digits_in_bmads_config_is_one_line_in_doctor(
    tmp_path: Path,
) -> None:
    # BMAD v7 reads the same layered TOML for its active initiative: neither reader may stop.
    write_files(tmp_path, {**V5_FILES, "_bmad/config.toml": f"[core]\nsize = {'9' * 5000}\n"})
    done = cli_in_process(tmp_path, "doctor", "--json")
    assert done.returncode == 0, done.stderr[-600:]
    payload = json.loads(done.stdout)
    assert [s["id"] for s in payload["stories"]] == ["1-1"]
    assert "4,300 digits" in json.dumps(payload)
