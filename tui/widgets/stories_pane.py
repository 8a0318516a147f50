"""The Stories region: a filter box over the story tree; the preview follows the cursor.

Data comes down as reactives: the screen sets :attr:`StoriesPane.current` (the story
previewed) and :attr:`StoriesPane.stories` (the catalog's), and the tree is rebuilt from them
and the filter. What the user picks goes up as :class:`StoriesPane.StoryChosen`: at once on
Enter, or once the cursor has rested on a story for :data:`FOLLOW_CURSOR_SECONDS`.
"""

from __future__ import annotations

from promptdeck.core.stories import Story, StoryCatalog, UnreadableEntry, filter_stories
from textual import on
from textual.app import ComposeResult
from textual.message import Message
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Input

from .containers import Column
from .region_title import RegionTitle
from .story_tree import StoryTree, short_id

TREE_CHROME = 9
"""Columns a story row needs besides its id and title: guide, status mark, spaces, scrollbar
and the region's border."""

STORIES_SHARE = (0.21, 0.30)
"""The region's share of a wide terminal: at least the first, widening up to the second when
the titles need it (the preview keeps the rest)."""

FOLLOW_CURSOR_SECONDS = 0.15
"""How long the tree cursor rests on a story before the preview follows it."""


class StoriesPane(Column):
    """The title, the filter box (hidden until asked for) and the story tree.

    Args:
        id: the widget id.
    """

    DEFAULT_CSS = """
    StoriesPane {
        border-right: tall $panel;
    }
    StoriesPane > #story-filter {
        height: 3;
        border: tall $accent;
    }
    """

    stories: var[tuple[Story, ...] | None] = var(None, always_update=True, init=False)
    """The catalog's stories (None until loaded); every new list rebuilds the tree."""
    current: var[str | None] = var(None, init=False)
    """The id of the story previewed: the tree's cursor goes to it."""
    flags: var[dict[str, str]] = var(dict, init=False)
    """Story id → a warning the tree shows on it (a status a run could not write back)."""

    class StoryChosen(Message):
        """The user picked a story to preview."""

        def __init__(self, story: Story) -> None:
            super().__init__()
            self.story = story

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.unreadable: tuple[UnreadableEntry, ...] = ()
        """Plan entries that could not be read: shown greyed below the stories (set before
        :attr:`stories`)."""
        self._query = ""
        self._follow_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        """Title and tree (the filter box is mounted when first asked for: the first frame
        does not show it)."""
        yield RegionTitle("Stories", id="stories-title")
        yield StoryTree(id="story-tree")

    def _filter_box(self) -> Input | None:
        """The filter box, if it was ever opened."""
        return next(iter(self.query("#story-filter").results(Input)), None)

    def watch_stories(self) -> None:
        """New stories: rebuild the tree, filtered, with the cursor on the current story."""
        self._show_tree()

    def watch_flags(self) -> None:
        """A story newly flagged: show it."""
        self._show_tree()

    def watch_current(self, story_id: str | None) -> None:
        """A new story previewed: put the cursor on it."""
        self.query_one(StoryTree).mark_current(story_id)

    def _show_tree(self) -> None:
        if self.stories is None:
            return
        shown = filter_stories(self.stories, self._query)
        tree = self.query_one(StoryTree)
        # The cursor stays where the user put it (it may be ahead of the preview, which
        # follows after a pause); else it goes to the story previewed.
        under = tree.cursor_node.data if tree.cursor_node is not None else None
        ids = {story.id for story in shown}
        keep = under.id if under is not None and under.id in ids else self.current
        tree.show_stories(shown, keep, self.flags, self.unreadable)

    def natural_width(self) -> int:
        """Columns that show every story's id and title whole (0 before the stories load)."""
        if not self.stories:
            return 0
        longest = max(len(short_id(story)) + 1 + len(story.title) for story in self.stories)
        return longest + TREE_CHROME

    def show_catalog(
        self, catalog: StoryCatalog, current: str | None, flags: dict[str, str] | None
    ) -> None:
        """Show ``catalog``'s stories with the cursor on ``current`` (``flags``: new marks;
        None keeps them)."""
        if flags is not None:
            self.set_reactive(StoriesPane.flags, flags)
        # The cursor's story first: the tree is rebuilt with the cursor on it.
        self.current = current
        self.unreadable = catalog.unreadable
        self.stories = catalog.stories

    def fit_width(self, total: int, *, shared: bool) -> None:
        """Beside the other regions (``shared``) of a ``total``-column screen, widen to the
        titles, up to a share of it; otherwise (narrow, or alone) the stylesheet's widths
        hold."""
        styles = self.styles
        if not shared or total == 0:
            styles.clear_rule("width")
            styles.clear_rule("max_width")
            return
        least, most = (round(total * share) for share in STORIES_SHARE)
        styles.width = styles.max_width = max(least, min(self.natural_width(), most))

    def focus_tree(self) -> None:
        """Put the focus on the story tree."""
        self.query_one(StoryTree).focus()

    # ---------------------------------------------------------------- the filter

    def open_filter(self) -> None:
        """Show the filter box and put the focus in it."""
        box = self._filter_box()
        if box is None:
            box = Input(placeholder="filter stories…", id="story-filter")
            self.mount(box, before=self.query_one(StoryTree))
        box.display = True
        box.focus()

    def close_filter(self) -> None:
        """Clear and hide the filter box (if it is open) and go back to the tree, its cursor
        on the story it was on."""
        box = self._filter_box()
        if box is not None and box.display:
            # Cleared here rather than through Input.Changed (which comes later), so the tree
            # is rebuilt whole before the cursor's story can be lost.
            with box.prevent(Input.Changed):
                box.value = ""
            self._query = ""
            self._show_tree()
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
