"""Builders for the suites' workspaces: files written exactly as given, and git repositories
with everything committed. Shared by the unit, CLI and end-to-end tests."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace

TEST_GIT_CONFIG = "[user]\n\tname = promptdeck tests\n\temail = tests@promptdeck.invalid\n"
"""The git identity of every test's home: commits never depend on who runs the suite."""


@contextmanager
def private_git_home(folder: Path) -> Iterator[Path]:
    """For the block: ``HOME`` is a new folder inside ``folder`` (with the test identity in its
    ``.gitconfig``) and the machine's system-wide git config is not read. For fixtures wider
    than one test, which the per-test home does not cover yet."""
    home = folder / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(TEST_GIT_CONFIG, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        yield home


def copy_workspace(template: Path, dest: Path) -> Path:
    """A copy of the workspace ``template`` (its git history included) at ``dest``, which must
    not exist; its files are new (fresh modification times, as after a checkout)."""
    shutil.copytree(template, dest, symlinks=True, copy_function=shutil.copy)
    return dest


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
