"""Stories: what a story is (the model of stories, epics, tasks and the catalog that holds them),
the one key grammar every file match uses, a story's companions, and filtering for the tree.

Reading the project's plan into stories, and writing a story's status back to it, is the plan
room's (:mod:`promptdeck.core.plans`), one floor up: it makes these values.
:mod:`.keys` holds the key grammar; :mod:`.companions` tells a story's companions (its context,
retrospective, reports, reviews) from its own file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .companions import COMPANION_KINDS, companion_kind
    from .filter import STATUS_MARKS, filter_stories, group_stories, status_legend
    from .keys import normalize_key
    from .model import Companion, SkippedFile, Story, StoryCatalog, Task, UnreadableEntry

_HOMES = {
    "COMPANION_KINDS": ".companions",
    "companion_kind": ".companions",
    "filter_stories": ".filter",
    "group_stories": ".filter",
    "status_legend": ".filter",
    "STATUS_MARKS": ".filter",
    "normalize_key": ".keys",
    "Companion": ".model",
    "SkippedFile": ".model",
    "Story": ".model",
    "StoryCatalog": ".model",
    "Task": ".model",
    "UnreadableEntry": ".model",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "COMPANION_KINDS",
    "STATUS_MARKS",
    "Companion",
    "SkippedFile",
    "Story",
    "StoryCatalog",
    "Task",
    "UnreadableEntry",
    "companion_kind",
    "filter_stories",
    "group_stories",
    "normalize_key",
    "status_legend",
]
