"""The turn strip on a fixed turn list: one bar per request (a subagent's after the request
that started it), coloured cached / written / fresh, with what the chosen one added
(regenerate deliberately)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from flight_runs import claude_stream
from promptdeck.core.flight.claude import claude_turns
from promptdeck.tui.widgets.turn_strip import TurnStrip
from textual.app import App, ComposeResult
from textual.pilot import Pilot

SnapCompare = Callable[..., bool]


class StripApp(App[None]):
    """The strip alone, holding the recorded phase's requests."""

    def compose(self) -> ComposeResult:
        yield TurnStrip(id="turn-strip")

    def on_mount(self) -> None:
        strip = self.query_one(TurnStrip)
        strip.show_turns(claude_turns(claude_stream("/project"), cwd=None))
        strip.focus()


def test_the_turn_strip(snap_compare: SnapCompare, tmp_path: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await pilot.press("left", "left", "left", "left", "enter")
        await pilot.pause()

    assert snap_compare(StripApp(), terminal_size=(100, 8), run_before=run_before)
