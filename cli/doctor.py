"""``promptdeck doctor``: the whole plan as promptdeck reads it, and what it could not read.

Every story once, with how it is kept (its layout), its status and the ``file:line`` the
status came from (and the word written there when the board shows it otherwise: a v7 plan's
``built`` is review), whether another source drifts from it, why its key is past BMAD's
grammar, its own files, and the files that claim it too but are not its own; then every
plan entry or file that could not be read, with ``file:line`` and why; then the specs tied
to no story. The other commands print one line per kind of note and point here for the
details.
"""

from __future__ import annotations

import argparse
import sys

from ..core.errors import EXIT_OK
from ..core.plans import group_notes, load_catalog, where_stories_come_from
from ..core.project import Workspace
from ..core.stories import Story, StoryCatalog
from . import table
from .common import add_workspace_options, print_json, workspace_from
from .common import console as common_console
from .stories import plan_payload
from .table import Column, print_records


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``doctor`` subcommand."""
    parser = subparsers.add_parser(
        "doctor",
        help="show the plan as read: every story, where its status came from, what could "
        "not be read",
        description=(
            "Read the workspace's plan and show every story once — its layout, status, the "
            "file:line the status came from, drift between sources, notes on its key, its own "
            "files — then every entry or file that could not be read (file:line and why) and "
            "the specs tied to no story. Exit 0 whenever the plan could be looked at."
        ),
    )
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def doctor_payload(catalog: StoryCatalog, workspace: Workspace | None = None) -> dict[str, object]:
    """The ``doctor --json`` shape (``plan`` first when the workspace is given)."""
    plan = {"plan": plan_payload(workspace)} if workspace is not None else {}
    return {
        **plan,
        "stories": [story.to_dict() for story in catalog.stories],
        "unreadable": [entry.to_dict() for entry in catalog.unreadable],
        "unattached": list(catalog.unattached),
        "skipped": [skipped.to_dict() for skipped in catalog.skipped],
        "notes": [group.to_dict() for group in group_notes(catalog)],
    }


DOCTOR_COLUMNS = (
    Column("kind", piped_only=True),
    Column("id"),
    Column("layout", keep=3),
    Column("status", minimum=10),
    Column("from", keep=2, minimum=20, path=True),
    Column("notes", minimum=16),
    Column("files", keep=1, minimum=20, path=True),
)


def _status_cell(story: Story) -> str:
    return story.status if story.status_known else f"{story.status} (unknown status)"


def _notes_cell(story: Story) -> str:
    notes = [f"drifts: {drift}" for drift in story.status_drift]
    if story.status_note:
        notes.append(story.status_note)
    if story.off_grammar:
        notes.append(story.off_grammar)
    notes.extend(f"second claim, not injected: {claim.path}" for claim in story.second_claims)
    return "; ".join(notes) or "—"


def run(args: argparse.Namespace) -> int:
    """Print the plan as read."""
    workspace = workspace_from(args)
    catalog = load_catalog(workspace)
    if args.json:
        print_json(doctor_payload(catalog, workspace))
        return EXIT_OK
    console = common_console()
    plain = not table.is_terminal()
    config = workspace.config
    print_records(
        (
            Column("kind", piped_only=True),
            Column("folder", path=True, minimum=20),
            Column("why", minimum=20),
        ),
        [
            ["plan", config.paths_artifacts, config.plan_origin],
            *(["alternative", folder, why] for folder, why in config.plan_alternatives),
        ],
        title="Plan",
        console=console,
        plain=plain,
    )
    if not catalog.stories:
        # Say what was looked at, so an empty plan is never an empty screen.
        for line in where_stories_come_from(workspace):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    rows = [
        [
            "story",
            story.id,
            story.layout,
            _status_cell(story),
            story.status_source or "(default: a story file with no status)",
            _notes_cell(story),
            ", ".join((*story.files, *story.context_files)) or "—",
        ]
        for story in catalog.stories
    ]
    print_records(
        DOCTOR_COLUMNS,
        rows,
        title=f"Stories ({len(catalog.stories)})",
        console=console,
        plain=plain,
    )
    if catalog.unreadable:
        print_records(
            (
                Column("kind", piped_only=True),
                Column("where", path=True, minimum=20),
                Column("why", minimum=20),
            ),
            [["unreadable", entry.where, entry.reason] for entry in catalog.unreadable],
            title=f"Could not be read ({len(catalog.unreadable)})",
            console=console,
            plain=plain,
        )
    if catalog.unattached:
        print_records(
            (Column("kind", piped_only=True), Column("spec", path=True, minimum=20)),
            [["unattached", path] for path in catalog.unattached],
            title="Specs tied to no story",
            console=console,
            plain=plain,
        )
    other = [g for g in group_notes(catalog) if g.kind in ("files passed over", "other notes")]
    for group in other:
        print_records(
            (Column("kind", piped_only=True), Column(group.kind, minimum=20)),
            [["note", line] for line in group.lines],
            title=group.kind.capitalize(),
            console=console,
            plain=plain,
        )
    sys.stdout.flush()
    return EXIT_OK
