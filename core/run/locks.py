"""One run per story at a time: an advisory lock on ``.promptdeck/locks/<story>.lock``.

``fcntl.flock`` on an open file: the kernel releases it when the holder's file is closed or
its process ends in any way (``kill -9`` included), so a crashed promptdeck never leaves a
story locked. The descriptor is close-on-exec, so an agent (or an orphan of one) never holds
it. The file keeps the holder's pid, to name it in the refusal; a release empties it, so a pid
found by the next taker is that of a process that ended without releasing (``kill -9``, a
power cut): the lock is taken over with one line that says so (:attr:`StoryLock.taken_over`),
never silently.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from ..errors import StoryLocked
from ..project.state_folder import open_state_file, state_dir
from ..project.workspace import ensure_inside
from ..stories.keys import normalize_key

LOCKS_RELPATH = ".promptdeck/locks"
_held = threading.local()


def lock_path(root: Path, story_id: str) -> Path:
    """The lock file of a story (key forms ``1.4``/``1-4``/``1_4`` share one)."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in normalize_key(story_id))
    return root / LOCKS_RELPATH / f"{name[:120] or 'story'}.lock"


class StoryLock:
    """A held story lock; :meth:`release` (or process exit) frees it."""

    def __init__(self, fd: int, path: Path, taken_over: str | None = None) -> None:
        self._fd = fd
        self.path = path
        self.taken_over = taken_over
        """The one line that says this lock was left by a process that is gone, or None."""

    def release(self) -> None:
        """Free the lock (idempotent); the pid is cleared first, so the next taker knows the
        lock was released and not left behind."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


def acquire(root: Path, story_id: str) -> StoryLock:
    """Take the story's lock without waiting.

    A story this thread already holds with :func:`holding` (``run --auto``'s whole flow)
    gives a lock that releases nothing: the flow's phases run under the flow's lock.

    Raises:
        StoryLocked: another promptdeck run holds it (exit 7).
        OSError: the lock file cannot be made (a read-only project …).
    """
    path = lock_path(root, story_id)
    if str(path) in getattr(_held, "paths", ()):
        return StoryLock(-1, path)
    # Before any mkdir: a symlinked .promptdeck never leads out of the project, and a link
    # inside it (`.promptdeck/locks -> ../src`) never puts lock files where a commit stages them.
    ensure_inside(root, path, "the lock file")
    state_dir(root, path.parent)
    fd = open_state_file(root, path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = ""
        with contextlib.suppress(OSError, ValueError):
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        who = f" (pid {holder})" if holder.isdigit() else ""
        raise StoryLocked(
            f"story {story_id} is being run by another promptdeck{who}: one run per story at "
            "a time; wait for it to end (or cancel it)"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    left = ""
    with contextlib.suppress(OSError, ValueError):
        left = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    taken_over = None
    if left.isdigit() and int(left) != os.getpid():
        taken_over = (
            f"took over the lock of story {story_id} left by pid {left}, which ended "
            "without releasing it"
        )
    return StoryLock(fd, path, taken_over)


@contextlib.contextmanager
def holding(root: Path, story_id: str) -> Iterator[StoryLock]:
    """Hold the story's lock for a whole flow (``run --auto``): no other run slips in between
    its phases; the phases this thread starts meanwhile run under it.

    Raises:
        StoryLocked: another promptdeck run holds it (exit 7).
    """
    lock = acquire(root, story_id)
    paths: set[str] = getattr(_held, "paths", set())
    _held.paths = paths
    paths.add(str(lock.path))
    try:
        yield lock
    finally:
        paths.discard(str(lock.path))
        lock.release()
