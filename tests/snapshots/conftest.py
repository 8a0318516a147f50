"""Snapshot fixtures: a fresh demo workspace per test and nothing that varies between runs
(no user settings, no animations, no cursor blink, no durations or run ids on screen)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from builders import copy_workspace, private_git_home


@pytest.fixture(autouse=True)
def _steady_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture(scope="session")
def snapshot_demo_template(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Path:
    """The bundled demo, its replay agent without pauses (committed), once per test process."""
    holder = tmp_path_factory.mktemp("snapshot-demo")
    root = copy_workspace(demo_template, holder / "ledgerline")
    config = root / ".promptdeck" / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[agent]\n", "[agent]\nreplay_delay = 0.0\n", 1))
    with private_git_home(holder):
        subprocess.run(
            ["git", "-C", str(root), "commit", "-q", "--no-verify", "-am", "snapshot settings"],
            check=True,
        )
    return root


@pytest.fixture
def demo_root(tmp_path: Path, snapshot_demo_template: Path) -> Path:
    """The bundled demo in a fresh git repository, its replay agent without pauses."""
    return copy_workspace(snapshot_demo_template, tmp_path / "ledgerline")
