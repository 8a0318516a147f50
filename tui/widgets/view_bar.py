"""The view bar: on a narrow terminal (or with one region shown) it names every region, its
key, and what the hidden phases are doing, so nothing disappears without a trace."""

from __future__ import annotations

from typing import ClassVar

from promptdeck.core.lean_dataclass import dataclass
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

REGIONS = (("stories", "1", "Stories"), ("preview", "2", "Preview"), ("phases", "3", "Phases"))
SEPARATOR = " │ "


def shown_regions(view: str, narrow: bool) -> tuple[str, ...]:
    """The regions on screen: the one of a solo ``view``, two when ``narrow`` (the phases
    fold away), else all three."""
    if view != "all":
        return (view,)
    if narrow:
        return ("stories", "preview")
    return tuple(name for name, _key, _label in REGIONS)


@dataclass(frozen=True)
class ViewState:
    """What the bar shows.

    Attributes:
        shown: the regions on screen now.
        phases_note: a few words on the phases (``dev suggested``, ``dev running``).
    """

    shown: tuple[str, ...]
    phases_note: str = ""


class ViewBar(Widget):
    """``1 Stories │ 2 Preview │ 3 Phases · dev running``; a click on a name shows it."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"view-bar--shown", "view-bar--key"}

    DEFAULT_CSS = """
    ViewBar {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        & > .view-bar--shown { color: $text; text-style: bold; }
        & > .view-bar--key { color: $accent; text-style: bold; }
    }
    """

    state: reactive[ViewState] = reactive(ViewState(("stories", "preview", "phases")))
    """The regions shown and the note on the phases."""

    def watch_state(self, state: ViewState) -> None:
        """The bar is there whenever a region is hidden: it says which and how to reach it."""
        self.display = len(state.shown) < len(REGIONS)

    class ViewChosen(Message):
        """A region's name was clicked."""

        def __init__(self, view: str) -> None:
            super().__init__()
            self.view = view

    def _segments(self) -> list[tuple[str, Text]]:
        state = self.state
        shown_style = self.get_component_rich_style("view-bar--shown", partial=True)
        key_style = self.get_component_rich_style("view-bar--key", partial=True)
        segments = []
        for name, key, label in REGIONS:
            text = Text.assemble((key, key_style), " ")
            text.append(label, style=shown_style if name in state.shown else "")
            if name == "phases" and state.phases_note:
                text.append(f" · {state.phases_note}")
            if name not in state.shown:
                text.append(" (hidden)", style="dim")
            segments.append((name, text))
        return segments

    def render(self) -> Text:
        """The three regions, the shown ones in bold."""
        return Text(SEPARATOR).join(text for _name, text in self._segments())

    def on_click(self, event: events.Click) -> None:
        """Show the region whose name was clicked."""
        x = event.x - 1
        for name, text in self._segments():
            if 0 <= x < len(text):
                self.post_message(self.ViewChosen(name))
                return
            x -= len(text) + len(SEPARATOR)
