"""The one guarded way promptdeck rewrites a file of the project (a status write-back).

The file was cloned from anywhere and an agent has just run in the project, so between the
read and the write its name may have become a symlink to a file of the user's, its folder a
symlink out of the project, or its content may have changed. :func:`read_for_rewrite` reads a
file through the guarded reader and notes what it read (:class:`FileIdentity`: device, inode,
size, modification time and SHA-256); :func:`rewrite_file` then replaces it only when

1. the final component is not a symlink and the folder's real path lies inside the project;
2. the file, opened without following links, is still the one that was read;
3. the new bytes go to a temporary file created exclusively in the same folder (through a
   descriptor of that folder, so a folder swapped afterwards cannot redirect it), are
   ``fsync``-ed, take the original's mode, and are renamed over the name — a rename replaces
   a link planted in the meantime instead of writing where it points, and a ``kill -9`` at
   any moment leaves either the old file or the new one, whole.

Anything else is a :class:`RewriteRefused` naming the file and the reason; nothing is written.

A ``kill -9`` between the temporary file's creation and its rename leaves the temporary file
behind (``.NAME.PID-XXXXXXXX.promptdeck-tmp``: no story source or status reader takes it for
its own). The next rewrite in that folder sweeps it (:func:`_sweep_leftovers`): only a regular
file of this user, named exactly so for the same file, older than this process, whose
process is gone — never a user's file, never a rewrite still under way in another process.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat as stat_module
import time
from pathlib import Path

from ..lean_dataclass import dataclass
from ..processes import pid_alive
from .textfiles import DEFAULT_READ_LIMIT, TextProblem, read_file_bytes

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


@dataclass(frozen=True)
class FileIdentity:
    """What a file was when it was read: enough to tell it from any file put in its place.

    Attributes:
        device: ``st_dev``.
        inode: ``st_ino``.
        size: ``st_size``.
        mtime_ns: ``st_mtime_ns``.
        sha256: the SHA-256 of the bytes read.
    """

    device: int
    inode: int
    size: int
    mtime_ns: int
    sha256: str

    def matches(self, info: os.stat_result) -> bool:
        """True when ``info`` (a ``stat``) describes the same file, unchanged in size and time."""
        return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns) == (
            self.device,
            self.inode,
            self.size,
            self.mtime_ns,
        )


@dataclass(frozen=True)
class ReadForRewrite:
    """A file's bytes and what it was when they were read."""

    data: bytes
    identity: FileIdentity


class RewriteRefused(Exception):
    """A project file that promptdeck will not (or could not) rewrite.

    Attributes:
        path: the file, as shown (project-relative where the caller gave one).
        reason: why, in a few words.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}; not written")
        self.path = path
        self.reason = reason


def _inside(real: str, root: Path) -> bool:
    base = str(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def read_for_rewrite(
    path: Path, root: Path, *, limit: int = DEFAULT_READ_LIMIT
) -> ReadForRewrite | TextProblem:
    """Read a project file that is about to be rewritten, and note what was read.

    A symlink in the file's place is refused here already (``outside-project`` when it leads
    out, ``unreadable`` otherwise): a rewrite would replace the link, not the file it names,
    so reading through it would edit one file and write another.

    Args:
        path: the file.
        root: the resolved project root.
        limit: the most bytes the file may hold.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return TextProblem("missing")
    except (OSError, ValueError) as exc:
        return TextProblem("unreadable", str(exc))
    if stat_module.S_ISLNK(info.st_mode):
        target = os.path.realpath(path)
        if not _inside(target, root):
            return TextProblem("outside-project", "a symlink leading outside the project")
        return TextProblem("unreadable", "a symlink; promptdeck only rewrites a file itself")
    data = read_file_bytes(path, root, limit=limit)
    if isinstance(data, TextProblem):
        return data
    try:
        after = os.lstat(path)
    except OSError as exc:
        return TextProblem("unreadable", exc.strerror or type(exc).__name__)
    if (after.st_dev, after.st_ino) != (info.st_dev, info.st_ino) or len(data) != after.st_size:
        return TextProblem("unreadable", "changed while it was read")
    identity = FileIdentity(
        after.st_dev,
        after.st_ino,
        after.st_size,
        after.st_mtime_ns,
        hashlib.sha256(data).hexdigest(),
    )
    return ReadForRewrite(data, identity)


def _open_folder(folder: Path, root: Path, shown: str) -> int:
    """A descriptor of ``folder``, checked (on what the kernel opened) to lie inside ``root``."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise RewriteRefused(shown, f"its folder cannot be opened ({exc.strerror})") from None
    try:
        real = os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:
        real = os.path.realpath(folder)
    if not _inside(real, root):
        os.close(descriptor)
        raise RewriteRefused(shown, "its folder leads outside the project")
    return descriptor


def _same_file(name: str, folder: int, expected: FileIdentity, shown: str) -> os.stat_result:
    """The ``stat`` of ``name`` in ``folder`` when it is still the file that was read."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise RewriteRefused(shown, "it was removed since it was read") from None
    except OSError as exc:
        raise RewriteRefused(shown, exc.strerror or type(exc).__name__) from None
    if stat_module.S_ISLNK(info.st_mode):
        raise RewriteRefused(shown, "it is now a symlink")
    if not stat_module.S_ISREG(info.st_mode):
        raise RewriteRefused(shown, "it is no longer a regular file")
    if not expected.matches(info):
        raise RewriteRefused(shown, "it changed since it was read")
    return info


def _content_hash(name: str, folder: int, shown: str) -> str:
    try:
        descriptor = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=folder)
    except OSError as exc:
        raise RewriteRefused(shown, exc.strerror or type(exc).__name__) from None
    digest = hashlib.sha256()
    try:
        if not stat_module.S_ISREG(os.fstat(descriptor).st_mode):
            raise RewriteRefused(shown, "it is no longer a regular file")
        while chunk := os.read(descriptor, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(descriptor)
    return digest.hexdigest()


_STARTED = time.time()
"""When this process loaded the module: a leftover written later is not stale."""
_TEMPORARY_SUFFIX = ".promptdeck-tmp"
_MOST_SWEPT_ENTRIES = 10_000
"""The most folder entries looked at for leftovers (a folder of a million files is not read
whole at every write-back)."""


def _temporary_name(path: Path) -> str:
    """A fresh name beside ``path`` that no story source or status reader takes for its own;
    it carries this process's id, so a leftover can be told from a rewrite under way."""
    return f".{path.name}.{os.getpid()}-{os.urandom(4).hex()}{_TEMPORARY_SUFFIX}"


def _sweep_leftovers(name: str, folder: int) -> None:
    """Remove the temporary files an earlier rewrite of ``name`` in ``folder`` left behind
    when it was killed: promptdeck's own naming for that very file (with a process id, or the
    id-less naming of earlier versions), a regular file of this user, last written before this
    process started, by a process that is gone. Anything else is left alone."""
    own = re.compile(
        rf"\.{re.escape(name)}\.(?:(?P<pid>\d{{1,10}})-)?[0-9a-f]{{8}}{re.escape(_TEMPORARY_SUFFIX)}"
    )
    try:
        with os.scandir(folder) as entries:
            for seen, entry in enumerate(entries):
                if seen >= _MOST_SWEPT_ENTRIES:
                    return
                match = own.fullmatch(entry.name)
                if match is None:
                    continue
                pid = match.group("pid")
                if pid is not None and pid_alive(int(pid)):
                    continue
                info = os.stat(entry.name, dir_fd=folder, follow_symlinks=False)
                if (
                    stat_module.S_ISREG(info.st_mode)
                    and info.st_uid == os.getuid()
                    and info.st_mtime < _STARTED
                ):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.name, dir_fd=folder)
    except OSError:
        return  # a folder that cannot be listed keeps its leftovers; the rewrite goes on


def _create(name: str, folder: int, mode: int) -> int:
    """Create ``name`` in ``folder`` exclusively, never through a link: a descriptor for it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
    return os.open(name, flags, mode, dir_fd=folder)


def rewrite_file(
    path: Path, root: Path, data: bytes, expected: FileIdentity, *, shown: str | None = None
) -> None:
    """Replace the project file ``path`` with ``data``, whole or not at all.

    Args:
        path: the file (it must exist: this rewrites, it never creates).
        root: the resolved project root.
        data: the new bytes.
        expected: what :func:`read_for_rewrite` read; a file that is not that one any more
            (another inode, size, time or content) is refused.
        shown: the file's name in messages (default: ``path``).

    Raises:
        RewriteRefused: the file may not or could not be replaced; it is as it was.
    """
    label = shown or str(path)
    folder = _open_folder(path.parent, root, label)
    temporary = _temporary_name(path)
    created = False
    try:
        _sweep_leftovers(path.name, folder)
        info = _same_file(path.name, folder, expected, label)
        if _content_hash(path.name, folder, label) != expected.sha256:
            raise RewriteRefused(label, "its content changed since it was read")
        try:
            descriptor = _create(temporary, folder, 0o600)
        except OSError as exc:
            raise RewriteRefused(label, f"no temporary file beside it ({exc.strerror})") from None
        created = True
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(descriptor, view) :]
            os.fchmod(descriptor, stat_module.S_IMODE(info.st_mode))
            os.fsync(descriptor)
        except OSError as exc:
            raise RewriteRefused(label, f"cannot be written ({exc.strerror})") from None
        finally:
            os.close(descriptor)
        # Checked once more right before the rename: the window left is the rename itself,
        # and a rename never writes through a link that appears in it.
        _same_file(path.name, folder, expected, label)
        try:
            os.rename(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except OSError as exc:
            raise RewriteRefused(label, f"cannot be replaced ({exc.strerror})") from None
        created = False
        with contextlib.suppress(OSError):
            os.fsync(folder)  # the rename itself survives a crash
    finally:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
        os.close(folder)


def replace_record(path: Path, root: Path, data: bytes) -> None:
    """Write one of promptdeck's own small records kept in the project (a health count), whole:
    a temporary file created exclusively beside it, then a rename — which replaces a symlink
    planted at ``path`` instead of writing where it points — in a folder checked to lie inside
    ``root``.

    Raises:
        RewriteRefused: the folder leads outside the project.
        OSError: the file cannot be written.
    """
    folder = _open_folder(path.parent, root, str(path))
    temporary = _temporary_name(path)
    try:
        _sweep_leftovers(path.name, folder)
        descriptor = _create(temporary, folder, 0o644)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.rename(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=folder)
            raise
    finally:
        os.close(folder)
