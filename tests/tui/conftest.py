"""Fixtures for the app's Pilot tests: a fresh demo workspace per test, and settings kept
away from the real user config."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import set_agent_settings
from builders import copy_workspace, private_git_home


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))


@pytest.fixture(scope="session")
def quick_demo_template(tmp_path_factory: pytest.TempPathFactory, demo_template: Path) -> Path:
    """The demo with its replay agent made quick (committed), once per test process."""
    holder = tmp_path_factory.mktemp("quick-demo")
    root = copy_workspace(demo_template, holder / "ledgerline")
    with private_git_home(holder):
        set_agent_settings(root, replay_delay=0.0)
    return root


@pytest.fixture
def demo_root(tmp_path: Path, quick_demo_template: Path) -> Path:
    """A fresh copy of the bundled demo (a git repository) whose replay agent is quick."""
    return copy_workspace(quick_demo_template, tmp_path / "ledgerline")
