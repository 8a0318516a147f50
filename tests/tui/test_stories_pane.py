"""StoriesPane on its own: stories in, the tree (filtered) out; a story picked goes up as a
message, at once on Enter and once the cursor rests on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from app_helpers import run_async, wait_for
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.widgets.stories_pane import StoriesPane
from promptdeck.tui.widgets.story_tree import StoryTree
from rich.segment import Segment
from rich.style import Style
from textual import on
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Input


class PaneApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield StoriesPane(id="stories")

    @on(StoriesPane.StoryChosen)
    def _chosen(self, event: StoriesPane.StoryChosen) -> None:
        self.chosen.append(event.story.id)


@asynccontextmanager
async def mounted() -> AsyncIterator[tuple[Pilot[None], StoriesPane, StoryTree, PaneApp]]:
    """The pane alone in a 60x30 app, with its tree."""
    app = PaneApp()
    async with app.run_test(size=(60, 30)) as pilot:
        pane = app.query_one(StoriesPane)
        yield pilot, pane, pane.query_one(StoryTree), app


def shown_ids(tree: StoryTree) -> list[str]:
    return [leaf.data.id for group in tree.root.children for leaf in group.children if leaf.data]


@run_async
async def test_the_tree_shows_the_stories_with_the_cursor_on_the_current_one(
    demo_root: Path,
) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with mounted() as (pilot, pane, tree, app):
        # The filter box is mounted when first opened.
        assert not pane.query("#story-filter")
        pane.current = "1-3"
        pane.stories = stories
        await wait_for(pilot, lambda: tree.cursor_node is tree.node_for("1-3"), "the cursor")
        assert shown_ids(tree) == [story.id for story in stories]
        # The cursor put on the current story asks for nothing.
        await pilot.pause(0.3)
        assert app.chosen == []


@run_async
async def test_the_filter_narrows_the_tree_and_escape_would_clear_it(demo_root: Path) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with mounted() as (pilot, pane, tree, _app):
        pane.stories = stories
        pane.open_filter()
        await pilot.pause()
        box = pane.query_one("#story-filter", Input)
        assert box.display and box.has_focus
        await pilot.press(*"recurring")
        await wait_for(pilot, lambda: len(shown_ids(tree)) == 3, "the filtered tree")
        assert all(story_id.startswith("add-recurring-payments") for story_id in shown_ids(tree))
        # New stories keep the filter.
        pane.stories = stories
        await pilot.pause()
        assert len(shown_ids(tree)) == 3
        pane.close_filter()
        await pilot.pause()
        assert not box.display and tree.has_focus
        assert shown_ids(tree) == [story.id for story in stories]


@run_async
async def test_enter_picks_a_story_at_once_and_a_resting_cursor_after_a_pause(
    demo_root: Path,
) -> None:
    stories = load_catalog(open_workspace(demo_root)).stories
    async with mounted() as (pilot, pane, tree, app):
        pane.current = "1-1"
        pane.stories = stories
        await wait_for(pilot, lambda: tree.cursor_node is tree.node_for("1-1"), "the cursor")
        pane.focus_tree()
        await pilot.press("down")
        await wait_for(pilot, lambda: app.chosen == ["1-2"], "the cursor to rest on 1-2")
        pane.current = "1-2"
        await pilot.press("down", "down")
        await wait_for(pilot, lambda: app.chosen[-1] == "1-4", "the cursor to rest on 1-4")
        pane.current = "1-4"
        picked = len(app.chosen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.chosen) == picked + 1, "the story chosen with Enter")
        assert app.chosen[-1] == "1-4"


@run_async
async def test_a_labels_width_is_the_width_it_is_drawn_at(demo_root: Path) -> None:
    # The tree asks every node's width when it lays its lines out; the quick answer must be
    # the drawn label's (groups folded and open, every status mark, a flagged story).
    stories = load_catalog(open_workspace(demo_root)).stories
    async with mounted() as (pilot, pane, tree, _app):
        pane.flags = {stories[0].id: "status not written back"}
        pane.stories = stories
        await wait_for(pilot, lambda: bool(shown_ids(tree)), "the tree")
        tree.root.children[0].collapse()
        nodes = [node for group in tree.root.children for node in (group, *group.children)]
        assert {node.data.status for node in nodes if node.data} >= {"done", "backlog"}
        for node in nodes:
            drawn = Segment.get_line_length(tree.label_segments(node, Style(), Style()))
            assert tree.get_label_width(node) == drawn, node.label
