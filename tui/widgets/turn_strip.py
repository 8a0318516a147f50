"""The turn strip: one bar per model request of the phase, live while it runs.

A bar's height is the request's prompt (context) size against the largest so far; its colour
splits it into cached (read from the cache), written (to the cache) and fresh (plain input)
tokens, bottom to top. Requests arrive while the phase runs (:meth:`TurnStrip.add_usage`) and
are drawn at most once per 100 ms, however fast they come; when the run ends the strip takes
the run's turn list (:meth:`TurnStrip.show_turns`), subagents' requests included, so
Enter on a bar can say what that request added (each tool result, its tool, its file or
command and its size).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from promptdeck.core.lean_dataclass import dataclass
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from ...core.terminal import printable
from ...core.units import human_tokens

if TYPE_CHECKING:
    from promptdeck.core.flight import Request, TurnList

REDRAW_INTERVAL = 0.1
"""The strip is drawn at most this often while requests stream in (seconds)."""
BAR_ROWS = 4
_EIGHTHS = " ▁▂▃▄▅▆▇█"


@dataclass(frozen=True)
class Bar:
    """One request as the strip draws it."""

    cached: int
    written: int
    fresh: int
    label: str = ""
    added: str = ""

    @property
    def total(self) -> int:
        """The request's prompt in tokens."""
        return self.cached + self.written + self.fresh


def _added(request: Request) -> str:
    parts = [f"{a.tool} {a.source} ({a.bytes:,} B)".replace("  ", " ") for a in request.added]
    return "; ".join(parts) or "nothing new (the first request, or the client's own text)"


def bars_of(turns: TurnList) -> tuple[Bar, ...]:
    """A bar per request of ``turns``, a subagent's right after the request that started it;
    a request with unknown usage is an empty bar."""
    bars = []
    for depth, request in turns.walk():
        label = ("sub " * depth) + f"#{request.index}"
        bars.append(
            Bar(
                request.cache_read_tokens or 0,
                request.cache_write_tokens or 0,
                request.input_tokens or 0,
                label,
                _added(request),
            )
        )
    return tuple(bars)


class TurnStrip(Widget, can_focus=True):
    """One bar per request; ←/→ choose a bar, Enter shows what its request added."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Previous request", show=False, id="turn-strip.previous"),
        Binding("right", "move(1)", "Next request", show=False, id="turn-strip.next"),
        Binding("enter", "open", "What it added", id="turn-strip.open", tooltip="what it added"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "turn-strip--cached",
        "turn-strip--written",
        "turn-strip--fresh",
        "turn-strip--cursor",
    }

    DEFAULT_CSS = """
    TurnStrip {
        display: none;
        height: 6;
        padding: 0 1;
        background: $surface;
    }
    TurnStrip > .turn-strip--cached { color: $success; }
    TurnStrip > .turn-strip--written { color: $warning; }
    TurnStrip > .turn-strip--fresh { color: $error; }
    TurnStrip > .turn-strip--cursor { background: $boost; }
    """

    cursor: reactive[int] = reactive(-1)
    opened: reactive[bool] = reactive(False)

    @dataclass
    class RequestChosen(Message):
        """Enter on a bar: the request's place in the strip and its bar."""

        index: int
        bar: Bar

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.bars: tuple[Bar, ...] = ()
        self._dirty = False

    def on_mount(self) -> None:
        """Draw queued requests on a 100 ms timer: never more often, however fast they come."""
        self.set_interval(REDRAW_INTERVAL, self._redraw_if_dirty, name="turn-strip")

    def _redraw_if_dirty(self) -> None:
        if self._dirty:
            self._dirty = False
            self.refresh()

    def reset(self) -> None:
        """A new run: no bars."""
        self.bars = ()
        self.cursor, self.opened = -1, False
        self.display = False

    def add_usage(self, cached: int, written: int, fresh: int) -> None:
        """A request the running phase made (drawn by the next tick of the timer)."""
        self.bars = (*self.bars, Bar(cached, written, fresh, f"#{len(self.bars) + 1}"))
        self._dirty = True
        self.display = True

    def show_turns(self, turns: TurnList) -> None:
        """The run's whole turn list, once it has ended."""
        self.set_bars(bars_of(turns))

    def load_record(self, run_dir: Path, agent: str) -> None:
        """Read the ended run's turn list off the event loop, then show it."""
        self.run_worker(
            lambda: self._load(run_dir, agent),
            thread=True,
            exclusive=True,
            exit_on_error=False,
            group="turn-strip",
            description="Reading the run's requests",
        )

    def _load(self, run_dir: Path, agent: str) -> None:
        turns = _read_turns(run_dir, agent)
        if turns is not None and turns.requests:
            self.app.call_from_thread(self.show_turns, turns)

    def set_bars(self, bars: Sequence[Bar]) -> None:
        """Show ``bars`` now."""
        self.bars = tuple(bars)
        self.display = bool(self.bars)
        if self.cursor >= len(self.bars):
            self.cursor = len(self.bars) - 1
        self.refresh()

    def action_move(self, step: int) -> None:
        """Choose the previous or next bar."""
        if self.bars:
            # The first press chooses the latest request.
            start = self.cursor + step if self.cursor >= 0 else len(self.bars) - 1
            self.cursor = max(0, min(len(self.bars) - 1, start))
            self.opened = False

    def action_open(self) -> None:
        """Show what the chosen request added, and say so to the screen."""
        if not self.bars:
            return
        if self.cursor < 0:
            self.cursor = len(self.bars) - 1
        self.opened = True
        self.post_message(self.RequestChosen(self.cursor, self.bars[self.cursor]))

    def render(self) -> Text:
        """The bars (bottom-aligned, the last ones that fit) and a line about the chosen one."""
        width = max(1, self.content_size.width)
        styles = {
            name: self.get_component_rich_style(f"turn-strip--{name}")
            for name in ("cached", "written", "fresh", "cursor")
        }
        first = max(0, len(self.bars) - width)
        if 0 <= self.cursor < first:
            first = self.cursor
        shown = self.bars[first : first + width]
        peak = max((b.total for b in shown), default=0) or 1
        text = Text(no_wrap=True, overflow="crop")
        for row in range(BAR_ROWS - 1, -1, -1):
            for offset, bar in enumerate(shown):
                text.append(*self._cell(bar, row, peak, styles, first + offset == self.cursor))
            text.append("\n")
        text.append(self._caption(peak))
        return text

    def _cell(
        self, bar: Bar, row: int, peak: int, styles: dict[str, Style], chosen: bool
    ) -> tuple[str, Style]:
        eighths = round(bar.total / peak * BAR_ROWS * 8)
        filled = max(0, min(8, eighths - row * 8))
        # The cell takes the colour of the part of the bar its middle lies in.
        middle = (row + 0.5) / BAR_ROWS * peak
        part = (
            "cached"
            if middle < bar.cached
            else "written"
            if middle < bar.cached + bar.written
            else "fresh"
        )
        style = styles[part] + styles["cursor"] if chosen else styles[part]
        return (_EIGHTHS[filled] if bar.total else " "), style

    def _caption(self, peak: int) -> str:
        if not self.bars:
            return "no requests yet"
        if not 0 <= self.cursor < len(self.bars):
            return (
                f"{len(self.bars)} requests · peak {human_tokens(peak)} tok · "
                "cached / written / fresh"
            )
        bar = self.bars[self.cursor]
        head = (
            f"{bar.label}: {human_tokens(bar.total)} tok "
            f"({human_tokens(bar.cached)} cached, {human_tokens(bar.written)} written, "
            f"{human_tokens(bar.fresh)} fresh)"
        )
        if not self.opened:
            return head
        return printable(f"{head} · added: {bar.added or 'shown when the run has ended'}")


def _read_turns(run_dir: Path, agent: str) -> TurnList | None:
    """The ended run's turn list from its record (kept in its folder); None when unreadable."""
    from promptdeck.core.flight import turns_of
    from promptdeck.core.records import load_run

    root = run_dir.parent.parent.parent
    try:
        info = load_run(root, run_dir.name)
        return turns_of(run_dir, root, agent, info.run_meta.cwd)
    except Exception:  # a record that cannot be read leaves the live bars: never an error here
        return None
