"""A child forked to work beside this process: its answer pipe's room, and whole messages."""

from __future__ import annotations

import os
import sys
import time

import pytest
from promptdeck.core.forked import fork_child, receive_message, send_message

PART = 300_000
"""More than a pipe's usual 64 KiB, less than the 1 MiB asked for."""


def _ended_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return True
        time.sleep(0.01)
    return False


def _write_a_part(_requests: int | None, replies: int) -> None:
    send_message(replies, b"x" * PART)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are set on Linux")
def test_with_room_a_child_writes_a_large_part_without_waiting_for_the_reader() -> None:
    child = fork_child(_write_a_part, requests=False, close_inherited=True, reply_room=1 << 20)
    assert child.pid is not None
    try:
        # Nothing read yet: the child has written its whole part and ended.
        assert _ended_within(child.pid, 30), "the child waited for its reader"
        assert receive_message(child.from_child) == b"x" * PART
    finally:
        child.pid = None
        os.close(child.from_child)


def test_without_room_the_same_part_waits_for_the_reader() -> None:
    child = fork_child(_write_a_part, requests=False, close_inherited=True)
    assert child.pid is not None
    try:
        assert not _ended_within(child.pid, 1.0), "a 300 KB part fit the usual pipe"
        assert receive_message(child.from_child) == b"x" * PART
        assert _ended_within(child.pid, 30)
    finally:
        child.pid = None
        os.close(child.from_child)
