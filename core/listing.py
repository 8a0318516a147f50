"""One listing of a folder per command.

Story discovery (``sources/bmad.py``) and the injection (``injection.py``) both walk the
artifacts folder, which can hold tens of thousands of files. Inside :func:`one_scan` — a
one-shot command such as ``inspect`` or ``compose`` — a folder is listed once and the listing
is shared, so both see the same files. Outside it (the app, a run), every call lists afresh:
there a listing must never outlive a change to the folder.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_state = threading.local()


def _shared() -> dict[str, tuple[int, list[os.DirEntry[str]]]] | None:
    listings: dict[str, tuple[int, list[os.DirEntry[str]]]] | None = getattr(
        _state, "listings", None
    )
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


def sorted_entries(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]] | None:
    """The entries directly in ``folder``, sorted by name case-insensitively (then exactly),
    or None when it cannot be listed.

    Inside :func:`one_scan` the listing is made once per folder (and made again should the
    folder's mtime change). The entries are :class:`os.DirEntry` objects: their type checks
    come from the listing itself, without a ``stat`` per file.
    """
    key = os.fspath(folder)
    shared = _shared()
    mtime_ns = -1
    if shared is not None:
        try:
            mtime_ns = os.stat(key).st_mtime_ns
        except OSError:
            return None
        cached = shared.get(key)
        if cached is not None and cached[0] == mtime_ns:
            return cached[1]
    try:
        with os.scandir(key) as scan:
            entries = sorted(scan, key=lambda entry: (entry.name.lower(), entry.name))
    except OSError:
        return None
    if shared is not None:
        shared[key] = (mtime_ns, entries)
    return entries
