"""The main screen's stylesheet lays out regions only; each pane carries its own look."""

from __future__ import annotations

import re
from pathlib import Path

import promptdeck.tui.screens as screens
from app_helpers import run_async
from promptdeck.tui.widgets.stories_pane import StoriesPane
from textual.app import App, ComposeResult
from textual.color import Color
from textual.widgets import Input

MAIN_TCSS = Path(screens.__file__).parent / "main.tcss"

LAYOUT_PROPERTIES = frozenset(
    {
        "layout",
        "display",
        "visibility",
        "dock",
        "width",
        "min-width",
        "max-width",
        "height",
        "min-height",
        "max-height",
        "grid-size",
        "grid-columns",
        "grid-rows",
        "grid-gutter",
        "column-span",
        "row-span",
    }
)
"""What a screen's stylesheet may say: where regions go and how big they are."""

_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_DECLARATION = re.compile(r"([a-z-]+)\s*:[^;{}]*;")


def properties_beyond_layout(css: str) -> list[str]:
    """The properties ``css`` declares that are not layout, in the order written."""
    declared = _DECLARATION.findall(_COMMENT.sub("", css))
    return [name for name in declared if name not in LAYOUT_PROPERTIES]


def test_main_screen_stylesheet_lays_out_regions_only() -> None:
    css = MAIN_TCSS.read_text(encoding="utf-8")
    assert re.findall(r"#(?:stories|preview|phases)\b", css), "the regions are laid out here"
    assert properties_beyond_layout(css) == []


def test_the_check_catches_a_pane_look() -> None:
    css = "#stories {\n  width: 21%;\n  border-right: tall $panel; /* color: no */\n}\n"
    css += "#preview-notes.-error { color: $error; text-style: bold; }"
    assert properties_beyond_layout(css) == ["border-right", "color", "text-style"]


class _PaneAlone(App[None]):
    def compose(self) -> ComposeResult:
        yield StoriesPane(id="stories")


@run_async
async def test_a_pane_alone_carries_its_look() -> None:
    app = _PaneAlone()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(StoriesPane)
        assert pane.styles.border_right[0] == "tall"
        # Mounted when first opened (the first frame does not show it).
        assert not pane.query("#story-filter")
        pane.open_filter()
        await pilot.pause()
        # The filter box's border is the theme's accent, not Input's own blurred border.
        accent = Color.parse(app.get_css_variables()["accent"])
        assert pane.query_one("#story-filter", Input).styles.border_top == ("tall", accent)
