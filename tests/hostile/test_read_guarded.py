"""Every reader goes through one guard: special files, files outside the project, loops,
deep nesting and huge files never hang, blow up or leak — each is one skipped file with its
reason, through the real CLI on a cloned repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hostile._read_helpers import (
    ARTIFACTS,
    BASE_FILES,
    CANARY,
    PLANNING,
    assert_clean,
    make_cloned,
    run_cli,
    skipped_reasons,
)

OPENSPEC_CHANGE = "openspec/changes/add-export"
TASKS = "## 1. Export\n\n- [ ] 1.1 Write the exporter\n"
STORY_FILE = f"{ARTIFACTS}/1-1-first-story.md"
COMMANDS = (["stories"], ["stories", "--json"], ["inspect", "1-1"], ["compose", "1-1"])


def _run_all(hostile, commands=COMMANDS, codes=(0,)):  # type: ignore[no-untyped-def]
    results = {}
    for args in commands:
        result = run_cli(hostile, args)
        assert_clean(result, hostile, codes)
        results[" ".join(args)] = result
    return results


def test_symlinks_to_devices_are_never_opened(tmp_path: Path) -> None:
    # /dev/zero never ends: read whole, it grows memory until the machine runs out.
    hostile = make_cloned(
        tmp_path,
        {
            f"{OPENSPEC_CHANGE}/design.md": "# Design\n",
            ".promptdeck/config.toml": '[paths]\nlearnings = ".promptdeck/learnings.md"\n',
        },
        symlinks={
            f"{ARTIFACTS}/sprint-status.yaml": "/dev/zero",
            f"{PLANNING}/epics.md": "/dev/zero",
            f"{OPENSPEC_CHANGE}/tasks.md": "/dev/zero",
            f"{OPENSPEC_CHANGE}/proposal.md": "/dev/zero",
            f"{OPENSPEC_CHANGE}/specs/export/spec.md": "/dev/zero",
            ".promptdeck/rules.md": "/dev/zero",
            ".promptdeck/learnings.md": "/dev/zero",
            ".promptdeck/templates/.keep": "/dev/null",
        },
    )
    results = _run_all(hostile, (*COMMANDS, ["compose", "1-1", "--phase", "dev"]))
    reasons = skipped_reasons(results["stories --json"].stdout)
    device = "unreadable: a device, not a regular file"
    assert reasons[f"{ARTIFACTS}/sprint-status.yaml"] == device
    assert reasons[f"{OPENSPEC_CHANGE}/tasks.md"] == device
    # The story file itself is still found: one bad file never breaks discovery.
    stories = json.loads(results["stories --json"].stdout)["stories"]
    assert [s["id"] for s in stories] == ["1-1"]
    assert "workspace rules .promptdeck/rules.md: unreadable" in results["inspect 1-1"].stderr
    # A template override is required text: one that leads to a device is one clear error.
    os.symlink("/dev/zero", hostile.root / ".promptdeck/templates/layer-1-guardrails.md")
    refused = run_cli(hostile, ["compose", "1-1"])
    assert_clean(refused, hostile, (2,))
    assert "layer-1-guardrails.md: unreadable: a device, not a regular file" in refused.stderr
    # One that leads to a file outside the project is refused the same way.
    (hostile.root / ".promptdeck/templates/layer-1-guardrails.md").unlink()
    os.symlink(hostile.canary_file, hostile.root / ".promptdeck/templates/layer-1-guardrails.md")
    refused = run_cli(hostile, ["compose", "1-1"])
    assert_clean(refused, hostile, (2,))
    assert "layer-1-guardrails.md leads outside the project; not read" in refused.stderr


def test_fifos_and_terminals_never_block(tmp_path: Path) -> None:
    hostile = make_cloned(
        tmp_path,
        {f"{OPENSPEC_CHANGE}/design.md": "# Design\n"},
        symlinks={
            f"{ARTIFACTS}/1-3-tty.md": "/dev/tty",
            f"{ARTIFACTS}/1-4-stdin.md": "/dev/stdin",
            ".promptdeck/rules.md": "/dev/stdin",
        },
    )
    # git cannot carry a FIFO: one made after the clone, as a tool of the user's might.
    for rel in (
        f"{ARTIFACTS}/sprint-status.yaml",
        f"{PLANNING}/epics.md",
        f"{OPENSPEC_CHANGE}/tasks.md",
        f"{OPENSPEC_CHANGE}/proposal.md",
        f"{ARTIFACTS}/1-1-notes.md",
    ):
        path = hostile.root / rel
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    results = _run_all(hostile)
    reasons = skipped_reasons(results["stories --json"].stdout)
    assert reasons[f"{ARTIFACTS}/sprint-status.yaml"] == "unreadable: a FIFO, not a regular file"
    assert reasons[f"{OPENSPEC_CHANGE}/tasks.md"] == "unreadable: a FIFO, not a regular file"
    inspected = run_cli(hostile, ["inspect", "1-1", "--json"])
    assert_clean(inspected, hostile, (0,))
    files = {f["path"]: f for f in json.loads(inspected.stdout)["files"]}
    # Only regular files are key-matched candidates: the FIFO is not even listed.
    assert f"{ARTIFACTS}/1-1-notes.md" not in files
    assert files[STORY_FILE]["status"] == "included"


def test_nothing_outside_the_project_is_read(tmp_path: Path) -> None:
    hostile = make_cloned(
        tmp_path,
        {
            f"{OPENSPEC_CHANGE}/tasks.md": TASKS,
            f"{OPENSPEC_CHANGE}/proposal.md": "# Proposal: Export\n",
        },
        symlinks={
            f"{OPENSPEC_CHANGE}/specs/export/spec.md": "{outside}/secret.md",
            f"{ARTIFACTS}/1-1-outside.md": "{outside}/secret.md",
            f"{ARTIFACTS}/sprint-status.yaml": "{outside}/sprint-status.yaml",
        },
    )
    results = _run_all(hostile)
    results.update(
        _run_all(hostile, (["inspect", "add-export:1"], ["compose", "add-export:1", "--json"]))
    )
    reasons = skipped_reasons(results["stories --json"].stdout)
    assert reasons[f"{ARTIFACTS}/sprint-status.yaml"].startswith("outside-project")
    assert reasons[f"{OPENSPEC_CHANGE}/specs/export/spec.md"].startswith("outside-project")


@pytest.mark.parametrize("how", ["symlinked", "configured"])
def test_an_artifacts_folder_outside_the_project_is_not_read(tmp_path: Path, how: str) -> None:
    if how == "symlinked":
        hostile = make_cloned(
            tmp_path,
            {f"{PLANNING}/epics.md": "# Epics\n", "openspec/.keep": ""},
            symlinks={"_bmad-output/implementation-artifacts": "{outside}"},
            base=False,
        )
    else:
        hostile = make_cloned(
            tmp_path,
            {".promptdeck/config.toml": '[paths]\nartifacts = "../outside"\n'},
            base=False,
        )
    result = run_cli(hostile, ["stories", "--json"])
    assert_clean(result, hostile, (0,))
    assert json.loads(result.stdout)["stories"] == []
    assert any(r.startswith("outside-project") for r in skipped_reasons(result.stdout).values())
    assert_clean(run_cli(hostile, ["inspect", "1-1"]), hostile, (2,))


def test_a_symlink_loop_and_a_deep_task_list_are_skipped_with_a_reason(tmp_path: Path) -> None:
    deep = "".join(f"{'  ' * depth}- [ ] level {depth}\n" for depth in range(500))
    hostile = make_cloned(
        tmp_path,
        {
            f"{ARTIFACTS}/1-2-deep.md": f"# Story 1.2: Deep\n\n## Tasks\n\n{deep}",
            f"{OPENSPEC_CHANGE}/tasks.md": f"## 1. Deep\n\n{deep}",
        },
        symlinks={
            f"{ARTIFACTS}/1-1-loop-a.md": "1-1-loop-b.md",
            f"{ARTIFACTS}/1-1-loop-b.md": "1-1-loop-a.md",
            f"{ARTIFACTS}/loop-dir": ".",
        },
    )
    results = _run_all(hostile, (*COMMANDS, ["inspect", "1-1", "--file", "loop-dir/x"]))
    reasons = skipped_reasons(results["stories --json"].stdout)
    assert "nested deeper than 50 levels" in reasons[f"{ARTIFACTS}/1-2-deep.md"]
    assert "nested deeper than 50 levels" in reasons[f"{OPENSPEC_CHANGE}/tasks.md"]
    assert reasons[f"{ARTIFACTS}/1-1-loop-a.md"] == "unreadable: a symlink loop"


def test_a_sparse_ten_gigabyte_story_is_judged_from_stat(tmp_path: Path) -> None:
    status = BASE_FILES[f"{ARTIFACTS}/sprint-status.yaml"] + "  1-7-huge: ready-for-dev\n"
    hostile = make_cloned(tmp_path, {f"{ARTIFACTS}/sprint-status.yaml": status})
    huge = hostile.root / ARTIFACTS / "1-7-huge.md"
    with open(huge, "wb") as handle:
        handle.write(b"# Story 1.7: Huge\n")
        handle.truncate(10 * 1024**3)
    results = _run_all(hostile, (["stories", "--json"],))
    reasons = skipped_reasons(results["stories --json"].stdout)
    assert reasons[f"{ARTIFACTS}/1-7-huge.md"].startswith("too-large: 10,737,418,240 bytes")
    inspected = run_cli(hostile, ["inspect", "1-7", "--json"])
    assert_clean(inspected, hostile, (3,))
    files = {f["path"]: f for f in json.loads(inspected.stdout)["files"]}
    assert files[f"{ARTIFACTS}/1-7-huge.md"]["status"] == "too-large"


def test_inspect_of_a_thousand_large_matches_reads_none_past_the_error_line(
    tmp_path: Path,
) -> None:
    body = "# Notes\n" + ("x" * 99 + "\n") * 1500  # 150 KB each
    hostile = make_cloned(tmp_path, {})
    folder = hostile.root / ARTIFACTS
    for number in range(1000):
        (folder / f"1-1-note-{number:04d}.md").write_text(body, encoding="utf-8")
    result = run_cli(hostile, ["inspect", "1-1", "--json"])
    assert_clean(result, hostile, (3,))
    files = json.loads(result.stdout)["files"]
    unread = [f for f in files if f["status"] == "too-large"]
    assert len(unread) >= 999
    assert all(f["tokens"] is None for f in unread)
    assert CANARY not in result.stdout
