"""The rows a story's plan adds beside its own file: a v4 project's always-load files, the
story file's companions and the tech spec of its epic.

BMAD v4's dev agent loads ``devLoadAlwaysFiles`` (``.bmad-core/core-config.yaml``) on every
story: each is an ``always-load`` row, in unless the user leaves it out. A companion of the
story file (:attr:`Story.companions`) is a row of its kind: a ``context`` (a ``…-context.md``
or the ``<stem>.context.xml`` BMAD's dev-story loads) is in; a retrospective, report,
validation, review or proposal is listed but out until the user takes it in, since it is
about the story rather than what the agent builds from. ``tech-spec-epic-N.md`` follows the
tech-spec toggle. Each file is one row: never also the story's own, never key-matched again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..project.config import Config
from ..stories.model import Story
from .candidates import PlanRow
from .model import (
    LISTED_COMPANIONS,
    WHY_ALWAYS_LOAD,
    WHY_COMPANION,
    WHY_EPIC_TECH_SPEC,
    Selection,
)

V4_CONFIG = ".bmad-core/core-config.yaml"
"""Where a v4 project names its always-load files."""
COMPANION_EXTENSIONS = (".xml",)
"""Beyond the planning documents' extensions (``injection.extensions``), what a companion may
end in: BMAD's story-context workflow writes ``<story>.context.xml``."""
CONTEXT_KIND = "context"


def always_load_files(config: Config) -> tuple[tuple[str, ...], str]:
    """A v4 project's ``devLoadAlwaysFiles`` (root-relative) and where the list is written
    (``.bmad-core/core-config.yaml:LINE``); ``((), "")`` for any other project."""
    files = config.bmad_always_load
    return files, config.bmad_always_load_origin or (V4_CONFIG if files else "")


def always_load_rows(config: Config) -> tuple[PlanRow, ...]:
    """One ``always-load`` row per file a v4 project's dev agent loads on every story."""
    files, origin = always_load_files(config)
    reason = f"v4 dev agent loads it always ({origin})"
    return tuple(
        PlanRow(path, "always-load", reason, WHY_ALWAYS_LOAD, True) for path in dict.fromkeys(files)
    )


def companion_rows(story: Story, config: Config) -> tuple[PlanRow, ...]:
    """One row per companion of the story file: its context in, every other kind listed and
    out. A companion that is no text document of the planning kinds is no row."""
    extensions = tuple(e.lower() for e in (*config.injection_extensions, *COMPANION_EXTENSIONS))
    rows: list[PlanRow] = []
    for companion in story.companions:
        path, kind = companion.path, companion.kind
        if path == story.path or not path.lower().endswith(extensions):
            continue
        if kind == CONTEXT_KIND:
            reason = "the story's context: BMAD's dev-story loads it with the story"
            rows.append(PlanRow(path, CONTEXT_KIND, reason, WHY_COMPANION, True))
            continue
        # A kind this room does not know yet is listed like a report: out, never lost.
        category = kind if kind in LISTED_COMPANIONS else "report"
        reason = f"a {kind} of the story: listed, not sent unless you take it in"
        rows.append(PlanRow(path, category, reason, WHY_COMPANION, False))
    return tuple(rows)


def epic_tech_spec_row(story: Story, selection: Selection) -> tuple[PlanRow, ...]:
    """The tech spec of the story's epic (``tech-spec-epic-N.md``), under the tech-spec
    toggle; none when the epic has none."""
    path = story.epic_tech_spec
    if not path:
        return ()
    reason = (
        "the tech spec of the story's epic" if selection.tech_spec else "tech-spec files are off"
    )
    return (PlanRow(path, "tech-spec", reason, WHY_EPIC_TECH_SPEC, selection.tech_spec),)


def story_plan_rows(
    story: Story, selection: Selection, config: Config, *, always_load: bool = True
) -> tuple[PlanRow, ...]:
    """Every row of its own category for ``story``: the always-load files (a BMAD story's,
    unless ``always_load`` is False; an OpenSpec change beside a v4 plan is not the v4 dev
    agent's), its companions, its epic's tech spec."""
    rows: Sequence[PlanRow] = (
        *(always_load_rows(config) if always_load and story.source == "bmad" else ()),
        *companion_rows(story, config),
        *epic_tech_spec_row(story, selection),
    )
    return tuple(rows)
