"""The footer: the keys that matter most first, as many as fit the width, never cut.

One widget draws the whole line (a widget per key made the first frame mount, style and lay
out two dozen widgets more)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from promptdeck.core.lean_dataclass import dataclass
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

KEY_GAP = 1
"""Columns between two keys in the footer."""


@dataclass(frozen=True)
class FooterItem:
    """One entry of the footer: one key, or a group of keys sharing a description.

    Attributes:
        bindings: the bindings shown (one, or several of one group).
        keys: how each key reads (after the user's keymap).
        description: the words after the key(s).
        rank: the position in the priority order (lower shows first).
    """

    bindings: tuple[Binding, ...]
    keys: tuple[str, ...]
    description: str
    rank: int

    @property
    def width(self) -> int:
        """Columns this entry takes, its gap included."""
        keys = " ".join(self.keys)
        return len(keys) + (1 + len(self.description) if self.description else 0) + KEY_GAP


def rank_of(binding: Binding, priority: Sequence[str]) -> int:
    """Where ``binding`` comes in ``priority`` (binding ids); unlisted ones come after, in order."""
    if binding.id in priority:
        return priority.index(binding.id or "")
    return len(priority)


def footer_items(
    bindings: Sequence[tuple[Binding, str]], priority: Sequence[str]
) -> list[FooterItem]:
    """Group ``(binding, key shown)`` pairs into footer entries, most important first.

    Bindings of one :class:`Binding.Group` become one entry (``[ ] Phase``); the rest keep
    their own description. The sort is stable, so unlisted bindings keep the screen's order.
    """
    items: list[FooterItem] = []
    grouped: dict[str, int] = {}
    for binding, key in bindings:
        group = binding.group
        if group is not None and group.description in grouped:
            index = grouped[group.description]
            item = items[index]
            items[index] = FooterItem(
                (*item.bindings, binding),
                (*item.keys, key),
                item.description,
                min(item.rank, rank_of(binding, priority)),
            )
            continue
        if group is not None:
            grouped[group.description] = len(items)
        description = group.description if group is not None else binding.description
        items.append(FooterItem((binding,), (key,), description, rank_of(binding, priority)))
    return sorted(items, key=lambda item: item.rank)


def fit_items(items: Sequence[FooterItem], width: int) -> list[FooterItem]:
    """The entries that fit in ``width`` columns, taken in order: an entry that does not fit
    is left out whole (never cut), and a smaller one after it may still fit."""
    kept: list[FooterItem] = []
    used = 0
    for item in items:
        if used + item.width <= width:
            kept.append(item)
            used += item.width
    return kept


@dataclass(frozen=True)
class FooterEntry:
    """One key as the footer draws it (a group's keys are one entry each, the last one
    carrying the words).

    Attributes:
        key: the key pressed when the entry is clicked.
        shown: how the key reads (after the user's keymap).
        description: the words after the key (empty for a group's first keys).
        action: the binding's action.
        disabled: whether the action cannot run now (drawn dim; a click rings the bell).
        tooltip: what the entry explains under the pointer.
    """

    key: str
    shown: str
    description: str
    action: str
    disabled: bool
    tooltip: str

    @property
    def width(self) -> int:
        """Columns the entry's text takes (the gap after it not included)."""
        return len(self.shown) + (1 + len(self.description) if self.description else 0)


class KeyFooter(Widget):
    """A compact footer that shows the most important keys first and only whole entries.

    Args:
        priority: binding ids, most important first; keys not listed follow in the screen's
            order. A user keymap changes the keys shown, not the order.
    """

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "key-footer--key",
        "key-footer--description",
        "key-footer--hover",
    }
    DEFAULT_CSS = """
    KeyFooter {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        text-wrap: nowrap;
        .key-footer--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .key-footer--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .key-footer--hover {
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
    }
    """

    def __init__(self, priority: Sequence[str] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.priority = tuple(priority)
        self.shown: list[FooterItem] = []
        """The entries on screen now (for tests and the help screen)."""
        self.entries: tuple[FooterEntry, ...] = ()
        """The keys drawn now, left to right."""
        self._width = 0
        self._hover: int | None = None

    def on_mount(self) -> None:
        """The keys from the first frame on: the screen's keys are known before its focus is
        (Textual's footer waits for the focus, a frame later, and the first frame would show no
        keys)."""
        self.entries = self._entries()
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)

    def on_unmount(self) -> None:
        """Stop listening to the screen's keys."""
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _entries(self) -> tuple[FooterEntry, ...]:
        """What the footer shows now, left to right."""
        active = self.screen.active_bindings
        seen: set[str] = set()
        pairs: list[tuple[Binding, str]] = []
        for _node, binding, _enabled, _tooltip in active.values():
            # One entry per action: a binding with several keys is shown by its first.
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            pairs.append((binding, self.app.get_key_display(binding)))
        enabled = {b.action: e for _n, b, e, _t in active.values()}
        width = self.size.width or self.app.size.width
        self.shown = fit_items(footer_items(pairs, self.priority), width)
        entries: list[FooterEntry] = []
        for item in self.shown:
            # A group reads ``[ ] Phase``: each key its own clickable entry, the last one
            # carrying the words.
            last = len(item.bindings) - 1
            for index, (binding, key) in enumerate(zip(item.bindings, item.keys, strict=True)):
                entries.append(
                    FooterEntry(
                        binding.key,
                        key,
                        item.description if index == last else "",
                        binding.action,
                        not enabled.get(binding.action, True),
                        binding.tooltip or binding.description,
                    )
                )
        return tuple(entries)

    def _show(self, entries: tuple[FooterEntry, ...]) -> None:
        """Draw ``entries`` when they differ from what is drawn."""
        if entries != self.entries:
            self.entries = entries
            self._hover = None
            self.refresh()

    def bindings_changed(self, screen: Screen[object]) -> None:
        """The screen's keys may have changed (they are refreshed after every action and focus
        change): draw the footer again only when what it shows would differ."""
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        self._show(self._entries())

    def on_resize(self, event: events.Resize) -> None:
        """A new width may fit more or fewer keys."""
        if event.size.width != self._width:
            self._width = event.size.width
            self._show(self._entries())

    def render(self) -> Text:
        """The keys on one line: the key in bold, a space, the words, a gap before the next."""
        key_style = self.get_component_rich_style("key-footer--key")
        description_style = self.get_component_rich_style("key-footer--description")
        base = self.rich_style
        line = Text(no_wrap=True, end="")
        for index, entry in enumerate(self.entries):
            if index:
                line.append(" " * KEY_GAP)
            start = len(line)
            line.append(entry.shown, key_style)
            if entry.description:
                line.append(" " + entry.description, description_style)
            entry_style = base + Style(dim=True) if entry.disabled else base
            line.stylize_before(entry_style, start, len(line))
            if index == self._hover:
                hover = self.get_component_rich_style("key-footer--hover")
                line.stylize(Style(bgcolor=hover.bgcolor), start, len(line))
        line.stylize_before(base)
        return line

    def entry_at(self, x: int) -> int | None:
        """The index of the entry drawn at column ``x``, or ``None`` in a gap or past the end."""
        start = 0
        for index, entry in enumerate(self.entries):
            if start <= x < start + entry.width:
                return index
            start += entry.width + KEY_GAP
        return None

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Light the entry under the pointer and explain it."""
        index = self.entry_at(event.x)
        if index != self._hover:
            self._hover = index
            self.tooltip = self.entries[index].tooltip if index is not None else None
            self.refresh()

    def on_leave(self, event: events.Leave) -> None:
        """The pointer left: no entry is lit."""
        if self._hover is not None:
            self._hover = None
            self.tooltip = None
            self.refresh()

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """A click on an entry presses its key (rings the bell when its action cannot run)."""
        index = self.entry_at(event.x)
        if index is None:
            return
        entry = self.entries[index]
        if entry.disabled:
            self.app.bell()
        else:
            self.app.simulate_key(entry.key)

    def labels(self) -> list[str]:
        """The entries shown, as they read (``r Run``, ``[ ] Phase``)."""
        return [" ".join((*item.keys, item.description)).strip() for item in self.shown]
