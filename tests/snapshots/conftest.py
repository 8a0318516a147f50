"""Snapshot fixtures: a fresh demo workspace per test and nothing that varies between runs
(no user settings, no animations, no cursor blink, no durations or run ids on screen)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from promptdeck.core.demo.bundle import prepare_demo


@pytest.fixture(autouse=True)
def _steady_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    # Kept captures and count caches live in the cache folder: never the caller's.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    """The bundled demo in a fresh git repository, its replay agent without pauses."""
    root = prepare_demo(tmp_path / "ledgerline")
    config = root / ".promptdeck" / "config.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace("[agent]\n", "[agent]\nreplay_delay = 0.0\n", 1))
    subprocess.run(
        ["git", "-C", str(root), "commit", "-q", "--no-verify", "-am", "snapshot settings"],
        check=True,
    )
    return root
