"""``promptdeck plan --epic N``: every story × phase of an epic, measured and priced before a run.

The rows and their totals are core's (:func:`promptdeck.core.cost.epic.plan_epic`); this
module lays them out as a table on a terminal, tab-separated records in a pipe, or JSON.
"""

from __future__ import annotations

import argparse

from ..core.cost import DEFAULT_SEQUENCE, EpicPlan, money, plan_epic
from ..core.errors import EXIT_OK, EXIT_TOO_LARGE
from ..core.flight import EpicForecast, epic_forecast
from ..core.tokens import get_counter
from . import table
from .common import add_workspace_options, console, encoding_from, print_json, warn, workspace_from
from .compose import add_delivery_option
from .cost_report import MODEL_HELP, model_from, number, phases_from
from .flight import add_backtest_options, run_backtest
from .table import Column, print_records


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``plan`` subcommand."""
    parser = subparsers.add_parser(
        "plan",
        help="forecast an epic: every story × phase with bytes, tokens, flags and cost",
        description=(
            "Compose every phase of every story of an epic (or OpenSpec change) as `inspect` "
            "does and show, per story × phase, the system prompt and user message in bytes and "
            "tokens, the injection against its warning and error lines and the argv limit, the "
            "prefix shared with the previous phase, the predicted cost and the story's "
            "`context:` files that are missing; then the totals, which are the sums of the rows "
            "that can be sent. Each story's own phases are counted for every story not yet done "
            "(--all: every story), epic-level phases (uat, retro) once per epic. The cost is of "
            "each phase's first request only, priced as the model the client will use (said "
            "with where it came from). A row over its error line is too large to send: marked "
            "and left out of the totals. Exit 3 when any row is (the plan is printed anyway)."
        ),
    )
    parser.add_argument("--epic", required=True, metavar="N", help="the epic id or change name")
    parser.add_argument(
        "--phases",
        metavar="LIST",
        default=",".join(DEFAULT_SEQUENCE),
        help="each story's phase sequence, comma-separated "
        f"(default: {','.join(DEFAULT_SEQUENCE)})",
    )
    parser.add_argument("--model", metavar="ID", help=MODEL_HELP)
    parser.add_argument(
        "--all",
        dest="all_stories",
        action="store_true",
        help="include the epic's done stories (left out by default)",
    )
    add_delivery_option(parser)
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="show the stories' predicted file footprints, which may not run together, and "
        "the waves they run in",
    )
    add_workspace_options(parser)
    add_backtest_options(parser)
    parser.set_defaults(handler=run)


PLAN_COLUMNS = (
    Column("kind", piped_only=True),
    Column("story"),
    Column("phase"),
    Column("system bytes", right=True),
    Column("system tokens", right=True),
    Column("user tokens", keep=3, right=True),
    Column("shared prefix", keep=4, right=True),
    Column("dollars", right=True),
    Column("whole phase", keep=5, minimum=14),
    Column("flags", keep=2, minimum=12),
)


def print_plan(plan: EpicPlan, forecast: EpicForecast) -> None:
    """The plan as one table (each row with its phase's whole-phase forecast from recorded
    runs), its totals and what to fix first."""
    rows = [
        [
            "row",
            row.story_id,
            row.phase,
            f"{row.system_bytes:,}",
            number(row.system_tokens),
            number(row.user_tokens),
            f"{row.shared_prefix_bytes:,}",
            money(row.cost.dollars),
            whole.cell(),
            ", ".join(row.flags),
        ]
        for row, whole in zip(plan.rows, forecast.rows, strict=True)
    ]
    totals = plan.totals
    rows.append(
        [
            "total",
            "(total)",
            f"{len(plan.rows) - totals.left_out} rows",
            f"{totals.system_bytes:,}",
            number(totals.system_tokens),
            number(totals.user_tokens),
            f"{totals.shared_prefix_bytes:,}",
            money(totals.dollars),
            ""
            if forecast.p50 is None
            else f"p50 {money(forecast.p50)} · p90 {money(forecast.p90)}",
            "",
        ]
    )
    print_records(
        PLAN_COLUMNS,
        rows,
        title=(
            f"Plan · epic {plan.epic} · {' → '.join(plan.phases)} · "
            f"{plan.model or 'model unknown'} (tokens: {plan.encoding}, an estimate for this "
            "model; cost of each phase's first request only)"
        ),
        console=console(),
        plain=not table.is_terminal(),
    )
    print(f"model\t{plan.model or 'unknown'}: from {plan.model_source}")
    print(f"basis\t{plan.basis}")
    print(f"whole-phase\t{forecast.describe()}")
    if not plan.model or any(row.cost.dollars is None for row in plan.rows):
        reason = next((row.cost.unknown for row in plan.rows if row.cost.unknown), "")
        if reason:
            print(f"price\t{reason}: no dollar figure")
    if totals.left_out:
        print(
            f"too-large\t{totals.left_out} row(s) over the injection's error line cannot be "
            "sent: outside the total"
        )
    if plan.done_left_out:
        print(
            f"done\t{len(plan.done_left_out)} done story(ies) left out "
            f"({', '.join(plan.done_left_out)}); --all includes them"
        )
    # A story's missing files are the same in each of its phases: said once per story.
    missing = {(row.story_id, path) for row in plan.rows for path in row.missing_context}
    for story, path in sorted(missing):
        print(f"missing\t{story}: context file {path} is not in the project")
    for story, reason in plan.failed:
        print(f"failed\t{story}: {reason}")


def run(args: argparse.Namespace) -> int:
    """Print the plan (or JSON); exit 3 when any row's injection is over its error line."""
    if getattr(args, "backtest", False) or args.epic is None:
        return run_backtest(args)
    if args.overlap:
        from .overlap_view import run_overlap

        return run_overlap(args)
    workspace = workspace_from(args)
    model = model_from(args, workspace)
    plan = plan_epic(
        workspace,
        args.epic,
        model.model,
        model_source=model.source,
        phases=phases_from(args),
        delivery=args.delivery,
        counter=get_counter(encoding_from(args, workspace)),
        all_stories=args.all_stories,
    )
    for problem in plan.problems:
        warn(problem)
    forecast = epic_forecast(workspace.root.resolve(), plan)
    if args.json:
        print_json({**plan.to_dict(), "forecast": forecast.to_dict()})
    else:
        print_plan(plan, forecast)
    return EXIT_TOO_LARGE if any(row.too_large for row in plan.rows) else EXIT_OK
