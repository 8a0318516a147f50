"""``promptdeck capture --client claude --story KEY --phase P``: run the real client once
against a loopback stand-in of its API and show the request it sent, part by part."""

from __future__ import annotations

import argparse

from ..core.capture import CAPTURE_TIMEOUT, CLIENTS, capture_prompt
from ..core.errors import EXIT_OK
from ..core.phases import PHASE_NAMES
from ..core.prompt import PromptRequest, compose_prompt
from ..core.tokens import get_counter
from ..core.units import human_bytes, human_tokens
from .common import (
    add_inclusion_options,
    add_workspace_options,
    encoding_from,
    print_json,
    selection_from,
    workspace_from,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``capture`` subcommand."""
    parser = subparsers.add_parser(
        "capture",
        help="run the real client once offline and show the exact request it sends",
        description=(
            "Compose the story's prompt for the phase, run the real client once with its API "
            "base URL pointed at a server on 127.0.0.1 (a dummy key, a temporary HOME, a canned "
            "stop as the answer; nothing leaves the machine, nothing is written to the project) "
            "and show the request it sent: the client's own system text, promptdeck's, the "
            "tools, the user turn and the JSON envelope, each with bytes and tokens (tokens "
            "with promptdeck's encoding); the parts sum to the request."
        ),
    )
    parser.add_argument("--client", choices=CLIENTS, default="claude", help="the client to run")
    parser.add_argument("--story", required=True, metavar="KEY", help="story id: 1-2, 1.2")
    parser.add_argument(
        "--phase", choices=PHASE_NAMES, default="dev", help="the phase to compose (default: dev)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=CAPTURE_TIMEOUT,
        metavar="SECONDS",
        help=f"stop the client after this long (default: {CAPTURE_TIMEOUT:.0f})",
    )
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Capture and print the parts (or JSON); exit 12 when no capture could be made."""
    workspace = workspace_from(args)
    counter = get_counter(encoding_from(args, workspace))
    request = PromptRequest(story_id=args.story, phase=args.phase, selection=selection_from(args))
    prompt = compose_prompt(workspace, None, request, counter=counter, count_tokens=False)
    capture = capture_prompt(
        workspace, prompt, counter, client=args.client, timeout=max(args.timeout, 1.0)
    )
    if args.json:
        print_json(capture.to_dict())
        return EXIT_OK
    print(
        f"{capture.client} request for story {capture.story_id} ({capture.phase}): "
        f"{human_bytes(capture.request.size)} ({capture.request.size:,} bytes)"
        + (" — cut at the memory bound" if capture.request.cut else "")
    )
    for part in capture.parts:
        tokens = f"{human_tokens(part.tokens)} tok" if part.name != "envelope" else ""
        print(f"  {part.name:<18} {part.bytes:>10,} bytes  {tokens}")
    print(f"  {'sum':<18} {sum(p.bytes for p in capture.parts):>10,} bytes")
    return EXIT_OK
