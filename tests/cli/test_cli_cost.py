"""``inspect --cache`` (and the cost faces) through a subprocess: what the CLI prints is what
the bytes sent share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROMPTDECK = str(Path(sys.executable).parent / "promptdeck")
ARTIFACTS = "_bmad-output/implementation-artifacts"
STORY = f"{ARTIFACTS}/1-2-user-registration.md"
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": "development_status:\n  epic-1: in-progress\n"
    "  1-2-user-registration: ready-for-dev\n",
    STORY: "# Story 1.2: User registration\n\nStatus: ready-for-dev\n\n## Acceptance Criteria\n\n"
    "1. A new email creates an account.\n\n## Tasks / Subtasks\n\n- [ ] Task 1: Form (AC: 1)\n"
    + "\nBackground detail, repeated so the injection is the bulk. "
    * 300,
    ".promptdeck/rules.md": "Always write tests.\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for relpath, text in FILES.items():
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [PROMPTDECK, *args, "--root", str(root)], capture_output=True, env=env, timeout=120
    )


def common_prefix(first: bytes, second: bytes) -> int:
    length = 0
    while length < min(len(first), len(second)) and first[length] == second[length]:
        length += 1
    return length


@pytest.mark.parametrize("delivery", ["layered", "cache-aware"])
def test_inspect_cache_json_equals_the_common_prefix_of_the_composed_system_prompts(
    root: Path, delivery: str
) -> None:
    done = run(
        root,
        "inspect",
        "1-2",
        "--cache",
        "--json",
        "--phases",
        "kickoff,dev,review",
        "--delivery",
        delivery,
    )
    assert done.returncode == 0, done.stderr.decode()
    meter = json.loads(done.stdout)
    assert meter["delivery"] == delivery
    systems = {
        phase: run(root, "compose", "1-2", "--phase", phase, "--delivery", delivery).stdout
        for phase in ("kickoff", "dev", "review")
    }
    for pair in meter["pairs"]:
        expected = common_prefix(systems[pair["before"]], systems[pair["after"]])
        assert pair["shared_prefix_bytes"] == expected
        assert pair["system_bytes"] == len(systems[pair["after"]])
    if delivery == "cache-aware":
        assert all(pair["whole"] for pair in meter["pairs"])
    else:
        assert meter["pairs"][0]["parts_at"] == "Layer-2"


def test_inspect_cache_prints_records_and_flags_when_piped(root: Path) -> None:
    done = run(root, "inspect", "1-2", "--cache", "--phases", "dev,review")
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    assert any(line.startswith("layer\tLayer-2\tContract\tvolatile") for line in lines)
    assert any(line.startswith("pair\tdev→review\t") for line in lines)
    assert any(line.startswith("flag\tdev→review: volatile Layer-2") for line in lines)


def test_inspect_cache_refuses_an_unknown_phase_in_one_line(root: Path) -> None:
    done = run(root, "inspect", "1-2", "--cache", "--phases", "dev,lunch")
    assert done.returncode != 0
    err = done.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "lunch" in err[0]
    assert b"Traceback" not in done.stderr
