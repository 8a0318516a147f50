"""``promptdeck run --epic N --parallel K``: an epic's stories side by side, each in its own
git worktree, in the waves of the overlap plan, merged back one at a time.

Each line promptdeck says goes to stderr as it happens; a summary line per story ends it (or
JSON with ``--json``). Exit 0 when every story was done and merged; else the exit code of the
first story that was not (5 when none says more).
"""

from __future__ import annotations

import argparse
import sys

from ..core.errors import EXIT_NO_SIGNAL, EXIT_OK, UsageError
from ..core.fleet import ParallelRequest, run_epic
from ..core.terminal import printable_line
from .common import print_json, workspace_from


def run_parallel(args: argparse.Namespace) -> int:
    """Handle ``run --epic N --parallel K``."""
    if args.epic is None or args.parallel is None:
        raise UsageError("run: --epic and --parallel go together (--epic N --parallel K)")
    if args.story is not None:
        raise UsageError("run: --epic runs every story of the epic: leave out STORY")
    if args.phase is not None or args.auto or args.dry_run:
        raise UsageError(
            "run --epic --parallel runs each story's whole flow: no --phase, --auto or --dry-run"
        )
    workspace = workspace_from(args)

    def say(line: str) -> None:
        print(f"promptdeck: {printable_line(line)}", file=sys.stderr, flush=True)

    request = ParallelRequest(
        args.epic,
        args.parallel,
        agent=args.agent,
        replay_script=args.replay_script,
        timeout=args.timeout,
        allow_secrets=args.allow_secrets,
    )
    done = run_epic(workspace, request, say)
    if args.json:
        print_json(done.to_dict())
    else:
        for story in done.stories:
            merged = story.merge is not None and story.merge.merged
            state = "merged" if merged else "done, not merged" if story.done else "stopped"
            print(printable_line(f"{story.story}\twave {story.wave}\t{state}\t{story.note}"))
    if done.complete:
        return EXIT_OK
    failed = [r for s in done.stories for r in s.results if r.exit_code != EXIT_OK]
    return failed[-1].exit_code if failed else EXIT_NO_SIGNAL
