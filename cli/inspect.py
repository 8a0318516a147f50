"""``promptdeck inspect``: the eight layers and the injected files of a story's phase, measured.

The layers table (id, title, source, bytes, tokens, sha256 prefix, and the joiners' own row)
sits above the files table (every candidate with its status and reason, the envelope row, the
total), then the system prompt and user message totals against the warning line, the error line
and the 131,072-byte argv limit. Over the error line the tables (or the JSON) are still printed
— inspecting an oversized story is exactly what it is for — and the exit code is 3.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..core.budget import check_budget
from ..core.config import Config
from ..core.errors import EXIT_OK, EXIT_TOO_LARGE
from ..core.prompt import ComposedPrompt
from ..core.tokens import ARGV_LIMIT_BYTES
from .common import (
    add_inclusion_options,
    add_workspace_options,
    print_json,
    warn,
    workspace_from,
)
from .common import console as common_console
from .compose import add_prompt_options, all_warnings, compose_from
from .table import Column, is_terminal, print_records

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
    add_prompt_options(parser)
    add_inclusion_options(parser)
    add_workspace_options(parser)
    parser.set_defaults(handler=run)


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


def _print_report(prompt: ComposedPrompt, config: Config) -> None:
    from rich.text import Text

    console = common_console()
    injection = prompt.injection
    caption = f"tokens: {injection.encoding}" + (
        " (estimated)" if prompt.system_meter.estimated else ""
    )

    plain = not is_terminal()
    # Piped, every line is one record whose first field says its kind (layer, file), so
    # `grep ^file` and `cut -f` work; on a terminal, two tables fitted to the width.
    layer_rows = [
        [
            "layer",
            layer.layer_id,
            layer.title + (" (missing)" if layer.missing else ""),
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
    file_rows = [
        [
            "file",
            item.path,
            item.category,
            item.status,
            _num(item.bytes),
            _num(item.tokens),
            (f"{item.why}: " if item.why else "")
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

    level_style = {"ok": "green", "warning": "yellow", "error": "red"}[injection.level]
    console.print(
        Text.assemble(
            ("injection ", "bold"),
            (f"{injection.size_bytes:,} bytes", level_style),
            f" · warning line {injection.warn_bytes:,} · error line {injection.error_bytes:,}"
            f" · {injection.level}",
        )
    )
    system_bytes = prompt.system_meter.bytes
    fits = "fits in" if system_bytes <= ARGV_LIMIT_BYTES else "is over"
    console.print(
        Text.assemble(
            ("system prompt ", "bold"),
            f"{system_bytes:,} bytes · {_num(prompt.system_meter.tokens)} tokens · "
            f"{fits} the {ARGV_LIMIT_BYTES:,}-byte argv limit (one argument)",
        )
    )
    console.print(
        Text.assemble(
            ("user message ", "bold"),
            f"{prompt.user_meter.bytes:,} bytes · {_num(prompt.user_meter.tokens)} tokens",
        )
    )
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
    for category, note in injection.toggle_notes().items():
        if note:
            # The toggle has nothing to add: say so rather than leave it looking switched off.
            console.print(Text(f"{category}: {note}", style="dim"))
    console.print(Text(f"signature {prompt.signature}", style="dim"))


def run(args: argparse.Namespace) -> int:
    """Print the report (or JSON); exit 3 when the injection is over its error line."""
    prompt = compose_from(args, count_tokens=True)
    config = workspace_from(args).config
    if args.json:
        print_json(inspect_payload(prompt, config))
    elif args.chart:
        for message in all_warnings(prompt):
            warn(message)
        from ..core.composition import chart_lines, composition_of

        width = common_console().width if is_terminal() else CHART_PIPED_WIDTH
        for line in chart_lines(composition_of(prompt, args.chart), width):
            print(line)
    else:
        for message in all_warnings(prompt):
            warn(message)
        _print_report(prompt, config)
    return EXIT_TOO_LARGE if prompt.injection.level == "error" else EXIT_OK
