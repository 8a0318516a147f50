"""The Stories region: a filter box over the story tree; the preview follows the cursor.

Data comes down as reactives: the screen sets :attr:`StoriesPane.current` (the story
previewed) and :attr:`StoriesPane.stories` (the catalog's), and the tree is rebuilt from them
and the filter. What the user picks goes up as :class:`StoriesPane.StoryChosen`: at once on
Enter, or once the cursor has rested on a story for :data:`FOLLOW_CURSOR_SECONDS`.
"""

from __future__ import annotations

from dataclasses import dataclass

from promptdeck.core.stories import Story, UnreadableEntry
from promptdeck.core.story_filter import filter_stories
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Input, Static

from .story_tree import StoryTree

FOLLOW_CURSOR_SECONDS = 0.15
"""How long the tree cursor rests on a story before the preview follows it."""


class StoriesPane(Vertical):
    """The title, the filter box (hidden until asked for) and the story tree.

    Args:
        id: the widget id.
    """

    stories: var[tuple[Story, ...] | None] = var(None, always_update=True, init=False)
    """The catalog's stories (None until loaded); every new list rebuilds the tree."""
    current: var[str | None] = var(None, init=False)
    """The id of the story previewed: the tree's cursor goes to it."""

    @dataclass
    class StoryChosen(Message):
        """The user picked a story to preview."""

        story: Story

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unreadable: tuple[UnreadableEntry, ...] = ()
        """Plan entries that could not be read: shown greyed below the stories (set before
        :attr:`stories`)."""
        self._query = ""
        self._follow_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        """Title, filter box, tree."""
        yield Static("Stories", classes="region-title", id="stories-title")
        box = Input(placeholder="filter stories…", id="story-filter")
        box.display = False
        yield box
        yield StoryTree(id="story-tree")

    def watch_stories(self) -> None:
        """New stories: rebuild the tree, filtered, with the cursor on the current story."""
        self._show_tree()

    def watch_current(self, story_id: str | None) -> None:
        """A new story previewed: put the cursor on it."""
        self.query_one(StoryTree).mark_current(story_id)

    def _show_tree(self) -> None:
        if self.stories is not None:
            shown = filter_stories(self.stories, self._query)
            self.query_one(StoryTree).show_stories(shown, self.current, self.unreadable)

    def focus_tree(self) -> None:
        """Put the focus on the story tree."""
        self.query_one(StoryTree).focus()

    # ---------------------------------------------------------------- the filter

    def open_filter(self) -> None:
        """Show the filter box and put the focus in it."""
        box = self.query_one("#story-filter", Input)
        box.display = True
        box.focus()

    def close_filter(self) -> None:
        """Clear and hide the filter box (if it is open) and go back to the tree."""
        box = self.query_one("#story-filter", Input)
        if box.display:
            box.value = ""
            box.display = False
            self.query_one(StoryTree).focus()

    @on(Input.Changed, "#story-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._query = event.value
        self._show_tree()

    @on(Input.Submitted, "#story-filter")
    def _filter_submitted(self) -> None:
        self.query_one(StoryTree).focus()

    # ---------------------------------------------------------------- events up

    @on(StoryTree.StorySelected)
    def _story_selected(self, event: StoryTree.StorySelected) -> None:
        self._stop_follow()
        self.post_message(self.StoryChosen(event.story))

    @on(StoryTree.StoryHighlighted)
    def _story_highlighted(self, event: StoryTree.StoryHighlighted) -> None:
        # The preview follows the cursor, once it rests: holding a key down composes once.
        self._stop_follow()
        if event.story.id == self.current:
            return
        story = event.story
        self._follow_timer = self.set_timer(
            FOLLOW_CURSOR_SECONDS,
            lambda: self.post_message(self.StoryChosen(story)),
            name="follow-cursor",
        )

    def _stop_follow(self) -> None:
        timer = self._follow_timer
        if timer is not None:
            timer.stop()
            self._follow_timer = None
