"""Every program promptdeck starts is found on absolute ``PATH`` entries outside the project,
by one resolver: not only a run's agent and git, but capture's client, the editor ``o`` opens
and the clipboard program ``y`` copies through. A repository's ``bin/claude``, ``bin/vi`` and
``bin/xclip`` on a relative entry (``bin``, ``./bin``) never run; a canary file proves it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace
from promptdeck.core.project.editor import editor_argv

CANARY = '#!/bin/sh\necho ran >> "{canary}"\nexit 0\n'
PLANTED = ("claude", "vi", "xclip", "xsel", "wl-copy")


def _planted(tmp_path: Path) -> tuple[Path, Path]:
    canary = tmp_path / "CANARY"
    files = {STORY_REL: STORY, ".promptdeck/config.toml": "[agent]\nreplay_delay = 0.0\n"}
    files.update({f"bin/{name}": CANARY.format(canary=canary) for name in PLANTED})
    root = cloned_workspace(tmp_path, files)
    for name in PLANTED:
        (root / "bin" / name).chmod(0o755)
    return root, canary


def _path(*first: str) -> str:
    # The planted entries first; the system folders after them, so what the machine itself
    # holds decides nothing the project could have chosen.
    return os.pathsep.join([*first, "/usr/bin", "/bin"])


@pytest.mark.parametrize("entry", ["bin", "./bin"])
def test_capture_never_starts_the_repository_s_claude(tmp_path: Path, entry: str) -> None:
    root, canary = _planted(tmp_path)
    env = {"PATH": _path(entry), "PROMPTDECK_CLAUDE_BIN": ""}
    done = cli(root, "capture", "--client", "claude", "--story", "1.1", "--timeout", "20", env=env)
    assert not canary.exists(), "the repository's bin/claude ran"
    assert done.code == 12, done.stderr
    assert "claude CLI was not found" in done.stderr


def test_the_editor_is_never_the_repository_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, canary = _planted(tmp_path)
    monkeypatch.chdir(root)
    env = {"PATH": _path("bin"), "EDITOR": "vi"}
    argv = editor_argv(root / STORY_REL, env)
    if isinstance(argv, list):  # a vi of the machine's own, on an absolute entry
        assert os.path.isabs(argv[0]) and not argv[0].startswith(str(root))
    outside = tmp_path / "tools"
    outside.mkdir()
    (outside / "vi").write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    (outside / "vi").chmod(0o755)
    env = {"PATH": _path("./bin", str(outside)), "VISUAL": "vi -n"}
    assert editor_argv(root / STORY_REL, env) == [
        str(outside / "vi"),
        "-n",
        str(root / STORY_REL),
    ]
    # An absolute entry into the project is passed over too.
    env = {"PATH": _path(str(root / "bin")), "EDITOR": "xsel"}
    argv = editor_argv(root / STORY_REL, env, root=root)
    assert not (isinstance(argv, list) and argv[0].startswith(str(root)))
    assert not canary.exists()


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="X and Wayland clipboards")
def test_copying_never_starts_the_repository_s_clipboard_program(tmp_path: Path) -> None:
    root, canary = _planted(tmp_path)
    script = (
        "from promptdeck.tui.clipboard import copy_text\n"
        "sent = []\n"
        "reached, message = copy_text('the prompt', sent.append, 'system prompt')\n"
        "print(reached, sent)\n"
    )
    env = {
        "PATH": _path("bin", "./bin"),
        "DISPLAY": ":0",
        "WAYLAND_DISPLAY": "wayland-0",
        "HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not canary.exists(), "the repository's clipboard program ran"
