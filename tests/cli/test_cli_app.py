"""``promptdeck [PATH]`` / ``app`` and ``demo`` from a script: one clear line and exit 2, never
a traceback, when there is no terminal or the path is wrong."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptdeck.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


@pytest.fixture
def demo_root(tmp_path: Path, copy_demo: Callable[[Path], Path]) -> Path:
    return copy_demo(tmp_path / "ledgerline")


def test_app_without_a_terminal_says_so_and_exits_2(demo_root: Path) -> None:
    done = _run("app", str(demo_root), cwd=demo_root)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "needs a terminal" in done.stderr and "Traceback" not in done.stderr


def test_bare_path_is_the_app(demo_root: Path) -> None:
    done = _run(str(demo_root), cwd=demo_root.parent)
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr


def test_demo_without_a_terminal_creates_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "promptdeck.cli", "demo"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path), "HOME": str(tmp_path)},
        timeout=60,
    )
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_bad_path_and_conflicting_root(tmp_path: Path, demo_root: Path) -> None:
    missing = _run("app", str(tmp_path / "nope"), cwd=tmp_path)
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    both = _run("app", str(demo_root), "--root", str(demo_root), cwd=tmp_path)
    assert both.returncode == 2 and "either PATH or --root" in both.stderr
    agent = _run("app", "--agent", "nobody", cwd=demo_root)
    assert agent.returncode == 2 and "invalid choice" in agent.stderr


def test_help_lists_app_and_demo(tmp_path: Path) -> None:
    done = _run("--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "app" in done.stdout and "demo" in done.stdout
