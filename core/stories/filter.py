"""Filtering and grouping the story list for the story tree: pure functions, no UI toolkit.

The tree is rebuilt in one pass from what these return, so filtering never edits nodes one
by one and can be tested without an app.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..lean_dataclass import dataclass
from .model import Story

STATUS_MARKS = {
    "backlog": "·",
    "ready-for-dev": "○",
    "in-progress": "◐",
    "review": "◎",
    "done": "✓",
}
"""The mark shown before a story for each status."""


def status_legend(separator: str = "\n") -> str:
    """What each status mark means: ``✓ done``, ``◐ in-progress`` …, in workflow order."""
    order = ("done", "review", "in-progress", "ready-for-dev", "backlog")
    return separator.join(f"{STATUS_MARKS[status]} {status}" for status in order)


@dataclass(frozen=True)
class StoryGroup:
    """An epic (BMAD) or a change (OpenSpec) with the stories shown under it."""

    source: str
    group: str
    title: str
    stories: tuple[Story, ...]

    @property
    def label(self) -> str:
        """``Epic 1 · Title`` or ``change add-auth · Title``."""
        kind = "change" if self.source == "openspec" else "Epic"
        head = f"{kind} {self.group}"
        return f"{head} · {self.title}" if self.title and self.title != self.group else head


def story_matches(story: Story, query: str) -> bool:
    """True when every word of ``query`` appears (case-insensitive) in the story's id, title,
    status, group or group title."""
    haystack = " ".join(
        (story.id, story.title, story.status, story.group, story.group_title, story.source)
    ).lower()
    return all(word in haystack for word in query.lower().split())


def filter_stories(stories: Iterable[Story], query: str) -> tuple[Story, ...]:
    """The stories matching ``query``, in their original order (all of them when blank)."""
    if not query.strip():
        return tuple(stories)
    return tuple(story for story in stories if story_matches(story, query))


def group_stories(stories: Sequence[Story]) -> tuple[StoryGroup, ...]:
    """Stories grouped by (source, group), groups in order of first appearance."""
    order: list[tuple[str, str]] = []
    members: dict[tuple[str, str], list[Story]] = {}
    titles: dict[tuple[str, str], str] = {}
    for story in stories:
        key = (story.source, story.group)
        if key not in members:
            order.append(key)
            members[key] = []
            titles[key] = story.group_title
        members[key].append(story)
    return tuple(
        StoryGroup(source, group, titles[(source, group)], tuple(members[(source, group)]))
        for source, group in order
    )
