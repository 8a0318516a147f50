"""Seals: remembered data loaded with trust (a pickle) is stored under an HMAC whose key only the
user can read; data without the right seal is never trusted, and a key file that is not the
user's private file is never used."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from promptdeck.core.tokens import seal

PARTS = [b"first part", b"second \x00 part"]


@pytest.fixture(autouse=True)
def _fresh_keys() -> None:
    seal._key.cache_clear()  # each test has its own config folder (conftest)


def _key_file() -> Path:
    return Path(seal.key_path())


def test_a_seal_proves_the_parts_and_their_label() -> None:
    made = seal.seal(b"label", PARTS)
    assert made is not None and seal.is_sealed(made, b"label", PARTS)
    assert not seal.is_sealed(made, b"other label", PARTS)
    assert not seal.is_sealed(made, b"label", [b"first part", b"second \x00 parT"])
    assert not seal.is_sealed(made, b"label", [b"first part" + b"second \x00 part"])
    assert not seal.is_sealed(made, b"label", PARTS[:1])
    for forged in (None, 0, "", "0" * 64, made.upper()):
        assert not seal.is_sealed(forged, b"label", PARTS)


def test_the_key_is_made_once_private_and_kept() -> None:
    first = seal.seal(b"label", PARTS)
    info = _key_file().stat()
    assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_size == seal.KEY_BYTES
    key = _key_file().read_bytes()
    seal._key.cache_clear()  # as a later process
    assert seal.seal(b"label", PARTS) == first
    # Two processes making it at once: the one that links second keeps the first one's key.
    seal._make_key(str(_key_file()))
    assert _key_file().read_bytes() == key
    assert [p.name for p in _key_file().parent.iterdir()] == [seal.KEY_NAME]  # no drafts left


@pytest.mark.parametrize("kind", ["readable by the group", "a symlink", "short", "a folder"])
def test_a_key_file_that_is_not_private_is_never_used(kind: str, tmp_path: Path) -> None:
    path = _key_file()
    path.parent.mkdir(parents=True)
    if kind == "readable by the group":
        path.write_bytes(os.urandom(seal.KEY_BYTES))
        path.chmod(0o640)
    elif kind == "a symlink":
        outside = tmp_path / "planted.key"
        outside.write_bytes(os.urandom(seal.KEY_BYTES))
        outside.chmod(0o600)
        path.symlink_to(outside)
    elif kind == "short":
        path.write_bytes(b"short")
        path.chmod(0o600)
    else:
        path.mkdir()
    before = sorted(p.name for p in path.parent.iterdir())
    assert seal.seal(b"label", PARTS) is None
    assert not seal.is_sealed("0" * 64, b"label", PARTS)
    assert sorted(p.name for p in path.parent.iterdir()) == before  # left as it was


def test_without_a_config_folder_nothing_is_sealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the config folder would be")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    assert seal.seal(b"label", PARTS) is None
