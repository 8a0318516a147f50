"""Stories: the story model, story keys, the catalog of both sources (BMAD, OpenSpec), filtering
for the tree, and the status written back to the plan.

:mod:`.sources` reads the project's plan files; :mod:`.catalog` puts both sources side by side
and is the prompt's story gatherer (``gather_story``: the story and the stories its phase
covers, loading only what the phase needs);
:mod:`.keys` holds the one key grammar every file match uses; :mod:`.companions` tells a
story's companions (its context, retrospective, reports, reviews) from its own file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .catalog import (
        WATCH_LIMIT,
        PlanSnapshot,
        group_notes,
        load_catalog,
        plan_paths,
        summary_lines,
        take_snapshot,
        where_stories_come_from,
    )
    from .companions import COMPANION_KINDS, companion_kind
    from .filter import STATUS_MARKS, filter_stories, group_stories, status_legend
    from .keys import normalize_key
    from .model import Companion, SkippedFile, Story, StoryCatalog, Task, UnreadableEntry

_HOMES = {
    "group_notes": ".catalog",
    "load_catalog": ".catalog",
    "plan_paths": ".catalog",
    "PlanSnapshot": ".catalog",
    "summary_lines": ".catalog",
    "take_snapshot": ".catalog",
    "WATCH_LIMIT": ".catalog",
    "where_stories_come_from": ".catalog",
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
    "WATCH_LIMIT",
    "Companion",
    "PlanSnapshot",
    "SkippedFile",
    "Story",
    "StoryCatalog",
    "Task",
    "UnreadableEntry",
    "companion_kind",
    "filter_stories",
    "group_notes",
    "group_stories",
    "load_catalog",
    "normalize_key",
    "plan_paths",
    "status_legend",
    "summary_lines",
    "take_snapshot",
    "where_stories_come_from",
]
