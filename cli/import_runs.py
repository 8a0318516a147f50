"""``promptdeck import-runs PATH``: CI jobs' artifacts read back as run records.

PATH is a folder of downloaded artifacts (one folder per job) or one job's folder. Each is
read through the guarded reader inside PATH; a malformed, huge or linked-out record is one line
on stderr and is not imported. Exit 0 when every folder was imported, 2 when one was refused.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..core.errors import EXIT_OK, EXIT_USAGE
from ..core.fleet import import_runs
from .common import add_workspace_options, print_json, warn, workspace_from


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``import-runs`` subcommand."""
    parser = subparsers.add_parser(
        "import-runs",
        help="read CI jobs' artifacts back as run records",
        description="Read the artifacts of exported CI jobs (promptdeck export --ci) as runs.",
    )
    parser.add_argument("path", metavar="PATH", help="the downloaded artifacts' folder")
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle ``promptdeck import-runs``."""
    workspace = workspace_from(args)
    done = import_runs(workspace, Path(args.path))
    for line in done.refused:
        warn(line)
    if args.json:
        print_json({"runs": list(done.runs), "refused": list(done.refused)})
    else:
        for run_id in done.runs:
            print(f"imported\t{run_id}")
    return EXIT_USAGE if done.refused else EXIT_OK
