"""The Stories region's tree: epics → stories (BMAD) and changes → stories (OpenSpec).

One widget draws every line, as Textual's ``Tree`` draws them (the same guides, icons, cursor,
hover and component classes), with the same keys and mouse. ``Tree`` invalidates its lines and
asks for a layout at every node added, splits every label it is given, and composes each
line's styles afresh through Rich text; with a plan of two hundred stories the tree took some
20 ms of a fresh app's first frame on a 2-core machine, and again at every reload of the plan.
Here the groups and their stories are laid out once per change, each label's own styles are
resolved once, and a drawing pass works out the styles its lines share once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from promptdeck.core.stories import (
    STATUS_MARKS,
    Story,
    UnreadableEntry,
    group_stories,
    status_legend,
)
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size, clamp
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...core.terminal import printable_line
from .story_nodes import StoryNode, short_id

__all__ = ["GUIDE_DEPTH", "StoryNode", "StoryTree", "short_id"]

_STATUS_COMPONENT = {
    "done": "story-tree--done",
    "in-progress": "story-tree--active",
    "review": "story-tree--active",
}

GUIDE_DEPTH = 2
"""Cells a story is indented under its group (the guide ``├ `` or ``└ ``)."""

_GUIDES = {"default": ("├ ", "└ "), "bold": ("┣ ", "┗ "), "double": ("╠ ", "╚ ")}
"""The guide before a story (``cross``, ``terminator`` for the group's last), as Textual's
tree draws it at this depth; bold and double-underlined guide styles take their own lines."""

TOGGLE_STYLE = Style.from_meta({"toggle": True})
"""Marks a group's icon: a click on it folds the group without selecting it."""


class _Pass:
    """What every line of one drawing pass shares: the tree's styles, its focus, the hovered
    node (Textual's tree worked these out again for every line)."""

    __slots__ = (
        "base",
        "cursor",
        "focused",
        "guides",
        "hidden",
        "highlight",
        "hover_style",
        "hovered",
        "label",
    )

    def __init__(self, tree: StoryTree) -> None:
        style = tree.get_component_rich_style
        self.base: Style = tree.rich_style
        self.focused = tree.has_focus
        self.hovered = tree.get_node_at_line(tree.hover_line) if tree.hover_line >= 0 else None
        self.hover_style = style("tree--highlight-line")
        self.label = style("tree--label", partial=True)
        self.highlight = style("tree--highlight", partial=True)
        self.cursor = style("tree--cursor", partial=False)
        guide = style("tree--guides", partial=True)
        self.guides = (
            guide,
            guide + style("tree--guides-hover", partial=True),
            guide + style("tree--guides-selected", partial=True),
        )
        self.hidden = tuple(
            tree.get_component_styles(name).color.a == 0
            for name in ("tree--guides", "tree--guides-hover", "tree--guides-selected")
        )


class StoryTree(ScrollView, can_focus=True):
    """Groups and their stories, with status marks; Enter on a story selects it.

    Keys and mouse as Textual's tree: up/down, page up/down, home/end move the cursor; Enter
    (or a click) selects a story or folds a group; space folds; a click on a group's icon
    folds it; shift+arrows move between groups and siblings; shift+space on a group folds all
    groups (or opens them all when all are folded).
    """

    ALLOW_SELECT = False
    """No mouse text selection in the tree (as Textual's): a drag or a double click picks
    stories."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("shift+left", "cursor_parent", "Cursor to parent", show=False),
        Binding("shift+right", "cursor_parent_next_sibling", "Cursor to next ancestor", show=False),
        Binding("shift+up", "cursor_previous_sibling", "Cursor to previous sibling", show=False),
        Binding("shift+down", "cursor_next_sibling", "Cursor to next sibling", show=False),
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("space", "toggle_node", "Toggle", show=False),
        Binding("shift+space", "toggle_expand_all", "Expand or collapse all", show=False),
        Binding("up", "cursor_up", "Cursor Up", show=False),
        Binding("down", "cursor_down", "Cursor Down", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tree--cursor",
        "tree--guides",
        "tree--guides-hover",
        "tree--guides-selected",
        "tree--highlight",
        "tree--highlight-line",
        "tree--label",
        "story-tree--done",
        "story-tree--active",
        "story-tree--pending",
    }

    # Textual's tree's look (its component classes, as its stylesheet sets them), then ours.
    DEFAULT_CSS = """
    StoryTree {
        background: $surface;
        color: $foreground;
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
        & > .tree--label {}
        & > .tree--guides { color: $surface-lighten-2; }
        & > .tree--guides-hover { color: $surface-lighten-2; }
        & > .tree--guides-selected { color: $block-cursor-blurred-background; }
        & > .tree--cursor {
            text-style: $block-cursor-blurred-text-style;
            background: $block-cursor-blurred-background;
        }
        & > .tree--highlight {}
        & > .tree--highlight-line { background: $block-hover-background; }
        &:focus {
            background-tint: $foreground 5%;
            & > .tree--cursor {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
            & > .tree--guides { color: $surface-lighten-3; }
            & > .tree--guides-hover { color: $surface-lighten-3; }
            & > .tree--guides-selected { color: $block-cursor-background; }
        }
        &:light {
            & > .tree--guides { color: $surface-darken-1; }
            & > .tree--guides-hover { color: $block-cursor-background; }
            & > .tree--guides-selected { color: $block-cursor-background; }
        }
        & > .story-tree--done { color: $success; }
        & > .story-tree--active { color: $warning; }
        & > .story-tree--pending { color: $text-muted; }
    }
    StoryTree:ansi {
        color: ansi_default;
        & > .tree--guides { color: $ansi-background; }
        &:nocolor > .tree--cursor { text-style: reverse; }
    }
    """

    ICON_NODE = "▶ "
    """A folded group's icon."""
    ICON_NODE_EXPANDED = "▼ "
    """An open group's icon."""

    cursor_line: var[int] = var(-1, always_update=True)
    """The line with the cursor (-1: none)."""
    hover_line: var[int] = var(-1)
    """The line under the mouse pointer (-1: none)."""

    class StorySelected(Message):
        """The user chose a story (Enter or click on it)."""

        def __init__(self, story: Story) -> None:
            super().__init__()
            self.story = story

    class StoryHighlighted(Message):
        """The cursor moved onto a story (the preview follows it after a short pause)."""

        def __init__(self, story: Story) -> None:
            super().__init__()
            self.story = story

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.root = StoryNode(self._lay_out, Text("Stories"), allow_expand=True)
        """The groups are its children (the root itself is never drawn)."""
        self._lines: list[StoryNode] = []
        self._story_nodes: dict[str, StoryNode] = {}
        self._cursor_node: StoryNode | None = None
        self._pass: _Pass | None = None
        """The styles of the drawing pass under way (see :meth:`render_lines`)."""
        self.tooltip = status_legend()

    # ---------------------------------------------------------------- content

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
        under = self._cursor_node.data if self._cursor_node is not None else None
        self.root = StoryNode(self._lay_out, self.root.label, allow_expand=True)
        self._story_nodes = {}
        for group in group_stories(stories):
            title = Text(printable_line(group.label), style="bold")
            branch = self.root.add(title, group=True)
            for story in group.stories:
                label = Text.assemble(
                    (printable_line(short_id(story)), "bold"), " ", printable_line(story.title)
                )
                if story.id in flags:
                    label.append(" ⚠ " + printable_line(flags[story.id]), "bold")
                self._story_nodes[story.id] = branch.add(label, story)
        if unreadable:
            title = Text(f"Could not be read ({len(unreadable)})", style="bold dim")
            branch = self.root.add(title, group=True)
            for entry in unreadable:
                branch.add(Text(printable_line(f"{entry.where} — {entry.reason}"), style="dim"))
        if current not in self._story_nodes:
            # The story under the cursor is filtered out: the cursor goes to the first story
            # shown (the preview follows it), never to a row that stays unannounced.
            current = next(iter(self._story_nodes), None)
        # The cursor's story keeps the cursor through the rebuild: nothing is announced for
        # a story that did not move.
        self._cursor_node = self._story_nodes.get(under.id) if under is not None else None
        self._lay_out()
        if current is not None:
            self.mark_current(current)

    def node_for(self, story_id: str) -> StoryNode | None:
        """The node showing ``story_id``, if it is shown."""
        return self._story_nodes.get(story_id)

    @property
    def cursor_node(self) -> StoryNode | None:
        """The node under the cursor, if any."""
        return self._cursor_node

    @property
    def last_line(self) -> int:
        """The index of the last line laid out."""
        return len(self._lines) - 1

    def get_node_at_line(self, line: int) -> StoryNode | None:
        """The node drawn on ``line``, if any."""
        return self._lines[line] if 0 <= line < len(self._lines) else None

    def mark_current(self, story_id: str | None) -> None:
        """Move the cursor to the story shown in the preview."""
        node = self._story_nodes.get(story_id or "")
        if node is not None:
            if node.line < 0 and node.parent is not None:
                node.parent.expand()  # the story shown is never folded away
            self.move_cursor(node)

    def move_cursor(self, node: StoryNode | None, animate: bool = False) -> None:
        """Put the cursor on ``node`` (None: no cursor) and scroll it into view."""
        previous = self.cursor_line
        self.cursor_line = -1 if node is None else node.line
        if node is not None and node.line >= 0:
            # Once laid out: a tree filled before its first layout has no size to scroll in.
            far = animate and abs(self.cursor_line - previous) > 1
            self.call_after_refresh(self._scroll_to_cursor, far)

    def _scroll_to_cursor(self, animate: bool) -> None:
        # The cursor's line as it is then: a fold or a reload in between moves it.
        if self.cursor_line >= 0:
            self.scroll_to_line(self.cursor_line, animate)

    def _lay_out(self) -> None:
        """The lines, from the groups and whether each is open; the cursor stays on its node
        (or on the group that folded it away)."""
        lines: list[StoryNode] = []
        for group in self.root.children:
            group.line = len(lines)
            lines.append(group)
            for child in group.children:
                child.line = len(lines) if group.is_expanded else -1
                if group.is_expanded:
                    lines.append(child)
        self._lines = lines
        width = max((self._line_width(node) for node in lines), default=self.size.width)
        self.virtual_size = Size(width, len(lines))
        cursor = self._cursor_node
        shown = cursor if cursor is None or cursor.line >= 0 else cursor.parent
        if shown is not None and shown.line >= 0:
            self.cursor_line = shown.line
        else:
            # No cursor: never a line highlighted with no node under it (the validator would
            # clamp -1 to the first line, hence no watcher).
            self.set_reactive(StoryTree.cursor_line, -1)
        self.refresh()

    # ---------------------------------------------------------------- drawing

    def label_segments(self, node: StoryNode, line_style: Style, style: Style) -> list[Segment]:
        """A node's label as drawn on a line styled ``line_style``, the label's own text
        in ``style`` too: a story's status mark (coloured by the theme at every drawing), a
        group's icon (a click on it folds the group), then the label."""
        segments = []
        story = node.data
        if story is not None:
            component = _STATUS_COMPONENT.get(story.status, "story-tree--pending")
            mark_style = self.get_component_rich_style(component, partial=True)
            mark = STATUS_MARKS.get(story.status, "?") + " "
            segments.append(Segment(mark, line_style + mark_style))
        if node.allow_expand:
            icon = self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE
            segments.append(Segment(icon, line_style + TOGGLE_STYLE))
        if node.segments is None:
            # The label's own styles (a bold id, a dim entry) resolved once per node.
            node.segments = list(node.label.render(self.app.console, end=""))
        for text, own, _ in node.segments:
            segments.append(Segment(text, line_style + own + style if own else line_style + style))
        return segments

    def get_label_width(self, node: StoryNode) -> int:
        """The label's width as :meth:`label_segments` draws it, without drawing it."""
        width = node.label.cell_len
        if node.allow_expand:
            width += cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        if node.data is not None:
            width += cell_len(STATUS_MARKS.get(node.data.status, "?") + " ")
        return width

    def _line_width(self, node: StoryNode) -> int:
        indent = GUIDE_DEPTH if node.parent is not self.root else 0
        return indent + self.get_label_width(node)

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw the lines in ``crop``, with the styles they share worked out once."""
        self._pass = _Pass(self)
        try:
            return super().render_lines(crop)
        finally:
            self._pass = None

    def render_line(self, y: int) -> Strip:
        """One line of the widget (``y`` counts from the top of the view)."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        drawing = self._pass or _Pass(self)  # Textual draws in passes; a lone line too
        node = self.get_node_at_line(y + scroll_y)
        if node is None:
            return Strip.blank(width, drawing.base)
        return self._draw(node, y + scroll_y, drawing).crop(scroll_x, scroll_x + width)

    def _draw(self, node: StoryNode, line: int, drawing: _Pass) -> Strip:
        """One node's line, as Textual's tree draws it at this depth: the guide (in the
        hover or selected guide style when its group is hovered or under a focused cursor),
        the label, the line padded to the tree's width."""
        group = node if node.parent is self.root else node.parent
        hovered = drawing.hovered
        over = hovered is not None and (hovered is node or hovered is group)
        line_style = (drawing.hover_style if over else drawing.base) + Style(meta={"line": line})
        segments = []
        cells = 0
        if group is not node:
            which = 0
            if hovered is group:
                which = 1
            if group is self._cursor_node and drawing.focused:
                which = 2
            guide_style = drawing.guides[which]
            cross, terminator = self._guide_chars(guide_style, drawing.hidden[which])
            segments.append(
                Segment(terminator if node.is_last else cross, line_style + guide_style)
            )
            cells = GUIDE_DEPTH
        label_style = drawing.label
        if self.hover_line == line:
            label_style += drawing.highlight
        if self.cursor_line == line:
            label_style += drawing.cursor
        segments.extend(self.label_segments(node, line_style, label_style))
        cells += self.get_label_width(node)
        pad = max(self.virtual_size.width, self.size.width) - cells
        if pad > 0:
            segments.append(Segment(" " * pad, line_style))
        return Strip(segments, cells + max(pad, 0))

    @staticmethod
    def _guide_chars(style: Style, hidden: bool) -> tuple[str, str]:
        if hidden:
            return "  ", "  "
        kind = "bold" if style.bold else "double" if style.underline2 else "default"
        return _GUIDES[kind]

    def notify_style_update(self) -> None:
        """A new theme or focus: every line is drawn again."""
        super().notify_style_update()
        self.refresh()

    # ---------------------------------------------------------------- the cursor

    def validate_cursor_line(self, value: int) -> int:
        """The cursor stays on a line of the tree."""
        return clamp(value, 0, len(self._lines) - 1) if self._lines else -1

    def watch_cursor_line(self, previous: int, line: int) -> None:
        """Redraw what the cursor left and what it reached; a story reached is announced."""
        node = self.get_node_at_line(line)
        before, self._cursor_node = self._cursor_node, node
        if previous == line and before is node:
            return
        for old in (before, node):
            if old is not None:
                self._refresh_node(old)
        story = node.data if node is not None else None
        if story is not None and before is not node:
            self.post_message(self.StoryHighlighted(story))

    def watch_hover_line(self, previous: int, line: int) -> None:
        """Redraw the lines the pointer left and reached (a group with its stories)."""
        for at in (previous, line):
            node = self.get_node_at_line(at)
            if node is not None:
                self._refresh_node(node)

    def _refresh_node(self, node: StoryNode) -> None:
        """Redraw ``node``'s line and, for a group, its stories' (their guides follow it)."""
        first = node.line
        last = node.children[-1].line if node.children and node.is_expanded else first
        if first < 0:
            return
        top = self.scroll_offset.y
        self.refresh(Region(0, first - top, self.size.width, last - first + 1))

    def scroll_to_line(self, line: int, animate: bool = True) -> None:
        """Scroll until ``line``'s label is in view."""
        node = self.get_node_at_line(line)
        if node is None:
            return
        indent = GUIDE_DEPTH if node.parent is not self.root else 0
        self.scroll_to_region(
            Region(indent, line, self.get_label_width(node), 1),
            animate=animate,
            force=True,
            origin_visible=False,
            x_axis=False,
        )

    # ---------------------------------------------------------------- keys and mouse

    def action_cursor_up(self) -> None:
        """The cursor up one line (from none: to the last)."""
        self.cursor_line = self.last_line if self.cursor_line == -1 else self.cursor_line - 1
        self.scroll_to_line(self.cursor_line, animate=False)

    def action_cursor_down(self) -> None:
        """The cursor down one line (from none: to the first)."""
        self.cursor_line = 0 if self.cursor_line == -1 else self.cursor_line + 1
        self.scroll_to_line(self.cursor_line, animate=False)

    def action_page_down(self) -> None:
        """The cursor down a page."""
        if self.cursor_line == -1:
            self.cursor_line = 0
        self.cursor_line += self.scrollable_content_region.height - 1
        self.scroll_to_line(self.cursor_line)

    def action_page_up(self) -> None:
        """The cursor up a page."""
        if self.cursor_line == -1:
            self.cursor_line = self.last_line
        self.cursor_line -= self.scrollable_content_region.height - 1
        self.scroll_to_line(self.cursor_line)

    def action_scroll_home(self) -> None:
        """The cursor to the first line."""
        self.cursor_line = 0
        self.scroll_to_line(self.cursor_line)

    def action_scroll_end(self) -> None:
        """The cursor to the last line."""
        self.cursor_line = self.last_line
        self.scroll_to_line(self.cursor_line)

    def action_select_cursor(self) -> None:
        """Select the node under the cursor: a story is chosen, a group folds or opens."""
        node = self.get_node_at_line(self.cursor_line)
        if node is None:
            return
        if node.data is not None:
            self.post_message(self.StorySelected(node.data))
        else:
            node.toggle()

    def action_toggle_node(self) -> None:
        """Fold or open the group under the cursor."""
        node = self.get_node_at_line(self.cursor_line)
        if node is not None:
            node.toggle()

    def action_toggle_expand_all(self) -> None:
        """Open every group beside the cursor's if all are folded, else fold them all."""
        cursor = self._cursor_node
        if cursor is None or cursor.parent is None:
            return
        siblings = cursor.siblings
        expand = all(node.is_collapsed for node in siblings)
        for node in siblings:
            if node.allow_expand:
                node.is_expanded = expand
        self._lay_out()
        self.call_after_refresh(self.move_cursor, cursor)

    def action_cursor_parent(self) -> None:
        """The cursor to the group over it."""
        cursor = self._cursor_node
        if cursor is not None and cursor.parent is not None and cursor.parent is not self.root:
            self.move_cursor(cursor.parent, animate=True)

    def action_cursor_parent_next_sibling(self) -> None:
        """The cursor to the group after its own."""
        cursor = self._cursor_node
        if cursor is not None and cursor.parent is not None and cursor.parent is not self.root:
            self.move_cursor(cursor.parent.next_sibling, animate=True)

    def action_cursor_previous_sibling(self) -> None:
        """The cursor to the line before it at its depth (or to its group)."""
        cursor = self._cursor_node
        if cursor is None:
            return
        previous = cursor.previous_sibling
        if previous is None and cursor.parent is not self.root:
            previous = cursor.parent
        if previous is not None:
            self.move_cursor(previous, animate=True)

    def action_cursor_next_sibling(self) -> None:
        """The cursor to the line after it at its depth (or to the next group)."""
        cursor = self._cursor_node
        if cursor is None:
            return
        following = cursor.next_sibling
        if following is None and cursor.parent is not None and cursor.parent is not self.root:
            following = cursor.parent.next_sibling
        if following is not None:
            self.move_cursor(following, animate=True)

    def _on_mouse_move(self, event: events.MouseMove) -> None:
        meta = event.style.meta
        self.hover_line = meta["line"] if meta and "line" in meta else -1

    def _on_leave(self, _: events.Leave) -> None:
        self.hover_line = -1

    async def _on_click(self, event: events.Click) -> None:
        meta = event.style.meta
        if "line" not in meta:
            return
        line = meta["line"]
        if meta.get("toggle", False):
            node = self.get_node_at_line(line)
            if node is not None:
                node.toggle()
        else:
            self.cursor_line = line
            await self.run_action("select_cursor")
