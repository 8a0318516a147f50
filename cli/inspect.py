"""``promptdeck inspect``: the eight layers and the injected files of a story's phase, measured.

The layers table (id, title, source, bytes, tokens, sha256 prefix, and the joiners' own row)
sits above the files table (every candidate with its status and reason, the envelope row, the
total), then the system prompt and user message totals against the warning line, the error line
and the 131,072-byte argv limit. Over the error line the tables (or the JSON) are still printed
— inspecting an oversized story is exactly what it is for — and the exit code is 3.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..core.errors import EXIT_OK, EXIT_TOO_LARGE, UsageError
from ..core.fit import FitAnswer, agent_window, composed_measure, cut_lines, parse_target, solve
from ..core.injection import Injection, normal_path
from ..core.project import Config, Workspace
from ..core.prompt import ComposedPrompt, PromptRequest, check_budget, compose_prompt
from ..core.terminal import printable_line
from ..core.tokens import ARGV_LIMIT_BYTES, get_counter
from ..core.units import SENT_LABEL, UNREAD_LABEL
from . import table
from .common import (
    add_inclusion_options,
    add_workspace_options,
    encoding_from,
    print_json,
    warn,
    workspace_from,
)
from .common import console as common_console
from .compose import add_prompt_options, all_warnings, compose_from, refuse_secrets
from .cost_report import add_cost_options, forecast_from, phases_from, run_cache
from .table import Column, print_records

HASH_PREFIX = 12
CHART_PIPED_WIDTH = 100
"""The chart's width when it is not drawn on a terminal."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``inspect`` subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="show a story's eight prompt layers and injected files with byte/token meters",
        description=(
            "Compose the prompt for one phase of a story and show its eight layers and every "
            "candidate file of the injection, with bytes, tokens and why each file is in or "
            "out. Exit 3 when the injection is over its error line (the report is printed "
            "anyway)."
        ),
    )
    parser.add_argument(
        "--chart",
        nargs="?",
        const="tokens",
        choices=("tokens", "bytes"),
        help=(
            "draw the system prompt as one proportional bar of its layers and files, largest "
            "first, with the warning, argv and error lines (by tokens, or bytes)"
        ),
    )
    parser.add_argument(
        "--fit",
        metavar="SIZE",
        help=(
            "name the fewest files to leave out so the prompt fits SIZE: 120KiB or 150000 "
            "(bytes), 30000t (tokens), 80%% (of the agent's context window); never the "
            "story's own files"
        ),
    )
    parser.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="PATH",
        help="with --fit: never propose leaving out this file (or 0B, the workspace rules "
        "layer); repeatable",
    )
    parser.add_argument(
        "--exact-claude",
        action="store_true",
        help="also ask Anthropic's count_tokens API for the exact Claude count of the system "
        "prompt and user message (sends both to the API; needs ANTHROPIC_API_KEY; never "
        "called without this flag)",
    )
    parser.add_argument(
        "--allow-secrets",
        action="store_true",
        help="with --exact-claude: send files the secret scan flagged (without it, as for run, "
        "the count is refused with exit 8 and nothing is sent)",
    )
    add_prompt_options(parser)
    add_cost_options(parser)
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


def fit_answer(args: argparse.Namespace, prompt: ComposedPrompt) -> FitAnswer:
    """The ``--fit`` answer for ``prompt`` (composes it again for each check)."""
    workspace = workspace_from(args)
    target = parse_target(args.fit, agent_window(workspace.config))
    counted = target.unit == "tokens"
    if counted and not prompt.counted:
        prompt = compose_prompt(workspace, None, prompt.request)
    counter = get_counter(encoding_from(args, workspace))

    def compose(request: PromptRequest) -> ComposedPrompt:
        return compose_prompt(
            workspace, None, request, counter=counter, count_tokens=counted, scan_secrets=False
        )

    measure = composed_measure(compose, prompt.request, target)
    return solve(prompt, target, measure, keep=[normal_path(p) for p in args.keep])


def inspect_payload(prompt: ComposedPrompt, config: Config | None = None) -> dict[str, Any]:
    """The ``inspect --json`` shape."""
    injection = prompt.injection
    payload: dict[str, Any] = {
        "story": prompt.story.id,
        "phase": prompt.request.phase,
        "mode": prompt.request.mode,
        "variant": prompt.variant,
        "summarised": list(prompt.summarised),
    }
    if config is not None:
        check = check_budget(prompt, config)
        payload["budget"] = {"tokens": check.budget, "used": check.tokens, "over": check.over}
    payload.update(injection.to_dict())
    payload.update(
        {
            "warnings": all_warnings(prompt),
            "layers": [layer.to_dict(content=False) for layer in prompt.layers],
            "joiner": prompt.joiner.to_dict(),
            "signature": prompt.signature,
            "system": prompt.system_meter.to_dict(),
            "user": prompt.user_meter.to_dict(),
            "size": prompt.size().to_dict(),
            "argv_limit": ARGV_LIMIT_BYTES,
            "level": injection.level,
            "rules": None
            if prompt.rules is None
            else {
                "path": prompt.rules.path,
                "status": prompt.rules.status,
                "sha256": prompt.rules.sha256,
                "looked_for": list(prompt.rules.looked_for),
            },
            "verify": None if prompt.verification is None else prompt.verification.to_dict(),
        }
    )
    return payload


def _num(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def claude_figures(
    args: argparse.Namespace, prompt: ComposedPrompt, workspace: Workspace
) -> dict[str, Any] | None:
    """The Claude-family estimate (and, with ``--exact-claude``, the exact count) of
    ``prompt``; None when it carries no token counts to scale.

    Raises:
        UsageError: ``--exact-claude`` without a key, or the API gave no count.
    """
    from ..core.cost import (
        ANTHROPIC_API,
        ExactCountError,
        claude_estimate,
        claude_model,
        exact_claude_tokens,
    )

    system, user = prompt.system_meter.tokens, prompt.user_meter.tokens
    if system is None or user is None or prompt.system_meter.estimated:
        return None
    model = claude_model(workspace, args.model)
    figures = claude_estimate(workspace, model, prompt.injection.encoding, system, user).to_dict()
    if args.exact_claude:
        try:
            figures["exact_tokens"] = exact_claude_tokens(
                prompt.system,
                prompt.user,
                model,
                os.environ.get("ANTHROPIC_API_KEY", ""),
                os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_API,
            )
        except ExactCountError as exc:
            raise UsageError(str(exc)) from None
    return figures


LAYER_COLUMNS = (
    Column("kind", piped_only=True),
    Column("layer"),
    Column("title", minimum=12),
    Column("source", keep=2, minimum=20, path=True),
    Column("bytes", right=True),
    Column("tokens", right=True),
    Column("sha256", keep=1),
)
FILE_COLUMNS = (
    Column("kind", piped_only=True),
    Column("path", minimum=24, path=True),
    Column("category", keep=2),
    Column("status"),
    Column("bytes", right=True),
    Column("tokens", keep=3, right=True),
    Column("reason", keep=4, minimum=16),
)
"""What ``inspect`` shows; ``kind`` is for pipes only."""


def _print_report(
    prompt: ComposedPrompt, config: Config, claude: dict[str, Any] | None = None
) -> None:
    console = common_console()
    # Piped, every line is one record whose first field says its kind (layer, file), so
    # `grep ^file` and `cut -f` work; on a terminal, two tables fitted to the width.
    plain = not table.is_terminal()
    _print_layers(prompt, console, plain)
    _print_files(prompt.injection, console, plain)
    _print_sizes(prompt, console)
    _print_rules_and_verify(prompt, console)
    if claude is not None:
        _print_claude_estimate(claude, console)
    _print_budget_and_notes(prompt, config, console)


def _print_layers(prompt: ComposedPrompt, console: Any, plain: bool) -> None:
    """The table of prompt layers, with the joiners and the whole system prompt after them."""
    caption = f"tokens: {prompt.injection.encoding}" + (
        " (estimated)" if prompt.system_meter.estimated else ""
    )
    layer_rows = [
        [
            "layer",
            layer.layer_id,
            layer.title + (f" ({layer.absence})" if layer.absence else ""),
            layer.source,
            _num(layer.bytes),
            _num(layer.tokens),
            layer.sha256[:HASH_PREFIX],
        ]
        for layer in prompt.layers
    ]
    layer_rows.append(
        ["layer", "", "(joiners)", "", _num(prompt.joiner.bytes), _num(prompt.joiner.tokens), ""]
    )
    layer_rows.append(
        [
            "layer",
            "",
            "system prompt",
            "",
            _num(prompt.system_meter.bytes),
            _num(prompt.system_meter.tokens),
            prompt.signature[:HASH_PREFIX],
        ]
    )
    print_records(
        LAYER_COLUMNS,
        layer_rows,
        title=(
            f"Prompt layers · {prompt.story.id} · {prompt.request.phase} · "
            f"{prompt.request.mode} · {prompt.variant} ({caption})"
        ),
        console=console,
        plain=plain,
    )


def _print_files(injection: Injection, console: Any, plain: bool) -> None:
    """The table of injected files, a row per credential found, then the envelope and total."""
    file_rows = [
        [
            "file",
            item.path,
            item.category,
            item.status,
            _num(item.bytes),
            _num(item.tokens),
            # A size that is not sent says so: the file was measured on disk, never read.
            (f"{UNREAD_LABEL}: " if item.bytes_label == UNREAD_LABEL else "")
            + (f"{item.why}: " if item.why else "")
            + item.reason
            + (f" [{', '.join(item.flags)}]" if item.flags else ""),
        ]
        for item in injection.files
    ]
    # Each credential found in an injected file gets a row after the file's: the line and the
    # kind, never the secret itself.
    file_rows = [
        row
        for item, file_row in zip(injection.files, file_rows, strict=True)
        for row in (
            file_row,
            *(
                ["secret", f"⚠ {item.path}", "", "secret", "", "", f"line {f.line}: {f.kind}"]
                for f in item.secrets
            ),
        )
    ]
    file_rows.append(
        [
            "file",
            "(envelope)",
            "",
            "",
            _num(injection.envelope.bytes),
            _num(injection.envelope.tokens),
            "tags, paths and newlines",
        ]
    )
    file_rows.append(
        [
            "file",
            "(total)",
            "",
            injection.level,
            _num(injection.total.bytes),
            _num(injection.total.tokens),
            "",
        ]
    )
    print_records(FILE_COLUMNS, file_rows, title="Injected files", console=console, plain=plain)


def _print_sizes(prompt: ComposedPrompt, console: Any) -> None:
    """The toggles that change nothing, then the prompt, injection, system and user sizes."""
    from rich.text import Text

    injection = prompt.injection
    for category, flag in (("discovery", "--discovery"), ("tech-spec", "--tech-spec")):
        note = injection.toggle_note(category)
        if note:
            console.print(Text.assemble((f"{flag} ", "bold"), f"changes nothing: {note}"))
    # Every size says what it counts: the bytes sent to the agent, or a size on disk unread.
    size = prompt.size()
    console.print(Text.assemble(("prompt ", "bold"), size.describe()))
    level_style = {"ok": "green", "warning": "yellow", "error": "red"}[injection.level]
    unread = injection.unread_bytes
    counted = (
        f" ({injection.size_bytes - unread:,} B {SENT_LABEL} + {unread:,} B {UNREAD_LABEL})"
        if unread
        else f" {SENT_LABEL}"
    )
    console.print(
        Text.assemble(
            ("injection ", "bold"),
            (f"{injection.size_bytes:,} B", level_style),
            counted,
            f" · warning line {injection.warn_bytes:,} · error line {injection.error_bytes:,}"
            f" · {injection.level}",
        )
    )
    system_bytes = prompt.system_meter.bytes
    fits = "fits in" if system_bytes <= ARGV_LIMIT_BYTES else "is over"
    console.print(
        Text.assemble(
            ("system prompt ", "bold"),
            f"{system_bytes:,} B {SENT_LABEL} · {_num(prompt.system_meter.tokens)} tokens · "
            f"{fits} the {ARGV_LIMIT_BYTES:,}-byte argv limit (one argument)",
        )
    )
    console.print(
        Text.assemble(
            ("user message ", "bold"),
            f"{prompt.user_meter.bytes:,} B {SENT_LABEL} · {_num(prompt.user_meter.tokens)} tokens",
        )
    )


def _print_rules_and_verify(prompt: ComposedPrompt, console: Any) -> None:
    """Which rules file the prompt carries and how it was found, and the verify commands."""
    from rich.text import Text

    rules = prompt.rules
    if rules is not None:
        found = f"sha256 {rules.sha256[:HASH_PREFIX]}" if rules.present and rules.sha256 else ""
        if not rules.looked_for:
            how = "configured"
        elif rules.present:
            how = "found in the documented order"
        else:
            how = f"none of {len(rules.looked_for)} candidates exists"
        console.print(
            Text.assemble(
                ("rules ", "bold"),
                f"{rules.path} · {rules.status} · {how}" + (f" · {found}" if found else ""),
            )
        )
    verification = prompt.verification
    if verification is not None:
        detected = verification.detected
        shown = ", ".join(f"`{c}`" for c in verification.commands) or "none configured"
        suggestion = (
            f" · detected `{detected.command}` ({detected.source})"
            if detected is not None and verification.origin != "detected"
            else ""
        )
        console.print(
            Text.assemble(("verify ", "bold"), f"{shown} ({verification.origin}){suggestion}")
        )


def _print_claude_estimate(claude: dict[str, Any], console: Any) -> None:
    """Claude's token estimate, and its exact count when Anthropic's API gave one."""
    from rich.text import Text

    console.print(
        Text.assemble(
            (f"{claude['label']} ", "bold"),
            f"≈ {claude['system_tokens']:,} system + {claude['user_tokens']:,} user tokens "
            f"· {claude['factor']:.2f} × {claude['encoding']} · {claude['source']}",
        )
    )
    if "exact_tokens" in claude:
        console.print(
            Text.assemble(
                ("claude count_tokens ", "bold"),
                f"{claude['exact_tokens']:,} input tokens ({claude['model']}, exact, "
                "from Anthropic's API)",
            )
        )


def _print_budget_and_notes(prompt: ComposedPrompt, config: Config, console: Any) -> None:
    """The budget check, the summarised stories, the toggles' notes and the signature."""
    from rich.text import Text

    check = check_budget(prompt, config)
    console.print(
        Text.assemble(("budget ", "bold"), (check.describe(), "red" if check.over else ""))
    )
    if prompt.summarised:
        console.print(
            Text.assemble(
                ("summarised ", "bold"),
                f"the story files of {', '.join(prompt.summarised)} reach the retro as "
                "summaries (the whole epic would pass the warning line)",
            )
        )
    for category, note in prompt.injection.toggle_notes().items():
        if note:
            # The toggle has nothing to add: say so rather than leave it looking switched off.
            console.print(Text(f"{category}: {note}", style="dim"))
    console.print(Text(f"signature {prompt.signature}", style="dim"))


def _client_cache(args: argparse.Namespace) -> tuple[Any, str]:
    """The client's cache across the phases, from its last kept capture (None and why when
    there is none)."""
    from ..core.capture import client_cache, remembered_capture
    from ..core.prompt import PromptRequest, compose_prompt
    from .compose import request_from

    workspace = workspace_from(args)
    client = "codex" if workspace.config.agent_default == "codex" else "claude"
    capture = remembered_capture(client)
    if capture is None:
        return None, f"no capture of {client} kept: promptdeck capture shows its cache blocks"
    counter = get_counter(encoding_from(args, workspace))
    selection = request_from(args).selection
    prompts = [
        compose_prompt(
            workspace,
            None,
            PromptRequest(args.story, phase, selection=selection, delivery=args.delivery),
            counter=counter,
            count_tokens=False,
        )
        for phase in phases_from(args)
    ]
    found = client_cache(workspace, capture, prompts, counter)
    return found, "" if found is not None else "the kept capture holds no request body"


def _print_client_cache(args: argparse.Namespace) -> None:
    from ..core.capture import layout_lines

    found, why = _client_cache(args)
    if found is None:
        print(f"client cache: {why}")
        return
    for line in layout_lines(found.layout):
        print(line)
    for pair in found.pairs:
        print(
            f"  {pair.before}→{pair.after}: reads {pair.bytes:,} B, {pair.tokens:,} tok "
            f"of the client's cache"
            + (f"; parts at {pair.parts_at} ({pair.why})" if pair.parts_at else "")
        )
    if found.moved:
        print(f"  kept out of the shared block (the phases write them): {', '.join(found.moved)}")
    for note in found.notes:
        print(f"  note: {note}")


def _cache_json(args: argparse.Namespace) -> int:
    """``inspect --cache --json``: the meter (and the cost), with the client's cache."""
    meter, predicted = forecast_from(args)
    payload = (
        {"cache": meter.to_dict(), "cost": predicted.to_dict()} if args.cost else (meter.to_dict())
    )
    found, why = _client_cache(args)
    payload["client_cache"] = found.to_dict() if found is not None else {"unavailable": why}
    print_json(payload)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Print the report (or JSON); exit 3 when the injection is over its error line."""
    if args.cache and args.json:
        return _cache_json(args)
    if args.cache or args.cost:
        done = run_cache(args)
        if args.cache:
            _print_client_cache(args)
        return done
    # Loaded before composing, though used after: on a first run, composing waits for the
    # encoder (built in a second process, see promptdeck.core.tokens), and an import made
    # before that wait adds nothing to it; made after, it would add its whole time.
    from ..core.cost import claude_estimate  # noqa: F401

    prompt = compose_from(args, count_tokens=True)
    if args.exact_claude:
        # The exact count sends the whole prompt to the API: the same gate as a run, before
        # anything is printed or sent.
        refuse_secrets(prompt, args.allow_secrets)
    workspace = workspace_from(args)
    config = workspace.config
    answer = fit_answer(args, prompt) if args.fit else None
    client_lines = cut_lines(prompt, workspace.root)
    if args.json:
        payload = inspect_payload(prompt, config)
        payload["cut_lines"] = [cut.to_dict() for cut in client_lines]
        payload["toggle_notes"] = {
            category: prompt.injection.toggle_note(category) or None
            for category in ("discovery", "tech-spec")
        }
        if answer is not None:
            payload["fit"] = answer.to_dict()
        payload["claude_estimate"] = claude_figures(args, prompt, workspace)
        print_json(payload)
    elif args.chart:
        for message in all_warnings(prompt):
            warn(message)
        from ..core.prompt import chart_lines, composition_of

        width = common_console().width if table.is_terminal() else CHART_PIPED_WIDTH
        for line in chart_lines(composition_of(prompt, args.chart), width):
            print(line)
    else:
        for message in all_warnings(prompt):
            warn(message)
        _print_report(prompt, config, claude_figures(args, prompt, workspace))
        for cut in client_lines:
            mark = "✖" if cut.over else "·"
            print(f"{mark} {cut.client} {cut.name}: {printable_line(cut.says)}")
        if answer is not None:
            for line in answer.lines():
                print(line)
    return EXIT_TOO_LARGE if prompt.injection.level == "error" else EXIT_OK
