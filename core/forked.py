"""A child process forked to work beside this one, and the pipes between them.

promptdeck forks where a first run would otherwise do two long things one after the other in
one interpreter (whose lock lets only one of them run at a time): the encoder build beside a
command's imports (:mod:`promptdeck.core.tokens.encoder_process`), the app's first catalog
and prompt beside its screen. This module holds what those share: forking with the pipes in
place, the child's whole life (it only ever leaves through ``os._exit``: no parent buffer is
flushed twice, no exit handler run, whatever happens), and whole messages through the pipes.

Fork only before any other thread is started: the child is a copy of this process, and a lock
another thread held at the fork would stay held in the child forever.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable

from .lean_dataclass import dataclass


@dataclass
class Forked:
    """A forked child and this process's ends of the pipes to it.

    Attributes:
        pid: the child's process id (None once stopped).
        to_child: the write end of the pipe the child reads (None when it reads nothing).
        from_child: the read end of the pipe the child answers through.
    """

    pid: int | None
    to_child: int | None
    from_child: int

    def stop(self, *, reap: bool = True) -> None:
        """Close the pipes and kill the child (work under way is not waited for).

        ``reap=False`` does not wait while the system frees the child's memory (some 15 ms
        after an encoder build): for a process about to exit, which leaves it to the system.
        """
        pid, self.pid = self.pid, None
        if pid is None:
            return
        # Each step may find its part already gone (a child that ended, a closed pipe).
        for fd in (self.to_child, self.from_child):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        if reap:
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)


def fork_child(
    work: Callable[[int | None, int], None],
    *,
    requests: bool,
    close_inherited: bool,
    reply_room: int | None = None,
) -> Forked:
    """Fork a child that runs ``work(read_fd, write_fd)`` and then exits.

    ``read_fd`` is the child's end of a pipe this process writes to (None without
    ``requests``); ``write_fd`` the end it answers through. The child's standard streams go
    to /dev/null and Ctrl-C ends it as it ends this process; with ``close_inherited`` it also
    closes every other file it inherited (so that, say, a reader of this process's output
    never waits on the child).

    ``reply_room``: the bytes the answer pipe holds before the child's writes wait for this
    process to read (Linux; elsewhere, or past the system's limit, the usual 64 KiB). A child
    that answers in parts, and works on between them, needs room for the first part: a part
    that does not fit stops it until this process reads.

    Raises:
        OSError: no pipe or no fork here (the caller then does the work itself).
    """
    pipes: list[int] = []
    try:
        if requests:
            pipes.extend(os.pipe())
        pipes.extend(os.pipe())
        if reply_room is not None:
            _widen(pipes[-1], reply_room)
        pid = os.fork()
    except (OSError, AttributeError) as exc:
        for fd in pipes:
            os.close(fd)
        raise OSError(f"cannot fork here ({exc})") from exc
    replies_read, replies_write = pipes[-2:]
    requests_read, requests_write = (pipes[0], pipes[1]) if requests else (None, None)
    if pid == 0:  # the child: never returns
        _child(work, requests_read, replies_write, (requests_write, replies_read), close_inherited)
    os.close(replies_write)
    if requests_read is not None:
        os.close(requests_read)
    return Forked(pid, requests_write, replies_read)


def _child(
    work: Callable[[int | None, int], None],
    reads: int | None,
    writes: int,
    parents: tuple[int | None, int],
    close_inherited: bool,
) -> None:
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        for fd in parents:
            if fd is not None:
                os.close(fd)
        reads, writes = _detach(reads, writes, close_inherited)
        work(reads, writes)
        code = 0
    finally:
        # Whatever happens, the child only ever exits: an exception on its way up ends here
        # too, before anything could print it or run the parent's exit handlers.
        os._exit(code)


def _detach(reads: int | None, writes: int, close_inherited: bool) -> tuple[int | None, int]:
    """Point the standard streams at /dev/null, the pipe ends moved above them first (a parent
    started with those closed gets pipes numbered 0-2); with ``close_inherited``, close every
    other inherited file. Returns the pipe ends' new numbers."""
    import fcntl

    def above(fd: int) -> int:
        return fcntl.fcntl(fd, fcntl.F_DUPFD, 3)

    kept = (None if reads is None else above(reads), above(writes))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd != null:
            os.dup2(null, fd)
    if close_inherited:
        low = 3
        for keep in sorted(k for k in kept if k is not None):
            os.closerange(low, keep)
            low = keep + 1
        os.closerange(low, _fd_limit())  # the originals and /dev/null's own number too
    else:
        for old in (reads, writes, null):
            if old is not None and old > 2 and old not in kept:
                os.close(old)
    return kept


def _widen(fd: int, room: int) -> None:
    import fcntl

    setting = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if setting is not None:
        with contextlib.suppress(OSError):  # past /proc/sys/fs/pipe-max-size: keep the default
            fcntl.fcntl(fd, setting, room)


def _fd_limit() -> int:
    try:
        return int(os.sysconf("SC_OPEN_MAX"))
    except (AttributeError, ValueError, OSError):
        return 1024


def read_exact(fd: int, size: int) -> bytes:
    """``size`` bytes from ``fd``, or fewer when it reached its end."""
    chunks: list[bytes] = []
    left = size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    """All of ``data`` to ``fd``.

    Raises:
        OSError: the other end is gone (``BrokenPipeError``).
    """
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


_LENGTH = 8
"""Bytes of a message's length before it (unsigned, big-endian)."""


def send_message(fd: int, data: bytes) -> None:
    """``data`` to ``fd`` as one message: its length, then itself.

    Raises:
        OSError: the other end is gone.
    """
    write_all(fd, len(data).to_bytes(_LENGTH, "big") + data)


def receive_message(fd: int) -> bytes | None:
    """The next whole message from ``fd``; None when the other end closed (or died) before
    a whole one came."""
    head = read_exact(fd, _LENGTH)
    if len(head) != _LENGTH:
        return None
    size = int.from_bytes(head, "big")
    body = read_exact(fd, size)
    return body if len(body) == size else None
