"""Seals: an HMAC-SHA256 under a key only this user can read, for remembered data that is loaded
with more trust than JSON.

The result store (:mod:`.results`) keeps JSON, checked on the way out. The app's opening is
remembered as the pickle its helper sends (:mod:`promptdeck.tui.session.opening`), and unpickling
is running code: a pickle planted in the cache — by a repository that ``XDG_CACHE_HOME`` points
into, say — must never be loaded. So such data is stored with a seal made under a key kept in the
user's config folder, beside the trusted configs (:mod:`promptdeck.core.project.trust`): whoever
can write that folder can already make promptdeck run programs, and nobody else can forge a seal.
Data whose seal does not match is never loaded.

The key is 32 random bytes in ``$XDG_CONFIG_HOME/promptdeck/seal.key``, made on first use
(mode 0600, written whole under another name, then linked into place, so two processes making
it at once end up with the same key). A key file that is a link, not a regular file, not the
user's own, readable by others, or of another size is never used: nothing is sealed, and
nothing sealed is trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
from collections.abc import Sequence
from functools import lru_cache

from ..project.user_dirs import config_folder

KEY_NAME = "seal.key"
KEY_BYTES = 32


def _read_key(path: str) -> bytes | None:
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(descriptor)
        private = info.st_uid == os.getuid() and not info.st_mode & 0o077
        if not (stat.S_ISREG(info.st_mode) and private and info.st_size == KEY_BYTES):
            return None
        data = os.read(descriptor, KEY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    return data if len(data) == KEY_BYTES else None


def _make_key(path: str) -> None:
    """Write a new key under a random name, then link it into place: the link fails if
    another process got there first, and the key read afterwards is theirs."""
    import secrets  # here: a start that finds its key never loads `random` for it

    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    draft = os.path.join(folder, f".{KEY_NAME}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(draft, flags, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(secrets.token_bytes(KEY_BYTES))
            out.flush()
            os.fsync(out.fileno())  # whole on disk before it has its name
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(draft, path)
    finally:
        os.unlink(draft)


@lru_cache(maxsize=4)
def _key(path: str) -> bytes | None:
    key = _read_key(path)
    if key is None and not os.path.lexists(path):
        try:
            _make_key(path)
        except OSError:
            return None
        key = _read_key(path)
    return key


def key_path() -> str:
    """Where this user's seal key is (made on first use)."""
    return os.path.join(config_folder(), KEY_NAME)


def has_key() -> bool:
    """True when this user's key is there and usable (none is made)."""
    return _read_key(key_path()) is not None


def seal(label: bytes, parts: Sequence[bytes], *, make_key: bool = True) -> str | None:
    """The seal of ``parts`` stored under ``label`` (the entry's key: an entry cannot be moved
    to another key), in hex; None when there is no usable key (nothing is then stored).

    ``make_key``: make the user's key if there is none yet; without it, data that is only
    worth keeping (the classes' compiled code) is not sealed, and no key appears in the
    config folder for it."""
    path = key_path()
    key = _key(path) if make_key else _read_key(path)
    if key is None:
        return None
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(len(label).to_bytes(8, "big") + label)
    for part in parts:
        mac.update(len(part).to_bytes(8, "big"))
        mac.update(part)
    return mac.hexdigest()


def is_sealed(found: object, label: bytes, parts: Sequence[bytes]) -> bool:
    """True when ``found`` is the seal of ``parts`` under ``label`` (compared in constant time)."""
    if not (isinstance(found, str) and found.isascii()):  # compare_digest takes ASCII text only
        return False
    expected = seal(label, parts, make_key=False)  # without a key nothing was sealed
    return expected is not None and hmac.compare_digest(found, expected)
