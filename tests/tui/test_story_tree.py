"""The story tree on its own: groups fold with Enter, space or a click on their icon; a story
is chosen with Enter or a click; the keys move as Textual's tree's do; a rebuild keeps the
cursor where it was and announces nothing new."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from app_helpers import run_async, wait_for
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.stories import Story
from promptdeck.tui.widgets.story_tree import StoryTree
from textual import on
from textual.app import App, ComposeResult
from textual.pilot import Pilot


class TreeApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.selected: list[str] = []
        self.highlighted: list[str] = []

    def compose(self) -> ComposeResult:
        yield StoryTree(id="tree")

    @on(StoryTree.StorySelected)
    def _selected(self, event: StoryTree.StorySelected) -> None:
        self.selected.append(event.story.id)

    @on(StoryTree.StoryHighlighted)
    def _highlighted(self, event: StoryTree.StoryHighlighted) -> None:
        self.highlighted.append(event.story.id)


@asynccontextmanager
async def tree_of(
    stories: tuple[Story, ...], current: str, height: int = 20
) -> AsyncIterator[tuple[Pilot[None], StoryTree, TreeApp]]:
    """The tree alone in a 60-column app, focused, showing ``stories`` with the cursor on
    ``current``."""
    app = TreeApp()
    async with app.run_test(size=(60, height)) as pilot:
        tree = app.query_one(StoryTree)
        tree.show_stories(stories, current)
        tree.focus()
        await wait_for(pilot, lambda: tree.cursor_node is tree.node_for(current), "the cursor")
        yield pilot, tree, app


def _cursor(tree: StoryTree) -> str:
    node = tree.cursor_node
    assert node is not None
    return node.data.id if node.data is not None else f"group {node.label.plain}"


@run_async
async def test_enter_and_space_fold_a_group_and_enter_chooses_a_story(demo_root: Path) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with tree_of(stories, stories[0].id) as (pilot, tree, app):
        await pilot.press("up")  # onto the first group
        group = tree.root.children[0]
        assert tree.cursor_node is group
        shown = tree.last_line
        await pilot.press("enter")
        await pilot.pause()
        assert group.is_collapsed and tree.last_line == shown - len(group.children)
        assert all(story.line == -1 for story in group.children)
        assert app.selected == [], "a group is folded, never chosen"
        await pilot.press("space")
        await pilot.pause()
        assert group.is_expanded and tree.last_line == shown
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: app.selected == [stories[0].id], "the story chosen")


@run_async
async def test_a_click_on_the_icon_folds_and_a_click_on_a_story_chooses_it(
    demo_root: Path,
) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with tree_of(stories, stories[0].id) as (pilot, tree, app):
        group = tree.root.children[0]
        await pilot.click(StoryTree, offset=(0, group.line))  # the ▼ icon
        await pilot.pause()
        assert group.is_collapsed and app.selected == []
        await pilot.click(StoryTree, offset=(0, group.line))
        await pilot.pause()
        assert group.is_expanded
        second = group.children[1]
        await pilot.click(StoryTree, offset=(8, second.line))
        await wait_for(pilot, lambda: app.selected == [second.data.id], "the story chosen")
        assert tree.cursor_node is second


@run_async
async def test_the_pointer_highlights_its_line_and_leaves_it(demo_root: Path) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with tree_of(stories, stories[0].id) as (pilot, tree, _app):
        line = tree.root.children[0].children[2].line
        await pilot.hover(StoryTree, offset=(8, line))
        await wait_for(pilot, lambda: tree.hover_line == line, "the hover")
        await pilot.hover(StoryTree, offset=(8, line + 1))
        await wait_for(pilot, lambda: tree.hover_line == line + 1, "the hover to move")


@run_async
async def test_the_sibling_and_page_keys_move_as_textuals_tree_does(demo_root: Path) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with tree_of(stories, stories[0].id, height=6) as (pilot, tree, _app):
        first, second = tree.root.children[0], tree.root.children[1]
        last_of_first = first.children[-1]
        tree.move_cursor(last_of_first)
        await pilot.pause()
        # Past the group's last story: the next group.
        await pilot.press("shift+down")
        assert tree.cursor_node is second
        await pilot.press("shift+up")
        assert tree.cursor_node is first
        await pilot.press("shift+down", "down", "shift+left")
        assert tree.cursor_node is second, "from a story to its group"
        await pilot.press("home")
        assert tree.cursor_line == 0
        await pilot.press("pagedown")
        page = tree.scrollable_content_region.height
        assert tree.last_line > page and tree.cursor_line == page - 1
        await pilot.press("end")
        assert tree.cursor_line == tree.last_line
        assert tree.scroll_offset.y > 0, "the cursor is kept in view"


@run_async
async def test_a_rebuild_keeps_the_cursor_and_announces_nothing(demo_root: Path) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with tree_of(stories, stories[0].id) as (pilot, tree, app):
        await pilot.press("down", "down")
        await pilot.pause()
        under = _cursor(tree)
        announced = list(app.highlighted)
        tree.show_stories(stories, under)
        await pilot.pause()
        assert _cursor(tree) == under
        assert app.highlighted == announced
        # A story the rebuild leaves out: the cursor goes to the first story shown.
        kept = tuple(story for story in stories if story.id != under)
        tree.show_stories(kept, under)
        await pilot.pause()
        assert _cursor(tree) == kept[0].id


@run_async
async def test_a_drag_in_the_tree_selects_no_text(demo_root: Path) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with tree_of(stories, stories[0].id) as (pilot, tree, app):
        await pilot.mouse_down(StoryTree, offset=(4, 1))
        await pilot.hover(StoryTree, offset=(20, 4))
        await pilot.mouse_up(StoryTree, offset=(20, 4))
        await pilot.pause()
        assert not app.screen.selections
        assert tree.cursor_node is not None


@run_async
async def test_no_story_shown_leaves_no_cursor(demo_root: Path) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with tree_of(stories, stories[3].id) as (pilot, tree, _app):
        tree.show_stories(())
        await pilot.pause()
        assert tree.last_line == -1
        assert tree.cursor_node is None and tree.cursor_line == -1
