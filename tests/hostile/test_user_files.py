"""User files stay the user's: a ``PROMPTDECK_TOKEN_CACHE`` naming an existing file that is
not promptdeck's own cache (a note, another program's SQLite database, a link) is refused in
one line and left byte for byte; the command itself still works. promptdeck's own cache files
found damaged or foreign in its cache folder are rebuilt, with one line each."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cli, cloned_workspace


def _sqlite_of_another_program(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.execute("INSERT INTO notes VALUES ('keep me')")
    db.commit()
    db.close()


@pytest.mark.parametrize("kind", ["text", "sqlite", "empty", "link"])
def test_a_token_cache_path_naming_a_users_file_is_refused_and_kept(
    tmp_path: Path, kind: str
) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    users = tmp_path / "users-file"
    if kind == "text":
        users.write_text("my notes\n")
    elif kind == "sqlite":
        _sqlite_of_another_program(users)
    elif kind == "empty":
        users.write_bytes(b"")
    else:
        (tmp_path / "target").write_text("linked notes\n")
        users.symlink_to(tmp_path / "target")
    before = users.read_bytes()
    done = cli(root, "inspect", "1-1", env={"PROMPTDECK_TOKEN_CACHE": str(users)})
    assert done.code == 0, done.stderr
    said = [line for line in done.lines if "PROMPTDECK_TOKEN_CACHE" in line]
    assert len(said) == 1 and str(users) in said[0] and "left as it is" in said[0]
    assert users.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("users-file")) == [
        "users-file"
    ]


def test_a_token_cache_path_of_its_own_is_used(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    cache = tmp_path / "counts.sqlite3"
    first = cli(root, "inspect", "1-1", env={"PROMPTDECK_TOKEN_CACHE": str(cache)})
    assert first.code == 0 and cache.exists()
    again = cli(root, "inspect", "1-1", env={"PROMPTDECK_TOKEN_CACHE": str(cache)})
    assert again.code == 0
    assert not [line for line in again.lines if "PROMPTDECK_TOKEN_CACHE" in line]


def test_a_damaged_or_foreign_cache_file_is_rebuilt_with_one_line(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    home = tmp_path / "caches"
    folder = home / "promptdeck"
    folder.mkdir(parents=True)
    counts, results = folder / "token-counts.sqlite3", folder / "results.sqlite3"
    counts.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)  # a damaged database
    _sqlite_of_another_program(results)  # a database, but not promptdeck's
    env = {"XDG_CACHE_HOME": str(home)}
    done = cli(root, "inspect", "1-1", env=env)
    assert done.code == 0, done.stderr
    said = sorted(line for line in done.lines if "rebuilt" in line)
    assert len(said) == 2, done.stderr
    assert "result cache" in said[0] and "not a promptdeck result cache file" in said[0]
    assert "token cache" in said[1] and "damaged" in said[1]
    for path in (counts, results):
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA application_id").fetchone()[0] != 0  # promptdeck's own now
        db.close()
    again = cli(root, "inspect", "1-1", env=env)
    assert again.code == 0 and not [line for line in again.lines if "rebuilt" in line]
    assert again.stdout == done.stdout
