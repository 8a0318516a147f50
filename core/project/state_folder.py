"""promptdeck's own folder in a project, ``.promptdeck/``: written only through real folders.

A cloned repository can hold ``.promptdeck/.gitignore`` as a symlink to ``../.git/config`` or
``.promptdeck/runs`` as a symlink to ``../docs/records``. Both lead inside the project, so the
rule "never write outside it" lets them through: an append to the ignore file would corrupt
git's config, and run records (the agent's raw output) would land where a phase's commit
stages them. So every folder promptdeck creates or writes into under ``.promptdeck/``, and
every file it writes or appends to there, is reached through :func:`state_dir` and
:func:`open_state_file`: each component from ``.promptdeck`` down is checked with ``lstat``
(a symlink, or a file where a folder belongs, is refused) and the file itself is opened with
``O_NOFOLLOW``. A refusal is one line naming the path (:class:`StateLinkRefused`, exit 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from ..errors import UsageError

STATE_DIRNAME = ".promptdeck"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class StateLinkRefused(UsageError):
    """A path promptdeck would write under ``.promptdeck/`` is a symlink (or a file where a
    folder belongs): nothing is written (exit 2)."""


def _relative(root: Path, path: Path) -> tuple[str, ...]:
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = ()
    if not parts or parts[0] != STATE_DIRNAME or ".." in parts:
        raise ValueError(f"{path} is not under {root / STATE_DIRNAME}")
    return parts


def _refuse(root: Path, path: Path, what: str) -> StateLinkRefused:
    shown = path.relative_to(root).as_posix()
    return StateLinkRefused(
        f"{shown} is {what}; promptdeck writes its own files under {STATE_DIRNAME}/ only in "
        "real folders and files, never through a link (remove it)"
    )


def _check_folder(root: Path, folder: Path) -> bool:
    """Whether ``folder`` exists (as a real folder); refused when it is anything else."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(root, folder, "a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise _refuse(root, folder, "not a folder")
    return True


def check_state_path(root: Path, path: Path) -> None:
    """Refuse ``path`` (under ``<root>/.promptdeck``) when a folder on the way to it, or
    ``path`` itself, is a symlink, or a folder on the way is not a folder.

    Raises:
        StateLinkRefused: the first component that is not a real folder (exit 2).
    """
    parts = _relative(root, path)
    current = root
    for index, part in enumerate(parts):
        current = current / part
        if index == len(parts) - 1:
            with contextlib.suppress(FileNotFoundError):  # not there yet: made as a real file
                if stat.S_ISLNK(os.lstat(current).st_mode):
                    raise _refuse(root, current, "a symbolic link")
            return
        if not _check_folder(root, current):
            return  # the rest does not exist yet: it will be made as real folders


def state_dir(root: Path, folder: Path) -> Path:
    """Make ``folder`` (under ``<root>/.promptdeck``) and the folders on the way, each a real
    folder; ``folder``.

    Raises:
        StateLinkRefused: one of them is a symlink or not a folder (exit 2).
    """
    parts = _relative(root, folder)
    os.makedirs(root, exist_ok=True)  # the project itself (a caller may name a new one)
    current = root
    for part in parts:
        current = current / part
        if not _check_folder(root, current):
            with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
                os.mkdir(current)
            _check_folder(root, current)
    return folder


def open_state_file(root: Path, path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of ``path`` (under ``<root>/.promptdeck``) with ``O_NOFOLLOW``, after its
    folders are checked; the descriptor.

    Raises:
        StateLinkRefused: ``path`` or a folder on the way is a symlink (exit 2).
        OSError: any other failure to open it.
    """
    check_state_path(root, path)
    try:
        return os.open(path, flags | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(root, path, "a symbolic link") from None
        raise
