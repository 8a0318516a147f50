"""``inspect --cache`` and ``inspect --cost``: what consecutive phases share, and what they cost.

The numbers are core's (:mod:`promptdeck.core.cost.prefix`,
:mod:`promptdeck.core.cost.prediction`); this module only lays them out, as tables on a terminal
and tab-separated records in a pipe.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..core.cost import DEFAULT_SEQUENCE
from ..core.errors import EXIT_OK, UsageError
from ..core.phases import PHASE_NAMES
from ..core.project import Workspace
from ..core.tokens import get_counter
from . import table
from .common import console, encoding_from, print_json, warn, workspace_from
from .table import Column, print_records

if TYPE_CHECKING:
    from ..core.cost import CacheMeter, CostForecast, ResolvedModel


MODEL_HELP = (
    "price and cache minimum of this model (default: the model the run's client will use: "
    "[pricing] model, promptdeck's agent settings, the client's own settings, else its "
    "version's default; a model the price table does not hold is priced as unknown)"
)


def add_cost_options(parser: argparse.ArgumentParser) -> None:
    """``--cache``, ``--phases`` and ``--model`` (inspect)."""
    group = parser.add_argument_group("cache (the story's phase sequence)")
    group.add_argument(
        "--cache",
        action="store_true",
        help="compose every phase of --phases and show, per consecutive pair, the system-prompt "
        "prefix they share (bytes, tokens, where they part), each layer stable or volatile, and "
        "what defeats the cache",
    )
    group.add_argument(
        "--cost",
        action="store_true",
        help="predict what each phase of --phases costs, stepped within the cache's lifetime, "
        "from the price table ([pricing] in .promptdeck/config.toml)",
    )
    group.add_argument(
        "--phases",
        metavar="LIST",
        default=",".join(DEFAULT_SEQUENCE),
        help=f"the phase sequence, comma-separated (default: {','.join(DEFAULT_SEQUENCE)})",
    )
    group.add_argument(
        "--model",
        metavar="ID",
        help=MODEL_HELP,
    )


def phases_from(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``--phases`` list, checked.

    Raises:
        UsageError: an unknown phase, or none.
    """
    phases = tuple(name.strip() for name in str(args.phases).split(",") if name.strip())
    unknown = [name for name in phases if name not in PHASE_NAMES]
    if unknown or not phases:
        raise UsageError(
            f"--phases: unknown phase {', '.join(unknown) or '(none given)'} "
            f"(one of: {', '.join(PHASE_NAMES)})"
        )
    return phases


def model_from(args: argparse.Namespace, workspace: Workspace) -> ResolvedModel:
    """The model to price and where it came from: ``--model``, else the one the default
    agent's client will use (a Claude Code run's when that agent is a simulation; the
    client's ``--version`` is asked only when its default is needed); each client file that
    could not be read is warned, one line each."""
    from ..core.capture import installed_version
    from ..core.cost import forecast_model

    resolved = forecast_model(
        workspace,
        requested=args.model,
        version=lambda client: installed_version(
            workspace.config, client, timeout=5.0, root=workspace.root
        ),
    )
    for note in resolved.notes:
        warn(note)
    return resolved


def forecast_from(args: argparse.Namespace) -> tuple[CacheMeter, CostForecast]:
    """Measure and price the phase sequence the arguments describe; the price table's
    problems are warned, one line each, and nothing else stops."""
    from ..core.cost import forecast
    from .compose import request_from

    workspace = workspace_from(args)
    model = model_from(args, workspace)
    meter, predicted = forecast(
        workspace,
        args.story,
        model.model,
        model_source=model.source,
        phases=phases_from(args),
        selection=request_from(args).selection,
        delivery=getattr(args, "delivery", None),
        counter=get_counter(encoding_from(args, workspace)),
    )
    for problem in predicted.problems:
        warn(problem)
    return meter, predicted


def number(value: int | None) -> str:
    """A count as the tables show it: ``12,345``, or ``—`` when not counted."""
    return "—" if value is None else f"{value:,}"


LAYER_COLUMNS = (
    Column("kind", piped_only=True),
    Column("layer"),
    Column("title"),
    Column("stable"),
    Column("bytes per phase", keep=2),
)
PAIR_COLUMNS = (
    Column("kind", piped_only=True),
    Column("phases"),
    Column("shared bytes", right=True),
    Column("shared tokens", right=True),
    Column("system bytes", right=True),
    Column("parts at", keep=2, path=True),
)


def print_cache(meter: CacheMeter) -> None:
    """The meter as two tables and its flags."""
    plain = not table.is_terminal()
    shown = console()
    print_records(
        LAYER_COLUMNS,
        [
            [
                "layer",
                layer.layer_id,
                layer.title,
                "stable" if layer.stable else "volatile",
                " / ".join(f"{size:,}" for size in layer.bytes),
            ]
            for layer in meter.layers
        ],
        title=(
            f"Layers across {' → '.join(meter.phases)} · {meter.story_id} · {meter.delivery} "
            "delivery"
        ),
        console=shown,
        plain=plain,
    )
    print_records(
        PAIR_COLUMNS,
        [
            [
                "pair",
                f"{pair.before}→{pair.after}",
                number(pair.shared_prefix_bytes),
                number(pair.shared_prefix_tokens),
                number(pair.system_bytes),
                "(all shared)" if pair.whole else pair.parts_at,
            ]
            for pair in meter.pairs
        ],
        title=f"Shared system-prompt prefix (tokens: {meter.encoding})",
        console=shown,
        plain=plain,
    )
    for flag in meter.flags:
        print(f"flag\t{flag}" if plain else f"⚠ {flag}")


COST_COLUMNS = (
    Column("kind", piped_only=True),
    Column("phase"),
    Column("cache write", right=True),
    Column("cache read", right=True),
    Column("input", right=True),
    Column("output", right=True),
    Column("dollars", right=True),
    Column("output from", keep=2),
)


def print_cost(predicted: CostForecast) -> None:
    """The forecast as a table, its total and where its prices come from."""
    from ..core.cost import SCOPE, money, price_unknown

    plain = not table.is_terminal()
    rows = [
        [
            "cost",
            phase.phase,
            f"{phase.cache_write_tokens:,}",
            f"{phase.cache_read_tokens:,}",
            f"{phase.input_tokens:,}",
            f"{phase.output_tokens:,}",
            money(phase.dollars),
            phase.output_source,
        ]
        for phase in predicted.phases
    ]
    rows.append(["cost", "(total)", "", "", "", "", money(predicted.total), ""])
    print_records(
        COST_COLUMNS,
        rows,
        title=(
            f"Predicted cost ({SCOPE}) · {predicted.story_id} · "
            f"{predicted.model or 'model unknown'} · cache {predicted.ttl} "
            f"(tokens: {predicted.encoding}, an estimate for this model)"
        ),
        console=console(),
        plain=plain,
    )
    print(f"model\t{predicted.model or 'unknown'}: from {predicted.model_source}")
    price = predicted.price
    if price is None:
        print(f"price\t{price_unknown(predicted.model, predicted.model_source)}: no dollar figure")
    else:
        print(f"price\t{price.model}: checked {price.checked}, {price.source}")
    print(f"basis\t{predicted.basis}")


def run_cache(args: argparse.Namespace) -> int:
    """``inspect --cache`` / ``--cost``: print the meter, the forecast, or both (or JSON)."""
    meter, predicted = forecast_from(args)
    if args.json:
        if args.cache and args.cost:
            print_json({"cache": meter.to_dict(), "cost": predicted.to_dict()})
        else:
            print_json(meter.to_dict() if args.cache else predicted.to_dict())
        return EXIT_OK
    if args.cache:
        print_cache(meter)
    if args.cost:
        print_cost(predicted)
        from .flight import whole_phase_lines

        for line in whole_phase_lines(workspace_from(args), predicted.model, predicted.phases):
            print(line)
    return EXIT_OK
