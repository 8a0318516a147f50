"""``promptdeck runs`` and ``promptdeck show``: the run records of the workspace.

``runs`` lists every run (story, phase, attempt, agent, outcome, signal and reason, duration,
cost, tokens), oldest first; ``show RUN`` prints one run: its meta, result, signals and the
paths of its files. ``RUN`` is a run id, a unique prefix of one, or ``last``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.agents import Usage, agent_label
from ..core.cost import CostRecord, money, read_cost
from ..core.errors import EXIT_OK
from ..core.fleet import interrupted_runs, list_worktrees
from ..core.records import RunInfo, load_run, scan_runs
from ..core.terminal import printable_line
from ..core.units import cost_label, tokens_total
from .common import add_workspace_options, print_json, warn, workspace_from
from .common import console as common_console
from .flight import add_turns_option, show_turns
from .table import Column, print_records


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``runs`` and ``show`` subcommands."""
    runs = subparsers.add_parser(
        "runs",
        help="list the recorded runs of the workspace",
        description="List the runs recorded in .promptdeck/runs/, oldest first.",
    )
    runs.add_argument("--story", metavar="STORY", help="only this story's runs")
    add_workspace_options(runs)
    runs.set_defaults(handler=run_list)
    show = subparsers.add_parser(
        "show",
        help="show one recorded run",
        description="Show one run: meta, result, signals and its files.",
    )
    show.add_argument("run_id", metavar="RUN", help="a run id, a unique prefix of one, or 'last'")
    add_workspace_options(show)
    add_turns_option(show)
    show.set_defaults(handler=run_show)


RUN_COLUMNS = (
    # A run id may be shortened: ``show`` takes any unique prefix of it.
    Column("id", minimum=20),
    Column("story"),
    Column("phase"),
    Column("#", keep=3, right=True),
    Column("agent", keep=2),
    Column("outcome"),
    Column("signal", keep=5, minimum=12),
    Column("time", keep=4, right=True),
    Column("cost", keep=1, right=True),
    Column("tokens", keep=2, right=True),
    Column("predicted", keep=1, right=True),
    Column("actual", keep=1, right=True),
    Column("miss", keep=1),
)
"""What ``runs`` shows; at 80 columns cost, tokens and agent step aside first."""


def _tokens(usage: Usage | None) -> str:
    if usage is None:
        return "-"
    total, invalid = tokens_total(*usage.to_dict().values())
    return " + ".join([f"{total:,}", *invalid])


def _cost_cells(record: CostRecord | None, simulation: bool = False) -> list[str]:
    """Predicted and actual dollars and the named misses, from the run's cost record; a
    simulation (the replay agent) shows no dollars: its usage is invented, never a cost."""
    if record is None or simulation:
        return ["—", "—", "-"]
    actual = money(record.actual) if record.reported else "—"
    return [money(record.predicted), actual, ", ".join(record.misses) or "-"]


def _with_cost(run: RunInfo, root: Path) -> dict[str, Any]:
    record = read_cost(run.dir, root)
    return {**run.to_dict(), "cost_record": None if record is None else record.to_dict()}


def run_list(args: argparse.Namespace) -> int:
    """Handle ``promptdeck runs``."""
    workspace = workspace_from(args)
    scan = scan_runs(workspace.root, args.story)
    runs = scan.runs
    for problem in scan.problems:
        warn(problem)
    worktrees = list_worktrees(workspace.root)
    if args.json:
        payload: dict[str, Any] = {"runs": [_with_cost(run, workspace.root) for run in runs]}
        if worktrees:
            payload["worktrees"] = [worktree.to_dict() for worktree in worktrees]
        print_json(payload)
        return EXIT_OK
    for worktree in worktrees:
        print(printable_line(worktree.describe()))
    if not runs:
        if args.story:
            print(f"No runs for story {args.story}.")
        else:
            print("No runs yet.")
        return EXIT_OK
    records = []
    for run in runs:
        meta, result, deciding = run.run_meta, run.run_result, run.run_signal
        signal = (deciding.name if deciding else "") or "-"
        if deciding is not None and deciding.reason:
            signal += f": {deciding.reason}"
        records.append(
            [
                run.id,
                run.story,
                run.phase_label,
                str(run.attempt),
                agent_label(meta.agent or ""),
                run.outcome,
                signal,
                f"{result.duration_s:.1f}s" if result is not None else "-",
                cost_label(result.cost_usd if result is not None else None),
                _tokens(result.usage if result is not None else None),
                *_cost_cells(read_cost(run.dir, workspace.root), meta.simulation),
            ]
        )
    print_records(RUN_COLUMNS, records, title="Runs", console=common_console())
    for waiting in interrupted_runs(runs):
        warn(f"interrupted: {waiting.describe()}")
    return EXIT_OK


def show_payload(info: RunInfo) -> dict[str, Any]:
    """The ``show --json`` shape."""
    files = sorted(p.name for p in info.dir.iterdir() if p.is_file())
    return {
        **info.to_dict(),
        "dir": str(info.dir),
        "files": files,
        "meta": dict(info.meta),
        "result": dict(info.result) if info.result is not None else None,
        "signals": [dict(s) for s in info.signals],
    }


def run_show(args: argparse.Namespace) -> int:
    """Handle ``promptdeck show``."""
    workspace = workspace_from(args)
    info = load_run(workspace.root, args.run_id)
    if getattr(args, "turns", False):
        return show_turns(args, workspace, info)
    payload = show_payload(info)
    if args.json:
        print_json(payload)
        return EXIT_OK
    meta, result = info.run_meta, info.run_result
    print(f"run      {info.id}")
    print(
        f"story    {info.story} · phase {info.phase_label} · attempt {info.attempt} "
        f"· mode {meta.mode}"
    )
    print(f"agent    {agent_label(meta.agent or '')}: {' '.join(meta.argv)}")
    if meta.env_names:
        print(f"env      {', '.join(meta.env_names)}")
    print(f"started  {meta.started}")
    print(f"outcome  {info.outcome}: {result.message if result is not None else ''}")
    if result is not None:
        for label, value in (
            ("duration", result.duration_s),
            ("cost", cost_label(result.cost_usd) if result.cost_usd is not None else None),
            ("tokens", result.usage.describe() if result.usage is not None else None),
            ("session", result.session_id),
            ("sha before", result.sha_before),
            ("sha after", result.sha_after),
            ("commit", result.commit),
        ):
            if value is not None:
                print(f"{label:<8} {value}")
        if result.staged_stat:
            print("staged\n" + result.staged_stat)
        for warning in result.warnings:
            print(f"warning  {warning}")
    for signal in info.signals:
        print(f"signal   {signal.get('at')} {signal.get('line')}")
    print(f"folder   {info.dir}")
    print(f"files    {', '.join(payload['files'])}")
    return EXIT_OK
