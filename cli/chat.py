"""``promptdeck chat``: continue a phase's conversation with the agent, turn by turn.

Each turn is a fresh agent process resuming the session (``--resume <id>``), recorded as a run
(mode ``chat``). Instructions and rules are re-injected in long sessions (see
:mod:`promptdeck.core.run.session`). Turns come from ``--message`` (repeatable) or, line by line,
from stdin; ``/exit`` or end of input stops.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from ..core.agents import resolve_agent_name
from ..core.errors import EXIT_OK, UsageError
from ..core.phases import PHASE_NAMES
from ..core.plans import load_catalog
from ..core.project import check_images, check_trusted
from ..core.prompt import PromptRequest, compose_prompt
from ..core.records import RunResult
from ..core.run import Session, start_run
from ..core.units import context_share
from .common import (
    add_inclusion_options,
    add_workspace_options,
    event_log,
    print_json,
    remember_file_choices,
    warn,
    workspace_from,
)
from .run import add_run_options
from .run_output import Printer, raise_if_interrupted, wait_interruptibly


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``chat`` subcommand."""
    parser = subparsers.add_parser(
        "chat",
        help="continue a phase's agent session turn by turn",
        description=(
            "Continue the latest session of a story's phase (or start one with --new), one turn "
            "per message. Instructions and rules are re-injected every N turns or as context "
            "use crosses 25/50/75 %."
        ),
    )
    parser.add_argument("story", metavar="STORY", help="story id")
    parser.add_argument("--phase", choices=PHASE_NAMES, default="dev", help="default: dev")
    parser.add_argument(
        "--message",
        "-m",
        action="append",
        default=[],
        metavar="TEXT",
        help="a turn's message (repeatable); without it, turns are read from stdin",
    )
    parser.add_argument("--new", action="store_true", help="start a new session")
    add_run_options(parser)
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def _messages(args: argparse.Namespace) -> Iterator[str]:
    if args.message:
        yield from args.message
        return
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print("you> ", end="", file=sys.stderr, flush=True)
        try:
            line = sys.stdin.readline()
        except UnicodeDecodeError:
            raise UsageError(
                "chat: stdin is not UTF-8 text; turns are read as UTF-8 lines"
            ) from None
        if not line:
            return
        try:
            # A UTF-8 locale reads undecodable bytes as surrogates instead of failing.
            line.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                "chat: stdin is not UTF-8 text; turns are read as UTF-8 lines"
            ) from None
        text = line.strip()
        if text == "/exit":
            return
        if text:
            yield text


def run(args: argparse.Namespace) -> int:
    """Handle ``promptdeck chat``."""
    from .compose import refuse_secrets, request_from

    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: expected a positive number of seconds")
    workspace = workspace_from(args)
    args.agent = resolve_agent_name(args.agent, workspace.config)
    check_trusted(workspace, args.agent)  # before a word is composed (start_run checks again)
    catalog = load_catalog(workspace)
    story = catalog.find(args.story)
    args.story = story.id
    args.mode, args.retry_reason = None, None
    request: PromptRequest = request_from(args)
    images = check_images(workspace, args.images)
    events = event_log(args)
    session = Session(workspace, story.id, args.phase, fresh=args.new)
    printer = None if args.json else Printer()
    results: list[RunResult] = []
    for message in _messages(args):
        # Compose fresh every turn: the system prompt file reflects the files as they are now.
        prompt = compose_prompt(
            workspace, load_catalog(workspace), request, count_tokens=False, emit=events
        )
        if not results:
            remember_file_choices(args, workspace.root, prompt)
        plan = session.plan(message, prompt.user, prompt.rules)
        if plan.initial:
            # The session's first turn sends the injection, so it is refused as `run` is.
            refuse_secrets(prompt, args.allow_secrets)
        if plan.initial and printer is not None:
            for warning in prompt.warnings:  # as run does: missing rules are never silent
                warn(warning)
        handle = start_run(
            workspace,
            prompt,
            agent=args.agent,
            listener=printer,
            timeout=args.timeout,
            use_git=False,
            replay_script=args.replay_script,
            attempt=1,
            resume_session=session.session_id if not plan.initial else None,
            turn=session.state.turns + 1,
            user_text=plan.user_text,
            images=images if not results else (),  # with this invocation's first message
        )
        result = wait_interruptibly(handle)
        if handle.interrupted_by is not None:
            if printer is not None:
                printer.summary(result)
            raise_if_interrupted(handle, result)
        used = context_share(result.context_tokens, result.context_window)
        session.finish(plan, result.run_dir, result.session_id, used)
        if printer is not None:
            printer.summary(result)
        results.append(result)
        if result.outcome in ("launch-failed", "cancelled"):
            break
    if args.json:
        print_json(
            {
                "session_id": session.session_id,
                "turns": session.state.turns,
                "counters": vars(session.counters),
                "runs": [r.to_dict() for r in results],
            }
        )
    if not results:
        return EXIT_OK
    failed = [r for r in results if r.outcome in ("launch-failed", "crashed", "timeout")]
    return failed[-1].exit_code if failed else EXIT_OK
