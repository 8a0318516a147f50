"""``promptdeck runs`` and ``promptdeck show``: the run records of the workspace.

``runs`` lists every run (story, phase, attempt, agent, outcome, signal and reason, duration,
cost, tokens, the predicted and the actual cost and why the cache missed), oldest first; on a
narrow terminal its cells abbreviate (``1.2M`` tokens, ``prefix`` for a changed prefix) before
any column steps aside. ``show RUN`` prints one run: its meta, result, cost record, signals and
the paths of its files. ``RUN`` is a run id, a unique prefix of one, or ``last``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..core.agents import Usage, agent_label
from ..core.cost import CostRecord, money, read_cost
from ..core.errors import EXIT_OK
from ..core.fleet import list_worktrees, pending_runs
from ..core.records import RunInfo, load_run, scan_runs
from ..core.terminal import printable_line
from ..core.units import cost_label, human_tokens, tokens_total
from .common import add_workspace_options, print_json, warn, workspace_from
from .common import console as common_console
from .flight import add_turns_option, show_turns
from .table import Cell, Column, print_records


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
    Column("signal", keep=5, minimum=10),
    Column("time", keep=4, right=True),
    Column("cost", keep=1, right=True),
    Column("tokens", keep=2, right=True, short_name="tok"),
    Column("predicted", keep=1, right=True, short_name="pred"),
    Column("actual", keep=1, right=True, short_name="act"),
    Column("miss", keep=1),
)
"""What ``runs`` shows. Its cells abbreviate first (every column fits at 120 columns); at 80,
cost, the predicted and actual cost and the miss step aside first, then tokens and agent."""

MISS_ABBREVIATIONS = {
    "ttl_expired": "ttl",
    "prefix_changed": "prefix",
    "model_switch": "model",
    "below_minimum": "min",
    "no_previous_run": "first run",
}
"""A named cache miss as a narrow ``runs`` shows it (``show`` and ``--json`` name it whole)."""


def _miss_cell(misses: tuple[str, ...]) -> Cell:
    """The misses whole; then each changed prefix by its file's name; then each miss by its
    name; then abbreviated (``ttl, prefix``)."""
    if not misses:
        return "-"
    names = [miss.split("@", 1)[0] for miss in misses]
    by_file = [
        f"{name}@{miss.split('@', 1)[1].rsplit('/', 1)[-1]}" if "@" in miss else miss
        for name, miss in zip(names, misses, strict=True)
    ]
    short = [MISS_ABBREVIATIONS.get(name, name) for name in names]
    return tuple(dict.fromkeys(", ".join(form) for form in (misses, by_file, names, short)))


def _money_cell(dollars: float | None) -> Cell:
    """``$0.0412``, then ``$0.04`` (``unknown`` stays)."""
    text = money(dollars)
    return text if dollars is None or not text.startswith("$") else (text, f"${dollars:.2f}")


def _tokens(usage: Usage | None) -> Cell:
    if usage is None:
        return "-"
    total, invalid = tokens_total(*usage.to_dict().values())
    full = " + ".join([f"{total:,}", *invalid])
    return full if invalid else (full, human_tokens(total))


def cost_cells(record: CostRecord | None, simulation: bool = False) -> list[Cell]:
    """Predicted and actual dollars and the named misses, from the run's cost record; a
    simulation (the replay agent) shows no dollars: its usage is invented, never a cost."""
    if record is None or simulation:
        return ["—", "—", "-"]
    return [_money_cell(record.predicted), record.actual_forms(), _miss_cell(record.misses)]


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
                (agent_label(meta.agent or ""), meta.agent or "none"),
                run.outcome,
                signal,
                (
                    (f"{result.duration_s:.1f}s", f"{result.duration_s:.0f}s")
                    if result is not None
                    else "-"
                ),
                cost_label(result.cost_usd if result is not None else None),
                _tokens(result.usage if result is not None else None),
                *cost_cells(read_cost(run.dir, workspace.root), meta.simulation),
            ]
        )
    print_records(RUN_COLUMNS, records, title="Runs", console=common_console())
    # Only the runs promptdeck launched here are offered to resume (a folder an agent or a
    # commit put in the project is listed above like any record, never offered).
    for waiting in pending_runs(workspace.root):
        warn(f"interrupted: {waiting.describe()}")
    return EXIT_OK


def show_payload(info: RunInfo, root: Path) -> dict[str, Any]:
    """The ``show --json`` shape: the run as ``runs --json`` lists it (its cost record
    included), with its folder, files, meta, result and signals."""
    files = sorted(p.name for p in info.dir.iterdir() if p.is_file())
    return {
        **_with_cost(info, root),
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
    payload = show_payload(info, workspace.root)
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
    # The cells `runs` shows, whole: the same record, read the same way.
    cells = cost_cells(read_cost(info.dir, workspace.root), meta.simulation)
    predicted, actual, miss = (cell if isinstance(cell, str) else cell[0] for cell in cells)
    print(f"predicted {predicted} · actual {actual}")
    print(f"miss     {miss}")
    for signal in info.signals:
        print(f"signal   {signal.get('at')} {signal.get('line')}")
    print(f"folder   {info.dir}")
    print(f"files    {', '.join(payload['files'])}")
    return EXIT_OK
