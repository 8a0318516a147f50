"""Filter and focus as in lazygit and k9s: Enter in the filter goes to the tree; Escape clears
the filter and the cursor stays on the story it was on."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.tui.widgets.story_tree import StoryTree
from textual.widgets import Input

SIZES = [(80, 24), (120, 40), (200, 50)]


def _cursor_story(tree: StoryTree) -> str | None:
    node = tree.cursor_node
    return node.data.id if node is not None and node.data is not None else None


@pytest.mark.parametrize("size", SIZES)
@run_async
async def test_enter_goes_to_the_tree_and_escape_keeps_the_place(
    demo_root: Path, size: tuple[int, int]
) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        tree = screen.query_one(StoryTree)
        await pilot.press("slash")
        box = screen.query_one("#story-filter", Input)
        assert app.focused is box
        await pilot.press("c", "a", "t")  # "Category rules", "Detect dupli-cat-e …"
        await wait_for(pilot, lambda: tree.node_for("1-1") is None, "the filtered tree")
        await pilot.press("enter")
        assert app.focused is tree and box.value == "cat"
        await wait_for(pilot, lambda: _cursor_story(tree) is not None, "a cursor")
        while _cursor_story(tree) != "1-4":
            await pilot.press("down")
        # Escape at once, before the preview has followed: the cursor's place is what counts.
        await pilot.press("escape")
        assert box.value == "" and not box.display and app.focused is tree
        await wait_for(pilot, lambda: tree.node_for("1-1") is not None, "the whole tree")
        await wait_for(pilot, lambda: _cursor_story(tree) == "1-4", "the cursor on 1-4")
        await wait_for_preview(pilot, "1-4")
