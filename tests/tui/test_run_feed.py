"""The run feed between the reader thread and the phase log: long lines are cut for display."""

from __future__ import annotations

from promptdeck.tui.session.run_feed import MAX_SHOWN_CHARS, RunFeed


def test_a_megabyte_line_is_cut_and_marked_for_the_log() -> None:
    feed = RunFeed(max_lines=3)
    feed.push_line("short")
    feed.push_line("y" * 1_000_000)
    lines = feed.drain().lines
    assert lines[0] == "short"
    assert lines[1].startswith("y" * MAX_SHOWN_CHARS + " … [")
    assert lines[1].endswith(f"[{1_000_000 - MAX_SHOWN_CHARS:,} more characters in the run record]")
    assert len(lines[1]) < MAX_SHOWN_CHARS + 60
