"""The encoder built in a second process while this one gets ready.

Building an encoder — parsing o200k's 200,000 ranks and tiktoken's own set-up — is about
400 ms of work that holds the GIL throughout, so a thread cannot overlap it with anything. A
command that will likely count (``inspect`` or ``compose`` whose answer is not remembered)
calls :func:`start_encoder_process` first thing: a forked child builds the encoder while the
parent imports the engine and composes, on the machine's second core. When the counter needs
its encoder (:meth:`TokenCounter.warm`) it takes the child instead of building one: each text
not found in the count cache is written to the child, which answers with its count. A command
whose counts were all remembered never asks, and the child is stopped at exit.

Counts are those of the same :func:`~.encoding.build_encoding` the parent would build, of the
same text (sent as UTF-8, lone surrogates kept). Whenever the child is not there to answer —
it failed to build, died, or was never started — the counter builds its own encoder as before:
the process only ever saves time, it never changes a count.

The child is started only where forking is safe and worth it: a POSIX system, at least two
CPUs this process may run on, no other thread alive yet, and ``PROMPTDECK_ENCODER_PROCESS``
not set to ``off``; for a command, only when no count is remembered on this machine (no count
cache yet, or it is turned off: a first run, where every count needs the encoder). The app
starts one at launch in any case: it counts over a whole session, and an encoder built in its
own process would stop the screen for the length of the build. The app's child is *held*
(unless nothing is counted yet: a first run needs it at once): it waits to build until the
first frame is painted (:func:`release_encoder_processes`) or a count asks for it, whichever
comes first. On two cores, a build beside the app's start, the opening
helper and the screen sharing them, delayed the first frame by 150–300 ms. The child keeps no
file of the parent open (a reader of the parent's output must not wait on the child), ends
with the parent's Ctrl-C, and leaves with ``os._exit``: no parent buffer is flushed twice, no
exit handler run.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from typing import Final

from ..forked import Forked, fork_child, read_exact, receive_message, send_message, write_all
from ..switches import turned_off

ENV_VAR: Final = "PROMPTDECK_ENCODER_PROCESS"
_READY: Final = b"R"
_FAILED: Final = b"F"
_WORD: Final = 8
"""Bytes of a count on the reply pipe (unsigned, big-endian)."""

_started: dict[str, EncoderProcess] = {}
_lock = threading.Lock()


class EncoderProcess:
    """A forked child holding one built encoder; it counts the texts it is sent.

    Thread-safe: one request at a time goes through the pipes.
    """

    def __init__(self, encoding: str, child: Forked, *, held: bool = False) -> None:
        self.encoding = encoding
        self._child = child
        self._lock = threading.Lock()
        self._ready: bool | None = None
        self._held = held

    @property
    def pid(self) -> int | None:
        """The child's process id (None once stopped)."""
        return self._child.pid

    def release(self) -> None:
        """Let a held child start its build (once; a child that was not held builds anyway).

        Never waits: the screen's thread calls it, and the lock may be held for the length of
        a build by a thread waiting in :meth:`ready` — which has released the child itself.
        Whoever else holds it is counting (so the child was released) or stopping it.
        """
        if self._lock.acquire(blocking=False):
            try:
                self._release()
            finally:
                self._lock.release()

    def ready(self) -> bool:
        """Wait until the child has built its encoder (releasing it first, if it was held);
        False if it failed or is gone."""
        with self._lock:
            self._release()
            if self._ready is None:
                try:
                    self._ready = read_exact(self._child.from_child, 1) == _READY
                except OSError:
                    self._ready = False
                if not self._ready:
                    self._child.stop()
            return self._ready

    def _release(self) -> None:
        held, self._held = self._held, False
        requests = self._child.to_child
        if not held or self._ready is not None or requests is None:
            return
        try:
            send_message(requests, b"")  # any message will do: the child only waits for one
        except OSError:
            self._stop()

    def count(self, text: str) -> int:
        """Tokens of ``text`` as ``encode_ordinary`` counts them, from the child.

        Raises:
            OSError: the child is gone (the caller then builds its own encoder).
        """
        data = text.encode("utf-8", "surrogatepass")
        with self._lock:
            requests = self._child.to_child
            if not self._ready or self._child.pid is None or requests is None:
                raise OSError("the encoder process is not running")
            try:
                send_message(requests, data)
                reply = read_exact(self._child.from_child, _WORD)
            except OSError:
                self._stop()
                raise
            if len(reply) != _WORD:
                self._stop()
                raise OSError("the encoder process ended without an answer")
            return int.from_bytes(reply, "big")

    def close(self, *, reap: bool = True) -> None:
        """Stop the child (at once: a build still under way is not waited for); ``reap``
        as :meth:`Forked.stop` takes it (at exit, not waited for)."""
        with self._lock:
            self._stop(reap=reap)

    def _stop(self, *, reap: bool = True) -> None:
        self._ready = False
        self._child.stop(reap=reap)


def start_encoder_process(
    encoding: str = "o200k_base", *, first_run_only: bool = True, held: bool = False
) -> bool:
    """Start building ``encoding`` (by default, a project's default encoding) in a child
    process, if it is safe and worth it here.

    ``first_run_only``: only when no count is remembered on this machine (a command, which
    then needs the encoder for every count). The app passes False: over a session it will
    count something new sooner or later, and a build in its own process would hold the
    screen still for as long (the build never lets go of the interpreter lock).

    ``held``: the child is forked now but builds only once released
    (:func:`release_encoder_processes`) or asked for a count — the app, whose first frame
    needs both cores and, with its counts remembered, no encoder. Not on a first run (no
    count remembered on this machine): then the first frame's counts need the encoder, and
    it builds at once.

    Returns True when a child was started (or already was). Never raises: a fork that fails
    only means the counter builds its encoder itself, as it would have.
    """
    if not _worth_it(first_run_only) or _built_here(encoding):
        return False
    held = held and not _nothing_counted_yet()
    with _lock:
        if encoding in _started:
            return True
        try:
            process = _fork(encoding, held)
        except OSError:
            return False
        _started[encoding] = process
    atexit.register(process.close, reap=False)
    return True


def _forget_started() -> None:
    """In a child forked from this process: the encoder processes are the parent's, never
    its own (it must not write to their pipes, nor stop them); and the registry's lock is a
    new one (a thread of the parent may have held it at the fork)."""
    global _lock
    _started.clear()
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_started)


def take_encoder_process(encoding: str) -> EncoderProcess | None:
    """The started child for ``encoding`` once its encoder is built, or None (none was
    started, or it failed: build the encoder here)."""
    with _lock:
        process = _started.get(encoding)
    if process is None or not process.ready():
        return None
    return process


def release_encoder_processes() -> None:
    """Let every held child start its build now (the app, once its first frame is painted)."""
    with _lock:
        processes = list(_started.values())
    for process in processes:
        process.release()


def stop_encoder_processes() -> None:
    """Stop every started child (tests; exit does it too)."""
    with _lock:
        processes = list(_started.values())
        _started.clear()
    for process in processes:
        process.close()


def _nothing_counted_yet() -> bool:
    """Whether no count is remembered on this machine (no count cache yet, or it is off): then
    every count needs the encoder. With remembered counts most commands need none, and a child
    would only spend a second core's time to be stopped unused."""
    from .cache import default_path

    path = default_path()
    return path is None or not os.path.exists(path)


def _built_here(encoding: str) -> bool:
    """Whether this process's counter already holds the encoder (a long-lived process that
    ran a command before)."""
    counter = sys.modules.get(f"{__package__}.counter")
    known = getattr(counter, "_counters", {}).get(encoding)
    return known is not None and known.ready


def _worth_it(first_run_only: bool = True) -> bool:
    if turned_off(ENV_VAR):
        return False
    if first_run_only and not _nothing_counted_yet():
        return False
    if not hasattr(os, "fork") or threading.active_count() != 1:
        # Forking a process with other threads could leave a lock held forever in the child.
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2


def _fork(encoding: str, held: bool = False) -> EncoderProcess:
    def serve(requests: int | None, replies: int) -> None:
        assert requests is not None
        _serve(encoding, requests, replies, held)

    child = fork_child(serve, requests=True, close_inherited=True)
    return EncoderProcess(encoding, child, held=held)


def _serve(encoding: str, requests: int, replies: int, held: bool) -> None:
    """The child's work: (once released, if held) build, say so, count until the parent
    closes the pipe."""
    from .encoding import build_encoding

    if held and receive_message(requests) is None:
        return  # the parent ended (or stopped it) before it was wanted
    # The app's launch turns the collector off until its first frame (promptdeck.tui.startup);
    # this process serves the whole session.
    gc.enable()
    try:
        encoder = build_encoding(encoding)
    except Exception:  # the parent builds its own and reports why, as without a child
        write_all(replies, _FAILED)
        return
    write_all(replies, _READY)
    while True:
        data = receive_message(requests)
        if data is None:
            return
        text = data.decode("utf-8", "surrogatepass")
        write_all(replies, len(encoder.encode_ordinary(text)).to_bytes(_WORD, "big"))
