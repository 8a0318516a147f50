"""``promptdeck run``: run one phase of a story with an agent, or the whole flow (``--auto``).

The agent's text streams to stdout (signals highlighted on a terminal), tool calls and
promptdeck's own notices to stderr, and the run is recorded in ``.promptdeck/runs/<id>/``.
Exit codes: 0 a success signal; 4 a failure signal; 5 no signal, a timeout or a crash;
6 the git step failed or was refused; 7 the run could not be saved, or another run holds the
story; 8 likely secrets in the injection without ``--allow-secrets``; 9 the prompt is over its
phase's token budget (refused); 10 the project's config names the agent's program or its
arguments and is not trusted (refused, see :mod:`promptdeck.core.project.trust`); 2 bad input; 3
over the size limit; 130 Ctrl-C (128 + the signal for SIGTERM/SIGHUP).

``--auto`` runs kickoff, failure analysis and retro only when asked (``--party-<phase>``,
``--with``, ``[flow] auto_<phase>``), and never lets them block: see
:mod:`promptdeck.core.run.optional_phases`. It starts where the flow says, which, before any
dev run is recorded, is where the story's tracked status says (review for a ``review`` story,
dev for an ``in-progress`` one); ``--auto --dry-run`` lists the phases it would run, in order
and each with why (were each to succeed), then shows the first one's confirmation.

``--dry-run`` writes nothing into the project: its prompt files go to a temporary folder the
confirmation names, file choices given with it are not remembered, and with no agent installed
it shows the run Claude Code would make, saying so.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.agents import resolve_agent_name
from ..core.errors import EXIT_NO_SIGNAL, EXIT_OK, NoAgentError, UsageError
from ..core.phases import PHASE_NAMES
from ..core.plans import load_catalog
from ..core.project import AGENTS, Workspace, check_images, check_trusted
from ..core.prompt import (
    ComposedPrompt,
    PromptRequest,
    check_budget,
    compose_prompt,
    enforce_budget,
    phase_budget,
)
from ..core.records import RunResult
from ..core.run import (
    AutoPlan,
    Suggestion,
    auto_course,
    auto_plan,
    confirmation_blocks,
    describe_plan,
    holding,
    last_failure,
    parse_with,
    plan_run,
    run_auto,
    start_run,
)
from ..core.stories import Story, StoryCatalog
from ..core.vocabulary import SUCCESS
from .common import (
    EventLog,
    add_inclusion_options,
    add_log_events_option,
    add_workspace_options,
    event_log,
    print_json,
    remember_file_choices,
    workspace_from,
)
from .compose import add_delivery_option, refuse_secrets, request_from
from .run_output import Printer, raise_if_interrupted, say_interrupted, wait_interruptibly
from .variants import add_variant_options, ignored_variant_flags, party_phases


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` subcommand."""
    parser = subparsers.add_parser(
        "run",
        help="run a phase of a story with an agent (or the whole flow with --auto)",
        description=(
            "Run one phase of a story in a fresh agent process, stream its output, record the "
            "run in .promptdeck/runs/, stage after dev and commit after a passed review. "
            "Exit codes: 0 success signal, 4 failure signal, 5 no signal/timeout/crash, "
            "6 git step failed or refused, 7 not saved or story locked by another run, "
            "9 over the phase's token budget, 2 bad input, 3 over the size limit, 130 Ctrl-C."
        ),
    )
    parser.add_argument("story", metavar="STORY", nargs="?", help="story id: 1-2, 1.2, add-auth:2")
    parser.add_argument(
        "--epic", metavar="N", help="with --parallel: run every story of this epic, in waves"
    )
    parser.add_argument(
        "--parallel",
        type=int,
        metavar="K",
        help="with --epic: run up to K stories at once, each in its own git worktree",
    )
    parser.add_argument(
        "--phase",
        choices=PHASE_NAMES,
        help="the phase to run (required unless --auto, which starts from the suggested one)",
    )
    add_run_options(parser)
    parser.add_argument("--auto", action="store_true", help="take the story through the whole flow")
    parser.add_argument(
        "--with",
        dest="with_phases",
        metavar="PHASES",
        help="with --auto: also run these optional phases, e.g. kickoff,failure,retro "
        "(default: [flow] auto_<phase>)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the confirmation the app shows, its prompt files in a temporary folder; "
        "launch nothing and write nothing into the project (with --auto: the phases --auto "
        "would run, in order and why, then the first one's confirmation)",
    )
    parser.add_argument(
        "--mode",
        choices=("create", "optimize"),
        help="create or optimize (default: optimize with --retry-reason, else create)",
    )
    parser.add_argument(
        "--retry-reason", metavar="TEXT", help="the previous attempt's FAILED/BLOCKED reason"
    )
    failure = parser.add_argument_group("failure analysis (--phase failure)")
    failure.add_argument("--failure-phase", choices=("dev", "review"), default="dev")
    failure.add_argument("--failure-signal", metavar="TEXT")
    failure.add_argument(
        "--failure-message",
        metavar="TEXT",
        help="what failed (default: the story's last failed dev or review run)",
    )
    add_variant_options(parser, auto=True)
    add_delivery_option(parser)
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """``--agent``, ``--timeout``, ``--no-git``, ``--replay-script``, ``--image`` (run and
    chat)."""
    parser.add_argument("--agent", choices=AGENTS, help="the agent backend (default: config)")
    parser.add_argument(
        "--timeout",
        type=seconds,
        metavar="S",
        help="seconds before the agent is stopped (default: config agent.timeout)",
    )
    parser.add_argument(
        "--no-git", action="store_true", help="no git: no SHAs, no staging, no commit"
    )
    parser.add_argument(
        "--allow-secrets",
        action="store_true",
        help="send files the secret scan flagged (without it such a run is refused, exit 8)",
    )
    parser.add_argument(
        "--replay-script",
        metavar="SCRIPT",
        help="replay agent outcomes, e.g. dev=blocked:1,review=fail (overrides config)",
    )
    add_log_events_option(parser)
    parser.add_argument(
        "--image",
        dest="images",
        action="append",
        default=[],
        metavar="PATH",
        help="send an image (PNG, JPEG, GIF, WebP; inside the project) with the message; "
        "repeatable",
    )


def seconds(text: str) -> float:
    """argparse type for ``--timeout``: a finite number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds greater than 0: {text}")
    return value


def _request(args: argparse.Namespace, workspace: Workspace, phase: str) -> PromptRequest:
    args.phase = phase
    if phase == "failure" and not (args.failure_message or args.failure_signal):
        found = last_failure(workspace, args.story)
        if found is not None:
            args.failure_phase = found.phase
            args.failure_signal = found.signal
            args.failure_message = found.message
    return request_from(args)


def _compose(
    workspace: Workspace,
    catalog: StoryCatalog,
    request: PromptRequest,
    emit: EventLog | None = None,
    *,
    enforce: bool = True,
    args: argparse.Namespace | None = None,
) -> ComposedPrompt:
    # Tokens are counted only when a budget needs them: a byte-only compose is instant.
    budget = phase_budget(workspace.config, request.phase)
    prompt = compose_prompt(workspace, catalog, request, count_tokens=bool(budget), emit=emit)
    if args is not None:
        remember_file_choices(args, workspace.root, prompt)
    if budget and enforce:
        enforce_budget(prompt, workspace.config)
    elif budget:
        check = check_budget(prompt, workspace.config)
        if check.over:
            print(
                f"promptdeck: warning: {check.refusal()}: a run would be refused (exit 9)",
                file=sys.stderr,
            )
    return prompt


_SPACED_BLOCKS = frozenset({"secrets", "refusal", "command"})
"""Blocks the confirmation screen sets off with a blank line (their ``margin-top``)."""


def _auto_course(
    args: argparse.Namespace,
    workspace: Workspace,
    catalog: StoryCatalog,
    story: Story,
) -> tuple[PromptRequest, str] | None:
    """List the phases ``--auto`` would run for ``story``, in order and each with why, as its
    own flow chooses them (the same optional phases passed over, the same variants), were
    each to succeed; the request of the first and why. None when the flow suggests nothing for
    a done story (its note is printed).

    Raises:
        UsageError: a story not done has nothing to run (the flow's note says why).
    """
    plan, first = _auto_start(args, workspace)
    course, flow = auto_course(workspace, catalog, story, first=first, skip=plan.skip)
    if not course:
        if not flow.done:
            raise UsageError(f"run --auto: nothing to run for {story.id}: {flow.note}")
        print(f"promptdeck: {flow.note}", file=sys.stderr)
        return None
    phases = [
        {
            "phase": step.phase,
            "mode": step.mode,
            "variant": plan.variants.get(step.phase, "standard"),
            "why": step.why,
        }
        for step in course
    ]
    args.auto_course = {"phases": phases, "then": flow.note or None}
    if not args.json:
        print(f"--auto would run, were each phase to succeed ({plan.describe()}):")
        for number, step in enumerate(phases, 1):
            mode = f" ({step['mode']})" if step["mode"] != "create" else ""
            party = " [party]" if step["variant"] == "party" else ""
            print(f"  {number}. {step['phase']}{mode}{party} — {step['why']}")
        print(f"  then: {flow.note}" if flow.note else "  then: the story is done")
        print()
    first_step = course[0]
    selection = request_from(argparse.Namespace(**{**vars(args), "phase": "dev"})).selection
    request = replace(
        first_step.request(story.id, selection), variant=plan.variants.get(first_step.phase)
    )
    return request, first_step.why if first is None else ""


def _dry_run(
    args: argparse.Namespace, workspace: Workspace, prompt: ComposedPrompt, why: str = ""
) -> int:
    """Print the run's confirmation exactly as the app shows it, and launch nothing.

    The prompt files go to a fresh temporary folder outside the project (the run folder the
    confirmation names). Over the error line nothing is written: the refusal, with what would
    bring the injection under, is printed and the exit code is 3.
    """
    if not prompt.counted:
        # The confirmation shows the system prompt's tokens, as the app's does; the run's own
        # compose counts them only when a budget needs them.
        prompt = compose_prompt(workspace, None, prompt.request)
    planned = plan_run(
        workspace,
        prompt,
        agent=args.agent,
        images=args.checked_images,
        replay_script=args.replay_script,
        dry_run=True,
    )
    plan = describe_plan(workspace, planned, agent=args.agent, images=args.checked_images, why=why)
    if args.json:
        payload = plan.to_dict()
        if getattr(args, "auto_course", None) is not None:
            payload["auto"] = args.auto_course
        if getattr(args, "agent_needed", None):
            payload["agent_needed"] = args.agent_needed
        prepared = planned.prepared
        if prepared is not None:
            payload["launch"] = {
                "agent": prepared.agent.name,
                **{k: v for k, v in prepared.spec.to_dict().items() if k != "argv"},
                "system_file": _file_entry(prepared.system_path),
                "user_file": _file_entry(prepared.user_path),
            }
        print_json(payload)
    else:
        for block in confirmation_blocks(plan):
            if block.kind in _SPACED_BLOCKS:
                print()
            print(block.text)
    injection = prompt.injection
    if planned.prepared is None:
        # The same one line and exit code as a run refused for its size.
        raise injection.too_large()
    return EXIT_OK


def _file_entry(path: Path) -> dict[str, Any]:
    return {"path": str(path), "bytes": path.stat().st_size}


def _run_one(
    args: argparse.Namespace,
    workspace: Workspace,
    prompt: ComposedPrompt,
    printer: Printer | None,
) -> RunResult:
    refuse_secrets(prompt, args.allow_secrets)
    handle = start_run(
        workspace,
        prompt,
        agent=args.agent,
        listener=printer,
        timeout=args.timeout,
        use_git=not args.no_git,
        replay_script=args.replay_script,
        images=args.checked_images,
    )
    result = wait_interruptibly(handle)
    if printer is not None:
        printer.summary(result)
    raise_if_interrupted(handle, result)
    return result


def run(args: argparse.Namespace) -> int:
    """Handle ``promptdeck run``."""
    if args.epic is not None or args.parallel is not None:
        from .run_parallel import run_parallel

        return run_parallel(args)
    if args.story is None:
        raise UsageError("run: STORY is required (or --epic N --parallel K)")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: expected a positive number of seconds")
    if args.phase is None and not args.auto:
        raise UsageError("run: --phase is required (or use --auto to follow the flow)")
    asked = parse_with(args.with_phases)
    if asked and not args.auto:
        raise UsageError("run: --with needs --auto (it says which optional phases --auto runs)")
    workspace = workspace_from(args)
    say_interrupted(workspace)
    args.agent_needed = None
    try:
        # Refuse before anything is composed or written: no agent is no run.
        args.agent = resolve_agent_name(args.agent, workspace.config)
    except NoAgentError as exc:
        if not args.dry_run:
            raise
        # The dry run launches nothing: it shows the run Claude Code would make, and says a
        # run needs an agent.
        args.agent, args.agent_needed = "claude", str(exc)
        print(f"promptdeck: note: {exc}; the dry run shows Claude Code's run", file=sys.stderr)
    if not args.dry_run:  # the dry run shows what the config chooses, and starts nothing
        check_trusted(workspace, args.agent)
    catalog = load_catalog(workspace)
    story = catalog.find(args.story)
    args.story = story.id
    args.checked_images = check_images(workspace, args.images)
    args.events = event_log(args)
    printer = None if args.json else Printer()
    if args.auto and not args.dry_run:
        return _auto(args, workspace, story, printer)
    why = ""
    if args.auto:
        # The dry run of --auto lists the phases --auto would run, chosen as it chooses, and
        # shows the first one's confirmation.
        first = _auto_course(args, workspace, catalog, story)
        if first is None:
            return EXIT_OK
        request, why = first
    else:
        request = _request(args, workspace, args.phase or "dev")
        # With --auto, a --party-<phase> flag also says which optional phases run.
        ignored = None if args.auto else ignored_variant_flags(args, request.phase)
        if ignored:
            print(f"promptdeck: warning: {ignored}", file=sys.stderr)
    # A dry run writes nothing into the project: the file choices given with it are shown, not
    # remembered.
    prompt = _compose(
        workspace,
        catalog,
        request,
        args.events,
        enforce=not args.dry_run,
        args=None if args.dry_run else args,
    )
    if args.dry_run:
        return _dry_run(args, workspace, prompt, why)
    for warning in prompt.warnings:
        if printer is not None:
            print(f"promptdeck: warning: {warning}", file=sys.stderr)
    result = _run_one(args, workspace, prompt, printer)
    if args.json:
        print_json(result.to_dict())
    return result.exit_code


def _auto_start(
    args: argparse.Namespace, workspace: Workspace
) -> tuple[AutoPlan, Suggestion | None]:
    """What ``--auto`` runs (the optional phases asked for) and where it starts: the phase
    ``--phase`` names, else the flow's suggestion (None)."""
    plan = auto_plan(
        workspace.config,
        party=party_phases(args),
        asked=parse_with(args.with_phases),
        standard=args.standard,
    )
    if args.phase is None:
        return plan, None
    given = _request(args, workspace, args.phase)
    return plan, Suggestion(
        given.phase, given.mode, given.retry_reason, given.failure, why="--phase"
    )


def _auto(
    args: argparse.Namespace, workspace: Workspace, story: Story, printer: Printer | None
) -> int:
    plan, first = _auto_start(args, workspace)
    if printer is not None:
        print(f"promptdeck: auto: {plan.describe()}", file=sys.stderr)

    def announce(suggestion: Suggestion) -> None:
        if printer is not None:
            mode = f" ({suggestion.mode})" if suggestion.mode != "create" else ""
            variant = plan.variants.get(suggestion.phase, "standard")
            party = " [party]" if variant == "party" else ""
            print(
                f"promptdeck: next: {suggestion.phase}{mode}{party} — {suggestion.why}",
                file=sys.stderr,
            )

    def step(current: Story, catalog: StoryCatalog, suggestion: Suggestion) -> RunResult:
        selection = request_from(argparse.Namespace(**{**vars(args), "phase": "dev"})).selection
        request = replace(
            suggestion.request(current.id, selection),
            variant=plan.variants.get(suggestion.phase),
        )
        prompt = _compose(workspace, catalog, request, args.events, args=args)
        result = _run_one(args, workspace, prompt, printer)
        _report_optional(result, workspace, printer)
        return result

    # One lock for the whole flow: no other run of the story slips in between its phases.
    with holding(workspace.root, story.id):
        steps, flow = run_auto(
            workspace,
            story.id,
            step,
            load=load_catalog,
            first=first,
            on_suggestion=announce,
            skip=plan.skip,
        )
    results = [s.result for s in steps if isinstance(s.result, RunResult)]
    if printer is not None and flow.note:
        print(f"promptdeck: {flow.note}", file=sys.stderr)
    if args.json:
        print_json(
            {
                "story": story.id,
                "done": flow.done,
                "note": flow.note,
                "states": dict(flow.states),
                "runs": [r.to_dict() for r in results],
            }
        )
    if flow.done:
        return EXIT_OK
    # Not done: report the last dev or review run that did not succeed (the reason the flow
    # stopped); the optional phases never decide the exit code (seed 002: non-blocking).
    return next(
        (
            r.exit_code
            for r in reversed(results)
            if r.exit_code != EXIT_OK and r.phase in ("dev", "review")
        ),
        EXIT_NO_SIGNAL,
    )


def _report_optional(result: RunResult, workspace: Workspace, printer: Printer | None) -> None:
    """Say what an optional phase's result means for the flow: never a stop (seed 002)."""
    if printer is None:
        return
    phase = result.phase
    if phase == "failure" and result.signal is not None and result.signal.reason:
        recommendation = result.signal.reason
        if recommendation in ("Skip", "Escalate"):
            honoured = workspace.config.flow_honour_analysis
            effect = (
                "the flow stops here ([flow] honour_analysis = true)"
                if honoured
                else "informational: the flow retries; set [flow] honour_analysis = true to "
                "stop on Skip or Escalate"
            )
        else:
            effect = "the flow retries"
        print(
            f"promptdeck: ▶ failure analysis recommends {recommendation} — {effect}",
            file=sys.stderr,
        )
    elif phase in ("kickoff", "uat", "retro") and result.outcome != SUCCESS:
        after = {
            "kickoff": "the flow continues to dev",
            "uat": "the flow continues",
            "retro": "the epic is complete all the same",
        }[phase]
        print(
            f"promptdeck: warning: {phase} ended with {result.outcome} ({result.message}); "
            f"it is optional: {after}",
            file=sys.stderr,
        )
