"""``plan --epic N --overlap``: the stories' predicted footprints, the pairs that may not run at
the same time, and the waves — laid out from :func:`promptdeck.core.fleet.epic_overlap`."""

from __future__ import annotations

import argparse

from ..core.errors import EXIT_OK
from ..core.fleet import OverlapPlan, epic_overlap
from ..core.terminal import printable_line
from .common import print_json, warn, workspace_from


def _record(*fields: str) -> None:
    print("\t".join(printable_line(field) for field in fields))


def print_overlap(plan: OverlapPlan) -> None:
    """The footprints, the overlapping pairs and the waves, one record a line."""
    print(f"Overlap · epic {plan.epic} · predicted from the plan's words, not a guarantee")
    for foot in plan.footprints:
        shown = (
            f"{len(foot.paths)} path(s) from {', '.join(foot.sources)}"
            if foot.known
            else "unknown: runs alone"
        )
        after = f" · after {', '.join(foot.after)}" if foot.after else ""
        _record("story", foot.story, f"{shown}{after}")
    for pair in plan.overlaps:
        _record("overlap", f"{pair.first} × {pair.second}", pair.reason())
    for number, wave in enumerate(plan.waves, start=1):
        _record(f"wave {number}", " ".join(wave))


def run_overlap(args: argparse.Namespace) -> int:
    """Handle ``plan --epic N --overlap``."""
    workspace = workspace_from(args)
    plan = epic_overlap(workspace, args.epic)
    for problem in plan.problems:
        warn(problem)
    if args.json:
        print_json(plan.to_dict())
    else:
        print_overlap(plan)
    return EXIT_OK
