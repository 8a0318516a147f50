"""The check that holds a phase to its write scope: :class:`ScopeGuard` records the protected
files before the agent starts and, once it has ended (before the status write-back and before
anything is staged), puts back every one that changed. The attempted change is kept as a
unified diff in the run folder (``scope-violations.diff``) and the run ends
``scope-violated`` (exit 13): never a success, never committed.

Nothing is read or written outside the project: every file is looked at with ``os.lstat``,
read through the guarded reader, and a symlink, FIFO or device is recorded as what it is,
never read through; a restore goes through the guarded rewrite's temporary file and rename,
which replaces a link rather than writing where it points.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat as stat_module
from pathlib import Path
from typing import NamedTuple

from ..lean_dataclass import dataclass
from ..project.rewrites import RewriteRefused, replace_record
from ..project.textfiles import TextProblem, printable_name, read_file_bytes
from .frozen import frozen_view, put_back_blocks
from .scope import WriteScope

MEMORY_FILE_LIMIT = 1024 * 1024
"""A protected file up to this size is kept whole in memory (and can be put back)."""
HASH_FILE_LIMIT = 64 * 1024 * 1024
"""A larger protected file is fingerprinted by SHA-256 and size up to this size; beyond it by
its ``lstat`` stamp alone (a change is found, never put back)."""
MOST_KEPT_BYTES = 128 * 1024 * 1024
"""The most bytes kept in memory for one run; past it files are fingerprinted only."""
DIFF_FILE_LIMIT = 256 * 1024
"""The most characters of one file's diff kept in ``scope-violations.diff``."""
VIOLATIONS_FILE = "scope-violations.diff"


def _kind(mode: int) -> str:
    if stat_module.S_ISREG(mode):
        return "file"
    if stat_module.S_ISLNK(mode):
        return "symlink"
    if stat_module.S_ISDIR(mode):
        return "folder"
    if stat_module.S_ISFIFO(mode):
        return "FIFO"
    if stat_module.S_ISSOCK(mode):
        return "socket"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "device"
    return "special file"


class _State(NamedTuple):
    """One protected path as it was: what it is, and enough to tell a change and undo it (a
    tuple: thousands are made per run, and a frozen dataclass costs more than the read)."""

    kind: str
    stamp: tuple[int, ...] = ()
    data: bytes | None = None
    sha256: str | None = None
    size: int = 0
    target: str | None = None
    mode: int = 0o644
    problem: str | None = None

    def describe(self) -> str:
        if self.kind == "missing":
            return "absent"
        if self.kind == "symlink":
            return f"a symlink to {printable_name(self.target or '?')}"
        if self.kind == "file":
            return f"a file of {self.size:,} bytes"
        return f"a {self.kind}"


_MISSING = _State("missing")


_S_ISREG = stat_module.S_ISREG
_S_IMODE = stat_module.S_IMODE


class _Reader:
    """Guarded reads of protected files, each folder's real path checked once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # Paths as strings: thousands of files are looked at, and a Path costs more than the
        # lstat itself.
        self.base = str(root)
        self.real_root = root.resolve()
        self.folders: dict[str, bool] = {}
        self.kept_bytes = 0

    def folder_inside(self, rel: str) -> bool:
        parent = rel.rpartition("/")[0]
        known = self.folders.get(parent)
        if known is None:
            real = os.path.realpath(f"{self.base}/{parent}") if parent else str(self.real_root)
            base = str(self.real_root)
            known = real == base or real.startswith(base.rstrip(os.sep) + os.sep)
            self.folders[parent] = known
        return known

    def state(self, rel: str, keep: bool = True) -> _State:
        """What ``rel`` is now: its ``lstat``, and for a regular file its bytes (kept when
        ``keep`` and small enough, else their SHA-256), read through the guarded reader."""
        path = f"{self.base}/{rel}"
        inside = self.folders.get(rel.rpartition("/")[0])
        if inside is None:
            inside = self.folder_inside(rel)
        if not inside:
            return _State("outside", problem="its folder leads outside the project; not read")
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return _MISSING
        except (OSError, ValueError) as exc:
            return _State("unreadable", problem=str(exc))
        mode = info.st_mode
        # ctime is set by the kernel on every write, rename or chmod and cannot be set back:
        # an unchanged stamp is an unchanged file.
        stamp = (info.st_dev, info.st_ino, mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if not _S_ISREG(mode):
            kind = _kind(mode)
            if kind != "symlink":
                return _State(kind, stamp, None, None, info.st_size, None, _S_IMODE(mode))
            try:
                target = os.readlink(path)  # the link's own text: nothing is read through it
            except OSError:
                target = None
            return _State(kind, stamp, None, None, 0, target, _S_IMODE(mode))
        size = info.st_size
        if size > HASH_FILE_LIMIT:
            return _State("file", stamp, None, None, size, None, _S_IMODE(mode))
        # Read as many bytes as lstat said (and one more, to see a file that grew): a read
        # sized to the file, not to the limit, is most of the cost on a plan of thousands.
        data = read_file_bytes(path, self.real_root, limit=HASH_FILE_LIMIT, listed=True, head=size)
        if not isinstance(data, TextProblem) and len(data) > size:
            data = read_file_bytes(path, self.real_root, limit=HASH_FILE_LIMIT, listed=True)
        if isinstance(data, TextProblem):
            return _State("unreadable", stamp, size=size, mode=_S_IMODE(mode), problem=str(data))
        length = len(data)
        if keep and length <= MEMORY_FILE_LIMIT and self.kept_bytes + length <= MOST_KEPT_BYTES:
            self.kept_bytes += length
            return _State("file", stamp, data, None, length, None, _S_IMODE(mode))
        digest = hashlib.sha256(data).hexdigest()
        return _State("file", stamp, None, digest, length, None, _S_IMODE(mode))


@dataclass(frozen=True)
class ScopeViolation:
    """One protected file (or frozen block) the agent changed, and what became of it.

    Attributes:
        path: the root-relative file.
        change: what the agent did (``changed``, ``deleted``, ``added``, ``replaced by a
            symlink to …``, ``changed a frozen block``).
        restored: the file is as it was before the run.
        detail: how it was put back, or why it could not be.
    """

    path: str
    change: str
    restored: bool
    detail: str = ""

    def line(self) -> str:
        """``sprint-status.yaml: changed by the agent; restored``."""
        after = "restored" if self.restored else f"NOT restored ({self.detail})"
        return printable_name(f"{self.path}: {self.change} by the agent; {after}")


@dataclass(frozen=True)
class ScopeCheck:
    """What the check after the agent found.

    Attributes:
        violations: every protected file or frozen block that changed.
        diff: the attempted changes as one unified diff ("" when none).
        notes: what the check could not look at.
    """

    violations: tuple[ScopeViolation, ...] = ()
    diff: str = ""
    notes: tuple[str, ...] = ()

    @property
    def violated(self) -> bool:
        """True when the agent changed something outside its scope."""
        return bool(self.violations)

    def summary(self) -> str:
        """The run's one-line message."""
        shown = ", ".join(v.path for v in self.violations[:3])
        more = f" and {len(self.violations) - 3} more" if len(self.violations) > 3 else ""
        restored = all(v.restored for v in self.violations)
        return printable_name(
            f"scope violated: the agent changed {len(self.violations)} protected file(s) "
            f"({shown}{more}); "
            + ("restored" if restored else "not all could be restored")
            + f", its attempt kept in {VIOLATIONS_FILE}"
        )


class ScopeGuard:
    """The protected files as they were before the agent started, checked and put back after.

    Args:
        root: the workspace root.
        scope: the phase's write scope.
    """

    def __init__(self, root: Path, scope: WriteScope) -> None:
        self.root = root
        self.scope = scope
        self.notes: list[str] = []
        reader = _Reader(root)
        self.before: dict[str, _State] = {}
        for rel in scope.protected:
            state = reader.state(rel)
            self.before[rel] = state
            if state.problem is not None and state.kind == "outside":
                self.notes.append(printable_name(f"{rel}: {state.problem}"))
        self.frozen: dict[str, _State] = {}
        for rel in scope.frozen:
            state = reader.state(rel)
            self.frozen[rel] = state
            if state.data is not None and frozen_view(state.data) is None:
                self.notes.append(
                    printable_name(
                        f"{rel}: its <frozen-after-approval> markers are unbalanced; the whole "
                        "file is treated as frozen"
                    )
                )
        unkept = sum(
            1 for state in self.before.values() if state.kind == "file" and state.data is None
        )
        if unkept:
            self.notes.append(
                f"{unkept} protected file(s) over {MEMORY_FILE_LIMIT // 1024 // 1024} MiB (or past "
                f"the {MOST_KEPT_BYTES // 1024 // 1024} MiB kept in all) are fingerprinted: a "
                "change is found but cannot be put back"
            )

    def check(self) -> ScopeCheck:
        """Compare every protected file (and frozen block) with the record; put back each one
        that changed. Call once the agent has ended, before any status write or git step."""
        reader = _Reader(self.root)
        violations: list[ScopeViolation] = []
        diffs: list[str] = []
        for rel, before in self.before.items():
            if before.kind == "outside":
                continue
            now = self._now(reader, rel, before)
            if now is None:
                continue
            change = _change(before, now)
            if change is None:
                continue
            diffs.append(_diff(rel, before, now))
            violations.append(self._restore(rel, before, now, change))
        for rel, before in self.frozen.items():
            now = self._now(reader, rel, before)
            if now is None:
                continue
            if before.data is None:
                continue
            if now.data is not None:
                was, is_now = frozen_view(before.data), frozen_view(now.data)
                same = was == is_now if was is not None else before.data == now.data
                if same:
                    continue
                diffs.append(_diff(rel, before, now))
                # Only the blocks go back where they can be told apart: the phase's own
                # legitimate edits to its story file (its Dev Agent Record) are kept.
                spliced = put_back_blocks(before.data, now.data) if now.kind == "file" else None
                if spliced is not None:
                    violations.append(self._put_back_blocks(rel, before, spliced))
                    continue
                change = "changed a frozen block"
            else:
                change = _change(before, now) or "changed"
                diffs.append(_diff(rel, before, now))
            violations.append(self._restore(rel, before, now, change))
        return ScopeCheck(tuple(violations), "".join(diffs), tuple(self.notes))

    def _now(self, reader: _Reader, rel: str, before: _State) -> _State | None:
        """The path as it is now, or None when its stamp says it was not touched."""
        try:
            info = os.lstat(f"{reader.base}/{rel}")
        except FileNotFoundError:
            return None if before.kind == "missing" else _MISSING
        except (OSError, ValueError):
            info = None
        if (
            info is not None
            and before.stamp
            and (
                info.st_dev,
                info.st_ino,
                info.st_mode,
                info.st_size,
                info.st_mtime_ns,
                info.st_ctime_ns,
            )
            == before.stamp
        ):
            return None
        return reader.state(rel, keep=True)

    def _put_back_blocks(self, rel: str, before: _State, spliced: bytes) -> ScopeViolation:
        """Write ``spliced`` (the file as the agent left it, its frozen blocks as they were)
        through the guarded rewrite."""
        change = "changed a frozen block"
        try:
            replace_record(self.root / rel, self.root.resolve(), spliced)
        except (OSError, RewriteRefused) as exc:
            return ScopeViolation(rel, change, False, str(exc))
        with contextlib.suppress(OSError):
            os.chmod(self.root / rel, before.mode)
        return ScopeViolation(rel, change, True, "the blocks put back, the rest kept")

    def _restore(self, rel: str, before: _State, now: _State, change: str) -> ScopeViolation:
        path = self.root / rel
        real_root = self.root.resolve()
        try:
            if before.kind == "missing":
                _remove(path, now)
                return ScopeViolation(rel, change, True)
            if before.kind == "file" and before.data is not None:
                if now.kind == "folder":
                    return ScopeViolation(rel, change, False, "a folder is in its place now")
                _make_folders(self.root, rel)
                # A temporary file and a rename: a link or FIFO in the name's place is
                # replaced, never written through.
                replace_record(path, real_root, before.data)
                with contextlib.suppress(OSError):
                    if stat_module.S_ISREG(os.lstat(path).st_mode):
                        os.chmod(path, before.mode)
                return ScopeViolation(rel, change, True)
            if before.kind == "symlink" and before.target is not None:
                if now.kind == "folder":
                    return ScopeViolation(rel, change, False, "a folder is in its place now")
                _make_folders(self.root, rel)
                if now.kind != "missing":
                    os.unlink(path)
                os.symlink(before.target, path)
                return ScopeViolation(rel, change, True)
            if before.kind == "FIFO":
                if now.kind == "folder":
                    return ScopeViolation(rel, change, False, "a folder is in its place now")
                _make_folders(self.root, rel)
                if now.kind != "missing":
                    os.unlink(path)
                os.mkfifo(path, before.mode)
                return ScopeViolation(rel, change, True)
        except (OSError, RewriteRefused) as exc:
            return ScopeViolation(rel, change, False, str(exc))
        why = (
            "over 1 MiB, kept by fingerprint only"
            if before.kind == "file"
            else f"it was {before.describe()}"
        )
        return ScopeViolation(rel, change, False, why)


def _change(before: _State, now: _State) -> str | None:
    """What happened to a path between the two states, or None when nothing did."""
    if before.kind != now.kind:
        if now.kind == "missing":
            return "deleted"
        if before.kind == "missing":
            return "added"
        return f"replaced ({before.describe()}) by {now.describe()}"
    if now.kind == "file":
        if before.data is not None and now.data is not None:
            return None if before.data == now.data else "changed"
        if before.sha256 is not None:
            digest = now.sha256 or (
                hashlib.sha256(now.data).hexdigest() if now.data is not None else None
            )
            return None if digest == before.sha256 else "changed"
        return None if before.stamp == now.stamp else "changed"
    if now.kind == "symlink":
        return None if before.target == now.target else f"re-pointed to {now.describe()}"
    if now.kind == "missing":
        return None
    return None if before.stamp[:2] == now.stamp[:2] else f"replaced by another {now.kind}"


def _remove(path: Path, now: _State) -> None:
    """Remove what the agent added where nothing was (a folder is left, and said)."""
    if now.kind == "folder":
        raise OSError(f"a folder was added in its place; left as it is: {path.name}")
    os.unlink(path)  # never follows a link: the link itself goes


def _make_folders(root: Path, rel: str) -> None:
    """Create the missing folders of ``rel`` (the agent deleted them), refusing a link or a
    file on the way: nothing is created outside the project."""
    current = root
    for part in rel.split("/")[:-1]:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            continue
        if not stat_module.S_ISDIR(info.st_mode):
            raise OSError(f"{part} on the way to it is not a folder any more")


def _text(state: _State) -> list[str] | None:
    if state.kind == "missing":
        return []
    if state.kind == "file" and state.data is not None:
        return state.data.decode("utf-8", errors="replace").splitlines(keepends=True)
    return None


def _diff(rel: str, before: _State, now: _State) -> str:
    """The attempted change to ``rel`` as a unified diff (a line saying what it became when it
    is not text promptdeck kept)."""
    old, new = _text(before), _text(now)
    if old is None or new is None:
        return (
            f"--- a/{rel}\n+++ b/{rel}\n"
            f"# was {before.describe()}; the agent left {now.describe()}\n"
        )
    lines = difflib.unified_diff(
        old,
        new,
        fromfile="/dev/null" if before.kind == "missing" else f"a/{rel}",
        tofile="/dev/null" if now.kind == "missing" else f"b/{rel}",
    )
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    if len(text) > DIFF_FILE_LIMIT:
        text = text[:DIFF_FILE_LIMIT] + f"\n# … cut at {DIFF_FILE_LIMIT:,} characters\n"
    return text


__all__ = ["VIOLATIONS_FILE", "ScopeCheck", "ScopeGuard", "ScopeViolation"]
