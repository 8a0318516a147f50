"""``promptdeck stories``: every story of the workspace, and the files discovery passed over."""

from __future__ import annotations

import argparse
import sys

from ..core.errors import EXIT_OK
from ..core.plans import group_notes, load_catalog, summary_lines, where_stories_come_from
from ..core.project import Workspace
from ..core.stories import StoryCatalog
from ..core.terminal import printable_line
from . import table
from .common import add_workspace_options, print_json, warn, workspace_from
from .common import console as common_console
from .table import Column, print_records


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``stories`` subcommand."""
    parser = subparsers.add_parser(
        "stories",
        help="list the workspace's stories (BMAD and OpenSpec) and skipped files",
        description=(
            "List every story of the workspace, grouped by epic (BMAD) or change (OpenSpec), "
            "and every file discovery passed over with its reason."
        ),
    )
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def catalog_payload(catalog: StoryCatalog, workspace: Workspace | None = None) -> dict[str, object]:
    """The ``stories --json`` shape (with ``plan`` when the workspace is given)."""
    payload: dict[str, object] = {
        "stories": [story.to_dict() for story in catalog.stories],
        "skipped": [skipped.to_dict() for skipped in catalog.skipped],
        "warnings": list(catalog.warnings),
        "unreadable": [entry.to_dict() for entry in catalog.unreadable],
        "unattached": list(catalog.unattached),
    }
    if workspace is not None:
        payload["plan"] = plan_payload(workspace)
    return payload


def plan_payload(workspace: Workspace) -> dict[str, object]:
    """Which folder is the plan and why, and the other folders named or found (``plan`` in
    ``stories --json`` and ``doctor --json``)."""
    config = workspace.config
    return {
        "folder": config.paths_artifacts,
        "origin": config.plan_origin,
        "alternatives": [
            {"folder": folder, "why": why} for folder, why in config.plan_alternatives
        ],
        "openspec": config.paths_openspec,
    }


def plan_line(workspace: Workspace) -> str:
    """One line: the plan's folder and why it was taken."""
    config = workspace.config
    return f"plan: {config.paths_artifacts} ({config.plan_origin})"


STORY_COLUMNS = (
    Column("id"),
    Column("title", minimum=16),
    Column("status"),
    Column("source", keep=1),
    Column("epic/change", keep=3, minimum=12),
    Column("path", keep=2, minimum=28, path=True),
)
"""What ``stories`` shows; narrow terminals shorten titles and groups, then leave out the
source and the path (``--json`` always has them)."""


def _print_tables(catalog: StoryCatalog, workspace: Workspace) -> None:
    console = common_console()
    if not catalog.stories:
        console.print("\n".join(where_stories_come_from(workspace)), markup=False, highlight=False)
    else:
        plain = not table.is_terminal()
        rows: list[list[str]] = []
        previous: tuple[str, str] | None = None
        for story in catalog.stories:
            group = (story.source, story.group)
            label = story.group
            if story.group_title and story.group_title != story.group:
                label = f"{label} · {story.group_title}"
            if group == previous and not plain:
                # On a terminal the group shows once; piped, every line is a whole record.
                label = ""
            rows.append(
                [story.id, story.title, story.status, story.source, label, story.path or "—"]
            )
            previous = group
        print_records(STORY_COLUMNS, rows, title="Stories", console=console, plain=plain)
    if catalog.skipped:
        print_records(
            (
                Column("skipped"),
                Column("path", path=True, minimum=16),
                Column("reason", minimum=16),
            ),
            [["skipped", item.path, item.reason] for item in catalog.skipped],
            title="Skipped files",
            console=console,
        )


def run(args: argparse.Namespace) -> int:
    """List the stories; exit 0 even when some files were skipped (they are listed)."""
    workspace = workspace_from(args)
    catalog = load_catalog(workspace)
    if args.json:
        print_json(catalog_payload(catalog, workspace))
        return EXIT_OK
    # One line per kind of note; `promptdeck doctor` has every one.
    for line in summary_lines(group_notes(catalog)):
        warn(line)
    if catalog.stories:
        # Which folder was read, said once; piped, stdout keeps one record a line.
        if table.is_terminal():
            common_console().print(plan_line(workspace), markup=False, highlight=False)
        else:
            print(f"promptdeck: {printable_line(plan_line(workspace))}", file=sys.stderr)
    _print_tables(catalog, workspace)
    sys.stdout.flush()
    return EXIT_OK
