"""What the Stories region's tree holds: one node per line (a group or a story under it),
and a story's id as shown under its group."""

from __future__ import annotations

from collections.abc import Callable

from promptdeck.core.stories import Story
from rich.segment import Segment
from rich.text import Text


class StoryNode:
    """One line of the tree: a group (an epic, a change, the entries that could not be read),
    or a story or an unreadable entry under it.

    Attributes:
        label: the text drawn (a group's title; a story's id and title, a flag after it).
        data: the story (None for a group or an unreadable entry).
        parent: the group over it (the root for a group).
        children: the lines under a group.
        allow_expand: a group, which folds.
        is_expanded: a group shows its children.
        line: the node's line in the tree as laid out (-1 while folded away).

    Args:
        relayout: lays the tree out again (a group folded or opened).
    """

    __slots__ = (
        "_relayout",
        "allow_expand",
        "children",
        "data",
        "index",
        "is_expanded",
        "label",
        "line",
        "parent",
        "segments",
    )

    def __init__(
        self,
        relayout: Callable[[], None],
        label: Text,
        data: Story | None = None,
        parent: StoryNode | None = None,
        *,
        allow_expand: bool = False,
    ) -> None:
        self._relayout = relayout
        self.label = label
        self.data = data
        self.parent = parent
        self.children: list[StoryNode] = []
        self.allow_expand = allow_expand
        self.is_expanded = allow_expand
        self.line = -1
        self.index = 0
        """Its place among its parent's children."""
        self.segments: list[Segment] | None = None
        """The label drawn in its own styles, once drawn."""

    @property
    def is_collapsed(self) -> bool:
        """A group folded away."""
        return not self.is_expanded

    @property
    def is_last(self) -> bool:
        """The last child of its parent."""
        return self.parent is None or self.index == len(self.parent.children) - 1

    @property
    def siblings(self) -> list[StoryNode]:
        """Its parent's children, itself included."""
        return self.parent.children if self.parent is not None else [self]

    @property
    def next_sibling(self) -> StoryNode | None:
        """The node after it under the same parent, if any."""
        siblings = self.siblings
        return siblings[self.index + 1] if self.index + 1 < len(siblings) else None

    @property
    def previous_sibling(self) -> StoryNode | None:
        """The node before it under the same parent, if any."""
        return self.siblings[self.index - 1] if self.index > 0 else None

    def add(self, label: Text, data: Story | None = None, *, group: bool = False) -> StoryNode:
        """A new child (a group when ``group``); the tree is laid out again by the caller."""
        node = StoryNode(self._relayout, label, data, self, allow_expand=group)
        node.index = len(self.children)
        self.children.append(node)
        return node

    def expand(self) -> None:
        """Show the group's children."""
        self._fold(True)

    def collapse(self) -> None:
        """Fold the group's children away."""
        self._fold(False)

    def toggle(self) -> None:
        """Fold an open group, open a folded one."""
        self._fold(not self.is_expanded)

    def _fold(self, expanded: bool) -> None:
        if self.allow_expand and self.is_expanded != expanded:
            self.is_expanded = expanded
            self._relayout()

    def __repr__(self) -> str:
        return f"StoryNode({self.label.plain!r})"


def short_id(story: Story) -> str:
    """The id as shown under its group: ``1-2``; ``:2`` for an OpenSpec task group (the change
    is the node above it)."""
    if story.source == "openspec" and ":" in story.id:
        return ":" + story.id.rsplit(":", 1)[1]
    return story.id
