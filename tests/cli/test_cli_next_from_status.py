"""``promptdeck run STORY --auto --dry-run`` composes the phase ``--auto`` would start with, and
with no run recorded that phase follows the story's tracked status: ``review`` → review,
``in-progress`` → dev, ``ready-for-dev`` → the start of the flow (dev, kickoff only when
asked for). The confirmation says why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from builders import write_files

PROMPTDECK = [
    sys.executable,
    "-c",
    "import sys; from promptdeck.cli import main; sys.exit(main())",
]
FOLDER = "_bmad-output/implementation-artifacts"
STATUS_FILE = f"{FOLDER}/sprint-status.yaml"


def _project(root: Path) -> Path:
    files = {
        STATUS_FILE: (
            "development_status:\n"
            "  epic-1: in-progress\n"
            "  1-1-a: review\n"
            "  1-2-b: in-progress\n"
            "  1-3-c: ready-for-dev\n"
        ),
        ".promptdeck/config.toml": '[agent]\ndefault = "replay"\n',
    }
    for key, number, title, status in (
        ("1-1-a", "1.1", "A", "review"),
        ("1-2-b", "1.2", "B", "in-progress"),
        ("1-3-c", "1.3", "C", "ready-for-dev"),
    ):
        files[f"{FOLDER}/{key}.md"] = (
            f"# Story {number}: {title}\n\nStatus: {status}\n\n## Tasks / Subtasks\n\n- [ ] Do it\n"
        )
    write_files(root, files)
    return root


def _dry_run(root: Path, story: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROMPTDECK, "run", story, "--auto", "--dry-run", *extra],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("story", "phase", "why"),
    [
        ("1-1", "review", f"status 'review' ({STATUS_FILE}:3): the work is implemented"),
        ("1-2", "dev", f"status 'in-progress' ({STATUS_FILE}:4): the work is under way"),
        ("1-3", "dev", "kickoff not asked for"),
    ],
)
def test_the_auto_dry_run_starts_where_the_status_says(
    tmp_path: Path, story: str, phase: str, why: str
) -> None:
    root = _project(tmp_path)
    done = _dry_run(root, story)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    # The phases --auto would run come first, then the first one's confirmation.
    assert rows[0].startswith("--auto would run, were each phase to succeed")
    assert rows[1] == f"  1. {phase} — {why}"
    title = next(row for row in rows if row.startswith("Run "))
    assert title.startswith(f"Run {phase} for story {story} (create, attempt 1)")
    assert f"next: {phase} — {why}" in rows
    # The prompt files written are that phase's.
    meta = json.loads(_dry_run(root, story, "--json").stdout)
    assert (meta["phase"], meta["why"]) == (phase, why)
    assert f"--phase {phase} " in rows[-1]


def test_kickoff_asked_for_starts_a_ready_story_but_never_a_review_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    ready = json.loads(_dry_run(root, "1-3", "--with", "kickoff", "--json").stdout)
    assert ready["phase"] == "kickoff"
    review = json.loads(_dry_run(root, "1-1", "--with", "kickoff", "--json").stdout)
    assert review["phase"] == "review"
    # Kickoff is still there to run by name.
    named = json.loads(_dry_run(root, "1-1", "--phase", "kickoff", "--json").stdout)
    assert (named["phase"], named["why"]) == ("kickoff", None)
