"""A repository's own ``bin/claude`` and ``bin/git`` never run, whatever relative entry the
user's ``PATH`` holds (``./bin``, ``bin``): not for a dry run, not for a ``replay`` run that
reaches git, not with ``--root`` from another folder. A canary file proves it; the dry run
shows the absolute path that would run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace

CANARY = '#!/bin/sh\necho ran > "{canary}"\nexit 1\n'


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    canary = tmp_path / "CANARY"
    script = CANARY.format(canary=canary)
    root = cloned_workspace(
        tmp_path,
        {
            STORY_REL: STORY,
            "bin/claude": script,
            "bin/git": script,
            ".promptdeck/config.toml": "[agent]\nreplay_delay = 0.0\n",
        },
    )
    for name in ("claude", "git"):
        (root / "bin" / name).chmod(0o755)
    return root, canary


def _path(*first: str) -> dict[str, str]:
    # The system folders only after the planted entry: whether the caller's own PATH holds a
    # claude (the end-to-end tests put one there) must not change what this test sees.
    return {
        "PATH": os.pathsep.join([*first, "/usr/local/bin", "/usr/bin", "/bin"]),
        "PROMPTDECK_CLAUDE_BIN": "",
    }


@pytest.mark.parametrize("entry", ["./bin", "bin"])
def test_a_relative_path_entry_never_runs_the_repositorys_programs(
    tmp_path: Path, entry: str
) -> None:
    root, canary = _planted(tmp_path)
    env = _path(entry)
    dry = cli(
        root, "run", "1-1", "--phase", "dev", "--agent", "claude", "--dry-run", "--json", env=env
    )
    assert dry.code == 0, dry.stderr
    plan = json.loads(dry.stdout)
    # No claude outside the project here: the plan says so instead of naming ./bin/claude.
    assert plan["argv"][0] == "claude"
    assert any("not found on an absolute PATH entry" in note for note in plan["notes"])
    replay = cli(root, "run", "1-1", "--phase", "dev", "--agent", "replay", env=env)
    assert replay.code == 0, replay.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "bin").symlink_to(root / "bin")
    replay_run = ("run", "1-1", "--phase", "dev", "--agent", "replay")
    away = cli(root, *replay_run, "--root", str(root), env=env, cwd=elsewhere)
    assert away.code == 0, away.stderr
    assert not canary.exists()


def test_an_absolute_path_entry_into_the_project_is_passed_over_too(tmp_path: Path) -> None:
    root, canary = _planted(tmp_path)
    done = cli(
        root, "run", "1-1", "--phase", "dev", "--agent", "replay", env=_path(str(root / "bin"))
    )
    assert done.code == 0, done.stderr
    assert not canary.exists()


def test_the_dry_run_shows_the_absolute_program_that_would_run(tmp_path: Path) -> None:
    root, canary = _planted(tmp_path)
    tools = tmp_path / "tools"
    tools.mkdir()
    real = tools / "claude"
    real.write_text("#!/bin/sh\nexit 0\n")
    real.chmod(0o755)
    dry_run = ("run", "1-1", "--phase", "dev", "--agent", "claude", "--dry-run")
    done = cli(root, *dry_run, "--json", env=_path("./bin", str(tools)))
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["argv"][0] == str(real)
    shown = cli(root, *dry_run, env=_path("./bin", str(tools)))
    assert str(real) in shown.stdout + shown.stderr
    assert not canary.exists()
