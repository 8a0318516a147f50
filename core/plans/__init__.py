"""The plan: the project's plan files (BMAD v4–v7, OpenSpec) read into stories, and a story's
status written back to them.

Each reader makes :mod:`promptdeck.core.stories` values from one kind of plan: :mod:`.bmad`
(v4–v6: the sprint plan joined to the story files :mod:`.story_scan` finds, each read by
:mod:`.bmad_story_file`; :mod:`.sprint_status`, :mod:`.markdown` and :mod:`.epic_titles`
read the rest), :mod:`.bmad_spec` (build and quick specs), :mod:`.spec_folders` (bmad-spec
folders), :mod:`.bmad_v7` (the initiative ticket tree), :mod:`.openspec` (changes);
:mod:`.context_files` holds the files a plan asks the agent to load and the epic contexts.
:mod:`.catalog` puts the sources side by side and is the prompt's story gatherer
(``gather_story``: the story and the stories its phase covers, loading only what the phase
needs); :mod:`.writeback` writes a phase's status back to the plan through the guarded
rewrite.

A floor above the stories room (it makes its values) and below every room that reads a plan.
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

_HOMES = {
    "group_notes": ".catalog",
    "load_catalog": ".catalog",
    "plan_paths": ".catalog",
    "PlanSnapshot": ".catalog",
    "summary_lines": ".catalog",
    "take_snapshot": ".catalog",
    "WATCH_LIMIT": ".catalog",
    "where_stories_come_from": ".catalog",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "WATCH_LIMIT",
    "PlanSnapshot",
    "group_notes",
    "load_catalog",
    "plan_paths",
    "summary_lines",
    "take_snapshot",
    "where_stories_come_from",
]
