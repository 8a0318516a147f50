"""``promptdeck resume``: the runs promptdeck did not see end, listed or continued.

``resume`` alone lists every interrupted run not yet resumed, with its session (those of a
parallel epic's story worktrees too). ``resume RUN`` settles one, in its story's worktree
when a parallel run left it there: when git and the plan already show the phase succeeded
(its commit, its status written back) the run is recorded as succeeded and nothing starts;
otherwise the phase goes on as a new run linked to the first — in the agent's own session when
one was recorded.
"""

from __future__ import annotations

import argparse

from ..core.errors import EXIT_OK, UsageError
from ..core.fleet import (
    list_worktrees,
    pending_runs,
    remove_worktree,
    resume_run,
    settle_worktree,
    worktree_interrupted,
)
from ..core.project import AGENTS, Workspace
from ..core.terminal import printable_line
from .common import add_workspace_options, print_json, workspace_from
from .run import seconds
from .run_output import Printer, raise_if_interrupted, wait_interruptibly


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``resume`` subcommand."""
    parser = subparsers.add_parser(
        "resume",
        help="list interrupted runs, or continue one",
        description=(
            "Without RUN, list the runs promptdeck did not see end. With RUN, record it as "
            "succeeded when git and the plan already show its result, or continue its phase "
            "(in the agent's session when one was recorded) as a new run linked to it."
        ),
    )
    parser.add_argument(
        "run_id", metavar="RUN", nargs="?", help="a run id, a unique prefix of one, or 'last'"
    )
    parser.add_argument("--agent", choices=AGENTS, help="the agent (default: the one the run used)")
    parser.add_argument(
        "--timeout", type=seconds, metavar="S", help="seconds before the agent is stopped"
    )
    parser.add_argument(
        "--replay-script", metavar="SCRIPT", help="replay agent outcomes (overrides config)"
    )
    parser.add_argument(
        "--clean",
        metavar="STORY",
        help="remove the story's worktree and its branch (a parallel run left it)",
    )
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def _clean(workspace: Workspace, story: str) -> int:
    found = [w for w in list_worktrees(workspace.root) if w.story == story]
    if not found:
        raise UsageError(f"resume --clean {story}: no worktree of that story")
    worktree = found[0]
    if worktree.state == "running":
        raise UsageError(f"story {story}'s worktree is in use (pid {worktree.pid}): not removed")
    remove_worktree(workspace, worktree, branch=True)
    print(printable_line(f"removed the worktree and branch {worktree.branch} of story {story}"))
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Handle ``promptdeck resume``."""
    workspace = workspace_from(args)
    if args.clean is not None:
        return _clean(workspace, args.clean)
    if args.run_id is None:
        waiting = pending_runs(workspace.root)
        inside = worktree_interrupted(workspace.root)
        left = [w for w in list_worktrees(workspace.root) if w.state != "running"]
        if args.json:
            print_json(
                {
                    "interrupted": [
                        *(item.to_dict() for item in waiting),
                        *({**item.to_dict(), "worktree": w.story} for w, item in inside),
                    ],
                    "worktrees": [worktree.to_dict() for worktree in left],
                }
            )
            return EXIT_OK
        if not waiting and not inside:
            print("No interrupted runs.")
        for item in waiting:
            print(printable_line(item.describe()))
        for worktree, item in inside:
            print(printable_line(f"{item.describe()} (in story {worktree.story}'s worktree)"))
        for worktree in left:
            print(
                printable_line(
                    f"{worktree.describe()} — `promptdeck run --epic N --parallel K` takes it "
                    f"up, `promptdeck resume --clean {worktree.story}` removes it"
                )
            )
        return EXIT_OK
    printer = None if args.json else Printer()
    done = resume_run(
        workspace,
        args.run_id,
        agent=args.agent,
        listener=printer,
        timeout=args.timeout,
        replay_script=args.replay_script,
    )
    if not args.json:
        print(printable_line(done.note))
    if done.handle is None:
        assert done.recorded is not None
        if args.json:
            print_json({"resumed": done.interrupted.to_dict(), "result": done.recorded.to_dict()})
        return done.recorded.exit_code
    try:
        result = wait_interruptibly(done.handle)
    finally:
        settle_worktree(workspace, done)
    if printer is not None:
        printer.summary(result)
    else:
        print_json({"resumed": done.interrupted.to_dict(), "result": result.to_dict()})
    raise_if_interrupted(done.handle, result)
    return result.exit_code
