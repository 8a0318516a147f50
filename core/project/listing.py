"""One listing of a folder per command, by name only.

Story discovery (``sources/bmad.py``) and the injection (``injection.py``) both look through
the artifacts folder, which can hold tens of thousands of files. Both first narrow the
folder's *names* (a story file's name holds a story key; an injected file's name holds the
story's key) and only then look at, sort and open the few files left, so the listing is of
names alone — no per-file object, no ``stat``.

Inside :func:`one_scan` — a one-shot command such as ``inspect`` or ``compose`` — a folder is
listed once and the listing shared, so discovery and the injection see the same files.
Outside it (the app, a run) every call lists afresh: there a listing must never outlive a
change to the folder.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

_state = threading.local()


def _shared() -> dict[str, tuple[int, list[str]]] | None:
    listings: dict[str, tuple[int, list[str]]] | None = getattr(_state, "listings", None)
    return listings


@contextmanager
def one_scan() -> Iterator[None]:
    """Share folder listings among everything run inside (on this thread)."""
    outer = _shared()
    if outer is None:
        _state.listings = {}
    try:
        yield
    finally:
        if outer is None:
            _state.listings = None


def folder_names(folder: str | os.PathLike[str]) -> list[str] | None:
    """The names directly in ``folder`` (any order), or None when it cannot be listed.

    Inside :func:`one_scan` the folder is listed once (and again should its mtime change).
    """
    key = os.fspath(folder)
    shared = _shared()
    if shared is None:
        try:
            return os.listdir(key)
        except OSError:
            return None
    try:
        mtime_ns = os.stat(key).st_mtime_ns
        cached = shared.get(key)
        if cached is not None and cached[0] == mtime_ns:
            return cached[1]
        names = os.listdir(key)
    except OSError:
        return None
    shared[key] = (mtime_ns, names)
    return names


class Entry:
    """A named file of a listed folder, with the part of :class:`os.DirEntry`'s interface
    the scanners use (the checks are made when asked, for the few names kept)."""

    __slots__ = ("name", "path")

    def __init__(self, folder: str, name: str) -> None:
        self.name = name
        self.path = os.path.join(folder, name)

    def is_file(self) -> bool:
        """True for a regular file, links followed."""
        return os.path.isfile(self.path)

    def is_symlink(self) -> bool:
        """True for a symbolic link."""
        return os.path.islink(self.path)


def sorted_entries(folder: str | os.PathLike[str], names: Iterable[str]) -> list[Entry]:
    """``names`` of ``folder`` as entries, sorted case-insensitively (then exactly)."""
    base = os.fspath(folder)
    # Two stable sorts with C-level keys: the order of the key (name.lower(), name), without a
    # tuple per name.
    return [Entry(base, name) for name in sorted(sorted(names), key=str.lower)]
