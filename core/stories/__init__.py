"""Stories: the story model, story keys, the catalog of both sources (BMAD, OpenSpec), filtering
for the tree, and the status written back to the plan.

:mod:`.sources` reads the project's plan files; :mod:`.catalog` puts both sources side by side;
:mod:`.keys` holds the one key grammar every file match uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .catalog import load_catalog, where_stories_come_from
    from .filter import STATUS_MARKS, filter_stories, group_stories, status_legend
    from .keys import normalize_key
    from .model import SkippedFile, Story, StoryCatalog, Task

_HOMES = {
    "load_catalog": ".catalog",
    "where_stories_come_from": ".catalog",
    "STATUS_MARKS": ".filter",
    "filter_stories": ".filter",
    "group_stories": ".filter",
    "status_legend": ".filter",
    "normalize_key": ".keys",
    "SkippedFile": ".model",
    "Story": ".model",
    "StoryCatalog": ".model",
    "Task": ".model",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "STATUS_MARKS",
    "SkippedFile",
    "Story",
    "StoryCatalog",
    "Task",
    "filter_stories",
    "group_stories",
    "load_catalog",
    "normalize_key",
    "status_legend",
    "where_stories_come_from",
]
