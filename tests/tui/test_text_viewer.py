"""TextViewer.show: a new text that keeps the first or the last lines of the one shown is
shown by replacing the lines between; whatever the change, the viewer then holds exactly the
new text, with its cursor at the start and no edit history, as a fresh load leaves it."""

from __future__ import annotations

from app_helpers import run_async
from promptdeck.tui.widgets.text_viewer import TextViewer
from textual.app import App, ComposeResult

LINES = [f"line {n} " + "word " * (n % 17) for n in range(400)]
BEFORE = "\n".join(LINES)

CHANGES = {
    "a stretch in the middle grows": "\n".join([*LINES[:150], "new", "lines", *LINES[200:]]),
    "a stretch in the middle goes": "\n".join([*LINES[:150], *LINES[260:]]),
    "lines are added at the end": "\n".join([*LINES, "tail one", "tail two"]),
    "the end changes": "\n".join([*LINES[:390], "a new ending"]),
    "the end is cut": "\n".join(LINES[:120]),
    "the start changes": "\n".join(["a new start", *LINES[5:]]),
    "a newline is added at the end": BEFORE + "\n",
    "everything changes": "something else\nentirely",
    "one line is left": LINES[0],
    "nothing is left": "",
}


class ViewerApp(App[None]):
    def compose(self) -> ComposeResult:
        yield TextViewer(BEFORE)


@run_async
async def test_each_change_leaves_exactly_the_new_text_as_a_load_would() -> None:
    for what, after in CHANGES.items():
        async with ViewerApp().run_test(size=(80, 24)) as pilot:
            viewer = pilot.app.query_one(TextViewer)
            viewer.move_cursor((300, 2))
            await pilot.pause()
            viewer.show(after)
            await pilot.pause()
            assert viewer.text == after, what
            assert viewer.document.lines == TextViewer(after).document.lines, what
            assert viewer.cursor_location == (0, 0), what
            assert viewer.scroll_offset.y == 0, what
            viewer.undo()
            assert viewer.text == after, what


@run_async
async def test_a_stretch_replaced_keeps_the_wrapping_of_the_lines_around_it() -> None:
    async with ViewerApp().run_test(size=(40, 24)) as pilot:
        viewer = pilot.app.query_one(TextViewer)
        await pilot.pause()
        viewer.show(CHANGES["a stretch in the middle grows"])
        await pilot.pause()
        replaced = viewer.wrapped_document.height
        viewer.load_text(CHANGES["a stretch in the middle grows"])
        await pilot.pause()
        # The rows of the text as shown are those of the same text loaded whole.
        assert replaced == viewer.wrapped_document.height
