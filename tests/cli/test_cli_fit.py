"""``--exclude`` / ``--include`` and ``inspect --fit`` through a subprocess: the choice is
remembered per story, shown in ``run --dry-run``, and the fit's size is what applying gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from builders import write_files

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
ARTIFACTS = "_bmad-output/implementation-artifacts"
STORY = f"{ARTIFACTS}/1-2-user-registration.md"
DISCOVERY = f"{ARTIFACTS}/sprint-1-2-discovery-notes.md"
TECH_SPEC = f"{ARTIFACTS}/tech-spec-1-2-registration.md"
CONTEXT = "_bmad-output/planning-artifacts/sprint-project-context.md"
DEV_RUN = ("run", "1-2", "--phase", "dev", "--agent", "replay")
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": (
        "development_status:\n  1-2-user-registration: ready-for-dev\n"
    ),
    STORY: "# Story 1.2: User registration\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n"
    "- [ ] Task 1: Registration form\n",
    CONTEXT: "# Context\n\n" + "c" * 2_000 + "\n",
    DISCOVERY: "d" * 7_000 + "\n",
    TECH_SPEC: "t" * 5_000 + "\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    write_files(project, FILES)
    return project


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = root.parent / "home"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "COLUMNS": "200",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [PROMPTDECK, *args, "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def rows(root: Path, *args: str) -> dict[str, dict[str, object]]:
    done = run(root, "inspect", "1-2", "--json", *args)
    assert done.returncode == 0, done.stderr
    return {row["path"]: row for row in json.loads(done.stdout)["files"]}


def test_an_exclusion_is_remembered_and_an_include_undoes_it(root: Path) -> None:
    first = rows(root, "--exclude", CONTEXT)
    assert (first[CONTEXT]["status"], first[CONTEXT]["reason"]) == ("excluded", "left out by you")
    # Remembered: the next command, without the flag, leaves it out too; compose agrees.
    assert rows(root)[CONTEXT]["status"] == "excluded"
    system = run(root, "compose", "1-2", "--part", "system").stdout
    assert f'<file path="{CONTEXT}">' not in system and f'<file path="{STORY}">' in system
    # --include of a remembered exclusion clears the choice: back to what the toggles say,
    # nothing pinned "included by you".
    cleared = rows(root, "--include", CONTEXT)[CONTEXT]
    assert cleared["status"] == "included" and cleared["reason"] != "included by you"
    assert rows(root)[CONTEXT]["status"] == "included"
    stored = json.loads((root / ".promptdeck/file-choices.json").read_text())
    assert "1-2" not in stored["stories"]
    # So the project-context toggle governs it again, and --fit may propose it.
    assert rows(root, "--no-project-context")[CONTEXT]["status"] == "excluded"
    before = json.loads(run(root, "inspect", "1-2", "--json").stdout)
    size = before["system"]["bytes"] + before["user"]["bytes"]
    fit = json.loads(run(root, "inspect", "1-2", "--json", "--fit", str(size - 1_000)).stdout)
    assert CONTEXT in [d["path"] for d in fit["fit"]["drop"]]


@pytest.mark.parametrize("flag", ["--exclude", "--leave-out"])
def test_a_path_that_is_no_candidate_is_refused_with_the_nearest(root: Path, flag: str) -> None:
    typo = CONTEXT.replace("context", "contxt")
    done = run(root, "inspect", "1-2", flag, typo)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert f"{typo}: no candidate of the injection (nearest: {CONTEXT}" in done.stderr
    folder = run(root, "compose", "1-2", flag, ARTIFACTS)
    assert folder.returncode == 2 and "a folder, not a candidate file (nearest: " in folder.stderr
    assert not (root / ".promptdeck/file-choices.json").exists()


def test_the_dry_run_confirmation_shows_the_choices(root: Path) -> None:
    done = run(
        root,
        "run",
        "1-2",
        "--phase",
        "dev",
        "--dry-run",
        "--agent",
        "replay",
        "--include",
        DISCOVERY,
    )
    assert done.returncode == 0, done.stderr
    assert "your file choices:" in done.stdout
    assert f"included by you: {DISCOVERY} (6.8 KiB)" in done.stdout
    # A dry run writes nothing into the project: the choice is shown, not remembered.
    as_json = run(root, "run", "1-2", "--phase", "dev", "--dry-run", "--agent", "replay", "--json")
    assert json.loads(as_json.stdout)["choices"] == []
    assert not (root / ".promptdeck/file-choices.json").exists()


def test_inspect_fit_names_the_files_and_applying_them_gives_that_size(root: Path) -> None:
    everything = ("--discovery", "--tech-spec")
    before = json.loads(run(root, "inspect", "1-2", "--json", *everything).stdout)
    size = before["system"]["bytes"] + before["user"]["bytes"]
    done = run(root, "inspect", "1-2", "--json", *everything, "--fit", str(size - 5_500))
    answer = json.loads(done.stdout)["fit"]
    assert answer["fits"] and answer["smallest"]
    assert [d["path"] for d in answer["drop"]] == [DISCOVERY]
    excludes = [arg for d in answer["drop"] for arg in ("--exclude", d["path"])]
    after = json.loads(run(root, "inspect", "1-2", "--json", *everything, *excludes).stdout)
    assert after["system"]["bytes"] + after["user"]["bytes"] == answer["size_after"]
    text = run(root, "inspect", "1-2", *everything, "--fit", "80%").stdout
    assert "it fits, nothing to leave out" in text


def test_a_bad_fit_target_is_one_line(root: Path) -> None:
    done = run(root, "inspect", "1-2", "--fit", "lots")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "--fit 'lots'" in done.stderr


def test_the_rules_layer_is_left_out_remembered_and_proposed_last(root: Path) -> None:
    rules = "Keep functions small.\n" * 200
    write_files(root, {".promptdeck/rules.md": rules})
    inspected = json.loads(run(root, "inspect", "1-2", "--json", "--exclude-layer", "0B").stdout)
    layer = next(item for item in inspected["layers"] if item["layerId"] == "Layer-0B")
    assert layer["leftOut"] is True and layer["bytes"] == 0
    # Remembered: compose leaves it out without the flag; --include-layer puts it back.
    assert "Keep functions small." not in run(root, "compose", "1-2", "--part", "system").stdout
    dry = run(root, *DEV_RUN, "--dry-run")
    assert "left out by you: Layer-0B, the workspace rules (.promptdeck/rules.md)" in dry.stdout
    run(root, "inspect", "1-2", "--include-layer", "0B")
    system = run(root, "compose", "1-2", "--part", "system").stdout
    assert "Keep functions small." in system
    # Asked to fit below what every file can give, the solver names the rules last.
    everything = ("--discovery", "--tech-spec")
    before = json.loads(run(root, "inspect", "1-2", "--json", *everything).stdout)
    size = before["system"]["bytes"] + before["user"]["bytes"]
    done = run(root, "inspect", "1-2", "--json", *everything, "--fit", str(size - 15_000))
    answer = json.loads(done.stdout)["fit"]
    assert answer["fits"]
    assert "--exclude-layer 0B" in [d["option"] for d in answer["drop"]]
    options = [arg for d in answer["drop"] for arg in d["option"].split(" ", 1)]
    after = json.loads(run(root, "inspect", "1-2", "--json", *everything, *options).stdout)
    assert after["system"]["bytes"] + after["user"]["bytes"] == answer["size_after"]
    kept = json.loads(
        run(
            root,
            "inspect",
            "1-2",
            "--json",
            *everything,
            "--fit",
            str(size - 15_000),
            "--keep",
            "0B",
            "--include-layer",
            "0B",
        ).stdout
    )["fit"]
    assert not kept["fits"]


def test_a_required_layer_cannot_be_left_out(root: Path) -> None:
    done = run(root, "inspect", "1-2", "--exclude-layer", "1")
    assert done.returncode == 2 and done.stdout == ""
    assert "only 0B (Layer-0B, the workspace rules) may be left out" in done.stderr


def test_a_run_records_the_left_out_rules_layer(root: Path) -> None:
    write_files(root, {".promptdeck/rules.md": "Keep functions small.\n"})
    done = run(root, *DEV_RUN, "--no-git", "--exclude-layer", "0B")
    assert done.returncode == 0, done.stderr
    (meta_path,) = (root / ".promptdeck" / "runs").glob("*/meta.json")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    assert meta["rules"]["status"] == "left-out"
    rows = [row for row in meta["left_out"] if row.get("category") == "layer"]
    assert rows == [
        {
            "path": ".promptdeck/rules.md",
            "category": "layer",
            "status": "excluded",
            "why": "left out by you",
            "layer": "Layer-0B",
        }
    ]
    system = meta_path.with_name("system.md").read_text(encoding="utf-8")
    assert "Keep functions small." not in system
