"""The Stories region's tree: epics → stories (BMAD) and changes → stories (OpenSpec)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from promptdeck.core.stories import (
    STATUS_MARKS,
    Story,
    UnreadableEntry,
    group_stories,
    status_legend,
)
from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ...core.terminal import printable_line

_STATUS_COMPONENT = {
    "done": "story-tree--done",
    "in-progress": "story-tree--active",
    "review": "story-tree--active",
}


class StoryTree(Tree[Story | None]):
    """Groups and their stories, with status marks; Enter on a story selects it."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "story-tree--done",
        "story-tree--active",
        "story-tree--pending",
    }

    DEFAULT_CSS = """
    StoryTree {
        background: $surface;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
        & > .story-tree--done { color: $success; }
        & > .story-tree--active { color: $warning; }
        & > .story-tree--pending { color: $text-muted; }
    }
    """

    @dataclass
    class StorySelected(Message):
        """The user chose a story (Enter or click on it)."""

        story: Story

    @dataclass
    class StoryHighlighted(Message):
        """The cursor moved onto a story (the preview follows it after a short pause)."""

        story: Story

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("Stories", id=id)
        self.show_root = False
        self.guide_depth = 2
        self._story_nodes: dict[str, TreeNode[Story | None]] = {}
        self._cursor_story: str | None = None
        """The story the cursor is to go to once the tree is laid out."""
        self.tooltip = status_legend()

    def show_stories(
        self,
        stories: Sequence[Story],
        current: str | None = None,
        flags: Mapping[str, str] | None = None,
        unreadable: Sequence[UnreadableEntry] = (),
    ) -> None:
        """Rebuild the whole tree in one pass from ``stories`` and put the cursor on
        ``current`` when it is among them; ``flags``: story id → a short warning shown after
        its title (a status a run could not write back); plan entries that could not be read
        follow, greyed, each with its ``file:line`` and why (never silently dropped)."""
        flags = flags or {}
        self.clear()
        self._story_nodes = {}
        for group in group_stories(stories):
            branch = self.root.add(
                Text(printable_line(group.label), style="bold"), data=None, expand=True
            )
            for story in group.stories:
                label = Text.assemble(
                    (printable_line(short_id(story)), "bold"), " ", printable_line(story.title)
                )
                if story.id in flags:
                    label.append(" ⚠ " + printable_line(flags[story.id]), "bold")
                self._story_nodes[story.id] = branch.add_leaf(label, data=story)
        if unreadable:
            branch = self.root.add(
                Text(f"Could not be read ({len(unreadable)})", style="bold dim"),
                data=None,
                expand=True,
            )
            for entry in unreadable:
                branch.add_leaf(
                    Text(printable_line(f"{entry.where} — {entry.reason}"), style="dim"),
                    data=None,
                )
        if current not in self._story_nodes:
            # The story under the cursor is filtered out: the cursor goes to the first story
            # shown (the preview follows it), never to a row that stays unannounced.
            current = next(iter(self._story_nodes), None)
        if current is not None:
            # Node lines are known only once the tree has laid itself out again.
            self._cursor_story = current
            self.call_after_refresh(self._place_cursor, 3)

    def render_label(self, node: TreeNode[Story | None], base_style: Style, style: Style) -> Text:
        """Prefix a story with its status mark, coloured by the theme at every render."""
        text = super().render_label(node, base_style, style)
        story = node.data
        if story is None:
            return text
        component = _STATUS_COMPONENT.get(story.status, "story-tree--pending")
        mark_style = self.get_component_rich_style(component, partial=True)
        return Text.assemble((STATUS_MARKS.get(story.status, "?") + " ", mark_style), text)

    def get_label_width(self, node: TreeNode[Story | None]) -> int:
        """The label's width as :meth:`render_label` draws it, without drawing it: the tree
        asks for every node's width when it lays its lines out (hundreds at start)."""
        label = node.label
        width = label.cell_len if isinstance(label, Text) else cell_len(label)
        if node.allow_expand:
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
            width += cell_len(icon)
        if node.data is not None:
            width += cell_len(STATUS_MARKS.get(node.data.status, "?") + " ")
        return width

    def node_for(self, story_id: str) -> TreeNode[Story | None] | None:
        """The tree node showing ``story_id``, if it is shown."""
        return self._story_nodes.get(story_id)

    def mark_current(self, story_id: str | None) -> None:
        """Move the cursor to the story shown in the preview."""
        self._cursor_story = story_id
        self._place_cursor(3)

    def _place_cursor(self, attempts: int) -> None:
        # The story asked for last, whenever this runs: a placement still waiting for the
        # tree's layout never takes the cursor back to a story the preview has left.
        node = self._story_nodes.get(self._cursor_story or "")
        if node is None:
            return
        if node.line < 0:
            # The tree lays its lines out lazily (after a rebuild or a style change), when it
            # is next drawn; asking for its last line lays them out now. Waiting for refreshes
            # instead could give up on a busy screen and leave the cursor on another story,
            # which the next rebuild would then keep.
            _ = self.last_line
        if node.line < 0 and attempts > 0:
            # Still no line: its group is being laid out by a pending change.
            self.call_after_refresh(self._place_cursor, attempts - 1)
            return
        self.move_cursor(node)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Story | None]) -> None:
        """Turn the cursor landing on a leaf into :class:`StoryHighlighted`."""
        story = event.node.data
        if story is not None:
            event.stop()
            self.post_message(self.StoryHighlighted(story))

    def on_tree_node_selected(self, event: Tree.NodeSelected[Story | None]) -> None:
        """Turn a selected leaf into :class:`StorySelected`; groups just fold."""
        story = event.node.data
        if story is not None:
            event.stop()
            self.post_message(self.StorySelected(story))


def short_id(story: Story) -> str:
    """The id as shown under its group: ``1-2``; ``:2`` for an OpenSpec task group (the change
    is the node above it)."""
    if story.source == "openspec" and ":" in story.id:
        return ":" + story.id.rsplit(":", 1)[1]
    return story.id
