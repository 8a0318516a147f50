"""Stories: the story model, story keys, the catalog of both sources (BMAD, OpenSpec), filtering
for the tree, and the status written back to the plan.

:mod:`.sources` reads the project's plan files; :mod:`.catalog` puts both sources side by side
and is the prompt's story gatherer (``gather_story``: the story and the stories its phase
covers, loading only what the phase needs);
:mod:`.keys` holds the one key grammar every file match uses.
"""

from __future__ import annotations

from .catalog import group_notes, load_catalog, summary_lines, where_stories_come_from
from .filter import STATUS_MARKS, filter_stories, group_stories, status_legend
from .keys import normalize_key
from .model import SkippedFile, Story, StoryCatalog, Task, UnreadableEntry
from .plan_snapshot import WATCH_LIMIT, PlanSnapshot, plan_paths, take_snapshot

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
