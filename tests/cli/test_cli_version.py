"""``promptdeck --version`` prints the version pip installed, read from the package metadata."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_version_is_the_installed_package_version(tmp_path: Path) -> None:
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["version"]
    done = subprocess.run(
        [sys.executable, "-m", "promptdeck.cli", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"promptdeck {declared}\n"
    assert done.stderr == ""


def test_version_is_listed_in_help(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "promptdeck.cli", "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0
    assert "--version" in done.stdout
