"""``promptdeck capture --client claude|codex --story KEY --phase P``: run the real client once
against a loopback stand-in of its API and show the request it sent, part by part."""

from __future__ import annotations

import argparse

from ..core.capture import (
    CAPTURE_TIMEOUT,
    CLIENTS,
    Capture,
    capture_prompt,
    capture_summary,
    remember_capture,
)
from ..core.errors import EXIT_OK
from ..core.phases import PHASE_NAMES
from ..core.prompt import PromptRequest, compose_prompt
from ..core.tokens import get_counter
from ..core.units import context_share, human_bytes, human_tokens
from .common import (
    add_inclusion_options,
    add_workspace_options,
    encoding_from,
    print_json,
    selection_from,
    warn,
    workspace_from,
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``capture`` subcommand."""
    parser = subparsers.add_parser(
        "capture",
        help="run the real client once offline and show the exact request it sends",
        description=(
            "Compose the story's prompt for the phase, run the real client once with its API "
            "base URL pointed at a server on 127.0.0.1 (a dummy key, a temporary HOME, the "
            "loopback as its only proxy, a canned stop as the answer; nothing leaves the "
            "machine, nothing is written to the project) and show the request it sent, part "
            "by part: the client's own system text, its tools, the context it wraps around the "
            "turn, the rules files it loaded itself (CLAUDE.md, AGENTS.md), promptdeck's eight "
            "layers, the user turn and the JSON envelope, each with bytes, tokens (promptdeck's "
            "encoding) and its share of the model's context window; the parts sum to the "
            "request. Text that arrives twice is flagged. The capture is kept per client and "
            "client version in the user's cache folder. Exit 12 when no capture could be made "
            "(the client is missing, too old, hangs or tries to reach another host). The "
            "client sees your own configuration as your runs do: your user and project memory "
            "and rules files (each its own part, with why it was loaded) and the settings that "
            "shape the request (the model), read only, never written, no credentials copied. "
            "MCP servers are programs: they are started only with --with-mcp; otherwise each "
            "configured server is listed as not started, its tools not measured."
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
    parser.add_argument(
        "--with-mcp",
        action="store_true",
        help="start your configured MCP servers (programs) so their tools are measured "
        "(Claude Code; default: listed, not started)",
    )
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def _share(share: float | None) -> str:
    return "" if share is None else f"{share:6.1%}"


def _print(capture: Capture) -> None:
    summary = capture_summary(capture)
    print(
        f"{capture.client} {capture.client_version} request for story {capture.story_id} "
        f"({capture.phase}), model {capture.model or '(none named)'}: "
        f"{human_bytes(capture.request.size)} ({capture.request.size:,} bytes), "
        f"{human_tokens(capture.tokens)} tok, {_share(summary.share).strip()} of a "
        f"{capture.window:,}-token window"
        + (" — cut at the memory bound" if capture.request.cut else "")
    )
    width = max([len(part.name) for part in capture.parts] + [18])
    for part in capture.parts:
        tokens = f"{human_tokens(part.tokens):>8} tok" if part.kind != "envelope" else " " * 12
        share = _share(context_share(part.tokens, capture.window)) if part.tokens else ""
        said = [text for text in (part.loaded_because, part.note) if text]
        note = f"  ({'; '.join(said)})" if said else ""
        print(f"  {part.name:<{width}} {part.bytes:>10,} bytes {tokens} {share:>6}{note}")
    print(f"  {'sum':<{width}} {sum(p.bytes for p in capture.parts):>10,} bytes")
    print(
        f"client overhead: {summary.overhead_bytes:,} bytes, "
        f"{human_tokens(summary.overhead_tokens)} tok ({_share(summary.overhead_share).strip()})"
    )
    for duplicate in capture.duplicates:
        print(duplicate.line())
    for note in capture.notes:
        print(f"note: {note}")


def run(args: argparse.Namespace) -> int:
    """Capture and print the parts (or JSON); exit 12 when no capture could be made."""
    workspace = workspace_from(args)
    counter = get_counter(encoding_from(args, workspace))
    request = PromptRequest(story_id=args.story, phase=args.phase, selection=selection_from(args))
    prompt = compose_prompt(workspace, None, request, counter=counter, count_tokens=False)
    capture = capture_prompt(
        workspace,
        prompt,
        counter,
        client=args.client,
        timeout=max(args.timeout, 1.0),
        with_mcp=args.with_mcp,
    )
    kept = remember_capture(capture)
    if kept is not None:
        warn(kept)
    if args.json:
        print_json(capture.to_dict())
    else:
        _print(capture)
    return EXIT_OK
