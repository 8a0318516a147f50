"""The flight recorder's faces: ``show RUN --turns``, ``plan --backtest`` and the whole-phase
line of ``inspect --cost``.

``show RUN --turns`` prints every request the run made (its usage, what it added since the one
before, its tool calls, each subagent's requests under the call that started it), where the
spend went and what looks wasted; ``--json`` prints the turn list with its ``spend``.
``plan --backtest [--phase P]`` replays the whole-phase forecast leave-one-out over the
project's recorded real runs and prints its coverage and the median error of its p50.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..core.cost import money
from ..core.errors import EXIT_OK, UsageError
from ..core.flight import FlightReport, Request, backtest, flight_report
from ..core.project import Workspace
from ..core.records import RunInfo
from ..core.terminal import printable_line
from .common import print_json, workspace_from


def add_turns_option(show: argparse.ArgumentParser) -> None:
    """``show --turns``."""
    show.add_argument(
        "--turns",
        action="store_true",
        help="every request the run made, what each added and paid, and where the spend went",
    )


def _count(value: int | None) -> str:
    return "unknown" if value is None else f"{value:,}"


def _tail(text: str, width: int = 60) -> str:
    """``text`` on one line, its end kept when it is long (a path's file name matters most)."""
    shown = printable_line(text)
    return shown if len(shown) <= width else "…" + shown[-(width - 1) :]


def _added(request: Request) -> str:
    parts = [f"{a.tool} {_tail(a.source)} {a.bytes:,} B".replace("  ", " ") for a in request.added]
    return "; ".join(parts) or "—"


def _request_lines(requests: Sequence[Request], prefix: str, depth: int) -> list[str]:
    lines: list[str] = []
    indent = "  " * depth
    for request in requests:
        label = f"{prefix}{request.index}"
        lines.append(
            f"{indent}{label:<6} in {_count(request.input_tokens):>9}  "
            f"read {_count(request.cache_read_tokens):>9}  "
            f"write {_count(request.cache_write_tokens):>9}  "
            f"out {_count(request.output_tokens):>7}  added: {_added(request)}"
        )
        for call in request.tool_calls:
            lines.append(f"{indent}       call {call.tool} {_tail(call.target, 70)}")
        for note in request.notes:
            lines.append(f"{indent}       note {printable_line(note)}")
        for sub in request.subagents:
            prompt = "unknown" if sub.prompt_bytes is None else f"{sub.prompt_bytes:,} B"
            lines.append(
                f"{indent}  subagent {sub.tool_use_id} {printable_line(sub.description)[:40]!r} "
                f"(prompt {prompt}, {len(sub.requests)} requests)"
            )
            lines.extend(_request_lines(sub.requests, f"{label}.", depth + 2))
    return lines


def _say(line: str) -> None:
    print(printable_line(line))


def print_report(report: FlightReport) -> None:
    """The turn list and the spend as text; every line made printable whole (a kept
    ``turns.json`` or ``cost.json`` is a file a repository can ship: no colour or other
    sequence of its own reaches the terminal)."""
    turns, spend = report.turns, report.spend
    _say(f"run      {report.run_id}")
    _say(f"format   {turns.format} · from {' + '.join(turns.sources)}")
    _say(f"requests {turns.request_count} · peak context {_count(turns.peak_context)} tokens")
    for line in _request_lines(turns.requests, "", 0):
        _say(line)
    said = [report.model] if report.model else []
    if report.simulation:
        said.append("a simulated run: its usage is invented, not billed")
    _say(f"spend    ({'; '.join([*said, spend.basis])})")
    for share in spend.categories:
        _say(f"  {share.name:<18} {share.tokens:>12,} tokens  {money(share.dollars)}")
    for read in spend.reads:
        _say(
            f"    read {printable_line(read.name)[:50]:<50} {read.tokens:>10,}"
            f"  {money(read.dollars)}"
        )
    reported = _count(spend.reported_tokens)
    _say(
        f"  {'total':<18} {spend.total_tokens:>12,} tokens  {money(spend.total_dollars)}"
        f"  (main thread {spend.main_tokens:,}; the client reported {reported} at its end)"
    )
    if spend.unknown:
        _say(f"  {spend.unknown} request(s) with unknown usage, not summed in")
    for flag in spend.flags:
        _say(f"flag     {printable_line(flag)}")
    for note in turns.notes:
        _say(f"note     {printable_line(note)}")


def show_turns(args: argparse.Namespace, workspace: Workspace, info: RunInfo) -> int:
    """``show RUN --turns``."""
    report = flight_report(workspace, info)
    if args.json:
        print_json(report.to_dict())
    else:
        print_report(report)
    return EXIT_OK


def add_backtest_options(plan: argparse.ArgumentParser) -> None:
    """``plan --backtest [--phase P]``; ``--epic`` is then not needed."""
    plan.add_argument(
        "--backtest",
        action="store_true",
        help="replay the whole-phase forecast leave-one-out over the recorded real runs: "
        "the share of actual costs inside p10–p90, and the median error of the p50",
    )
    plan.add_argument("--phase", metavar="P", help="with --backtest: only this phase's runs")
    for action in plan._actions:
        if action.dest == "epic":
            action.required = False


def run_backtest(args: argparse.Namespace) -> int:
    """``plan --backtest``; without it, a plan still needs ``--epic``."""
    if not args.backtest:
        raise UsageError("plan needs --epic N (or --backtest)")
    workspace = workspace_from(args)
    result = backtest(workspace.root, args.phase)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.describe())
    return EXIT_OK


def whole_phase_lines(workspace: Workspace, model: str, phases: Sequence[Any]) -> list[str]:
    """``inspect --cost``'s whole-phase lines: each phase's forecast from this project's real
    runs, or its first request's estimate labelled."""
    from ..core.flight import phase_forecast

    lines = []
    for phase in phases:
        forecast = phase_forecast(workspace.root, phase.phase, model, phase.dollars)
        lines.append(f"whole\t{forecast.describe()}")
    return lines
