"""The one way promptdeck writes a whole file of its own: whole or not at all.

:func:`write_whole` writes the new bytes to a fresh temporary file beside the target, created
exclusively and never through a symlink, then renames it over the target. A crash at any moment
leaves the old file or the new one, whole; a rename replaces a symlink planted at the target
instead of writing where it points; a failed write removes its temporary file.

A project file read before it is rewritten (a status write-back) goes through
:mod:`promptdeck.core.project.rewrites`, which also checks that the file is still the one read.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC


def temporary_name(path: Path) -> Path:
    """A fresh name beside ``path`` for its next version: hidden, with this process's id and a
    random part, so two writers (or a leftover of a killed one) never share it."""
    return path.with_name(f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}.tmp")


def write_whole(path: Path, data: bytes | str, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8), whole or not at all.

    Args:
        path: the file to write; its folder must exist.
        data: the new content.
        mode: the new file's permissions (before the umask).

    Raises:
        OSError: the file could not be written; it is as it was, and the error names ``path``.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temporary = temporary_name(path)
    try:
        descriptor = os.open(temporary, _FLAGS, mode)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        if exc.filename is None:  # a failed write names no file: name it for the one line
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
