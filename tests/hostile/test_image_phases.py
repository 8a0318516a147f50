"""An ``--image`` is what was confirmed at every phase: an ``--auto`` dev phase that swaps the
file (for a link to an image outside the project, or other bytes) gets review refused in one
line, and the agent only ever reads the run folder's copy of the confirmed bytes."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace, run_folders

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

SWAPPING_AGENT = r"""
import os, sys, pathlib
story, phase, root, how, outside = sys.argv[1:6]
image = pathlib.Path(root) / "docs" / "shot.png"
if phase == "dev":
    image.unlink()
    if how == "link":
        image.symlink_to(outside)
    else:
        image.write_bytes(pathlib.Path(outside).read_bytes())
    print(f"IMPLEMENTATION COMPLETE: {story}", flush=True)
else:
    print(f"REVIEW PASSED: {story}", flush=True)
"""


@pytest.mark.parametrize("how", ["link", "bytes"])
def test_an_image_swapped_during_dev_is_refused_in_review(tmp_path: Path, how: str) -> None:
    outside = tmp_path / "private.png"
    outside.write_bytes(PNG + b"the user's private screenshot")
    argv = [sys.executable, ".promptdeck/agent.py", "{story}", "{phase}", "{root}", how]
    argv.append(str(outside))
    root = cloned_workspace(
        tmp_path,
        {
            STORY_REL: STORY,
            "docs/shot.png": PNG,
            ".promptdeck/agent.py": SWAPPING_AGENT,
            ".promptdeck/config.toml": (
                f'[agent]\ndefault = "command"\ncommand_argv = {json.dumps(argv)}\n'
            ),
        },
    )
    done = cli(root, "run", "1-1", "--auto", "--no-git", "--image", "docs/shot.png")
    assert done.code == 2, done.stderr
    refusal = done.lines[-1]
    assert "--image docs/shot.png" in refusal and "not sent" in refusal, done.stderr
    dev = [folder for folder in run_folders(root) if "-dev-" in folder.name]
    assert len(dev) == 1
    assert (dev[0] / "image-1.png").read_bytes() == PNG
    assert not [folder for folder in run_folders(root) if "-review-" in folder.name]
