"""The footer: the keys that matter most first, as many as fit the width, never cut."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

KEY_GAP = 1
"""Columns between two keys in the compact footer (``FooterKey`` margin)."""


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


class KeyFooter(Footer):
    """A compact footer that shows the most important keys first and only whole entries.

    Args:
        priority: binding ids, most important first; keys not listed follow in the screen's
            order. A user keymap changes the keys shown, not the order.
    """

    def __init__(self, priority: Sequence[str] = (), *, id: str | None = None) -> None:
        super().__init__(compact=True, show_command_palette=False, id=id)
        self.priority = tuple(priority)
        self.shown: list[FooterItem] = []
        """The entries on screen now (for tests and the help screen)."""
        self._width = 0
        self._composed: tuple[tuple[str, str, str, str, bool, str], ...] | None = None

    def compose(self) -> ComposeResult:
        """The entries that fit, each key clickable: from the first frame on (the screen's
        keys are known before its focus is; Textual's footer waits for the focus, a frame
        later, and the first frame would show no keys)."""
        entries = self._entries()
        self._composed = entries
        for key, shown, description, action, disabled, tooltip in entries:
            yield FooterKey(
                key, shown, description, action, disabled=disabled, tooltip=tooltip
            ).data_bind(compact=Footer.compact)

    def _entries(self) -> tuple[tuple[str, str, str, str, bool, str], ...]:
        """What :meth:`compose` shows now: for each key, its key, how it reads, its words, its
        action, whether it is disabled, and its tooltip."""
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
        entries: list[tuple[str, str, str, str, bool, str]] = []
        for item in self.shown:
            # A group reads ``[ ] Phase``: each key its own clickable entry, the last one
            # carrying the words.
            last = len(item.bindings) - 1
            for index, (binding, key) in enumerate(zip(item.bindings, item.keys, strict=True)):
                entries.append(
                    (
                        binding.key,
                        key,
                        item.description if index == last else "",
                        binding.action,
                        not enabled.get(binding.action, True),
                        binding.tooltip or binding.description,
                    )
                )
        return tuple(entries)

    def bindings_changed(self, screen: Screen[object]) -> None:
        """The screen's keys may have changed (they are refreshed after every action and focus
        change): compose the footer again only when what it shows would differ. Composing
        mounts a widget per key, which took longer than the rest of a preview update."""
        self._bindings_ready = True
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        if self._entries() != self._composed:
            self.call_after_refresh(self.recompose)

    def on_resize(self, event: events.Resize) -> None:
        """A new width may fit more or fewer keys (the same keys are not composed again)."""
        if event.size.width != self._width:
            self._width = event.size.width
            if self._bindings_ready and self._entries() != self._composed:
                self.call_after_refresh(self.recompose)

    def labels(self) -> list[str]:
        """The entries shown, as they read (``r Run``, ``[ ] Phase``)."""
        return [" ".join((*item.keys, item.description)).strip() for item in self.shown]
