"""The turn strip: live bars drawn at most once per timer tick, and Enter on a request says
what it added."""

from __future__ import annotations

from pathlib import Path

from app_helpers import run_async
from flight_runs import INJECTED, claude_stream, write_run
from promptdeck.core.flight.claude import claude_turns
from promptdeck.tui.widgets.turn_strip import TurnStrip, bars_of
from textual.app import App, ComposeResult


class StripApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.chosen: list[TurnStrip.RequestChosen] = []

    def compose(self) -> ComposeResult:
        yield TurnStrip(id="turn-strip")

    def on_turn_strip_request_chosen(self, message: TurnStrip.RequestChosen) -> None:
        self.chosen.append(message)


def test_bars_follow_the_turn_list_with_subagents_after_their_request() -> None:
    bars = bars_of(claude_turns(claude_stream("/project"), cwd=None))
    assert [b.label for b in bars] == ["#1", "#2", "sub #1", "sub #2", "#3"]
    assert (bars[1].cached, bars[1].written, bars[1].fresh) == (5000, 300, 5)
    assert INJECTED in bars[1].added


@run_async
async def test_live_requests_wait_for_the_timer_to_be_drawn() -> None:
    app = StripApp()
    async with app.run_test() as pilot:
        strip = app.query_one(TurnStrip)
        drawn: list[int] = []
        original = strip.refresh
        strip.refresh = lambda *a, **k: drawn.append(1) or original(*a, **k)  # type: ignore[method-assign]
        strip.add_usage(0, 1, 1)  # the first one shows the strip
        assert strip.display
        drawn.clear()
        for n in range(200):
            strip.add_usage(n, 1, 1)
        assert drawn == []  # queued, not drawn per request
        strip._redraw_if_dirty()
        strip._redraw_if_dirty()
        assert len(drawn) == 1
        await pilot.pause()


@run_async
async def test_enter_on_a_request_shows_what_it_added() -> None:
    app = StripApp()
    async with app.run_test() as pilot:
        strip = app.query_one(TurnStrip)
        strip.show_turns(claude_turns(claude_stream("/project"), cwd=None))
        strip.focus()
        await pilot.press("left", "left", "left", "left", "enter")
        await pilot.pause()
        assert strip.cursor == 1
        assert [m.index for m in app.chosen] == [1]
        assert "added: Read /project/docs/architecture.md" in str(strip.render())


@run_async
async def test_an_ended_run_shows_its_recorded_requests(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    run = write_run(root, "20250101-000000-000000-dev-1-2-abcdef", claude_stream(str(root)))
    app = StripApp()
    async with app.run_test() as pilot:
        strip = app.query_one(TurnStrip)
        strip.load_record(run, "claude")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [b.label for b in strip.bars] == ["#1", "#2", "sub #1", "sub #2", "#3"]
        assert strip.display
