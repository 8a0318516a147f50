"""Run records read back: every run of the workspace, one run by its id, the next attempt.

Each run folder (written by :mod:`promptdeck.core.records.writer`) is read into a
:class:`RunInfo`, whose :attr:`RunInfo.run_meta` and :attr:`RunInfo.run_result` are the
run's schema (:mod:`promptdeck.core.records.schema`). The writer's names are importable from
here as well.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..phases.signals import Signal
from ..processes import pid_alive
from ..project.textfiles import (
    RECORD_TEXT_LIMIT,
    TextProblem,
    printable_name,
    read_json_object,
    read_text,
)
from ..stories.keys import normalize_key
from ..terminal import printable_line
from ..vocabulary import SUCCESS, RunState
from .schema import RunMeta, RunResult
from .writer import (
    DRY_RUN_DIR,
    RUNS_RELPATH,
    runs_dir,
)


def _record_root(folder: Path) -> Path:
    """The project root a run folder ``<root>/.promptdeck/runs/<id>`` belongs to (resolved):
    every file of the record is read only when it lies inside it."""
    return folder.parent.parent.parent.resolve()


@dataclass(frozen=True)
class RunInfo:
    """One run as read back from its folder.

    The typed views :attr:`run_meta` and :attr:`run_result` are the run's schema
    (:mod:`promptdeck.core.records.schema`); ``meta`` and ``result`` are the JSON as it is on
    disk, for showing a record whole.

    Attributes:
        id: the run id (the folder name).
        dir: the run folder.
        meta: ``meta.json``.
        result: ``result.json``, or None while running or when the run was interrupted.
        signals: every line of ``signals.jsonl``.
    """

    id: str
    dir: Path
    meta: Mapping[str, Any]
    result: Mapping[str, Any] | None
    signals: tuple[Mapping[str, Any], ...]

    @cached_property
    def run_meta(self) -> RunMeta:
        """``meta.json`` read into its schema (missing values take their defaults)."""
        return RunMeta.from_dict(self.meta)

    @cached_property
    def run_result(self) -> RunResult | None:
        """``result.json`` read into its schema; None while there is none, or when it names
        no outcome promptdeck knows."""
        if self.result is None:
            return None
        signals = tuple(Signal.from_dict(signal) for signal in self.signals)
        try:
            return RunResult.from_dict(self.result, self.dir, signals, meta=self.run_meta)
        except ValueError:
            return None

    @property
    def story(self) -> str:
        """The story id."""
        return self.run_meta.story

    @property
    def phase(self) -> str:
        """The phase."""
        return self.run_meta.phase

    @property
    def phase_label(self) -> str:
        """The phase as lists show it: ``review (party)`` for a party variant."""
        variant = self.run_meta.variant
        return f"{self.phase} ({variant})" if variant and variant != "standard" else self.phase

    @property
    def attempt(self) -> int:
        """The attempt number."""
        return self.run_meta.attempt

    @property
    def started(self) -> float:
        """Start time (epoch seconds)."""
        return self.run_meta.started_ts

    @property
    def outcome(self) -> RunState:
        """The result's outcome; ``running`` or ``interrupted`` for a run with no result,
        ``unknown`` for a result that names no outcome promptdeck knows."""
        if self.result is not None:
            result = self.run_result
            return result.outcome if result is not None else "unknown"
        return "running" if pid_alive(self.run_meta.pid) else "interrupted"

    @property
    def signal(self) -> Mapping[str, Any] | None:
        """The deciding signal, from the result (or the last recorded signal)."""
        if self.result is not None:
            value = self.result.get("signal")
            return value if isinstance(value, Mapping) else None
        return self.signals[-1] if self.signals else None

    @property
    def run_signal(self) -> Signal | None:
        """:attr:`signal` read into its schema."""
        signal = self.signal
        return Signal.from_dict(signal) if signal is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The shape of ``runs --json`` rows."""
        meta, result = self.run_meta, self.run_result
        signal = self.signal or {}
        usage = result.usage if result is not None else None
        return {
            "id": self.id,
            "story": self.story,
            "phase": self.phase,
            "attempt": self.attempt,
            "mode": meta.mode,
            "variant": meta.variant,
            "agent": meta.agent,
            "started": meta.started,
            "outcome": self.outcome,
            "signal": signal.get("name"),
            "reason": signal.get("reason"),
            "duration_s": result.duration_s if result is not None else None,
            "cost_usd": result.cost_usd if result is not None else None,
            "tokens": usage.to_dict() if usage is not None else None,
            "exit_code": result.exit_code if result is not None else None,
        }


@dataclass(frozen=True)
class RunScan:
    """Every run folder read back: the runs, and one line for each record that is not one.

    Attributes:
        runs: the readable runs, oldest first.
        problems: ``<folder>/<file>: <reason>`` for each folder whose ``meta.json`` is
            refused (a FIFO, a device, a link out of the project, too large, not JSON).
    """

    runs: list[RunInfo]
    problems: list[str]


def _signals(folder: Path, root: Path) -> tuple[Mapping[str, Any], ...]:
    # No signals.jsonl (or one refused) is a run that printed no signal (or was killed first).
    text = read_text(folder / "signals.jsonl", root, limit=RECORD_TEXT_LIMIT)
    if isinstance(text, TextProblem):
        return ()
    signals: list[Mapping[str, Any]] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(item, dict):
            signals.append(item)
    return tuple(signals)


def read_run_dir(folder: Path, root: Path | None = None) -> RunInfo | TextProblem:
    """Read one run folder through the guarded reader; why not, when its ``meta.json`` is
    missing or refused. ``root``: the resolved project root (found from ``folder``)."""
    base = _record_root(folder) if root is None else root
    meta = read_json_object(folder / "meta.json", base)
    if isinstance(meta, TextProblem):
        return meta
    result = read_json_object(folder / "result.json", base)
    return RunInfo(
        folder.name,
        folder,
        meta,
        None if isinstance(result, TextProblem) else result,
        _signals(folder, base),
    )


def load_run_dir(folder: Path) -> RunInfo | None:
    """Read one run folder; None when its ``meta.json`` is missing or refused."""
    info = read_run_dir(folder)
    return None if isinstance(info, TextProblem) else info


def scan_runs(root: Path, story_id: str | None = None) -> RunScan:
    """Every run of the workspace, oldest first (one story's when ``story_id`` is given), and
    a line for each folder that holds no readable record: a hostile ``.promptdeck/runs/``
    costs one line per bad record, and the rest of the history still reads."""
    base = runs_dir(root)
    real_root = root.resolve()
    runs: list[RunInfo] = []
    problems: list[str] = []
    try:
        entries = sorted(os.scandir(base), key=lambda entry: entry.name)
    except OSError:
        return RunScan(runs, problems)
    for entry in entries:
        if entry.name == DRY_RUN_DIR:
            continue
        try:
            if not entry.is_dir():  # a file, a FIFO or a link to one: not a run folder
                continue
        except OSError:
            continue
        folder = Path(entry.path)
        info = read_run_dir(folder, real_root)
        if isinstance(info, TextProblem):
            if info.reason != "missing":
                shown = printable_line(printable_name(f"{RUNS_RELPATH}/{entry.name}/meta.json"))
                problems.append(f"{shown}: {info}; run skipped")
            continue
        # `1.2` and `1-2` are one story: runs recorded under either spelling are its runs.
        if story_id is not None and normalize_key(info.story) != normalize_key(story_id):
            continue
        runs.append(info)
    return RunScan(runs, problems)


def list_runs(root: Path, story_id: str | None = None) -> list[RunInfo]:
    """Every run of the workspace, oldest first; only one story's when ``story_id`` is given.
    Folders without a readable record are passed over (:func:`scan_runs` names them)."""
    return scan_runs(root, story_id).runs


def next_attempt(root: Path, story_id: str, phase: str) -> int:
    """The attempt number of the next run of ``phase`` for a story: one more than the runs
    of that phase since its last success (chat turns and runs the user cancelled do not
    count)."""
    attempt = 1
    for run in list_runs(root, story_id):
        if run.phase != phase or run.run_meta.mode == "chat" or run.outcome == "cancelled":
            continue
        attempt = 1 if run.outcome == SUCCESS else attempt + 1
    return attempt


def load_run(root: Path, run_id: str) -> RunInfo:
    """One run by its id, a unique prefix of it, or ``last``.

    Raises:
        UsageError: no run, or more than one, matches.
    """
    runs = list_runs(root)
    if run_id == "last":
        if not runs:
            raise UsageError(f"no runs yet in {runs_dir(root)}")
        return runs[-1]
    matches = [r for r in runs if r.id == run_id] or [r for r in runs if r.id.startswith(run_id)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no run '{run_id}' in {runs_dir(root)} (see `promptdeck runs`)")
    raise UsageError(f"run id '{run_id}' is ambiguous: {len(matches)} runs start with it")


def stream_file(run: RunInfo) -> Path:
    """The run's raw stream: ``stream.jsonl`` (stream-json agents) or ``stream.log``."""
    for name in ("stream.jsonl", "stream.log"):
        if (run.dir / name).exists():
            return run.dir / name
    return run.dir / "stream.jsonl"
