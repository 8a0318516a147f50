"""The project both end-to-end suites run promptdeck in, and the ways they drive it.

A story ready for development in a git repository with project rules; the ``promptdeck`` command
as this interpreter runs it; ``compose``, whose system prompt each suite then expects the fake
API to receive; and the lookup of the agent CLI that skips a suite, saying why, where there is
none.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from builders import commit_all, write_files

MAIN = "import sys; from promptdeck.cli import main; sys.exit(main())"
PROMPTDECK = [sys.executable, "-c", MAIN]
STORY_REL = "_bmad-output/implementation-artifacts/1-2-parse-lines.md"
STORY = "# Story 1.2: Parse lines\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Parser\n"
TIMEOUT = 180
# A 1×1 PNG: the smallest real image for --image.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def agent_cli(name: str, package: str) -> str:
    """The agent CLI ``name``: ``PROMPTDECK_<NAME>_BIN``, else the one on PATH.

    Without one, the test module calling this at import is skipped, saying how ``make test``
    fetches ``package``.
    """
    found = os.environ.get(f"PROMPTDECK_{name.upper()}_BIN") or shutil.which(name)
    if found is None:
        pytest.skip(
            f"the {name} CLI is not on PATH (`make test` installs {package} with npm "
            "into .tools/npm when npm is present)",
            allow_module_level=True,
        )
    return found


def make_project(
    tmp_path: Path, rules: str, files: Mapping[str, str | bytes] | None = None
) -> Path:
    """``tmp_path/project``: story 1.2, ``rules`` as the project rules and ``files``, committed."""
    root = tmp_path / "project"
    write_files(root, {STORY_REL: STORY, ".promptdeck/rules.md": rules, **(files or {})})
    commit_all(root)
    return root


def compose(root: Path, *extra: str) -> str:
    """What ``promptdeck compose 1.2 --phase dev --part system`` prints in ``root``."""
    done = subprocess.run(
        [*PROMPTDECK, "compose", "1.2", "--phase", "dev", "--part", "system", *extra],
        cwd=root,
        capture_output=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode("utf-8")


def run_folders(root: Path) -> list[Path]:
    """The run folders of the project at ``root`` (those with a ``meta.json``)."""
    return [p for p in (root / ".promptdeck" / "runs").iterdir() if (p / "meta.json").is_file()]


def as_if_killed(folder: Path) -> str:
    """Leave the run in ``folder`` as a promptdeck killed mid-run leaves it — no result, its
    process gone — and return the agent session it recorded."""
    session = json.loads((folder / "resume.json").read_text())["session_id"]
    assert session
    (folder / "result.json").unlink()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    meta = json.loads((folder / "meta.json").read_text())
    meta["pid"] = gone.pid
    (folder / "meta.json").write_text(json.dumps(meta))
    return str(session)
