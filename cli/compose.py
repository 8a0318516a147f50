"""``promptdeck compose``: print exactly what an agent would be sent for a story's phase.

``--part system`` and ``--part user`` print the exact bytes (no newline added), so
``promptdeck compose 1-2 --part system > system.md`` is byte for byte what the agent receives.
Over the injection's error line nothing is printed on stdout: one line on stderr names the
size, the limit and the largest files, and the exit code is 3.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..core.errors import EXIT_OK, InjectionTooLarge, SecretsInInjection
from ..core.layers import DELIVERIES
from ..core.phases import PHASE_NAMES
from ..core.project import one_scan
from ..core.prompt import ComposedPrompt, FailureInfo, PromptRequest, compose_prompt
from ..core.terminal import printable
from ..core.tokens import get_counter
from .common import (
    add_inclusion_options,
    add_workspace_options,
    encoding_from,
    print_json,
    remember_file_choices,
    selection_from,
    warn,
    workspace_from,
)
from .variants import add_variant_options, ignored_variant_flags, variant_from

PARTS = ("system", "user", "messages", "injection", "layers")


def add_prompt_options(parser: argparse.ArgumentParser) -> None:
    """``--phase``, ``--mode``, ``--retry-reason`` and the failure options (compose, inspect)."""
    parser.add_argument("story", metavar="STORY", help="story id: 1-2, 1.2, add-auth:2")
    parser.add_argument(
        "--phase", choices=PHASE_NAMES, default="dev", help="the phase to compose (default: dev)"
    )
    parser.add_argument(
        "--mode",
        choices=("create", "optimize"),
        help="create (first attempt) or optimize (rework); default: optimize with "
        "--retry-reason, else create",
    )
    parser.add_argument(
        "--retry-reason",
        metavar="TEXT",
        help="the previous attempt's FAILED/BLOCKED reason (dev phase: adds the retry section)",
    )
    failure = parser.add_argument_group("failure analysis (--phase failure)")
    failure.add_argument(
        "--failure-phase",
        choices=("dev", "review"),
        default="dev",
        help="the phase that failed (default: dev)",
    )
    failure.add_argument(
        "--failure-signal",
        metavar="TEXT",
        help="the signal it printed (default: IMPLEMENTATION BLOCKED / REVIEW FAILED)",
    )
    failure.add_argument("--failure-message", metavar="TEXT", help="the failure's message")
    add_variant_options(parser)
    add_delivery_option(parser)


def add_delivery_option(parser: argparse.ArgumentParser) -> None:
    """``--delivery``: where the layers go (compose, inspect, run)."""
    parser.add_argument(
        "--delivery",
        choices=DELIVERIES,
        help="layered: all eight layers in the system prompt (the seeds' order); cache-aware: "
        "the phase-invariant layers and the injected files in the system prompt, the per-phase "
        "layers at the head of the user turn (default: config `delivery`, else layered)",
    )


def request_from(args: argparse.Namespace) -> PromptRequest:
    """The :class:`PromptRequest` the arguments describe."""
    mode = args.mode or ("optimize" if args.retry_reason else "create")
    failure = None
    if args.phase == "failure" and (args.failure_message or args.failure_signal):
        failure = FailureInfo.for_phase(
            args.failure_phase, args.failure_message or "", args.failure_signal
        )
    return PromptRequest(
        story_id=args.story,
        phase=args.phase,
        mode=mode,
        selection=selection_from(args),
        retry_reason=args.retry_reason,
        failure=failure,
        variant=variant_from(args, args.phase),
        delivery=getattr(args, "delivery", None),
    )


def compose_from(args: argparse.Namespace, *, count_tokens: bool) -> ComposedPrompt:
    """Open the workspace and compose the prompt the arguments describe."""
    workspace = workspace_from(args)
    ignored = ignored_variant_flags(args, args.phase)
    if ignored:
        warn(ignored)
    counter = get_counter(encoding_from(args, workspace))
    # One command, one listing of each folder: discovery and the injection share it.
    with one_scan():
        prompt = compose_prompt(
            workspace, None, request_from(args), counter=counter, count_tokens=count_tokens
        )
    remember_file_choices(args, workspace.root, prompt)
    return prompt


def too_large(prompt: ComposedPrompt) -> InjectionTooLarge:
    """The error for an injection over its error line."""
    return prompt.injection.too_large()


def refuse_secrets(prompt: ComposedPrompt, allowed: bool) -> None:
    """Stop before a run whose injection holds likely secrets, unless they are ``allowed``.

    Raises:
        SecretsInInjection: findings exist and ``allowed`` is False (exit 8).
    """
    findings = prompt.injection.secrets
    if findings and not allowed:
        raise SecretsInInjection([str(finding) for finding in findings])


def all_warnings(prompt: ComposedPrompt) -> list[str]:
    """The prompt's warnings, then the injection's, each once, in order."""
    seen: list[str] = []
    for message in (*prompt.warnings, *prompt.injection.warnings):
        if message not in seen:
            seen.append(message)
    return seen


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``compose`` subcommand."""
    parser = subparsers.add_parser(
        "compose",
        help="print exactly what an agent would be sent for a story's phase",
        description=(
            "Compose the prompt for one phase of a story and print one part of it: the system "
            "prompt or user message (exact bytes, no newline added), the messages array or the "
            "layers (JSON), or the <file_injections> XML. Exit 3 when the injection is over "
            "its error line."
        ),
    )
    add_prompt_options(parser)
    parser.add_argument(
        "--part", choices=PARTS, default="system", help="what to print (default: system)"
    )
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def _write_exact(text: str) -> None:
    # A pipe or a file gets the exact bytes; a terminal would obey a control sequence in a
    # story file, so it gets them made visible.
    if sys.stdout.isatty():
        text = printable(text)
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def run(args: argparse.Namespace) -> int:
    """Print the requested part; exit 3 (nothing on stdout) over the error line."""
    prompt = compose_from(args, count_tokens=args.part == "layers")
    if prompt.injection.level == "error":
        raise too_large(prompt)
    if not args.json:
        for message in all_warnings(prompt):
            warn(message)
    content: Any
    if args.part == "system":
        content = prompt.system
    elif args.part == "user":
        content = prompt.user
    elif args.part == "injection":
        content = prompt.injection.text
    elif args.part == "messages":
        content = list(prompt.messages)
    else:
        content = [layer.to_dict() for layer in prompt.layers]
    if args.json:
        print_json(
            {
                "story": prompt.story.id,
                "phase": prompt.request.phase,
                "mode": prompt.request.mode,
                "part": args.part,
                "content": content,
                "signature": prompt.signature,
                "size": prompt.size().to_dict(),
            }
        )
    elif isinstance(content, str):
        _write_exact(content)
    else:
        print_json(content)
    return EXIT_OK
