"""Builders for the suites' workspaces: files written exactly as given, and git repositories
with everything committed. Shared by the unit, CLI and end-to-end tests."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Write each root-relative file, text as UTF-8 and bytes as they are."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def make_workspace(root: Path, files: Mapping[str, str | bytes], **config: object) -> Workspace:
    """A workspace at ``root`` holding ``files``, with settings ``Config(**config)``."""
    write_files(root, files)
    return Workspace(root=root.resolve(), config=Config(**config))  # type: ignore[arg-type]


def commit_all(root: Path, message: str = "base") -> None:
    """Make ``root`` a git repository (with a local identity) and commit everything in it."""
    for args in (
        ["init", "-q"],
        ["config", "user.email", "dev@example.com"],
        ["config", "user.name", "Dev"],
        ["add", "-A"],
        ["commit", "-q", "-m", message],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
