"""The encoder built in a second process: the counts it gives are the encoder's own, and a
child that failed, died or was never started only means the counter builds its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from promptdeck.core.tokens import encoder_process
from promptdeck.core.tokens.cache import TokenCache
from promptdeck.core.tokens.counter import TokenCounter
from promptdeck.core.tokens.encoder_process import (
    EncoderProcess,
    release_encoder_processes,
    start_encoder_process,
    stop_encoder_processes,
    take_encoder_process,
)
from promptdeck.core.tokens.encoding import build_encoding

TEXTS = [
    "",
    "hello world",
    "<|endoftext|> is plain text here",
    "naïve café — 東京 🚀\n\ttabs and\r\nnewlines",
    "lone surrogate \udc80 kept",
    "word " * 70_000,  # longer than one encode chunk: counted in pieces at sync points
]


@pytest.fixture(autouse=True)
def _no_children_left() -> Iterator[None]:
    stop_encoder_processes()
    yield
    stop_encoder_processes()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _pid(process: EncoderProcess) -> int:
    pid = process.pid
    assert pid is not None
    return pid


def test_the_child_counts_exactly_what_the_encoder_here_counts() -> None:
    process = encoder_process._fork("o200k_base")
    try:
        assert process.ready()
        here = build_encoding("o200k_base")
        for text in TEXTS[:-1]:
            assert process.count(text) == len(here.encode_ordinary(text)), text
    finally:
        process.close()


def test_a_counter_takes_the_started_child_and_its_counts_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(encoder_process, "_worth_it", lambda _first_run_only=True: True)
    assert start_encoder_process("cl100k_base")
    counter = TokenCounter("cl100k_base", cache=None)
    # Any other builder than the real one builds here: the reference counts.
    here = TokenCounter("cl100k_base", builder=lambda name: build_encoding(name), cache=None)
    for text in TEXTS:
        assert counter.count(text) == here.count(text), text[:40]
    assert isinstance(counter._encoder, EncoderProcess)
    assert not isinstance(here._encoder, EncoderProcess)


def _two_cpus_and_a_count_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A count cache of this test's own (not written yet) on a machine of two CPUs."""
    store = tmp_path / "token-counts.sqlite3"
    monkeypatch.setenv("PROMPTDECK_TOKEN_CACHE", str(store))
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    return store


def _remember_a_count(store: Path, encoding: str) -> None:
    cache = TokenCache(store)
    cache.put(encoding, bytes(32), 1)
    cache.flush()
    cache.close()


def test_nothing_is_started_where_it_is_not_worth_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = _two_cpus_and_a_count_cache(monkeypatch, tmp_path)
    monkeypatch.setenv(encoder_process.ENV_VAR, "off")
    assert not start_encoder_process("o200k_base")
    monkeypatch.delenv(encoder_process.ENV_VAR)
    # Counts remembered on this machine: most commands need no encoder at all.
    _remember_a_count(store, "o200k_base")
    assert store.exists() and not encoder_process._nothing_counted_yet()
    assert not start_encoder_process("o200k_base")
    store.unlink()
    assert encoder_process._nothing_counted_yet()
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})
    assert not start_encoder_process("o200k_base")
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1})
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not start_encoder_process("o200k_base"), "forked beside another thread"
    finally:
        release.set()
        other.join()
    assert take_encoder_process("o200k_base") is None


def test_a_child_that_cannot_build_hands_the_failure_back_to_the_counter() -> None:
    process = encoder_process._fork("no_such_encoding")
    pid = _pid(process)
    assert not process.ready()
    assert not _alive(pid), "the failed child was not reaped"
    with pytest.raises(OSError):
        process.count("anything")


def test_a_child_killed_midway_leaves_the_counter_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoder_process, "_worth_it", lambda _first_run_only=True: True)
    assert start_encoder_process("cl100k_base")
    counter = TokenCounter("cl100k_base", cache=None)
    first = counter.count("before the child is gone")
    process = counter._encoder
    assert isinstance(process, EncoderProcess)
    os.kill(_pid(process), signal.SIGKILL)
    here = build_encoding("cl100k_base")
    text = "after the child is gone, counted here"
    assert counter.count(text) == len(here.encode_ordinary(text))
    assert first == len(here.encode_ordinary("before the child is gone"))
    assert not isinstance(counter._encoder, EncoderProcess) and not counter.estimated


def test_closing_stops_and_reaps_a_child_still_building() -> None:
    process = encoder_process._fork("o200k_base")
    pid = _pid(process)
    process.close()
    assert not _alive(pid)
    with pytest.raises(OSError):
        process.count("x")


def test_a_parent_started_with_its_standard_streams_closed_still_gets_counts() -> None:
    # Its pipes are then numbered 0 and 1: the child must not take them for standard streams.
    script = (
        "import os, sys\n"
        "os.close(0); os.close(1)\n"
        "from promptdeck.core.tokens.encoder_process import _fork\n"
        "process = _fork('cl100k_base')\n"
        "ready, count = process.ready(), process.count('hello world')\n"
        "sys.stderr.write(f'{process._child.to_child} {ready} {count}')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.split()[1:] == ["True", "2"]
    assert int(done.stderr.split()[0]) <= 1  # the case this test is for


def test_the_app_starts_one_with_counts_remembered_and_a_forked_child_never_sees_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = _two_cpus_and_a_count_cache(monkeypatch, tmp_path)
    _remember_a_count(store, "cl100k_base")
    assert not start_encoder_process("cl100k_base")  # a command: counts are remembered
    assert start_encoder_process("cl100k_base", first_run_only=False)  # the app
    pid = os.fork()
    if pid == 0:  # a child forked later (the app's opening helper, say)
        os._exit(0 if take_encoder_process("cl100k_base") is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the forked child took the parent's process"
    process = take_encoder_process("cl100k_base")
    assert process is not None and process.count("hello world") == 2


def _answered_within(process: EncoderProcess, seconds: float) -> bool:
    import select

    child = process._child
    ready, _, _ = select.select([child.from_child], [], [], seconds)
    return bool(ready)


def test_a_held_child_builds_nothing_until_released() -> None:
    process = encoder_process._fork("cl100k_base", held=True)
    try:
        # A build takes well under a second here; held, the child says nothing at all.
        assert not _answered_within(process, 1.5), "the held child built before its release"
        process.release()
        process.release()  # once is enough; again changes nothing
        assert process.ready()
        assert process.count("hello world") == 2
    finally:
        process.close()


def _started_by_the_app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> EncoderProcess:
    """The app's child, started held on a machine with counts remembered."""
    _remember_a_count(_two_cpus_and_a_count_cache(monkeypatch, tmp_path), "cl100k_base")
    assert start_encoder_process("cl100k_base", first_run_only=False, held=True)
    with encoder_process._lock:
        process = encoder_process._started["cl100k_base"]
    assert process._held
    return process


def test_a_count_asked_of_a_held_child_releases_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started = _started_by_the_app(monkeypatch, tmp_path)
    process = take_encoder_process("cl100k_base")  # waits for the build it releases
    assert process is started and process.count("hello world") == 2


def test_release_encoder_processes_lets_every_held_child_build(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    process = _started_by_the_app(monkeypatch, tmp_path)
    assert not _answered_within(process, 0.5), "held, it built before its release"
    release_encoder_processes()
    assert _answered_within(process, 60.0)
    assert process.ready() and process.count("hello world") == 2


def test_a_held_child_whose_parent_is_gone_ends_without_building() -> None:
    import time

    process = encoder_process._fork("cl100k_base", held=True)
    pid = _pid(process)
    child = process._child
    assert child.to_child is not None
    os.close(child.to_child)  # as when the parent dies: its end of the pipe closes
    child.to_child = None
    try:
        deadline = time.monotonic() + 60
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            assert time.monotonic() < deadline, "the held child outlived its parent's pipe"
            time.sleep(0.01)
        assert os.read(child.from_child, 1) == b""  # it never said it was ready
    finally:
        child.pid = None
        os.close(child.from_child)


def test_releasing_never_waits_for_a_thread_waiting_on_the_build() -> None:
    import time

    process = encoder_process._fork("o200k_base", held=True)  # the longer build
    try:
        waiting = threading.Thread(target=process.ready)  # releases it, then waits for the build
        waiting.start()
        deadline = time.monotonic() + 30
        while not process._lock.locked():
            assert time.monotonic() < deadline
            time.sleep(0.001)
        started = time.monotonic()
        process.release()  # as the screen's thread does after its first frame
        assert time.monotonic() - started < 0.1, "release waited for the build"
        waiting.join(60)
        assert process.ready() and process.count("hello world") == 2
    finally:
        process.close()


def test_on_a_first_run_the_apps_child_is_not_held(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = _two_cpus_and_a_count_cache(monkeypatch, tmp_path)
    assert not store.exists()  # nothing counted yet on this machine: every count needs it
    assert start_encoder_process("cl100k_base", first_run_only=False, held=True)
    with encoder_process._lock:
        process = encoder_process._started["cl100k_base"]
    assert _answered_within(process, 60.0), "a first run's child waited for a release"
    assert process.ready() and process.count("hello world") == 2
