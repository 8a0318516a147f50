"""Stories: the story model, story keys, the catalog of both sources (BMAD, OpenSpec), filtering
for the tree, and the status written back to the plan.

:mod:`.sources` reads the project's plan files; :mod:`.catalog` puts both sources side by side;
:mod:`.keys` holds the one key grammar every file match uses.
"""

from __future__ import annotations

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
from .filter import STATUS_MARKS, filter_stories, group_stories, status_legend
from .keys import normalize_key
from .model import SkippedFile, Story, StoryCatalog, Task, UnreadableEntry

__all__ = [
    "STATUS_MARKS",
    "WATCH_LIMIT",
    "PlanSnapshot",
    "SkippedFile",
    "Story",
    "StoryCatalog",
    "Task",
    "UnreadableEntry",
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
