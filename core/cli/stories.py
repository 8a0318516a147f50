"""``promptdeck stories``: every story of the workspace, and the files discovery passed over."""

from __future__ import annotations

import argparse
import sys

from ..catalog import load_catalog
from ..errors import EXIT_OK
from ..stories import StoryCatalog
from .common import add_workspace_options, cell, print_json, warn, workspace_from
from .common import console as common_console

_STATUS_STYLE = {
    "backlog": "dim",
    "ready-for-dev": "cyan",
    "in-progress": "yellow",
    "review": "magenta",
    "done": "green",
}


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


def catalog_payload(catalog: StoryCatalog) -> dict[str, object]:
    """The ``stories --json`` shape."""
    return {
        "stories": [story.to_dict() for story in catalog.stories],
        "skipped": [skipped.to_dict() for skipped in catalog.skipped],
        "warnings": list(catalog.warnings),
    }


WIDE_COLUMNS = 120
"""From this terminal width on, the table also shows each story's source and path."""


def _print_tables(catalog: StoryCatalog) -> None:
    from rich.table import Table
    from rich.text import Text

    console = common_console()
    if not catalog.stories:
        console.print("No stories found.")
    else:
        # Narrow terminals keep what people read (id, title, status, group); the source and
        # path columns need room, and --json always has them.
        wide = console.width >= WIDE_COLUMNS
        table = Table(title="Stories", title_justify="left", expand=True)
        table.add_column("id", no_wrap=True)
        table.add_column("title", ratio=3)
        table.add_column("status", no_wrap=True)
        if wide:
            table.add_column("source", no_wrap=True)
        table.add_column("epic/change", ratio=2)
        if wide:
            table.add_column("path", ratio=3, no_wrap=True, overflow="ellipsis")
        previous: tuple[str, str] | None = None
        for story in catalog.stories:
            group = (story.source, story.group)
            if previous is not None and group != previous:
                table.add_section()
            label = ""
            if group != previous:
                label = story.group
                if story.group_title and story.group_title != story.group:
                    label = f"{label} · {story.group_title}"
            status = cell(story.status, _STATUS_STYLE.get(story.status, ""))
            row: list[Text] = [
                cell(story.id),
                cell(story.title),
                status,
                cell(story.source),
                cell(label),
                cell(story.path or "—"),
            ]
            if not wide:
                row = [cell(story.id), cell(story.title), status, cell(label)]
            table.add_row(*row)
            previous = group
        console.print(table)
    if catalog.skipped:
        skipped = Table(title="Skipped files", title_justify="left", expand=False)
        skipped.add_column("path", overflow="fold")
        skipped.add_column("reason", overflow="fold")
        for item in catalog.skipped:
            skipped.add_row(cell(item.path), cell(item.reason))
        console.print(skipped)


def run(args: argparse.Namespace) -> int:
    """List the stories; exit 0 even when some files were skipped (they are listed)."""
    workspace = workspace_from(args)
    catalog = load_catalog(workspace)
    if args.json:
        print_json(catalog_payload(catalog))
        return EXIT_OK
    for message in catalog.warnings:
        warn(message)
    _print_tables(catalog)
    sys.stdout.flush()
    return EXIT_OK
