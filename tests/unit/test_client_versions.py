"""The installed client's version is remembered per program file: asked once, not again while
the program is the same; a changed program, an old answer or a damaged file asks again."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from promptdeck.core import Config
from promptdeck.core.capture import installed_version
from promptdeck.core.capture.versions import FILE, MAX_AGE_S, remembered_version
from promptdeck.core.project.user_dirs import cache_folder


def _client(folder: Path, version: str) -> tuple[Path, Path]:
    program, log = folder / "claude", folder / "runs.log"
    program.write_text(f'#!/bin/sh\necho run >> "{log}"\necho "{version} (Claude Code)"\n')
    program.chmod(0o755)
    return program, log


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    where = tmp_path / "bin"
    where.mkdir()
    return where


def test_an_unchanged_client_is_asked_its_version_once(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, log = _client(folder, "2.1.197")
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(program))
    assert installed_version(Config(), "claude") == "2.1.197"
    assert installed_version(Config(), "claude") == "2.1.197"
    assert _runs(log) == 1
    # Upgraded in place: another file, asked again.
    _client(folder, "2.1.210")
    assert installed_version(Config(), "claude") == "2.1.210"
    assert _runs(log) == 2


def test_an_old_answer_or_a_damaged_file_asks_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, log = _client(folder, "2.1.197")
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(program))
    installed_version(Config(), "claude")
    real = os.path.realpath(program)
    assert remembered_version(real) == "2.1.197"
    later = time.time() + MAX_AGE_S + 60
    with monkeypatch.context() as patched:
        patched.setattr("promptdeck.core.capture.versions.time.time", lambda: later)
        assert remembered_version(real) is None
    (cache_folder() / FILE).write_text('{"format":"promptdeck-client-versions","entries":[')
    assert installed_version(Config(), "claude") == "2.1.197"
    assert _runs(log) == 2


def test_a_file_that_is_not_promptdecks_is_never_replaced(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program, log = _client(folder, "2.1.197")
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(program))
    cache_folder().mkdir(parents=True)
    theirs = cache_folder() / FILE
    theirs.write_text("someone else's notes\n")
    assert installed_version(Config(), "claude") == "2.1.197"
    assert installed_version(Config(), "claude") == "2.1.197"
    assert _runs(log) == 2
    assert theirs.read_text() == "someone else's notes\n"
